//! Schema-guided decoding of stringified JSON: an argument sent as a string that holds JSON
//! (`"items": "[{\"sku\": \"a\"}]"`) where the action's schema wants an array, an object, a
//! number, an integer or a boolean, read as the value the string holds.
//!
//! A string is decoded when, at its place in the schema (local `$ref`s, `properties`,
//! `patternProperties`, `additionalProperties`, `prefixItems`, `items`, and the
//! `allOf`/`anyOf`/`oneOf` branches), no schema allows a string and one allows the type of the
//! JSON it holds: an integer where a number is wanted, an integral number (`2.0`) where an
//! integer is. A string where a string is allowed (a `String` field, an `anyOf` with a string
//! branch, a field of any type) is never parsed, whatever it looks like; neither is one over
//! the byte limit, nor one that is not JSON, nor one holding JSON of a type the place refuses
//! (`"[1]"` for a number): those reach validation as sent. The decoded value is walked the
//! same way (a stringified array of stringified objects), a few levels down.
//!
//! A decoded field is named by the type its place wants: a whole number read where any number
//! is allowed (`"5"` for an `f64`) is a `number`, one read where only whole numbers are
//! (`"2.0"` for a `u32`) an `integer`.
//!
//! serde_json's parser reads JSON nested at most [`PARSER_DEPTH`] levels deep. A string that
//! would be decoded but fails to parse, and whose brackets (outside string literals) nest
//! deeper than that, is measured instead of read: when the arguments, counted with it read,
//! are nested deeper than the validator accepts, decoding reports that depth
//! ([`Decoded::too_deep`]) and the call is refused for its nesting, as the same JSON sent as
//! JSON is. The string itself stays as sent.
//!
//! Finding the candidates costs one pass over the arguments that looks at the first byte of
//! each string; the schema is read only along the paths of strings that start like JSON of
//! another type (`[`, `{`, `-`, a digit, `t`, `f`).

use serde_json::{Map, Value};

use super::depth::nesting_depth;
use super::path::FieldPath;
use super::shape::Shape;

/// How many strings inside decoded strings are decoded in turn.
const MAX_NESTING: usize = 4;

/// The deepest nesting of arrays and objects serde_json's parser reads (its recursion limit is
/// 128 levels).
const PARSER_DEPTH: usize = 127;

/// How deep `$ref` chains and combinator branches are followed when asking what a place
/// allows (as the wording of lines does); past it, a place allows anything.
const MAX_SCHEMA_DEPTH: usize = 16;

/// One argument read from the JSON its string held: where (`items`, `order.lines[0]`), and
/// the JSON type it was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DecodedField {
    pub(crate) path: FieldPath,
    /// `array`, `object`, `integer`, `number` or `boolean`: the type the place wants (a whole
    /// number read for an `f64` is a `number`).
    pub(crate) json_type: &'static str,
}

/// What decoding did to a call's arguments.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    /// The fields decoded, in the arguments' order.
    pub(crate) fields: Vec<DecodedField>,
    /// When a string among `fields` holds JSON nested deeper than the parser reads (and the
    /// arguments with it deeper than allowed): how deep the arguments are nested, counted
    /// with that JSON read. The string stays as sent; the call is to be refused for its depth.
    pub(crate) too_deep: Option<usize>,
}

/// Replaces every string of `args` that holds JSON of a type its place in `shape` wants (and
/// allows no string) by that value; the fields decoded, in the arguments' order. Strings
/// longer than `max_bytes` are left alone. `max_depth` is the deepest nesting the arguments
/// may have (see [`Decoded::too_deep`]).
pub(crate) fn decode(
    shape: &Shape,
    args: &mut Map<String, Value>,
    max_bytes: Option<usize>,
    max_depth: usize,
) -> Decoded {
    let mut decoded = Decoded::default();
    if !has_candidates(args) {
        return decoded;
    }
    let mut value = Value::Object(std::mem::take(args));
    let root = [shape.root()];
    let mut walk = Decoder {
        shape,
        max_bytes,
        max_depth,
        decoded: &mut decoded,
    };
    walk.decode_in(&root, &mut value, &FieldPath::root(), 0);
    if let Some(levels) = &mut decoded.too_deep {
        *levels = (*levels).max(nesting_depth(&value));
    }
    if let Value::Object(map) = value {
        *args = map;
    }
    decoded
}

