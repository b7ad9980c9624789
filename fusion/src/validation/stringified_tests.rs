use serde_json::{Value, json};

use super::super::ArgumentValidator;

/// The arguments after decoding against `schema`, and the fields decoded (`path: type`).
fn decoded(schema: Value, args: Value) -> (Value, Vec<String>) {
    decoded_within(schema, args, None)
}

fn decoded_within(schema: Value, args: Value, max_bytes: Option<usize>) -> (Value, Vec<String>) {
    let validator = ArgumentValidator::new("t.a", &schema).unwrap();
    let mut args = args.as_object().unwrap().clone();
    let decoded = validator.decode_stringified(&mut args, max_bytes);
    assert_eq!(decoded.too_deep, None);
    let fields = (decoded.fields.iter())
        .map(|f| format!("{}: {}", f.path.render(), f.json_type))
        .collect();
    (Value::Object(args), fields)
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn every_json_type_but_string_and_null_is_decoded_where_it_is_wanted() {
    let schema = object(json!({
        "items": {"type": "array", "items": {"type": "integer"}},
        "address": {"type": "object", "properties": {"zip": {"type": "string"}}},
        "qty": {"type": "integer"},
        "price": {"type": "number"},
        "gift": {"type": "boolean"},
        "note": {"type": ["string", "null"]},
        "maybe": {"type": ["integer", "null"]}
    }));
    let (args, fields) = decoded(
        schema,
        json!({
            "items": "[1, 2]",
            "address": " {\"zip\": \"75001\"} ",
            "qty": "3",
            "price": "-2.5",
            "gift": "true",
            "note": "[1]",
            "maybe": "null"
        }),
    );
    assert_eq!(
        args,
        json!({
            "items": [1, 2],
            "address": {"zip": "75001"},
            "qty": 3,
            "price": -2.5,
            "gift": true,
            "note": "[1]",
            "maybe": "null"
        })
    );
    assert_eq!(
        fields,
        [
            "address: object",
            "gift: boolean",
            "items: array",
            "price: number",
            "qty: integer"
        ]
    );
}

#[test]
fn numbers_follow_json_schema_on_integers() {
    let schema = object(json!({"n": {"type": "integer"}, "x": {"type": "number"}}));
    let (args, fields) = decoded(schema.clone(), json!({"n": "2.0", "x": "2"}));
    assert_eq!(args, json!({"n": 2.0, "x": 2}));
    // Named by the type the place wants, not by how the number was written.
    assert_eq!(fields, ["n: integer", "x: number"]);
    let (args, fields) = decoded(schema, json!({"n": "2.5", "x": "1e400"}));
    assert_eq!(args, json!({"n": "2.5", "x": "1e400"}), "{fields:?}");
    assert!(fields.is_empty());
}

#[test]
fn strings_wherever_a_string_is_allowed_are_never_parsed() {
    let schema = object(json!({
        "name": {"type": "string"},
        "code": {"type": "string", "enum": ["[1]", "true"]},
        "anything": {},
        "either": {"anyOf": [{"type": "array"}, {"type": "string"}]},
        "via_ref": {"$ref": "#/$defs/Text"},
        "open": true
    }));
    let mut schema = schema;
    schema["$defs"] = json!({"Text": {"type": "string"}});
    let sent = json!({
        "name": "[\"looks\", \"like\", \"json\"]",
        "code": "[1]",
        "anything": "{\"a\": 1}",
        "either": "[1, 2]",
        "via_ref": "42",
        "open": "true"
    });
    let (args, fields) = decoded(schema, sent.clone());
    assert_eq!(args, sent);
    assert!(fields.is_empty(), "{fields:?}");
}

#[test]
fn json_of_a_type_the_place_refuses_and_text_that_is_not_json_are_left_alone() {
    let schema = object(json!({
        "qty": {"type": "integer"},
        "items": {"type": "array"},
        "flag": {"type": "boolean"},
        "address": {"type": "object"}
    }));
    for sent in [
        json!({"qty": "[1]", "items": "{\"a\": 1}", "flag": "1", "address": "[]"}),
        json!({"qty": "12abc", "items": "[1, 2", "flag": "tru", "address": "{'a': 1}"}),
        json!({"qty": "null", "items": "\"[1]\"", "flag": "", "address": "  "}),
    ] {
        let (args, fields) = decoded(schema.clone(), sent.clone());
        assert_eq!(args, sent);
        assert!(fields.is_empty(), "{fields:?}");
    }
}

#[test]
fn refs_branches_and_nested_places_are_followed() {
    let schema = json!({
        "type": "object",
        "properties": {
            "order": {"$ref": "#/$defs/Order"},
            "shipping": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
            "counts": {
                "type": "object",
                "patternProperties": {"^\\d+$": {"type": "integer"}}
            },
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
        },
        "$defs": {
            "Order": {
                "type": "object",
                "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}}}
            },
            "Line": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}
            },
            "Address": {"type": "object", "properties": {"zip": {"type": "string"}}}
        }
    });
    let (args, fields) = decoded(
        schema,
        json!({
            "order": {"lines": [{"sku": "1", "qty": "2"}, "{\"sku\": \"2\", \"qty\": \"3\"}"]},
            "shipping": "{\"zip\": \"10115\"}",
            "counts": {"7": "8"},
            "pair": ["5", "6"]
        }),
    );
    assert_eq!(
        args,
        json!({
            "order": {"lines": [{"sku": "1", "qty": 2}, {"sku": "2", "qty": 3}]},
            "shipping": {"zip": "10115"},
            "counts": {"7": 8},
            "pair": ["5", 6]
        })
    );
    assert_eq!(
        fields,
        [
            "counts.7: integer",
            "order.lines[0].qty: integer",
            "order.lines[1]: object",
            "order.lines[1].qty: integer",
            "pair[1]: integer",
            "shipping: object"
        ]
    );
}

