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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot};

use crate::model::context::{BoxFuture, Elicited, Elicitor, TaskStart};
use crate::runtime::call::Admission;
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

    /// The elicitor of the task's action: each form an `elicitation/create` input request.
    pub(super) fn elicitor(self: &Arc<Self>) -> Elicitor {
        let this = Arc::clone(self);
        Arc::new(move |message: String, schema: Map<String, Value>| {
            let request = json!({
                "method": "elicitation/create",
                "params": {"mode": "form", "message": message, "requestedSchema": schema},
            });
            let asked = this.ask(request);
            Box::pin(async move {
                match asked.await {
                    Ok(answer) => super::input::elicited(&answer),
                    Err(why) => Elicited::Failed(why),
                }
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

/// The elicitor and the task start of a call whose task is deferred (`#[action(task(deferred))]`):
/// until the action calls [`RequestContext::start_task`](crate::RequestContext::start_task)
/// its questions go to `before` (the call's `input_required` round, or the client itself on a
/// revision with `initialize`; without either they fail), from then on to the task's
/// `questions`. Starting passes the call's `admission`: the server creates the task, answers
/// the client with it, and lets the action go on.
pub(super) fn deferred(
    before: Option<Elicitor>,
    questions: &Arc<Questions>,
    admission: Admission,
) -> (Elicitor, TaskStart) {
    let started = Arc::new(AtomicBool::new(false));
    let after = questions.elicitor();
    let is_started = Arc::clone(&started);
    let elicitor: Elicitor =
        Arc::new(
            move |message, schema| match (is_started.load(Ordering::Acquire), &before) {
                (true, _) => after(message, schema),
                (false, Some(before)) => before(message, schema),
                (false, None) => Box::pin(std::future::ready(Elicited::Failed(
                    "the client cannot be asked before the task starts".to_owned(),
                ))),
            },
        );
    let admission = Mutex::new(Some(admission));
    let start: TaskStart = Arc::new(move || {
        let admission = admission
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let started = Arc::clone(&started);
        Box::pin(async move {
            if let Some(admission) = admission {
                admission.pass().await;
                started.store(true, Ordering::Release);
            }
        })
    });
    (elicitor, start)
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
        let elicit = questions.elicitor();
        let first = tokio::spawn(elicit("Name?".to_owned(), Map::new()));
        let second = tokio::spawn(elicit("Sure?".to_owned(), Map::new()));
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
        assert_eq!(second.await.unwrap(), Elicited::Declined);
        assert!(!first.is_finished());

        let answer = json!({"action": "accept", "content": {"name": "Ada"}});
        store
            .respond("t", BTreeMap::from([(name, answer)]))
            .await
            .unwrap();
        questions.deliver(&store.get("t").await.unwrap().unwrap());
        let Elicited::Accepted(content) = first.await.unwrap() else {
            panic!("accepted")
        };
        assert_eq!(content["name"], "Ada");
    }

    #[tokio::test]
    async fn a_question_of_a_task_gone_fails_closed() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
        let questions = Questions::new(store, "gone".to_owned());
        let answer = (questions.elicitor())("Sure?".to_owned(), Map::new()).await;
        assert!(matches!(answer, Elicited::Failed(_)));
    }
}
