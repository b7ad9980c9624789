//! XML escaping for envelopes: the asymmetric text/attribute rules and the XML 1.0 character
//! rule.
//!
//! Element text escapes `&` and `<`, and the `>` of `]]>` (which XML 1.0, section 2.4, forbids
//! raw in character data); every other `>` and the quotes stay readable for the model
//! (`Must be > 0`, `"id"`). Attribute values escape all five special characters. `&` is
//! escaped like any other, so an entity in the input is escaped again (`&amp;` becomes
//! `&amp;amp;`). Characters XML 1.0 forbids (section 2.2, `Char`: C0 controls other than tab,
//! LF and CR; U+FFFE; U+FFFF) become U+FFFD. Nothing else changes, and there is no CDATA.

/// Where a string is written, which decides what gets escaped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Context {
    /// Element content: `&`, `<`, and the `>` of `]]>`.
    Text,
    /// Attribute value in double quotes: `&`, `<`, `>`, `"` and `'`.
    Attr,
}

/// Whether no byte of `bytes` needs a look in text (`ATTR` false) or in an attribute value.
/// Bitwise `|` and no early exit: no branch, so the compiler vectorizes the loop.
fn is_plain<const ATTR: bool>(bytes: &[u8]) -> bool {
    let mut found = false;
    for &b in bytes {
        found |= (b < 0x20) | (b == b'&') | (b == b'<') | (b == b'>') | (b == 0xEF);
        if ATTR {
            found |= (b == b'"') | (b == b'\'');
        }
    }
    !found
}

/// Appends `s` to `out`, escaped for `ctx`. Runs of ordinary bytes are copied in one piece.
pub(crate) fn push_escaped(out: &mut String, s: &str, ctx: Context) {
    let bytes = s.as_bytes();
    let attr = ctx == Context::Attr;
    // Most strings need nothing: copied whole.
    let plain = if attr {
        is_plain::<true>(bytes)
    } else {
        is_plain::<false>(bytes)
    };
    if plain {
        out.push_str(s);
        return;
    }
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let (replacement, width) = match bytes[i] {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' if attr || bytes[..i].ends_with(b"]]") => ("&gt;", 1),
            b'"' if attr => ("&quot;", 1),
            b'\'' if attr => ("&apos;", 1),
            c @ 0..=0x1F if !matches!(c, b'\t' | b'\n' | b'\r') => ("\u{FFFD}", 1),
            // U+FFFE is EF BF BE and U+FFFF is EF BF BF in UTF-8.
            0xEF if matches!(bytes.get(i + 1..i + 3), Some([0xBF, 0xBE | 0xBF])) => ("\u{FFFD}", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        // `i` is at a char boundary: every byte matched above is ASCII or a UTF-8 lead byte.
        out.push_str(&s[start..i]);
        out.push_str(replacement);
        i += width;
        start = i;
    }
    out.push_str(&s[start..]);
}

/// Appends `s` as element text.
pub(crate) fn push_text(out: &mut String, s: &str) {
    push_escaped(out, s, Context::Text);
}

/// Appends `s` as an attribute value.
pub(crate) fn push_attr(out: &mut String, s: &str) {
    push_escaped(out, s, Context::Attr);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn escaped(s: &str, ctx: Context) -> String {
        let mut out = String::new();
        push_escaped(&mut out, s, ctx);
        out
    }

    /// The rules spelled out character by character.
    fn reference(s: &str, ctx: Context) -> String {
        let attr = ctx == Context::Attr;
        let mut out = String::new();
        for (i, c) in s.char_indices() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' if attr || s[..i].ends_with("]]") => out.push_str("&gt;"),
                '"' if attr => out.push_str("&quot;"),
                '\'' if attr => out.push_str("&apos;"),
                '\t' | '\n' | '\r' => out.push(c),
                '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn escaping_examples() {
        let cases = [
            // Text: `&`, `<` and the end of CDATA.
            (
                r#"a < b && c > d "q" 's' ]]> ]>"#,
                Context::Text,
                r#"a &lt; b &amp;&amp; c > d "q" 's' ]]&gt; ]>"#,
            ),
            (r#"<&>"'"#, Context::Attr, "&lt;&amp;&gt;&quot;&apos;"),
            // An existing entity is escaped again.
            ("&amp;", Context::Text, "&amp;amp;"),
            // Forbidden characters become the replacement character.
            (
                "a\u{0}b\u{1F}c\td\ne\rf\u{FFFE}g\u{FFFF}h\u{F000}",
                Context::Text,
                "a\u{FFFD}b\u{FFFD}c\td\ne\rf\u{FFFD}g\u{FFFD}h\u{F000}",
            ),
        ];
        for (s, ctx, expected) in cases {
            assert_eq!(escaped(s, ctx), expected, "{s:?} as {ctx:?}");
        }
    }

    fn tricky_char() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec![
                '&', '<', '>', ']', '"', '\'', '\u{0}', '\u{1F}', '\t', '\n', '\r', '\u{FFFE}',
                '\u{FFFF}', '\u{FFFD}', '\u{F000}', 'é', '🚫',
            ]),
            any::<char>(),
        ]
    }

    proptest! {
        #[test]
        fn escaping_agrees_with_the_rules_spelled_out(
            chars in prop::collection::vec(tricky_char(), 0..48),
        ) {
            let s: String = chars.into_iter().collect();
            for ctx in [Context::Text, Context::Attr] {
                prop_assert_eq!(escaped(&s, ctx), reference(&s, ctx));
            }
        }
    }
}
