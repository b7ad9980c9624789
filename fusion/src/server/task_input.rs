//! Questions a task's action asks the user (MCP Tasks extension, SEP-2663, with the input
//! requests of SEP-2322): [`RequestContext::elicit`](crate::RequestContext::elicit) and
//! [`RequestContext::confirm`](crate::RequestContext::confirm) in an action running as a task.
//!
//! The action's future keeps running and waits: the question is stored with the task (its
//! `inputRequests`, the task `input_required` while one is outstanding), the client answers
//! with `tasks/update` (`inputResponses`, stored with the task too), and the server running
//! the task hands each answer to the question waiting on it: at once when the update reached
//! this replica, else at its next look at the store (every poll interval). Several questions
//! may be outstanding at once, and are answered one by one or together.
//!
//! [`Questions::ask`] takes any input request (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) and answers the client's raw response; elicitation is built on it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot};

use crate::model::context::{BoxFuture, Elicited, Elicitor, InputKind, Inputs, TaskStart};
use crate::tasks::{TaskRecord, TaskStore};

/// The questions of one running task: the ones waiting for an answer, by key.
pub(super) struct Questions {
    store: Arc<dyn TaskStore>,
    id: String,
    asked: AtomicUsize,
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// Notified by a `tasks/update` on this replica: the runner looks at the store now.
    pub(super) answered: Notify,
}

