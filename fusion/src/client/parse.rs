//! `parse_envelope`: reads a `<tool_error>` or `<validation_error>` back with quick-xml.
//!
//! Lenient where fusion's renderer is (SPEC section 1, rule 4): `>` and quotes stay literal in
//! element text (the golden vector `closing-tag-injection` pins `]]>` unescaped), and tab, LF
//! and CR are written raw in attribute values. Attribute values are therefore only unescaped,
//! never whitespace-normalized (XML 1.0 section 3.3.3), so rendering a parsed error again gives
//! the same bytes. Also read: the older layout other servers emit (indented sections, a
//! comma-separated `<available_actions>a, b</available_actions>`, no `severity` attribute),
//! unknown sections (skipped), and envelopes with other text around them.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

use crate::code::Severity;
use crate::error::ToolError;

use super::envelope::{ContractDelta, DeltaSeverity, Envelope, FieldLine, ValidationEnvelope};

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

/// Reads the first `<tool_error>` or `<validation_error>` envelope in `input` (SPEC sections 1,
/// 2, 7 and 8).
///
/// Text before the opening tag and after the closing tag is ignored, so a whole text block of
/// a tool result can be passed in. Entities are unescaped (`&amp;`, `&lt;`, `&gt;`, `&quot;`,
/// `&apos;`, character references). Parsing is the inverse of rendering: for every
/// [`ToolError`] `e`, `parse_envelope(&e.to_xml())` is `Ok(Envelope::ToolError(p))` with
/// `p.to_xml() == e.to_xml()`. Category, retryability and explanation are not in the XML:
/// the parsed error has the code's defaults (read the exact values from the result's
/// `_meta["fusion/error"]` with [`Flags::of_result`](super::Flags::of_result)).
///
/// Also accepted, as other servers write them: sections indented or in another order, a
/// comma-separated list in `<available_actions>`, no `severity` attribute (`error`),
/// `<retry_after>` as `N`, `N second(s)` or `Ns`, CDATA sections, comments, and unknown
/// sections or attributes (skipped). A `<!DOCTYPE>` is skipped and no entity is ever
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

/// Describes an element for error messages: `element <name>`.
fn element(name: &str) -> String {
    format!("element <{name}>")
}

/// The events of one envelope, with offsets into the whole input.
struct Parser<'a> {
    reader: Reader<&'a [u8]>,
    /// Where the envelope starts in the input.
    base: usize,
}

/// An element opening: its name, and whether it is self-closing (`<message/>`).
struct Open<'a> {
    start: BytesStart<'a>,
    empty: bool,
}

impl<'a> Open<'a> {
    fn name(&self) -> &str {
        self.start.name().into_inner()
    }
}

