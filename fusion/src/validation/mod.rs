//! The `<validation_error>` envelope: every problem with a tool call's arguments, one line per
//! field, sorted by path, written so a model fixes everything in one turn (at most 50 lines of
//! problems: one more counts the rest).
//!
//! Three sources feed one envelope: the action's JSON Schema (`jsonschema`), deserialization
//! into the handler's argument type (serde, its first failure located by
//! `serde_path_to_error`), and `validator` rules. [`ArgumentValidator`] runs all three;
//! [`ValidationError`] is the envelope, and can also be built by hand or from
//! `validator::ValidationErrors` alone.

mod argument;
mod cap;
mod closing;
mod cut;
mod depth;
mod deser;
mod locate;
mod path;
mod redundant;
mod report;
mod rules;
mod schema;
mod sent;
mod shape;
mod stringified;

use serde_json::Value;

pub use crate::envelope::validation_error::{FieldProblem, RECOVERY, ValidationError};

pub use crate::model::definition::SchemaError;
pub use argument::{ArgumentValidator, DEFAULT_MAX_DEPTH};
pub(crate) use depth::nesting_depth;
pub(crate) use stringified::DecodedField;

/// A value as the `You sent:` part of a line (`'text'` cut at 50 characters, `12`, `null`,
/// `array(3)`, compact JSON), for other envelopes that echo what the model sent.
pub(crate) use sent::render as sent_value;

impl ValidationError {
    /// A validation error from `validator` rule failures alone, for a handler that runs
    /// `validator::Validate` itself. `args` are the arguments as sent: the `You sent:` values
    /// come from there (so they show what the model wrote), else from the rule's `value` param.
    ///
    /// Nested structs and lists give paths like `address.zip` and `items[0].sku`; a struct-level
    /// rule (`__all__`) is reported at the struct's own path. Rust field names are matched to
    /// the JSON names in `args` (`customer_id` is reported as `customerId` when that is what
    /// was sent). Nothing is redacted: use [`ArgumentValidator::rule_errors`] for secrets.
    pub fn from_validator_errors(
        action: impl Into<String>,
        errors: &validator::ValidationErrors,
        args: &Value,
    ) -> ValidationError {
        let mut found = report::Report::new(args, None, &[]);
        rules::collect(&mut found, errors, &path::FieldPath::root());
        cap::envelope(action, found)
    }
}

#[cfg(test)]
mod tests;
