//! Asking the user in the middle of a call, through MCP elicitation (MCP specification
//! 2025-06-18, client features, "Elicitation"): a confirmation before a destructive step, or a
//! value the call is missing.
//!
//! When the client declared the `elicitation` capability, the server asks it and the call waits
//! for the user's answer (the action's `timeout` guard and the client's cancellation still
//! apply). When it did not, or the request cannot be made (a stateless protocol revision
//! forbids server-to-client requests), the call answers an envelope instead, never a hang or a
//! protocol error: the model is told to ask the user itself and to call again with the answer.
//!
//! | situation | [`RequestContext::confirm`] | [`RequestContext::elicit`] |
//! |---|---|---|
//! | the user accepts | `Ok(())` | `Ok(value)` |
//! | the user declines or dismisses | `USER_DECLINED` (auth, not retryable) | `USER_DECLINED` |
//! | the client cannot ask, `confirmed` not `true` | `CONFIRMATION_REQUIRED` (validation, not retryable) | `INPUT_REQUIRED` (validation, not retryable) |
//! | the client cannot ask, `confirmed: true` | `Ok(())` | — |

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::code::{ErrorCategory, ErrorCode, Severity};
use crate::context::{Elicited, RequestContext};
use crate::definition::{ErrorContract, ToolErrors};
use crate::error::ToolError;

/// The argument a model sets, after asking the user, when the client cannot ask:
/// `"confirmed": true`. An action that calls [`RequestContext::confirm`] takes it as
/// `confirmed: Option<bool>` in its arguments.
pub const CONFIRMATION_FIELD: &str = "confirmed";

/// The code of a call that needs the user's confirmation the client could not ask for.
pub const CONFIRMATION_REQUIRED: &str = "CONFIRMATION_REQUIRED";
/// The code of a call that needs input from the user the client could not ask for.
pub const INPUT_REQUIRED: &str = "INPUT_REQUIRED";
/// The code of a call the user declined (or dismissed) when asked.
pub const USER_DECLINED: &str = "USER_DECLINED";

impl RequestContext {
    /// Asks the user to confirm `question` (`"Refund 500 cents on invoice inv_1?"`) before a
    /// destructive step; `Ok(())` when they do.
    ///
    /// With a client that can elicit, the user is always asked, and `confirmed` is ignored (a
    /// model cannot confirm for the user). Without one, `confirmed` is the action's
    /// [`CONFIRMATION_FIELD`] argument: `Some(true)` means the model asked the user and they
    /// agreed.
    ///
    /// # Errors
    /// `USER_DECLINED` when the user declines or dismisses the question;
    /// `CONFIRMATION_REQUIRED` when the client cannot ask and `confirmed` is not `Some(true)`,
    /// with a recovery telling the model to ask the user and call again with
    /// `"confirmed": true`. Return either with `?`.
    pub async fn confirm(
        &self,
        question: impl Into<String>,
        confirmed: Option<bool>,
    ) -> Result<(), Unconfirmed> {
        let question = question.into();
        let schema = json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Confirm", "description": question}
            },
            "required": ["confirm"]
        });
        match self.ask(&question, schema).await {
            Some(Elicited::Accepted(content)) if content.get("confirm") == Some(&true.into()) => {
                Ok(())
            }
            Some(Elicited::Accepted(_) | Elicited::Declined | Elicited::Cancelled) => {
                Err(Unconfirmed::Declined { question })
            }
            None | Some(Elicited::Failed(_)) if confirmed == Some(true) => Ok(()),
            None | Some(Elicited::Failed(_)) => Err(Unconfirmed::Required { question }),
        }
    }

    /// Asks the user for a value of `T` (a struct of strings, numbers, booleans and string
    /// enumerations: MCP elicitation forms are flat), showing `message`.
    ///
    /// # Errors
    /// `USER_DECLINED` when the user declines or dismisses the form; `INPUT_REQUIRED` when the
    /// client cannot ask, naming the fields the model should ask the user for and send as
    /// arguments of its next call; `VALIDATION_ERROR` when the answer does not fit `T`; an
    /// internal error when `T`'s schema is not a flat object (a bug in the action).
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<T, Unanswered> {
        let message = message.into();
        let schema = form_schema::<T>()?;
        match self.ask(&message, Value::Object(schema.clone())).await {
            Some(Elicited::Accepted(content)) => serde_json::from_value(Value::Object(content))
                .map_err(|error| Unanswered::Invalid {
                    message,
                    error: error.to_string(),
                }),
            Some(Elicited::Declined | Elicited::Cancelled) => {
                Err(Unanswered::Declined { question: message })
            }
            None | Some(Elicited::Failed(_)) => Err(Unanswered::Required {
                fields: fields(&schema),
                message,
            }),
        }
    }

    /// The user's answer, or `None` when the client cannot elicit. A failed request is logged.
    async fn ask(&self, message: &str, schema: Value) -> Option<Elicited> {
        let Value::Object(schema) = schema else {
            return None;
        };
        let elicitor = self.elicitor()?;
        let answer = elicitor(message.to_owned(), schema).await;
        if let Elicited::Failed(reason) = &answer {
            tracing::warn!(
                target: "fusion::elicit",
                reason = reason.as_str(),
                "the elicitation request failed; the call answers as if the client could not ask"
            );
        }
        Some(answer)
    }
}

