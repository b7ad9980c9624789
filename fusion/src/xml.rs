//! XML escaping for envelopes: the asymmetric text/attribute rules and the XML 1.0 character rule.
//!
//! SPEC section 1, rules 4 and 5. Element text escapes only `&` and `<` (so `Must be > 0` and
//! `"id"` stay readable for the model); attribute values escape all five special characters.
//! Characters XML 1.0 forbids (C0 controls other than tab, LF and CR; U+FFFE; U+FFFF) become
//! U+FFFD. Nothing else changes. Every function here has an exact-length twin so renderers can
//! size their buffer once.

/// Where a string is written, which decides what gets escaped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Context {
    /// Element content: `&` and `<`.
    Text,
    /// Attribute value in double quotes: `&`, `<`, `>`, `"` and `'`.
    Attr,
}

/// Byte classes: 0 = copied as-is, 1 = special in text and attributes, 2 = special in attributes
/// only, 3 = a forbidden C0 control, 4 = a lead byte of U+FFFE/U+FFFF (needs a closer look).
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        if b != b'\t' as usize && b != b'\n' as usize && b != b'\r' as usize {
            table[b] = 3;
        }
        b += 1;
    }
    table[b'&' as usize] = 1;
    table[b'<' as usize] = 1;
    table[b'>' as usize] = 2;
    table[b'"' as usize] = 2;
    table[b'\'' as usize] = 2;
    table[0xEF] = 4;
    table
};

const REPLACEMENT: &str = "\u{FFFD}";

/// The replacement for the special byte at `bytes[i]`, and how many input bytes it covers.
/// `None` when the byte is copied as-is in this context.
#[inline]
fn replacement(bytes: &[u8], i: usize, ctx: Context) -> Option<(&'static str, usize)> {
    match CLASS[bytes[i] as usize] {
        0 => None,
        1 | 2 if ctx == Context::Text && bytes[i] != b'&' && bytes[i] != b'<' => None,
        1 | 2 => Some((
            match bytes[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&apos;",
            },
            1,
        )),
        3 => Some((REPLACEMENT, 1)),
        // U+FFFE is EF BF BE and U+FFFF is EF BF BF in UTF-8.
        _ => match bytes.get(i + 1..i + 3) {
            Some([0xBF, 0xBE | 0xBF]) => Some((REPLACEMENT, 3)),
            _ => None,
        },
    }
}

/// Whether byte `b` needs a closer look (its class is not 0, or is 2 in text): in an attribute
/// value when `ATTR`, else in element text.
#[inline(always)]
fn needs_look<const ATTR: bool>(b: u8) -> bool {
    let text = (b < 0x20) | (b == b'&') | (b == b'<') | (b == 0xEF);
    text | (ATTR & ((b == b'>') | (b == b'"') | (b == b'\'')))
}

/// Whether a byte of a 16-byte block needs a closer look. A fixed-size block with no early
/// exit and no branch on the context is what the compiler turns into a few vector
/// instructions (no `unsafe` here).
#[inline(always)]
fn block_needs_look<const ATTR: bool>(block: &[u8; 16]) -> bool {
    block
        .iter()
        .fold(false, |found, &b| found | needs_look::<ATTR>(b))
}

/// [`block_needs_look`] for eight bytes.
#[inline(always)]
fn word_needs_look<const ATTR: bool>(word: &[u8; 8]) -> bool {
    word.iter()
        .fold(false, |found, &b| found | needs_look::<ATTR>(b))
}

/// [`is_plain`] for one context.
#[inline(always)]
fn is_plain_in<const ATTR: bool>(bytes: &[u8]) -> bool {
    let Some(last) = bytes.last_chunk::<16>() else {
        // Shorter than a block: the first and last eight bytes (overlapping), else bytewise.
        return match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
            (Some(first), Some(last)) => {
                !word_needs_look::<ATTR>(first) && !word_needs_look::<ATTR>(last)
            }
            _ => !bytes.iter().any(|&b| needs_look::<ATTR>(b)),
        };
    };
    // Whole blocks, then the last 16 bytes (overlapping the last whole block when the length
    // is not a multiple of 16).
    !bytes.chunks_exact(16).any(|block| {
        let block: &[u8; 16] = block.try_into().expect("chunks of 16 bytes");
        block_needs_look::<ATTR>(block)
    }) && !block_needs_look::<ATTR>(last)
}

/// Whether no byte of `bytes` needs a closer look in `ctx`: the common case. Checked in
/// 16-byte blocks, stopping at the first block with a special byte; strings shorter than a
/// block byte by byte.
#[inline]
fn is_plain(bytes: &[u8], ctx: Context) -> bool {
    match ctx {
        Context::Text => is_plain_in::<false>(bytes),
        Context::Attr => is_plain_in::<true>(bytes),
    }
}

/// Remembers which strings needed no escaping while an envelope is measured, so writing it
/// copies those without scanning them a second time. Strings are identified by the order in
/// which they are measured and written (the first 64; later ones are scanned again).
#[derive(Default)]
pub(crate) struct PlainMemo {
    plain: u64,
    measured: u32,
    written: u32,
}

