//! `ArgumentValidator`: an action's input schema compiled once at startup, then used on every
//! call to check, deserialize and rule-validate the arguments into one `ValidationError`.

use std::collections::HashSet;
use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::path::{ROOT, SecretPath};
use super::report::{Report, line};
use super::schema::count;
use super::shape::{Shape, percent_decode};
use super::{ValidationError, deser, rules, schema};

/// The deepest nesting of arrays and objects [`ArgumentValidator`] accepts unless told
/// otherwise with [`ArgumentValidator::max_depth`].
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// The validator of one action's arguments: its JSON Schema compiled once, the paths whose
/// values must never be shown, and the three checks merged into one envelope.
///
/// * The schema is compiled offline (a `$ref` to anything outside the schema is an error, never
///   a network fetch); local `$ref`s into `$defs`, as `schemars::schema_for!` writes them,
///   resolve. `format` is asserted (`email`, `uri`, `date-time`, ...).
/// * Unknown fields are rejected at every level: an object schema with `properties` that says
///   nothing about other fields (no `additionalProperties`, `unevaluatedProperties` or
///   `patternProperties`) is treated as if it said `additionalProperties: false`, so a
///   schemars schema without `deny_unknown_fields` still catches typos, with a "did you mean"
///   against that object's own fields (`address.zp`: did you mean 'zip'?). This applies to the
///   root and to every object schema reached through `properties`, `items`, `prefixItems`,
///   schema-valued `additionalProperties`, `$defs` and `definitions`. An object schema that
///   also composes (`allOf`/`anyOf`/`oneOf`/`$ref`/`if`/`dependentSchemas`) gets
///   `unevaluatedProperties: false` instead, which sees the fields of its branches (drafts
///   2019-09 and 2020-12 only; older drafts leave it open). A schema that other schemas
///   combine with their own fields (an `allOf` branch, the target of a `$ref` that has sibling
///   `properties`, as schemars writes internally tagged enum variants) is left open, since
///   closing it would reject the fields it is combined with. `anyOf`/`oneOf` branches
///   themselves are left as written.
/// * A key that an object with `patternProperties` (a map keyed by numbers: schemars writes
///   `^\d+$` for unsigned keys, `^-?\d+$` for signed ones) does not allow is an
///   `Invalid key`, with the key as what was sent and what its keys look like as what is
///   expected (`Invalid key. You sent: 'abc'. Expected a key that is a non-negative integer,
///   such as '1'.`); so is a numeric key out of the key type's range, found by serde
///   (`Expected a key that is an integer from 0 to 255.`). A value under such a key is
///   described by the map's value schema, `writeOnly` included.
/// * A value that matches no branch of a `oneOf`/`anyOf` (an enum with data, an `Option` of a
///   struct) is checked against the branch it is meant for, and that branch's problems are
///   reported at their own paths (`shape.h` missing). The branch is the one whose tag the value
///   carries (a field every branch fixes with `const`: `kind` of `#[serde(tag = "kind")]`,
///   `t` of `#[serde(tag = "t", content = "c")]`), whose one required key it has (externally
///   tagged enums), or whose type it has. A tag that is missing or takes no branch's value is
///   reported as the tag's problem, listing its values (`shape.kind`: `Expected one of:
///   'circle', 'rect'.`). Otherwise the line is a `Wrong type` when no branch takes the value's
///   type, else says the value matches none of the shapes, naming the fields each one requires
///   when they are objects (`Expected one of: an object with 'id'; an object with 'name'.`).
/// * Secret fields show `(redacted)`: those marked with [`ArgumentValidator::secret`] and every
///   property whose schema says `"writeOnly": true`. A value sent anywhere else that equals a
///   secret value, or contains one of at least 4 characters (the password pasted into a
///   `note`), shows `(redacted)` too, and so does such a string inside an echoed object or a
///   rule's param. Only echoed values are redacted, never the wording around them.
/// * Arguments nested deeper than [`ArgumentValidator::max_depth`] (64 levels by default) are
///   refused up front with a single `(root)` problem, before the schema or serde sees them.
///
/// Build it once per action and share it (`Send + Sync`).
///
/// ```
/// use fusion::validation::ArgumentValidator;
/// use serde::Deserialize;
/// use serde_json::json;
///
/// #[derive(Debug, Deserialize)]
/// struct Charge {
///     amount: u64,
///     currency: String,
/// }
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "amount": {"type": "integer", "minimum": 1},
///         "currency": {"type": "string", "enum": ["EUR", "USD"]}
///     },
///     "required": ["amount", "currency"]
/// });
/// let charges = ArgumentValidator::new("billing.charge", &schema).unwrap();
///
/// let ok: Charge = charges.parse(&json!({"amount": 5, "currency": "EUR"})).unwrap();
/// assert_eq!((ok.amount, ok.currency.as_str()), (5, "EUR"));
///
/// let err = charges
///     .parse::<Charge>(&json!({"amount": "5", "curency": "eur"}))
///     .unwrap_err();
/// assert_eq!(
///     err.to_xml(),
///     "<validation_error action=\"billing.charge\">\n\
///      <field name=\"amount\">Wrong type. You sent: '5'. Expected an integer.</field>\n\
///      <field name=\"curency\">Unknown field. You sent: 'eur'. Expected one of the known fields: amount, currency (did you mean 'currency'?).</field>\n\
///      <field name=\"currency\">Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'.</field>\n\
///      <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
///      </validation_error>"
/// );
/// ```
pub struct ArgumentValidator {
    action: String,
    validator: jsonschema::Validator,
    shape: Shape,
    secrets: Vec<SecretPath>,
    /// Whether the schema says `writeOnly` anywhere (saves schema walks when it does not).
    write_only: bool,
    /// The deepest nesting of arrays and objects accepted.
    max_depth: usize,
}