/// The form schema of `T`: schemars' object schema without `$schema` and `title`.
fn form_schema<T: JsonSchema>() -> Result<Map<String, Value>, Unanswered> {
    let mut schema = schemars::schema_for!(T).to_value();
    let flat = schema.get("type") == Some(&json!("object"))
        && schema.get("$defs").is_none()
        && schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.values().all(is_primitive));
    if !flat {
        return Err(Unanswered::NotAForm {
            type_name: std::any::type_name::<T>(),
        });
    }
    let schema = schema.as_object_mut().expect("an object schema");
    schema.remove("$schema");
    schema.remove("title");
    Ok(std::mem::take(schema))
}

/// Whether an elicitation form can hold the property: a string, number, integer or boolean
/// (MCP elicitation's primitive schemas).
fn is_primitive(property: &Value) -> bool {
    matches!(
        property.get("type").and_then(Value::as_str),
        Some("string" | "number" | "integer" | "boolean")
    )
}

/// The fields of a form, each with its description: `email (The address to send it to)`.
fn fields(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(
            |(name, property)| match property.get("description").and_then(Value::as_str) {
                Some(description) => format!("{name} ({description})"),
                None => name.clone(),
            },
        )
        .collect()
}

/// Why [`RequestContext::confirm`] did not confirm. Converts into its envelope (`?` in an
/// action returning `ToolError`), and is a [`ToolErrors`] type with a contract, so an error
/// enum of yours wraps it in a `#[tool_error(transparent)]` variant and an action lists it in
/// `errors(..)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unconfirmed {
    /// The client cannot ask and the call did not say `confirmed: true`:
    /// `CONFIRMATION_REQUIRED` (validation, not retryable), telling the model to ask.
    Required {
        /// The question the user must answer.
        question: String,
    },
    /// The user declined or dismissed the question: `USER_DECLINED` (auth, not retryable).
    Declined {
        /// The question the user was asked.
        question: String,
    },
}

/// Why [`RequestContext::elicit`] has no answer. Converts into its envelope, like
/// [`Unconfirmed`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unanswered {
    /// The client cannot ask: `INPUT_REQUIRED` (validation, not retryable), naming the fields
    /// the model should ask the user for.
    Required {
        /// What the user was to be told.
        message: String,
        /// The form's fields, each with its description.
        fields: Vec<String>,
    },
    /// The user declined or dismissed the form: `USER_DECLINED`.
    Declined {
        /// What the user was told.
        question: String,
    },
    /// The answer does not fit the requested type: `VALIDATION_ERROR`.
    Invalid {
        /// What the user was told.
        message: String,
        /// Why the answer does not fit.
        error: String,
    },
    /// The requested type is no flat form (a bug in the action): `INTERNAL_ERROR`.
    NotAForm {
        /// The requested type.
        type_name: &'static str,
    },
}

