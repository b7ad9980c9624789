//! The `<tool_error>` envelope writer: byte-exact, sized exactly beforehand, one allocation.

use crate::code::{ErrorCode, Severity};
use crate::xml::{self, Context};

use super::ToolError;

impl ToolError {
    /// The `<tool_error>` envelope, byte-exact. Sized exactly, in one
    /// allocation.
    ///
    /// One walk sums the lengths of the fixed parts and of the strings as they are, and scans
    /// the strings; when none needs escaping (the common case) that sum is exact and the
    /// strings are copied with no second look. Otherwise the envelope is measured exactly
    /// (escaped lengths) and written out of line, escaping the strings that need it.
    pub fn to_xml(&self) -> String {
        let (len, all_plain) = self.raw_len();
        if all_plain {
            self.write_plain(String::with_capacity(len))
        } else {
            self.write_escaping(String::with_capacity(self.escaped_xml_len()))
        }
    }

    /// Appends the envelope to `out`, for callers that reuse a buffer (grows it at most once).
    pub fn write_xml(&self, out: &mut String) {
        let (len, all_plain) = self.raw_len();
        *out = if all_plain {
            out.reserve(len);
            self.write_plain(std::mem::take(out))
        } else {
            out.reserve(self.escaped_xml_len());
            self.write_escaping(std::mem::take(out))
        };
    }

    /// The length of the envelope with every string as it is, and whether that is its exact
    /// length: whether no string needs escaping, found by one [`xml::Scan`] in the same walk.
    #[inline(always)]
    fn raw_len(&self) -> (usize, bool) {
        let mut scan = xml::Scan::new();
        // Inlined, so each string's scan is inlined too: left to itself, the compiler keeps
        // the closure out of line and calls it for each string.
        let len = self.xml_len(
            #[inline(always)]
            |s, ctx| {
                scan.add(s, ctx);
                s.len()
            },
        );
        (len, scan.all_plain())
    }

    /// The exact length of the envelope when a string needs escaping (out of line: the
    /// common case never needs it).
    #[inline(never)]
    fn escaped_xml_len(&self) -> usize {
        self.xml_len(xml::measured_len)
    }

    /// [`ToolError::write_sections`] when no string needs escaping: no scan at all. Inlined
    /// into `to_xml`, where the call and handing the buffer over cost more than the code.
    #[inline(always)]
    fn write_plain(&self, out: String) -> String {
        self.write_sections(xml::Writer::presized(out, true))
    }

    /// [`ToolError::write_sections`] when a string needs escaping: each is scanned again
    /// before it is copied, and the ones that are not plain are escaped.
    #[inline(never)]
    fn write_escaping(&self, out: String) -> String {
        self.write_sections(xml::Writer::presized(out, false))
    }

    /// Writes the envelope with `w`, whose buffer has room for it.
    ///
    /// The fixed text between two variable parts is written as one literal wherever the next
    /// part is known: one opening per canonical code, one per severity, one per list item, and
    /// one per pair of adjacent sections (see [`push_joint`]), so the renderer makes about as
    /// few copies as there are variable parts.
    #[inline(always)]
    fn write_sections(&self, mut w: xml::Writer) -> String {
        let e = &*self.0;
        if !e.code.push_open_tag(|tag| w.literal(tag)) {
            w.literal("<tool_error code=\"");
            w.attr(e.code.as_str());
        }
        // Must match `Severity::as_str` (the test `severity_literals_match_the_wire_strings`).
        match e.severity {
            Severity::Warning => w.literal("\" severity=\"warning\">\n<message>"),
            Severity::Error => w.literal("\" severity=\"error\">\n<message>"),
            Severity::Critical => w.literal("\" severity=\"critical\">\n<message>"),
        }
        w.text(&e.message);
        let mut section = Section::Message;
        if !e.recovery.is_empty() {
            push_joint(&mut w, section, Section::Recovery);
            w.text(&e.recovery);
            section = Section::Recovery;
        }
        if let Some((first, rest)) = e.actions.split_first() {
            push_joint(&mut w, section, Section::Actions);
            w.text(first);
            for action in rest {
                w.literal("</action>\n  <action>");
                w.text(action);
            }
            section = Section::Actions;
        }
        if let Some(((first_key, first_value), rest)) = e.details.split_first() {
            push_joint(&mut w, section, Section::Details);
            w.attr(first_key);
            w.literal("\">");
            w.text(first_value);
            for (key, value) in rest {
                w.literal("</detail>\n  <detail key=\"");
                w.attr(key);
                w.literal("\">");
                w.text(value);
            }
            section = Section::Details;
        }
        if e.retry_after > 0 {
            push_joint(&mut w, section, Section::RetryAfter);
            push_decimal(&mut w, e.retry_after);
            section = Section::RetryAfter;
        }
        push_joint(&mut w, section, Section::End);
        w.finish()
    }

