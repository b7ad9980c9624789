//! The argument types and helpers the validation tests share: an invoice with nested
//! addresses and line items, a signup form with one field per `validator` rule, and the
//! functions that build validators and read envelopes back as `(path, line)` pairs.

use std::borrow::Cow;

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use validator::Validate;

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
pub(crate) struct Address {
    #[validate(length(min = 5, max = 10))]
    pub(crate) zip: String,
    pub(crate) city: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
pub(crate) struct LineItem {
    #[validate(length(min = 1))]
    sku: String,
    #[validate(range(min = 1))]
    quantity: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Currency {
    Eur,
    Usd,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
pub(crate) struct Invoice {
    #[validate(email)]
    pub(crate) email: String,
    #[validate(range(min = 1))]
    pub(crate) amount: u64,
    pub(crate) currency: Currency,
    #[validate(nested)]
    pub(crate) address: Address,
    #[validate(nested)]
    pub(crate) items: Vec<LineItem>,
    #[validate(url)]
    pub(crate) callback: Option<String>,
    #[validate(nested)]
    pub(crate) billing: Option<Address>,
}

pub(crate) fn no_weekend(day: &str) -> Result<(), validator::ValidationError> {
    if day == "saturday" || day == "sunday" {
        let mut failure = validator::ValidationError::new("no_weekend");
        failure.add_param(Cow::from("allowed"), &"monday to friday");
        return Err(failure);
    }
    Ok(())
}

pub(crate) fn even(n: u32) -> Result<(), validator::ValidationError> {
    if n.is_multiple_of(2) {
        Ok(())
    } else {
        Err(validator::ValidationError::new("even"))
    }
}

/// One field per built-in `validator` rule (except `regex` and `credit_card`, which need the
/// `regex` crate and validator's `card` feature; they are covered with hand-built failures).
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
pub(crate) struct Signup {
    #[validate(email)]
    email: String,
    #[validate(url)]
    website: String,
    #[validate(length(min = 3, max = 8))]
    username: String,
    #[validate(length(equal = 4))]
    pin: String,
    #[validate(length(max = 2))]
    tags: Vec<String>,
    #[validate(range(min = 18, max = 130))]
    age: u32,
    #[validate(range(exclusive_min = 0.0, exclusive_max = 1.0))]
    ratio: f64,
    #[validate(contains(pattern = "@"))]
    handle: String,
    #[validate(does_not_contain(pattern = "admin"))]
    display_name: String,
    password: String,
    #[validate(must_match(other = "password"))]
    password_confirmation: String,
    #[validate(non_control_character)]
    note: String,
    #[validate(required)]
    referrer: Option<String>,
    #[validate(custom(function = "no_weekend"))]
    day: String,
    #[validate(custom(function = "even", message = "Must be an even number"))]
    count: u32,
    #[validate(email(message = "The billing contact needs a real mailbox"))]
    contact: String,
}

pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap()
}

pub(crate) fn validator_for<T: JsonSchema>(action: &str) -> ArgumentValidator {
    ArgumentValidator::new(action, &schema_of::<T>()).unwrap()
}

pub(crate) fn lines(err: &ValidationError) -> Vec<(&str, &str)> {
    err.problems()
        .iter()
        .map(|p| (p.path(), p.line()))
        .collect()
}

pub(crate) fn valid_invoice() -> Value {
    json!({
        "email": "ann@example.com",
        "amount": 1200,
        "currency": "EUR",
        "address": {"zip": "10115", "city": "Berlin"},
        "items": [{"sku": "A-1", "quantity": 2}],
        "callback": null,
        "billing": null
    })
}

pub(crate) fn valid_signup() -> Value {
    json!({
        "email": "ann@example.com",
        "website": "https://example.com",
        "username": "ann",
        "pin": "1234",
        "tags": ["a"],
        "age": 30,
        "ratio": 0.5,
        "handle": "@ann",
        "display_name": "Ann",
        "password": "correct horse",
        "password_confirmation": "correct horse",
        "note": "hello",
        "referrer": "bob",
        "day": "monday",
        "count": 2,
        "contact": "billing@example.com"
    })
}

/// The lines for `signup` with `field` replaced by `value`.
pub(crate) fn signup_with(field: &str, value: Value) -> Vec<(String, String)> {
    let mut args = valid_signup();
    args[field] = value;
    let err = validator_for::<Signup>("accounts.signup")
        .parse_validated::<Signup>(&args)
        .unwrap_err();
    err.problems()
        .iter()
        .map(|p| (p.path().to_owned(), p.line().to_owned()))
        .collect()
}

pub(crate) fn one(path: &str, line: &str) -> Vec<(String, String)> {
    vec![(path.to_owned(), line.to_owned())]
}

/// Every line has the shape `{problem}. You sent: {value}. Expected {expectation}.`
pub(crate) fn assert_line_shapes(err: &ValidationError) {
    for p in err.problems() {
        let line = p.line();
        assert!(
            line.contains(". You sent: ") && line.contains(". Expected ") && line.ends_with('.'),
            "bad line shape at {}: {line}",
            p.path()
        );
    }
}