impl fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unconfirmed::Required { question } => {
                write!(f, "This needs the user's confirmation: {question}")
            }
            Unconfirmed::Declined { question } => write!(f, "The user declined: {question}"),
        }
    }
}

impl std::error::Error for Unconfirmed {}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unanswered::Required { message, .. } => {
                write!(f, "This needs input from the user: {message}")
            }
            Unanswered::Declined { question } => write!(f, "The user declined: {question}"),
            Unanswered::Invalid { error, .. } => {
                write!(f, "The user's answer does not fit the form: {error}")
            }
            Unanswered::NotAForm { type_name } => write!(
                f,
                "RequestContext::elicit::<{type_name}>: an elicitation form is a flat object of \
                 strings, numbers, integers and booleans"
            ),
        }
    }
}

impl std::error::Error for Unanswered {}

fn contract(code: &'static str, category: ErrorCategory) -> ErrorContract {
    ErrorContract::new(
        ErrorCode::custom(code),
        Severity::Error,
        Some(category),
        Some(false),
    )
}

impl ToolErrors for Unconfirmed {
    fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
        vec![
            (
                "Required",
                contract(CONFIRMATION_REQUIRED, ErrorCategory::Validation),
            ),
            ("Declined", contract(USER_DECLINED, ErrorCategory::Auth)),
        ]
    }

    fn variant(&self) -> Option<&'static str> {
        Some(match self {
            Unconfirmed::Required { .. } => "Required",
            Unconfirmed::Declined { .. } => "Declined",
        })
    }
}

impl ToolErrors for Unanswered {
    fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
        let internal = ErrorContract::new(
            ErrorCode::InternalError,
            Severity::Error,
            Some(ErrorCategory::Unknown),
            Some(false),
        );
        let invalid = ErrorContract::new(ErrorCode::ValidationError, Severity::Error, None, None);
        vec![
            (
                "Required",
                contract(INPUT_REQUIRED, ErrorCategory::Validation),
            ),
            ("Declined", contract(USER_DECLINED, ErrorCategory::Auth)),
            ("Invalid", invalid),
            ("NotAForm", internal),
        ]
    }

    fn variant(&self) -> Option<&'static str> {
        Some(match self {
            Unanswered::Required { .. } => "Required",
            Unanswered::Declined { .. } => "Declined",
            Unanswered::Invalid { .. } => "Invalid",
            Unanswered::NotAForm { .. } => "NotAForm",
        })
    }
}

impl From<Unconfirmed> for ToolError {
    fn from(unconfirmed: Unconfirmed) -> ToolError {
        let message = unconfirmed.to_string();
        match unconfirmed {
            Unconfirmed::Required { question } => ToolError::new(CONFIRMATION_REQUIRED, message)
                .category(ErrorCategory::Validation)
                .retryable(false)
                .suggest(format!(
                    "Ask the user: {question} If they agree, call again with the same \
                         arguments and \"{CONFIRMATION_FIELD}\": true. If they do not, do not \
                         call again."
                )),
            Unconfirmed::Declined { .. } => declined(message),
        }
    }
}

impl From<Unanswered> for ToolError {
    fn from(unanswered: Unanswered) -> ToolError {
        let message = unanswered.to_string();
        match unanswered {
            Unanswered::Required { fields, .. } => ToolError::new(INPUT_REQUIRED, message)
                .category(ErrorCategory::Validation)
                .retryable(false)
                .suggest(format!(
                    "Ask the user for {}, then call again with the same arguments and these.",
                    fields.join(", ")
                )),
            Unanswered::Declined { .. } => declined(message),
            Unanswered::Invalid { .. } => ToolError::new(ErrorCode::ValidationError, message)
                .suggest("Call again; the user will be asked again."),
            not_a_form @ Unanswered::NotAForm { .. } => ToolError::from_internal(&not_a_form),
        }
    }
}

