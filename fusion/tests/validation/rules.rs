//! One exact line per `validator` rule, custom rules and messages, struct-level rules, and the
//! JSON names of renamed fields.

use std::borrow::Cow;

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use validator::Validate;

use crate::fixtures::{
    Address, Signup, assert_line_shapes, lines, one, signup_with, valid_signup, validator_for,
};

#[test]
fn rule_email() {
    assert_eq!(
        signup_with("email", json!("not-an-email")),
        one(
            "email",
            "Invalid email format. You sent: 'not-an-email'. Expected a valid email address."
        )
    );
}

#[test]
fn rule_url() {
    assert_eq!(
        signup_with("website", json!("example")),
        one(
            "website",
            "Invalid URL format. You sent: 'example'. Expected a valid URL such as 'https://example.com/path'."
        )
    );
}

#[test]
fn rule_length_min_max_and_equal() {
    assert_eq!(
        signup_with("username", json!("al")),
        one(
            "username",
            "Too short. You sent: 'al'. Expected between 3 and 8 characters."
        )
    );
    assert_eq!(
        signup_with("username", json!("annabelle")),
        one(
            "username",
            "Too long. You sent: 'annabelle'. Expected between 3 and 8 characters."
        )
    );
    assert_eq!(
        signup_with("pin", json!("12345")),
        one(
            "pin",
            "Wrong length. You sent: '12345'. Expected exactly 4 characters."
        )
    );
    assert_eq!(
        signup_with("tags", json!(["a", "b", "c"])),
        one(
            "tags",
            "Too many items. You sent: array(3). Expected at most 2 items."
        )
    );
}

#[test]
fn rule_range_min_max_and_exclusive() {
    assert_eq!(
        signup_with("age", json!(17)),
        one(
            "age",
            "Number too small. You sent: 17. Expected a number from 18 to 130."
        )
    );
    assert_eq!(
        signup_with("age", json!(131)),
        one(
            "age",
            "Number too large. You sent: 131. Expected a number from 18 to 130."
        )
    );
    assert_eq!(
        signup_with("ratio", json!(0.0)),
        one(
            "ratio",
            "Number too small. You sent: 0.0. Expected a number > 0.0 and < 1.0."
        )
    );
    assert_eq!(
        signup_with("ratio", json!(1.0)),
        one(
            "ratio",
            "Number too large. You sent: 1.0. Expected a number > 0.0 and < 1.0."
        )
    );
}

#[test]
fn rule_contains_and_does_not_contain() {
    assert_eq!(
        signup_with("handle", json!("ann")),
        one(
            "handle",
            "Missing required text. You sent: 'ann'. Expected text containing '@'."
        )
    );
    assert_eq!(
        signup_with("display_name", json!("superadmin")),
        one(
            "display_name",
            "Contains forbidden text. You sent: 'superadmin'. Expected text without 'admin'."
        )
    );
}

#[test]
fn rule_must_match_names_the_other_field() {
    assert_eq!(
        signup_with("password_confirmation", json!("correct horse!")),
        one(
            "password_confirmation",
            "Does not match the other field. You sent: 'correct horse!'. Expected the same value as 'password'."
        )
    );
}

#[test]
fn rule_non_control_character() {
    assert_eq!(
        signup_with("note", json!("bell\u{7}")),
        one(
            "note",
            "Contains control characters. You sent: 'bell\u{7}'. Expected text without control characters."
        )
    );
}

#[test]
fn rule_required() {
    let mut args = valid_signup();
    args.as_object_mut().unwrap().remove("referrer");
    let err = validator_for::<Signup>("s")
        .parse_validated::<Signup>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "referrer",
            "Missing required field. You sent: (missing). Expected a string."
        )]
    );
}

#[test]
fn rule_custom_with_params_and_with_message() {
    assert_eq!(
        signup_with("day", json!("sunday")),
        one(
            "day",
            "Rejected by the 'no_weekend' rule. You sent: 'sunday'. Expected a value the 'no_weekend' rule accepts (allowed: 'monday to friday')."
        )
    );
    assert_eq!(
        signup_with("count", json!(3)),
        one(
            "count",
            "Must be an even number. You sent: 3. Expected a value the 'even' rule accepts."
        )
    );
}

