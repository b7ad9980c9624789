//! Asking the client on the stateless revision (MCP 2026-07-28), which forbids
//! server-to-client requests: multi round-trip requests (SEP-2322). An action that asks a
//! question the call carries no answer to ([`RequestContext::confirm`](crate::RequestContext::confirm),
//! [`elicit`](crate::RequestContext::elicit), [`sample`](crate::RequestContext::sample),
//! [`list_roots`](crate::RequestContext::list_roots)) is stopped there, and the call is answered
//! `input_required`: every question the action asked without an answer (several when it asks
//! them together, `tokio::join!`), each an input request (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) under its key, and a `requestState`. The client
//! answers and sends the same call again with the answers (`inputResponses`, keyed as asked)
//! and the state; the action runs again from the start, and this time the questions have their
//! answers.
//!
//! Only what the client declared in the request's client capabilities is asked: an elicitation
//! the client cannot show takes its documented fallback (`INPUT_REQUIRED`,
//! `CONFIRMATION_UNAVAILABLE`, the model's word), and a sample or roots, which have none, refuse
//! the call with JSON-RPC `-32021` (missing required client capability, SEP-2575). An answer that
//! is not the result its question asks for is refused with `-32602`.
//!
//! The state carries the answers the action read. It is sealed (HMAC-SHA256, rmcp's
//! `RequestStateCodec`) with the server's key, bound to the caller, the tool and the
//! arguments (so it cannot serve another call or another caller), expires, and is good for one
//! retry on this process. A state that fails any of these is refused with JSON-RPC `-32602`
//! (`data.code` [`REQUEST_STATE_INVALID`]), never taken as the user's answer. Answers sent
//! without a state are taken for the questions the action asks (a client may answer before it is
//! asked; SEP-2322 has the server re-ask what is missing), except a confirmation's, which counts
//! only with the state of the round that asked it: extra answers are ignored, and a missing
//! one is asked for. An action runs again from the start on each round: it should ask
//! before it changes anything.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, InputRequest, InputRequiredResult,
    RequestStateCodec, SealOptions,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use crate::envelope::error::ToolError;
use crate::model::context::{InputKind, Inputs};

use super::Server;
use super::elicitor::elicits_forms;
use super::taken_states::{Shared, TakenStates};
use crate::auth::Principal;

/// The `data.code` of the JSON-RPC `-32602` error answering a call whose `requestState` this
/// server cannot take: forged, expired, already used, or made for another call or caller.
pub const REQUEST_STATE_INVALID: &str = "REQUEST_STATE_INVALID";

/// How long a `requestState` is good for, by default: time for a person to answer.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(10 * 60);

impl Server {
    /// The key that seals the `requestState` of `input_required` answers (at least 32 bytes of
    /// random data, kept secret). Replicas behind one load balancer must share it, so that a
    /// retry reaching another replica opens the state; change it and states in flight are
    /// refused (JSON-RPC `-32602`, `data.code` `REQUEST_STATE_INVALID`; the client asks again). Default: a random key per
    /// process.
    ///
    /// # Panics
    /// When `key` is shorter than 32 bytes.
    #[track_caller]
    pub fn request_state_key(self, key: impl Into<Vec<u8>>) -> Server {
        let key = key.into();
        assert!(
            key.len() >= 32,
            "fusion::server::Server::request_state_key: a key of at least 32 bytes"
        );
        self.set(|inner| {
            let shared = Arc::clone(&inner.rounds.taken.shared);
            inner.rounds = Arc::new(Rounds::new(Some(key), inner.rounds.ttl, shared));
        })
    }

    /// How long a `requestState` stays good: the time a user has to answer. Default:
    /// [`DEFAULT_REQUEST_STATE_TTL`] (10 minutes).
    pub fn request_state_ttl(self, ttl: Duration) -> Server {
        self.set(|inner| {
            let shared = Arc::clone(&inner.rounds.taken.shared);
            inner.rounds = Arc::new(Rounds::new(Some(inner.rounds.key.clone()), ttl, shared));
        })
    }
}

/// The server's key and rules for request states, shared by every call.
pub(super) struct Rounds {
    key: Vec<u8>,
    codec: RequestStateCodec,
    ttl: Duration,
    /// The states already taken.
    pub(super) taken: TakenStates,
}

/// What a request state holds: the answers the action read so far, by key, and the keys of
/// the questions the round asked.
#[derive(Serialize, Deserialize)]
struct State {
    answers: BTreeMap<String, Value>,
    #[serde(default)]
    questions: BTreeSet<String>,
    nonce: String,
}

