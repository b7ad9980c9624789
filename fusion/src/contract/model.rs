//! The contract model: what models learn of each tool and action, built from the registered
//! tool definitions, in a shape that serializes to the lockfile deterministically.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ActionDefinition, Annotations, ToolDefinition};

use super::digest::value_digest;

/// The contract of a set of tools: every tool, keyed (and so sorted) by name.
///
/// Built from tool definitions with [`Contract::from_definitions`] (or
/// [`Server::contract`](crate::server::Server::contract),
/// [`Tester::contract`](crate::testing::Tester::contract)), written to and read from a
/// lockfile with [`Contract::to_lockfile`] and [`Lockfile`](super::Lockfile), and compared with
/// [`diff`](super::diff()).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// The tools, by MCP tool name (`billing`).
    pub tools: BTreeMap<String, ToolContract>,
}

/// One tool's contract.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolContract {
    /// The tool's description.
    pub description: String,
    /// The tool's title ([`ToolDefinition::title`]); left out of the file when `None`, so
    /// lockfiles written before titles existed stay valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The discriminator field (`action`); `None` for a single-function tool.
    pub discriminator: Option<String>,
    /// The actions, by name (`charge`). A single-function tool has one, named like the tool.
    pub actions: BTreeMap<String, ActionContract>,
}

/// One action's contract.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionContract {
    /// The action's description.
    pub description: String,
    /// The action's title ([`ActionDefinition::title`]); left out of the file when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `sha256:` and the lowercase hex SHA-256 of the action's input schema as canonical
    /// compact JSON (keys sorted, no whitespace); any change to the schema changes it.
    pub input_schema_digest: String,
    /// The same digest of the input schema with every `description`, `title`, `$comment`,
    /// `examples` and `$schema` key removed: it changes only when what the schema accepts may
    /// have changed.
    pub input_structure_digest: String,
    /// The digest of the declared output schema (as [`ActionContract::input_schema_digest`]),
    /// `None` when the action declares none.
    pub output_schema_digest: Option<String>,
    /// The required top-level fields, sorted.
    pub required: Vec<String>,
    /// Every field by path (`invoice_id`, `address.zip`, `items[].sku`), local `$ref`s
    /// resolved, nested objects and arrays of objects walked (up to
    /// [`MAX_FIELD_DEPTH`] levels).
    pub fields: BTreeMap<String, FieldContract>,
    /// The MCP annotations, as declared (`None`: unset).
    pub annotations: Hints,
    /// The error codes the action can produce, sorted by code, each once.
    ///
    /// What the definition gives: `#[derive(ToolErrors)]` declares codes per error *type*, so
    /// every action returning one type lists all of its codes.
    pub errors: Vec<ErrorEntry>,
    /// The OAuth scopes a caller must hold ([`ActionDefinition::scopes`]), sorted, each once;
    /// left out of the file when empty, so lockfiles of tools without scopes read as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Whether the action may run as a task ([`ActionDefinition::task`]); left out of the file
    /// when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task: bool,
    /// Whether the action runs only as a task ([`ActionDefinition::task_required`]); left out
    /// of the file when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task_required: bool,
    /// Whether the action takes its arguments only as sent, never decoding JSON sent as a
    /// string ([`ActionDefinition::strict_json`]); left out of the file when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_json: bool,
    /// The action's own result limit in bytes of payload text (a limit in tokens counted at
    /// 4 bytes each, [`crate::ResultFit::max_result`]); left out of the file when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_bytes: Option<usize>,
    /// Where the result's list is ([`crate::ResultFit::items`]); left out when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<String>,
    /// The paging arguments ([`crate::ResultFit::page`]); left out when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<crate::Paging>,
}

/// How deep [`ActionContract::fields`] walks nested objects: `a.b.c` is depth 3.
pub const MAX_FIELD_DEPTH: usize = 8;

/// One field of an action's arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldContract {
    /// Whether the field is required in its object.
    pub required: bool,
    /// The JSON types accepted (`integer`, `null`, `string`, …), sorted; empty when the schema
    /// accepts any type.
    pub types: Vec<String>,
    /// The values accepted when the field is an enumeration (`enum`, `const`, or a `oneOf` of
    /// constants), each as compact JSON (`"EUR"`), sorted; `None` otherwise.
    #[serde(rename = "enum")]
    pub enum_values: Option<Vec<String>>,
    /// The validation keywords the schema shows for the field (`minimum`, `maxLength`,
    /// `pattern`, `format`, …) and their values.
    pub constraints: BTreeMap<String, Value>,
    /// The field's description.
    pub description: String,
}

