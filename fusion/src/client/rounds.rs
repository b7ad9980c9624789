//! Multi round-trip requests (MCP 2026-07-28, SEP-2322): a `tools/call` answered
//! `input_required` carries questions for the user (`inputRequests`, such as
//! `elicitation/create`) and an opaque `requestState`. The application answers them, through
//! the input handler or [`Client::resume`], and the same call goes again with the answers
//! (`inputResponses`) and the state echoed verbatim. Never answered by the client on its own.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DEFAULT_MRTR_MAX_ROUNDS, InputRequests, InputResponses,
};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};

use super::call::{CallOutput, Client, classify, first_attempt};
use super::error::{CallError, InputRequired};

impl Client {
    /// Answers the server's questions (`input_required`, MCP 2026-07-28) with `handler`: given
    /// the input requests, it returns the answers keyed as asked, or `None` to leave them
    /// unanswered (the call then ends with [`CallError::InputRequired`]). The call goes again
    /// with the answers and the `requestState`, for at most 10 rounds (rmcp's
    /// `DEFAULT_MRTR_MAX_ROUNDS`; past that, [`CallError::Protocol`] with
    /// `InputRequiredRoundsExceeded`). A task that asks for input is answered through
    /// `tasks/update` the same way.
    ///
    /// A server asks this way only clients of the stateless revision (no `initialize`) whose
    /// calls declare the matching capability: `elicitation` (form) for questions to the user.
    /// Without a handler, every question reaches the caller as [`CallError::InputRequired`].
    pub fn with_input_handler<F, Fut>(mut self, handler: F) -> Client
    where
        F: Fn(InputRequests) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<InputResponses>> + Send + 'static,
    {
        self.inner_mut().input = Some(Arc::new(move |requests: InputRequests| {
            Box::pin(handler(requests)) as BoxFuture<'static, _>
        }));
        self
    }

    /// Continues a call that ended with [`CallError::InputRequired`]: sends it again with
    /// `responses` (the answers, keyed as [`InputRequired::requests`]) and its
    /// `requestState`. Later rounds go to the input handler, if any. Never retried by the
    /// [`RetryPolicy`](super::RetryPolicy): a retry would replay the request state, which a
    /// server may take once; a failure's decision is what the policy would have decided.
    ///
    /// # Errors
    /// As [`Client::call`]; a server that refuses the state (forged, expired, already used:
    /// fusion answers JSON-RPC `-32602`, `data.code` `REQUEST_STATE_INVALID`) gives
    /// [`CallError::Protocol`].
    pub async fn resume(
        &self,
        input: InputRequired,
        responses: InputResponses,
    ) -> Result<CallOutput, CallError> {
        let params = next_round(input.params, responses, input.result.request_state);
        first_attempt(self.exchange(params).await, &self.inner().policy)
    }

    /// One call of `tool` with `arguments`, rounds of `input_required` and task included,
    /// sorted into output or typed failure.
    pub(super) async fn send(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutput, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.exchange(params).await
    }

    /// One call to its end: rounds of `input_required` answered by the handler, a task
    /// followed until it settles. A state is sent once: the retry policy starts over from the
    /// first round, never from here.
    async fn exchange(&self, mut params: CallToolRequestParams) -> Result<CallOutput, CallError> {
        for round in 0.. {
            let asked = match self.call_tool_fitted(&params).await? {
                CallToolResponse::Complete(result) => return classify(result, None),
                CallToolResponse::Task(created) => return self.follow_task(created).await,
                CallToolResponse::InputRequired(asked) => asked,
                _ => return Err(CallError::Protocol(ServiceError::UnexpectedResponse)),
            };
            let pending = InputRequired::new(params, asked);
            if round == DEFAULT_MRTR_MAX_ROUNDS {
                let max_rounds = DEFAULT_MRTR_MAX_ROUNDS;
                let exceeded = ServiceError::InputRequiredRoundsExceeded { max_rounds };
                return Err(CallError::Protocol(exceeded));
            }
            // A state without questions ("come back with this"): nothing to ask anyone.
            let responses = if pending.requests.is_empty() {
                InputResponses::new()
            } else {
                let answers = match &self.inner().input {
                    Some(handler) => handler(pending.requests.clone()).await,
                    None => None,
                };
                match answers {
                    Some(responses) => responses,
                    None => return Err(CallError::InputRequired(Box::new(pending))),
                }
            };
            params = next_round(pending.params, responses, pending.result.request_state);
        }
        unreachable!("`0..` ends only at usize::MAX rounds; DEFAULT_MRTR_MAX_ROUNDS stops before")
    }
}

/// The call of the next round: the same tool and arguments with `responses` and `state`.
fn next_round(
    mut params: CallToolRequestParams,
    responses: InputResponses,
    state: Option<String>,
) -> CallToolRequestParams {
    params.input_responses = (!responses.is_empty()).then_some(responses);
    params.request_state = state;
    params
}