/// Why a call's round cannot open.
#[derive(Debug)]
pub(super) enum Stopped {
    /// A JSON-RPC error: the state refused (`-32602`, `data.code` `REQUEST_STATE_INVALID`).
    Protocol(ErrorData),
    /// An envelope: the record of taken states cannot be reached (`SERVER_BUSY`).
    Envelope(ToolError),
}

/// One call's round: the answers it carries, and the questions its action asked without one.
#[derive(Default)]
pub(super) struct Round {
    /// The answers of the call's state.
    answers: BTreeMap<String, Value>,
    /// The keys of the questions the state's round asked.
    questions: BTreeSet<String>,
    /// The call's `inputResponses`, for the questions the state holds no answer to.
    responses: BTreeMap<String, Value>,
    /// What the client declared it can be asked (the request's client capabilities).
    capabilities: ClientCapabilities,
    open: Mutex<Open>,
    asked: Notify,
    /// The nonce of the state the call carried, taken when the round opened.
    nonce: Option<String>,
    /// Set when the action read one of the answers: only then is the state spent for good.
    read: AtomicBool,
    /// The automatic key of the next question without one of its own (`q0`, `q1`, …).
    count: AtomicUsize,
}

/// What the action asked without an answer, or what stops the call.
#[derive(Default)]
struct Open {
    /// The answers the action read, for the next state.
    read: BTreeMap<String, Value>,
    questions: BTreeMap<String, InputRequest>,
    stop: Option<ErrorData>,
}

impl Default for Rounds {
    /// Rounds sealed with a random key, good for [`DEFAULT_REQUEST_STATE_TTL`], recorded in
    /// this process.
    fn default() -> Rounds {
        Rounds::new(None, DEFAULT_REQUEST_STATE_TTL, Arc::default())
    }
}

impl Rounds {
    /// Rounds sealed with `key` (at least 32 bytes: share it between replicas), or with a
    /// random key for this process.
    ///
    /// # Panics
    /// When `key` is shorter than 32 bytes.
    pub(super) fn new(key: Option<Vec<u8>>, ttl: Duration, shared: Arc<Shared>) -> Rounds {
        let key = key.unwrap_or_else(|| {
            let mut key = vec![0; 32];
            getrandom::fill(&mut key).expect("the operating system's random source");
            key
        });
        let codec = RequestStateCodec::try_new(key.clone())
            .expect("a request-state key must be at least 32 bytes");
        Rounds {
            key,
            codec,
            ttl,
            taken: TakenStates::new(shared),
        }
    }

    /// These rounds, their taken states recorded in `shared` too.
    #[cfg(feature = "redis")]
    pub(super) fn recorded_in(&self, shared: Arc<Shared>) -> Rounds {
        Rounds::new(Some(self.key.clone()), self.ttl, shared)
    }

    /// The round of a call from a client of the stateless revision (`stateless`: the request
    /// is one of the 2026-07-28 lifecycle, which forbids server-to-client requests), with what
    /// its state is bound to: the `caller`, the tool and the arguments. `None` for any other
    /// client, which is asked directly or not at all.
    ///
    /// # Errors
    /// As [`Rounds::open`].
    pub(super) async fn round_for(
        &self,
        stateless: bool,
        request: &CallToolRequestParams,
        context: &RmcpContext<RoleServer>,
        caller: Option<&Principal>,
        arguments: &Map<String, Value>,
    ) -> Result<CallRound, Stopped> {
        if !stateless {
            return Ok(CallRound(None));
        }
        // Issuer and subject: `sub` is unique per issuer only (RFC 7519 section 4.1.2).
        let caller = caller.map(Principal::identity_key).unwrap_or_default();
        let binding = binding(&caller, &request.name, arguments);
        let state = request.request_state.as_deref();
        let mut round = self.open(state, &binding).await?;
        round.responses = request.input_responses.clone().unwrap_or_default();
        round.capabilities = context.meta.client_capabilities().unwrap_or_default();
        Ok(CallRound(Some((Arc::new(round), binding))))
    }

    /// The round of a call bound to `binding` (caller, tool and arguments), from the call's
    /// `requestState`: the answers it holds.
    ///
    /// # Errors
    /// `-32602` (`data.code` `REQUEST_STATE_INVALID`) for a state that is forged, expired,
    /// already used or another call's; `SERVER_BUSY` when the record of taken states cannot be
    /// reached.
    async fn open(&self, state: Option<&str>, binding: &[u8]) -> Result<Round, Stopped> {
        let mut round = Round::default();
        let Some(sealed) = state else {
            return Ok(round);
        };
        let state: State = self
            .codec
            .open_json_with(sealed, binding)
            .map_err(|error| {
                tracing::info!(target: "fusion::server", %error, "a requestState was refused");
                Stopped::Protocol(invalid())
            })?;
        if !(self.taken.take(&state.nonce, self.ttl).await).map_err(Stopped::Envelope)? {
            return Err(Stopped::Protocol(invalid()));
        }
        round.nonce = Some(state.nonce);
        round.answers = state.answers;
        round.questions = state.questions;
        Ok(round)
    }

