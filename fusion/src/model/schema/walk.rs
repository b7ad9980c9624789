//! The one walk over a JSON Schema's subschemas, which every reader of schemas shares (the
//! portability rules, closing object schemas, wording validation lines), and the JSON Pointer
//! helpers local references need.

use serde_json::{Map, Value};

/// Every keyword that holds subschemas: the first [`NAMED`] a map of them by name, each other
/// one subschema or a list of them.
pub(crate) const EVERY: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "allOf",
    "anyOf",
    "oneOf",
    "prefixItems",
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
];

/// How many keywords of [`EVERY`] come first and hold a map of subschemas by name.
const NAMED: usize = 5;

/// Whether `keyword`'s value is a map of subschemas by name (`properties`, `$defs`, ...).
pub(crate) fn names_subschemas(keyword: &str) -> bool {
    EVERY[..NAMED].contains(&keyword)
}

/// The keywords that apply their subschemas to the instance their own schema applies to: a
/// schema's branches.
pub(crate) const BRANCHES: &[&str] = &["allOf", "anyOf", "oneOf"];

/// A walk down the keywords given, depth first in each schema's keyword order, and through
/// local `$ref`s when asked ([`Walk::through_refs`]). Only schema objects are visited: `true`
/// and `false` say nothing to read.
#[derive(Clone, Copy)]
pub(crate) struct Walk<'a> {
    keywords: &'a [&'a str],
    /// The document `$ref`s resolve in, when they are followed.
    refs: Option<&'a Value>,
    /// How many steps down a schema is visited.
    max_depth: usize,
}

/// A schema object reached by a [`Walk`].
pub(crate) struct Node<'a> {
    pub(crate) schema: &'a Map<String, Value>,
    /// The JSON Pointer to the schema from where the walk started (from the target's own place
    /// after a `$ref`).
    pub(crate) pointer: String,
    /// How many steps below the start.
    pub(crate) depth: usize,
    /// The position among the nodes walked of the one this was reached from.
    pub(crate) parent: Option<usize>,
}

impl<'a> Walk<'a> {
    /// A walk down `keywords` (such as [`EVERY`] or [`BRANCHES`]).
    pub(crate) fn new(keywords: &'a [&'a str]) -> Walk<'a> {
        Walk {
            keywords,
            refs: None,
            max_depth: usize::MAX,
        }
    }

    /// Also down each local `$ref` (into `root`), seen before the keywords that sort after
    /// it; `max_depth` steps down at most, which stops a recursive schema.
    pub(crate) fn through_refs(self, root: &'a Value, max_depth: usize) -> Walk<'a> {
        Walk {
            refs: Some(root),
            max_depth,
            ..self
        }
    }

    /// The schemas from `start` (itself first; none: nothing), depth first.
    pub(crate) fn from(
        self,
        start: Option<&'a Map<String, Value>>,
    ) -> impl Iterator<Item = Node<'a>> {
        let mut stack: Vec<Node<'a>> = start
            .into_iter()
            .map(|schema| Node {
                schema,
                pointer: String::new(),
                depth: 0,
                parent: None,
            })
            .collect();
        let mut walked = 0;
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            if node.depth < self.max_depth {
                let at = stack.len();
                self.children(&node, walked, &mut stack);
                // Popped last pushed first: reversed, they come in the schema's order.
                stack[at..].reverse();
            }
            walked += 1;
            Some(node)
        })
    }

    /// Pushes the schema objects directly below `node` (the `index`th node walked).
    fn children(&self, node: &Node<'a>, index: usize, out: &mut Vec<Node<'a>>) {
        let mut push = |value: &'a Value, pointer: String| {
            if let Value::Object(schema) = value {
                out.push(Node {
                    schema,
                    pointer,
                    depth: node.depth + 1,
                    parent: Some(index),
                });
            }
        };
        for (keyword, value) in node.schema {
            if keyword == "$ref"
                && let Some(root) = self.refs
                && let Some(pointer) = value.as_str().and_then(local_pointer)
                && let Some(target) = root.pointer(&pointer)
            {
                push(target, pointer);
                continue;
            }
            if !self.keywords.contains(&keyword.as_str()) {
                continue;
            }
            let here = format!("{}/{}", node.pointer, escape_pointer(keyword));
            match (names_subschemas(keyword), value) {
                (true, Value::Object(named)) => named.iter().for_each(|(name, child)| {
                    push(child, format!("{here}/{}", escape_pointer(name)));
                }),
                (true, _) => {}
                (false, Value::Array(list)) => list.iter().enumerate().for_each(|(i, child)| {
                    push(child, format!("{here}/{i}"));
                }),
                (false, child) => push(child, here),
            }
        }
    }
}

/// The JSON Pointer a local reference designates: its fragment percent-decoded
/// (`#/$defs/A%3CB%3E` → `/$defs/A<B>`, `#` → the empty pointer). `None` for a reference to
/// another document or with broken escapes.
pub(crate) fn local_pointer(reference: &str) -> Option<String> {
    percent_decode(reference.strip_prefix('#')?)
}

/// The value `pointer` (RFC 6901) designates in a schema held as its map: the first step
/// taken in `root`, the rest by `Value::pointer`; `None` for the empty pointer.
pub(crate) fn at_pointer<'a>(root: &'a Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let steps = pointer.strip_prefix('/')?;
    let first = steps.find('/').unwrap_or(steps.len());
    root.get(&unescape_pointer_token(&steps[..first]))?
        .pointer(&steps[first..])
}

