//! The contract model: fields, types, enums and constraints read from input schemas.

use std::collections::BTreeMap;

use super::*;

/// The fields read from `schema`, the input schema of the one action of a tool.
fn fields_of(schema: Value) -> BTreeMap<String, FieldContract> {
    let contract = Contract::from_definitions([&tool("t", vec![action("a", schema)])]);
    contract.tools["t"].actions["a"].fields.clone()
}

#[test]
fn model_reads_fields_types_enums_and_constraints() {
    let contract = billing(|_| {});
    let charge = &contract.tools["billing"].actions["charge"];
    assert_eq!(charge.required, ["amount_cents", "currency", "invoice_id"]);
    let currency = &charge.fields["currency"];
    assert!(currency.required);
    assert_eq!(currency.types, ["string"]);
    assert_eq!(
        currency.enum_values.as_deref(),
        Some(&["\"EUR\"".to_owned(), "\"USD\"".to_owned()][..])
    );
    assert_eq!(currency.description, "The currency.");
    assert_eq!(
        charge.fields["amount_cents"].constraints["minimum"],
        json!(1)
    );
    assert_eq!(charge.fields["note"].types, ["null", "string"]);
    assert!(!charge.fields["note"].required);
    let status = &contract.tools["billing"].actions["list"].fields["status"];
    assert_eq!(status.types, ["null", "string"]);
    assert_eq!(
        status.enum_values.as_deref(),
        Some(&["\"open\"".to_owned(), "\"paid\"".to_owned()][..])
    );
    assert_eq!(charge.errors[0].code, "NOT_FOUND");
    assert_eq!(charge.errors[0].category, "not_found");
}

#[test]
fn model_walks_nested_objects_and_arrays_and_survives_recursion() {
    let fields = fields_of(json!({
        "type": "object",
        "properties": {
            "address": {"$ref": "#/$defs/Address"},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "tree": {"$ref": "#/$defs/Node"},
        },
        "required": ["address"],
        "$defs": {
            "Address": {"type": "object", "properties": {"zip": {"type": "string", "minLength": 5}}, "required": ["zip"]},
            "Item": {"type": "object", "properties": {"sku": {"type": "string"}}},
            "Node": {"type": "object", "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}}},
        },
    }));
    let paths: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            "address",
            "address.zip",
            "items",
            "items[].sku",
            "tree",
            "tree.child"
        ]
    );
    assert!(fields["address.zip"].required);
    assert_eq!(fields["address.zip"].constraints["minLength"], json!(5));
}

/// A reference is a JSON Pointer in a URI fragment: schemars percent-encodes a renamed generic
/// (`Page<{T}>`), and `~1` / `~0` stand for `/` and `~`. Both used to leave the field unread.
#[test]
fn model_follows_escaped_references() {
    let fields = fields_of(json!({
        "type": "object",
        "properties": {
            "page": {"$ref": "#/$defs/Page%3CItem%3E"},
            "path": {"$ref": "#/$defs/a~1b"},
        },
        "$defs": {
            "Page<Item>": {"type": "object", "properties": {"next": {"type": "string"}}},
            "a/b": {"type": "string", "enum": ["x"]},
        },
    }));
    assert_eq!(fields["page"].types, ["object"]);
    assert_eq!(fields["page.next"].types, ["string"]);
    assert_eq!(fields["path"].types, ["string"]);
}

/// A recursive untagged type (`enum Json { Num(f64), List(Vec<Json>), Boxed(Box<Json>) }`)
/// has a `$ref` to itself among its own `anyOf` branches. Reading its fields used to recurse
/// until the stack overflowed (an abort, at server start with a baseline).
#[test]
fn model_survives_a_type_listing_itself_among_its_alternatives() {
    let schema = json!({
        "type": "object",
        "properties": {"j": {"anyOf": [{"$ref": "#/$defs/Json"}, {"type": "null"}]}},
        "$defs": {"Json": {"anyOf": [
            {"type": "number"},
            {"type": "array", "items": {"$ref": "#/$defs/Json"}},
            {"$ref": "#/$defs/Json"},
        ]}},
    });
    let j = &fields_of(schema)["j"];
    assert_eq!(j.types, ["array", "null", "number"]);
    assert!(!j.required);
}

#[test]
fn scopes_are_recorded_sorted_and_left_out_when_none() {
    let plain = billing(|_| {});
    let text = plain.to_lockfile();
    assert!(!text.contains("\"scopes\""), "{text}");
    let scoped = billing(|def| {
        def.actions[0].scopes = vec!["refunds".to_owned(), "invoices:write".to_owned()];
    });
    assert_eq!(
        scoped.tools["billing"].actions["charge"].scopes,
        ["invoices:write", "refunds"]
    );
    let text = scoped.to_lockfile();
    assert!(text.contains("\"scopes\": [\n"), "{text}");
    // The file reads back to the same contract.
    let read = crate::contract::Lockfile::parse(&text).unwrap();
    assert_eq!(read.contract(), &scoped);
}
