//! The fast acceptance check: for the simplest argument schemas, a flat object of scalar
//! fields, a direct walk that says "valid" without running the JSON Schema validator.
//!
//! Most actions take a struct of strings, numbers and booleans, and schemars gives it a schema
//! with nothing but `type`, `properties`, `required`, `additionalProperties`, annotations, the
//! number formats the validator ignores, and `minimum`/`maximum` for unsigned integers. For
//! such a schema [`FastCheck::accepts`] decides most valid calls with one lookup per field.
//!
//! It only ever accepts: anything it is not sure of (an unknown field, a float where an
//! integer is wanted, a nested value, a missing required field) falls back to the full path,
//! the nesting check and `jsonschema`, which decides and words the problems. So the one
//! property to keep is: whatever it accepts, the compiled schema accepts too (a proptest
//! checks it against `jsonschema`). Accepted arguments hold only scalars, so they are nested
//! one level deep, within any nesting limit of at least one level.

use serde_json::{Map, Number, Value};

/// The check of one action's arguments, built from its (closed) input schema when the schema
/// is in the subset described in the module docs.
#[derive(Debug)]
pub(crate) struct FastCheck {
    /// Sorted by name, as a `serde_json::Map` iterates (unless its `preserve_order` feature
    /// is on; then lookups just take longer).
    fields: Vec<Field>,
    /// How many fields are required.
    required: usize,
}

#[derive(Debug)]
struct Field {
    name: String,
    /// The JSON types accepted, as a set of the `NULL`..`STRING` bits.
    types: u8,
    required: bool,
    /// Inclusive bounds on an integer value, exact (`minimum`, `maximum`).
    minimum: Option<i128>,
    maximum: Option<i128>,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
const NUMBER: u8 = 8;
const STRING: u8 = 16;

/// Keywords that never affect validation (JSON Schema 2020-12, "A Vocabulary for Basic
/// Meta-Data Annotations", and `$comment`).
const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// The `format`s schemars writes for Rust numbers: `jsonschema` knows none of them, so they
/// assert nothing (the range of an `i32` is serde's to enforce).
const NUMBER_FORMATS: [&str; 16] = [
    "int", "int8", "int16", "int32", "int64", "int128", "isize", "uint", "uint8", "uint16",
    "uint32", "uint64", "uint128", "usize", "float", "double",
];

impl FastCheck {
    /// The check for `schema`, or `None` when the schema uses anything outside the subset.
    pub(crate) fn new(schema: &Value) -> Option<FastCheck> {
        let root = schema.as_object()?;
        let mut properties = None;
        let mut required = None;
        let mut object = false;
        for (key, value) in root {
            match key.as_str() {
                "type" if value == "object" => object = true,
                "properties" => properties = Some(value.as_object()?),
                "required" => required = Some(value.as_array()?),
                // Whatever it says, a field the schema does not list falls back.
                "additionalProperties" if value.is_boolean() => {}
                // Reachable only through `$ref`, which no field of the subset has.
                "$schema" | "$defs" | "definitions" => {}
                key if ANNOTATIONS.contains(&key) => {}
                _ => return None,
            }
        }
        // Without `"type": "object"`, arguments of another type are no mistake to refuse.
        if !object {
            return None;
        }
        let mut fields = properties
            .into_iter()
            .flatten()
            .map(|(name, schema)| Field::new(name, schema))
            .collect::<Option<Vec<Field>>>()?;
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let mut count = 0;
        for name in required.into_iter().flatten() {
            let name = name.as_str()?;
            let index = fields
                .binary_search_by(|f| f.name.as_str().cmp(name))
                .ok()?;
            if !fields[index].required {
                fields[index].required = true;
                count += 1;
            }
        }
        Some(FastCheck {
            fields,
            required: count,
        })
    }

