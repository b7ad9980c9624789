//! Input schemas compile once at startup: an invalid schema or an external `$ref` is an error
//! then, never on a call, and a compiled validator is shared across threads.

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use serde_json::json;

#[test]
fn invalid_schemas_fail_at_startup() {
    let err = ArgumentValidator::new("billing.charge", &json!({"type": 12})).unwrap_err();
    assert_eq!(err.action(), "billing.charge");
    assert!(
        err.to_string()
            .starts_with("invalid input schema for action `billing.charge`: "),
        "{err}"
    );
    // External references are never fetched.
    assert!(ArgumentValidator::new("t", &json!({"$ref": "https://example.com/s.json"})).is_err());
}

#[test]
fn validators_are_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ArgumentValidator>();
    assert_send_sync::<ValidationError>();
}
