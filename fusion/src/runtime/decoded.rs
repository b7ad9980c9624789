//! Telling that a call's arguments were read from stringified JSON (see
//! [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments)):
//! the fields in the result's `_meta["fusion/decoded"]` and in a `tracing` debug line on every
//! such call, and a warning for the model the first time a session sends each field so (on
//! every such call without a session), saying how to send it next time.

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, PoisonError};

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::join_last;
use crate::model::response::ToolResponse;
use crate::validation::DecodedField;

/// How many (session, action, field) triples are remembered as told; past it the oldest are
/// forgotten (and told again, at worst).
const REMEMBERED: usize = 4096;

/// How many fields a warning names; it counts the rest.
const NAMED: usize = 5;

/// The fields each session has been told about, bounded.
#[derive(Default)]
pub(crate) struct Told {
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    keys: HashSet<String>,
    order: VecDeque<String>,
}

impl std::fmt::Debug for Told {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Told").finish_non_exhaustive()
    }
}

impl Told {
    /// The fields of `decoded` that `session` has not been told about for `action` (all of
    /// them without a session), each field once (`items[0]` and `items[1]` are `items[]`),
    /// now remembered as told.
    fn untold(&self, session: Option<&str>, action: &str, decoded: &[DecodedField]) -> Vec<Field> {
        let mut fields: Vec<Field> = Vec::new();
        for field in decoded {
            let name = field_name(&field.path.render());
            if !fields.iter().any(|f| f.name == name) {
                fields.push(Field {
                    name,
                    json_type: field.json_type,
                });
            }
        }
        let Some(session) = session else {
            return fields;
        };
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        fields.retain(|field| {
            let key = format!("{session}\u{1f}{action}\u{1f}{}", field.name);
            if seen.keys.contains(&key) {
                return false;
            }
            if seen.order.len() >= REMEMBERED
                && let Some(oldest) = seen.order.pop_front()
            {
                seen.keys.remove(&oldest);
            }
            seen.keys.insert(key.clone());
            seen.order.push_back(key);
            true
        });
        fields
    }

    /// `response` to a call of `action` whose arguments were read from stringified JSON at
    /// `decoded`: the paths in its `_meta`, and the warning for the model unless `session` was
    /// told about each field already.
    pub(crate) fn tell(
        &self,
        response: ToolResponse,
        session: Option<&str>,
        action: &str,
        decoded: &[DecodedField],
    ) -> ToolResponse {
        let fields = self.untold(session, action, decoded);
        let paths = decoded.iter().map(|f| f.path.render()).collect();
        let response = response.with_decoded(paths);
        if fields.is_empty() {
            response
        } else {
            response.with_warning(warning(&fields))
        }
    }
}

/// A field as the warning names it, and the type it was read as.
struct Field {
    name: String,
    json_type: &'static str,
}

/// `items[3].qty` as a field, whatever the element: `items[].qty`.
fn field_name(path: &str) -> String {
    let mut parts = path.split('[');
    let mut name = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        // What follows the index, from its `]` (nothing when it is not closed).
        name.push('[');
        name.push_str(part.find(']').map_or("", |end| &part[end..]));
    }
    name
}

/// `an array`, `an integer`: the type a field was read as.
fn phrase(json_type: &str) -> &'static str {
    match json_type {
        "array" => "an array",
        "object" => "an object",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "a boolean",
        _ => "a JSON value",
    }
}

