//! How large an action's result may be, and how its list is paged: what
//! [`ActionDefinition::result`](crate::ActionDefinition::result) declares and a server's
//! [`max_result`](crate::server::Server::max_result) sets for every action.

/// A limit on the size of a result's text content.
///
/// In bytes of the payload text (UTF-8), or in tokens, estimated as one token per 4 bytes
/// (rounded up), the rough rate of English and JSON in the tokenizers of current models. A
/// payload exactly at the limit is within it.
///
/// ```
/// use fusion::ResultLimit;
///
/// assert_eq!(ResultLimit::bytes(16_000).max_bytes(), 16_000);
/// assert_eq!(ResultLimit::tokens(4_000).max_bytes(), 16_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultLimit {
    /// At most this many bytes of payload text.
    Bytes(usize),
    /// At most this many estimated tokens (4 bytes each) of payload text.
    Tokens(usize),
}

impl ResultLimit {
    /// At most `bytes` bytes of payload text.
    pub const fn bytes(bytes: usize) -> ResultLimit {
        ResultLimit::Bytes(bytes)
    }

    /// At most `tokens` estimated tokens of payload text (4 bytes a token).
    pub const fn tokens(tokens: usize) -> ResultLimit {
        ResultLimit::Tokens(tokens)
    }

    /// The limit in bytes of payload text.
    pub const fn max_bytes(self) -> usize {
        match self {
            ResultLimit::Bytes(bytes) => bytes,
            ResultLimit::Tokens(tokens) => tokens.saturating_mul(4),
        }
    }

    /// The size of `bytes` bytes in this limit's unit (tokens rounded up).
    pub(crate) fn measure(self, bytes: usize) -> usize {
        match self {
            ResultLimit::Bytes(_) => bytes,
            ResultLimit::Tokens(_) => bytes.div_ceil(4),
        }
    }

    /// The limit in its own unit.
    pub(crate) fn amount(self) -> usize {
        match self {
            ResultLimit::Bytes(n) | ResultLimit::Tokens(n) => n,
        }
    }

    /// `bytes` or `tokens`.
    pub(crate) fn unit(self) -> &'static str {
        match self {
            ResultLimit::Bytes(_) => "bytes",
            ResultLimit::Tokens(_) => "tokens",
        }
    }
}

/// The paging arguments of an action: the names of the argument that skips items and of the
/// one that bounds how many come back. Declared with
/// `#[action(page(offset = "offset", limit = "limit"))]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paging {
    /// The argument counting the items to skip (`offset`).
    pub offset: String,
    /// The argument bounding how many items come back (`limit`).
    pub limit: String,
}

/// How an action's result is fitted to a size: its limit, where its list is, its paging.
///
/// Declared with `#[action(max_result = 16000, items = "invoices",
/// page(offset = "offset", limit = "limit"))]`; all optional. A result over the limit in
/// force (the action's, else the server's [`max_result`](crate::server::Server::max_result))
/// is answered:
///
/// - a list (the payload a JSON array, or an array at [`items`](ResultFit::items)): the
///   first items that fit, and a `RESULT_TRUNCATED` warning (`isError: false`) naming how
///   many of how many came back and the call that fetches the rest;
/// - anything else, or a list whose first item alone is over the limit: a `RESULT_TRUNCATED`
///   error (`isError: true`) saying how large it was and what the limit is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResultFit {
    /// The action's own limit, over the server's; `None` takes the server's.
    pub max_result: Option<ResultLimit>,
    /// Where the list is in the payload's JSON object, as a dotted path of field names
    /// (`invoices`, `page.items`); `None`: the payload itself when it is a JSON array.
    pub items: Option<String>,
    /// The paging arguments; `None` when the action has none.
    pub page: Option<Paging>,
}

impl ResultFit {
    /// Whether the action declares nothing (the lockfile leaves such actions' fields out).
    pub fn is_empty(&self) -> bool {
        self.max_result.is_none() && self.items.is_none() && self.page.is_none()
    }
}