/// The schema object a local reference designates in `root`, the document it sits in:
/// `#/$defs/Address`, `#/definitions/a~1b` (the definition `a/b`), `#/$defs/Page%3CT%3E` (the
/// definition `Page<T>`), or any deeper pointer. `None` for `#` (the root, held here as its
/// map), a reference to another document, broken escapes, or nothing there.
pub(crate) fn resolve<'a>(
    root: &'a Map<String, Value>,
    reference: &str,
) -> Option<&'a Map<String, Value>> {
    at_pointer(root, &local_pointer(reference)?)?.as_object()
}

/// The name a local reference points at: `Address` for `#/$defs/Address`, `Page<Invoice>` for
/// `#/$defs/Page%3CInvoice%3E` (how schemars refers to a type renamed `Page<{T}>`); `None` for
/// a reference to anything but one definition.
pub(crate) fn local_definition(reference: &str) -> Option<String> {
    // A URI fragment, percent-encoded (RFC 3986, section 3.5), holding a JSON Pointer whose
    // escapes are undone after the percent-decoding (RFC 6901, sections 4 and 6).
    let pointer = local_pointer(reference)?;
    let name = pointer
        .strip_prefix("/$defs/")
        .or_else(|| pointer.strip_prefix("/definitions/"))?;
    // A `/` left (sent as `/` or as `%2F`) is a step below the definition, not part of its name.
    if name.contains('/') {
        return None;
    }
    Some(unescape_pointer_token(name))
}

/// `name` as a JSON pointer token (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer token as the name it stands for (`~1` → `/`, `~0` → `~`).
pub(crate) fn unescape_pointer_token(token: &str) -> String {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~")
    } else {
        token.to_owned()
    }
}

/// Decodes the `%XX` escapes of a URI fragment (RFC 3986, section 2.1; schemars
/// percent-encodes `$defs` names with characters such as `<` or a space). `None` when a `%` is
/// not followed by two hex digits or the decoded bytes are not UTF-8: no reference designates
/// anything then.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let digit = |b: u8| char::from(b).to_digit(16);
            let (high, low) = (digit(hex[0])?, digit(hex[1])?);
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn walks_depth_first_in_keyword_order_through_references_when_asked() {
        let schema = json!({
            "properties": {"a/b": {"items": {"type": "string"}}, "c": true},
            "anyOf": [{"$ref": "#/$defs/D"}],
            "$defs": {"D": {"not": {"$ref": "#"}}},
            "enum": [{"properties": {}}]
        });
        let walked = |walk: Walk<'_>| -> Vec<(String, Option<usize>)> {
            let nodes = walk.from(schema.as_object());
            nodes.map(|node| (node.pointer, node.parent)).collect()
        };
        let expected = [
            ("", None),
            ("/$defs/D", Some(0)),
            ("/$defs/D/not", Some(1)),
            ("/anyOf/0", Some(0)),
            ("/properties/a~1b", Some(0)),
            ("/properties/a~1b/items", Some(4)),
        ];
        let expected = expected.map(|(p, parent)| (p.to_owned(), parent));
        assert_eq!(walked(Walk::new(EVERY)), expected);
        let through_refs = Walk::new(BRANCHES).through_refs(&schema, 2);
        let pointers: Vec<String> = walked(through_refs).into_iter().map(|(p, _)| p).collect();
        assert_eq!(pointers, ["", "/anyOf/0", "/$defs/D"]);
    }

    #[test]
    fn local_definition_decodes_percent_escapes_then_pointer_escapes() {
        let named = |reference: &str| local_definition(reference);
        assert_eq!(
            named("#/$defs/Page%3CEntry%3E").as_deref(),
            Some("Page<Entry>")
        );
        assert_eq!(named("#/definitions/a~1b~0c").as_deref(), Some("a/b~c"));
        assert_eq!(named("#/$defs/a%7E1b").as_deref(), Some("a/b"));
        // A `/`, sent as such or as `%2F`, is a step below a definition; broken escapes and
        // bytes that are not UTF-8 designate nothing.
        for nothing in [
            "#/$defs/a/b",
            "#/$defs/a%2Fb",
            "#/$defs/x%+1",
            "#/$defs/a%FF",
            "#/x",
        ] {
            assert_eq!(named(nothing), None, "{nothing}");
        }
    }

    #[test]
    fn resolve_follows_local_pointers_with_their_escapes() {
        let root = json!({
            "$defs": {"Page<T>": {"type": "object"}, "a/b~c": {"type": "string"}},
            "definitions": {"Old": {"type": "integer"}},
            "properties": {"n": {"type": "number"}}
        });
        let root = root.as_object().unwrap();
        let kind = |reference: &str| resolve(root, reference).map(|s| s["type"].clone());
        assert_eq!(kind("#/$defs/Page%3CT%3E"), Some(json!("object")));
        assert_eq!(kind("#/$defs/a~1b~0c"), Some(json!("string")));
        assert_eq!(kind("#/definitions/Old"), Some(json!("integer")));
        assert_eq!(kind("#/properties/n"), Some(json!("number")));
        for nothing in ["#", "#/$defs/Nope", "other.json#/$defs/Old", "#/$defs/a%FF"] {
            assert_eq!(kind(nothing), None, "{nothing}");
        }
    }

    #[test]
    fn percent_escapes_decode() {
        assert_eq!(percent_decode("/$defs/A%3CB%3E").unwrap(), "/$defs/A<B>");
        assert_eq!(percent_decode("/$defs/%7e0%25").unwrap(), "/$defs/~0%");
        // Not two hex digits (`from_str_radix` would take `+1`), or not UTF-8.
        for bad in ["%zz", "%+1", "%4", "a%", "%FF", "%C3"] {
            assert_eq!(percent_decode(bad), None, "{bad}");
        }
    }
}