/// The MCP annotations of an action (MCP specification 2025-06-18, "Tool annotations"), as
/// declared: `None` leaves a hint to the MCP default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hints {
    /// `readOnlyHint` (MCP default: false).
    pub read_only: Option<bool>,
    /// `destructiveHint` (MCP default: true; meaningful only when not read-only).
    pub destructive: Option<bool>,
    /// `idempotentHint` (MCP default: false).
    pub idempotent: Option<bool>,
    /// `openWorldHint` (MCP default: true).
    pub open_world: Option<bool>,
}

impl Hints {
    /// Whether the action is read-only, the MCP default applied.
    pub fn is_read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// Whether the action may be destructive, the MCP defaults applied: never when read-only,
    /// else the hint or `true`.
    pub fn is_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive.unwrap_or(true)
    }

    /// Whether the action is idempotent, the MCP default applied.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent.unwrap_or(false)
    }

    /// Whether the action talks to an open world, the MCP default applied.
    pub fn is_open_world(&self) -> bool {
        self.open_world.unwrap_or(true)
    }
}

impl From<Annotations> for Hints {
    fn from(a: Annotations) -> Hints {
        Hints {
            read_only: a.read_only,
            destructive: a.destructive,
            idempotent: a.idempotent,
            open_world: a.open_world,
        }
    }
}

/// One error code an action can produce, with its flags.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorEntry {
    /// The code (`NOT_FOUND`, `ALREADY_PAID`).
    pub code: String,
    /// `warning`, `error` or `critical`.
    pub severity: String,
    /// `auth`, `rate_limit`, `not_found`, `validation`, `transient` or `unknown`.
    pub category: String,
    /// Whether an identical retry can succeed.
    pub retryable: bool,
}

impl Contract {
    /// The contract of `definitions` (as [`Tool::definition`](crate::Tool::definition) reports
    /// them). A later definition with the name of an earlier one replaces it (a server refuses
    /// such a set anyway).
    pub fn from_definitions<'a>(
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
    ) -> Contract {
        let tools = definitions
            .into_iter()
            .map(|def| (def.name.clone(), ToolContract::from_definition(def)))
            .collect();
        Contract { tools }
    }
}

impl ToolContract {
    /// The contract of one tool definition.
    pub fn from_definition(def: &ToolDefinition) -> ToolContract {
        ToolContract {
            description: def.description.clone(),
            title: def.title.clone(),
            discriminator: def.discriminator.clone(),
            actions: def
                .actions
                .iter()
                .map(|action| (action.name.clone(), ActionContract::from_definition(action)))
                .collect(),
        }
    }
}

impl ActionContract {
    /// The contract of one action definition.
    pub fn from_definition(action: &ActionDefinition) -> ActionContract {
        let schema = Value::Object(action.input_schema.clone());
        // Fields are read from the schema as advertised: a top-level `oneOf`/`anyOf`/`allOf`
        // merged into one object, as `tools/list` shows it.
        let flat = crate::schema::flatten_top_level(&action.input_schema);
        let mut walker = FieldWalker {
            root: &action.input_schema,
            fields: BTreeMap::new(),
            refs: Vec::new(),
        };
        walker.object(&flat, "", 1);
        let required = crate::schema::required(&flat)
            .into_iter()
            .map(str::to_owned);
        let errors = action.errors.iter().map(|e| ErrorEntry {
            code: e.code.as_str().to_owned(),
            severity: e.severity.as_str().to_owned(),
            category: e.category.as_str().to_owned(),
            retryable: e.retryable,
        });
        ActionContract {
            description: action.description.clone(),
            title: action.title.clone(),
            input_schema_digest: value_digest(&schema),
            input_structure_digest: value_digest(&structure(&schema)),
            output_schema_digest: action
                .output_schema
                .as_ref()
                .map(|s| value_digest(&Value::Object(s.clone()))),
            required: sorted_once(required),
            fields: walker.fields,
            annotations: action.annotations.into(),
            errors: sorted_once(errors),
            scopes: sorted_once(action.scopes.iter().cloned()),
            task: action.may_run_as_task(),
            task_required: action.task_required,
            strict_json: action.strict_json,
            max_result_bytes: action.result.max_result.map(|limit| limit.max_bytes()),
            items: action.result.items.clone(),
            page: action.result.page.clone(),
        }
    }
}