    /// The length in bytes of [`ToolError::to_xml`]'s output, with `len` giving the length of
    /// each string as written: its escaped length ([`xml::measured_len`]) for the exact length,
    /// or its own length, which is exact when nothing needs escaping ([`ToolError::raw_len`]).
    #[inline(always)]
    fn xml_len(&self, mut len: impl FnMut(&str, Context) -> usize) -> usize {
        // Fixed parts, counted from the sections' literals (see `push_joint`).
        const OPEN: usize = "<tool_error code=\"\" severity=\"\">\n<message></message>\n".len();
        const CLOSE: usize = "</tool_error>".len();
        const RECOVERY: usize = "<recovery></recovery>\n".len();
        const ACTIONS: usize = "<available_actions>\n</available_actions>\n".len();
        const ACTION: usize = "  <action></action>\n".len();
        const DETAILS: usize = "<details>\n</details>\n".len();
        const DETAIL: usize = "  <detail key=\"\"></detail>\n".len();
        const RETRY: usize = "<retry_after> seconds</retry_after>\n".len();

        let e = &*self.0;
        let code = match &e.code {
            ErrorCode::Custom(code) => len(code, Context::Attr),
            canonical => canonical.as_str().len(),
        };
        let mut total =
            OPEN + CLOSE + code + e.severity.as_str().len() + len(&e.message, Context::Text);
        if !e.recovery.is_empty() {
            total += RECOVERY + len(&e.recovery, Context::Text);
        }
        // The first item apart, as the writer does: a loop over the rest is skipped at once
        // when there is only one item (the common case), where a loop over all of them would
        // first work out how often to run its unrolled body.
        if let Some((first, rest)) = e.actions.split_first() {
            total += ACTIONS + ACTION + len(first, Context::Text);
            for action in rest {
                total += ACTION + len(action, Context::Text);
            }
        }
        if let Some(((first_key, first_value), rest)) = e.details.split_first() {
            total +=
                DETAILS + DETAIL + len(first_key, Context::Attr) + len(first_value, Context::Text);
            for (key, value) in rest {
                total += DETAIL + len(key, Context::Attr) + len(value, Context::Text);
            }
        }
        if e.retry_after > 0 {
            total += RETRY + decimal_len(e.retry_after);
        }
        total
    }
}

/// The sections of a `<tool_error>` envelope from the message on, in order. Every one after
/// the message is optional, so which section follows another is known only at run time.
#[derive(Clone, Copy)]
enum Section {
    Message,
    Recovery,
    Actions,
    Details,
    RetryAfter,
    /// The closing tag.
    End,
}

/// The closing text of a section (after its last variable part) as a literal.
macro_rules! close {
    (Message) => {
        "</message>\n"
    };
    (Recovery) => {
        "</recovery>\n"
    };
    (Actions) => {
        "</action>\n</available_actions>\n"
    };
    (Details) => {
        "</detail>\n</details>\n"
    };
    (RetryAfter) => {
        " seconds</retry_after>\n"
    };
}

/// The opening text of a section (up to its first variable part) as a literal.
macro_rules! open {
    (Recovery) => {
        "<recovery>"
    };
    (Actions) => {
        "<available_actions>\n  <action>"
    };
    (Details) => {
        "<details>\n  <detail key=\""
    };
    (RetryAfter) => {
        "<retry_after>"
    };
    (End) => {
        "</tool_error>"
    };
}

