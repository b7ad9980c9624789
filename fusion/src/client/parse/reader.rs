//! The event reader both envelopes are read with: elements, text with entities resolved,
//! attributes unescaped, unknown sections skipped, and errors with their byte offset.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

use super::{ParseError, ParseErrorKind};

/// Describes an element for error messages: `element <name>`.
pub(super) fn element(name: &str) -> String {
    format!("element <{name}>")
}

/// The events of one envelope, with offsets into the whole input.
pub(super) struct Parser<'a> {
    reader: Reader<&'a [u8]>,
    /// Where the envelope starts in the input.
    base: usize,
}

/// An element opening: its name, and whether it is self-closing (`<message/>`).
pub(super) struct Open<'a> {
    pub(super) start: BytesStart<'a>,
    pub(super) empty: bool,
}

impl<'a> Open<'a> {
    pub(super) fn name(&self) -> &str {
        self.start.name().into_inner()
    }

    /// The element `event` opens, or the event back when it opens none.
    pub(super) fn of(event: Event<'a>) -> Result<Open<'a>, Event<'a>> {
        match event {
            Event::Start(start) => Ok(Open {
                start,
                empty: false,
            }),
            Event::Empty(start) => Ok(Open { start, empty: true }),
            other => Err(other),
        }
    }
}

impl<'a> Parser<'a> {
    pub(super) fn new(input: &'a str, base: usize) -> Parser<'a> {
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

    pub(super) fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.offset(), kind)
    }

    /// quick-xml's error, at the position where the reader found it.
    fn xml_error(&self, err: quick_xml::Error) -> ParseError {
        let at = self.base + usize::try_from(self.reader.error_position()).unwrap_or_default();
        ParseError::new(at, ParseErrorKind::Xml(err.to_string()))
    }

    /// The next event that matters: comments, processing instructions, declarations and
    /// doctypes are skipped.
    pub(super) fn next(&mut self) -> Result<Event<'a>, ParseError> {
        loop {
            match self.reader.read_event() {
                Ok(Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_)) => {}
                Ok(event) => return Ok(event),
                Err(err) => return Err(self.xml_error(err)),
            }
        }
    }

    /// The root element's opening tag (the input starts with it).
    pub(super) fn root(&mut self) -> Result<Open<'a>, ParseError> {
        // `find_root` found `<name` followed by a separator; quick-xml reports anything else
        // (an unclosed tag) as an error in `next`.
        Open::of(self.next()?).map_err(|other| {
            self.error(ParseErrorKind::Unexpected {
                found: describe(&other),
                expected: "the envelope's opening tag".into(),
            })
        })
    }

    /// The next child element of `parent`, skipping whitespace between elements; `None` at
    /// `parent`'s closing tag.
    pub(super) fn child(&mut self, parent: &str) -> Result<Option<Open<'a>>, ParseError> {
        loop {
            match Open::of(self.next()?) {
                Ok(open) => return Ok(Some(open)),
                Err(Event::End(_)) => return Ok(None), // `check_end_names` guarantees it is `parent`'s
                Err(Event::Text(text)) if text.trim_ascii().is_empty() => {}
                Err(Event::Eof) => {
                    return Err(self.error(ParseErrorKind::UnexpectedEof {
                        expected: format!("</{parent}>"),
                    }));
                }
                Err(other) => {
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
    pub(super) fn text(&mut self, open: &Open<'a>) -> Result<String, ParseError> {
        let mut out = String::new();
        if open.empty {
            return Ok(out);
        }
        loop {
            let event = self.next()?;
            if self.text_event(event, &mut out, open.name(), "text")? {
                return Ok(out);
            }
        }
    }

    /// Adds `event`, read inside element `name`, to its text `out`; `Ok(true)` at the closing
    /// tag. Anything but text, CDATA and references is an error saying `what` may stand there.
    pub(super) fn text_event(
        &self,
        event: Event<'a>,
        out: &mut String,
        name: &str,
        what: &str,
    ) -> Result<bool, ParseError> {
        match event {
            Event::Text(text) => out.push_str(&text),
            Event::CData(data) => out.push_str(&data),
            Event::GeneralRef(reference) => self.push_reference(out, &reference)?,
            Event::End(_) => return Ok(true),
            Event::Eof => {
                return Err(self.error(ParseErrorKind::UnexpectedEof {
                    expected: format!("</{name}>"),
                }));
            }
            other => {
                return Err(self.error(ParseErrorKind::Unexpected {
                    found: describe(&other),
                    expected: format!("{what} or </{name}>"),
                }));
            }
        }
        Ok(false)
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
    pub(super) fn skip(&mut self, open: &Open<'a>) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        let end = open.start.to_end().into_owned();
        self.reader
            .read_to_end(end.name())
            .map_err(|err| self.xml_error(err))?;
        Ok(())
    }

    /// The unescaped value of attribute `name` of `open`, if present. Not whitespace-normalized:
    /// fusion writes tab and newline raw in attribute values and reads them back the same.
    pub(super) fn attribute(
        &self,
        open: &Open<'a>,
        name: &str,
    ) -> Result<Option<String>, ParseError> {
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

    pub(super) fn required(
        &self,
        open: &Open<'a>,
        element: &'static str,
        attribute: &'static str,
    ) -> Result<String, ParseError> {
        self.attribute(open, attribute)?
            .ok_or_else(|| self.error(ParseErrorKind::MissingAttribute { element, attribute }))
    }
}

/// Reads a single-occurrence text section into `slot`.
pub(super) fn set_once<'a>(
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

/// An event as error messages name it.
pub(super) fn describe(event: &Event<'_>) -> String {
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
