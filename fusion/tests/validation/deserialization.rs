//! What serde finds that the schema does not: its failures worded like the schema's, at the
//! path serde_path_to_error finds, and dropped where the schema already said it.

use std::collections::BTreeMap;

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

/// A map key serde cannot read as the map's key type is named as sent, even where
/// serde_path_to_error records it as a number (`1` for `"1 "`) or not at all (enum, boolean
/// and newtype keys); a value under such a key is at the key's own path.
#[test]
fn map_keys_serde_rejects_are_named_as_sent() {
    #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Warehouse(u32);
    #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Code {
        #[serde(rename = "EUR")]
        Eur,
        #[serde(rename = "USD")]
        Usd,
    }

    let loose = ArgumentValidator::new("t", &json!({})).unwrap();
    let only = |err: fusion::ValidationError| {
        let lines = lines(&err);
        assert_eq!(lines.len(), 1, "{err}");
        (lines[0].0.to_owned(), lines[0].1.to_owned())
    };
    let pair = |path: &str, line: &str| (path.to_owned(), line.to_owned());
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<u8, bool>>(&json!({"1": true, "1 ": true}))
                .unwrap_err()
        ),
        pair(
            "1 ",
            "Invalid key. You sent: '1 '. Expected a key that is a number, such as '1'."
        )
    );
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<u64, bool>>(&json!({"1": true, "18446744073709551616": true}))
                .unwrap_err()
        ),
        pair(
            "18446744073709551616",
            "Invalid key. You sent: '18446744073709551616'. Expected a key that is a non-negative integer."
        )
    );
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<Code, u8>>(&json!({"EUR": 1, "GBP": 1}))
                .unwrap_err()
        ),
        pair(
            "GBP",
            "Invalid key. You sent: 'GBP'. Expected a key this object accepts."
        )
    );
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<bool, u8>>(&json!({"True": 1}))
                .unwrap_err()
        ),
        pair(
            "True",
            "Invalid key. You sent: 'True'. Expected a key that is a boolean (true or false)."
        )
    );
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<Warehouse, bool>>(&json!({"1": true, "300": 1}))
                .unwrap_err()
        ),
        pair(
            "300",
            "Wrong type. You sent: 1. Expected a boolean (true or false)."
        )
    );
    assert_eq!(
        only(
            loose
                .parse::<BTreeMap<Code, Vec<u8>>>(&json!({"EUR": [1, 2], "USD": [1, 300]}))
                .unwrap_err()
        ),
        pair(
            "USD[1]",
            "Invalid value. You sent: 300. Expected an integer from 0 to 255."
        )
    );
}
