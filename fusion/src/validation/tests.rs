//! Unit tests of the envelope and of the schema wording: rendering, ordering, escaping, flags,
//! and one exact line per structural problem kind.

use serde_json::{Value, json};

use super::*;

const CLOSE: &str = "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";

/// The only problem `args` has against `schema`, as `(path, line)`.
fn only(schema: Value, args: Value) -> (String, String) {
    let validator = ArgumentValidator::new("t", &schema).unwrap();
    let err = validator.check(&args);
    assert_eq!(err.len(), 1, "{err}");
    let p = &err.problems()[0];
    (p.path().to_owned(), p.line().to_owned())
}

fn pair(path: &str, line: &str) -> (String, String) {
    (path.to_owned(), line.to_owned())
}

#[test]
fn empty_envelope_still_has_recovery() {
    assert_eq!(
        ValidationError::new("billing").to_xml(),
        format!("<validation_error action=\"billing\">\n{CLOSE}")
    );
}

#[test]
fn write_xml_appends() {
    let err = ValidationError::new("a").with_problem("b", "c");
    let mut buf = String::from("prefix:");
    err.write_xml(&mut buf);
    assert_eq!(buf, format!("prefix:{}", err.to_xml()));
}

#[test]
fn problems_sort_by_path_and_keep_insertion_order_for_ties() {
    let err = ValidationError::new("t")
        .with_problem("items[10].sku", "4")
        .with_problem("name", "1")
        .with_problem("items[2].sku", "3")
        .with_problem("name", "2")
        .with_problem("(root)", "0")
        .with_problem("address.zip", "5");
    let order: Vec<(&str, &str)> = err
        .problems()
        .iter()
        .map(|p| (p.path(), p.line()))
        .collect();
    assert_eq!(
        order,
        [
            ("(root)", "0"),
            ("address.zip", "5"),
            ("items[2].sku", "3"),
            ("items[10].sku", "4"),
            ("name", "1"),
            ("name", "2"),
        ]
    );
}

#[test]
fn merge_keeps_the_order() {
    let mut a = ValidationError::new("t").with_problem("b", "1");
    a.merge(ValidationError::new("other").with_problem("a", "2"));
    assert_eq!(a.action(), "t");
    assert_eq!(a.problems()[0], FieldProblem::new("a", "2"));
}

#[test]
fn flags_are_fixed_and_in_tool_error_key_order() {
    let flags = ValidationError::new("t").flags();
    assert_eq!(
        flags,
        json!({"isError": true, "errorCategory": "validation", "isRetryable": false,
               "code": "VALIDATION_ERROR", "severity": "error"})
    );
    let keys: Vec<&String> = flags.as_object().unwrap().keys().collect();
    // Without serde_json's preserve_order the map sorts keys; either way the set is exact.
    assert_eq!(keys.len(), 5);
}

#[test]
fn display_is_one_log_line() {
    let err = ValidationError::new("billing.charge")
        .with_problem("a", "A.")
        .with_problem("b", "B.");
    assert_eq!(
        err.to_string(),
        "VALIDATION_ERROR: billing.charge: a: A.; b: B."
    );
}

// --- one exact line per structural problem kind ------------------------------------------