/// Whether a string of `args` could hold JSON of a type other than a string. Allocates
/// nothing for flat arguments.
fn has_candidates(args: &Map<String, Value>) -> bool {
    let mut values = args.values();
    let mut nested: Vec<&Value> = Vec::new();
    while let Some(value) = values.next().or_else(|| nested.pop()) {
        match value {
            Value::String(text) if looks_like_json(text) => return true,
            Value::Array(items) => nested.extend(items),
            Value::Object(map) => nested.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// Whether `text` starts (after JSON whitespace) as an array, an object, a number or a
/// boolean does.
fn looks_like_json(text: &str) -> bool {
    let first = text
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    matches!(first, Some(b'[' | b'{' | b'-' | b'0'..=b'9' | b't' | b'f'))
}

/// One step from a value to a child, borrowing the key.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// The paths (relative to `value`) of its strings that [`looks_like_json`], in order. Without
/// recursion: arguments built in memory may be nested deeper than the stack allows.
fn candidates(value: &Value) -> Vec<Vec<Step<'_>>> {
    let mut found = Vec::new();
    let mut path: Vec<Step<'_>> = Vec::new();
    let mut stack: Vec<(&Value, usize, Option<Step<'_>>)> = vec![(value, 0, None)];
    while let Some((value, depth, step)) = stack.pop() {
        path.truncate(depth.saturating_sub(1));
        path.extend(step);
        match value {
            Value::String(text) if looks_like_json(text) => found.push(path.clone()),
            Value::Array(items) => {
                let children = items.iter().enumerate().rev();
                stack.extend(children.map(|(i, item)| (item, depth + 1, Some(Step::Index(i)))));
            }
            Value::Object(map) => {
                let children = map.iter().rev();
                stack.extend(children.map(|(k, item)| (item, depth + 1, Some(Step::Key(k)))));
            }
            _ => {}
        }
    }
    found
}

/// How deep the arrays and objects of the JSON `text` nest, counted by their brackets outside
/// string literals, without parsing: for JSON deeper than the parser reads.
fn bracket_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The JSON type of a decoded value, as a place's schema is asked about it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    String,
    Boolean,
    Array,
    Object,
    Integer,
    /// A number with a fraction or an exponent; `integral` when its value is whole (`2.0`),
    /// which JSON Schema counts as an integer.
    Number {
        integral: bool,
    },
}

impl Kind {
    /// The kind of `value`; `None` for `null` (never decoded) .
    fn of(value: &Value) -> Option<Kind> {
        Some(match value {
            Value::Null => return None,
            Value::String(_) => Kind::String,
            Value::Bool(_) => Kind::Boolean,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
            Value::Number(n) if n.is_i64() || n.is_u64() => Kind::Integer,
            Value::Number(n) => Kind::Number {
                integral: n.as_f64().is_some_and(|f| f.fract() == 0.0),
            },
        })
    }

    /// Whether the JSON Schema type `name` admits values of this kind.
    fn is(self, name: &str) -> bool {
        matches!(
            (self, name),
            (Kind::String, "string")
                | (Kind::Boolean, "boolean")
                | (Kind::Array, "array")
                | (Kind::Object, "object")
                | (Kind::Integer | Kind::Number { .. }, "number")
                | (Kind::Integer | Kind::Number { integral: true }, "integer")
        )
    }

    /// The type name reported for a decoded value.
    fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Boolean => "boolean",
            Kind::Array => "array",
            Kind::Object => "object",
            Kind::Integer => "integer",
            Kind::Number { .. } => "number",
        }
    }

    /// Whether `literal` (an `enum` option, a `const`) is of this kind.
    fn matches(self, literal: &Value) -> bool {
        match literal {
            Value::Number(_) => matches!(self, Kind::Integer | Kind::Number { .. }),
            other => Kind::of(other) == Some(self),
        }
    }
}

/// Whether `node` lets some value of `kind` through, as far as types go: its `type`, `enum`
/// and `const`, what its `$ref` designates, every `allOf` branch and one branch of each
/// `anyOf`/`oneOf`. `true` and `{}` allow everything, `false` nothing.
fn allows(shape: &Shape, node: &Value, kind: Kind, depth: usize) -> bool {
    let Value::Object(schema) = node else {
        return node.as_bool().unwrap_or(true);
    };
    if depth > MAX_SCHEMA_DEPTH {
        return true;
    }
    let typed = match schema.get("type") {
        Some(Value::String(name)) => kind.is(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).any(|n| kind.is(n)),
        _ => true,
    };
    let listed = match schema.get("enum") {
        Some(Value::Array(options)) => options.iter().any(|o| kind.matches(o)),
        _ => true,
    };
    let constant = schema.get("const").is_none_or(|c| kind.matches(c));
    if !(typed && listed && constant) {
        return false;
    }
    let deeper = |branch: &Value| allows(shape, branch, kind, depth + 1);
    if shape.target(node).is_some_and(|target| !deeper(target)) {
        return false;
    }
    if let Some(Value::Array(all)) = schema.get("allOf")
        && !all.iter().all(deeper)
    {
        return false;
    }
    ["anyOf", "oneOf"]
        .iter()
        .all(|keyword| match schema.get(*keyword) {
            Some(Value::Array(branches)) => branches.iter().any(deeper),
            _ => true,
        })
}

