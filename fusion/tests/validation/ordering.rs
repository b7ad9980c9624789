//! Problems sort by path, segment by segment with indices compared as numbers, however many
//! there are and however they were added.

use std::time::Instant;

use fusion::ValidationError;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use validator::Validate;

use crate::fixtures::{Invoice, lines, valid_invoice, validator_for};

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Item {
    #[validate(length(min = 1))]
    sku: String,
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Many {
    #[validate(nested)]
    items: Vec<Item>,
}

#[test]
fn list_indices_sort_numerically() {
    let mut args = valid_invoice();
    let mut items: Vec<Value> = (0..11)
        .map(|_| json!({"sku": "A-1", "quantity": 1}))
        .collect();
    items[10]["quantity"] = json!(0);
    items[2]["sku"] = json!("");
    args["items"] = Value::Array(items);
    let err = validator_for::<Invoice>("b")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "items[2].sku",
                "Too short. You sent: ''. Expected at least 1 character."
            ),
            (
                "items[10].quantity",
                "Number too small. You sent: 0. Expected a number >= 1."
            ),
        ]
    );
}

#[test]
fn fifty_thousand_problems_list_the_first_fifty_in_order() {
    const N: usize = 50_000;
    let many = validator_for::<Many>("shop.bulk");
    let items: Vec<Value> = (0..N).map(|_| json!({"sku": ""})).collect();
    let args = json!({ "items": items });
    let started = Instant::now();
    let err = many.parse_validated::<Many>(&args).unwrap_err();
    // Evidence only (the machine is noisy): no assertion on time.
    println!(
        "{N} items, {} problems in {:?}",
        err.len(),
        started.elapsed()
    );
    // The first 50 by path (indices compared as numbers), then the line counting the rest.
    assert_eq!(err.len(), 51);
    assert_eq!(lines(&err)[0].0, "items");
    assert!(
        lines(&err)[0]
            .1
            .starts_with("... and 49950 more problems, not listed.")
    );
    let line = "Too short. You sent: ''. Expected at least 1 character.";
    assert_eq!(lines(&err)[1], ("items[0].sku", line));
    assert_eq!(lines(&err)[11], ("items[10].sku", line));
    assert_eq!(lines(&err)[50], ("items[49].sku", line));
}

proptest! {
    #[test]
    fn merging_equals_pushing_one_by_one(
        first in prop::collection::vec("(\\(root\\)|[a-c](\\[[0-9]{1,2}\\])?)", 0..10),
        second in prop::collection::vec("(\\(root\\)|[a-c](\\[[0-9]{1,2}\\])?)", 0..10),
    ) {
        let mut merged = ValidationError::new("t");
        let mut pushed = ValidationError::new("t");
        let mut other = ValidationError::new("t");
        for (n, path) in first.iter().enumerate() {
            merged.push(path.as_str(), format!("a{n}"));
            pushed.push(path.as_str(), format!("a{n}"));
        }
        for (n, path) in second.iter().enumerate() {
            other.push(path.as_str(), format!("b{n}"));
            pushed.push(path.as_str(), format!("b{n}"));
        }
        merged.merge(other);
        prop_assert_eq!(merged, pushed);
    }
}

/// A reference ordering: segments, indices numerically.
fn reference_key(path: &str) -> Vec<(u8, usize, String)> {
    if path == "(root)" {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (n, piece) in path.split('.').enumerate() {
        let (key, rest) = piece.split_once('[').map_or((piece, ""), |(k, r)| (k, r));
        if !key.is_empty() || n > 0 {
            out.push((1, 0, key.to_owned()));
        }
        for index in rest.split('[').filter(|s| !s.is_empty()) {
            out.push((
                0,
                index.trim_end_matches(']').parse().unwrap(),
                String::new(),
            ));
        }
    }
    out
}

proptest! {
    #[test]
    fn problems_are_always_sorted(paths in prop::collection::vec(
        "(\\(root\\)|[a-c]{1,2}(\\[[0-9]{1,2}\\])?(\\.[a-c](\\[[0-9]{1,2}\\])?)?)", 0..12
    )) {
        let mut err = ValidationError::new("t");
        for (n, path) in paths.iter().enumerate() {
            err.push(path.as_str(), n.to_string());
        }
        let got: Vec<&str> = err.problems().iter().map(|p| p.path()).collect();
        let mut want: Vec<&str> = paths.iter().map(String::as_str).collect();
        want.sort_by_key(|p| reference_key(p));
        prop_assert_eq!(got, want);
    }
}