/// Appends the end of section `prev` and the start of section `next` as one constant-size
/// literal per pair (a literal selected from a table would be copied by a `memcpy` call).
/// `next` is a constant at every call site and `prev` one of a few constants, so after inlining
/// each call site jumps straight to its arms.
#[inline(always)]
fn push_joint(w: &mut xml::Writer, prev: Section, next: Section) {
    /// One arm per pair of a section and a later one, its literal built from `close!` and
    /// `open!`.
    macro_rules! joints {
        ($($prev:ident => $($next:ident)*;)*) => {
            match (prev, next) {
                $($( (Section::$prev, Section::$next) => {
                    w.literal(concat!(close!($prev), open!($next)))
                } )*)*
                _ => unreachable!("sections are written in order"),
            }
        };
    }
    joints! {
        Message => Recovery Actions Details RetryAfter End;
        Recovery => Actions Details RetryAfter End;
        Actions => Details RetryAfter End;
        Details => RetryAfter End;
        RetryAfter => End;
    }
}

/// Appends the decimal digits of `n` without going through `fmt`. One or two digits (the usual
/// delay in seconds) take a short path.
#[inline(always)]
fn push_decimal(w: &mut xml::Writer, n: u64) {
    if n < 100 {
        if n >= 10 {
            w.ascii(b'0' + (n / 10) as u8);
        }
        w.ascii(b'0' + (n % 10) as u8);
    } else {
        w.literal(decimal(n, &mut [0; 20]));
    }
}

/// The decimal digits of `n`, written into the end of `digits`: for numbers of three digits
/// or more, rare enough that checking the digits as UTF-8 costs nothing that matters.
#[inline(never)]
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&digits[i..]).expect("ASCII digits")
}