/// What a string to decode holds.
enum Read {
    /// The value, and the type its place wants it as.
    Value(Value, &'static str),
    /// JSON of `kind` (an array or an object) nested this many levels deep, more than the
    /// parser reads.
    TooDeep(Kind, usize),
}

/// The walk of one decoding: the schema, the limits, what was decoded so far.
struct Decoder<'s, 'o> {
    shape: &'s Shape,
    max_bytes: Option<usize>,
    max_depth: usize,
    decoded: &'o mut Decoded,
}

impl<'s> Decoder<'s, '_> {
    /// Decodes the strings of `value` (at `at`, described by the schemas `places`), and,
    /// `nesting` levels of strings deep at most, the strings of the values they held.
    fn decode_in(
        &mut self,
        places: &[&'s Value],
        value: &mut Value,
        at: &FieldPath,
        nesting: usize,
    ) {
        // The candidates' places are read while `value` is borrowed; the strings are replaced
        // after, by path (no candidate is inside another: each is a string).
        let planned: Vec<(FieldPath, Vec<&'s Value>)> = candidates(value)
            .into_iter()
            .filter_map(|steps| {
                let places = self.places(places, &steps);
                if places.is_empty() {
                    return None;
                }
                let mut path = at.clone();
                for step in steps {
                    match step {
                        Step::Key(k) => path.push_key(k),
                        Step::Index(i) => path.push_index(i),
                    }
                }
                Some((path, places))
            })
            .collect();
        for (path, places) in planned {
            let relative = &path.segments()[at.segments().len()..];
            let Some(slot) = lookup_mut(value, relative) else {
                continue;
            };
            let json_type = match self.parse(slot, &places) {
                Some(Read::Value(parsed, json_type)) => {
                    *slot = parsed;
                    json_type
                }
                Some(Read::TooDeep(kind, levels)) => {
                    // The containers above the string are as many as its path has segments.
                    let levels = path.segments().len() + levels;
                    if levels <= self.max_depth {
                        continue;
                    }
                    let deepest = self.decoded.too_deep.get_or_insert(levels);
                    *deepest = (*deepest).max(levels);
                    kind.name()
                }
                None => continue,
            };
            self.decoded.fields.push(DecodedField {
                path: path.clone(),
                json_type,
            });
            if nesting < MAX_NESTING && matches!(slot, Value::Array(_) | Value::Object(_)) {
                self.decode_in(&places, slot, &path, nesting + 1);
            }
        }
    }

    /// The schemas describing the value at `steps` below a value described by `places`.
    fn places(&self, places: &[&'s Value], steps: &[Step<'_>]) -> Vec<&'s Value> {
        let mut current = places.to_vec();
        for step in steps {
            current = (current.iter())
                .flat_map(|node| match step {
                    Step::Key(k) => self.shape.properties(node, k),
                    Step::Index(i) => self.shape.items(node, *i),
                })
                .collect();
            if current.is_empty() {
                break;
            }
        }
        current
    }

    /// What `slot`'s string holds, when the string is to be decoded: no schema of `places`
    /// allows a string, one allows the value's type, and the string is within the byte limit.
    fn parse(&self, slot: &Value, places: &[&'s Value]) -> Option<Read> {
        let Value::String(text) = slot else {
            return None;
        };
        if self.max_bytes.is_some_and(|limit| text.len() > limit) {
            return None;
        }
        let allowed = |kind| places.iter().any(|p| allows(self.shape, p, kind, 0));
        if allowed(Kind::String) {
            return None;
        }
        // What the first byte promises, checked before parsing: a long string that could
        // only be JSON of a type the place refuses is not parsed at all.
        let promised = match text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .bytes()
            .next()
        {
            Some(b'[') => Kind::Array,
            Some(b'{') => Kind::Object,
            Some(b't' | b'f') => Kind::Boolean,
            _ => Kind::Number { integral: true },
        };
        if !allowed(promised) {
            return None;
        }
        let Ok(parsed) = serde_json::from_str::<Value>(text) else {
            let levels = bracket_depth(text);
            let nested = matches!(promised, Kind::Array | Kind::Object);
            return (nested && levels > PARSER_DEPTH).then_some(Read::TooDeep(promised, levels));
        };
        let kind = Kind::of(&parsed).filter(|k| *k != Kind::String)?;
        if !allowed(kind) {
            return None;
        }
        // A number is named by what its place wants: any number, or whole ones only.
        let json_type = match kind {
            Kind::Integer | Kind::Number { .. } if allowed(Kind::Number { integral: false }) => {
                "number"
            }
            Kind::Integer | Kind::Number { .. } => "integer",
            _ => kind.name(),
        };
        Some(Read::Value(parsed, json_type))
    }
}

/// The value at `segments` below `value`, mutably.
fn lookup_mut<'v>(
    value: &'v mut Value,
    segments: &[super::path::Segment],
) -> Option<&'v mut Value> {
    use super::path::Segment;
    segments
        .iter()
        .try_fold(value, |value, segment| match segment {
            Segment::Key(k) => value.as_object_mut()?.get_mut(k),
            Segment::Index(i) => value.as_array_mut()?.get_mut(*i),
        })
}

#[cfg(test)]
#[path = "stringified_tests.rs"]
mod tests;
