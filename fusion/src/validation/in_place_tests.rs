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

// ---------------------------------------------------------------------------------------------
// Review: other arguments types, each compared on both paths (`compare`), with the fast check
// asserted to accept where the case is meant to exercise the in-place path.

#[allow(clippy::type_complexity, dead_code)]
mod other_types {
    use std::borrow::Cow;
    use std::collections::BTreeMap;
    use std::fmt;
    use std::path::PathBuf;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde::de::{DeserializeOwned, Deserializer};
    use serde_json::value::RawValue;
    use serde_json::{Value, json};

    use super::super::ArgumentValidator;
    use super::object;

    type Rules<'a, T> = &'a dyn Fn(&T) -> Option<validator::ValidationErrors>;

    fn no_rules<T>(_: &T) -> Option<validator::ValidationErrors> {
        None
    }

    fn always_fail<T>(_: &T) -> Option<validator::ValidationErrors> {
        let mut errors = validator::ValidationErrors::new();
        errors.add("name", validator::ValidationError::new("always"));
        Some(errors)
    }

    fn schema_of<S: JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(S)).expect("a schema is JSON")
    }

    /// Every case of `cases` on both paths under `schema`; `fast` says whether the fast check
    /// must accept every case (so that the in-place path really runs). Returns the mismatches.
    fn compare<T: DeserializeOwned + fmt::Debug>(
        schema: &Value,
        fast: bool,
        cases: Vec<Value>,
        rules: Rules<'_, T>,
    ) -> Vec<String> {
        let validator = ArgumentValidator::new("t.review", schema).expect("the schema compiles");
        let show = |result: Result<T, super::super::ValidationError>| match result {
            Ok(value) => format!("ok: {value:?}"),
            Err(error) => format!("error: {}", error.to_xml()),
        };
        let mut out = Vec::new();
        for case in cases {
            let args = object(case);
            if fast {
                assert!(
                    validator.surely_valid_object(&args),
                    "not in the fast subset: {args:?} under {schema}"
                );
            }
            let in_place = show(validator.parse_owned_with(args.clone(), |t: &T| rules(t)));
            let shared = show(validator.parse_with(&Value::Object(args.clone()), |t: &T| rules(t)));
            if in_place != shared {
                out.push(format!(
                    "{}: {args:?}\n  in place: {in_place}\n  shared:   {shared}",
                    std::any::type_name::<T>()
                ));
            }
        }
        out
    }

    fn assert_none(out: Vec<String>) {
        assert!(
            out.is_empty(),
            "{} mismatches:\n{}",
            out.len(),
            out.join("\n")
        );
    }

    /// A flat string schema for `names` (all optional unless listed in `required`).
    fn strings_schema(names: &[&str], required: &[&str]) -> Value {
        let properties: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| ((*n).to_owned(), json!({"type": ["string", "null"]})))
            .collect();
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": false})
    }

    // ---- flatten -----------------------------------------------------------------------

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Inner {
        b: String,
        c: Option<u32>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Flattened {
        name: String,
        #[serde(flatten)]
        inner: Inner,
    }

    #[test]
    fn flattened_struct() {
        let schema = schema_of::<Flattened>();
        let fast = crate::validation::fast::FastCheck::new(&schema).is_some();
        assert!(fast, "schemars flattens into a fast schema: {schema}");
        let cases = vec![
            json!({"name": "a", "b": "bee", "c": 1}),
            json!({"name": "taken", "b": "x".repeat(200)}),
            json!({"name": "a", "b": "b", "c": 5_000_000_000_u64}),
        ];
        assert_none(compare::<Flattened>(
            &schema,
            fast,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<Flattened>(&schema, fast, cases, &always_fail));
    }

    #[derive(Debug, Deserialize)]
    struct FlattenedRaw {
        name: String,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }

    #[derive(Debug, Deserialize)]
    struct FlattenedRawValue {
        name: String,
        #[serde(flatten)]
        inner: RawInner,
    }

    #[derive(Debug, Deserialize)]
    struct RawInner {
        raw: Box<RawValue>,
    }

    #[test]
    fn flattened_map_and_raw_value_under_a_fast_schema() {
        let schema = strings_schema(&["name", "raw", "x"], &["name"]);
        let cases = vec![
            json!({"name": "a", "raw": "r", "x": "y"}),
            json!({"name": "a", "raw": "r"}),
            json!({"name": "a"}),
        ];
        assert_none(compare::<FlattenedRaw>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<FlattenedRaw>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<FlattenedRawValue>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<FlattenedRawValue>(
            &schema,
            true,
            cases,
            &always_fail,
        ));
    }

    // ---- defaults, aliases, renames --------------------------------------------------------

    fn default_name() -> String {
        "dflt".to_owned()
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Defaults {
        #[serde(default = "default_name")]
        name: String,
        #[serde(default)]
        note: String,
        #[serde(alias = "n2")]
        other: Option<String>,
    }

    #[test]
    fn defaults_and_aliases() {
        let schema = schema_of::<Defaults>();
        let cases = vec![
            json!({}),
            json!({"note": ""}),
            json!({"name": "x", "note": "y", "other": "z"}),
            json!({"other": null}),
        ];
        assert_none(compare::<Defaults>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Defaults>(&schema, true, cases, &always_fail));
        let slow = vec![json!({"name": null, "note": "n"})];
        assert_none(compare::<Defaults>(&schema, false, slow.clone(), &no_rules));
        assert_none(compare::<Defaults>(&schema, false, slow, &always_fail));
        // The alias is not in the schema: under a schema listing it, duplicates are refused.
        let schema = strings_schema(&["name", "note", "other", "n2"], &[]);
        let cases = vec![
            json!({"n2": "a"}),
            json!({"n2": "a", "other": "b"}),
            json!({"n2": "a", "other": null}),
        ];
        assert_none(compare::<Defaults>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Defaults>(&schema, true, cases, &always_fail));
    }

    // ---- top-level wrappers ----------------------------------------------------------------

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Plain {
        name: String,
        note: Option<String>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(transparent)]
    struct Transparent(Plain);

    #[derive(Debug, Deserialize, JsonSchema)]
    #[schemars(transparent)]
    struct Newtype(Plain);

    #[test]
    fn wrappers_at_the_top() {
        let schema = schema_of::<Plain>();
        let cases = vec![
            json!({"name": "a", "note": "b"}),
            json!({"name": "a"}),
            json!({"name": "", "note": "x".repeat(130)}),
        ];
        assert_none(compare::<Option<Plain>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<Option<Plain>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Transparent>(
            &schema_of::<Transparent>(),
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<Transparent>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Newtype>(
            &schema_of::<Newtype>(),
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<Newtype>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Box<Plain>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        // Types the top of the in-place path does not answer, or answers as a map.
        assert_none(compare::<Value>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Value>(&schema, true, cases.clone(), &always_fail));
        assert_none(compare::<BTreeMap<String, String>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<BTreeMap<String, Value>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<serde_json::Map<String, Value>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Box<RawValue>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<Box<RawValue>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Option<Box<RawValue>>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<String>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<()>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Vec<String>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<(String, String)>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<serde::de::IgnoredAny>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Option<Option<Plain>>>(
            &schema,
            true,
            cases,
            &always_fail,
        ));
    }

    // ---- odd field types -------------------------------------------------------------------

    #[derive(Debug, Deserialize, JsonSchema)]
    enum Colour {
        Red,
        Green,
    }

    mod string_or_number {
        use serde::{Deserialize, Deserializer};
        pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
            #[derive(Deserialize)]
            #[serde(untagged)]
            enum Either {
                N(u64),
                S(String),
            }
            match Either::deserialize(d)? {
                Either::N(n) => Ok(n),
                Either::S(s) => s.parse().map_err(serde::de::Error::custom),
            }
        }
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Odd {
        #[schemars(with = "Option<String>")]
        letter: Option<char>,
        #[schemars(with = "Option<String>")]
        colour: Option<Colour>,
        #[schemars(with = "Option<String>")]
        any: Option<Value>,
        #[schemars(with = "Option<String>")]
        raw: Option<Box<RawValue>>,
        cow: Option<Cow<'static, str>>,
        path: Option<PathBuf>,
        boxed: Option<Box<str>>,
        #[serde(default, deserialize_with = "string_or_number::deserialize")]
        #[schemars(with = "Option<String>")]
        num: u64,
        #[schemars(with = "Option<String>")]
        bytes: Option<std::ffi::CString>,
        #[schemars(with = "Option<String>")]
        addr: Option<std::net::IpAddr>,
    }

    #[test]
    fn odd_field_types() {
        let schema = schema_of::<Odd>();
        let cases = vec![
            json!({"letter": "a", "colour": "Red", "any": "v", "raw": "r"}),
            json!({"letter": "é", "colour": "Green", "cow": "c", "path": "/p"}),
            json!({"letter": "ab"}),
            json!({"letter": ""}),
            json!({"colour": "Blue", "cow": "c"}),
            json!({"colour": "", "cow": "c"}),
            json!({"num": "12", "boxed": "b", "path": "p", "cow": "c"}),
            json!({"num": "x", "boxed": "b"}),
            json!({"num": "1", "any": "a", "boxed": "b", "bytes": "c", "cow": "d", "path": "e"}),
            json!({"bytes": "a\u{0}b", "cow": "c"}),
            json!({"addr": "127.0.0.1", "cow": "c"}),
            json!({"addr": "nope", "cow": "c"}),
            json!({"raw": "x".repeat(127), "cow": "c"}),
        ];
        assert_none(compare::<Odd>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Odd>(&schema, true, cases, &always_fail));
    }

    // ---- struct-level try_from, failing after strings moved --------------------------------

    #[derive(Debug, Deserialize, JsonSchema)]
    struct RangeRaw {
        low: String,
        high: String,
        note: Option<String>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(try_from = "RangeRaw")]
    #[schemars(with = "RangeRaw")]
    #[allow(dead_code)]
    struct Range {
        low: String,
        high: String,
    }

    impl TryFrom<RangeRaw> for Range {
        type Error = String;
        fn try_from(raw: RangeRaw) -> Result<Range, String> {
            if raw.low <= raw.high {
                Ok(Range {
                    low: raw.low,
                    high: raw.high,
                })
            } else {
                Err(format!("'{}' is above '{}'", raw.low, raw.high))
            }
        }
    }

    #[test]
    fn struct_try_from_failing_after_the_strings_moved() {
        let schema = schema_of::<RangeRaw>();
        let cases = vec![
            json!({"low": "a", "high": "b"}),
            json!({"low": "b", "high": "a"}),
            json!({"low": "ü".repeat(40), "high": "a", "note": "n"}),
            json!({"low": "z", "high": "", "note": "x".repeat(200)}),
        ];
        assert_none(compare::<Range>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Range>(&schema, true, cases, &always_fail));
    }

    // ---- the undo buffer's edges -----------------------------------------------------------

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Many {
        a: Option<String>,
        b: Option<String>,
        c: Option<String>,
        d: Option<String>,
        e: Option<String>,
        f: Option<String>,
        n: Option<u8>,
    }

    fn edge_cases() -> Vec<Value> {
        let x = |n: usize| "x".repeat(n);
        vec![
            json!({"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "6"}),
            json!({"a": x(64), "b": x(64), "c": "c"}),
            json!({"a": x(64), "b": x(63), "c": "é"}),
            json!({"a": x(126), "b": "é"}),
            json!({"a": x(127), "b": "é", "c": "c"}),
            json!({"a": x(125), "b": "€", "c": ""}),
            json!({"a": x(124), "b": "😀", "c": "d"}),
            json!({"a": x(125), "b": "😀", "c": "d"}),
            json!({"a": x(128), "b": "b"}),
            json!({"a": x(129), "b": "b"}),
            json!({"a": "", "b": "", "c": "", "d": "", "e": "", "f": ""}),
            json!({"a": "short", "b": x(300), "c": "c", "d": "d", "e": "e", "n": 255}),
            json!({"a": "é".repeat(64), "b": "b", "n": 1}),
            json!({"a": "a\u{0}b", "b": "\u{10FFFF}", "n": 0}),
        ]
    }

    #[test]
    fn undo_buffer_edges() {
        let schema = schema_of::<Many>();
        assert_none(compare::<Many>(&schema, true, edge_cases(), &no_rules));
        assert_none(compare::<Many>(&schema, true, edge_cases(), &always_fail));
        let fail_on_f = |m: &Many| {
            m.f.as_deref().is_some_and(|f| f == "6").then(|| {
                let mut errors = validator::ValidationErrors::new();
                errors.add("f", validator::ValidationError::new("no_six"));
                errors
            })
        };
        assert_none(compare::<Many>(&schema, true, edge_cases(), &fail_on_f));
        let fail_on_a_and_b = |m: &Many| {
            m.a.as_deref().is_some_and(|a| !a.is_empty()).then(|| {
                let mut errors = validator::ValidationErrors::new();
                errors.add("a", validator::ValidationError::new("no_a"));
                errors.add("b", validator::ValidationError::new("no_b"));
                errors
            })
        };
        assert_none(compare::<Many>(
            &schema,
            true,
            edge_cases(),
            &fail_on_a_and_b,
        ));
        // The same with `b` a secret: a rule failure must not echo it.
        let mut secret = schema.clone();
        secret["properties"]["b"]["writeOnly"] = json!(true);
        let out = compare::<Many>(&secret, true, edge_cases(), &fail_on_a_and_b);
        assert_none(out);
        // Out of the fast subset (bounds): the shared path on both sides.
        let slow = vec![
            json!({"a": "short", "b": "x".repeat(300), "c": "c", "d": "d", "e": "e", "n": 300}),
            json!({"a": "a", "b": "b", "c": "c", "d": "d", "e": "e", "n": -1}),
        ];
        assert_none(compare::<Many>(&schema, false, slow, &always_fail));
    }

    /// More entries than an `Undo` position can say (a `u8`): strings past position 255.
    #[test]
    fn strings_past_position_255() {
        let mut properties = serde_json::Map::new();
        let mut args = serde_json::Map::new();
        for i in 0..300 {
            let name = format!("k{i:03}");
            properties.insert(name.clone(), json!({"type": ["string", "integer"]}));
            let value = if i < 254 {
                json!(i)
            } else {
                json!(format!("s{i}"))
            };
            args.insert(name, value);
        }
        let schema = json!({"type": "object", "properties": properties,
                            "additionalProperties": false});
        let cases = vec![Value::Object(args)];
        assert_none(compare::<BTreeMap<String, Value>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<BTreeMap<String, Value>>(
            &schema,
            true,
            cases,
            &always_fail,
        ));
    }

    // ---- enums at the top level, under a fast schema ----------------------------------------

    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum Untagged {
        Num { name: u32 },
        Text { name: String, note: Option<String> },
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind")]
    enum Internal {
        A { name: String },
        B { note: String },
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind", content = "name")]
    enum Adjacent {
        A(String),
        B(u8),
        C,
    }

    #[test]
    fn enums_at_the_top() {
        let schema = strings_schema(&["name", "note", "kind"], &[]);
        let cases = vec![
            json!({"name": "n", "note": "x"}),
            json!({"name": "n", "kind": "A"}),
            json!({"note": "n", "kind": "B"}),
            json!({"kind": "C"}),
            json!({"kind": "B", "name": "b"}),
            json!({"kind": "Z", "name": "x".repeat(200)}),
            json!({"name": "é".repeat(70), "kind": "A"}),
        ];
        assert_none(compare::<Untagged>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Untagged>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Internal>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Internal>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Adjacent>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Adjacent>(&schema, true, cases, &always_fail));
    }

    // ---- a field type that ignores its deserializer ----------------------------------------

    #[derive(Debug)]
    struct Ignores;
    impl<'de> Deserialize<'de> for Ignores {
        fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Ignores, D::Error> {
            Ok(Ignores)
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct WithIgnores {
        name: Ignores,
        note: Option<String>,
        count: Option<u8>,
    }

    #[test]
    fn a_field_that_drops_its_deserializer() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "note": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["name"], "additionalProperties": false});
        let cases = vec![
            json!({"name": "dropped", "note": "n"}),
            json!({"name": "dropped", "note": "n", "count": 300}),
        ];
        assert_none(compare::<WithIgnores>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<WithIgnores>(&schema, true, cases, &always_fail));
    }

    // ---- map keys and ignored fields ---------------------------------------------------------

    #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    enum KeyEnum {
        A,
        B,
    }

    #[test]
    fn map_keys_and_ignored_fields() {
        let schema = strings_schema(
            &["1", "2", "A", "B", "x", "name", "note", "aaa", "zzz"],
            &[],
        );
        let cases = vec![
            json!({"1": "one", "2": "two"}),
            json!({"1": "one", "x": "two"}),
            json!({"A": "a", "B": "b"}),
            json!({"A": "a", "x": "b"}),
            json!({"aaa": "ignored", "name": "n", "note": "m", "zzz": "ignored"}),
            json!({"aaa": "ignored", "1": "i", "2": "j", "name": "n", "note": "m"}),
        ];
        assert_none(compare::<BTreeMap<u8, String>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<BTreeMap<u8, String>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<BTreeMap<KeyEnum, String>>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<BTreeMap<KeyEnum, String>>(
            &schema,
            true,
            cases.clone(),
            &always_fail,
        ));
        assert_none(compare::<Plain>(&schema, true, cases.clone(), &no_rules));
        assert_none(compare::<Plain>(&schema, true, cases, &always_fail));
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct FlattenedDeny {
        name: String,
        #[serde(flatten)]
        inner: Inner,
    }

    #[test]
    fn flattened_with_deny_unknown_fields() {
        let schema = strings_schema(&["name", "b", "c", "x"], &[]);
        let cases = vec![
            json!({"name": "a", "b": "b"}),
            json!({"name": "a", "b": "b", "x": "y"}),
            json!({"name": "a", "b": "b", "c": "1"}),
            json!({"b": "b"}),
        ];
        assert_none(compare::<FlattenedDeny>(
            &schema,
            true,
            cases.clone(),
            &no_rules,
        ));
        assert_none(compare::<FlattenedDeny>(&schema, true, cases, &always_fail));
    }

    // ---- a proptest at the undo buffer's edges ---------------------------------------------

    use proptest::prelude::*;

    /// Strings whose lengths land around the undo buffer's edges, with multibyte characters.
    fn edge_text() -> impl Strategy<Value = String> {
        prop_oneof![
            (0usize..130, "[éü€😀]{0,3}").prop_map(|(n, tail)| format!("{}{tail}", "x".repeat(n))),
            "\\PC{0,40}",
            Just(String::new()),
        ]
    }

    fn edge_args() -> impl Strategy<Value = Value> {
        let field = prop_oneof![
            3 => edge_text().prop_map(Value::String),
            1 => Just(Value::Null),
        ];
        (
            proptest::collection::btree_map(
                prop_oneof![
                    Just("a"),
                    Just("b"),
                    Just("c"),
                    Just("d"),
                    Just("e"),
                    Just("f")
                ],
                field,
                0..7,
            ),
            proptest::option::of(0u8..=255),
        )
            .prop_map(|(strings, n)| {
                let mut map: serde_json::Map<String, Value> = strings
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                if let Some(n) = n {
                    map.insert("n".to_owned(), json!(n));
                }
                Value::Object(map)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn many_strings_answer_as_the_shared_path(args in edge_args(), fail in 0u8..8) {
            let schema = schema_of::<Many>();
            let rules = move |m: &Many| {
                let field = ["a", "b", "c", "d", "e", "f", "n", "name"][usize::from(fail)];
                (m.n.is_none_or(|n| n % 2 == 0)).then(|| {
                    let mut errors = validator::ValidationErrors::new();
                    errors.add(field, validator::ValidationError::new("odd"));
                    errors
                })
            };
            // Reversed too: keys out of order when serde_json's `preserve_order` is on.
            let reversed: serde_json::Map<String, Value> = args
                .as_object()
                .unwrap()
                .iter()
                .rev()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let cases = vec![args.clone(), Value::Object(reversed)];
            let out = compare::<Many>(&schema, true, cases, &rules);
            prop_assert!(out.is_empty(), "{}", out.join("\n"));
            let out = compare::<Odd>(&schema_of::<Odd>(), false, vec![args], &no_rules);
            prop_assert!(out.is_empty(), "{}", out.join("\n"));
        }
    }
}