    /// Gives back the state of a round whose action never read its answers (a guard refused
    /// the call first, say): the client may send it again, and the user's answer is not lost.
    pub(super) async fn give_back(&self, round: &Round) {
        let Some(nonce) = &round.nonce else {
            return;
        };
        if !round.read.load(Ordering::Acquire) {
            self.taken.give_back(nonce).await;
        }
    }

    /// The answer for `round`, whose action asked questions it has no answer to: `input_required`
    /// with every one of them and a new state holding the answers read so far.
    ///
    /// # Errors
    /// What stopped the round instead (`-32021`, `-32602`), or an internal error when the
    /// state cannot be sealed.
    pub(super) fn input_required(
        &self,
        round: &Round,
        binding: &[u8],
    ) -> Result<InputRequiredResult, ErrorData> {
        let open = std::mem::take(&mut *round.open.lock().unwrap_or_else(PoisonError::into_inner));
        if let Some(stop) = open.stop {
            return Err(stop);
        }
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the operating system's random source");
        let state = State {
            answers: open.read,
            questions: open.questions.keys().cloned().collect(),
            nonce: nonce.iter().map(|byte| format!("{byte:02x}")).collect(),
        };
        let options = SealOptions::new().associated_data(binding).ttl(self.ttl);
        let sealed = (self.codec.seal_json_with(&state, &options))
            .map_err(|error| ErrorData::internal_error(format!("requestState: {error}"), None))?;
        Ok(InputRequiredResult::new(Some(open.questions), Some(sealed)))
    }
}

impl InputKind {
    /// The method of the input request.
    pub(super) fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation | InputKind::Confirmation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// Whether a client declaring `capabilities` can be asked this; for an elicitation, one
    /// in form mode. `None`: it can; otherwise the capability it would have to declare.
    #[allow(
        deprecated,
        reason = "sampling and roots are deprecated from the 2026-07-28 revision on; clients still offer them"
    )]
    fn missing(self, capabilities: &ClientCapabilities) -> Option<Value> {
        let (declared, name) = match self {
            InputKind::Elicitation | InputKind::Confirmation => (
                elicits_forms(capabilities),
                json!({"elicitation": {"form": {}}}),
            ),
            InputKind::Sampling => (capabilities.sampling.is_some(), json!({"sampling": {}})),
            InputKind::Roots => (capabilities.roots.is_some(), json!({"roots": {}})),
        };
        (!declared).then_some(name)
    }

    /// Whether `answer` is the result this kind of request asks for.
    #[allow(
        deprecated,
        reason = "sampling and roots are deprecated from the 2026-07-28 revision on; clients still offer them"
    )]
    fn fits(self, answer: &Value) -> bool {
        use rmcp::model::{CreateMessageResult, ElicitResult, ListRootsResult};
        use serde::Deserialize;
        // Read in place (`&Value` is a deserializer): the answer is not cloned to be checked.
        match self {
            InputKind::Elicitation | InputKind::Confirmation => {
                ElicitResult::deserialize(answer).is_ok()
            }
            InputKind::Sampling => CreateMessageResult::deserialize(answer).is_ok(),
            InputKind::Roots => ListRootsResult::deserialize(answer).is_ok(),
        }
    }
}

/// Whether `answer` is the result the input request `method` asks for (any answer fits a
/// method this server does not ask with).
pub(super) fn answers(method: &str, answer: &Value) -> bool {
    let kinds = [
        InputKind::Elicitation,
        InputKind::Sampling,
        InputKind::Roots,
    ];
    let kind = kinds.into_iter().find(|kind| kind.method() == method);
    kind.is_none_or(|kind| kind.fits(answer))
}

impl Round {
    /// How the call's questions reach the client: the answer the round carries for each, or,
    /// for a question without one, a wait that never ends while the round records it.
    pub(super) fn inputs(self: &Arc<Round>) -> Inputs {
        let round = Arc::clone(self);
        Arc::new(move |key, kind, params| {
            let key =
                key.unwrap_or_else(|| format!("q{}", round.count.fetch_add(1, Ordering::Relaxed)));
            match round.ask(key, kind, params) {
                Some(answer) => Box::pin(std::future::ready(answer)),
                None => Box::pin(std::future::pending()),
            }
        })
    }

