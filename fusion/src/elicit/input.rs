//! Questions under a key of the action's choosing: the key of the input request a client of the
//! 2026-07-28 revision gets (multi round-trip requests, SEP-2322), and sends its answer back
//! under.
#![allow(
    deprecated,
    reason = "sampling and roots are deprecated from the 2026-07-28 revision on; clients still offer them"
)]

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, Root};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::model::context::{Elicited, RequestContext};

use super::{ModelWord, Unanswered, Unconfirmed, Unrooted, Unsampled};

/// The questions of [`RequestContext::input`]: each is sent to a client of the 2026-07-28
/// revision as the input request `key` of the call's `input_required` answer, instead of the
/// next automatic key (`q0`, `q1`, … in the order the action asks). Clients of the 2025
/// revisions are asked directly, and never see the key. Keys are the action's to keep apart:
/// two questions under one key get one answer.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    ctx: &'a RequestContext,
    key: &'a str,
}

impl RequestContext {
    /// The next question under `key` (the input request's key on 2026-07-28), for an action
    /// that names its questions:
    ///
    /// ```
    /// # use fusion::RequestContext;
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// pub struct Name {
    ///     pub name: String,
    /// }
    ///
    /// async fn greet(ctx: &RequestContext) -> Result<String, fusion::elicit::Unanswered> {
    ///     let name: Name = ctx.input("user_name").elicit("What is your name?").await?;
    ///     Ok(format!("Hello, {}!", name.name))
    /// }
    /// ```
    pub fn input<'a>(&'a self, key: &'a str) -> Input<'a> {
        Input { ctx: self, key }
    }
}

impl Input<'_> {
    /// [`RequestContext::elicit`] under this key.
    ///
    /// # Errors
    /// As [`RequestContext::elicit`].
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        self,
        message: impl Into<String>,
    ) -> Result<T, Unanswered> {
        self.ctx.elicit_as(Some(self.key), message.into()).await
    }

    /// [`RequestContext::confirm`] under this key.
    ///
    /// # Errors
    /// As [`RequestContext::confirm`].
    pub async fn confirm(self, question: impl Into<String>) -> Result<(), Unconfirmed> {
        let question = question.into();
        (self.ctx)
            .confirmation(Some(self.key), question, ModelWord::Refused)
            .await
    }

    /// [`RequestContext::sample`] under this key.
    ///
    /// # Errors
    /// As [`RequestContext::sample`].
    pub async fn sample(
        self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Unsampled> {
        self.ctx.sample_as(Some(self.key), request).await
    }

    /// [`RequestContext::list_roots`] under this key.
    ///
    /// # Errors
    /// As [`RequestContext::list_roots`].
    pub async fn list_roots(self) -> Result<Vec<Root>, Unrooted> {
        self.ctx.list_roots_as(Some(self.key)).await
    }
}

/// What the user did, from an `ElicitResult` a client sent as an input response.
pub(super) fn elicited(answer: &Value) -> Elicited {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => match answer.get("content") {
            Some(Value::Object(content)) => Elicited::Accepted(content.clone()),
            _ => Elicited::Accepted(Map::new()),
        },
        Some("decline") => Elicited::Declined,
        Some("cancel") => Elicited::Cancelled,
        _ => Elicited::Failed("the input response is not an elicitation result".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_input_response_reads_as_what_the_user_did() {
        let accepted = json!({"action": "accept", "content": {"email": "a@b.io"}});
        assert!(matches!(elicited(&accepted), Elicited::Accepted(c) if c["email"] == "a@b.io"));
        assert_eq!(elicited(&json!({"action": "decline"})), Elicited::Declined);
        assert_eq!(elicited(&json!({"action": "cancel"})), Elicited::Cancelled);
        assert!(matches!(
            elicited(&json!({"confirm": true})),
            Elicited::Failed(_)
        ));
    }
}
