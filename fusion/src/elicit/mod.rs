//! Asking the user in the middle of a call, through MCP elicitation (MCP specification
//! 2025-06-18, client features, "Elicitation"): a confirmation before a destructive step, or a
//! value the call is missing.
//!
//! When the client declared the `elicitation` capability, the server asks it and the call waits
//! for the user's answer (the action's `timeout` guard and the client's cancellation still
//! apply). A client of the stateless 2026-07-28 revision, which forbids server-to-client
//! requests, is asked through multi round-trip requests instead (MRTR, SEP-2322: the call is
//! answered `input_required`, and sent again with the user's answer; see the composition
//! guide), each question under a key of the action's choosing with [`RequestContext::input`].
//! The client's model ([`RequestContext::sample`]) and its roots
//! ([`RequestContext::list_roots`]) are asked the same ways. When the client declared no
//! `elicitation`, or the request cannot be made, the call answers an envelope instead, never a
//! hang or a protocol error. A confirmation then fails closed: [`RequestContext::confirm`] answers
//! `CONFIRMATION_UNAVAILABLE`, because a model's say-so is not the user's. An action may opt in
//! to the model's word with [`RequestContext::confirm_or_trust_model`]. A missing value is
//! different: the model is told to ask the user for it and to send it in its next call, where
//! it is validated like any argument.
//!
//! | situation | [`confirm`](RequestContext::confirm) | [`confirm_or_trust_model`](RequestContext::confirm_or_trust_model) | [`elicit`](RequestContext::elicit) |
//! |---|---|---|---|
//! | the user accepts | `Ok(())` | `Ok(())` | `Ok(value)` |
//! | the user declines or dismisses | `USER_DECLINED` (validation, not retryable: stop) | `USER_DECLINED`, whatever `confirmed` says | `USER_DECLINED` |
//! | the client can ask, but the request fails | `CONFIRMATION_FAILED` (transient, not retryable) | `CONFIRMATION_FAILED`, whatever `confirmed` says | `INPUT_REQUIRED` |
//! | the client cannot ask | `CONFIRMATION_UNAVAILABLE` (auth, not retryable: escalate to the user) | `confirmed: true`: `Ok(())`; otherwise `CONFIRMATION_REQUIRED` (validation, not retryable) | `INPUT_REQUIRED` (validation, not retryable) |

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::model::context::{Elicited, InputKind, RequestContext};

mod client_request;
mod errors;
mod form;
mod input;
mod roots;
mod sample;

pub use errors::{Unanswered, Unconfirmed};
use form::{fields, form_schema};
pub use input::Input;
use input::elicited;
pub use roots::{ROOTS_FAILED, ROOTS_UNAVAILABLE, Unrooted};
pub use sample::{SAMPLING_FAILED, SAMPLING_UNAVAILABLE, Unsampled};

/// The argument a model sets, after asking the user, when the client cannot ask:
/// `"confirmed": true`. Only an action that calls [`RequestContext::confirm_or_trust_model`]
/// takes it, as `confirmed: Option<bool>` in its arguments.
pub const CONFIRMATION_FIELD: &str = "confirmed";

/// The code of a call that needs the user's confirmation the client could not ask for, from an
/// action that takes the model's word instead ([`RequestContext::confirm_or_trust_model`]).
pub const CONFIRMATION_REQUIRED: &str = "CONFIRMATION_REQUIRED";
/// The code of a call that needs the user's confirmation from a client that cannot ask for it
/// ([`RequestContext::confirm`]): the action is not done from this client.
pub const CONFIRMATION_UNAVAILABLE: &str = "CONFIRMATION_UNAVAILABLE";
/// The code of a call that needs input from the user the client could not ask for.
pub const INPUT_REQUIRED: &str = "INPUT_REQUIRED";
/// The code of a call the user declined (or dismissed) when asked.
pub const USER_DECLINED: &str = "USER_DECLINED";
/// The code of a call whose confirmation request the client failed to show (it answered
/// with an error): the user was not asked.
pub const CONFIRMATION_FAILED: &str = "CONFIRMATION_FAILED";

