//! `parse_envelope`: reads a `<tool_error>` or `<validation_error>` back with quick-xml.
//!
//! Lenient where fusion's renderer is: `>` and quotes stay literal in
//! element text (the golden vector `closing-tag-injection` pins `]]>` unescaped), and tab, LF
//! and CR are written raw in attribute values. Attribute values are therefore only unescaped,
//! never whitespace-normalized (XML 1.0 section 3.3.3), so rendering a parsed error again gives
//! the same bytes. Also read: the older layout other servers emit (indented sections, a
//! comma-separated `<available_actions>a, b</available_actions>`, no `severity` attribute),
//! unknown sections (skipped), and envelopes with other text around them.

mod reader;
mod tool_error;
mod validation_error;

use super::envelope::Envelope;

use reader::Parser;

/// Why [`parse_envelope`] could not read an envelope: what went wrong, and where.
///
/// ```
/// use fusion::client::{ParseErrorKind, parse_envelope};
///
/// let err = parse_envelope("<tool_error code=\"X\"><message>m</tool_error>").unwrap_err();
/// assert!(matches!(err.kind(), ParseErrorKind::Xml(_)));
/// assert_eq!(err.offset(), 31);
/// assert_eq!(
///     err.to_string(),
///     "malformed XML: ill-formed document: expected `</message>`, but `</tool_error>` was found at byte 31"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {offset}")]
pub struct ParseError {
    offset: usize,
    kind: ParseErrorKind,
}

impl ParseError {
    fn new(offset: usize, kind: ParseErrorKind) -> ParseError {
        ParseError { offset, kind }
    }

    /// The byte offset in the input where the problem was found.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }
}

/// What [`parse_envelope`] found wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The text contains no `<tool_error` or `<validation_error` opening tag.
    #[error("no <tool_error> or <validation_error> envelope found")]
    NoEnvelope,
    /// The XML reader rejected the envelope (unclosed or mismatched tags, a bad attribute, an
    /// unknown entity); the text is quick-xml's.
    #[error("malformed XML: {0}")]
    Xml(String),
    /// The input ended inside the envelope.
    #[error("the envelope ends early: expected {expected}")]
    UnexpectedEof {
        /// What should have come next, like `</tool_error>`.
        expected: String,
    },
    /// Something stands where it may not, like text between sections or an element inside
    /// `<message>`.
    #[error("unexpected {found}: expected {expected}")]
    Unexpected {
        /// What was found, like `element <b>` or `text "oops"`.
        found: String,
        /// What may stand there.
        expected: String,
    },
    /// A required attribute is missing.
    #[error("<{element}> has no `{attribute}` attribute")]
    MissingAttribute {
        /// The element.
        element: &'static str,
        /// The attribute.
        attribute: &'static str,
    },
    /// The `severity` attribute is not `warning`, `error` or `critical`.
    #[error("unknown severity `{0}`: expected warning, error or critical")]
    Severity(String),
    /// `<retry_after>` does not read `N seconds`.
    #[error("<retry_after> reads `{0}`: expected a whole number of seconds, like `30 seconds`")]
    RetryAfter(String),
    /// A section that may appear once appears twice.
    #[error("<{0}> appears twice")]
    Duplicate(&'static str),
}