impl<'a> Parser<'a> {
    fn new(input: &'a str, base: usize) -> Parser<'a> {
        let mut reader = Reader::from_str(&input[base..]);
        // Whitespace is kept: inside sections it is content. Between sections it is skipped
        // below. `check_end_names` (the default) catches mismatched closing tags.
        let config = reader.config_mut();
        config.trim_text(false);
        config.check_end_names = true;
        Parser { reader, base }
    }

    /// The current offset in the input.
    fn offset(&self) -> usize {
        self.base + usize::try_from(self.reader.buffer_position()).unwrap_or(usize::MAX - self.base)
    }

    fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.offset(), kind)
    }

    /// The next event that matters: comments, processing instructions, declarations and
    /// doctypes are skipped.
    fn next(&mut self) -> Result<Event<'a>, ParseError> {
        loop {
            match self.reader.read_event() {
                Ok(Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_)) => {}
                Ok(event) => return Ok(event),
                Err(err) => {
                    let at = self.base
                        + usize::try_from(self.reader.error_position()).unwrap_or_default();
                    return Err(ParseError::new(at, ParseErrorKind::Xml(err.to_string())));
                }
            }
        }
    }

    /// The root element's opening tag (the input starts with it).
    fn root(&mut self) -> Result<Open<'a>, ParseError> {
        match self.next()? {
            Event::Start(start) => Ok(Open {
                start,
                empty: false,
            }),
            Event::Empty(start) => Ok(Open { start, empty: true }),
            // `find_root` found `<name` followed by a separator; quick-xml reports anything
            // else (an unclosed tag) as an error above.
            other => Err(self.error(ParseErrorKind::Unexpected {
                found: describe(&other),
                expected: "the envelope's opening tag".into(),
            })),
        }
    }

    /// The next child element of `parent`, skipping whitespace between elements; `None` at
    /// `parent`'s closing tag.
    fn child(&mut self, parent: &str) -> Result<Option<Open<'a>>, ParseError> {
        loop {
            match self.next()? {
                Event::Start(start) => {
                    return Ok(Some(Open {
                        start,
                        empty: false,
                    }));
                }
                Event::Empty(start) => return Ok(Some(Open { start, empty: true })),
                Event::End(_) => return Ok(None), // `check_end_names` guarantees it is `parent`'s
                Event::Text(text) if text.trim_ascii().is_empty() => {}
                Event::Eof => {
                    return Err(self.error(ParseErrorKind::UnexpectedEof {
                        expected: format!("</{parent}>"),
                    }));
                }
                other => {
                    return Err(self.error(ParseErrorKind::Unexpected {
                        found: describe(&other),
                        expected: format!("an element or </{parent}>"),
                    }));
                }
            }
        }
    }

    /// The text content of `open`, entities resolved, up to its closing tag. Elements inside
    /// are an error.
    fn text(&mut self, open: &Open<'a>) -> Result<String, ParseError> {
        let mut out = String::new();
        if open.empty {
            return Ok(out);
        }
        loop {
            match self.next()? {
                Event::Text(text) => out.push_str(&text),
                Event::CData(data) => out.push_str(&data),
                Event::GeneralRef(reference) => self.push_reference(&mut out, &reference)?,
                Event::End(_) => return Ok(out),
                Event::Eof => {
                    return Err(self.error(ParseErrorKind::UnexpectedEof {
                        expected: format!("</{}>", open.name()),
                    }));
                }
                other => {
                    return Err(self.error(ParseErrorKind::Unexpected {
                        found: describe(&other),
                        expected: format!("text or </{}>", open.name()),
                    }));
                }
            }
        }
    }

    /// Appends the character an entity or character reference stands for.
    fn push_reference(&self, out: &mut String, reference: &BytesRef<'_>) -> Result<(), ParseError> {
        let unknown = || {
            self.error(ParseErrorKind::Xml(format!(
                "unknown entity `&{};`",
                reference.as_ref()
            )))
        };
        match reference.resolve_char_ref() {
            Ok(Some(c)) => out.push(c),
            Ok(None) => out.push_str(
                quick_xml::escape::resolve_predefined_entity(reference).ok_or_else(unknown)?,
            ),
            Err(err) => return Err(self.error(ParseErrorKind::Xml(err.to_string()))),
        }
        Ok(())
    }

    /// Skips `open` and everything inside it (an unknown section).
    fn skip(&mut self, open: &Open<'a>) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        let end = open.start.to_end().into_owned();
        self.reader.read_to_end(end.name()).map_err(|err| {
            let at = self.base + usize::try_from(self.reader.error_position()).unwrap_or_default();
            ParseError::new(at, ParseErrorKind::Xml(err.to_string()))
        })?;
        Ok(())
    }

    /// The unescaped value of attribute `name` of `open`, if present. Not whitespace-normalized:
    /// fusion writes tab and newline raw in attribute values and reads them back the same.
    fn attribute(&self, open: &Open<'a>, name: &str) -> Result<Option<String>, ParseError> {
        for attribute in open.start.attributes() {
            let attribute =
                attribute.map_err(|err| self.error(ParseErrorKind::Xml(err.to_string())))?;
            if attribute.key.into_inner() == name {
                let value = quick_xml::escape::unescape(&attribute.value)
                    .map_err(|err| self.error(ParseErrorKind::Xml(err.to_string())))?;
                return Ok(Some(Cow::into_owned(value)));
            }
        }
        Ok(None)
    }

    fn required(
        &self,
        open: &Open<'a>,
        element: &'static str,
        attribute: &'static str,
    ) -> Result<String, ParseError> {
        self.attribute(open, attribute)?
            .ok_or_else(|| self.error(ParseErrorKind::MissingAttribute { element, attribute }))
    }

    // --- <tool_error> ------------------------------------------------------------------------

    fn tool_error(&mut self) -> Result<ToolError, ParseError> {
        let root = self.root()?;
        let code = self.required(&root, "tool_error", "code")?;
        let severity = match self.attribute(&root, "severity")? {
            None => Severity::Error,
            Some(s) => s
                .parse()
                .map_err(|_| self.error(ParseErrorKind::Severity(s)))?,
        };
        let mut message = None;
        let mut recovery = None;
        let mut actions = Vec::new();
        let mut details = Vec::new();
        let mut retry_after = None;
        if !root.empty {
            while let Some(open) = self.child("tool_error")? {
                match open.name() {
                    "message" => set_once(self, &mut message, "message", &open)?,
                    "recovery" => set_once(self, &mut recovery, "recovery", &open)?,
                    "available_actions" => self.available_actions(&open, &mut actions)?,
                    "details" => self.details(&open, &mut details)?,
                    "retry_after" => {
                        if retry_after.is_some() {
                            return Err(self.error(ParseErrorKind::Duplicate("retry_after")));
                        }
                        let text = self.text(&open)?;
                        retry_after = Some(
                            parse_seconds(&text)
                                .ok_or_else(|| self.error(ParseErrorKind::RetryAfter(text)))?,
                        );
                    }
                    _ => self.skip(&open)?,
                }
            }
        }
        Ok(ToolError::new(code, message.unwrap_or_default())
            .severity(severity)
            .suggest(recovery.unwrap_or_default())
            .actions(actions)
            .with_details(details)
            .retry_after(retry_after.unwrap_or(0)))
    }

    /// `<action>` children, or the older comma-separated text, or both.
    fn available_actions(
        &mut self,
        open: &Open<'a>,
        actions: &mut Vec<String>,
    ) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        let mut list = String::new();
        loop {
            match self.next()? {
                Event::Start(start) | Event::Empty(start)
                    if start.name().into_inner() != "action" =>
                {
                    return Err(self.error(ParseErrorKind::Unexpected {
                        found: element(start.name().into_inner()),
                        expected: "<action> or </available_actions>".into(),
                    }));
                }
                Event::Start(start) => {
                    let action = self.text(&Open {
                        start,
                        empty: false,
                    })?;
                    actions.push(action);
                }
                Event::Empty(_) => actions.push(String::new()),
                Event::Text(text) => list.push_str(&text),
                Event::CData(data) => list.push_str(&data),
                Event::GeneralRef(reference) => self.push_reference(&mut list, &reference)?,
                Event::End(_) => break,
                Event::Eof => {
                    return Err(self.error(ParseErrorKind::UnexpectedEof {
                        expected: "</available_actions>".into(),
                    }));
                }
                other => {
                    return Err(self.error(ParseErrorKind::Unexpected {
                        found: describe(&other),
                        expected: "<action> or </available_actions>".into(),
                    }));
                }
            }
        }
        // The older form: `<available_actions>a, b</available_actions>`.
        actions.extend(
            list.split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned),
        );
        Ok(())
    }

    fn details(
        &mut self,
        open: &Open<'a>,
        details: &mut Vec<(String, String)>,
    ) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        while let Some(detail) = self.child("details")? {
            if detail.name() != "detail" {
                return Err(self.error(ParseErrorKind::Unexpected {
                    found: element(detail.name()),
                    expected: "<detail> or </details>".into(),
                }));
            }
            let key = self.required(&detail, "detail", "key")?;
            let value = self.text(&detail)?;
            details.push((key, value));
        }
        Ok(())
    }

    // --- <validation_error> ------------------------------------------------------------------

    fn validation(&mut self) -> Result<ValidationEnvelope, ParseError> {
        let root = self.root()?;
        let mut envelope =
            ValidationEnvelope::new(self.required(&root, "validation_error", "action")?);
        let mut recovery = None;
        if !root.empty {
            while let Some(open) = self.child("validation_error")? {
                match open.name() {
                    "field" => {
                        let name = self.required(&open, "field", "name")?;
                        let text = self.text(&open)?;
                        envelope.fields.push(FieldLine::new(name, text));
                    }
                    "contract_awareness" => {
                        if open.empty {
                            continue;
                        }
                        while let Some(delta) = self.child("contract_awareness")? {
                            if delta.name() != "delta" {
                                return Err(self.error(ParseErrorKind::Unexpected {
                                    found: element(delta.name()),
                                    expected: "<delta> or </contract_awareness>".into(),
                                }));
                            }
                            let severity = self.required(&delta, "delta", "severity")?;
                            let scope = self.attribute(&delta, "scope")?.unwrap_or_default();
                            let text = self.text(&delta)?;
                            envelope.contract_awareness.push(ContractDelta::new(
                                DeltaSeverity::from(severity.as_str()),
                                scope,
                                text,
                            ));
                        }
                    }
                    "recovery" => set_once(self, &mut recovery, "recovery", &open)?,
                    _ => self.skip(&open)?,
                }
            }
        }
        envelope.recovery = recovery;
        Ok(envelope)
    }
}