/// `items` sorted, each once.
fn sorted_once<T: Ord>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    items
        .into_iter()
        .collect::<BTreeSet<T>>()
        .into_iter()
        .collect()
}

/// The keywords recorded as [`FieldContract::constraints`].
pub(crate) const CONSTRAINT_KEYWORDS: [&str; 14] = [
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "pattern",
    "uniqueItems",
];

/// Walks an arguments schema and records every field.
struct FieldWalker<'s> {
    root: &'s Map<String, Value>,
    fields: BTreeMap<String, FieldContract>,
    /// The `$ref`s being expanded, so a recursive type is walked once.
    refs: Vec<String>,
}

impl FieldWalker<'_> {
    /// Records the properties of the object schema `schema`, their paths prefixed by `prefix`.
    fn object(&mut self, schema: &Map<String, Value>, prefix: &str, depth: usize) {
        if depth > MAX_FIELD_DEPTH {
            return;
        }
        let required = crate::schema::required(schema);
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return;
        };
        for (name, property) in properties {
            let path = format!("{prefix}{name}");
            let Some(property) = property.as_object() else {
                // `true`/`false` schemas: any value, or none.
                self.fields.insert(
                    path,
                    FieldContract {
                        required: required.contains(&name.as_str()),
                        ..FieldContract::default()
                    },
                );
                continue;
            };
            let expanding = self.refs.len();
            let resolved = self.resolve(property);
            let description = [property, &resolved]
                .iter()
                .find_map(|schema| schema.get("description")?.as_str())
                .unwrap_or_default()
                .to_owned();
            let alternatives = self.alternatives(&resolved);
            let mut types = BTreeSet::new();
            let mut values: Option<BTreeSet<String>> = None;
            let mut any_type = false;
            // An alternative that is no enumeration (nor the `null` of an `Option`) opens the
            // value set.
            let mut open = false;
            for alternative in &alternatives {
                let found = types_of(alternative);
                any_type |= found.is_empty();
                types.extend(found);
                match enum_values(alternative) {
                    Some(found) => (values.get_or_insert_with(BTreeSet::new))
                        .extend(found.iter().map(|v| v.to_string())),
                    None => open |= !is_null_only(alternative),
                }
            }
            if any_type {
                types.clear();
            }
            if open {
                values = None;
            }
            // Constraints from the one alternative that is not `null` (an `Option<T>`).
            let only = only_substantive(&alternatives);
            let constraints = CONSTRAINT_KEYWORDS
                .iter()
                .filter_map(|&k| Some((k.to_owned(), only?.get(k)?.clone())))
                .collect();
            self.fields.insert(
                path.clone(),
                FieldContract {
                    required: required.contains(&name.as_str()),
                    types: types.into_iter().collect(),
                    enum_values: values.map(|v| v.into_iter().collect()),
                    constraints,
                    description,
                },
            );
            if let Some(only) = only {
                self.nested(only, &path, depth);
            }
            self.refs.truncate(expanding);
        }
    }

    /// Walks into an object field (`path.child`) or an array of objects (`path[].child`).
    fn nested(&mut self, schema: &Map<String, Value>, path: &str, depth: usize) {
        if schema.contains_key("properties") {
            let flat = crate::schema::flatten_top_level(schema);
            self.object(&flat, &format!("{path}."), depth + 1);
        } else if let Some(Value::Object(items)) = schema.get("items") {
            let expanding = self.refs.len();
            let items = self.resolve(items);
            let alternatives = self.alternatives(&items);
            if let Some(only) = only_substantive(&alternatives)
                && only.contains_key("properties")
            {
                let flat = crate::schema::flatten_top_level(only);
                self.object(&flat, &format!("{path}[]."), depth + 1);
            }
            self.refs.truncate(expanding);
        }
    }

    /// `schema` with a local `$ref` (`#/$defs/X`, `#/definitions/X`, see
    /// [`resolve`](crate::schema::resolve)) replaced by its target,
    /// the referring schema's other keys kept on top, and the ref pushed on the expansion stack
    /// (the caller truncates it). A ref already being expanded is left as is.
    fn resolve(&mut self, schema: &Map<String, Value>) -> Map<String, Value> {
        let reference = (schema.get("$ref").and_then(Value::as_str))
            .filter(|reference| !self.refs.iter().any(|r| r == reference));
        let target = reference.and_then(|reference| crate::schema::resolve(self.root, reference));
        let (Some(reference), Some(target)) = (reference, target) else {
            return schema.clone();
        };
        let mut merged = target.clone();
        for (key, value) in schema.iter().filter(|(k, _)| *k != "$ref") {
            merged.insert(key.clone(), value.clone());
        }
        self.refs.push(reference.to_owned());
        merged
    }

    /// The alternatives of a field schema: the branches of its `anyOf`/`oneOf` (refs resolved,
    /// nested combinators expanded), or the schema itself.
    fn alternatives(&mut self, schema: &Map<String, Value>) -> Vec<Map<String, Value>> {
        let branches = ["anyOf", "oneOf"]
            .iter()
            .find_map(|k| schema.get(*k).and_then(Value::as_array));
        let Some(branches) = branches else {
            return vec![schema.clone()];
        };
        let mut out = Vec::new();
        for branch in branches.iter().filter_map(Value::as_object) {
            // A branch referring to a type being expanded (`anyOf: [.., {"$ref": self}]`)
            // accepts nothing its other branches do not: skip it rather than expand forever.
            let reference = branch.get("$ref").and_then(Value::as_str);
            if reference.is_some_and(|r| self.refs.iter().any(|open| open == r)) {
                continue;
            }
            // The ref stays on the expansion stack while its own branches are expanded.
            let expanding = self.refs.len();
            let resolved = self.resolve(branch);
            out.extend(self.alternatives(&resolved));
            self.refs.truncate(expanding);
        }
        out
    }
}

