//! Reading the input schema along a field path: local `$ref`s, properties, items, the
//! `allOf`/`anyOf`/`oneOf` branches, `writeOnly`, and the plain-words expectation of a node.
//!
//! Only used after a validation failed, to word the lines; it never decides validity.

use serde_json::{Map, Value};

use crate::envelope::join_last;
use crate::schema::{BRANCHES, EVERY, Walk, local_pointer};

use super::path::{FieldPath, Segment};
use super::sent;

/// How deep `$ref` chains and combinator branches are followed (recursive schemas stop here).
const MAX_DEPTH: usize = 16;

/// An input schema, kept for wording lines.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    root: Value,
    /// Whether `writeOnly: true` appears anywhere (saves walks along paths when it does not).
    pub(crate) write_only: bool,
}

impl Shape {
    pub(crate) fn new(root: Value) -> Shape {
        let write_only = Walk::new(EVERY)
            .from(root.as_object())
            .any(|node| node.schema.get("writeOnly") == Some(&Value::Bool(true)));
        Shape { root, write_only }
    }

    pub(crate) fn root(&self) -> &Value {
        &self.root
    }

    /// The target of `node`'s local `$ref` (`#`, `#/$defs/Address`), if it has one.
    pub(crate) fn target(&self, node: &Value) -> Option<&Value> {
        self.root
            .pointer(&local_pointer(node.get("$ref")?.as_str()?)?)
    }

    /// `node`, then what it references and its combinator branches, depth first.
    fn walk<'a>(&'a self, node: &'a Value) -> impl Iterator<Item = &'a Map<String, Value>> {
        Walk::new(BRANCHES)
            .through_refs(&self.root, MAX_DEPTH)
            .from(node.as_object())
            .map(|n| n.schema)
    }

    /// The schema of property `name` of an object described by `node`: a declared property,
    /// else a `patternProperties` schema when every pattern of that object maps to the same
    /// schema (maps keyed by numbers: schemars writes `^\d+$` or `^-?\d+$`, so which
    /// pattern `name` matches does not change the value's schema), else a schema-valued
    /// `additionalProperties` (maps keyed by strings).
    pub(crate) fn property<'a>(&'a self, node: &'a Value, name: &str) -> Option<&'a Value> {
        self.walk(node)
            .find_map(|n| n.get("properties")?.get(name))
            .or_else(|| self.pattern_property(node))
            .or_else(|| {
                self.walk(node)
                    .find_map(|n| n.get("additionalProperties").filter(|v| v.is_object()))
            })
    }

    /// Every schema that describes property `name` of an object described by `node`, where
    /// [`Shape::property`] gives the first: each declaration of `name` (an `anyOf` may declare
    /// it in several branches), else the one `patternProperties` schema, else each schema or
    /// boolean `additionalProperties` (`false` for a field the object does not know).
    pub(crate) fn properties<'a>(&'a self, node: &'a Value, name: &str) -> Vec<&'a Value> {
        let declared: Vec<&Value> = (self.walk(node))
            .filter_map(|n| n.get("properties")?.get(name))
            .collect();
        if !declared.is_empty() {
            return declared;
        }
        if let Some(pattern) = self.pattern_property(node) {
            return vec![pattern];
        }
        (self.walk(node))
            .filter_map(|n| n.get("additionalProperties"))
            .collect()
    }

    /// The schema of every property an object described by `node` gives by pattern: the first
    /// `patternProperties` whose patterns all map to the same schema.
    fn pattern_property<'a>(&'a self, node: &'a Value) -> Option<&'a Value> {
        self.walk(node).find_map(|n| {
            let mut schemas = n.get("patternProperties")?.as_object()?.values();
            let first = schemas.next()?;
            schemas.all(|other| other == first).then_some(first)
        })
    }

    /// Every schema that describes element `index` of an array described by `node`, where
    /// [`Shape::item`] gives the first.
    pub(crate) fn items<'a>(&'a self, node: &'a Value, index: usize) -> Vec<&'a Value> {
        (self.walk(node))
            .filter_map(|n| {
                n.get("prefixItems")
                    .and_then(|p| p.get(index))
                    .or_else(|| match n.get("items") {
                        Some(Value::Array(tuple)) => tuple.get(index),
                        other => other,
                    })
            })
            .collect()
    }

    /// The schema of element `index` of an array described by `node`.
    pub(crate) fn item<'a>(&'a self, node: &'a Value, index: usize) -> Option<&'a Value> {
        self.walk(node).find_map(|n| {
            n.get("prefixItems")
                .and_then(|p| p.get(index))
                .or_else(|| match n.get("items") {
                    Some(Value::Array(tuple)) => tuple.get(index),
                    Some(items @ Value::Object(_)) => Some(items),
                    _ => None,
                })
        })
    }

