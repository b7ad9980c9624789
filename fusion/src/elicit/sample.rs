//! Asking the client's model in the middle of a call, through MCP sampling (MCP specification
//! 2025-06-18, client features, "Sampling": `sampling/createMessage`), and what that can end
//! in when it does not end in a message. The 2026-07-28 revision deprecates sampling (SEP-2577)
//! and forbids server-to-client requests: its clients are asked through multi round-trip
//! requests (SEP-2322).
#![allow(
    deprecated,
    reason = "sampling is deprecated from the 2026-07-28 revision on; 2025 clients still use it"
)]

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};

use crate::envelope::code::ErrorCategory;
use crate::envelope::error::ToolError;
use crate::model::context::{InputKind, RequestContext};
use crate::model::definition::ToolErrors;

use super::client_request::client_request_error;

/// The code of a call that needs the client's model from a client that cannot be asked for a
/// message (a client of the 2025 revisions that declared no `sampling` capability): the action
/// is not done from this client.
pub const SAMPLING_UNAVAILABLE: &str = "SAMPLING_UNAVAILABLE";
/// The code of a call whose request to the client's model failed: the client answered with an
/// error (its user rejected the request, its model failed) or the connection was lost.
pub const SAMPLING_FAILED: &str = "SAMPLING_FAILED";

impl RequestContext {
    /// Asks the client's model for a message (MCP `sampling/createMessage`) and waits for it:
    /// the client may show the request to its user first, so give the action a `timeout` a
    /// person can meet.
    ///
    /// A client of the 2025 revisions that declared `sampling` is sent the request. A client of
    /// the 2026-07-28 revision is asked through the call's answer (`input_required`, a
    /// `sampling/createMessage` input request; SEP-2322) and sends the call again with the
    /// message, the action running again from the start; one that did not declare `sampling`
    /// in the request's client capabilities gets JSON-RPC `-32021` (missing required client
    /// capability, `data.requiredCapabilities` `{"sampling": {}}`), the call refused before any
    /// result.
    ///
    /// ```
    /// use fusion::RequestContext;
    /// use fusion::elicit::Unsampled;
    /// use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
    ///
    /// async fn haiku(topic: &str, ctx: &RequestContext) -> Result<String, Unsampled> {
    ///     let ask = SamplingMessage::user_text(format!("A haiku about {topic}."));
    ///     let answer = ctx.sample(CreateMessageRequestParams::new(vec![ask], 100)).await?;
    ///     let text = answer.message.content.first().and_then(|c| c.as_text());
    ///     Ok(text.map(|t| t.text.clone()).unwrap_or_default())
    /// }
    /// ```
    ///
    /// # Errors
    /// `SAMPLING_UNAVAILABLE` (not retryable) when a 2025 client cannot be asked;
    /// `SAMPLING_FAILED` (transient, not retryable) when the client answers the request with an
    /// error (its user rejected it, its model failed) or the connection is lost. Both convert
    /// into their envelope, like [`Unconfirmed`](super::Unconfirmed).
    pub async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Unsampled> {
        self.sample_as(None, request).await
    }

    /// [`RequestContext::sample`], the input request sent under `key` on 2026-07-28.
    pub(super) async fn sample_as(
        &self,
        key: Option<&str>,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, Unsampled> {
        // Written as JSON only for the input request of the 2026-07-28 revision; a 2025 client
        // is sent the request itself.
        let params = match self.inputs() {
            Some(_) => serde_json::to_value(&request),
            None => Ok(serde_json::Value::Null),
        };
        let direct = self.sampler().map(|sampler| move || sampler(request));
        let failed = "the sampling request failed";
        let asked = self
            .ask_client(key, InputKind::Sampling, params, |m| m, direct, failed)
            .await;
        Unsampled::of(asked)
    }
}

/// Why [`RequestContext::sample`] has no message. Converts into its envelope (`?` in an action
/// returning `ToolError`), and is a [`ToolErrors`] type with a contract, so an error enum of
/// yours wraps it in a `#[tool_error(transparent)]` variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsampled {
    /// The client cannot be asked for a message: `SAMPLING_UNAVAILABLE` (unknown, not
    /// retryable), telling the model to stop and tell the user.
    #[error("This needs a message from the client's model, which this client cannot be asked for")]
    Unavailable,
    /// The client answered the request with an error, or the connection was lost:
    /// `SAMPLING_FAILED` (transient, not retryable).
    #[error("The client's model could not be asked: {reason}")]
    Failed {
        /// What the client answered, or what failed.
        reason: String,
    },
}

client_request_error!(
    Unsampled,
    SAMPLING_UNAVAILABLE => "Do not call again from this client: it cannot run the model request \
        this action needs (MCP sampling). Tell the user the action was not done.",
    SAMPLING_FAILED => "The client did not run the model request (its user may have rejected \
        it). Tell the user the action was not done; call again only if they ask.",
);

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::{CreateMessageResult, SamplingMessage};

    use super::*;
    use crate::model::context::Sampler;

    fn asking(answer: Result<&'static str, &'static str>) -> RequestContext {
        let sampler: Sampler = Arc::new(move |request: CreateMessageRequestParams| {
            let asked = request.messages[0]
                .content
                .first()
                .and_then(|c| c.as_text());
            let asked = asked.map(|t| t.text.clone()).unwrap_or_default();
            Box::pin(async move {
                let text = answer.map_err(str::to_owned)?;
                Ok(CreateMessageResult::new(
                    SamplingMessage::assistant_text(format!("{text} ({asked})")),
                    "test-model".to_owned(),
                ))
            })
        });
        RequestContext::new().with_sampler(sampler)
    }

    fn request() -> CreateMessageRequestParams {
        CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hello")], 10)
    }

    #[tokio::test]
    async fn a_client_that_can_sample_answers_with_its_message() {
        let answer = asking(Ok("hi")).sample(request()).await.unwrap();
        let text = answer.message.content.first().and_then(|c| c.as_text());
        assert_eq!(text.unwrap().text, "hi (hello)");
        assert_eq!(answer.model, "test-model");
    }

    #[tokio::test]
    async fn without_a_client_that_can_sample_the_envelope_says_so() {
        for (context, variant, code, category) in [
            (
                RequestContext::new(),
                "Unavailable",
                SAMPLING_UNAVAILABLE,
                ErrorCategory::Unknown,
            ),
            (
                asking(Err("User rejected sampling request")),
                "Failed",
                SAMPLING_FAILED,
                ErrorCategory::Transient,
            ),
        ] {
            let unsampled = context.sample(request()).await.unwrap_err();
            assert_eq!(unsampled.variant(), Some(variant));
            let error = ToolError::from(unsampled.clone());
            assert_eq!(error.code().as_str(), code, "{variant}");
            assert_eq!(error.error_category(), category, "{variant}");
            assert!(!error.is_retryable(), "{variant}");
            let contracts = Unsampled::variant_contracts();
            let (_, contract) = contracts.iter().find(|(v, _)| *v == variant).unwrap();
            assert_eq!(contract.code.as_str(), code, "{variant}");
            if variant == "Failed" {
                assert!(
                    error.to_xml().contains("User rejected sampling request"),
                    "{}",
                    error.to_xml()
                );
            }
        }
    }
}
