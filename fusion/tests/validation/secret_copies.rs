//! Copies of a secret value elsewhere: in a rule's param, pasted into an unknown field, or
//! sent in another member of an echoed object, a secret is hidden whole, never cut; redaction
//! never rewrites the framework's own words; `must_match` names the secret it confirms.

use std::borrow::Cow;

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use validator::Validate;

use crate::fixtures::{lines, validator_for};

/// A secret longer than 50 characters: cutting it would keep its first 47.
const LONG_SECRET: &str = "Zq7_live_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// No run of 8 characters of `secret` appears anywhere in the envelope.
fn assert_no_piece_of(err: &ValidationError, secret: &str) {
    let xml = err.to_xml();
    let chars: Vec<char> = secret.chars().collect();
    for window in chars.windows(8) {
        let piece: String = window.iter().collect();
        assert!(
            !xml.contains(&piece),
            "{piece:?} of the secret leaked: {xml}"
        );
    }
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Login {
    #[validate(length(min = 3))]
    user: String,
    password: String,
    #[validate(must_match(other = "password"))]
    password_again: String,
    confirm: String,
}

fn logins() -> ArgumentValidator {
    validator_for::<Login>("auth.login").secret("password")
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[validate(schema(function = "token_matches_label"))]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Token {
    token: String,
    label: String,
}

/// A struct-level rule that puts the secret itself into a param.
fn token_matches_label(t: &Token) -> Result<(), validator::ValidationError> {
    let mut failure = validator::ValidationError::new("token_label");
    failure.add_param(Cow::from("token"), &t.token);
    Err(failure)
}

#[test]
fn long_secret_in_a_rule_param_and_a_sent_object_is_redacted_whole() {
    let tokens = validator_for::<Token>("keys.rotate").secret("token");
    let err = tokens
        .parse_validated::<Token>(&json!({"token": LONG_SECRET, "label": "x"}))
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "Rejected by the 'token_label' rule. You sent: {\"label\":\"x\",\"token\":\"(redacted)\"}. Expected a value the 'token_label' rule accepts (token: (redacted))."
        )]
    );
    assert_no_piece_of(&err, LONG_SECRET);

    // A copy of the secret inside another member of an echoed object is redacted before the
    // object is cut.
    let err = tokens
        .parse_validated::<Token>(
            &json!({"token": LONG_SECRET, "label": format!("copy: {LONG_SECRET}")}),
        )
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "Rejected by the 'token_label' rule. You sent: {\"label\":\"(redacted)\",\"token\":\"(redacted)\"}. Expected a value the 'token_label' rule accepts (token: (redacted))."
        )]
    );
    assert_no_piece_of(&err, LONG_SECRET);
}

#[test]
fn long_secret_pasted_into_an_unknown_field_is_redacted_whole() {
    let args = json!({
        "user": "ann",
        "password": LONG_SECRET,
        "password_again": LONG_SECRET,
        "confirm": "x",
        "note": LONG_SECRET
    });
    let err = logins().parse_validated::<Login>(&args).unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "note",
            "Unknown field. You sent: (redacted). Expected one of the known fields: confirm, password, password_again, user."
        )]
    );
    assert_no_piece_of(&err, LONG_SECRET);
}

#[test]
fn secret_equal_to_a_word_of_the_line_leaves_the_wording_alone() {
    let required = logins()
        .parse_validated::<Login>(
            &json!({"user": "ann", "password": "required", "password_again": "required"}),
        )
        .unwrap_err();
    assert_eq!(
        lines(&required),
        [(
            "confirm",
            "Missing required field. You sent: (missing). Expected a string."
        )]
    );
    for password in ["Expected", "short", "Too short"] {
        let err = logins()
            .parse_validated::<Login>(&json!({
                "user": "an", "password": password, "password_again": password, "confirm": "x"
            }))
            .unwrap_err();
        assert_eq!(
            lines(&err),
            [(
                "user",
                "Too short. You sent: 'an'. Expected at least 3 characters."
            )],
            "{password}"
        );
    }
}

#[test]
fn must_match_prefers_the_secret_field_and_hides_the_near_copy() {
    let args = json!({
        "user": "ann",
        "password": "Tr0ub4dor&3",
        "password_again": "Tr0ub4dor&4",
        "confirm": "Tr0ub4dor&3"
    });
    let err = logins().parse_validated::<Login>(&args).unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "password_again",
            "Does not match the other field. You sent: (redacted). Expected the same value as 'password'."
        )]
    );
    assert!(!err.to_xml().contains("Tr0ub4dor"), "{err}");

    // The same value pasted into an unknown `hint` does not win over the secret either.
    let args = json!({
        "user": "ann",
        "password": "hunter2-secret",
        "password_again": "hunter2-secreT",
        "confirm": "x",
        "hint": "hunter2-secret"
    });
    let err = logins().parse_validated::<Login>(&args).unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "hint",
                "Unknown field. You sent: (redacted). Expected one of the known fields: confirm, password, password_again, user."
            ),
            (
                "password_again",
                "Does not match the other field. You sent: (redacted). Expected the same value as 'password'."
            ),
        ]
    );
    assert!(!err.to_xml().contains("hunter2"), "{err}");
}

/// A hundred thousand cards, each with a secret of its own and a field of the wrong type: each
/// line's value is searched for every secret value in one pass over the value, not once per
/// secret value (ten billion substring searches would take many minutes).
#[test]
fn a_hundred_thousand_secret_values_are_each_hidden_without_a_search_per_pair() {
    let schema = json!({"properties": {"cards": {"type": "array", "items": {
        "type": "object",
        "properties": {"cvv": {"type": "string"}, "n": {"type": "integer"}}
    }}}});
    let validator = ArgumentValidator::new("pay.batch", &schema)
        .unwrap()
        .secret("cards[].cvv");
    let mut cards: Vec<serde_json::Value> = (0..100_000)
        .map(|i| json!({"cvv": format!("c{i:06}"), "n": format!("n{i}")}))
        .collect();
    // The last card's secret pasted into the fourth card's field.
    cards[3]["n"] = json!("pasted c099999 here");
    // A secret shorter than 4 characters is hidden where a value equals it, not inside one.
    cards[5]["cvv"] = json!("12");
    cards[6]["n"] = json!("12");
    cards[7]["n"] = json!("a12b");
    let err = validator.check(&json!({"cards": cards}));
    let found = lines(&err);
    assert_eq!(found.len(), 51);
    let line = |sent: &str| format!("Wrong type. You sent: {sent}. Expected an integer.");
    assert_eq!(found[1], ("cards[0].n", line("'n0'").as_str()));
    assert_eq!(found[4], ("cards[3].n", line("(redacted)").as_str()));
    assert_eq!(found[7], ("cards[6].n", line("(redacted)").as_str()));
    assert_eq!(found[8], ("cards[7].n", line("'a12b'").as_str()));
    assert!(!err.to_xml().contains("c099999"), "{err}");
}
