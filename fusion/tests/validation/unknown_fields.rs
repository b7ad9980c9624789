//! Unknown fields are refused at every level of nesting, with the fields that object knows and
//! a "did you mean" when one is close; objects combined with others (`flatten`, tagged enums)
//! stay open to the fields they are combined with.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use validator::Validate;

use fusion::validation::ArgumentValidator;

use crate::fixtures::{Invoice, assert_line_shapes, lines, valid_invoice, validator_for};

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

#[test]
fn a_hallucinated_field_next_to_a_one_field_action_gets_a_did_you_mean() {
    let schema = json!({"properties": {"id": {"type": "string"}}, "required": ["id"]});
    let err = ArgumentValidator::new("billing.get_invoice", &schema)
        .unwrap()
        .check(&json!({"id": "inv_2026_0001", "invoce_id": "x"}));
    assert_eq!(
        lines(&err),
        [(
            "invoce_id",
            "Unknown field. You sent: 'x'. Expected one of the known fields: id (did you mean 'id'?)."
        )]
    );
    assert_line_shapes(&err);
}

#[test]
fn a_long_unknown_field_name_is_cut_like_a_value() {
    let schema = json!({"properties": {"id": {"type": "string"}}});
    let key = "k".repeat(1_000_000);
    let mut args = serde_json::Map::new();
    args.insert(key, json!(1));
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&serde_json::Value::Object(args));
    let xml = err.to_xml();
    assert!(xml.len() < 1_000, "{} bytes", xml.len());
    assert_eq!(
        lines(&err),
        [(
            format!("{}...", "k".repeat(47)).as_str(),
            "Unknown field. You sent: 1. Expected one of the known fields: id."
        )]
    );
}

#[test]
fn unknown_field_lines_are_capped_and_the_rest_counted() {
    let schema = json!({"properties": {"id": {"type": "string"}}});
    let args: serde_json::Map<String, serde_json::Value> =
        (0..1000).map(|n| (format!("x{n:04}"), json!(n))).collect();
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&serde_json::Value::Object(args));
    let found = lines(&err);
    assert_eq!(found.len(), 11, "{err}");
    assert_eq!(
        found[0],
        (
            "(root)",
            "... and 990 more unknown fields, not listed. You sent: 1000 unknown fields. Expected only the fields the object knows (remove every unknown one)."
        )
    );
    assert_eq!(found[1].0, "x0000");
    assert_eq!(found[10].0, "x0009");
    assert!(err.to_xml().len() < 2_000, "{}", err.to_xml().len());
    assert_line_shapes(&err);
    // Ten or fewer are all listed.
    let ten: serde_json::Map<String, serde_json::Value> =
        (0..10).map(|n| (format!("x{n}"), json!(n))).collect();
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&serde_json::Value::Object(ten));
    assert_eq!(err.len(), 10);
}

#[test]
fn capped_unknown_fields_of_one_nested_object_are_counted_there() {
    let mut address = serde_json::Map::new();
    address.insert("city".into(), json!("Lyon"));
    for n in 0..12 {
        address.insert(format!("z{n:02}"), json!(n));
    }
    let err = validator_for::<Order>("shop.order").check(&json!({"address": address}));
    let found = lines(&err);
    assert_eq!(found.len(), 11, "{err}");
    assert_eq!(found[0].0, "address");
    assert!(
        found[0].1.starts_with("... and 2 more unknown fields"),
        "{err}"
    );
    assert_eq!(found[10].0, "address.z09");
}
