//! `fusion::validation` end to end: schemars-derived argument types with `validator` rules,
//! checked into byte-exact `<validation_error>` envelopes.

use std::borrow::Cow;

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use validator::Validate;

const CLOSE: &str = "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";

// --- argument types -------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Address {
    #[validate(length(min = 5, max = 10))]
    zip: String,
    city: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct LineItem {
    #[validate(length(min = 1))]
    sku: String,
    #[validate(range(min = 1))]
    quantity: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Eur,
    Usd,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Invoice {
    #[validate(email)]
    email: String,
    #[validate(range(min = 1))]
    amount: u64,
    currency: Currency,
    #[validate(nested)]
    address: Address,
    #[validate(nested)]
    items: Vec<LineItem>,
    #[validate(url)]
    callback: Option<String>,
    #[validate(nested)]
    billing: Option<Address>,
}

fn no_weekend(day: &str) -> Result<(), validator::ValidationError> {
    if day == "saturday" || day == "sunday" {
        let mut failure = validator::ValidationError::new("no_weekend");
        failure.add_param(Cow::from("allowed"), &"monday to friday");
        return Err(failure);
    }
    Ok(())
}

fn even(n: u32) -> Result<(), validator::ValidationError> {
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
struct Signup {
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Strict {
    amount: u32,
    currency: Currency,
}

// --- helpers --------------------------------------------------------------------------------

fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap()
}

fn validator_for<T: JsonSchema>(action: &str) -> ArgumentValidator {
    ArgumentValidator::new(action, &schema_of::<T>()).unwrap()
}

fn lines(err: &ValidationError) -> Vec<(&str, &str)> {
    err.problems()
        .iter()
        .map(|p| (p.path(), p.line()))
        .collect()
}

fn valid_invoice() -> Value {
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

fn valid_signup() -> Value {
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
fn signup_with(field: &str, value: Value) -> Vec<(String, String)> {
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

fn one(path: &str, line: &str) -> Vec<(String, String)> {
    vec![(path.to_owned(), line.to_owned())]
}

// --- the whole envelope ---------------------------------------------------------------------

#[test]
fn valid_arguments_parse() {
    let invoice: Invoice = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated(&valid_invoice())
        .unwrap();
    assert_eq!(invoice.amount, 1200);
    assert!(
        validator_for::<Signup>("s")
            .parse_validated::<Signup>(&valid_signup())
            .is_ok()
    );
    assert!(
        validator_for::<Invoice>("b")
            .check(&valid_invoice())
            .is_empty()
    );
}

#[test]
fn every_problem_in_one_envelope_in_path_order() {
    let args = json!({
        "email": "not-an-email",
        "amount": 0,
        "currency": "EUR",
        "address": {"zip": "1", "city": "Berlin"},
        "items": [{"sku": "", "quantity": 0}],
        "callback": "notaurl",
        "billing": {"zip": "123", "city": "Paris"},
        "amout": 5
    });
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        err.to_xml(),
        "<validation_error action=\"billing.create_invoice\">\n\
         <field name=\"address.zip\">Too short. You sent: '1'. Expected between 5 and 10 characters.</field>\n\
         <field name=\"amount\">Number too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"amout\">Unknown field. You sent: 5. Expected one of the known fields: address, amount, billing, callback, currency, email, items (did you mean 'amount'?).</field>\n\
         <field name=\"billing.zip\">Too short. You sent: '123'. Expected between 5 and 10 characters.</field>\n\
         <field name=\"callback\">Invalid URL format. You sent: 'notaurl'. Expected a valid URL such as 'https://example.com/path'.</field>\n\
         <field name=\"email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>\n\
         <field name=\"items[0].quantity\">Number too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"items[0].sku\">Too short. You sent: ''. Expected at least 1 character.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    );
    assert_eq!(
        err.flags(),
        json!({"isError": true, "errorCategory": "validation", "isRetryable": false,
               "code": "VALIDATION_ERROR", "severity": "error"})
    );
}

#[test]
fn structural_and_rule_problems_merge_when_deserialization_fails() {
    // `amount` has the wrong type, so serde fails and the rules cannot run: the schema still
    // reports everything it sees, and serde's own complaint about `amount` is dropped.
    let args = json!({
        "email": "nope",
        "amount": "abc",
        "address": {"zip": "1"},
        "items": [{"sku": "", "quantity": 0}]
    });
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "address.city",
                "Missing required field. You sent: (missing). Expected a string."
            ),
            (
                "address.zip",
                "Too short. You sent: '1'. Expected at least 5 characters."
            ),
            (
                "amount",
                "Wrong type. You sent: 'abc'. Expected an integer."
            ),
            (
                "currency",
                "Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'."
            ),
            (
                "email",
                "Invalid email format. You sent: 'nope'. Expected a valid email address."
            ),
            (
                "items[0].quantity",
                "Number too small. You sent: 0. Expected a number >= 1."
            ),
            (
                "items[0].sku",
                "Too short. You sent: ''. Expected at least 1 character."
            ),
        ]
    );
}

#[test]
fn nested_option_reports_the_inner_path() {
    let mut args = valid_invoice();
    args["billing"] = json!({"zip": 5});
    let err = validator_for::<Invoice>("b")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "billing.city",
                "Missing required field. You sent: (missing). Expected a string."
            ),
            ("billing.zip", "Wrong type. You sent: 5. Expected a string."),
        ]
    );
}

