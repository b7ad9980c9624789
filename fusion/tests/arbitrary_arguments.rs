//! The validation formatter on arbitrary JSON against a schema with constraints: never a panic,
//! always a well-formed `<validation_error>` envelope with one line per problem. The proptest
//! twin of the `validation` fuzz target (`fuzz/`); both use `tests/support/constrained.rs`.
//! An input a fuzzer finds failing goes below as a named regression test (none found so far).

#[path = "support/constrained.rs"]
#[allow(
    unreachable_pub,
    dead_code,
    reason = "public for the fuzz crate, which includes the file too; fields exist for the schema"
)]
mod constrained;

use constrained::{check_arguments, validator};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Keys: the fields of `Constrained` (so nested values reach the deeper checks) or anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "username", "email", "age", "country", "plan", "tags", "discount", "address",
            "zip", "city", "items", "sku", "quantity", "note", "shape", "kind", "r", "w", "h",
            "counts", "1", "300", "-1", "target", "id", "name", "command", "Move", "Wait", "x",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ]
}

/// Any JSON value, a few levels deep, with strings that stress escaping.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::from),
        prop::sample::select(vec![
            "]]>",
            "&amp;",
            "<x>",
            "\u{0}\u{1f}",
            "\u{FFFF}",
            "a@b",
            "pro",
            "circle",
            "rect",
            "dot",
            "Stop"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_arguments_object_renders_a_well_formed_envelope(
        pairs in prop::collection::vec((key(), any_json()), 0..12)
    ) {
        let arguments = Value::Object(pairs.into_iter().collect());
        check_arguments(&validator(), &arguments).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_json_value_renders_a_well_formed_envelope(arguments in any_json()) {
        check_arguments(&validator(), &arguments).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn the_constrained_schema_reports_every_field_in_one_envelope() {
    let arguments = json!({
        "username": "x", "email": "no", "age": 7, "country": "usa", "plan": "gold",
        "tags": [], "discount": 2.5, "address": {"zip": "1", "city": "Paris"},
        "items": [{"sku": "a", "quantity": 0}], "extra": 1,
        "shape": {"kind": "rect", "w": 1}, "counts": {"x": 1}, "target": {"id": "7"},
        "command": {"Move": {"x": "left"}},
    });
    check_arguments(&validator(), &arguments).unwrap();
    let error = validator().check(&arguments);
    let paths: Vec<&str> = error.problems().iter().map(|p| p.path()).collect();
    for field in [
        "username",
        "age",
        "country",
        "plan",
        "tags",
        "discount",
        "address.zip",
        "shape.h",
        "counts.x",
        "target.id",
        "command.Move.x",
    ] {
        assert!(paths.contains(&field), "{field} missing from {paths:?}");
    }
}

/// The formatter around its cut (50 characters, 47 kept) and the escaper's block edges: a
/// string of 0 to 70 characters, with one tricky character (a forbidden control, an XML
/// special, U+FFFE, a 4-byte character, `]]>`) at every position, sent in every kind of place
/// (a checked string, a secret, a pattern, an array element, a nested object, an unknown key
/// and its value, a `validator` rule, a free-form note): well-formed, one line per problem.
#[test]
fn strings_around_the_cut_and_the_block_edges_render_well_formed() {
    let validator = validator();
    let tricky = ["\u{1F}", "<", "\"", "\u{FFFF}", "🚫", "]]>"];
    for special in tricky {
        for len in 0..=70usize {
            for at in 0..=len {
                let s: String = (0..len)
                    .map(|i| if i == at { special } else { "é" })
                    .collect::<String>()
                    + if at == len { special } else { "" };
                let arguments = json!({
                    "username": s, "email": s, "age": 7, "country": s, "plan": s,
                    "tags": [s, s], "discount": s,
                    "address": {"zip": s, "city": s, s.clone(): s},
                    "items": [{"sku": s, "quantity": 0}, s],
                    "note": {s.clone(): [s]},
                    s.clone(): s,
                });
                check_arguments(&validator, &arguments)
                    .unwrap_or_else(|problem| panic!("{special:?} at {at} of {len}: {problem}"));
            }
        }
    }
}