/// The JSON types a (non-combinator) schema accepts; empty when it does not say.
fn types_of(schema: &Map<String, Value>) -> BTreeSet<String> {
    match schema.get("type") {
        Some(Value::String(t)) => BTreeSet::from([t.clone()]),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => match enum_values(schema) {
            Some(values) if !values.is_empty() => values
                .iter()
                .map(|v| match v.as_number() {
                    Some(n) if n.is_i64() || n.is_u64() => "integer".to_owned(),
                    _ => crate::schema::type_name(v).to_owned(),
                })
                .collect(),
            _ => BTreeSet::new(),
        },
    }
}

/// The values of `enum` or `const`: the enumeration a (non-combinator) schema restricts to;
/// `None` when it accepts more than a list of values. A `null`-only branch contributes `null`
/// only when it is itself listed as a value.
fn enum_values(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.iter().collect());
    }
    schema.get("const").map(|value| vec![value])
}

/// Whether the schema accepts only `null` (the `None` branch of an `Option<T>`).
fn is_null_only(schema: &Map<String, Value>) -> bool {
    types_of(schema) == BTreeSet::from(["null".to_owned()]) && enum_values(schema).is_none()
}

/// The one alternative that is not `null` (an `Option<T>`'s `T`), when there is exactly one.
fn only_substantive(alternatives: &[Map<String, Value>]) -> Option<&Map<String, Value>> {
    let mut substantive = alternatives.iter().filter(|a| !is_null_only(a));
    substantive.next().filter(|_| substantive.next().is_none())
}

/// `schema` without the keys that only inform (`description`, `title`, `$comment`,
/// `examples`, `$schema`), at every level. Inside `properties` (and `$defs`) keys are field
/// (and type) names, so they are kept whatever they are called.
fn structure(schema: &Value) -> Value {
    fn strip(value: &Value, names: bool) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| {
                        names
                            || !matches!(
                                k.as_str(),
                                "description" | "title" | "$comment" | "examples" | "$schema"
                            )
                    })
                    .map(|(k, v)| {
                        let child_names = !names && crate::schema::names_subschemas(k);
                        (k.clone(), strip(v, child_names))
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| strip(v, false)).collect()),
            other => other.clone(),
        }
    }
    strip(schema, false)
}