#[test]
fn list_indices_sort_numerically() {
    let mut args = valid_invoice();
    let mut items: Vec<Value> = (0..11)
        .map(|_| json!({"sku": "A-1", "quantity": 1}))
        .collect();
    items[10]["quantity"] = json!(0);
    items[2]["sku"] = json!("");
    args["items"] = Value::Array(items);
    let err = validator_for::<Invoice>("b")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "items[2].sku",
                "Too short. You sent: ''. Expected at least 1 character."
            ),
            (
                "items[10].quantity",
                "Number too small. You sent: 0. Expected a number >= 1."
            ),
        ]
    );
}

#[test]
fn arguments_that_are_not_an_object() {
    let err = validator_for::<Invoice>("b")
        .parse::<Invoice>(&json!([1, 2]))
        .unwrap_err();
    // serde would read a struct from a sequence and complain about `[0]`; the schema's word
    // about the whole object covers it.
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "Wrong type. You sent: array(2). Expected an object."
        )]
    );
}

// --- structural problems through schemars schemas -------------------------------------------

#[test]
fn missing_required_field() {
    let mut args = valid_invoice();
    args.as_object_mut().unwrap().remove("email");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "email",
            "Missing required field. You sent: (missing). Expected a string."
        )]
    );
}

#[test]
fn wrong_type() {
    let mut args = valid_invoice();
    args["amount"] = json!("abc");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "amount",
            "Wrong type. You sent: 'abc'. Expected an integer."
        )]
    );
}

#[test]
fn value_outside_an_enum() {
    let mut args = valid_invoice();
    args["currency"] = json!("eur");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "currency",
            "Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'."
        )]
    );
}

#[test]
fn unknown_field_with_did_you_mean() {
    let mut args = valid_invoice();
    args["emial"] = json!("x");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "emial",
            "Unknown field. You sent: 'x'. Expected one of the known fields: address, amount, billing, callback, currency, email, items (did you mean 'email'?)."
        )]
    );
}

// --- serde problems -------------------------------------------------------------------------

#[test]
fn serde_reports_what_a_loose_schema_misses() {
    let loose = ArgumentValidator::new("t", &json!({})).unwrap();
    let missing = loose.parse::<LineItem>(&json!({"sku": "a"})).unwrap_err();
    assert_eq!(
        lines(&missing),
        [(
            "quantity",
            "Missing required field. You sent: (missing). Expected a value."
        )]
    );
    let wrong = loose
        .parse::<LineItem>(&json!({"sku": "a", "quantity": "3"}))
        .unwrap_err();
    assert_eq!(
        lines(&wrong),
        [(
            "quantity",
            "Wrong type. You sent: '3'. Expected an integer from 0 to 4294967295."
        )]
    );
    let negative = loose
        .parse::<LineItem>(&json!({"sku": "a", "quantity": -1}))
        .unwrap_err();
    assert_eq!(
        lines(&negative),
        [(
            "quantity",
            "Invalid value. You sent: -1. Expected an integer from 0 to 4294967295."
        )]
    );
    let variant = loose
        .parse::<Strict>(&json!({"amount": 1, "currency": "eur"}))
        .unwrap_err();
    assert_eq!(
        lines(&variant),
        [(
            "currency",
            "Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'."
        )]
    );
    let unknown = loose
        .parse::<Strict>(&json!({"amount": 1, "amont": 2}))
        .unwrap_err();
    assert_eq!(
        lines(&unknown),
        [(
            "amont",
            "Unknown field. You sent: 2. Expected one of the known fields: amount, currency (did you mean 'amount'?)."
        )]
    );
}

#[test]
fn serde_problem_at_a_schema_path_is_dropped() {
    let err = validator_for::<LineItem>("t")
        .parse::<LineItem>(&json!({"sku": "a", "quantity": "3"}))
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "quantity",
            "Wrong type. You sent: '3'. Expected an integer."
        )]
    );
}

// --- one line per validator rule -----------------------------------------------------------

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

// --- sent values ----------------------------------------------------------------------------