#[test]
fn a_stringified_array_of_stringified_objects_is_decoded_both_times() {
    let schema = object(json!({
        "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}}
    }));
    let inner = json!({"qty": 1}).to_string();
    let outer = serde_json::to_string(&vec![inner]).unwrap();
    let (args, fields) = decoded(schema, json!({ "items": outer }));
    assert_eq!(args, json!({"items": [{"qty": 1}]}));
    assert_eq!(fields, ["items: array", "items[0]: object"]);
}

#[test]
fn unknown_fields_and_the_discriminator_are_never_decoded() {
    let schema = object(json!({"qty": {"type": "integer"}}));
    let sent = json!({"action": "1", "qtty": "[1]"});
    let (args, fields) = decoded(schema, sent.clone());
    assert_eq!(args, sent);
    assert!(fields.is_empty());
}

#[test]
fn strings_over_the_byte_limit_are_left_alone_and_deep_ones_reach_validation() {
    let schema = object(json!({"items": {"type": "array"}}));
    let long = format!("[{}1]", "1, ".repeat(100));
    let (args, fields) = decoded_within(schema.clone(), json!({ "items": long }), Some(100));
    assert_eq!(args["items"], long);
    assert!(fields.is_empty());
    let (args, _) = decoded_within(schema.clone(), json!({ "items": long }), Some(1000));
    assert_eq!(args["items"].as_array().unwrap().len(), 101);

    // Nested 100 levels, it is decoded; validation then refuses the depth, as for sent JSON.
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let (args, fields) = decoded(schema.clone(), json!({ "items": deep }));
    assert_eq!(fields, ["items: array"]);
    let validator = ArgumentValidator::new("t.a", &schema).unwrap();
    let error = validator.check(&args);
    assert!(
        error.to_xml().contains("Arguments nested too deeply"),
        "{}",
        error.to_xml()
    );
}

#[test]
fn json_deeper_than_the_parser_reads_is_measured_by_its_brackets() {
    let schema = object(json!({"items": {"type": "array"}, "note": {"type": "string"}}));
    let validator = ArgumentValidator::new("t.a", &schema).unwrap();
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    // 127 levels are read; from 128 on, serde_json stops: the string stays, and the depth the
    // arguments would have (the arguments object is one more level) is reported.
    let mut args = json!({ "items": nested(127) }).as_object().unwrap().clone();
    let read = validator.decode_stringified(&mut args, None);
    assert!(args["items"].is_array());
    assert_eq!(read.too_deep, None);
    for levels in [128, 130, 5000] {
        let sent = json!({ "items": nested(levels), "note": "[[[" });
        let mut args = sent.as_object().unwrap().clone();
        let read = validator.decode_stringified(&mut args, None);
        assert_eq!(Value::Object(args), sent);
        assert_eq!(read.too_deep, Some(levels + 1));
        assert_eq!(read.fields.len(), 1);
        assert_eq!(read.fields[0].json_type, "array");
    }
    // Brackets inside string literals do not count.
    let quoted = format!(
        "[\"{}\\\"{}\", {}]",
        "[".repeat(300),
        "{".repeat(300),
        nested(130)
    );
    let mut args = json!({ "items": quoted }).as_object().unwrap().clone();
    assert_eq!(
        validator.decode_stringified(&mut args, None).too_deep,
        Some(132)
    );
    // A validator allowing the depth gets no refusal: the string is left as sent.
    let lenient = ArgumentValidator::new("t.a", &schema)
        .unwrap()
        .max_depth(1000);
    let mut args = json!({ "items": nested(130) }).as_object().unwrap().clone();
    let read = lenient.decode_stringified(&mut args, None);
    assert_eq!((read.too_deep, read.fields.len()), (None, 0));
}

#[test]
fn arguments_nested_deeper_than_the_stack_are_walked_without_recursion() {
    let schema = object(json!({"deep": {"type": "array"}}));
    let mut deep = json!("[1]");
    for _ in 0..100_000 {
        deep = Value::Array(vec![deep]);
    }
    let validator = ArgumentValidator::new("t.a", &schema).unwrap();
    let mut args = serde_json::Map::new();
    args.insert("deep".into(), deep);
    assert!(
        validator
            .decode_stringified(&mut args, None)
            .fields
            .is_empty()
    );
    // Dropping a value this deep recurses in serde_json; leak it rather than test that.
    std::mem::forget(args);
}
