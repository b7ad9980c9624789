//! `fusion::client::parse_envelope` on arbitrary bytes: no panic, and whatever parses
//! re-renders to an envelope that parses back to the same bytes (parsing is the
//! inverse of rendering), and to the same value unless the input held characters XML 1.0
//! forbids (the renderer writes those as U+FFFD; found by this target,
//! pinned in `fusion/tests/client_parse/forbidden_characters.rs`).
//!
//! Run: `cargo +nightly fuzz run parse_envelope corpus/parse_envelope -- -dict=xml.dict`
//! from `fuzz/`.

#![no_main]

use fusion::client::parse_envelope;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(first) = parse_envelope(input) else {
        return;
    };
    let rendered = first.to_xml();
    let second = match parse_envelope(&rendered) {
        Ok(second) => second,
        Err(err) => panic!("the re-rendered envelope does not parse: {err}\n{rendered}"),
    };
    assert_eq!(
        second.to_xml(),
        rendered,
        "re-rendering is not a fixed point"
    );
    // Forbidden characters, sent raw or as character references (`&#24;`), are read as sent
    // and rendered as U+FFFD: the value then differs, the bytes are a fixed point.
    if !input.chars().any(forbidden) && !input.contains("&#") {
        assert_eq!(
            second, first,
            "re-parsed differs\ninput: {input:?}\nrendered: {rendered:?}"
        );
    }
});

/// A character XML 1.0 forbids: C0 controls other than tab, LF and CR; U+FFFE; U+FFFF.
fn forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}
