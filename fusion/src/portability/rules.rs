//! The rules of each provider (see [`Provider`] for their sources), applied to a name and to an
//! input schema node by node.

use std::fmt::{self, Write};

use serde_json::{Map, Value};

use super::Provider;
use crate::schema::{
    EVERY, GEMINI_FORMATS, GEMINI_KEYWORDS, Walk, accepts_objects, at_pointer, escape_pointer,
    local_definition, local_pointer, names_subschemas, required,
};

/// A rule a tool definition can break; [`Provider`] says which provider has which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The tool name's length or characters.
    ToolName,
    /// The input schema's root is not `type: "object"`.
    RootType,
    /// A combinator (`oneOf`, `anyOf`, `allOf`, and for OpenAI `enum`, `not`) at the root.
    RootCombinator,
    /// The root object declares no `properties` (OpenAI).
    RootProperties,
    /// A `$ref` or `$defs` where the provider resolves none (Gemini).
    Reference,
    /// A `$ref` that designates nothing in the schema.
    DanglingReference,
    /// A keyword the provider does not accept there.
    Keyword,
    /// A `type` the provider does not accept (an array of types, or `"null"`, for Gemini).
    Type,
    /// A `format` the provider does not accept for the type.
    Format,
    /// An `enum` value the provider does not accept (Gemini takes strings only).
    EnumValue,
    /// A parameter (top-level property) name the provider does not accept (Gemini).
    ParameterName,
    /// An object without `additionalProperties: false` (OpenAI strict mode).
    OpenObject,
    /// A property missing from its object's `required` (OpenAI strict mode).
    OptionalProperty,
    /// A size or nesting limit exceeded (OpenAI strict mode).
    Limit,
}

impl fmt::Display for Rule {
    /// The variant's name in lower-case words: `tool name`, `dangling reference`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in format!("{self:?}").char_indices() {
            if i > 0 && c.is_ascii_uppercase() {
                f.write_char(' ')?;
            }
            f.write_char(c.to_ascii_lowercase())?;
        }
        Ok(())
    }
}

/// A problem found: the JSON Pointer into the tool definition, the rule, the message.
pub(super) type Found = (String, Rule, String);

/// The keywords OpenAI's strict mode supports (Structured Outputs, "Supported schemas").
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// The string `format`s OpenAI's strict mode supports.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Why `name` is not a tool name `provider` accepts, if it is not.
pub(super) fn name(name: &str, provider: Provider) -> Option<String> {
    match provider {
        // The rule every fusion tool name already follows (`^[a-zA-Z0-9_-]{1,64}$`).
        Provider::Anthropic | Provider::OpenAi | Provider::OpenAiStrict => {
            crate::model::definition::check_tool_name(name).err().map(|_| {
                format!(
                    "`{name}` is not a tool name {provider} accepts: use 1 to 64 ASCII letters, \
                     digits, `_` and `-`"
                )
            })
        }
        Provider::Gemini => (!gemini_name_ok(name, b".-")).then(|| {
            format!(
                "`{name}` is not a function name Gemini accepts: use at most 64 ASCII letters, \
                 digits, `_`, `.` and `-`, starting with a letter or `_`"
            )
        }),
    }
}

/// Every rule of `provider` that the input schema `root` breaks, appended to `found`.
pub(super) fn schema(root: &Map<String, Value>, provider: Provider, found: &mut Vec<Found>) {
    let mut check = Check {
        root,
        provider,
        found,
        totals: Totals::default(),
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        check.push(
            "/type",
            Rule::RootType,
            "the input schema's root must be `\"type\": \"object\"`; take the arguments as a \
             struct with named fields"
                .into(),
        );
    }
    let root_combinators: &[&str] = match provider {
        Provider::Anthropic | Provider::Gemini => &["oneOf", "anyOf", "allOf"],
        Provider::OpenAi | Provider::OpenAiStrict => &["oneOf", "anyOf", "allOf", "enum", "not"],
    };
    for keyword in root_combinators.iter().filter(|k| root.contains_key(**k)) {
        check.push(
            &format!("/{keyword}"),
            Rule::RootCombinator,
            format!(
                "{provider} rejects `{keyword}` at the root of an input schema; describe the \
                 arguments as one object whose fields are the union of the alternatives"
            ),
        );
    }
    if matches!(provider, Provider::OpenAi | Provider::OpenAiStrict)
        && !root.contains_key("properties")
    {
        check.push(
            "",
            Rule::RootProperties,
            "OpenAI rejects an object input schema without `properties`; add \
             `\"properties\": {}`"
                .into(),
        );
    }
    if provider == Provider::Gemini
        && let Some(Value::Object(properties)) = root.get("properties")
    {
        for field in properties.keys().filter(|f| !gemini_name_ok(f, b"")) {
            check.push(
                &format!("/properties/{}", escape_pointer(field)),
                Rule::ParameterName,
                format!(
                    "Gemini accepts parameter names of at most 64 ASCII letters, digits and \
                     `_`, not starting with a digit; rename `{field}` (`#[serde(rename = \
                     \"...\")]`)"
                ),
            );
        }
    }
    check.every_node();
    if provider == Provider::OpenAiStrict {
        check.limits();
    }
}

