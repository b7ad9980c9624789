//! Asking the user on the stateless revision (MCP 2026-07-28), which forbids server-to-client
//! requests: multi round-trip requests (SEP-2322). An action that calls
//! [`RequestContext::confirm`](crate::RequestContext::confirm) or
//! [`RequestContext::elicit`](crate::RequestContext::elicit) for a question the call carries no
//! answer to is stopped there, and the call is answered `input_required`: the question as an
//! `elicitation/create` input request, and a `requestState`. The client asks its user and sends
//! the same call again with the answer (`inputResponses`) and the state; the action runs again
//! from the start, and this time the question has its answer.
//!
//! The state carries the answers of earlier rounds. It is sealed (HMAC-SHA256, rmcp's
//! `RequestStateCodec`) with the server's key, bound to the caller, the tool and the
//! arguments (so it cannot serve another call or another caller), expires, and is good for one
//! retry on this process. A state that fails any of these is refused with one envelope, never
//! taken as the user's answer. An action runs again from the start on each round: it should
//! ask before it changes anything.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, InputRequest, InputRequiredResult, RequestStateCodec, SealOptions,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use crate::envelope::code::ErrorCategory;
use crate::envelope::error::ToolError;
use crate::model::context::{Elicited, Elicitor};

use super::Server;
use super::elicitor::elicits_forms;
use super::taken::{Shared, Taken};
use crate::auth::Principal;

/// The code of a call whose `requestState` this server cannot take: forged, expired, already
/// used, or made for another call or caller.
pub const REQUEST_STATE_INVALID: &str = "REQUEST_STATE_INVALID";

/// How long a `requestState` is good for, by default: time for a person to answer.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(10 * 60);

impl Server {
    /// The key that seals the `requestState` of `input_required` answers (at least 32 bytes of
    /// random data, kept secret). Replicas behind one load balancer must share it, so that a
    /// retry reaching another replica opens the state; change it and states in flight are
    /// refused (`REQUEST_STATE_INVALID`; the client asks again). Default: a random key per
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
    pub(super) taken: Taken,
}

/// What a request state holds: the answers so far and the key of the question asked last.
#[derive(Serialize, Deserialize)]
struct State {
    answers: BTreeMap<String, Value>,
    asked: String,
    nonce: String,
}

/// One call's round: the answers it carries, and the question its action asked without one.
pub(super) struct Round {
    answers: Arc<BTreeMap<String, Value>>,
    open: Arc<Mutex<Option<Question>>>,
    asked: Arc<Notify>,
    /// The nonce of the state the call carried, taken when the round opened.
    nonce: Option<String>,
    /// Set when the action read one of the answers: only then is the state spent for good.
    read: Arc<std::sync::atomic::AtomicBool>,
}

struct Question {
    key: String,
    message: String,
    schema: Map<String, Value>,
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
            taken: Taken::new(shared),
        }
    }

    /// These rounds, their taken states recorded in `shared` too.
    #[cfg(feature = "redis")]
    pub(super) fn recorded_in(&self, shared: Arc<Shared>) -> Rounds {
        Rounds::new(Some(self.key.clone()), self.ttl, shared)
    }

    /// The round of a call from a client of the stateless revision (which forbids
    /// server-to-client requests) that can show forms, with what its state is bound to: the
    /// `caller`, the tool and the arguments. `None` for any other client, which is asked
    /// directly or not at all.
    ///
    /// # Errors
    /// As [`Rounds::open`].
    pub(super) async fn round_for(
        &self,
        request: &CallToolRequestParams,
        context: &RmcpContext<RoleServer>,
        caller: Option<&Principal>,
        arguments: &Map<String, Value>,
    ) -> Result<Option<(Round, Vec<u8>)>, ToolError> {
        let stateless = (context.protocol_version()).is_some_and(|v| !v.has_initialize());
        let forms = (context.meta.client_capabilities()).is_some_and(|c| elicits_forms(&c));
        if !(stateless && forms) {
            return Ok(None);
        }
        // Issuer and subject: `sub` is unique per issuer only (RFC 7519 section 4.1.2).
        let caller = caller.map(Principal::identity_key).unwrap_or_default();
        let binding = binding(&caller, &request.name, arguments);
        let state = request.request_state.as_deref();
        let round = self
            .open(state, request.input_responses.as_ref(), &binding)
            .await?;
        Ok(Some((round, binding)))
    }

    /// The round of a call bound to `binding` (caller, tool and arguments), from the call's
    /// `requestState` and `inputResponses`.
    ///
    /// # Errors
    /// `REQUEST_STATE_INVALID` for a state that is forged, expired, already used or another
    /// call's, or that comes without the answer to its question; and for answers without a
    /// state.
    async fn open(
        &self,
        state: Option<&str>,
        responses: Option<&BTreeMap<String, Value>>,
        binding: &[u8],
    ) -> Result<Round, ToolError> {
        let mut nonce = None;
        let answers = match state {
            None if responses.is_some_and(|r| !r.is_empty()) => return Err(invalid()),
            None => BTreeMap::new(),
            Some(sealed) => {
                let state: State = self
                    .codec
                    .open_json_with(sealed, binding)
                    .map_err(|error| {
                        tracing::info!(target: "fusion::server", %error, "a requestState was refused");
                        invalid()
                    })?;
                let answer = responses
                    .and_then(|r| r.get(&state.asked))
                    .ok_or_else(invalid)?;
                if !self.taken.take(&state.nonce, self.ttl).await? {
                    return Err(invalid());
                }
                nonce = Some(state.nonce);
                let mut answers = state.answers;
                answers.insert(state.asked, answer.clone());
                answers
            }
        };
        Ok(Round {
            answers: Arc::new(answers),
            open: Arc::default(),
            asked: Arc::default(),
            nonce,
            read: Arc::default(),
        })
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

    /// The `input_required` answer for `round`, whose action asked a question it has no answer
    /// to; `None` when it asked none.
    pub(super) fn input_required(
        &self,
        round: &Round,
        binding: &[u8],
    ) -> Option<InputRequiredResult> {
        let question = round
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the operating system's random source");
        let state = State {
            answers: (*round.answers).clone(),
            asked: question.key.clone(),
            nonce: nonce.iter().map(|byte| format!("{byte:02x}")).collect(),
        };
        let options = SealOptions::new().associated_data(binding).ttl(self.ttl);
        let sealed = self.codec.seal_json_with(&state, &options).ok()?;
        let request = json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": question.message, "requestedSchema": question.schema},
        });
        let request: InputRequest = serde_json::from_value(request).ok()?;
        let requests = BTreeMap::from([(question.key, request)]);
        Some(InputRequiredResult::new(Some(requests), Some(sealed)))
    }
}

