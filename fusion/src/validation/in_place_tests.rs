//! The in-place path of a tool's call (`parse_owned_with`, `tracked::deserialize_in_place`)
//! against the path that reads arguments where they are (`parse_with`): the same value or the
//! same envelope, byte for byte, for any arguments, and the strings moved rather than copied.

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::ArgumentValidator;

/// A code that must start with `C-`: refused by its `TryFrom`, after the schema (a plain
/// string) accepted it, with a message quoting the value.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(try_from = "String")]
struct Code(String);

impl TryFrom<String> for Code {
    type Error = String;

    fn try_from(value: String) -> Result<Code, String> {
        if value.starts_with("C-") {
            Ok(Code(value))
        } else {
            Err(format!("'{value}' is not a code"))
        }
    }
}

/// Flat arguments of scalars, in the fast check's subset: strings to move, a string a
/// conversion may refuse, a number serde may refuse after the schema accepted it (an `i32`
/// has no bounds in its schema), and a secret.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Flat {
    name: String,
    note: Option<String>,
    #[schemars(with = "Option<String>")]
    code: Option<Code>,
    count: Option<i32>,
    #[schemars(extend("writeOnly" = true))]
    token: Option<String>,
    flag: Option<bool>,
}

/// The rule run on a parsed [`Flat`]: a name may not be `"taken"` (a `validator` failure after
/// the strings moved).
fn rules(flat: &Flat) -> Option<validator::ValidationErrors> {
    (flat.name == "taken").then(|| {
        let mut errors = validator::ValidationErrors::new();
        errors.add("name", validator::ValidationError::new("name_taken"));
        errors
    })
}

fn validator() -> ArgumentValidator {
    let schema = serde_json::to_value(schemars::schema_for!(Flat)).expect("a schema is JSON");
    ArgumentValidator::new("t.flat", &schema).expect("the schema compiles")
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Both paths on `args`: the parsed value or the envelope, each as text to compare.
fn both(validator: &ArgumentValidator, args: &Map<String, Value>) -> (String, String) {
    let show = |result: Result<Flat, super::ValidationError>| match result {
        Ok(flat) => format!("ok: {flat:?}"),
        Err(error) => format!("error: {}", error.to_xml()),
    };
    let in_place = show(validator.parse_owned_with(args.clone(), rules));
    let shared = show(validator.parse_with(&Value::Object(args.clone()), rules));
    (in_place, shared)
}

#[test]
fn the_arguments_type_is_in_the_fast_subset() {
    // Otherwise every other test here would only exercise the shared path.
    let validator = validator();
    let args = object(json!({"name": "ada", "code": "C-1", "count": 3}));
    assert!(validator.surely_valid_object(&args));
}

#[test]
fn a_valid_call_moves_its_strings_into_the_arguments() {
    let validator = validator();
    let args = object(json!({"name": "ada lovelace", "note": "first", "code": "C-7"}));
    let name_at = args["name"].as_str().unwrap().as_ptr();
    let note_at = args["note"].as_str().unwrap().as_ptr();
    let code_at = args["code"].as_str().unwrap().as_ptr();
    let flat: Flat = validator.parse_owned_with(args, rules).unwrap();
    assert_eq!(flat.name.as_ptr(), name_at, "moved, not copied");
    assert_eq!(flat.note.as_deref().unwrap().as_ptr(), note_at);
    assert_eq!(flat.code.as_ref().unwrap().0.as_ptr(), code_at);
    assert_eq!(flat.name, "ada lovelace");
}

#[test]
fn a_string_longer_than_the_undo_buffer_is_copied_and_still_right() {
    let validator = validator();
    let long = "x".repeat(300);
    let args = object(json!({"name": long, "note": "short"}));
    let note_at = args["note"].as_str().unwrap().as_ptr();
    let flat: Flat = validator.parse_owned_with(args, rules).unwrap();
    assert_eq!(flat.name, long);
    assert_eq!(flat.note.as_deref().unwrap().as_ptr(), note_at);
}

#[test]
fn a_refused_conversion_echoes_the_string_it_was_handed() {
    let validator = validator();
    let args = object(json!({"name": "ada", "code": "X-9"}));
    let (in_place, shared) = both(&validator, &args);
    assert_eq!(in_place, shared);
    assert!(
        in_place.contains("'X-9' is not a code") && in_place.contains("You sent: 'X-9'"),
        "{in_place}"
    );
}

#[test]
fn a_rule_failure_after_the_strings_moved_echoes_them_as_sent() {
    let validator = validator();
    let args = object(json!({"name": "taken", "note": "n"}));
    let (in_place, shared) = both(&validator, &args);
    assert_eq!(in_place, shared);
    assert!(in_place.contains("You sent: 'taken'"), "{in_place}");
}

#[test]
fn a_secret_quoted_by_a_refused_conversion_stays_redacted() {
    let validator = validator();
    let args = object(json!({"name": "ada", "token": "hunter2", "code": "hunter2"}));
    let (in_place, shared) = both(&validator, &args);
    assert_eq!(in_place, shared);
    assert!(!in_place.contains("hunter2"), "{in_place}");
}

#[test]
fn a_number_serde_refuses_after_the_schema_accepted_it() {
    let validator = validator();
    let args = object(json!({"name": "ada", "note": "n", "count": 1_u64 << 40}));
    let (in_place, shared) = both(&validator, &args);
    assert_eq!(in_place, shared);
    assert!(in_place.contains("You sent: 1099511627776"), "{in_place}");
}

/// A string value: short ASCII, multibyte, empty, or longer than the undo buffer.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 _-]{0,12}",
        "C-[a-z0-9]{0,6}",
        "\\PC{0,20}",
        "[a-z]{100,200}",
        Just("taken".to_owned()),
    ]
}

/// A scalar of any JSON type, so fields also get values of the wrong type.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        (0u64..100).prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        (-1e6f64..1e6).prop_map(Value::from),
    ]
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let keys = prop_oneof![
        Just("name"),
        Just("note"),
        Just("code"),
        Just("count"),
        Just("token"),
        Just("flag"),
        Just("nmae"),
    ];
    proptest::collection::btree_map(keys, scalar(), 0..7).prop_map(|entries| {
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever the arguments, moving their strings changes nothing a caller can see.
    #[test]
    fn the_in_place_path_answers_as_the_shared_path(args in arguments()) {
        let validator = validator();
        let (in_place, shared) = both(&validator, &args);
        prop_assert_eq!(in_place, shared);
    }
}