/// The number of decimal digits of `n`, with the same short path as [`push_decimal`].
#[inline(always)]
fn decimal_len(n: u64) -> usize {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        _ => n.ilog10() as usize + 1,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn decimal_rendering() {
        for n in [1u64, 9, 10, 99, 100, 30, 12345, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string());
            // Into an empty buffer, so every digit goes through the growing path.
            let mut w = xml::Writer::presized(String::new(), true);
            push_decimal(&mut w, n);
            let s = w.finish();
            assert_eq!(s, n.to_string());
            assert_eq!(decimal_len(n), s.len());
        }
    }

    #[test]
    fn to_xml_is_sized_exactly_plain_or_escaped() {
        let plain = ToolError::not_found("No invoice with that ID")
            .suggest("List invoices first, then retry with a real ID")
            .actions(["billing.list_invoices"])
            .detail("requestedId", "inv_2026_9999")
            .retry_after(30);
        let escaped = ToolError::new("A\"<", "x & y < z")
            .suggest("r")
            .actions(["a", "b<"])
            .detail("k'", "v&")
            .retry_after(1234);
        for e in [plain, escaped] {
            let xml = e.to_xml();
            assert_eq!(xml.len(), xml.capacity(), "{xml}");
        }
    }

    #[test]
    fn write_xml_appends() {
        let e = ToolError::not_found("gone");
        let mut buf = String::from("prefix:");
        e.write_xml(&mut buf);
        assert_eq!(buf, format!("prefix:{}", e.to_xml()));
    }

    /// The envelope assembled the obvious way, section by section with `format!`, from the
    /// envelope's layout and the reference escaper: what the renderer's merged literals must
    /// equal.
    fn reference_xml(e: &ToolError) -> String {
        use crate::xml::reference_escape;
        let (text, attr) = (
            |s: &str| reference_escape(s, Context::Text),
            |s: &str| reference_escape(s, Context::Attr),
        );
        let mut xml = format!(
            "<tool_error code=\"{}\" severity=\"{}\">\n<message>{}</message>\n",
            attr(e.code().as_str()),
            e.severity_level().as_str(),
            text(e.message())
        );
        if let Some(recovery) = e.recovery() {
            xml += &format!("<recovery>{}</recovery>\n", text(recovery));
        }
        if !e.available_actions().is_empty() {
            xml += "<available_actions>\n";
            for action in e.available_actions() {
                xml += &format!("  <action>{}</action>\n", text(action));
            }
            xml += "</available_actions>\n";
        }
        if !e.details().is_empty() {
            xml += "<details>\n";
            for (key, value) in e.details() {
                xml += &format!("  <detail key=\"{}\">{}</detail>\n", attr(key), text(value));
            }
            xml += "</details>\n";
        }
        if let Some(secs) = e.retry_after_secs() {
            xml += &format!("<retry_after>{secs} seconds</retry_after>\n");
        }
        xml + "</tool_error>"
    }

    #[test]
    fn severity_literals_match_the_wire_strings() {
        for severity in [Severity::Warning, Severity::Error, Severity::Critical] {
            let xml = ToolError::not_found("m").severity(severity).to_xml();
            let want = format!("severity=\"{}\">\n<message>m</message>", severity.as_str());
            assert!(xml.contains(&want), "{xml}");
        }
    }

    #[test]
    fn canonical_open_tags_match_the_wire_strings() {
        for code in ErrorCode::CANONICAL {
            let mut out = String::new();
            assert!(code.push_open_tag(|tag| out.push_str(tag)));
            assert_eq!(out, format!("<tool_error code=\"{}", code.as_str()));
        }
        let mut pushed = false;
        assert!(!ErrorCode::from("ALREADY_PAID").push_open_tag(|_| pushed = true));
        assert!(!pushed);
    }

    #[test]
    fn canonical_codes_need_no_escaping() {
        // `write_sections` copies canonical codes without measuring or escaping them.
        for code in ErrorCode::CANONICAL {
            let wire = code.as_str();
            assert!(
                wire.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{wire}"
            );
        }
    }

    /// `to_xml` equals the reference, is sized exactly, and `write_xml` appends the same bytes.
    fn renders_like_the_reference(e: &ToolError) -> Result<(), TestCaseError> {
        let xml = e.to_xml();
        prop_assert_eq!(&xml, &reference_xml(e));
        prop_assert_eq!(xml.len(), xml.capacity());
        let mut appended = String::from("prefix");
        e.write_xml(&mut appended);
        prop_assert_eq!(&appended["prefix".len()..], xml.as_str());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn to_xml_equals_the_reference_rendering(
            code in prop_oneof![
                prop::sample::select(ErrorCode::CANONICAL.to_vec()),
                "[A-Z_<>&\"'\u{0}\u{FFFF}\t]{0,12}".prop_map(ErrorCode::from),
            ],
            severity in prop::sample::select(vec![Severity::Warning, Severity::Error, Severity::Critical]),
            message in ".{0,40}|[a-z <>&\"'\n\u{1}\u{FFFE}\u{FFFF}\u{FFFD}]{0,40}",
            recovery in ".{0,40}|[a-z <>&\"'\r\u{1F}\u{FFFF}]{0,40}",
            actions in prop::collection::vec("[a-z_.<&]{0,24}", 0..4),
            details in prop::collection::vec(("[a-zA-Z<>&\"']{0,16}", "[a-z0-9_<>&\"'\u{0}]{0,20}"), 0..4),
            retry in prop_oneof![Just(0u64), any::<u64>()],
        ) {
            let e = ToolError::new(code, message)
                .severity(severity)
                .suggest(recovery)
                .actions(actions)
                .with_details(details)
                .retry_after(retry);
            renders_like_the_reference(&e)?;
        }

        /// The one-pass writer sizes the buffer for the strings as they are and grows it at the
        /// first one that needs escaping: a full envelope whose first string (the custom code),
        /// middle strings, last string (the last detail value) or several of them need
        /// escaping, at any position, must still equal the reference and be sized exactly.
        #[test]
        fn escaping_any_string_keeps_the_envelope_exact(
            dirty in prop::collection::vec(any::<bool>(), 9),
            special in prop::sample::select(vec!["&", "<", ">", "\"", "'", "\u{1}", "\u{FFFF}", "\n", "\t"]),
            at in 0usize..48,
            severity in prop::sample::select(vec![Severity::Warning, Severity::Error, Severity::Critical]),
            retry in prop_oneof![Just(0u64), 1u64..200, any::<u64>()],
        ) {
            let mut strings = [
                "ALREADY_PAID",
                "No invoice with that ID",
                "List invoices first, then retry with a real ID",
                "billing.list_invoices",
                "billing.get_invoice",
                "requestedId",
                "inv_2026_9999",
                "customer",
                "cus_42",
            ]
            .map(str::to_owned);
            for (string, dirty) in strings.iter_mut().zip(&dirty) {
                if *dirty {
                    string.insert_str(at.min(string.len()), special);
                }
            }
            let [code, message, recovery, action1, action2, key1, value1, key2, value2] = strings;
            let e = ToolError::new(code, message)
                .severity(severity)
                .suggest(recovery)
                .actions([action1, action2])
                .detail(key1, value1)
                .detail(key2, value2)
                .retry_after(retry);
            renders_like_the_reference(&e)?;
        }
    }
}
