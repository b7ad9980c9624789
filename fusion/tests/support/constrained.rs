//! A constrained arguments type and the envelope check shared by the property tests
//! (`tests/arbitrary_arguments.rs`) and the `validation` fuzz target (`fuzz/`), which includes
//! this file by path: both hold the same property, one with proptest, one with libFuzzer.

use std::collections::BTreeMap;

use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use validator::Validate;

/// Arguments with a constraint of each kind the validator reports: lengths, formats, ranges,
/// patterns, an enum, array sizes, nested objects, arrays of objects, `validator` rules, enums
/// with data (tagged internally, externally and untagged) and a map keyed by numbers.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Constrained {
    #[schemars(length(min = 3, max = 20))]
    #[validate(length(min = 3, max = 20))]
    pub username: String,
    #[schemars(email)]
    #[validate(email)]
    pub email: String,
    #[schemars(range(min = 13, max = 130))]
    pub age: u8,
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: Option<String>,
    pub plan: Plan,
    #[schemars(length(min = 1, max = 5))]
    pub tags: Vec<String>,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub discount: Option<f64>,
    pub address: Option<Address>,
    #[validate(nested)]
    pub items: Vec<Item>,
    #[serde(default)]
    pub note: Option<Value>,
    /// An internally tagged enum with data (a `oneOf` told apart by `kind`).
    #[serde(default)]
    pub shape: Option<Shape>,
    /// A map keyed by small numbers (`patternProperties`, keys read by serde_json's parser).
    #[serde(default)]
    pub counts: Option<BTreeMap<u8, u8>>,
    /// An untagged enum (an `anyOf` of objects told apart by their required fields).
    #[serde(default)]
    pub target: Option<Target>,
    /// An externally tagged enum (unit variants as strings, the others as one-key objects).
    #[serde(default)]
    pub command: Option<Command>,
}

/// A shape, tagged by `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    Circle {
        #[schemars(range(min = 0.0))]
        r: f64,
    },
    Rect {
        w: f64,
        h: f64,
    },
    Dot,
}

/// Whom: by number or by name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Target {
    ById { id: u64 },
    ByName { name: String },
}

/// A command, externally tagged (serde's default).
#[derive(Debug, Deserialize, JsonSchema)]
pub enum Command {
    Move { x: i32 },
    Wait(u32),
    Stop,
}

/// A plan, serialized in lowercase.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    Free,
    Pro,
}

/// A nested object.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    pub zip: String,
    pub city: String,
}

/// An element of an array of objects, with a `validator` rule.
#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
pub struct Item {
    #[validate(length(min = 2))]
    pub sku: String,
    #[validate(range(min = 1, max = 99))]
    pub quantity: i64,
}

/// fusion's validator for [`Constrained`], one secret path included so redaction runs too.
pub fn validator() -> ArgumentValidator {
    let schema = serde_json::to_value(schemars::schema_for!(Constrained)).expect("JSON");
    ArgumentValidator::new("accounts.signup", &schema)
        .expect("the schema compiles")
        .secret("email")
}

/// Checks that `xml` is one well-formed XML 1.0 element named `root`.
pub fn check_envelope(xml: &str, root: &str) -> Result<(), String> {
    let doc =
        roxmltree::Document::parse(xml).map_err(|e| format!("not well-formed: {e}\n{xml}"))?;
    let name = doc.root_element().tag_name().name();
    if name != root {
        return Err(format!("root element is <{name}>, not <{root}>\n{xml}"));
    }
    Ok(())
}

/// The property: validating `arguments` never panics, and every outcome renders a well-formed
/// envelope whose problem count matches the lines it shows.
pub fn check_arguments(validator: &ArgumentValidator, arguments: &Value) -> Result<(), String> {
    let checked = validator.check(arguments);
    if validator.is_valid(arguments) != checked.is_empty() {
        return Err(format!("is_valid disagrees with check on {arguments}"));
    }
    match validator.parse_validated::<Constrained>(arguments) {
        Ok(_) => Ok(()),
        Err(error) => {
            if error.is_empty() {
                return Err(format!("a failed parse with no problem on {arguments}"));
            }
            let xml = error.to_xml();
            check_envelope(&xml, "validation_error")?;
            let fields = xml.matches("<field name=").count();
            if fields != error.len() {
                return Err(format!("{} problems, {fields} lines\n{xml}", error.len()));
            }
            Ok(())
        }
    }
}