fn declined(message: String) -> ToolError {
    ToolError::new(USER_DECLINED, message)
        .category(ErrorCategory::Auth)
        .retryable(false)
        .suggest("Tell the user the action was not done. Do not call again unless they ask.")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::context::Elicitor;

    fn answering(answer: Elicited) -> RequestContext {
        let elicitor: Elicitor = Arc::new(move |_, _| {
            let answer = answer.clone();
            Box::pin(async move { answer })
        });
        RequestContext::new().with_elicitor(elicitor)
    }

    fn accepted(content: Value) -> Elicited {
        Elicited::Accepted(content.as_object().unwrap().clone())
    }

    #[tokio::test]
    async fn a_confirmation_follows_the_users_answer() {
        let yes = answering(accepted(json!({"confirm": true})));
        assert!(yes.confirm("Refund?", None).await.is_ok());
        for answer in [
            accepted(json!({"confirm": false})),
            Elicited::Declined,
            Elicited::Cancelled,
        ] {
            // The model's `confirmed: true` does not replace the user's answer.
            let error = ToolError::from(
                answering(answer)
                    .confirm("Refund?", Some(true))
                    .await
                    .unwrap_err(),
            );
            assert_eq!(error.code().as_str(), USER_DECLINED);
            assert_eq!(error.flags()["errorCategory"], "auth");
        }
    }

    #[tokio::test]
    async fn without_a_client_that_can_ask_the_model_is_told_to() {
        let unconfirmed = RequestContext::new()
            .confirm("Refund 500 cents on inv_1?", None)
            .await
            .unwrap_err();
        assert_eq!(unconfirmed.variant(), Some("Required"));
        let error = ToolError::from(unconfirmed);
        assert_eq!(error.code().as_str(), CONFIRMATION_REQUIRED);
        assert_eq!(error.flags()["errorCategory"], "validation");
        assert_eq!(error.flags()["isRetryable"], false);
        let xml = error.to_xml();
        assert!(
            xml.contains("Ask the user: Refund 500 cents on inv_1?"),
            "{xml}"
        );
        assert!(xml.contains("\"confirmed\": true"), "{xml}");
        assert!(
            RequestContext::new()
                .confirm("Refund?", Some(true))
                .await
                .is_ok()
        );
        // A request that fails counts as a client that cannot ask.
        let failed = answering(Elicited::Failed("gone".into()));
        assert!(failed.confirm("Refund?", Some(true)).await.is_ok());
        assert!(failed.confirm("Refund?", None).await.is_err());
    }

    #[derive(serde::Deserialize, JsonSchema, Debug, PartialEq)]
    struct Contact {
        /// The email address to send the receipt to.
        email: String,
    }

    #[tokio::test]
    async fn elicit_returns_the_form_or_names_the_fields_to_ask_for() {
        let answered = answering(accepted(json!({"email": "a@b.io"})));
        let contact: Contact = answered.elicit("Where to?").await.unwrap();
        assert_eq!(
            contact,
            Contact {
                email: "a@b.io".into()
            }
        );

        let error = ToolError::from(
            RequestContext::new()
                .elicit::<Contact>("Where to?")
                .await
                .unwrap_err(),
        );
        assert_eq!(error.code().as_str(), INPUT_REQUIRED);
        assert!(
            error
                .to_xml()
                .contains("email (The email address to send the receipt to.)"),
            "{}",
            error.to_xml()
        );

        let wrong = answering(accepted(json!({"email": 5})));
        let error = ToolError::from(wrong.elicit::<Contact>("Where to?").await.unwrap_err());
        assert_eq!(error.code(), &ErrorCode::ValidationError);
    }

    #[derive(serde::Deserialize, JsonSchema)]
    struct Nested {
        _contact: Contact,
    }

    #[tokio::test]
    async fn a_form_that_is_not_flat_is_an_internal_error() {
        let answered = answering(accepted(json!({})));
        let error = ToolError::from(answered.elicit::<Nested>("?").await.err().unwrap());
        assert_eq!(error.code(), &ErrorCode::InternalError);
    }
}