/// Whether Gemini accepts `name`: 1 to 64 ASCII letters, digits, `_` and bytes of `extra`,
/// starting with a letter or `_`.
fn gemini_name_ok(name: &str, extra: &[u8]) -> bool {
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || extra.contains(&b))
}

/// What OpenAI's strict mode limits, summed over the schema.
#[derive(Default)]
struct Totals {
    properties: usize,
    depth: usize,
    enum_values: usize,
    string_length: usize,
}

struct Check<'a> {
    root: &'a Map<String, Value>,
    provider: Provider,
    found: &'a mut Vec<Found>,
    totals: Totals,
}

impl Check<'_> {
    fn push(&mut self, pointer: &str, rule: Rule, message: String) {
        self.found
            .push((format!("/inputSchema{pointer}"), rule, message));
    }

    /// Checks every schema node, the root first, then each subschema depth first.
    fn every_node(&mut self) {
        // How many object schemas deep each node walked is, itself counted.
        let mut depths: Vec<usize> = Vec::new();
        for node in Walk::new(EVERY).from(Some(self.root)) {
            let map = node.schema;
            let is_object = accepts_objects(map) || map.contains_key("properties");
            let depth = node.parent.map_or(0, |p| depths[p]) + usize::from(is_object);
            depths.push(depth);
            self.totals.depth = self.totals.depth.max(depth);
            for (keyword, value) in map {
                self.keyword(map, keyword, value, &node.pointer);
                // What strict mode's limits count.
                match (keyword.as_str(), value) {
                    (named, Value::Object(children)) if names_subschemas(named) => {
                        self.totals.string_length +=
                            children.keys().map(String::len).sum::<usize>();
                        if keyword == "properties" {
                            self.totals.properties += children.len();
                        }
                    }
                    ("enum", Value::Array(values)) => {
                        self.totals.enum_values += values.len();
                        self.totals.string_length += strings_length(values);
                    }
                    ("const", value) => {
                        self.totals.string_length += strings_length(std::slice::from_ref(value));
                    }
                    _ => {}
                }
            }
            if self.provider == Provider::OpenAiStrict && is_object {
                self.strict_object(map, &node.pointer);
            }
        }
    }

    /// The rules on one keyword of a schema node.
    fn keyword(&mut self, map: &Map<String, Value>, keyword: &str, value: &Value, at: &str) {
        let here = format!("{at}/{}", escape_pointer(keyword));
        if keyword == "$ref" {
            self.reference(value, &here);
            return;
        }
        match self.provider {
            Provider::Anthropic | Provider::OpenAi => {}
            Provider::OpenAiStrict => self.strict_keyword(map, keyword, value, &here),
            Provider::Gemini => self.gemini_keyword(map, keyword, value, &here),
        }
    }

    fn reference(&mut self, value: &Value, here: &str) {
        let reference = value.as_str().unwrap_or_default();
        if self.provider == Provider::Gemini {
            let shown = local_definition(reference).unwrap_or_else(|| reference.to_owned());
            self.push(
                here,
                Rule::Reference,
                format!(
                    "the Gemini API resolves no `$ref` (here to `{shown}`); fusion inlines every \
                     definition except one a type reaches again from inside itself: make \
                     `{shown}` non-recursive (a bounded depth, or ids instead of nested values), \
                     or take that part as a JSON string"
                ),
            );
            return;
        }
        let resolves = local_pointer(reference)
            .is_some_and(|pointer| pointer.is_empty() || at_pointer(self.root, &pointer).is_some());
        if !resolves {
            self.push(
                here,
                Rule::DanglingReference,
                format!(
                    "`$ref` `{reference}` designates nothing in the input schema, and {} \
                     fetches nothing; put the definition under the root's `$defs`",
                    self.provider
                ),
            );
        }
    }

    fn gemini_keyword(
        &mut self,
        map: &Map<String, Value>,
        keyword: &str,
        value: &Value,
        here: &str,
    ) {
        if matches!(keyword, "$defs" | "definitions") {
            let names = (value.as_object().into_iter().flat_map(|d| d.keys()))
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            self.push(
                here,
                Rule::Reference,
                format!(
                    "the Gemini API takes no `{keyword}` (here {names}); every definition must be \
                     inlined, which a recursive type prevents"
                ),
            );
            return;
        }
        if !GEMINI_KEYWORDS.contains(&keyword) {
            let instead = match keyword {
                "oneOf" => "; use `anyOf`",
                "allOf" => "; merge the parts into one object",
                "const" => "; use a one-value `enum`",
                _ => "; remove it",
            };
            self.push(
                here,
                Rule::Keyword,
                format!("the Gemini API's schema has no `{keyword}`{instead}"),
            );
            return;
        }
        match (keyword, value) {
            ("type", Value::String(ty)) if ty == "null" => self.push(
                here,
                Rule::Type,
                "Gemini has no `null` type; mark the alternative `nullable: true`".into(),
            ),
            ("type", Value::String(_)) => {}
            ("type", _) => self.push(
                here,
                Rule::Type,
                "Gemini takes one `type`, not an array of types; use `nullable: true` for \
                 `null`, `anyOf` for other alternatives"
                    .into(),
            ),
            ("format", Value::String(format)) => {
                let ty = map.get("type").and_then(Value::as_str).unwrap_or_default();
                if !GEMINI_FORMATS.contains(&(ty, format.as_str())) {
                    self.push(
                        here,
                        Rule::Format,
                        format!(
                            "Gemini rejects `format: \"{format}\"` on a {ty} (it knows `float`, \
                             `double`, `int32`, `int64`, `enum`, `date-time`); remove it"
                        ),
                    );
                }
            }
            ("enum", Value::Array(values)) if !values.iter().all(Value::is_string) => self.push(
                here,
                Rule::EnumValue,
                "Gemini takes only strings in an `enum`; use string values".into(),
            ),
            _ => {}
        }
    }

    fn strict_keyword(
        &mut self,
        map: &Map<String, Value>,
        keyword: &str,
        value: &Value,
        here: &str,
    ) {
        if !STRICT_KEYWORDS.contains(&keyword) {
            let instead = match keyword {
                "nullable" => "; use `\"type\": [T, \"null\"]`",
                "oneOf" => "; use `anyOf`",
                _ => "; remove it",
            };
            self.push(
                here,
                Rule::Keyword,
                format!("OpenAI's strict mode does not support `{keyword}`{instead}"),
            );
            return;
        }
        if let ("format", Value::String(format)) = (keyword, value)
            && map.get("type").is_some_and(|t| t == "string")
            && !STRICT_FORMATS.contains(&format.as_str())
        {
            self.push(
                here,
                Rule::Format,
                format!("OpenAI's strict mode does not support `format: \"{format}\"`; remove it"),
            );
        }
    }

    /// Strict mode: a closed object, every property required.
    fn strict_object(&mut self, map: &Map<String, Value>, at: &str) {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.push(
                &format!("{at}/additionalProperties"),
                Rule::OpenObject,
                "OpenAI's strict mode requires `\"additionalProperties\": false` on every object"
                    .into(),
            );
        }
        let required = required(map);
        if let Some(Value::Object(properties)) = map.get("properties") {
            for field in properties
                .keys()
                .filter(|f| !required.contains(&f.as_str()))
            {
                self.push(
                    &format!("{at}/properties/{}", escape_pointer(field)),
                    Rule::OptionalProperty,
                    format!(
                        "OpenAI's strict mode requires every property in `required`; require \
                         `{field}` and allow `null` for it instead (`\"type\": [T, \"null\"]`)"
                    ),
                );
            }
        }
    }

    /// Strict mode's size and nesting limits, over the whole schema.
    fn limits(&mut self) {
        let totals = &self.totals;
        let over = [
            (totals.properties, 5000, "object properties"),
            (totals.depth, 10, "levels of nested objects"),
            (totals.enum_values, 1000, "enum values"),
            (
                totals.string_length,
                120_000,
                "characters of property names, definition names, enum and const values",
            ),
        ];
        for (count, limit, what) in over.into_iter().filter(|(count, limit, _)| count > limit) {
            let message = format!(
                "OpenAI's strict mode allows at most {limit} {what}; this schema has {count}"
            );
            self.push("", Rule::Limit, message);
        }
    }
}

/// The total length of the strings among `values`.
fn strings_length(values: &[Value]) -> usize {
    values.iter().filter_map(Value::as_str).map(str::len).sum()
}