    /// The schema of the child `segment` of a value described by `node`.
    fn step<'a>(&'a self, node: &'a Value, segment: &Segment) -> Option<&'a Value> {
        match segment {
            Segment::Key(k) => self.property(node, k),
            Segment::Index(i) => self.item(node, *i),
        }
    }

    /// The schema at `path`, walking from the root.
    pub(crate) fn at(&self, path: &FieldPath) -> Option<&Value> {
        (path.segments().iter()).try_fold(&self.root, |node, segment| self.step(node, segment))
    }

    /// Whether `path` or one of its ancestors is `writeOnly` in the schema (a secret): says
    /// `writeOnly: true` itself, in what it references, or in one of its branches.
    pub(crate) fn is_write_only(&self, path: &FieldPath) -> bool {
        if !self.write_only {
            return false;
        }
        let mut node = &self.root;
        for segment in path.segments() {
            let Some(next) = self.step(node, segment) else {
                return false;
            };
            if self
                .walk(next)
                .any(|n| n.get("writeOnly") == Some(&Value::Bool(true)))
            {
                return true;
            }
            node = next;
        }
        false
    }

    /// The names of the properties an object described by `node` declares, sorted and
    /// deduplicated (declared order depends on serde_json's `preserve_order` feature).
    pub(crate) fn known_properties<'a>(&'a self, node: &'a Value) -> Vec<&'a str> {
        let mut names = self.keys(node, "properties");
        names.sort_unstable();
        names
    }

    /// The keys of the `keyword` maps (`properties`, `patternProperties`) of an object
    /// described by `node`, in the schema's order (its maps, `$ref` targets and branches depth
    /// first), each once.
    pub(crate) fn keys<'a>(&'a self, node: &'a Value, keyword: &str) -> Vec<&'a str> {
        let mut seen = std::collections::HashSet::new();
        let maps = self.walk(node).filter_map(|n| n.get(keyword)?.as_object());
        let keys = maps.flat_map(|map| map.keys().map(String::as_str));
        keys.filter(|key| seen.insert(*key)).collect()
    }

    /// The `oneOf` (else `anyOf`) branches of `node`, of what it references and of its own
    /// branches, depth first.
    fn alternatives<'a>(&'a self, node: &'a Value) -> impl Iterator<Item = &'a Vec<Value>> {
        (self.walk(node)).filter_map(|n| n.get("oneOf").or_else(|| n.get("anyOf"))?.as_array())
    }