impl Questions {
    /// The questions of the task `id`, kept in `store`.
    pub(super) fn new(store: Arc<dyn TaskStore>, id: String) -> Arc<Questions> {
        Arc::new(Questions {
            store,
            id,
            asked: AtomicUsize::new(0),
            waiting: Mutex::default(),
            answered: Notify::new(),
        })
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Value>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks `request` (an input request: `{"method": …, "params": …}`) under a key new to the
    /// task (`q0`, `q1`, …), and answers the client's response, or why there is none (the
    /// store failed, the task ended).
    pub(super) fn ask(
        self: &Arc<Self>,
        request: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let key = format!("q{}", self.asked.fetch_add(1, Ordering::Relaxed));
        let (answer, answered) = oneshot::channel();
        // Waiting before the question is stored: an answer cannot come before its waiter.
        self.waiting().insert(key.clone(), answer);
        let this = Arc::clone(self);
        Box::pin(async move {
            let stored = this
                .store
                .ask(&this.id, BTreeMap::from([(key.clone(), request)]));
            let refused = match stored.await {
                Ok(true) => None,
                Ok(false) => Some("the task has ended".to_owned()),
                Err(error) => {
                    let error = crate::envelope::store::without_credentials(&error.to_string())
                        .into_owned();
                    tracing::warn!(target: "fusion::server", task = %this.id, %error, "a task's question could not be stored");
                    Some("the question could not be stored with the task".to_owned())
                }
            };
            if let Some(why) = refused {
                this.waiting().remove(&key);
                return Err(why);
            }
            answered
                .await
                .map_err(|_| "the task ended before the question was answered".to_owned())
        })
    }

    /// The input channel of the task's action: each question (an elicitation, a confirmation,
    /// a sampling or roots request) an input request stored with the task. A question that
    /// cannot be stored, or whose task ends first, answers a response that fits no result: the
    /// action's question fails (`CONFIRMATION_FAILED`, `SAMPLING_FAILED`, ...).
    pub(super) fn inputs(self: &Arc<Self>) -> Inputs {
        let this = Arc::clone(self);
        Arc::new(move |_key, kind: InputKind, params| {
            let asked = this.ask(json!({"method": kind.method(), "params": params}));
            let id = this.id.clone();
            Box::pin(async move {
                Some(asked.await.unwrap_or_else(|why| {
                    tracing::warn!(target: "fusion::server", task = %id, reason = %why, "a task's question has no answer");
                    json!({"action": "failed", "reason": why})
                }))
            })
        })
    }

    /// Hands each answer the stored task holds to the question waiting on it.
    pub(super) fn deliver(&self, record: &TaskRecord) {
        let mut waiting = self.waiting();
        if waiting.is_empty() {
            return;
        }
        for (key, answer) in &record.input_responses {
            if let Some(waiter) = waiting.remove(key) {
                let _ = waiter.send(answer.clone());
            }
        }
    }
}

/// Where a task call's questions go: `before` it runs as a task (a deferred task's call until
/// its action starts the task), to its task once it does, and `before` again for good when
/// the store had no room for the task and the call goes on as a direct call.
pub(super) const BEFORE: u8 = 0;
/// See [`BEFORE`].
pub(super) const TASK: u8 = 1;
/// See [`BEFORE`].
pub(super) const DIRECT: u8 = 2;

/// The input channel of a task's call, by its `route` ([`BEFORE`], [`TASK`], [`DIRECT`]): the
/// task's `questions`, or `before` (the call's `input_required` round, or the client itself on
/// a revision with `initialize`; without either the client cannot be asked), as a direct
/// call's.
pub(super) fn routed(
    before: Option<Inputs>,
    questions: &Arc<Questions>,
    route: &Arc<AtomicU8>,
) -> Inputs {
    let after = questions.inputs();
    let route = Arc::clone(route);
    Arc::new(
        move |key, kind, params| match (route.load(Ordering::Acquire), &before) {
            (TASK, _) => after(key, kind, params),
            (_, Some(before)) => before(key, kind, params),
            (_, None) => Box::pin(std::future::ready(None)),
        },
    )
}

/// The task start of a call whose task is deferred (`#[action(task(deferred))]`), the one
/// signal a running call sends the server: the action is running when it decides, so the
/// server learns it from the action. [`RequestContext::start_task`](crate::RequestContext::start_task)
/// says so on `started` (the first time) and waits for `go`: the server creates the task,
/// answers the client with it, and lets the action go on, its questions then the task's
/// (unless the store had no room: `route` is [`DIRECT`]). When the server cannot create the
/// task it drops `go` with the call: the action never goes on.
pub(super) fn deferred_start(
    route: &Arc<AtomicU8>,
) -> (TaskStart, oneshot::Receiver<()>, oneshot::Sender<()>) {
    let (started, on_started) = oneshot::channel();
    let (go_on, go) = oneshot::channel();
    let signal = Mutex::new(Some((started, go)));
    let route = Arc::clone(route);
    let start: TaskStart = Arc::new(move || {
        let signal = signal.lock().unwrap_or_else(PoisonError::into_inner).take();
        let route = Arc::clone(&route);
        Box::pin(async move {
            let Some((started, go)) = signal else { return };
            let _ = started.send(());
            if go.await.is_err() {
                std::future::pending::<()>().await;
            }
            let _ = route.compare_exchange(BEFORE, TASK, Ordering::AcqRel, Ordering::Acquire);
        })
    });
    (start, on_started, go_on)
}

/// The input channel of a client asked with server-to-client requests (a revision with
/// `initialize`): elicitations and confirmations go to its `elicitor`; it is not asked for
/// samples or roots before a deferred task starts.
pub(super) fn asking_client(elicitor: Elicitor) -> Inputs {
    Arc::new(move |_key, kind, mut params: Value| {
        if !matches!(kind, InputKind::Elicitation | InputKind::Confirmation) {
            return Box::pin(std::future::ready(None));
        }
        let message = params["message"].as_str().unwrap_or_default().to_owned();
        // The params are this call's own: the schema is moved out, not copied.
        let schema = match params.get_mut("requestedSchema").map(Value::take) {
            Some(Value::Object(schema)) => schema,
            _ => Map::new(),
        };
        let asked = elicitor(message, schema);
        Box::pin(async move {
            Some(match asked.await {
                Elicited::Accepted(content) => json!({"action": "accept", "content": content}),
                Elicited::Declined => json!({"action": "decline"}),
                Elicited::Cancelled => json!({"action": "cancel"}),
                Elicited::Failed(reason) => json!({"action": "failed", "reason": reason}),
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{MemoryTaskStore, TaskState};

    fn record(id: &str) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            owner: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            ttl_ms: 60_000,
            poll_interval_ms: 1000,
            state: TaskState::Working,
            cancel_requested: false,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
        }
    }

    #[tokio::test]
    async fn two_questions_wait_in_the_store_and_each_gets_its_own_answer() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
        store.create(record("t")).await.unwrap();
        let questions = Questions::new(Arc::clone(&store), "t".to_owned());
        let inputs = questions.inputs();
        let elicit = |message: &str| {
            let params = json!({"mode": "form", "message": message, "requestedSchema": {}});
            tokio::spawn(inputs(None, InputKind::Elicitation, params))
        };
        let (first, second) = (elicit("Name?"), elicit("Sure?"));
        let asked = loop {
            let stored = store.get("t").await.unwrap().unwrap();
            if stored.input_requests.len() == 2 {
                break stored.input_requests;
            }
            tokio::task::yield_now().await;
        };
        let key_of = |message: &str| {
            (asked.iter())
                .find(|(_, request)| request["params"]["message"] == message)
                .map(|(key, request)| {
                    assert_eq!(request["method"], "elicitation/create");
                    key.clone()
                })
                .unwrap()
        };
        let (name, sure) = (key_of("Name?"), key_of("Sure?"));

        // The second answered first, alone: the first still waits.
        let answer = json!({"action": "decline"});
        store
            .respond("t", BTreeMap::from([(sure, answer)]))
            .await
            .unwrap();
        questions.deliver(&store.get("t").await.unwrap().unwrap());
        assert_eq!(second.await.unwrap(), Some(json!({"action": "decline"})));
        assert!(!first.is_finished());

        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        store
            .respond("t", BTreeMap::from([(name, answer)]))
            .await
            .unwrap();
        questions.deliver(&store.get("t").await.unwrap().unwrap());
        let answer = first.await.unwrap().unwrap();
        assert_eq!(answer["content"]["name"], "Ada");
    }

    #[tokio::test]
    async fn a_question_of_a_task_gone_fails_closed() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
        let questions = Questions::new(store, "gone".to_owned());
        let params = json!({"mode": "form", "message": "Sure?", "requestedSchema": {}});
        let answer = (questions.inputs())(None, InputKind::Confirmation, params).await;
        // No result of any kind: the confirmation fails.
        assert_eq!(answer.unwrap()["action"], "failed");
    }
}