/// Reads a single-occurrence text section into `slot`.
fn set_once<'a>(
    parser: &mut Parser<'a>,
    slot: &mut Option<String>,
    name: &'static str,
    open: &Open<'a>,
) -> Result<(), ParseError> {
    if slot.is_some() {
        return Err(parser.error(ParseErrorKind::Duplicate(name)));
    }
    *slot = Some(parser.text(open)?);
    Ok(())
}

/// `30 seconds`, `1 second`, `30s`, `30` (surrounding whitespace allowed) → 30.
fn parse_seconds(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number = text[..digits].parse().ok()?;
    let unit = text[digits..].trim_start();
    ["", "s", "second", "seconds"]
        .iter()
        .any(|u| unit.eq_ignore_ascii_case(u))
        .then_some(number)
}

/// An event as error messages name it.
fn describe(event: &Event<'_>) -> String {
    match event {
        Event::Start(start) | Event::Empty(start) => element(start.name().into_inner()),
        Event::End(end) => format!("closing tag </{}>", end.name().into_inner()),
        Event::Text(text) => format!("text {:?}", cut(text)),
        Event::CData(_) => "a CDATA section".into(),
        Event::GeneralRef(reference) => format!("entity `&{};`", reference.as_ref()),
        Event::Eof => "the end of the input".into(),
        _ => "markup".into(),
    }
}

/// At most 40 characters of `text`, for error messages.
fn cut(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds() {
        for (text, secs) in [
            ("30 seconds", Some(30)),
            (" 1 second ", Some(1)),
            ("5s", Some(5)),
            ("7", Some(7)),
            ("30 SECONDS", Some(30)),
            ("", None),
            ("soon", None),
            ("3 minutes", None),
            ("-1 seconds", None),
            ("99999999999999999999999 seconds", None),
        ] {
            assert_eq!(parse_seconds(text), secs, "{text:?}");
        }
    }

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
