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