impl Round {
    /// The elicitor of the call: the answer the round carries for each question in turn, or,
    /// for the first question without one, a wait that never ends while the round records it.
    pub(super) fn elicitor(&self) -> Elicitor {
        let answers = Arc::clone(&self.answers);
        let open = Arc::clone(&self.open);
        let asked = Arc::clone(&self.asked);
        let read = Arc::clone(&self.read);
        let count = Arc::new(AtomicUsize::new(0));
        Arc::new(move |message, schema| {
            let key = format!("q{}", count.fetch_add(1, Ordering::Relaxed));
            if let Some(answer) = answers.get(&key) {
                read.store(true, Ordering::Release);
                let answer = elicited(answer);
                return Box::pin(async move { answer });
            }
            let question = Question {
                key,
                message,
                schema,
            };
            *open.lock().unwrap_or_else(PoisonError::into_inner) = Some(question);
            asked.notify_one();
            Box::pin(std::future::pending())
        })
    }

    /// Resolves when the action asks a question the round has no answer to.
    pub(super) async fn asked(&self) {
        self.asked.notified().await;
    }
}

/// The user's answer, from an `ElicitResult` a client sent as an input response.
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

/// The one envelope for every request state this server cannot take.
fn invalid() -> ToolError {
    ToolError::new(
        REQUEST_STATE_INVALID,
        "The requestState of this call is not valid here: it is forged, expired, already used, \
         made for another call or caller, or came without the answer to its question.",
    )
    .category(ErrorCategory::Validation)
    .retryable(false)
    .suggest("Call again with the same arguments and no requestState or inputResponses; the user will be asked again.")
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
mod tests {
    use super::*;

    fn rounds(ttl: Duration) -> Rounds {
        Rounds::new(Some(vec![7; 32]), ttl, Arc::default())
    }

    fn arguments(amount: u64) -> Map<String, Value> {
        json!({"invoice": "inv_1", "amount": amount})
            .as_object()
            .unwrap()
            .clone()
    }

    /// The state and the question key of the `input_required` answer to a round whose action
    /// asked `message`.
    async fn ask(
        rounds: &Rounds,
        round: &Round,
        message: &str,
        binding: &[u8],
    ) -> (String, String) {
        let elicitor = round.elicitor();
        let waiting = elicitor(message.to_owned(), form());
        round.asked().await;
        drop(waiting);
        let input = rounds.input_required(round, binding).unwrap();
        let requests = input.input_requests.unwrap();
        assert_eq!(requests.len(), 1, "one question");
        let key = requests.into_keys().next().unwrap();
        (input.request_state.unwrap(), key)
    }

    fn form() -> Map<String, Value> {
        let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
        schema.as_object().unwrap().clone()
    }

    fn accept(key: &str) -> BTreeMap<String, Value> {
        BTreeMap::from([(
            key.to_owned(),
            json!({"action": "accept", "content": {"confirm": true}}),
        )])
    }

    #[tokio::test]
    async fn answers_come_back_in_order_and_only_for_the_call_and_caller_they_were_given_to() {
        let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
        let bound = binding("alice", "billing", &arguments(100));
        let first = rounds.open(None, None, &bound).await.unwrap();
        let (state, key) = ask(&rounds, &first, "Refund?", &bound).await;
        assert_eq!(key, "q0");

        // Another caller, another tool, other arguments, a forged state: one refusal.
        for other in [
            binding("bob", "billing", &arguments(100)),
            binding("alice", "ledger", &arguments(100)),
            binding("alice", "billing", &arguments(200)),
        ] {
            let refused = rounds
                .open(Some(&state), Some(&accept(&key)), &other)
                .await
                .err()
                .unwrap();
            assert_eq!(refused.code().as_str(), REQUEST_STATE_INVALID);
        }
        // The last character changed (to another one: a state ending in `A` stays forged).
        let last = if state.ends_with('A') { "B" } else { "A" };
        let forged = format!("{}{last}", &state[..state.len() - 1]);
        assert!(
            rounds
                .open(Some(&forged), Some(&accept(&key)), &bound)
                .await
                .is_err()
        );
        assert!(
            rounds
                .open(None, Some(&accept(&key)), &bound)
                .await
                .is_err(),
            "answers without a state"
        );
        assert!(
            rounds.open(Some(&state), None, &bound).await.is_err(),
            "a state without its answer"
        );

        // The second round answers the first question and asks the second.
        let second = rounds
            .open(Some(&state), Some(&accept(&key)), &bound)
            .await
            .unwrap();
        let elicitor = second.elicitor();
        let answer = elicitor("Refund?".to_owned(), Map::new()).await;
        assert_eq!(
            answer,
            Elicited::Accepted(json!({"confirm": true}).as_object().unwrap().clone())
        );
        let (state, key) = ask_next(&rounds, &second, &bound).await;
        assert_eq!(key, "q1");

        // Used once: the first state is refused from now on, the second carries both answers.
        let decline = BTreeMap::from([(key.clone(), json!({"action": "decline"}))]);
        let third = rounds
            .open(Some(&state), Some(&decline), &bound)
            .await
            .unwrap();
        let elicitor = third.elicitor();
        assert!(matches!(
            elicitor(String::new(), Map::new()).await,
            Elicited::Accepted(_)
        ));
        assert_eq!(
            elicitor(String::new(), Map::new()).await,
            Elicited::Declined
        );
        assert!(
            rounds
                .open(Some(&state), Some(&decline), &bound)
                .await
                .is_err(),
            "replayed"
        );
    }

    /// Like [`ask`], for a round whose elicitor already answered the questions before.
    async fn ask_next(rounds: &Rounds, round: &Round, binding: &[u8]) -> (String, String) {
        let elicitor = round.elicitor();
        // Its first question is answered by the round; its second is not.
        let _ = elicitor(String::new(), Map::new()).await;
        let waiting = elicitor("Really?".to_owned(), form());
        round.asked().await;
        drop(waiting);
        let input = rounds.input_required(round, binding).unwrap();
        let key = input.input_requests.unwrap().into_keys().next().unwrap();
        (input.request_state.unwrap(), key)
    }

    #[tokio::test]
    async fn an_expired_state_or_one_sealed_with_another_key_is_refused() {
        let bound = binding("", "billing", &arguments(1));
        let short = rounds(Duration::from_millis(1));
        let round = short.open(None, None, &bound).await.unwrap();
        let (state, key) = ask(&short, &round, "Refund?", &bound).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            short
                .open(Some(&state), Some(&accept(&key)), &bound)
                .await
                .is_err(),
            "expired"
        );

        let long = rounds(DEFAULT_REQUEST_STATE_TTL);
        let round = long.open(None, None, &bound).await.unwrap();
        let (state, key) = ask(&long, &round, "Refund?", &bound).await;
        let other_key = Rounds::new(Some(vec![8; 32]), DEFAULT_REQUEST_STATE_TTL, Arc::default());
        assert!(
            other_key
                .open(Some(&state), Some(&accept(&key)), &bound)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_state_whose_answer_was_never_read_is_given_back_and_a_read_one_is_spent() {
        let rounds = rounds(DEFAULT_REQUEST_STATE_TTL);
        let bound = binding("alice", "billing", &arguments(100));
        let first = rounds.open(None, None, &bound).await.unwrap();
        let (state, key) = ask(&rounds, &first, "Refund?", &bound).await;

        // A guard refused the retry before the action ran: the answer was never read.
        let refused = rounds
            .open(Some(&state), Some(&accept(&key)), &bound)
            .await
            .unwrap();
        rounds.give_back(&refused).await;
        // So the same state goes through on the next retry, and its answer is read this time.
        let retried = rounds
            .open(Some(&state), Some(&accept(&key)), &bound)
            .await
            .unwrap();
        let answer = (retried.elicitor())("Refund?".to_owned(), form()).await;
        assert!(matches!(answer, Elicited::Accepted(_)));
        rounds.give_back(&retried).await;
        // Spent: read by the action, never given back.
        let replayed = rounds.open(Some(&state), Some(&accept(&key)), &bound).await;
        assert_eq!(
            replayed.err().unwrap().code().as_str(),
            REQUEST_STATE_INVALID
        );
    }

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