#[test]
fn one_line_per_problem_kind() {
    let cases = [
        (
            "type mismatch",
            json!({"properties": {"n": {"type": "number"}}}),
            json!({"n": "abc"}),
            "n",
            "Wrong type. You sent: 'abc'. Expected a number.",
        ),
        (
            "type mismatch with several types",
            json!({"properties": {"n": {"type": ["string", "integer", "null"]}}}),
            json!({"n": true}),
            "n",
            "Wrong type. You sent: true. Expected a string, an integer or null.",
        ),
        (
            "arguments that are not an object",
            json!({"type": "object", "properties": {}}),
            json!([1, 2]),
            "(root)",
            "Wrong type. You sent: array(2). Expected an object.",
        ),
        (
            "required field",
            json!({"properties": {"id": {"type": "string"}}, "required": ["id"]}),
            json!({}),
            "id",
            "Missing required field. You sent: (missing). Expected a string.",
        ),
        (
            "unknown field is denied by default",
            json!({"properties": {"amount": {}, "currency": {}}}),
            json!({"amout": 5}),
            "amout",
            "Unknown field. You sent: 5. Expected one of the known fields: amount, currency (did you mean 'amount'?).",
        ),
        (
            "unknown field without a close name",
            json!({"properties": {"amount": {}}, "additionalProperties": false}),
            json!({"zzz": null}),
            "zzz",
            "Unknown field. You sent: null. Expected one of the known fields: amount.",
        ),
        (
            "enum lists the allowed values",
            json!({"properties": {"c": {"enum": ["EUR", "USD"]}}}),
            json!({"c": "eur"}),
            "c",
            "Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'.",
        ),
        (
            "const names the value",
            json!({"properties": {"v": {"const": 2}}}),
            json!({"v": 3}),
            "v",
            "Value not allowed. You sent: 3. Expected exactly 2.",
        ),
        (
            "oneOf of documented enum variants",
            json!({"properties": {"k": {"oneOf": [{"const": "a"}, {"const": "b"}]}}}),
            json!({"k": "c"}),
            "k",
            "Value not allowed. You sent: 'c'. Expected one of: 'a', 'b'.",
        ),
        (
            "anyOf of shapes",
            json!({"properties": {"k": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}),
            json!({"k": 1.5}),
            "k",
            "Wrong type. You sent: 1.5. Expected a string or an integer.",
        ),
        (
            "string too short",
            json!({"properties": {"s": {"minLength": 3, "maxLength": 4}}}),
            json!({"s": "ab"}),
            "s",
            "Too short. You sent: 'ab'. Expected at least 3 characters.",
        ),
        (
            "string too long",
            json!({"properties": {"s": {"minLength": 3, "maxLength": 4}}}),
            json!({"s": "abcde"}),
            "s",
            "Too long. You sent: 'abcde'. Expected at most 4 characters.",
        ),
        (
            "too few items",
            json!({"properties": {"a": {"minItems": 2, "maxItems": 3, "uniqueItems": true}}}),
            json!({"a": [1]}),
            "a",
            "Too few items. You sent: array(1). Expected at least 2 items.",
        ),
        (
            "too many items",
            json!({"properties": {"a": {"minItems": 2, "maxItems": 3, "uniqueItems": true}}}),
            json!({"a": [1, 2, 3, 4]}),
            "a",
            "Too many items. You sent: array(4). Expected at most 3 items.",
        ),
        (
            "duplicate items",
            json!({"properties": {"a": {"minItems": 2, "maxItems": 3, "uniqueItems": true}}}),
            json!({"a": [1, 1]}),
            "a",
            "Duplicate items. You sent: array(2). Expected every item to be unique.",
        ),
        (
            "too few fields",
            json!({"properties": {"o": {"minProperties": 1}}}),
            json!({"o": {}}),
            "o",
            "Too few fields. You sent: {}. Expected at least 1 field.",
        ),
        (
            "pattern is quoted literally",
            json!({"properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}),
            json!({"code": "eu"}),
            "code",
            "Does not match the required pattern. You sent: 'eu'. Expected text matching the pattern '^[A-Z]{3}$'.",
        ),
        (
            "contains",
            json!({"properties": {"a": {"contains": {"const": 1}}, "b": {"not": {"const": 0}}}}),
            json!({"a": [2]}),
            "a",
            "No matching item. You sent: array(1). Expected at least one item of the required kind.",
        ),
        (
            "not",
            json!({"properties": {"a": {"contains": {"const": 1}}, "b": {"not": {"const": 0}}}}),
            json!({"b": 0}),
            "b",
            "Value not allowed. You sent: 0. Expected a different value.",
        ),
        (
            "nested refs give dotted paths",
            json!({
                "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
                "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}}
            }),
            json!({"items": [{"sku": "a"}, {}]}),
            "items[1].sku",
            "Missing required field. You sent: (missing). Expected a string.",
        ),
        (
            "nested unknown fields suggest the nested names",
            json!({
                "properties": {"address": {"$ref": "#/$defs/Address"}},
                "$defs": {"Address": {"properties": {"zip": {}}, "additionalProperties": false}}
            }),
            json!({"address": {"zp": 1}}),
            "address.zp",
            "Unknown field. You sent: 1. Expected one of the known fields: zip (did you mean 'zip'?).",
        ),
    ];
    for (case, schema, args, path, line) in cases {
        assert_eq!(only(schema, args), pair(path, line), "{case}");
    }
}

#[test]
fn additional_properties_stay_allowed_when_the_schema_says_so() {
    let schema = json!({"properties": {"a": {}}, "additionalProperties": true});
    assert!(
        ArgumentValidator::new("t", &schema)
            .unwrap()
            .check(&json!({"b": 1}))
            .is_empty()
    );
}

#[test]
fn numeric_bounds() {
    let schema = |kw: &str| json!({"properties": {"n": {kw: 10}}});
    let cases = [
        (
            "minimum",
            1,
            "Number too small. You sent: 1. Expected a number >= 10.",
        ),
        (
            "exclusiveMinimum",
            10,
            "Number too small. You sent: 10. Expected a number > 10.",
        ),
        (
            "maximum",
            11,
            "Number too large. You sent: 11. Expected a number <= 10.",
        ),
        (
            "exclusiveMaximum",
            10,
            "Number too large. You sent: 10. Expected a number < 10.",
        ),
        (
            "multipleOf",
            15,
            "Number not allowed. You sent: 15. Expected a multiple of 10.",
        ),
    ];
    for (kw, n, line) in cases {
        assert_eq!(only(schema(kw), json!({"n": n})), pair("n", line), "{kw}");
    }
}

#[test]
fn formats_are_asserted() {
    let schema = |f: &str| json!({"properties": {"v": {"type": "string", "format": f}}});
    let cases = [
        (
            "email",
            "Invalid email format. You sent: 'x'. Expected a valid email address.",
        ),
        (
            "date",
            "Invalid date format. You sent: 'x'. Expected a date such as '2026-01-31'.",
        ),
        (
            "uuid",
            "Invalid UUID format. You sent: 'x'. Expected a UUID such as '123e4567-e89b-12d3-a456-426614174000'.",
        ),
    ];
    for (format, line) in cases {
        assert_eq!(
            only(schema(format), json!({"v": "x"})),
            pair("v", line),
            "{format}"
        );
    }
}

#[test]
fn unknown_fields_next_to_composition_use_unevaluated_properties() {
    let schema = json!({
        "properties": {"a": {}},
        "allOf": [{"properties": {"b": {}}}]
    });
    let validator = ArgumentValidator::new("t", &schema).unwrap();
    assert!(validator.check(&json!({"a": 1, "b": 2})).is_empty());
    assert_eq!(
        validator.check(&json!({"a": 1, "bb": 2})).problems()[0].line(),
        "Unknown field. You sent: 2. Expected one of the known fields: a, b (did you mean 'b'?)."
    );
}

// --- redaction, closing nested objects, line shape -----------------------------------------

#[test]
fn nested_objects_are_closed_with_the_keyword_their_draft_knows() {
    let nested = |draft: Option<&str>| {
        let mut schema = json!({
            "properties": {
                "plain": {"properties": {"b": {}}},
                "composed": {"properties": {"x": {}}, "allOf": [{"properties": {"c": {}}}]},
                "list": {"items": {"properties": {"d": {}}}}
            }
        });
        if let Some(draft) = draft {
            schema["$schema"] = json!(draft);
        }
        ArgumentValidator::new("t", &schema).unwrap()
    };
    let args = json!({
        "plain": {"b": 1, "zz": 1},
        "composed": {"x": 1, "c": 1, "zz": 1},
        "list": [{"d": 1, "zz": 1}]
    });
    let paths = |err: ValidationError| -> Vec<String> {
        err.problems().iter().map(|p| p.path().to_owned()).collect()
    };
    for draft in [None, Some("https://json-schema.org/draft/2020-12/schema")] {
        assert_eq!(
            paths(nested(draft).check(&args)),
            ["composed.zz", "list[0].zz", "plain.zz"],
            "{draft:?}"
        );
    }
    // Draft 7 has no `unevaluatedProperties`: the composed object stays open.
    assert_eq!(
        paths(nested(Some("http://json-schema.org/draft-07/schema#")).check(&args)),
        ["list[0].zz", "plain.zz"]
    );
}

#[test]
fn schemas_combined_with_other_fields_stay_open() {
    let schema = json!({
        "properties": {
            "a": {"allOf": [{"$ref": "#/$defs/B"}], "properties": {"x": {}}},
            "t": {"$ref": "#/$defs/Alias", "properties": {"kind": {}}},
            "b": {"$ref": "#/$defs/B"}
        },
        "$defs": {
            "B": {"properties": {"b": {}}},
            "Alias": {"$ref": "#/$defs/C"},
            "C": {"properties": {"c": {}}}
        }
    });
    let validator = ArgumentValidator::new("t", &schema).unwrap();
    assert!(
        validator
            .check(&json!({"a": {"x": 1, "b": 1}, "t": {"kind": 1, "c": 1}}))
            .is_empty()
    );
    let err = validator
        .check(&json!({"a": {"x": 1, "b": 1, "zz": 1}, "t": {"kind": 1, "c": 1, "zz": 1}}));
    assert_eq!(
        err.problems()
            .iter()
            .map(|p| (p.path(), p.line()))
            .collect::<Vec<_>>(),
        [
            (
                "a.zz",
                "Unknown field. You sent: 1. Expected one of the known fields: b, x."
            ),
            (
                "t.zz",
                "Unknown field. You sent: 1. Expected one of the known fields: c, kind."
            ),
        ]
    );
    // `B` is combined in `a`, so it is open everywhere, `b` included.
    assert!(validator.check(&json!({"b": {"b": 1, "zz": 1}})).is_empty());
}

#[test]
fn copies_of_secret_numbers_and_strings_are_redacted_but_schema_words_are_not() {
    let schema = json!({"properties": {
        "pin": {"type": "integer"},
        "pw": {"type": "string"},
        "n": {"type": "string"},
        "c": {"enum": ["EUR", "USD"]},
        "o": {"type": "object", "properties": {"k": {}}, "minProperties": 9}
    }});
    let validator = ArgumentValidator::new("t", &schema)
        .unwrap()
        .secret("pin")
        .secret("pw");
    let err = validator.check(&json!({
        "pin": 123456,
        "pw": "EUR",
        "n": 123456,
        "c": "eur",
        "o": {"k": [1, "EUR", 123456, "eur"]}
    }));
    let lines: Vec<(&str, &str)> = err
        .problems()
        .iter()
        .map(|p| (p.path(), p.line()))
        .collect();
    assert_eq!(
        lines,
        [
            // The allowed values are the schema's, not what was sent: redacting the one equal
            // to the password would tell the reader the password.
            (
                "c",
                "Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'."
            ),
            ("n", "Wrong type. You sent: (redacted). Expected a string."),
            (
                "o",
                "Too few fields. You sent: {\"k\":[1,\"(redacted)\",\"(redacted)\",\"eur\"]}. Expected at least 9 fields."
            ),
        ]
    );
}
