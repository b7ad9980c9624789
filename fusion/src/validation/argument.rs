//! `ArgumentValidator`: an action's input schema compiled once at startup, then used on every
//! call to check, deserialize and rule-validate the arguments into one `ValidationError`.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::closing::deny_unknown_fields;
use super::depth::{nesting_depth, within_depth};
use super::path::{FieldPath, ROOT, SecretPath};
use super::report::{Report, line};
use super::schema::count;
use super::shape::Shape;
use super::stringified::{self, Decoded};
use super::{ValidationError, cap, deser, rules, schema};
use crate::model::definition::SchemaError;
use crate::schema::type_name;

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
///   A name the model made up, "did you mean" included, also matches a known field that is one
///   of its words (`invoce_id`: did you mean 'id'?), so an action of one short field still
///   gets a suggestion. A field name (or map key) longer than 50 characters is cut in the
///   path as sent strings are (47 characters plus `...`). At most 10 unknown-field lines are
///   listed (the first by path); one more line, at the object they were sent in (or `(root)`
///   when they span several), counts the rest: `... and 990 more unknown fields, not
///   listed. You sent: 1000 unknown fields. Expected only the fields the object knows
///   (remove every unknown one).`
/// * At most 50 problems are listed in all (the first by path): what a model can act on in
///   one turn, where an array of a hundred thousand wrong items would be as many lines. One
///   more line, at the deepest path that holds the others (the array; `(root)` when they are
///   spread out), counts them: `... and 99950 more problems, not listed. You sent: 100000
///   problems. Expected every problem fixed (fix the ones listed and any like them; the next
///   call lists what is left).` The line counting unknown fields is not one of the 50.
/// * A struct-level `validator` rule (`#[validate(schema(..))]`) echoes the object it checked
///   as compact JSON; one longer than 50 characters is cut between whole members, never
///   inside a value, with the rest counted: `{"email":"a@b.example",... 2 more fields}`.
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
    /// The deepest nesting of arrays and objects accepted.
    max_depth: usize,
}

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
            .map_err(|e| SchemaError::new(action.clone(), e.to_string()))?;
        Ok(ArgumentValidator {
            action,
            validator,
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

    /// Reads each string of `args` that holds JSON where this schema wants an array, an
    /// object, a number, an integer or a boolean (and allows no string) as the value it
    /// holds; strings longer than `max_bytes` are left alone. The fields decoded, in order,
    /// and the depth to refuse when a string holds JSON nested deeper than the parser reads
    /// and than [`ArgumentValidator::max_depth`] allows (see [`ArgumentValidator::depth_refusal`]).
    pub(crate) fn decode_stringified(
        &self,
        args: &mut Map<String, Value>,
        max_bytes: Option<usize>,
    ) -> Decoded {
        stringified::decode(&self.shape, args, max_bytes, self.max_depth)
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
        // Only an array or an object is nested at all.
        Some(self.nested_too_deeply(type_name(args), nesting_depth(args)))
    }

    /// The envelope refusing an arguments object nested `levels` deep (more than
    /// [`ArgumentValidator::max_depth`]), as [`ArgumentValidator::check`] refuses it.
    pub(crate) fn depth_refusal(&self, levels: usize) -> ValidationError {
        self.nested_too_deeply("object", levels)
    }

    /// The one `(root)` problem of arguments (an array or an object: `what`) nested `levels`
    /// deep.
    fn nested_too_deeply(&self, what: &str, levels: usize) -> ValidationError {
        let depth = count(levels as u64, "level");
        let text = line(
            "Arguments nested too deeply",
            &format!("an {what} nested {depth} deep"),
            &format!(
                "at most {} of nesting",
                count(self.max_depth as u64, "level")
            ),
        );
        ValidationError::new(self.action.as_str()).with_problem(ROOT, text)
    }

    /// The structural problems of `args` against the schema (missing and unknown fields, wrong
    /// types, enums, bounds, formats, ...): empty when they are valid.
    pub fn check(&self, args: &Value) -> ValidationError {
        if let Some(error) = self.too_deep(args) {
            return error;
        }
        self.failed(args, self.validator.is_valid(args), None, None)
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
    /// that only sometimes have `validator` rules (generated code): `run_rules` returns the rule
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
        match serde_path_to_error::deserialize::<_, T>(args) {
            Ok(value) => match run_rules(&value) {
                None if valid => Ok(value),
                failures => Err(self.failed(args, valid, None, failures.as_ref())),
            },
            Err(failure) => Err(self.failed(args, valid, Some(&failure), None)),
        }
    }

    /// The envelope of a call: every schema problem unless `valid`, the deserialization
    /// `failure`, and the rule `failures`. Cold: [`ArgumentValidator::parse_with`] calls it
    /// only when something failed.
    #[cold]
    #[inline(never)]
    fn failed(
        &self,
        args: &Value,
        valid: bool,
        failure: Option<&deser::Failure>,
        failures: Option<&validator::ValidationErrors>,
    ) -> ValidationError {
        let mut report = Report::new(args, Some(&self.shape), &self.secrets);
        if !valid {
            schema::collect(&mut report, &self.validator);
        }
        if let Some(failure) = failure {
            deser::add(&mut report, failure);
        }
        if let Some(failures) = failures {
            rules::collect(&mut report, failures, &FieldPath::root());
        }
        cap::envelope(self.action.as_str(), report)
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
        self.failed(args, true, None, Some(failures))
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
