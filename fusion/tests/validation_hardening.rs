//! Regression tests for the hardening of `fusion::validation`: secrets never leak through cut
//! values or through redacted wording, `must_match` names the secret it confirms, many problems
//! merge in O(n log n), deep nesting is refused without recursion, unknown fields of nested
//! objects are caught, and every line ends with its period.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use validator::Validate;

/// A secret longer than 50 characters: cutting it would keep its first 47.
const LONG_SECRET: &str = "Zq7_live_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

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

/// Every line has the shape `{problem}. You sent: {value}. Expected {expectation}.`
fn assert_line_shapes(err: &ValidationError) {
    for p in err.problems() {
        let line = p.line();
        assert!(
            line.contains(". You sent: ") && line.contains(". Expected ") && line.ends_with('.'),
            "bad line shape at {}: {line}",
            p.path()
        );
    }
}

// --- argument types -------------------------------------------------------------------------

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

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Item {
    #[validate(length(min = 1))]
    sku: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Many {
    #[validate(nested)]
    items: Vec<Item>,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Blob {
    data: Value,
    #[validate(length(min = 1))]
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Addr {
    zip: Option<String>,
    city: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Order {
    #[validate(nested)]
    address: Addr,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Part {
    b: u32,
    c: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Extra {
    b: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Mid {
    a: u32,
    #[serde(flatten)]
    part: Part,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
enum Figure {
    X { x: u32 },
    Y(Extra),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Outer {
    mid: Mid,
    opt: Option<Mid>,
    figure: Figure,
    list: Vec<Part>,
    map: HashMap<String, Part>,
    pair: (Part, u8),
}

// --- 1. a long secret never leaks its first 47 characters -----------------------------------

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

// --- 2. redaction never rewrites fusion's own words ------------------------------------------

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

// --- 3. must_match names the secret it confirms ----------------------------------------------

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

// --- 4. many problems merge in O(n log n) ----------------------------------------------------

#[test]
fn fifty_thousand_problems_merge_in_order() {
    const N: usize = 50_000;
    let many = validator_for::<Many>("shop.bulk");
    let items: Vec<Value> = (0..N).map(|_| json!({"sku": ""})).collect();
    let args = json!({ "items": items });
    let started = Instant::now();
    let err = many.parse_validated::<Many>(&args).unwrap_err();
    // Evidence only (the machine is noisy): no assertion on time.
    println!(
        "{N} items, {} problems in {:?}",
        err.len(),
        started.elapsed()
    );
    assert_eq!(err.len(), N);
    let line = "Too short. You sent: ''. Expected at least 1 character.";
    assert_eq!(lines(&err)[0], ("items[0].sku", line));
    assert_eq!(lines(&err)[10], ("items[10].sku", line));
    assert_eq!(lines(&err)[N - 1], ("items[49999].sku", line));
}

proptest! {
    #[test]
    fn merging_equals_pushing_one_by_one(
        first in prop::collection::vec("(\\(root\\)|[a-c](\\[[0-9]{1,2}\\])?)", 0..10),
        second in prop::collection::vec("(\\(root\\)|[a-c](\\[[0-9]{1,2}\\])?)", 0..10),
    ) {
        let mut merged = ValidationError::new("t");
        let mut pushed = ValidationError::new("t");
        let mut other = ValidationError::new("t");
        for (n, path) in first.iter().enumerate() {
            merged.push(path.as_str(), format!("a{n}"));
            pushed.push(path.as_str(), format!("a{n}"));
        }
        for (n, path) in second.iter().enumerate() {
            other.push(path.as_str(), format!("b{n}"));
            pushed.push(path.as_str(), format!("b{n}"));
        }
        merged.merge(other);
        prop_assert_eq!(merged, pushed);
    }
}

// --- 5. deep nesting is refused without recursion --------------------------------------------

/// `leaf` wrapped `levels` times by `wrap`, built without recursion.
fn chain(leaf: Value, levels: usize, wrap: impl Fn(Value) -> Value) -> Value {
    (0..levels).fold(leaf, |inner, _| wrap(inner))
}

fn in_object(inner: Value) -> Value {
    let mut map = Map::new();
    map.insert("a".to_owned(), inner);
    Value::Object(map)
}

fn in_array(inner: Value) -> Value {
    Value::Array(vec![inner])
}

/// Drops `value` without recursion (serde_json's own drop recurses once per level).
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[test]
fn arguments_nested_100_000_levels_deep_are_refused_on_a_small_stack() {
    const LEVELS: usize = 100_000;
    let blobs = validator_for::<Blob>("store.put").secret("name");
    let arrays = chain(json!([]), LEVELS - 1, in_array);
    let objects = chain(json!({}), LEVELS - 1, in_object);
    let refused = |what: &str| {
        format!(
            "Arguments nested too deeply. You sent: {what} nested 100000 levels deep. Expected at most 64 levels of nesting."
        )
    };
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn_scoped(scope, || {
                for (args, what) in [(&arrays, "an array"), (&objects, "an object")] {
                    let want = refused(what);
                    let want = [("(root)", want.as_str())];
                    assert!(!blobs.is_valid(args));
                    assert_eq!(lines(&blobs.check(args)), want);
                    assert_eq!(lines(&blobs.parse::<Blob>(args).unwrap_err()), want);
                    assert_eq!(
                        lines(&blobs.parse_validated::<Blob>(args).unwrap_err()),
                        want
                    );
                    let err = blobs
                        .parse_with::<Blob, _>(args, |b| b.validate().err())
                        .unwrap_err();
                    assert_eq!(lines(&err), want);
                    let err = blobs.rule_errors(&validator::ValidationErrors::new(), args);
                    assert_eq!(lines(&err), want);
                }
            })
            .unwrap();
        assert!(worker.join().is_ok(), "the worker panicked");
    });
    dismantle(arrays);
    dismantle(objects);
}

#[test]
fn nesting_limit_is_64_by_default_and_configurable() {
    let loose = ArgumentValidator::new("t", &json!({})).unwrap();
    let at_limit = chain(json!({}), 63, in_object);
    assert!(loose.check(&at_limit).is_empty());
    assert!(loose.parse::<Value>(&at_limit).is_ok());
    let over = chain(json!({}), 64, in_object);
    assert_eq!(
        lines(&loose.check(&over)),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an object nested 65 levels deep. Expected at most 64 levels of nesting."
        )]
    );

    let shallow = ArgumentValidator::new("t", &json!({}))
        .unwrap()
        .max_depth(2);
    assert!(
        shallow
            .check(&json!({"a": {"b": 1}, "c": [1, 2]}))
            .is_empty()
    );
    assert_eq!(
        lines(&shallow.check(&json!({"a": {"b": [1]}}))),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an object nested 3 levels deep. Expected at most 2 levels of nesting."
        )]
    );
    let flat = ArgumentValidator::new("t", &json!({}))
        .unwrap()
        .max_depth(1);
    assert_eq!(
        lines(&flat.check(&json!([[]]))),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an array nested 2 levels deep. Expected at most 1 level of nesting."
        )]
    );
}

// --- 6. unknown fields of nested objects -----------------------------------------------------

#[test]
fn unknown_field_of_a_nested_object_suggests_its_own_fields() {
    let orders = validator_for::<Order>("shop.order");
    let err = orders
        .parse_validated::<Order>(&json!({"address": {"zp": "12345", "city": "x"}}))
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "address.zp",
            "Unknown field. You sent: '12345'. Expected one of the known fields: city, zip (did you mean 'zip'?)."
        )]
    );
    let ok: Order = orders
        .parse_validated(&json!({"address": {"zip": "12345", "city": "x"}}))
        .unwrap();
    assert_eq!(ok.address.zip.as_deref(), Some("12345"));
}