    /// Whether `args` are certainly valid: an object whose every field is declared, of a
    /// declared scalar type, within its bounds, with every required field present. `false`
    /// means "not sure", never "invalid".
    #[cfg(test)]
    pub(crate) fn accepts(&self, args: &Value) -> bool {
        let Value::Object(args) = args else {
            return false;
        };
        self.accepts_map(args)
    }

    /// [`FastCheck::accepts`] of an object.
    pub(crate) fn accepts_map(&self, args: &Map<String, Value>) -> bool {
        let mut required = 0;
        // Where the next field is looked for first: a `Map` iterates in key order, the order
        // of `fields`, so a call that sends every field finds each at once, and one that
        // leaves optional fields out finds each further on. (A `Map` in insertion order, with
        // serde_json's `preserve_order`, may need the fields before `next` too.)
        let mut next = 0;
        for (name, value) in args {
            let index = match self.fields.get(next) {
                Some(field) if same_name(&field.name, name) => next,
                _ => {
                    let named = |field: &Field| same_name(&field.name, name);
                    match self.fields[next..].iter().position(named) {
                        Some(offset) => next + offset,
                        None => match self.fields[..next].iter().position(named) {
                            Some(index) => index,
                            None => return false,
                        },
                    }
                }
            };
            next = index + 1;
            let field = &self.fields[index];
            if !field.accepts(value) {
                return false;
            }
            required += usize::from(field.required);
        }
        required == self.required
    }
}

/// Whether two names (of fields, of actions) are equal. Names are short: from 4 to 16 bytes
/// they are compared as two overlapping words each, with no call to `bcmp`, which is what `==`
/// on strings compiles to and costs more than the comparison itself for a 7-byte name (shorter
/// and longer names use `==`).
#[inline(always)]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match (a.first_chunk::<8>(), a.last_chunk::<8>()) {
        (Some(first), Some(last)) if a.len() <= 16 => {
            b.first_chunk::<8>() == Some(first) && b.last_chunk::<8>() == Some(last)
        }
        (Some(_), _) => a == b,
        _ => match (a.first_chunk::<4>(), a.last_chunk::<4>()) {
            (Some(first), Some(last)) => {
                b.first_chunk::<4>() == Some(first) && b.last_chunk::<4>() == Some(last)
            }
            _ => a == b,
        },
    }
}

impl Field {
    fn new(name: &str, schema: &Value) -> Option<Field> {
        let mut field = Field {
            name: name.to_owned(),
            types: 0,
            required: false,
            minimum: None,
            maximum: None,
        };
        for (key, value) in schema.as_object()? {
            match key.as_str() {
                "type" => field.types = types(value)?,
                "format" if NUMBER_FORMATS.contains(&value.as_str()?) => {}
                "minimum" => field.minimum = Some(integer(value.as_number()?)?),
                "maximum" => field.maximum = Some(integer(value.as_number()?)?),
                key if ANNOTATIONS.contains(&key) => {}
                _ => return None,
            }
        }
        // A field without `type` accepts anything, nested values included: not in the subset.
        (field.types != 0).then_some(field)
    }

    fn accepts(&self, value: &Value) -> bool {
        match value {
            Value::Null => self.types & NULL != 0,
            Value::Bool(_) => self.types & BOOLEAN != 0,
            Value::String(_) => self.types & STRING != 0,
            Value::Number(n) => match integer(n) {
                Some(i) => {
                    self.types & (INTEGER | NUMBER) != 0
                        && self.minimum.is_none_or(|min| i >= min)
                        && self.maximum.is_none_or(|max| i <= max)
                }
                // A float: `5.0` may or may not count as an integer (drafts differ), and a
                // bound would need float comparison; the schema validator decides.
                None => {
                    self.types & NUMBER != 0 && self.minimum.is_none() && self.maximum.is_none()
                }
            },
            Value::Array(_) | Value::Object(_) => false,
        }
    }
}