/// The input schema of an action could not be compiled: it is not a valid JSON Schema, or it
/// references something outside itself. Raised at startup by [`ArgumentValidator::new`], never
/// on a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    action: String,
    message: String,
}

impl SchemaError {
    /// A schema error of `action` with `message` (for checks made outside the compiler).
    pub(crate) fn new(action: impl Into<String>, message: impl Into<String>) -> SchemaError {
        SchemaError {
            action: action.into(),
            message: message.into(),
        }
    }

    /// The action whose schema failed.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// What the schema compiler said.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid input schema for action `{}`: {}",
            self.action, self.message
        )
    }
}

impl std::error::Error for SchemaError {}

impl ArgumentValidator {
    /// Compiles `schema` (a JSON Schema, draft detected from `$schema`, 2020-12 by default) for
    /// `action` (`tool.action`, or `tool`).
    ///
    /// # Errors
    ///
    /// [`SchemaError`] when the schema is invalid or has a `$ref` that does not resolve inside
    /// it (nothing is fetched).
    pub fn new(
        action: impl Into<String>,
        schema: &Value,
    ) -> Result<ArgumentValidator, SchemaError> {
        let action = action.into();
        let schema = deny_unknown_fields(schema);
        let validator = jsonschema::options()
            .offline()
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| SchemaError {
                action: action.clone(),
                message: e.to_string(),
            })?;
        Ok(ArgumentValidator {
            action,
            validator,
            write_only: mentions_write_only(&schema),
            shape: Shape::new(schema),
            secrets: Vec::new(),
            max_depth: DEFAULT_MAX_DEPTH,
        })
    }

    /// Sets the deepest nesting of arrays and objects accepted, [`DEFAULT_MAX_DEPTH`] (64) by
    /// default. The arguments object itself is level 1, an object or array inside it level 2,
    /// and so on; scalars add no level.
    ///
    /// Every entry point ([`check`](ArgumentValidator::check),
    /// [`parse`](ArgumentValidator::parse), [`parse_validated`](ArgumentValidator::parse_validated),
    /// [`parse_with`](ArgumentValidator::parse_with),
    /// [`rule_errors`](ArgumentValidator::rule_errors) and
    /// [`is_valid`](ArgumentValidator::is_valid)) measures the nesting before the schema,
    /// serde or the rules run, without recursion, and refuses deeper arguments with one
    /// `(root)` problem:
    ///
    /// `Arguments nested too deeply. You sent: an object nested 100 levels deep. Expected at
    /// most 64 levels of nesting.`
    ///
    /// The depth is counted in full (`an array nested ...` when the arguments are an array).
    /// The schema validator and serde recurse once per level, so deep arguments could
    /// otherwise overflow the stack and abort the process. Arguments parsed from JSON text by
    /// serde_json are nested at most 127 levels (its parser refuses the 128th); a `Value` built
    /// in memory has no such bound. Raising the limit brings the risk back (on a 2 MiB thread
    /// the schema validator overflowed at about 1,000 levels in a debug build).
    pub fn max_depth(mut self, levels: usize) -> ArgumentValidator {
        self.max_depth = levels;
        self
    }

    /// Marks the field at `path` secret, with everything below it: its value shows as
    /// `(redacted)` and never appears anywhere in the envelope. Paths read like envelope
    /// paths (`password`, `card.cvv`); `[]` or `[*]` matches any index (`cards[].cvv`).
    pub fn secret(mut self, path: impl Into<String>) -> ArgumentValidator {
        self.secrets.push(SecretPath::parse(&path.into()));
        self
    }

    /// The action: `tool.action` or `tool`.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The schema as compiled, including the implied `additionalProperties: false`.
    pub fn schema(&self) -> &Value {
        self.shape.root()
    }

    /// Whether `args` satisfy the schema (and are nested no deeper than
    /// [`ArgumentValidator::max_depth`]).
    pub fn is_valid(&self, args: &Value) -> bool {
        within_depth(args, self.max_depth) && self.validator.is_valid(args)
    }

    /// The envelope refusing `args` when they are nested deeper than allowed.
    fn too_deep(&self, args: &Value) -> Option<ValidationError> {
        if within_depth(args, self.max_depth) {
            return None;
        }
        let depth = nesting_depth(args);
        let what = if args.is_array() {
            "an array"
        } else {
            "an object"
        };
        let text = line(
            "Arguments nested too deeply",
            &format!("{what} nested {} deep", count(depth as u64, "level")),
            &format!(
                "at most {} of nesting",
                count(self.max_depth as u64, "level")
            ),
        );
        Some(ValidationError::new(self.action.as_str()).with_problem(ROOT, text))
    }

    fn report<'a>(&'a self, args: &'a Value) -> Report<'a> {
        Report::new(args, Some(&self.shape), &self.secrets, self.write_only)
    }

    fn finish(&self, report: Report<'_>) -> ValidationError {
        let mut error = ValidationError::new(self.action.as_str());
        report.finish_into(&mut error);
        error
    }

    /// The structural problems of `args` against the schema (missing and unknown fields, wrong
    /// types, enums, bounds, formats, ...): empty when they are valid.
    pub fn check(&self, args: &Value) -> ValidationError {
        if let Some(error) = self.too_deep(args) {
            return error;
        }
        let mut report = self.report(args);
        if !self.validator.is_valid(args) {
            schema::collect(&mut report, &self.validator);
        }
        self.finish(report)
    }

    /// Checks `args` against the schema and deserializes them into `T`.
    ///
    /// # Errors
    ///
    /// A [`ValidationError`] with every schema problem, plus the serde failure when it is at a
    /// path the schema did not already report (serde stops at its first failure).
    pub fn parse<T: DeserializeOwned>(&self, args: &Value) -> Result<T, ValidationError> {
        self.parse_with(args, |_: &T| None)
    }

    /// [`ArgumentValidator::parse`], then the `validator` rules of `T`, all in one envelope.
    ///
    /// # Errors
    ///
    /// A [`ValidationError`] with every schema problem, the serde failure, and every rule
    /// failure (rules run whenever deserialization succeeded, even if the schema failed). A
    /// schema keyword schemars derived from a rule (`minLength` from `length`, `format: email`
    /// from `email`, ...) is reported once, in the rule's words.
    pub fn parse_validated<T>(&self, args: &Value) -> Result<T, ValidationError>
    where
        T: DeserializeOwned + validator::Validate,
    {
        self.parse_with(args, |value: &T| value.validate().err())
    }

    /// [`ArgumentValidator::parse_validated`] with the rules given as a function, for callers
    /// that only sometimes have `validator` rules (generated code): `rules` returns the rule
    /// failures of the deserialized value, or `None`. It runs at most once.
    ///
    /// # Errors
    ///
    /// As [`ArgumentValidator::parse_validated`].
    pub fn parse_with<T, F>(&self, args: &Value, run_rules: F) -> Result<T, ValidationError>
    where
        T: DeserializeOwned,
        F: FnOnce(&T) -> Option<validator::ValidationErrors>,
    {
        if let Some(error) = self.too_deep(args) {
            return Err(error);
        }
        let valid = self.validator.is_valid(args);
        match deser::deserialize::<T>(args) {
            Ok(value) => match run_rules(&value) {
                None if valid => Ok(value),
                failures => Err(self.failed(args, valid, None, failures.as_ref())),
            },
            Err(failure) => Err(self.failed(args, valid, Some(&failure), None)),
        }
    }

    /// [`ArgumentValidator::parse_with`] of an arguments object the caller hands over.
    pub(crate) fn parse_owned_with<T, F>(
        &self,
        args: Map<String, Value>,
        run_rules: F,
    ) -> Result<T, ValidationError>
    where
        T: DeserializeOwned,
        F: FnOnce(&T) -> Option<validator::ValidationErrors>,
    {
        self.parse_with(&Value::Object(args), run_rules)
    }

    /// The envelope of a call that failed: every schema problem unless `valid`, the
    /// deserialization `failure`, and the rule `failures`.
    #[cold]
    #[inline(never)]
    fn failed(
        &self,
        args: &Value,
        valid: bool,
        failure: Option<&deser::Failure>,
        failures: Option<&validator::ValidationErrors>,
    ) -> ValidationError {
        let mut report = self.report(args);
        if !valid {
            schema::collect(&mut report, &self.validator);
        }
        if let Some(failure) = failure {
            deser::add(&mut report, failure);
        }
        if let Some(failures) = failures {
            rules::collect(&mut report, failures);
        }
        self.finish(report)
    }

    /// A [`ValidationError`] from `validator` rule failures alone, worded with this schema
    /// (patterns, types of missing fields, JSON field names) and with secrets redacted. `args`
    /// are the arguments as sent. Arguments nested deeper than
    /// [`ArgumentValidator::max_depth`] give the one `(root)` problem saying so instead.
    pub fn rule_errors(
        &self,
        failures: &validator::ValidationErrors,
        args: &Value,
    ) -> ValidationError {
        if let Some(error) = self.too_deep(args) {
            return error;
        }
        let mut report = self.report(args);
        rules::collect(&mut report, failures);
        self.finish(report)
    }
}

