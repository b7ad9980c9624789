//! The Streamable HTTP session store: rmcp's in-memory `LocalSessionManager` under a cap on
//! live sessions, each closed after an idle time.
//!
//! A session costs memory until it ends (a worker task, its channels, the server's copy of the
//! client's `initialize`), so an unbounded store lets anyone who can reach the server grow it
//! with `initialize` requests alone. At the cap a new session is refused, never an old one
//! evicted: eviction would break a working client's conversation mid-way (its in-flight calls,
//! its event stream) to make room for whoever sends `initialize` fastest, which under a flood is
//! the flood. The refusal is an HTTP 503 with `Retry-After` ([`super::front`]); sessions free
//! their slot when they close (HTTP `DELETE`), end, or sit idle past the idle timeout.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::Stream;

use super::trim::Trimmer;
use crate::auth::Principal;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

tokio::task_local! {
    /// Set while the front serves one request: whether the store refused a session for it, so
    /// the front can answer 503 where rmcp would answer 500.
    static REFUSED: Cell<bool>;
}

/// Runs `request` (the handling of one HTTP request) and reports whether the store refused to
/// open a session for it because the cap was reached.
pub(super) async fn watch_refusal<F: Future>(request: F) -> (F::Output, bool) {
    REFUSED
        .scope(Cell::new(false), async move {
            let output = request.await;
            (output, REFUSED.with(Cell::get))
        })
        .await
}

/// Who a session belongs to: the issuer and subject of the principal that opened it
/// ([`Principal::identity_key`]).
pub(super) fn owner_of(principal: &Principal) -> String {
    principal.identity_key()
}

/// rmcp's `LocalSessionManager` with at most `max` live sessions, each closed after `idle`
/// without traffic.
#[derive(Debug)]
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    /// The slot each live session holds; dropped (freed) when the session closes.
    held: Mutex<HashMap<SessionId, OwnedSemaphorePermit>>,
    /// The authenticated caller each session was opened by, when it was opened by one.
    owners: Mutex<HashMap<SessionId, String>>,
    max: usize,
    /// Gives the memory of closed sessions back to the system (see [`super::trim`]), unless
    /// turned off.
    trimmer: Option<Trimmer>,
}

impl CappedSessions {
    pub(super) fn new(max: usize, idle: Duration, release_memory: bool) -> CappedSessions {
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        CappedSessions {
            inner,
            slots: Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))),
            held: Mutex::new(HashMap::new()),
            owners: Mutex::new(HashMap::new()),
            max: max.min(Semaphore::MAX_PERMITS),
            trimmer: release_memory.then(Trimmer::default),
        }
    }

    /// Binds session `id` to the caller that opened it (`owner`: issuer and subject).
    pub(super) fn bind(&self, id: &str, owner: String) {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.insert(SessionId::from(id), owner);
    }

    /// How many live sessions `owner` opened.
    pub(super) fn held_by(&self, owner: &str) -> usize {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        owners.values().filter(|held| *held == owner).count()
    }

    /// Whether a request of `caller` may use session `id`: a session opened by an
    /// authenticated caller serves that caller only; one opened without a principal serves
    /// any request.
    pub(super) fn serves(&self, id: &str, caller: Option<&Principal>) -> bool {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        match owners.get(id) {
            None => true,
            Some(owner) => caller.is_some_and(|caller| owner_of(caller) == *owner),
        }
    }

    /// Whether session `id` is open: opened here and not yet closed (by `DELETE`, idle
    /// expiry or shutdown).
    pub(super) fn is_open(&self, id: &str) -> bool {
        self.held().contains_key(id)
    }

    /// Whether every session slot is taken.
    pub(super) fn is_full(&self) -> bool {
        self.slots.available_permits() == 0
    }

    /// The number of live sessions.
    pub(super) fn live(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, OwnedSemaphorePermit>> {
        // The map holds no invariant a panic could break half-way.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why the store could not serve a session operation.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionError {
    /// The cap is reached: no session opened.
    #[error("the server holds its maximum of {0} sessions")]
    Full(usize),
    /// rmcp's own error.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl SessionManager for CappedSessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), SessionError> {
        let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() else {
            // Outside a front (never, today) there is nobody to tell; the error still refuses.
            let _ = REFUSED.try_with(|refused| refused.set(true));
            return Err(SessionError::Full(self.max));
        };
        let (id, transport) = self.inner.create_session().await?;
        self.held().insert(id.clone(), slot);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        let result = self.inner.close_session(id).await;
        // rmcp calls this when a client deletes the session and again when its worker ends
        // (idle, cancelled): the slot is freed once, whichever comes first.
        let freed = self.held().remove(id);
        (self.owners.lock().unwrap_or_else(PoisonError::into_inner)).remove(id);
        if let Some(slot) = freed {
            drop(slot);
            if let Some(trimmer) = &self.trimmer {
                trimmer.session_closed(self.live());
            }
        }
        Ok(result?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionError> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caller(issuer: &str, subject: &str) -> Principal {
        let claims = json!({"iss": issuer, "sub": subject});
        Principal::new(subject).with_claims(claims.as_object().unwrap().clone())
    }

    #[test]
    fn owners_differ_whenever_issuer_or_subject_differ() {
        assert_ne!(owner_of(&caller("a b", "c")), owner_of(&caller("a", "b c")));
        assert_ne!(owner_of(&caller("a", "\"b")), owner_of(&caller("a\"", "b")));
        assert_ne!(owner_of(&caller("", "a")), owner_of(&Principal::new("a")));
        assert_eq!(owner_of(&caller("a", "b")), owner_of(&caller("a", "b")));
    }
}
