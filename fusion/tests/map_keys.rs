//! Maps keyed by numbers (`HashMap<u32, _>`, `BTreeMap<i8, _>`): schemars describes their
//! keys with `patternProperties` (`^\d+$`, `^-?\d+$`) and serde reads them with serde_json's
//! number parser. A key that does not fit is the key's problem, said as such: not an
//! "Unknown field" of an object said to take "no fields", and not the parser's message with
//! its position inside the key (`expected u8 at line 1 column 3`).

#[path = "support/lines.rs"]
mod lines;

use std::collections::{BTreeMap, HashMap};

use fusion::testing::Tester;
use fusion::validation::ArgumentValidator;
use lines::pairs;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Stock per warehouse number, and small tallies.
#[derive(Deserialize, JsonSchema)]
pub struct StockArgs {
    /// Units per warehouse number.
    stock: HashMap<u32, String>,
}

/// Tallies keyed by a small signed number.
#[derive(Deserialize, JsonSchema)]
pub struct TallyArgs {
    /// Count per offset.
    tally: BTreeMap<i8, u8>,
}

#[derive(Clone, Copy, Default)]
struct Depot;

/// A depot.
#[fusion::tool]
impl Depot {
    /// Counts stock entries.
    #[action]
    fn stock(&self, args: StockArgs) -> usize {
        args.stock.len()
    }

    /// Counts tally entries.
    #[action]
    fn tally(&self, args: TallyArgs) -> usize {
        args.tally.len()
    }

    /// The arguments are the map itself.
    #[action]
    fn bare(&self, args: BTreeMap<u8, bool>) -> usize {
        args.len()
    }
}

/// The `(field, line)` pairs of the validation error `name` answers with `arguments`.
async fn problems(name: &str, arguments: Value) -> Vec<(String, String)> {
    lines::problems(Depot, name, arguments).await
}

#[tokio::test]
async fn valid_numeric_keys_reach_the_action() {
    let tester = Tester::new().tool(Depot);
    tester
        .call("depot.stock", json!({"stock": {"1": "a", "20": "b"}}))
        .await
        .assert_json_eq(2);
    tester
        .call("depot.tally", json!({"tally": {"-3": 1, "7": 2}}))
        .await
        .assert_json_eq(2);
    tester
        .call("depot.bare", json!({"0": true, "255": false}))
        .await
        .assert_json_eq(2);
}

#[tokio::test]
async fn a_key_that_is_not_a_number_is_an_invalid_key_with_what_keys_look_like() {
    assert_eq!(
        problems("depot.stock", json!({"stock": {"abc": "x", "2": "y"}})).await,
        pairs(&[(
            "stock.abc",
            "Invalid key. You sent: 'abc'. Expected a key that is a non-negative integer, such as '1'."
        )])
    );
    assert_eq!(
        problems("depot.stock", json!({"stock": {"-1": "x"}})).await,
        pairs(&[(
            "stock.-1",
            "Invalid key. You sent: '-1'. Expected a key that is a non-negative integer, such as '1'."
        )])
    );
    assert_eq!(
        problems("depot.tally", json!({"tally": {"one": 1}})).await,
        pairs(&[(
            "tally.one",
            "Invalid key. You sent: 'one'. Expected a key that is an integer, such as '-1' or '1'."
        )])
    );
    // The arguments object itself is the map.
    assert_eq!(
        problems("depot.bare", json!({"yes": true})).await,
        pairs(&[(
            "yes",
            "Invalid key. You sent: 'yes'. Expected a key that is a non-negative integer, such as '1'."
        )])
    );
}

#[tokio::test]
async fn a_numeric_key_out_of_range_names_the_key_and_the_range_without_a_parser_position() {
    assert_eq!(
        problems("depot.tally", json!({"tally": {"300": 1}})).await,
        pairs(&[(
            "tally.300",
            "Invalid key. You sent: '300'. Expected a key that is an integer from -128 to 127."
        )])
    );
    assert_eq!(
        problems("depot.bare", json!({"256": true})).await,
        pairs(&[(
            "256",
            "Invalid key. You sent: '256'. Expected a key that is an integer from 0 to 255."
        )])
    );
}

#[tokio::test]
async fn a_value_under_a_numeric_key_is_described_by_the_map_s_value_schema() {
    assert_eq!(
        problems("depot.stock", json!({"stock": {"1": 5}})).await,
        pairs(&[("stock.1", "Wrong type. You sent: 5. Expected a string.")])
    );
    assert_eq!(
        problems("depot.tally", json!({"tally": {"1": 256}})).await,
        pairs(&[(
            "tally.1",
            "Number too large. You sent: 256. Expected a number <= 255."
        )])
    );
}

#[test]
fn named_fields_next_to_key_patterns_are_both_offered() {
    // schemars does not write this shape itself; a hand-written schema can.
    let schema = json!({
        "type": "object",
        "properties": {"default": {"type": "string"}},
        "patternProperties": {"^\\d+$": {"type": "string"}, "^x-[a-z]+$": {"type": "string"}},
        "additionalProperties": false
    });
    let validator = ArgumentValidator::new("depot.mixed", &schema).unwrap();
    let error = validator.check(&json!({"defualt": "x", "7": "ok", "x-ray": "ok"}));
    assert_eq!(
        lines::lines_of(&error),
        pairs(&[(
            "defualt",
            "Invalid key. You sent: 'defualt'. Expected one of the known fields (default) or a key \
             that is a non-negative integer, such as '1' or a key matching the pattern ^x-[a-z]+$."
        )])
    );
}

#[test]
fn a_secret_value_under_a_key_pattern_is_redacted() {
    // `writeOnly` on the values of a map keyed by numbers: each value is a secret.
    let schema = json!({
        "type": "object",
        "properties": {
            "tokens": {
                "type": "object",
                "patternProperties": {"^\\d+$": {"type": "string", "writeOnly": true}},
                "additionalProperties": false
            }
        }
    });
    let validator = ArgumentValidator::new("vault.store", &schema).unwrap();
    let error = validator.check(&json!({"tokens": {"1": 99887766}}));
    assert_eq!(
        lines::lines_of(&error),
        pairs(&[(
            "tokens.1",
            "Wrong type. You sent: (redacted). Expected a string."
        )])
    );
    assert!(!error.to_xml().contains("99887766"), "{}", error.to_xml());
}