    /// The answer to the question `key`: `Some(Some(answer))`, `Some(None)` for an elicitation
    /// the client cannot show, or `None` when the call stops here (the question is recorded,
    /// or what refuses the call).
    fn ask(&self, key: String, kind: InputKind, params: Value) -> Option<Option<Value>> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(required) = kind.missing(&self.capabilities) {
            if matches!(kind, InputKind::Elicitation | InputKind::Confirmation) {
                return Some(None);
            }
            let required = serde_json::from_value(required).unwrap_or_default();
            let error = ErrorData::missing_required_client_capability(required);
            return self.stop(&mut open, error);
        }
        // A confirmation's yes counts only with the state of the round that asked it: sealed,
        // bound to this call and caller, taken once.
        let answer = match self.answers.get(&key) {
            Some(sealed) => Some(sealed),
            None if kind == InputKind::Confirmation && !self.questions.contains(&key) => None,
            None => self.responses.get(&key).filter(|answer| !answer.is_null()),
        };
        if let Some(answer) = answer {
            if !kind.fits(answer) {
                let method = kind.method();
                let message = format!("inputResponses[\"{key}\"] is not a {method} result");
                return self.stop(&mut open, ErrorData::invalid_params(message, None));
            }
            self.read.store(true, Ordering::Release);
            open.read.insert(key, answer.clone());
            return Some(Some(answer.clone()));
        }
        // `roots/list` takes no params: rmcp's `ListRootsRequest` has none.
        let request = match kind {
            InputKind::Roots => json!({"method": kind.method()}),
            _ => json!({"method": kind.method(), "params": params}),
        };
        match serde_json::from_value::<InputRequest>(request) {
            Ok(request) => {
                open.questions.insert(key, request);
                self.asked.notify_one();
                None
            }
            Err(error) => {
                let message = format!("the question {key} cannot be put to the client: {error}");
                self.stop(&mut open, ErrorData::internal_error(message, None))
            }
        }
    }

    /// Stops the call with `error` (the first one wins).
    fn stop(&self, open: &mut Open, error: ErrorData) -> Option<Option<Value>> {
        open.stop.get_or_insert(error);
        self.asked.notify_one();
        None
    }

    /// Resolves when the action asks a question the round has no answer to, or the round
    /// stops the call.
    async fn asked(&self) {
        self.asked.notified().await;
    }
}

/// The round of one call, with the binding its state is sealed to; none for a client that is
/// asked directly or not at all.
pub(super) struct CallRound(Option<(Arc<Round>, Vec<u8>)>);

impl CallRound {
    /// The input channel of the call's questions, when it has a round.
    pub(super) fn inputs(&self) -> Option<Inputs> {
        self.0.as_ref().map(|(round, _)| round.inputs())
    }

    /// Resolves when the action asked a question the call carries no answer to (or the round
    /// stopped the call); never without a round.
    pub(super) async fn asked(&self) {
        match &self.0 {
            Some((round, _)) => round.asked().await,
            None => std::future::pending().await,
        }
    }

    /// The answer to a call whose action [asked](CallRound::asked): `input_required` with the
    /// questions and the state to send them back with, or what stopped the round (its state
    /// then given back).
    pub(super) async fn input_required(
        &self,
        rounds: &Rounds,
    ) -> Result<CallToolResponse, ErrorData> {
        let (round, binding) = self.0.as_ref().expect("only a round asks");
        let answer = rounds.input_required(round, binding);
        if answer.is_err() {
            rounds.give_back(round).await;
        }
        answer.map(Into::into)
    }

    /// Gives back a state the call carried but never read (see [`Rounds::give_back`]).
    pub(super) async fn give_back(&self, rounds: &Rounds) {
        if let Some((round, _)) = &self.0 {
            rounds.give_back(round).await;
        }
    }
}

/// The one refusal for every request state this server cannot take: JSON-RPC `-32602`, its
/// `data.code` [`REQUEST_STATE_INVALID`].
fn invalid() -> ErrorData {
    ErrorData::invalid_params(
        "Invalid requestState: forged, expired, already used, or made for another call or \
         caller. Call again with the same arguments and no requestState or inputResponses; the \
         user will be asked again.",
        Some(json!({"code": REQUEST_STATE_INVALID})),
    )
}

/// What a request state is bound to: the caller, the tool and the arguments (canonical JSON).
fn binding(caller: &str, tool: &str, arguments: &Map<String, Value>) -> Vec<u8> {
    let mut arguments = Value::Object(arguments.clone());
    arguments.sort_all_objects();
    let mut bound = Vec::new();
    for part in [caller, tool, &arguments.to_string()] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part.as_bytes());
    }
    bound
}

#[cfg(test)]
#[path = "rounds_tests.rs"]
mod tests;