/// Reads the first `<tool_error>` or `<validation_error>` envelope in `input`.
///
/// Text before the opening tag and after the closing tag is ignored, so a whole text block of
/// a tool result can be passed in. Entities are unescaped (`&amp;`, `&lt;`, `&gt;`, `&quot;`,
/// `&apos;`, character references). Parsing is the inverse of rendering: for every
/// [`ToolError`](crate::ToolError) `e`, `parse_envelope(&e.to_xml())` is
/// `Ok(Envelope::ToolError(p))` with `p.to_xml() == e.to_xml()`, and for every
/// [`ValidationError`](crate::ValidationError) `v`, `Ok(Envelope::Validation(p))` with
/// `p.to_xml() == v.to_xml()`. Category, retryability and explanation are not in the XML:
/// the parsed error has the code's defaults (read the exact values from the result's
/// `_meta["fusion/error"]` with [`Flags::of_result`](super::Flags::of_result)).
///
/// Also accepted, as other servers write them: sections indented or in another order, a
/// comma-separated list in `<available_actions>`, no `severity` attribute (`error`),
/// `<retry_after>` as `N`, `N second(s)` or `Ns`, CDATA sections, comments, and unknown
/// sections or attributes (skipped). A validation envelope keeps its fields in the order sent;
/// its recovery line is not kept (fusion's is fixed) and a `<delta>` of a class other than
/// `BREAKING`, `RISKY`, `SAFE` or `COSMETIC` is skipped. A `<!DOCTYPE>` is skipped and no entity is ever
/// expanded beyond the five predefined ones and character references, so an envelope cannot
/// make the parser allocate more than its own size (no "billion laughs").
///
/// ```
/// use fusion::client::{Envelope, parse_envelope};
/// use fusion::{ErrorCode, Severity};
///
/// let text = "<tool_error code=\"NOT_FOUND\">\n\
///   <message>No invoice &quot;inv_9&quot;</message>\n\
///   <available_actions>billing.list_invoices, billing.search</available_actions>\n\
/// </tool_error>";
/// let Ok(Envelope::ToolError(e)) = parse_envelope(text) else { panic!() };
/// assert_eq!(e.code(), &ErrorCode::NotFound);
/// assert_eq!(e.severity_level(), Severity::Error);
/// assert_eq!(e.message(), "No invoice \"inv_9\"");
/// assert_eq!(e.available_actions(), ["billing.list_invoices", "billing.search"]);
/// ```
///
/// # Errors
/// A [`ParseError`] (with the byte offset) when no envelope is found, the XML is malformed or
/// ends early, a required attribute (`code`, `action`, a detail's `key`, a field's `name`) is
/// missing, the severity is unknown, `<retry_after>` is not a number of seconds, or a
/// single section appears twice. Never panics.
pub fn parse_envelope(input: &str) -> Result<Envelope, ParseError> {
    let Some((start, root)) = find_root(input) else {
        return Err(ParseError::new(0, ParseErrorKind::NoEnvelope));
    };
    let mut parser = Parser::new(input, start);
    match root {
        Root::ToolError => parser.tool_error().map(Envelope::ToolError),
        Root::Validation => parser.validation().map(Envelope::Validation),
    }
}

/// Whether a text block is an envelope rather than a payload: it opens with one (after
/// whitespace).
#[cfg(feature = "client")]
pub(super) fn is_envelope(text: &str) -> bool {
    matches!(find_root(text.trim_start()), Some((0, _)))
}

#[derive(Clone, Copy)]
enum Root {
    ToolError,
    Validation,
}

/// The byte offset of the first envelope's opening tag, and which envelope it opens.
fn find_root(input: &str) -> Option<(usize, Root)> {
    let first = |tag: &str| {
        input.match_indices(tag).map(|(i, _)| i).find(|&i| {
            // The name must end there: `<tool_errors>` is another element.
            matches!(
                input.as_bytes().get(i + tag.len()),
                Some(b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'/')
            )
        })
    };
    match (first("<tool_error"), first("<validation_error")) {
        (Some(t), Some(v)) if v < t => Some((v, Root::Validation)),
        (Some(t), _) => Some((t, Root::ToolError)),
        (None, Some(v)) => Some((v, Root::Validation)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_must_end_their_name() {
        assert!(find_root("<tool_errors>").is_none());
        assert!(matches!(
            find_root("<tool_errors><validation_error action=\"a\">"),
            Some((13, Root::Validation))
        ));
        assert!(matches!(
            find_root("x <tool_error/>"),
            Some((2, Root::ToolError))
        ));
    }
}
