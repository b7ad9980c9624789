//! Secret fields, marked by path or `writeOnly`, show `(redacted)` wherever their value would
//! appear: their own line, an echoed object, an enum's list of values.

use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use validator::Validate;

use crate::fixtures::{lines, validator_for};

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Card {
    #[validate(length(equal = 3))]
    cvv: String,
    holder: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Login {
    #[validate(length(min = 3))]
    user: String,
    #[validate(length(min = 12))]
    password: String,
    #[validate(must_match(other = "password"))]
    password_again: String,
    #[schemars(extend("writeOnly" = true))]
    #[validate(length(equal = 6))]
    otp: String,
    #[validate(nested)]
    card: Card,
}

#[test]
fn secret_fields_are_redacted_everywhere() {
    let logins = validator_for::<Login>("auth.login")
        .secret("password")
        .secret("card.cvv");
    let args = json!({
        "user": "an",
        "password": "hunter2-secret",
        "password_again": "hunter2-secreT",
        "pasword": "hunter2-secret",
        "otp": "8675309",
        "card": {"cvv": "9876", "holder": "Ann"}
    });
    let err = logins.parse_validated::<Login>(&args).unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "card.cvv",
                "Wrong length. You sent: (redacted). Expected exactly 3 characters."
            ),
            (
                "otp",
                "Wrong length. You sent: (redacted). Expected exactly 6 characters."
            ),
            (
                "password_again",
                "Does not match the other field. You sent: (redacted). Expected the same value as 'password'."
            ),
            (
                "pasword",
                "Unknown field. You sent: (redacted). Expected one of the known fields: card, otp, password, password_again, user (did you mean 'password'?)."
            ),
            (
                "user",
                "Too short. You sent: 'an'. Expected at least 3 characters."
            ),
        ]
    );
    let xml = err.to_xml();
    for secret in ["hunter2", "8675309", "9876", "secreT"] {
        assert!(!xml.contains(secret), "{secret} leaked: {xml}");
    }
}

#[test]
fn secrets_inside_a_sent_object_are_redacted() {
    let schema = json!({"properties": {"card": {
        "type": "object",
        "properties": {"cvv": {"type": "string", "writeOnly": true}, "holder": {"type": "string"}},
        "minProperties": 3
    }}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&json!({"card": {"cvv": "super-secret", "holder": "Ann"}}));
    assert_eq!(
        lines(&err),
        [(
            "card",
            "Too few fields. You sent: {\"cvv\":\"(redacted)\",\"holder\":\"Ann\"}. Expected at least 3 fields."
        )]
    );
}

#[test]
fn secret_enum_values_are_not_listed() {
    let schema = json!({"properties": {"pin": {"enum": ["1234", "9999"]}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .secret("pin")
        .check(&json!({"pin": "12345"}));
    assert_eq!(
        lines(&err),
        [(
            "pin",
            "Value not allowed. You sent: (redacted). Expected one of the allowed values (not listed for a secret field)."
        )]
    );
    assert!(!err.to_xml().contains("1234"));
}

#[test]
fn secret_paths_match_any_index() {
    let schema = json!({"properties": {"cards": {"type": "array", "items": {"properties": {"cvv": {"maxLength": 3}}}}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .secret("cards[].cvv")
        .check(&json!({"cards": [{"cvv": "1"}, {"cvv": "12345"}]}));
    assert_eq!(
        lines(&err),
        [(
            "cards[1].cvv",
            "Too long. You sent: (redacted). Expected at most 3 characters."
        )]
    );
}