impl fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("action", &self.action)
            .field("secrets", &self.secrets)
            .field("max_depth", &self.max_depth)
            .finish_non_exhaustive()
    }
}

/// Keywords that apply other schemas to the same instance as the object they sit in: an
/// object schema using one is closed with `unevaluatedProperties`, which sees their fields.
const COMPOSING: [&str; 6] = ["allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas"];

/// Keywords through which a schema brings fields into the object it describes.
const FIELD_SOURCES: [&str; 11] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// `schema` with unknown fields denied in every object schema that does not already say how to
/// treat them (see [`ArgumentValidator`]). Walks the schema without recursion.
pub(crate) fn deny_unknown_fields(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let unevaluated = knows_unevaluated(&schema);
    let shared = combined_targets(&schema);
    let mut stack: Vec<(String, &mut Value)> = vec![(String::new(), &mut schema)];
    while let Some((pointer, node)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let says_nothing = map.contains_key("properties")
            && !map.contains_key("additionalProperties")
            && !map.contains_key("unevaluatedProperties")
            && !map.contains_key("patternProperties");
        if says_nothing && !shared.contains(&pointer) {
            // `additionalProperties` only sees sibling `properties`: with composition it would
            // reject the branches' fields, so use the keyword that sees through it.
            if !COMPOSING.iter().any(|k| map.contains_key(*k)) {
                map.insert("additionalProperties".to_owned(), Value::Bool(false));
            } else if unevaluated {
                map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
            }
        }
        for (key, child) in map.iter_mut() {
            let at = format!("{pointer}/{}", escape_pointer(key));
            match (key.as_str(), child) {
                ("properties" | "$defs" | "definitions", Value::Object(children)) => {
                    stack.extend(
                        children
                            .iter_mut()
                            .map(|(name, c)| (format!("{at}/{}", escape_pointer(name)), c)),
                    );
                }
                ("items" | "prefixItems", Value::Array(children)) => {
                    stack.extend(
                        children
                            .iter_mut()
                            .enumerate()
                            .map(|(i, c)| (format!("{at}/{i}"), c)),
                    );
                }
                ("items" | "additionalProperties", child @ Value::Object(_)) => {
                    stack.push((at, child));
                }
                _ => {}
            }
        }
    }
    schema
}

