//! A tool whose arguments hold each kind of JSON a schema can want where a model may send a
//! string instead (an array of objects, an object, an integer, a number, a boolean, and a
//! string field that must never be parsed), and the property shared by the proptest
//! (`tests/stringified_arguments.rs`) and the `stringified` fuzz target (`fuzz/`), which
//! includes this file by path: a value sent as a string holding its JSON gets the envelope the
//! value gets when sent as JSON.

use fusion::Json;
use fusion::testing::Tester;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub sku: String,
    pub qty: u32,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub street: String,
    pub zip: String,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub items: Vec<Line>,
    /// Text for the parcel; may look like anything.
    pub note: Option<String>,
    pub gift: Option<bool>,
    pub priority: Option<u8>,
    pub discount: Option<f64>,
    pub shipping: Option<Address>,
}

/// The tool under test.
pub struct Shop;

/// A shop.
#[fusion::tool]
impl Shop {
    /// Places an order and answers it as read.
    #[action(read_only)]
    pub fn order(&self, args: Order) -> Json<Order> {
        Json(args)
    }

    /// Places an order, its arguments taken strictly as sent.
    #[action(read_only, strict_json)]
    pub fn strict_order(&self, args: Order) -> Json<Order> {
        Json(args)
    }
}

/// Whether `value`, sent as a string holding its JSON in field `name` of `shop.order`, is JSON
/// of the type the schema wants there, so that fusion reads it back. A string holding JSON of
/// another type (`"\"a\""` for `items`) is validated as the string it is: another envelope, and
/// rightly so. Whole numbers only for the integer: `2.5` is JSON an integer place refuses.
pub fn decodable(name: &str, value: &Value) -> bool {
    match name {
        "items" => value.is_array(),
        "shipping" => value.is_object(),
        "priority" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "discount" => value.is_number(),
        "gift" => value.is_boolean(),
        _ => false,
    }
}

/// The property: calls `shop.order` with `direct`, then with the fields named in `stringified`
/// sent as strings holding their JSON (pretty-printed where the flag says so), and compares
/// the answers: the same first text (the result or the envelope, byte for byte), the same
/// `isError`, the same validation error; every field sent as a string reported as decoded,
/// and one warning for the model when any was.
///
/// # Errors
/// What differs, with both answers.
pub async fn same_envelopes(
    tester: &Tester,
    direct: &Map<String, Value>,
    stringified: &[(String, bool)],
) -> Result<(), String> {
    let mut sent = direct.clone();
    for (name, pretty) in stringified {
        let value = &direct[name];
        let text = if *pretty {
            serde_json::to_string_pretty(value).expect("JSON prints")
        } else {
            value.to_string()
        };
        sent.insert(name.clone(), Value::from(text));
    }
    let as_json = tester
        .call("shop.order", Value::Object(direct.clone()))
        .await;
    let as_strings = tester.call("shop.order", Value::Object(sent.clone())).await;
    let (as_json, as_strings) = (as_json.into_response(), as_strings.into_response());
    let differs = |what: &str| {
        Err(format!(
            "{what} differs\nsent as JSON: {direct:?}\n  answer: {:?}\nsent with strings: {sent:?}\n  answer: {:?}",
            as_json.content_texts(),
            as_strings.content_texts()
        ))
    };
    if as_json.content_texts()[0] != as_strings.content_texts()[0] {
        return differs("the first text");
    }
    if as_json.is_error() != as_strings.is_error() {
        return differs("isError");
    }
    if as_json.validation_error() != as_strings.validation_error() {
        return differs("the validation error");
    }
    let decoded = as_strings.decoded_arguments();
    if let Some((name, _)) = stringified.iter().find(|(name, _)| !decoded.contains(name)) {
        return differs(&format!("the decoded list ({name} missing: {decoded:?})"));
    }
    if !stringified.is_empty() && as_strings.warnings().len() != 1 {
        return differs("the number of warnings");
    }
    Ok(())
}