#[test]
fn rule_message_replaces_the_problem_text() {
    assert_eq!(
        signup_with("contact", json!("nobody")),
        one(
            "contact",
            "The billing contact needs a real mailbox. You sent: 'nobody'. Expected a valid email address."
        )
    );
}

fn failure(code: &'static str, value: &str) -> validator::ValidationError {
    let mut failure = validator::ValidationError::new(code);
    failure.add_param(Cow::from("value"), &value);
    failure
}

#[test]
fn rule_regex_and_credit_card_from_hand_built_failures() {
    let mut errors = validator::ValidationErrors::new();
    errors.add("slug", failure("regex", "Bad Slug"));
    errors.add("card", failure("credit_card", "4111"));
    let args = json!({"slug": "Bad Slug", "card": "4111"});
    let err = ValidationError::from_validator_errors("shop.pay", &errors, &args);
    assert_eq!(
        lines(&err),
        [
            (
                "card",
                "Invalid credit card number. You sent: '4111'. Expected a valid credit card number."
            ),
            (
                "slug",
                "Does not match the required pattern. You sent: 'Bad Slug'. Expected text in the required format."
            ),
        ]
    );
    // With a schema, the pattern is named.
    let schema =
        json!({"properties": {"slug": {"type": "string", "pattern": "^[a-z-]+$"}, "card": {}}});
    let err = ArgumentValidator::new("shop.pay", &schema)
        .unwrap()
        .rule_errors(&errors, &args);
    assert_eq!(
        err.problems()[1].line(),
        "Does not match the required pattern. You sent: 'Bad Slug'. Expected text matching the pattern '^[a-z-]+$'."
    );
}

#[test]
fn pattern_ending_in_a_period_still_gets_the_closing_period() {
    let schema = json!({"type": "object", "properties": {"v": {"type": "string", "pattern": "^v[0-9]+\\."}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&json!({"v": "x"}));
    assert_eq!(
        lines(&err),
        [(
            "v",
            "Does not match the required pattern. You sent: 'x'. Expected text matching the pattern '^v[0-9]+\\.'."
        )]
    );
    assert_line_shapes(&err);

    // The same through a `validator` regex failure worded with the schema's pattern.
    let mut errors = validator::ValidationErrors::new();
    let mut failure = validator::ValidationError::new("regex");
    failure.add_param(Cow::from("value"), &"x");
    errors.add("v", failure);
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .rule_errors(&errors, &json!({"v": "x"}));
    assert_eq!(
        lines(&err),
        [(
            "v",
            "Does not match the required pattern. You sent: 'x'. Expected text matching the pattern '^v[0-9]+\\.'."
        )]
    );
}

#[test]
fn struct_level_rule_is_reported_at_the_struct() {
    let mut errors = validator::ValidationErrors::new();
    errors.add(
        "__all__",
        validator::ValidationError::new("dates_in_order")
            .with_message(Cow::from("End must be after start")),
    );
    let args = json!({"start": 2, "end": 1});
    let err = ValidationError::from_validator_errors("cal.book", &errors, &args);
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "End must be after start. You sent: {\"end\":1,\"start\":2}. Expected a value the 'dates_in_order' rule accepts."
        )]
    );
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(rename_all = "camelCase")]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Customer {
    #[validate(email)]
    contact_email: String,
    #[validate(nested)]
    home_address: Address,
}

#[test]
fn rust_field_names_map_to_camel_case_json_names() {
    let args = json!({"contactEmail": "nope", "homeAddress": {"zip": "1", "city": "Rome"}});
    let err = validator_for::<Customer>("crm.add")
        .parse_validated::<Customer>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "contactEmail",
                "Invalid email format. You sent: 'nope'. Expected a valid email address."
            ),
            (
                "homeAddress.zip",
                "Too short. You sent: '1'. Expected between 5 and 10 characters."
            ),
        ]
    );
}

#[test]
fn a_long_struct_level_echo_is_cut_between_members() {
    let mut errors = validator::ValidationErrors::new();
    errors.add(
        "__all__",
        validator::ValidationError::new("emails_match")
            .with_message(Cow::from("The emails differ")),
    );
    let args = json!({"email": "a@b.example", "note": "n".repeat(40), "other": "c@d.example"});
    let err = ValidationError::from_validator_errors("signup", &errors, &args);
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "The emails differ. You sent: {\"email\":\"a@b.example\",... 2 more fields}. Expected a value the 'emails_match' rule accepts."
        )]
    );
}
