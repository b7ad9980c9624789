//! What serde finds that the schema does not: its failures worded like the schema's, at the
//! path serde_path_to_error finds, and dropped where the schema already said it.

use fusion::validation::ArgumentValidator;
use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::fixtures::{Currency, LineItem, lines, validator_for};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Strict {
    amount: u32,
    currency: Currency,
}

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

/// A `Box<RawValue>` field (serde_json's `raw_value` feature, which a user's crate may turn on)
/// takes the value's JSON text, as with serde_json's own `&Value` deserializer.
#[test]
fn a_raw_value_field_takes_the_json_text() {
    #[derive(Debug, Deserialize)]
    struct Raw {
        a: u8,
        raw: Box<RawValue>,
        opt: Option<Box<RawValue>>,
    }
    let loose = ArgumentValidator::new("t", &json!({})).unwrap();
    let raw: Raw = loose
        .parse(&json!({"a": 1, "raw": {"x": [1, 2]}, "opt": [true]}))
        .unwrap();
    assert_eq!(raw.a, 1);
    assert_eq!(raw.raw.get(), r#"{"x":[1,2]}"#);
    assert_eq!(raw.opt.as_deref().map(RawValue::get), Some("[true]"));
    let err = loose
        .parse::<Raw>(&json!({"a": "x", "raw": 1}))
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [(
            "a",
            "Wrong type. You sent: 'x'. Expected an integer from 0 to 255."
        )]
    );
}
