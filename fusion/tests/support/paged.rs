//! A paged listing for the tests of results that fit: twenty ids, `id_00` to `id_19` (each 7
//! bytes as JSON), with an offset, a limit and a free-text filter.

use schemars::JsonSchema;
use serde::Deserialize;

/// The arguments of a paged listing.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct Paged {
    /// Items to skip.
    pub(crate) offset: Option<usize>,
    /// At most this many items.
    pub(crate) limit: Option<usize>,
    /// Only items containing this text.
    #[allow(dead_code)]
    pub(crate) query: Option<String>,
}

/// The ids `args` asks for: `offset` and `limit` applied (the filter is not).
pub(crate) fn ids(args: &Paged) -> Vec<String> {
    (0..20)
        .map(|i| format!("id_{i:02}"))
        .skip(args.offset.unwrap_or(0))
        .take(args.limit.unwrap_or(usize::MAX))
        .collect()
}
