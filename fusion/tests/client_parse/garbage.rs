//! Garbage gets a clear error with its byte offset, never a panic, and no entity expansion.

use fusion::client::{ParseErrorKind, parse_envelope};

#[test]
fn garbage_gets_a_clear_error_with_its_position() {
    let cases: [(&str, &str, usize); 12] = [
        (
            "",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "Internal server error",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "<tool_errors>x</tool_errors>",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "<tool_error><message>m</message></tool_error>",
            "<tool_error> has no `code` attribute at byte 12",
            12,
        ),
        (
            "<tool_error code=\"X\" severity=\"fatal\"></tool_error>",
            "unknown severity `fatal`: expected warning, error or critical at byte 38",
            38,
        ),
        (
            "<tool_error code=\"X\"><message>m</message>",
            "the envelope ends early: expected </tool_error> at byte 41",
            41,
        ),
        (
            "<tool_error code=\"X\"><message>a <b>bold</b></message></tool_error>",
            "unexpected element <b>: expected text or </message> at byte 35",
            35,
        ),
        (
            "<tool_error code=\"X\">stray<message>m</message></tool_error>",
            "unexpected text \"stray\": expected an element or </tool_error> at byte 26",
            26,
        ),
        (
            "<tool_error code=\"X\"><retry_after>soon</retry_after></tool_error>",
            "<retry_after> reads `soon`: expected a whole number of seconds, like `30 seconds` at byte 52",
            52,
        ),
        (
            "<tool_error code=\"X\"><message>a</message><message>b</message></tool_error>",
            "<message> appears twice at byte 50",
            50,
        ),
        (
            "<tool_error code=\"X\"><details><detail>v</detail></details></tool_error>",
            "<detail> has no `key` attribute at byte 38",
            38,
        ),
        (
            "<validation_error><field name=\"a\">x</field></validation_error>",
            "<validation_error> has no `action` attribute at byte 18",
            18,
        ),
    ];
    for (input, message, offset) in cases {
        let err = parse_envelope(input).expect_err(input);
        assert_eq!(err.to_string(), message, "{input:?}");
        assert_eq!(err.offset(), offset, "{input:?}");
    }
}

#[test]
fn malformed_xml_is_reported_as_such() {
    for input in [
        "<tool_error code=\"X\"><message>m</recovery></tool_error>",
        "<tool_error code=\"X\"><message>&nbsp;</message></tool_error>",
        "<tool_error code=\"X\"><message>a & b</message></tool_error>",
        "<tool_error code=X><message>m</message></tool_error>",
        "<tool_error code=\"X\" code=\"Y\"></tool_error>",
        "<tool_error code=\"X\"><message>&#0;</message></tool_error>",
        "<tool_error code=\"X\"",
    ] {
        let err = parse_envelope(input).expect_err(input);
        assert!(
            matches!(
                err.kind(),
                ParseErrorKind::Xml(_) | ParseErrorKind::UnexpectedEof { .. }
            ),
            "{input:?}: {err}"
        );
        assert!(err.offset() <= input.len(), "{input:?}: {err}");
    }
}

#[test]
fn declared_entities_are_never_expanded() {
    let bomb = "<!DOCTYPE t [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>\
                <tool_error code=\"X\"><message>&b;</message></tool_error>";
    let err = parse_envelope(bomb).unwrap_err();
    assert!(err.to_string().contains("unknown entity `&b;`"), "{err}");
}
