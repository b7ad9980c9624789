//! The in-memory task store: one map behind a lock, for one server process.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{StoreError, TaskRecord, TaskStore, working_expiry_ms};
use crate::model::context::BoxFuture;

/// Tasks kept in this process's memory, at most [`MemoryTaskStore::with_capacity`] of them
/// (10,000 by default): a server at capacity refuses new tasks with `SERVER_BUSY` until
/// some expire. A restart loses them; replicas do not share them (use
/// [`RedisTaskStore`](super::RedisTaskStore) for that).
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, Entry>>,
    capacity: usize,
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    expires: Instant,
}

impl MemoryTaskStore {
    /// A store holding at most `capacity` tasks, running or settled.
    pub fn with_capacity(capacity: usize) -> MemoryTaskStore {
        MemoryTaskStore {
            tasks: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves the map whole: every write is one insert.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `f` applied to the task `id` if it is working and has not expired; `None` otherwise.
    fn with_working<R>(&self, id: &str, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        let mut tasks = self.lock();
        let entry = tasks.get_mut(id)?;
        (!entry.record.state.is_settled() && entry.expires > Instant::now()).then(|| f(entry))
    }
}

impl Default for MemoryTaskStore {
    fn default() -> MemoryTaskStore {
        MemoryTaskStore::with_capacity(10_000)
    }
}

/// The instant `ttl_ms` from now.
fn expiry(ttl_ms: u64) -> Instant {
    let now = Instant::now();
    now.checked_add(Duration::from_millis(ttl_ms))
        .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut tasks = self.lock();
        if tasks.len() >= self.capacity {
            let now = Instant::now();
            tasks.retain(|_, entry| entry.expires > now);
        }
        let outcome = if tasks.len() >= self.capacity {
            Err(StoreError::Full(self.capacity))
        } else {
            let expires = expiry(working_expiry_ms(&record));
            tasks.insert(record.id.clone(), Entry { record, expires });
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let mut tasks = self.lock();
        let found = match tasks.get(id) {
            Some(entry) if entry.expires <= Instant::now() => {
                tasks.remove(id);
                None
            }
            Some(entry) => Some(entry.record.clone()),
            None => None,
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn settle(&self, record: TaskRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        let settled = self.with_working(&record.id.clone(), |entry| {
            entry.expires = expiry(record.ttl_ms);
            entry.record = record;
        });
        Box::pin(std::future::ready(Ok(settled.is_some())))
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with_working(id, |entry| entry.record.cancel_requested = true);
        Box::pin(std::future::ready(Ok(())))
    }

    fn ask<'a>(
        &'a self,
        id: &'a str,
        requests: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let asked = self.with_working(id, |entry| entry.record.input_requests.extend(requests));
        Box::pin(std::future::ready(Ok(asked.is_some())))
    }

    fn respond<'a>(
        &'a self,
        id: &'a str,
        responses: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.with_working(id, |entry| {
            let record = &mut entry.record;
            for (key, response) in responses {
                if record.input_requests.remove(&key).is_some() {
                    record.input_responses.insert(key, response);
                }
            }
        });
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::TaskState;

    fn record(id: &str, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            owner: "alice".to_owned(),
            created_at: "2026-12-04T00:00:00Z".to_owned(),
            updated_at: "2026-12-04T00:00:00Z".to_owned(),
            ttl_ms,
            poll_interval_ms: 1000,
            state: TaskState::Working,
            cancel_requested: false,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
        }
    }

    /// The record of the task `id`, which `store` must hold.
    async fn stored(store: &MemoryTaskStore, id: &str) -> TaskRecord {
        store.get(id).await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn questions_are_answered_by_key_until_the_task_settles() {
        let store = MemoryTaskStore::default();
        store.create(record("a", 60_000)).await.unwrap();
        let asked = BTreeMap::from([
            ("q0".to_owned(), Value::from("first")),
            ("q1".to_owned(), Value::from("second")),
        ]);
        assert!(store.ask("a", asked).await.unwrap());
        // One answered, one unknown key ignored: the other question stays outstanding.
        let answers = BTreeMap::from([
            ("q0".to_owned(), Value::from(true)),
            ("nope".to_owned(), Value::from(false)),
        ]);
        store.respond("a", answers).await.unwrap();
        let task = stored(&store, "a").await;
        assert_eq!(task.input_requests.keys().collect::<Vec<_>>(), ["q1"]);
        assert_eq!(
            task.input_responses,
            BTreeMap::from([("q0".to_owned(), Value::from(true))])
        );
        // An answer to a question answered already changes nothing.
        store
            .respond("a", BTreeMap::from([("q0".to_owned(), Value::from(false))]))
            .await
            .unwrap();
        assert_eq!(stored(&store, "a").await.input_responses["q0"], true);

        let mut done = record("a", 60_000);
        done.state = TaskState::Cancelled;
        assert!(store.settle(done).await.unwrap());
        assert!(!store.ask("a", BTreeMap::new()).await.unwrap(), "settled");
        assert!(stored(&store, "a").await.input_requests.is_empty());
        assert!(!store.ask("missing", BTreeMap::new()).await.unwrap());
    }

    #[tokio::test]
    async fn the_first_settlement_wins_and_cancel_marks_only_working_tasks() {
        let store = MemoryTaskStore::default();
        store.create(record("a", 60_000)).await.unwrap();
        store.request_cancel("a").await.unwrap();
        assert!(stored(&store, "a").await.cancel_requested);

        let mut done = record("a", 60_000);
        done.state = TaskState::Cancelled;
        assert!(store.settle(done.clone()).await.unwrap());
        done.state = TaskState::Completed {
            result: Default::default(),
        };
        assert!(
            !store.settle(done).await.unwrap(),
            "a settled task stays settled"
        );
        assert_eq!(stored(&store, "a").await.state, TaskState::Cancelled);

        assert!(store.get("missing").await.unwrap().is_none());
        assert!(!store.settle(record("missing", 1)).await.unwrap());
    }

    #[tokio::test]
    async fn a_full_store_refuses_until_tasks_expire() {
        let store = MemoryTaskStore::with_capacity(2);
        store.create(record("a", 1)).await.unwrap();
        store.create(record("b", 60_000)).await.unwrap();
        std::thread::sleep(Duration::from_millis(5));
        // "a" has expired: its room goes to "d".
        store.create(record("d", 60_000)).await.unwrap();
        assert!(store.get("a").await.unwrap().is_none());
        assert!(store.get("d").await.unwrap().is_some());
        assert!(matches!(
            store.create(record("e", 60_000)).await,
            Err(StoreError::Full(2))
        ));
    }
}