    /// The tag of a tagged union described by `node`: a property that every branch of its
    /// `oneOf`/`anyOf` (after `$ref`s) declares with a `const`, and those values in branch
    /// order. `None` when `node` is not such a union (schemars writes one for an enum with
    /// `#[serde(tag = "..")]`, with or without `content`). Through `$ref`s and wrappers: an
    /// `Option` of the enum is `anyOf: [{$ref}, null]`.
    pub(crate) fn tag<'a>(&'a self, node: &'a Value) -> Option<(&'a str, Vec<&'a Value>)> {
        let branch_props = |branch: &'a Value| self.resolve(branch)?.get("properties")?.as_object();
        self.alternatives(node).find_map(|branches| {
            let first = branch_props(branches.first()?)?;
            first.iter().find_map(|(name, schema)| {
                schema.get("const")?;
                let values = branches
                    .iter()
                    .map(|b| branch_props(b)?.get(name)?.get("const"))
                    .collect::<Option<Vec<&Value>>>()?;
                (values.len() >= 2).then_some((name.as_str(), values))
            })
        })
    }

    /// For a `oneOf`/`anyOf` whose every branch is an object requiring some fields, one
    /// outline per branch: `an object with 'id'`, `an object with 'w' and 'h'`.
    pub(crate) fn required_outlines(&self, node: &Value) -> Option<Vec<String>> {
        self.alternatives(node).find_map(|branches| {
            (branches.iter())
                .map(|branch| {
                    let branch = self.resolve(branch)?;
                    let required: Vec<String> = (branch.get("required")?.as_array()?.iter())
                        .map(|name| Some(format!("'{}'", name.as_str()?)))
                        .collect::<Option<_>>()?;
                    let required = join_last(&required, " and ");
                    (!required.is_empty() && branch.get("type")? == "object")
                        .then(|| format!("an object with {required}"))
                })
                .collect()
        })
    }

    /// `node` with its `$ref`s followed.
    fn resolve<'a>(&'a self, node: &'a Value) -> Option<&'a Map<String, Value>> {
        let walk = Walk::new(&[]).through_refs(&self.root, MAX_DEPTH);
        walk.from(node.as_object()).last().map(|n| n.schema)
    }

    /// The first `pattern` that applies to `node`.
    pub(crate) fn pattern<'a>(&'a self, node: &'a Value) -> Option<&'a str> {
        self.walk(node)
            .find_map(|n| n.get("pattern").and_then(Value::as_str))
    }

    /// The literal values `node` allows, when it is made only of `const` and `enum` (possibly
    /// spread over `anyOf`/`oneOf` branches, as schemars writes documented enums).
    pub(crate) fn literals<'a>(&'a self, node: &'a Value, depth: usize) -> Option<Vec<&'a Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(c) = node.get("const") {
            return Some(vec![c]);
        }
        if let Some(Value::Array(options)) = node.get("enum") {
            return Some(options.iter().collect());
        }
        if let Some(target) = self.target(node) {
            return self.literals(target, depth + 1);
        }
        let branches = node
            .get("anyOf")
            .or_else(|| node.get("oneOf"))?
            .as_array()?;
        let mut all = Vec::new();
        for branch in branches {
            all.extend(self.literals(branch, depth + 1)?);
        }
        Some(all)
    }

    /// What `node` expects, in words: `a string`, `an object or null`, `one of: 'EUR', 'USD'`.
    /// `None` when the schema says nothing useful (`{}`).
    pub(crate) fn describe(&self, node: &Value) -> Option<String> {
        self.describe_at(node, 0)
    }

    fn describe_at(&self, node: &Value, depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(literals) = self.literals(node, 0) {
            return Some(sent::allowed(&literals));
        }
        match node.get("type") {
            Some(Value::String(t)) => return Some(type_phrase(t).to_owned()),
            Some(Value::Array(types)) => {
                return Some(join_or(
                    types.iter().filter_map(Value::as_str).map(type_phrase),
                ));
            }
            _ => {}
        }
        if let Some(target) = self.target(node) {
            return self.describe_at(target, depth + 1);
        }
        if let Some(Value::Array(branches)) = node.get("anyOf").or_else(|| node.get("oneOf")) {
            let mut phrases: Vec<String> = Vec::new();
            for branch in branches {
                let phrase = self.describe_at(branch, depth + 1)?;
                if !phrases.contains(&phrase) {
                    phrases.push(phrase);
                }
            }
            return Some(join_or(phrases.iter().map(String::as_str)));
        }
        if let Some(Value::Array(all)) = node.get("allOf") {
            return all
                .iter()
                .find_map(|branch| self.describe_at(branch, depth + 1));
        }
        if node.get("properties").is_some() {
            return Some("an object".to_owned());
        }
        if node.get("items").is_some() || node.get("prefixItems").is_some() {
            return Some("an array".to_owned());
        }
        None
    }
}

/// `string` → `a string`, `integer` → `an integer`, and so on.
pub(crate) fn type_phrase(json_type: &str) -> &'static str {
    match json_type {
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "a boolean (true or false)",
        "array" => "an array",
        "object" => "an object",
        "null" => "null",
        _ => "a value",
    }
}

/// `a`, `a or b`, `a, b or c`.
pub(crate) fn join_or<'s>(phrases: impl IntoIterator<Item = &'s str>) -> String {
    join_last(phrases, " or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape() -> Shape {
        Shape::new(json!({
            "type": "object",
            "properties": {
                "address": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "currency": {"type": "string", "enum": ["EUR", "USD"]},
                "kind": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                "token": {"type": "string", "writeOnly": true}
            },
            "$defs": {
                "Address": {"type": "object", "properties": {"zip": {"type": "string"}}},
                "Item": {"type": "object", "properties": {"sku": {"type": ["string", "null"]}}}
            }
        }))
    }

    fn path(pointer: &str) -> FieldPath {
        FieldPath::from_pointer(pointer, &Value::Null)
    }

    #[test]
    fn walks_refs_and_branches() {
        let s = shape();
        for (pointer, want) in [
            ("/address/zip", "a string"),
            ("/items/3/sku", "a string or null"),
            ("/address", "an object or null"),
            ("/currency", "one of: 'EUR', 'USD'"),
            ("/kind", "one of: 'a', 'b'"),
        ] {
            assert_eq!(
                s.describe(s.at(&path(pointer)).unwrap()).unwrap(),
                want,
                "{pointer}"
            );
        }
        assert!(s.at(&path("/nope")).is_none());
        assert_eq!(
            s.known_properties(s.at(&path("/address")).unwrap()),
            ["zip"]
        );
    }

    #[test]
    fn write_only_marks_the_subtree() {
        let s = shape();
        assert!(s.is_write_only(&path("/token")));
        assert!(!s.is_write_only(&path("/currency")));
    }
}