#[test]
fn every_nested_object_is_closed_but_combined_ones_stay_valid() {
    let outer = validator_for::<Outer>("t");
    let valid = json!({
        "mid": {"a": 1, "b": 2},
        "opt": {"a": 1, "b": 2, "c": null},
        "figure": {"kind": "Y", "b": 1},
        "list": [{"b": 1}],
        "map": {"k": {"b": 1}},
        "pair": [{"b": 1}, 2]
    });
    assert!(outer.check(&valid).is_empty(), "{}", outer.check(&valid));
    assert!(outer.parse::<Outer>(&valid).is_ok());
    let mut x = valid.clone();
    x["figure"] = json!({"kind": "X", "x": 1});
    assert!(outer.check(&x).is_empty(), "{}", outer.check(&x));

    let typos = json!({
        "mid": {"a": 1, "b": 2, "zz": 1},
        "opt": {"a": 1, "b": 2, "zz": 1},
        "figure": {"kind": "Y", "b": 1},
        "list": [{"b": 1}, {"b": 1, "zz": 1}],
        "map": {"k": {"b": 1, "zz": 1}},
        "pair": [{"b": 1, "zz": 1}, 2]
    });
    let err = outer.check(&typos);
    let abc = "Unknown field. You sent: 1. Expected one of the known fields: a, b, c.";
    let bc = "Unknown field. You sent: 1. Expected one of the known fields: b, c.";
    assert_eq!(
        lines(&err),
        [
            ("list[1].zz", bc),
            ("map.k.zz", bc),
            ("mid.zz", abc),
            ("opt.zz", abc),
            ("pair[0].zz", bc),
        ]
    );
    // A struct variant of an internally tagged enum is `$ref` plus sibling `properties`: its
    // target is combined with the tag, so it stays open rather than reject the tag.
    let mut open = valid;
    open["figure"] = json!({"kind": "Y", "b": 1, "zz": 1});
    assert!(outer.check(&open).is_empty(), "{}", outer.check(&open));
}

// --- 7. every line ends with its period ------------------------------------------------------

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
fn did_you_mean_lines_end_with_a_period() {
    let schema = json!({"properties": {"amount": {}, "currency": {}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&json!({"amout": 5, "zzz": 1}));
    assert_eq!(
        lines(&err),
        [
            (
                "amout",
                "Unknown field. You sent: 5. Expected one of the known fields: amount, currency (did you mean 'amount'?)."
            ),
            (
                "zzz",
                "Unknown field. You sent: 1. Expected one of the known fields: amount, currency."
            ),
        ]
    );
    assert_line_shapes(&err);
}

/// `null` for an enum field fails both the type and the enum check; the model gets one line,
/// the one that lists the allowed values.
#[test]
fn a_value_outside_an_enum_gets_one_line_not_two() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"currency": {"type": "string", "enum": ["EUR", "USD"]}},
        "required": ["currency"],
    });
    let validator = fusion::validation::ArgumentValidator::new("billing.charge", &schema).unwrap();
    assert_eq!(
        validator
            .check(&serde_json::json!({"currency": null}))
            .to_xml(),
        "<validation_error action=\"billing.charge\">\n\
         <field name=\"currency\">Value not allowed. You sent: null. Expected one of: 'EUR', 'USD'.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    );
}