/// Whether a confirmation takes the model's `confirmed` argument when the client cannot ask.
#[derive(Clone, Copy)]
enum ModelWord {
    Refused,
    Trusted(Option<bool>),
}

impl RequestContext {
    /// Asks the user to confirm `question` (`"Refund 500 cents on invoice inv_1?"`) before a
    /// destructive step; `Ok(())` only when the user agreed.
    ///
    /// A client that declared MCP elicitation shows the question to its user (a 2026-07-28
    /// client through the call's `input_required` answer; its yes counts only with the
    /// `requestState` of the round that asked). A client that cannot ask (it declared no
    /// elicitation in form mode) gets `CONFIRMATION_UNAVAILABLE`: nothing the model sends
    /// stands in for the user. Where the model's word is acceptable, use
    /// [`RequestContext::confirm_or_trust_model`] instead.
    ///
    /// # Errors
    /// `USER_DECLINED` when the user declines or dismisses the question;
    /// `CONFIRMATION_FAILED` when the client can ask but the request fails (the user was not
    /// asked); `CONFIRMATION_UNAVAILABLE` when the client cannot ask. Return any of them
    /// with `?`.
    pub async fn confirm(&self, question: impl Into<String>) -> Result<(), Unconfirmed> {
        self.confirmation(None, question.into(), ModelWord::Refused)
            .await
    }

    /// [`RequestContext::confirm`], except that a client that cannot ask lets the model
    /// confirm for the user: **an explicit opt-in to trusting the model's word.**
    ///
    /// `confirmed` is the action's [`CONFIRMATION_FIELD`] argument (`confirmed: Option<bool>`
    /// in its arguments). When the client cannot ask, `Some(true)` confirms and anything else
    /// answers `CONFIRMATION_REQUIRED`, telling the model to ask the user and call again with
    /// `"confirmed": true`. Nothing ties that argument to a person: a model that sets it on its
    /// first call, or is told to by text it read (a prompt injection), is not stopped. Use it
    /// only for steps a caller holding the action's scopes may take without a person's
    /// consent. With a client that can ask, the user is always asked and `confirmed` is
    /// ignored, as in [`RequestContext::confirm`].
    ///
    /// # Errors
    /// As [`RequestContext::confirm`], with `CONFIRMATION_REQUIRED` in place of
    /// `CONFIRMATION_UNAVAILABLE` when `confirmed` is not `Some(true)`.
    pub async fn confirm_or_trust_model(
        &self,
        question: impl Into<String>,
        confirmed: Option<bool>,
    ) -> Result<(), Unconfirmed> {
        self.confirmation(None, question.into(), ModelWord::Trusted(confirmed))
            .await
    }