/// Whether the schema's draft knows `unevaluatedProperties` (2019-09 and later; `jsonschema`
/// assumes 2020-12 without `$schema`).
fn knows_unevaluated(root: &Value) -> bool {
    root.get("$schema")
        .and_then(Value::as_str)
        .is_none_or(|s| s.contains("2019-09") || s.contains("2020-12"))
}

/// The JSON pointers of the schemas that are combined with other fields on the same object
/// (an `allOf`, `if`/`then`/`else` or `dependentSchemas` branch, or a `$ref`/`anyOf`/`oneOf`
/// next to another source of fields), and of what they stand for in turn: closing one would
/// reject the fields it is combined with.
fn combined_targets(root: &Value) -> HashSet<String> {
    let mut direct = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                let sources = FIELD_SOURCES
                    .iter()
                    .filter(|k| map.contains_key(**k))
                    .count();
                for (key, child) in map {
                    match key.as_str() {
                        "allOf" | "if" | "then" | "else" | "dependentSchemas" => {
                            instance_refs(child, key == "dependentSchemas", &mut direct, 0);
                        }
                        "anyOf" | "oneOf" if sources > 1 => {
                            instance_refs(child, false, &mut direct, 0);
                        }
                        "$ref" if sources > 1 => direct.extend(local_pointer(child)),
                        _ => {}
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    // What a combined schema stands for (`{$ref}` aliases, `anyOf` of one object and null) is
    // combined too.
    let mut shared = HashSet::new();
    while let Some(pointer) = direct.pop() {
        if shared.insert(pointer.clone())
            && let Some(target) = root.pointer(&pointer)
        {
            let mut more = Vec::new();
            instance_refs(target, false, &mut more, 0);
            direct.extend(more);
        }
    }
    shared
}

/// The local `$ref` targets that `schema` (or each of its values, for `map_of_schemas`, or
/// each item of an array of schemas) applies to the same instance: its own `$ref` and those of
/// its `allOf`/`anyOf`/`oneOf` branches.
fn instance_refs(schema: &Value, map_of_schemas: bool, out: &mut Vec<String>, depth: u8) {
    const MAX_DEPTH: u8 = 16;
    if depth > MAX_DEPTH {
        return;
    }
    match schema {
        Value::Array(items) => {
            for item in items {
                instance_refs(item, false, out, depth + 1);
            }
        }
        Value::Object(map) if map_of_schemas => {
            for value in map.values() {
                instance_refs(value, false, out, depth + 1);
            }
        }
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref") {
                out.extend(local_pointer(reference));
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(branches) = map.get(key) {
                    instance_refs(branches, false, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The JSON pointer of a local `$ref` (`#/$defs/A%3CB%3E` → `/$defs/A<B>`).
fn local_pointer(reference: &Value) -> Option<String> {
    let fragment = reference.as_str()?.strip_prefix('#')?;
    Some(percent_decode(fragment))
}

/// `name` as a JSON pointer token (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Whether `value` is nested at most `limit` levels deep ([`nesting_depth`] `<= limit`), the
/// check every call makes: it stops descending at the limit and allocates nothing, so flat and
/// shallow arguments cost one look at each value. It recurses, once per level and never deeper
/// than the limit; a limit above [`RECURSION_LIMIT`] levels takes [`nesting_depth`]'s
/// heap-allocated walk instead, so a large configured limit cannot overflow the stack here.
fn within_depth(value: &Value, limit: usize) -> bool {
    fn walk(value: &Value, budget: usize) -> bool {
        match value {
            Value::Object(map) => budget > 0 && map.values().all(|v| walk(v, budget - 1)),
            Value::Array(items) => budget > 0 && items.iter().all(|v| walk(v, budget - 1)),
            _ => true,
        }
    }
    if limit > RECURSION_LIMIT {
        return nesting_depth(value) <= limit;
    }
    walk(value, limit)
}

/// The deepest limit [`within_depth`] checks by recursion.
const RECURSION_LIMIT: usize = 128;

/// The nesting depth of `value`: 0 for a scalar, 1 for an object or array holding only
/// scalars (or nothing), one more for each level of objects and arrays inside. Without
/// recursion: the stack holds one iterator per open level.
pub(crate) fn nesting_depth(value: &Value) -> usize {
    enum Level<'v> {
        Object(serde_json::map::Values<'v>),
        Array(std::slice::Iter<'v, Value>),
    }
    fn open(value: &Value) -> Option<Level<'_>> {
        match value {
            Value::Object(map) => Some(Level::Object(map.values())),
            Value::Array(items) => Some(Level::Array(items.iter())),
            _ => None,
        }
    }
    let Some(root) = open(value) else {
        return 0;
    };
    let mut stack = vec![root];
    let mut deepest = 1;
    while let Some(level) = stack.last_mut() {
        let next = match level {
            Level::Object(values) => values.next(),
            Level::Array(items) => items.next(),
        };
        match next {
            Some(child) => {
                if let Some(inner) = open(child) {
                    stack.push(inner);
                    deepest = deepest.max(stack.len());
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    deepest
}

/// Whether `writeOnly: true` appears anywhere in `schema`.
fn mentions_write_only(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.get("writeOnly") == Some(&Value::Bool(true))
                || map.values().any(mentions_write_only)
        }
        Value::Array(items) => items.iter().any(mentions_write_only),
        _ => false,
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;
    use serde_json::json;

    /// `levels` nested objects or arrays around a scalar.
    fn nested(levels: usize, array: bool) -> Value {
        (0..levels).fold(json!(1), |inner, _| {
            if array {
                json!([0, inner, "x"])
            } else {
                json!({"a": 0, "b": inner})
            }
        })
    }

    #[test]
    fn the_bounded_check_agrees_with_the_full_count() {
        let mut values = vec![json!(1), json!({}), json!([]), json!({"a": {"b": []}})];
        for levels in [1, 2, 63, 64, 65, 128, 129, 300] {
            values.push(nested(levels, false));
            values.push(nested(levels, true));
        }
        for value in &values {
            let depth = nesting_depth(value);
            for limit in [0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 1_000] {
                assert_eq!(
                    within_depth(value, limit),
                    depth <= limit,
                    "depth {depth}, limit {limit}"
                );
            }
        }
    }
}
