//! The escaping and the scan against references spelled out character by character.

use proptest::prelude::*;

use super::scan::is_plain_in;
use super::*;

/// Whether byte `b` needs a closer look in `ctx`, spelled out byte by byte: what the vector
/// scan must compute (all C0 controls, special characters, the 0xEF lead byte).
fn reference_needs_look(b: u8, ctx: Context) -> bool {
    b < 0x20
        || b == b'&'
        || b == b'<'
        || b == 0xEF
        || (ctx == Context::Attr && (b == b'>' || b == b'"' || b == b'\''))
}

fn reference_is_plain(s: &str, ctx: Context) -> bool {
    !s.bytes().any(|b| reference_needs_look(b, ctx))
}

/// Characters that exercise every branch: all five specials, C0 controls (forbidden and
/// allowed), U+FFFE and U+FFFF, other characters whose UTF-8 starts with 0xEF, the filler
/// byte used for padding, and multi-byte characters of every width.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            '&', '<', '>', '"', '\'', '\u{0}', '\u{1}', '\u{1F}', '\t', '\n', '\r', ' ', '\u{7F}',
            '\u{FFFE}', '\u{FFFF}', '\u{FFFD}', '\u{F000}', '\u{EFFF}', 'é', '—', '🚫',
        ]),
        any::<char>(),
        prop::char::range('a', 'z'),
    ]
}

/// Strings of 0 to 64 characters, mostly plain, with tricky characters anywhere.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(tricky_char(), 0..=64),
        // Mostly plain: a single tricky character at any position of a longer run.
        (0usize..=64, tricky_char(), 0usize..=64).prop_map(|(before, c, after)| {
            vec!['a'; before]
                .into_iter()
                .chain([c])
                .chain(vec!['z'; after])
                .collect()
        }),
    ]
    .prop_map(|chars| chars.into_iter().collect())
}

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

#[test]
fn the_scan_finds_a_special_byte_at_every_position_of_every_length() {
    // Every length up to four blocks, so each of the short cases (1 to 3, 4 to 7, 8 to 15
    // bytes), the two-block case and the loop with its overlapping last block is covered,
    // with the special byte at every position, including both sides of each block
    // boundary.
    let specials: [(u8, bool); 11] = [
        (b'\t', true),
        (b'\n', true),
        (b'\r', true),
        (b'&', true),
        (b'<', true),
        (0x00, true),
        (0x1F, true),
        (0xEF, true),
        (b'>', false),
        (b'"', false),
        (b'\'', false),
    ];
    for len in 0..=64 {
        let plain = vec![b'a'; len];
        assert!(
            is_plain_in::<false>(&plain) && is_plain_in::<true>(&plain),
            "{len}"
        );
        for at in 0..len {
            for (special, in_text) in specials {
                let mut bytes = plain.clone();
                bytes[at] = special;
                assert_eq!(
                    is_plain_in::<false>(&bytes),
                    !in_text,
                    "{len} {at} {special:#x}"
                );
                assert!(!is_plain_in::<true>(&bytes), "{len} {at} {special:#x}");
            }
            // Bytes that need no look in either context stay plain wherever they are.
            for ordinary in [b' ', b'%', b'=', b'?', 0x7F, 0xEE, 0xF0, 0xFF] {
                let mut bytes = plain.clone();
                bytes[at] = ordinary;
                assert!(is_plain_in::<false>(&bytes), "{len} {at} {ordinary:#x}");
                assert!(is_plain_in::<true>(&bytes), "{len} {at} {ordinary:#x}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn the_scan_agrees_with_a_byte_by_byte_check(s in tricky_string()) {
        for ctx in [Context::Text, Context::Attr] {
            prop_assert_eq!(is_plain(s.as_bytes(), ctx), reference_is_plain(&s, ctx), "{:?}", ctx);
        }
    }

    #[test]
    fn measuring_and_writing_agree_with_the_reference_escaper(s in tricky_string()) {
        for ctx in [Context::Text, Context::Attr] {
            let want = reference_escape(&s, ctx);
            prop_assert_eq!(measured_len(&s, ctx), want.len());
            // Measured exactly first, then written without growing.
            let mut all_plain = true;
            let len = measure(&mut all_plain)(&s, ctx);
            prop_assert_eq!(len, want.len());
            prop_assert_eq!(all_plain, reference_is_plain(&s, ctx));
            // With a prefix already there, as `write_xml` into a reused buffer.
            let mut out = String::with_capacity(2 + len);
            out.push_str("<>");
            let mut writer = Writer::presized(out, all_plain);
            writer.push(&s, ctx);
            let out = writer.finish();
            prop_assert_eq!(&out[2..], &want);
            prop_assert_eq!(out.capacity(), out.len());
        }
    }

    #[test]
    fn one_scan_over_several_strings_agrees_with_each_checked_alone(
        strings in prop::collection::vec((tricky_string(), any::<bool>()), 0..=5),
    ) {
        let mut scan = Scan::new();
        for (s, attr) in &strings {
            scan.add(s, if *attr { Context::Attr } else { Context::Text });
        }
        let want = strings.iter().all(|(s, attr)| {
            reference_is_plain(s, if *attr { Context::Attr } else { Context::Text })
        });
        prop_assert_eq!(scan.all_plain(), want);
    }
}
