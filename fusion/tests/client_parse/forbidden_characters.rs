//! Characters XML 1.0 forbids, read from another server's envelope: kept as sent, written as
//! U+FFFD when rendered again (inputs the `parse_envelope` fuzz target found).

use super::{parse_tool_error, parse_validation};

/// Found by the `parse_envelope` fuzz target (`fuzz/`): an envelope from another server holding
/// characters XML 1.0 forbids (here NUL in the code) is read as sent, and re-rendering writes
/// them as U+FFFD, as for any value. The re-rendered envelope is then
/// a fixed point: it parses back to the same value and the same bytes.
#[test]
fn forbidden_characters_read_from_an_envelope_are_replaced_when_rendered_again() {
    let input = "<tool_error code=\"RATE_LIM\\\0\0\0\" sevezity=\"error\">\n<message>Slow down</message>\n</tool_error>";
    let first = parse_tool_error(input);
    assert_eq!(first.code().as_str(), "RATE_LIM\\\0\0\0");
    let rendered = first.to_xml();
    assert_eq!(
        rendered,
        "<tool_error code=\"RATE_LIM\\\u{FFFD}\u{FFFD}\u{FFFD}\" severity=\"error\">\n<message>Slow down</message>\n</tool_error>"
    );
    let second = parse_tool_error(&rendered);
    assert_eq!(second.code().as_str(), "RATE_LIM\\\u{FFFD}\u{FFFD}\u{FFFD}");
    assert_eq!(second.to_xml(), rendered);
    assert_eq!(parse_tool_error(&second.to_xml()), second);
}

/// Found by the same fuzz target: a character reference to a forbidden character (`&#024;`,
/// U+0018) is decoded as sent, and written as U+FFFD when rendered again.
#[test]
fn forbidden_character_references_are_replaced_when_rendered_again() {
    let input = "<validation_error action=\"billing.charge\">\n<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge\">a&#024;b</delta>\n</contract_awareness>\n</validation_error>";
    let first = parse_validation(input);
    assert_eq!(first.contract_awareness()[0].text, "a\u{18}b");
    let rendered = first.to_xml();
    assert!(rendered.contains(">a\u{FFFD}b</delta>"), "{rendered}");
    let second = parse_validation(&rendered);
    assert_eq!(second.contract_awareness()[0].text, "a\u{FFFD}b");
    assert_eq!(second.to_xml(), rendered);
}