/// The type set of a `type` keyword made of scalar types only.
fn types(value: &Value) -> Option<u8> {
    let one = |name: &Value| match name.as_str()? {
        "null" => Some(NULL),
        "boolean" => Some(BOOLEAN),
        "integer" => Some(INTEGER),
        "number" => Some(NUMBER),
        "string" => Some(STRING),
        _ => None,
    };
    match value {
        Value::Array(names) => names.iter().try_fold(0, |set, name| Some(set | one(name)?)),
        name => one(name),
    }
}

/// A number held as an integer (not a float, even a whole one), exactly.
fn integer(n: &Number) -> Option<i128> {
    n.as_u64()
        .map(i128::from)
        .or_else(|| n.as_i64().map(i128::from))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schemars::JsonSchema;
    use serde_json::json;

    use super::*;

    #[test]
    fn same_name_agrees_with_equality_at_every_length_and_position() {
        // Lengths 0 to 40 cover every branch (under 4, 4 to 7, 8 to 16, longer); each name is
        // compared with itself, with a copy differing in one byte at every position, and with
        // names one byte shorter and longer.
        for len in 0..=40 {
            let name: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(same_name(&name, &name.clone()), "{name:?} equals itself");
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] = b'_';
                let other = String::from_utf8(other).expect("ASCII");
                assert!(!same_name(&name, &other), "{name:?} against {other:?}");
                assert!(!same_name(&other, &name), "{other:?} against {name:?}");
            }
            let longer = format!("{name}z");
            assert!(!same_name(&name, &longer));
            assert!(!same_name(&longer, &name));
        }
        assert!(same_name("amount_cents", "amount_cents"));
        assert!(!same_name("deposit", "depositt"));
        assert!(!same_name("é", "e\u{301}"));
    }

    proptest! {
        #[test]
        fn same_name_is_string_equality(a in "[a-c_é]{0,20}", b in "[a-c_é]{0,20}") {
            prop_assert_eq!(same_name(&a, &b), a == b);
            prop_assert!(same_name(&a, &a.clone()));
        }
    }

    #[derive(JsonSchema)]
    #[allow(dead_code, reason = "only the schema is used")]
    struct Deposit {
        /// The account to credit.
        account: String,
        amount_cents: u64,
        note: Option<String>,
        level: u8,
        ratio: f64,
        flag: bool,
        offset: i32,
    }

    fn deposit_schema() -> Value {
        super::super::argument::deny_unknown_fields(
            &serde_json::to_value(schemars::schema_for!(Deposit)).unwrap(),
        )
    }

    #[test]
    fn a_schemars_struct_of_scalars_is_in_the_subset() {
        let check = FastCheck::new(&deposit_schema()).expect("in the subset");
        let valid = json!({
            "account": "acc_1", "amount_cents": 5, "note": null, "level": 255,
            "ratio": 0.5, "flag": true, "offset": -3
        });
        assert!(check.accepts(&valid));
        let mut without_note = valid.clone();
        without_note.as_object_mut().unwrap().remove("note");
        assert!(check.accepts(&without_note));
    }

    #[test]
    fn anything_unsure_falls_back() {
        let check = FastCheck::new(&deposit_schema()).unwrap();
        let base = json!({
            "account": "acc_1", "amount_cents": 5, "level": 1, "ratio": 1, "flag": false,
            "offset": 0
        });
        assert!(check.accepts(&base));
        let with = |key: &str, value: Value| {
            let mut args = base.clone();
            args.as_object_mut().unwrap().insert(key.into(), value);
            args
        };
        for args in [
            with("amount_cents", json!(-1)),
            with("amount_cents", json!(5.0)),
            with("amount_cents", json!("5")),
            with("level", json!(256)),
            with("account", json!(["acc_1"])),
            with("account", json!({"id": "acc_1"})),
            with("acount", json!("acc_1")),
            json!("not an object"),
        ] {
            assert!(!check.accepts(&args), "{args}");
        }
        let mut missing = base.clone();
        missing.as_object_mut().unwrap().remove("account");
        assert!(!check.accepts(&missing));
    }

    #[test]
    fn schemas_that_assert_more_are_not_in_the_subset() {
        for schema in [
            json!({"type": "object", "properties": {"id": {"type": "string", "minLength": 1}}}),
            json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}}),
            json!({"type": "object", "properties": {"id": {"type": "string", "format": "email"}}}),
            json!({"type": "object", "properties": {"id": {"enum": ["a", "b"]}}}),
            json!({"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}}}),
            json!({"type": "object", "properties": {"id": {}}}),
            json!({"type": "object", "properties": {"id": {"type": "object"}}}),
            json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 0.5}}}),
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "minProperties": 1}),
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
            json!({"properties": {"id": {"type": "string"}}}),
            json!({"type": "object", "oneOf": []}),
        ] {
            assert!(FastCheck::new(&schema).is_none(), "{schema}");
        }
    }

    /// A property schema of the subset, or (sometimes) one just outside it.
    fn field_schema() -> impl Strategy<Value = Value> {
        let types = prop::sample::subsequence(
            vec!["null", "boolean", "integer", "number", "string"],
            1..=3,
        );
        let bound = prop_oneof![
            Just(None),
            (-3i64..3).prop_map(|n| Some(json!(n))),
            Just(Some(json!(u64::MAX))),
            Just(Some(json!(i64::MIN))),
        ];
        (types, bound.clone(), bound, any::<bool>()).prop_map(|(types, min, max, format)| {
            let mut schema = json!({"type": types, "description": "A field."});
            let object = schema.as_object_mut().unwrap();
            if let Some(min) = min {
                object.insert("minimum".into(), min);
            }
            if let Some(max) = max {
                object.insert("maximum".into(), max);
            }
            if format {
                object.insert("format".into(), json!("uint64"));
            }
            schema
        })
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-4i64..4).prop_map(|n| json!(n)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            prop::sample::select(vec![-1.5, -1.0, 0.0, 2.0, 2.5, 1e300]).prop_map(|f| json!(f)),
            "[a-c]{0,2}".prop_map(Value::String),
            Just(json!([])),
            Just(json!({"a": 1})),
        ]
    }

    /// A schema of the subset (fields `a` to `d`, some required) and arguments sent to it:
    /// mostly its own fields, with any scalar, sometimes one it does not declare.
    fn schema_and_arguments() -> impl Strategy<Value = (Value, Value)> {
        let fields = prop::collection::btree_map("[a-d]", field_schema(), 0..4);
        let required = prop::collection::btree_set("[a-d]", 0..3);
        (fields, required).prop_flat_map(|(fields, required)| {
            let required: Vec<&String> = required
                .iter()
                .filter(|r| fields.contains_key(*r))
                .collect();
            let schema = json!({"type": "object", "properties": fields, "required": required});
            let mut names: Vec<String> = fields.keys().cloned().collect();
            names.push("e".into());
            let values = names
                .into_iter()
                .map(|name| {
                    prop::option::weighted(0.7, scalar()).prop_map(move |v| (name.clone(), v))
                })
                .collect::<Vec<_>>();
            (Just(schema), values).prop_map(|(schema, values)| {
                let args: Map<String, Value> = values
                    .into_iter()
                    .filter_map(|(name, value)| Some((name, value?)))
                    .collect();
                (schema, Value::Object(args))
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The one property: what the fast check accepts, `jsonschema` (as the validator
        /// compiles it, unknown fields closed) accepts too.
        #[test]
        fn whatever_it_accepts_the_schema_validator_accepts(
            (schema, args) in schema_and_arguments()
        ) {
            let closed = super::super::argument::deny_unknown_fields(&schema);
            let check = FastCheck::new(&closed).expect("the generated schemas are in the subset");
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&closed)
                .unwrap();
            if check.accepts(&args) {
                prop_assert!(validator.is_valid(&args), "schema {closed}, arguments {args}");
            }
        }
    }
}