/// The warning for the model: the fields sent as strings of JSON, read as what they held, and
/// how to send them next time. `VALIDATION_ERROR` (the arguments did not match the schema as
/// sent) with the warning severity: the call went on.
fn warning(fields: &[Field]) -> ToolError {
    let named = &fields[..fields.len().min(NAMED)];
    let more = fields.len() - named.len();
    let mut quoted: Vec<String> = named.iter().map(|f| format!("'{}'", f.name)).collect();
    let mut advice: Vec<String> = (named.iter())
        .map(|f| format!("'{}' as {}", f.name, phrase(f.json_type)))
        .collect();
    if more > 0 {
        quoted.push(format!("{more} more"));
        advice.push(format!("the {more} others as what they hold"));
    }
    let (message, recovery) = match named {
        [one] if more == 0 => (
            format!(
                "The argument '{}' was sent as a string holding JSON; it was read as the {} in \
                 that string.",
                one.name, one.json_type
            ),
            format!(
                "Send '{}' as {} itself, not as a string, in later calls.",
                one.name,
                phrase(one.json_type)
            ),
        ),
        _ => (
            format!(
                "The arguments {} were sent as strings holding JSON; each was read as the value \
                 in its string.",
                join_last(&quoted, " and ")
            ),
            format!(
                "Send {}, not as strings, in later calls.",
                join_last(&advice, " and ")
            ),
        ),
    };
    ToolError::new(ErrorCode::ValidationError, message)
        .suggest(recovery)
        .warning()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::ArgumentValidator;
    use serde_json::json;

    fn decoded(args: serde_json::Value) -> Vec<DecodedField> {
        let schema = json!({"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
            "qty": {"type": "integer"}
        }});
        let validator = ArgumentValidator::new("shop.order", &schema).unwrap();
        let mut args = args.as_object().unwrap().clone();
        validator.decode_stringified(&mut args, None).fields
    }

    #[test]
    fn a_session_is_told_once_per_field_and_a_call_without_one_every_time() {
        let told = Told::default();
        let fields = decoded(json!({"items": "[{\"qty\": \"1\"}, {\"qty\": \"2\"}]"}));
        let first = told.tell(ToolResponse::text("ok"), Some("s1"), "shop.order", &fields);
        assert_eq!(
            first.decoded_arguments(),
            ["items", "items[0].qty", "items[1].qty"]
        );
        let warning = &first.warnings()[0];
        assert_eq!(
            warning.message(),
            "The arguments 'items' and 'items[].qty' were sent as strings holding JSON; each was \
             read as the value in its string."
        );
        assert_eq!(
            warning.recovery(),
            Some(
                "Send 'items' as an array and 'items[].qty' as an integer, not as strings, in \
                 later calls."
            )
        );
        assert!(!first.is_error());

        let again = told.tell(ToolResponse::text("ok"), Some("s1"), "shop.order", &fields);
        assert!(again.warnings().is_empty());
        assert_eq!(again.decoded_arguments().len(), 3);
        let other = told.tell(ToolResponse::text("ok"), Some("s2"), "shop.order", &fields);
        assert_eq!(other.warnings().len(), 1);
        for _ in 0..2 {
            let sessionless = told.tell(ToolResponse::text("ok"), None, "shop.order", &fields);
            assert_eq!(sessionless.warnings().len(), 1);
        }

        let one = decoded(json!({"qty": "7"}));
        let response = told.tell(ToolResponse::text("ok"), Some("s1"), "shop.order", &one);
        let warning = &response.warnings()[0];
        assert_eq!(
            warning.message(),
            "The argument 'qty' was sent as a string holding JSON; it was read as the integer in \
             that string."
        );
        assert_eq!(
            warning.recovery(),
            Some("Send 'qty' as an integer itself, not as a string, in later calls.")
        );
        assert_eq!(warning.code(), &ErrorCode::ValidationError);
    }

    #[test]
    fn the_memory_of_what_was_told_is_bounded() {
        let told = Told::default();
        let fields = decoded(json!({"qty": "7"}));
        for session in 0..REMEMBERED + 10 {
            let session = session.to_string();
            told.tell(ToolResponse::text("ok"), Some(&session), "a", &fields);
        }
        let seen = told.seen.lock().unwrap();
        assert_eq!(seen.keys.len(), REMEMBERED);
        assert_eq!(seen.order.len(), REMEMBERED);
    }

    #[test]
    fn a_warning_names_five_fields_and_counts_the_rest() {
        let fields: Vec<Field> = (0..8)
            .map(|n| Field {
                name: format!("f{n}"),
                json_type: "integer",
            })
            .collect();
        let warning = warning(&fields);
        assert!(
            warning
                .message()
                .starts_with("The arguments 'f0', 'f1', 'f2', 'f3', 'f4' and 3 more were"),
            "{}",
            warning.message()
        );
        assert_eq!(field_name("a[10].b[2]"), "a[].b[]");
    }
}