    /// A confirmation, the input request sent under `key` on 2026-07-28.
    async fn confirmation(
        &self,
        key: Option<&str>,
        question: String,
        model: ModelWord,
    ) -> Result<(), Unconfirmed> {
        let Value::Object(schema) = json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Confirm", "description": question}
            },
            "required": ["confirm"]
        }) else {
            unreachable!("an object literal")
        };
        let kind = InputKind::Confirmation;
        match self.ask(key, kind, &question, schema).await {
            Some(Elicited::Accepted(content)) if content.get("confirm") == Some(&true.into()) => {
                Ok(())
            }
            Some(Elicited::Accepted(content)) => {
                if content
                    .get("confirm")
                    .is_none_or(|answer| !answer.is_boolean())
                {
                    let answer = Value::Object(content).to_string();
                    tracing::warn!(
                        target: "fusion::elicit",
                        answer = answer.as_str(),
                        "the client accepted the confirmation without a boolean `confirm`; \
                         counted as not confirmed"
                    );
                }
                Err(Unconfirmed::Declined { question })
            }
            Some(Elicited::Declined | Elicited::Cancelled) => {
                Err(Unconfirmed::Declined { question })
            }
            // The client can ask but the request failed: the user was not asked, so the
            // model's `confirmed` cannot stand in for them.
            Some(Elicited::Failed(_)) => Err(Unconfirmed::Failed { question }),
            None => match model {
                ModelWord::Refused => Err(Unconfirmed::Unavailable { question }),
                ModelWord::Trusted(Some(true)) => Ok(()),
                ModelWord::Trusted(_) => Err(Unconfirmed::Required { question }),
            },
        }
    }

    /// Asks the user for a value of `T` (a struct of strings, numbers, booleans, unit enums,
    /// `Vec`s of unit enums for a multiple choice, and `Option`s of these: MCP elicitation forms
    /// are flat), showing `message`. A unit enum whose every variant has a title
    /// (`#[schemars(title = "…")]`) is shown with those titles (MCP 2025-11-25).
    ///
    /// When the client cannot ask, the model is told to ask the user for the fields and send
    /// them as arguments of its next call. So declare the same fields as optional arguments of
    /// the action, and ask only when they are missing:
    ///
    /// ```
    /// # use fusion::RequestContext;
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// pub struct Contact {
    ///     /// The address to send the receipt to.
    ///     pub email: String,
    /// }
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// pub struct Pay {
    ///     pub invoice_id: String,
    ///     /// The address to send the receipt to; asked of the user when missing.
    ///     pub email: Option<String>,
    /// }
    ///
    /// async fn receipt_to(args: &Pay, ctx: &RequestContext) -> Result<String, fusion::elicit::Unanswered> {
    ///     match &args.email {
    ///         Some(email) => Ok(email.clone()),
    ///         None => Ok(ctx.elicit::<Contact>("Where should the receipt go?").await?.email),
    ///     }
    /// }
    /// ```
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
        self.elicit_as(None, message.into()).await
    }

    /// [`RequestContext::elicit`], the input request sent under `key` on 2026-07-28.
    async fn elicit_as<T: JsonSchema + DeserializeOwned>(
        &self,
        key: Option<&str>,
        message: String,
    ) -> Result<T, Unanswered> {
        let schema = form_schema::<T>()?;
        match (self.ask(key, InputKind::Elicitation, &message, schema.clone())).await {
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
    /// A client of the stateless revision is asked through the call's round, under `key`.
    async fn ask(
        &self,
        key: Option<&str>,
        kind: InputKind,
        message: &str,
        schema: Map<String, Value>,
    ) -> Option<Elicited> {
        let answer = match self.inputs() {
            Some(inputs) => {
                let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
                elicited(&inputs(key.map(str::to_owned), kind, params).await?)
            }
            None => (self.elicitor()?)(message.to_owned(), schema).await,
        };
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::envelope::code::ErrorCode;
    use crate::envelope::error::ToolError;
    use crate::model::context::Elicitor;
    use crate::model::definition::ToolErrors;

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
        assert!(yes.confirm("Refund?").await.is_ok());
        assert!(yes.confirm_or_trust_model("Refund?", None).await.is_ok());
        for answer in [
            accepted(json!({"confirm": false})),
            Elicited::Declined,
            Elicited::Cancelled,
        ] {
            let asked = answering(answer);
            let error = ToolError::from(asked.confirm("Refund?").await.unwrap_err());
            assert_eq!(error.code().as_str(), USER_DECLINED);
            assert_eq!(error.flags()["errorCategory"], "validation");
            // The model's `confirmed: true` does not replace the user's answer.
            let error = asked
                .confirm_or_trust_model("Refund?", Some(true))
                .await
                .unwrap_err();
            assert_eq!(ToolError::from(error).code().as_str(), USER_DECLINED);
        }
    }

    #[tokio::test]
    async fn without_a_client_that_can_ask_a_confirmation_fails_closed() {
        let unconfirmed = RequestContext::new()
            .confirm("Refund 500 cents on inv_1?")
            .await
            .unwrap_err();
        assert_eq!(unconfirmed.variant(), Some("Unavailable"));
        let error = ToolError::from(unconfirmed);
        assert_eq!(error.code().as_str(), CONFIRMATION_UNAVAILABLE);
        assert_eq!(error.flags()["errorCategory"], "auth");
        assert_eq!(error.flags()["isRetryable"], false);
        let xml = error.to_xml();
        assert!(xml.contains("Do not call again"), "{xml}");
        assert!(!xml.contains(CONFIRMATION_FIELD), "{xml}");
        // A client that can ask but fails to: the user was not asked.
        let failed = answering(Elicited::Failed("the dialog crashed".into()));
        let error = failed.confirm("Refund?").await.unwrap_err();
        assert_eq!(ToolError::from(error).code().as_str(), CONFIRMATION_FAILED);
    }

    #[tokio::test]
    async fn an_action_that_trusts_the_model_tells_it_to_ask_and_takes_its_word() {
        let unconfirmed = RequestContext::new()
            .confirm_or_trust_model("Refund 500 cents on inv_1?", None)
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
        let trusting = RequestContext::new();
        assert!(
            trusting
                .confirm_or_trust_model("Refund?", Some(true))
                .await
                .is_ok()
        );
        let no = trusting.confirm_or_trust_model("Refund?", Some(false));
        assert_eq!(no.await.unwrap_err().variant(), Some("Required"));
        // A client that can ask but fails to: the model's `confirmed: true` does not stand in
        // for the user who was not asked.
        let failed = answering(Elicited::Failed("the dialog crashed".into()));
        let error = failed
            .confirm_or_trust_model("Refund?", Some(true))
            .await
            .unwrap_err();
        assert_eq!(error.variant(), Some("Failed"));
        assert_eq!(ToolError::from(error).code().as_str(), CONFIRMATION_FAILED);
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

    /// A plan.
    #[derive(serde::Deserialize, JsonSchema, Debug, PartialEq)]
    enum Plan {
        Basic,
        Pro,
    }

    #[derive(serde::Deserialize, JsonSchema, Debug, PartialEq)]
    struct Upgrade {
        plan: Plan,
        seats: u32,
        note: Option<String>,
    }

    #[test]
    fn enums_options_and_numbers_become_form_fields() {
        let schema = form_schema::<Upgrade>().unwrap();
        assert_eq!(
            Value::Object(schema.clone()),
            json!({
                "type": "object",
                "properties": {
                    "plan": {"type": "string", "enum": ["Basic", "Pro"], "description": "A plan."},
                    "seats": {"type": "integer", "minimum": 0},
                    "note": {"type": "string"}
                },
                "required": ["plan", "seats"]
            })
        );
        // rmcp accepts it as an elicitation form.
        let params = json!({"mode": "form", "message": "?", "requestedSchema": schema});
        serde_json::from_value::<rmcp::model::ElicitRequestParams>(params).unwrap();
    }

    #[derive(serde::Deserialize, JsonSchema, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Tier {
        #[schemars(title = "Free tier")]
        Free,
        #[schemars(title = "Paid tier")]
        Paid,
    }

    #[derive(serde::Deserialize, JsonSchema, Debug, PartialEq)]
    struct Preferences {
        tier: Tier,
        tiers: Vec<Tier>,
        plans: Option<Vec<Plan>>,
    }

    #[test]
    fn titled_enums_and_lists_of_enums_become_choices() {
        let schema = form_schema::<Preferences>().unwrap();
        let titled = json!([
            {"const": "free", "title": "Free tier"},
            {"const": "paid", "title": "Paid tier"}
        ]);
        assert_eq!(
            Value::Object(schema.clone()),
            json!({
                "type": "object",
                "properties": {
                    "tier": {"type": "string", "oneOf": titled},
                    "tiers": {"type": "array", "items": {"anyOf": titled}},
                    "plans": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["Basic", "Pro"], "description": "A plan."}
                    }
                },
                "required": ["tier", "tiers"]
            })
        );
        // rmcp accepts it as an elicitation form (MCP 2025-11-25's titled and multi-select enums).
        let params = json!({"mode": "form", "message": "?", "requestedSchema": schema});
        serde_json::from_value::<rmcp::model::ElicitRequestParams>(params).unwrap();
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