impl PlainMemo {
    /// The escaped length of `s`, remembering whether it was plain.
    #[inline]
    pub(crate) fn measure(&mut self, s: &str, ctx: Context) -> usize {
        let plain = is_plain(s.as_bytes(), ctx);
        if plain && self.measured < 64 {
            self.plain |= 1 << self.measured;
        }
        self.measured += 1;
        if plain { s.len() } else { escaped_len(s, ctx) }
    }

    /// Appends `s` escaped for `ctx`; the strings must come in the order they were measured.
    #[inline]
    pub(crate) fn write(&mut self, out: &mut String, s: &str, ctx: Context) {
        let index = self.written;
        self.written += 1;
        if index < 64 && self.plain & (1 << index) != 0 {
            out.push_str(s);
        } else {
            push_escaped(out, s, ctx);
        }
    }
}

/// The length in bytes of `s` once escaped for `ctx`, byte by byte: [`PlainMemo`] takes the
/// fast path for plain strings before calling this.
pub(crate) fn escaped_len(s: &str, ctx: Context) -> usize {
    let bytes = s.as_bytes();
    let mut len = bytes.len();
    let mut i = 0;
    while i < bytes.len() {
        match replacement(bytes, i, ctx) {
            Some((rep, covered)) => {
                len = len + rep.len() - covered;
                i += covered;
            }
            None => i += 1,
        }
    }
    len
}

/// Appends `s` to `out`, escaped for `ctx`. Runs of ordinary bytes are copied in one piece;
/// [`PlainMemo`] copies plain strings without calling this.
pub(crate) fn push_escaped(out: &mut String, s: &str, ctx: Context) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match replacement(bytes, i, ctx) {
            Some((rep, covered)) => {
                // `i` is at a char boundary: special bytes are ASCII or UTF-8 lead bytes.
                out.push_str(&s[start..i]);
                out.push_str(rep);
                i += covered;
                start = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&s[start..]);
}

/// `s` escaped as element text, as a new string.
#[cfg(test)]
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(escaped_len(s, Context::Text));
    push_escaped(&mut out, s, Context::Text);
    out
}

/// `s` escaped as an attribute value, as a new string.
#[cfg(test)]
pub(crate) fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(escaped_len(s, Context::Attr));
    push_escaped(&mut out, s, Context::Attr);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_only_ampersand_and_less_than() {
        assert_eq!(
            escape_text(r#"a < b && c > d "q" 's'"#),
            r#"a &lt; b &amp;&amp; c > d "q" 's'"#
        );
    }

    #[test]
    fn attributes_escape_all_five() {
        assert_eq!(escape_attr(r#"A"B<C>&'"#), "A&quot;B&lt;C&gt;&amp;&apos;");
    }

    #[test]
    fn existing_entities_are_escaped_again() {
        assert_eq!(escape_text("&amp;"), "&amp;amp;");
    }

    #[test]
    fn forbidden_characters_become_replacement_char() {
        assert_eq!(
            escape_text("a\u{1}b\u{0}c\td\u{b}e\u{FFFF}z"),
            "a\u{FFFD}b\u{FFFD}c\td\u{FFFD}e\u{FFFD}z"
        );
        assert_eq!(escape_attr("\u{FFFE}\r\n"), "\u{FFFD}\r\n");
        // Other characters whose UTF-8 starts with 0xEF are left alone.
        assert_eq!(
            escape_text("\u{FFFD}\u{F000}\u{FFFC}"),
            "\u{FFFD}\u{F000}\u{FFFC}"
        );
    }

    #[test]
    fn special_bytes_are_found_at_every_position_of_a_word() {
        // Each special byte at each offset around the eight-byte words.
        for special in ["&", "<", "\u{1}", "\u{FFFF}", ">", "\"", "'"] {
            for offset in 0..20 {
                let s = format!("{}{special}{}", "a".repeat(offset), "b".repeat(9));
                let naive_text: String = s
                    .chars()
                    .map(|c| match c {
                        '&' => "&amp;".to_owned(),
                        '<' => "&lt;".to_owned(),
                        '\u{1}' | '\u{FFFF}' => "\u{FFFD}".to_owned(),
                        c => c.to_string(),
                    })
                    .collect();
                assert_eq!(escape_text(&s), naive_text, "{s:?}");
                assert_eq!(escaped_len(&s, Context::Text), naive_text.len());
                let attr = escape_attr(&s);
                assert!(
                    !attr.contains(['>', '"', '\'']) || special == "\u{FFFF}" || special == "\u{1}",
                    "{attr:?}"
                );
                assert_eq!(escaped_len(&s, Context::Attr), attr.len());
            }
        }
    }

    #[test]
    fn escaped_len_matches_output_length() {
        for s in [
            "",
            "plain",
            "<&>\"'",
            "\u{0}\u{FFFE}\u{FFFF}ok",
            "é—请🚫\u{EFFF}",
        ] {
            assert_eq!(escaped_len(s, Context::Text), escape_text(s).len(), "{s:?}");
            assert_eq!(escaped_len(s, Context::Attr), escape_attr(s).len(), "{s:?}");
        }
    }
}
