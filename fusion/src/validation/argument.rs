//! `ArgumentValidator`: an action's input schema compiled once at startup, then used on every
//! call to check, deserialize and rule-validate the arguments into one `ValidationError`.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::path::SecretPath;
use super::report::Report;
use super::shape::Shape;
use super::{ValidationError, deser, rules, schema};

/// The validator of one action's arguments: its JSON Schema compiled once, the paths whose
/// values must never be shown, and the three checks merged into one envelope.
///
/// * The schema is compiled offline (a `$ref` to anything outside the schema is an error, never
///   a network fetch); local `$ref`s into `$defs`, as `schemars::schema_for!` writes them,
///   resolve. `format` is asserted (`email`, `uri`, `date-time`, ...).
/// * Unknown top-level fields are rejected: a root schema with `properties` and no
///   `additionalProperties` is treated as if it said `additionalProperties: false` (or
///   `unevaluatedProperties: false` when it also composes `allOf`/`anyOf`/`oneOf`/`$ref`), so a
///   schemars schema without `deny_unknown_fields` still catches typos, with a "did you mean".
/// * Secret fields show `(redacted)`: those marked with [`ArgumentValidator::secret`] and every
///   property whose schema says `"writeOnly": true`.
///
/// Build it once per action and share it (`Send + Sync`); each call allocates nothing beyond
/// what serde needs unless the arguments are invalid.
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
///      <field name=\"curency\">Unknown field. You sent: 'eur'. Expected one of the known fields: amount, currency; did you mean 'currency'?</field>\n\
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
        let schema = deny_unknown_top_level(schema);
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
        })
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

    /// Whether `args` satisfy the schema. Allocates nothing.
    pub fn is_valid(&self, args: &Value) -> bool {
        self.validator.is_valid(args)
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
        let valid = self.validator.is_valid(args);
        match T::deserialize(args) {
            Ok(value) if valid => Ok(value),
            outcome => {
                let mut report = self.report(args);
                if !valid {
                    schema::collect(&mut report, &self.validator);
                }
                if outcome.is_err() {
                    deser::collect::<T>(&mut report);
                }
                Err(self.finish(report))
            }
        }
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
        let valid = self.validator.is_valid(args);
        let outcome = match T::deserialize(args) {
            Ok(value) if valid => {
                return match run_rules(&value) {
                    None => Ok(value),
                    Some(failures) => Err(self.rule_errors(&failures, args)),
                };
            }
            other => other,
        };
        let mut report = self.report(args);
        if !valid {
            schema::collect(&mut report, &self.validator);
        }
        match &outcome {
            Ok(value) => {
                if let Some(failures) = run_rules(value) {
                    rules::collect(&mut report, &failures);
                }
            }
            Err(_) => deser::collect::<T>(&mut report),
        }
        Err(self.finish(report))
    }

    /// A [`ValidationError`] from `validator` rule failures alone, worded with this schema
    /// (patterns, types of missing fields, JSON field names) and with secrets redacted. `args`
    /// are the arguments as sent.
    pub fn rule_errors(
        &self,
        failures: &validator::ValidationErrors,
        args: &Value,
    ) -> ValidationError {
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
            .finish_non_exhaustive()
    }
}

/// `schema` with unknown top-level fields denied, unless it already says how to treat them.
fn deny_unknown_top_level(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(root) = &mut schema
        && root.contains_key("properties")
        && !root.contains_key("additionalProperties")
        && !root.contains_key("unevaluatedProperties")
        && !root.contains_key("patternProperties")
    {
        // `additionalProperties` only sees sibling `properties`: with composition it would
        // reject the branches' fields, so use the keyword that sees through it.
        let composed = ["allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas"]
            .iter()
            .any(|k| root.contains_key(*k));
        let keyword = if composed {
            "unevaluatedProperties"
        } else {
            "additionalProperties"
        };
        root.insert(keyword.to_owned(), Value::Bool(false));
    }
    schema
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
