//! The flags of parsed errors, and flags objects read strictly.

use fusion::client::Flags;
use fusion::{ErrorCategory, ToolError};
use serde_json::Value;

use super::parse_tool_error;

#[test]
fn flags_of_parsed_errors_follow_the_code() {
    let e = parse_tool_error(
        "<tool_error code=\"HANDOFF_CONNECTING\"><message>m</message></tool_error>",
    );
    let flags = Flags::from(&e);
    assert_eq!(flags.category, ErrorCategory::Transient);
    assert!(flags.retryable);
    let custom = parse_tool_error(
        "<tool_error code=\"ALREADY_PAID\" severity=\"warning\"><message>m</message></tool_error>",
    );
    let flags = Flags::from(&custom);
    assert_eq!(flags.category, ErrorCategory::Unknown);
    assert!(!flags.is_error);
}

#[test]
fn flags_objects_are_read_strictly_where_it_matters() {
    let full = ToolError::rate_limited("m", 12)
        .explanation("tenant acme")
        .flags();
    let flags = Flags::from_value(&full).unwrap();
    assert_eq!(flags.to_value(), full, "to_value is the inverse");
    assert_eq!(flags.explanation.as_deref(), Some("tenant acme"));

    // A category this client does not know is `unknown`: never retried.
    let mut other = full.clone();
    other["errorCategory"] = "quota".into();
    assert_eq!(
        Flags::from_value(&other).unwrap().category,
        ErrorCategory::Unknown
    );
    // A zero delay is no delay.
    let mut zero = full.clone();
    zero["retryAfterSeconds"] = 0.into();
    assert_eq!(Flags::from_value(&zero).unwrap().retry_after_secs, None);
    // Missing or mistyped required keys, or an unknown severity: not flags at all (the client
    // then derives them from the envelope).
    for key in [
        "isError",
        "errorCategory",
        "isRetryable",
        "code",
        "severity",
    ] {
        let mut missing = full.clone();
        missing.as_object_mut().unwrap().remove(key);
        assert_eq!(Flags::from_value(&missing), None, "without {key}");
        let mut mistyped = full.clone();
        mistyped[key] = Value::from(12.5);
        assert_eq!(Flags::from_value(&mistyped), None, "{key} mistyped");
    }
    let mut fatal = full;
    fatal["severity"] = "fatal".into();
    assert_eq!(Flags::from_value(&fatal), None);
    assert_eq!(Flags::from_value(&Value::Null), None);
}