fn too_long_line(value: Value) -> String {
    let schema = json!({"properties": {"v": {"maxLength": 1, "minProperties": 99}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&json!({"v": value}));
    err.problems()[0].line().to_owned()
}

#[test]
fn strings_are_cut_after_fifty_characters() {
    let fifty = "a".repeat(50);
    assert_eq!(
        too_long_line(json!(fifty)),
        format!("Too long. You sent: '{fifty}'. Expected at most 1 character.")
    );
    let fifty_one = "b".repeat(51);
    assert_eq!(
        too_long_line(json!(fifty_one)),
        format!(
            "Too long. You sent: '{}...'. Expected at most 1 character.",
            "b".repeat(47)
        )
    );
}

#[test]
fn cutting_counts_characters_not_bytes() {
    let fifty = "é".repeat(50);
    assert_eq!(
        too_long_line(json!(fifty)),
        format!("Too long. You sent: '{fifty}'. Expected at most 1 character.")
    );
    let fifty_one = "日".repeat(51);
    assert_eq!(
        too_long_line(json!(fifty_one)),
        format!(
            "Too long. You sent: '{}...'. Expected at most 1 character.",
            "日".repeat(47)
        )
    );
}

#[test]
fn objects_are_compact_json_cut_the_same_way() {
    // {"k":"…"} adds 8 characters around the value.
    let fifty = json!({"k": "x".repeat(42)});
    assert_eq!(
        too_long_line(fifty.clone()),
        format!("Too few fields. You sent: {fifty}. Expected at least 99 fields.")
    );
    let fifty_one = json!({"k": "x".repeat(43)});
    assert_eq!(
        too_long_line(fifty_one),
        format!(
            "Too few fields. You sent: {{\"k\":\"{}.... Expected at least 99 fields.",
            "x".repeat(41)
        )
    );
}

// --- secrets --------------------------------------------------------------------------------

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

// --- escaping and well-formedness -----------------------------------------------------------

#[test]
fn hostile_action_and_field_names_are_escaped() {
    let schema = json!({"properties": {"a": {}}});
    let err = ArgumentValidator::new("evil\"<tool>&'x", &schema)
        .unwrap()
        .check(&json!({"<b>&\"q\"": "x < y & z > \"w\""}));
    assert_eq!(
        err.to_xml(),
        format!(
            "<validation_error action=\"evil&quot;&lt;tool&gt;&amp;&apos;x\">\n\
             <field name=\"&lt;b&gt;&amp;&quot;q&quot;\">Unknown field. You sent: 'x &lt; y &amp; z > \"w\"'. Expected one of the known fields: a.</field>\n\
             {CLOSE}"
        )
    );
    let xml = err.to_xml();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.root_element().attribute("action"),
        Some("evil\"<tool>&'x")
    );
}

#[test]
fn failing_validation_is_well_formed_xml() {
    let args = json!({"email": "a\u{1}b", "amount": -1, "items": [{"sku": "<&>", "quantity": 0}], "x&y": 1});
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    let xml = err.to_xml();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "validation_error");
    assert_eq!(root.attribute("action"), Some("billing.create_invoice"));
    let fields: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("field"))
        .collect();
    assert_eq!(fields.len(), err.problems().len());
    for (node, problem) in fields.iter().zip(err.problems()) {
        assert_eq!(node.attribute("name"), Some(problem.path()));
        assert_eq!(
            node.text(),
            Some(problem.line().replace('\u{1}', "\u{FFFD}").as_str())
        );
    }
    let recovery = root
        .children()
        .find(|n| n.has_tag_name("recovery"))
        .unwrap();
    assert_eq!(recovery.text(), Some(fusion::validation::RECOVERY));
}

// --- schema compilation ---------------------------------------------------------------------

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

// --- properties -----------------------------------------------------------------------------

/// A reference ordering: segments, indices numerically.
fn reference_key(path: &str) -> Vec<(u8, usize, String)> {
    if path == "(root)" {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (n, piece) in path.split('.').enumerate() {
        let (key, rest) = piece.split_once('[').map_or((piece, ""), |(k, r)| (k, r));
        if !key.is_empty() || n > 0 {
            out.push((1, 0, key.to_owned()));
        }
        for index in rest.split('[').filter(|s| !s.is_empty()) {
            out.push((
                0,
                index.trim_end_matches(']').parse().unwrap(),
                String::new(),
            ));
        }
    }
    out
}

proptest! {
    #[test]
    fn problems_are_always_sorted(paths in prop::collection::vec(
        "(\\(root\\)|[a-c]{1,2}(\\[[0-9]{1,2}\\])?(\\.[a-c](\\[[0-9]{1,2}\\])?)?)", 0..12
    )) {
        let mut err = ValidationError::new("t");
        for (n, path) in paths.iter().enumerate() {
            err.push(path.as_str(), n.to_string());
        }
        let got: Vec<&str> = err.problems().iter().map(|p| p.path()).collect();
        let mut want: Vec<&str> = paths.iter().map(String::as_str).collect();
        want.sort_by_key(|p| reference_key(p));
        prop_assert_eq!(got, want);
    }

    #[test]
    fn any_text_renders_well_formed(action in "\\PC*", path in "\\PC*", line in "\\PC*") {
        // Text keeps `>` as is (SPEC rule 4 and the golden vectors), so a literal `]]>` stays
        // too, which strict XML 1.0 parsers reject in content.
        prop_assume!(!line.contains("]]>"));
        let err = ValidationError::new(action.as_str()).with_problem(path.as_str(), line.as_str());
        let xml = err.to_xml();
        prop_assert_eq!(xml.len(), xml.capacity());
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        prop_assert_eq!(root.attribute("action"), Some(action.as_str()));
        let field = root.children().find(|n| n.has_tag_name("field")).unwrap();
        prop_assert_eq!(field.attribute("name"), Some(path.as_str()));
        prop_assert_eq!(field.text().unwrap_or(""), line.as_str());
    }
}
