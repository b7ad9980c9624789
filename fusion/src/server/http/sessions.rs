//! The Streamable HTTP session store: rmcp's in-memory `LocalSessionManager` under a cap on
//! live sessions, and on those of each authenticated caller, each closed after an idle time.
//!
//! A session costs memory until it ends (a worker task, its channels, the server's copy of the
//! client's `initialize`), so an unbounded store lets anyone who can reach the server grow it
//! with `initialize` requests alone. At the cap a new session is refused, never an old one
//! evicted: eviction would break a working client's conversation mid-way (its in-flight calls,
//! its event stream) to make room for whoever sends `initialize` fastest, which under a flood is
//! the flood. The refusal is an HTTP 503 with `Retry-After` ([`super::gate`]); sessions free
//! their slot when they close (HTTP `DELETE`), end, or sit idle past the idle timeout.
//!
//! Both caps are checked and the slot taken in one step, under one lock
//! ([`CappedSessions::reserve`]), before rmcp starts opening the session: a check now and a
//! count of the session later (once rmcp answers with its id) would let parallel `initialize`s
//! all pass the check. The [`Reservation`] travels with the request ([`Opening`]) and becomes the
//! session's when rmcp opens it (bound to its caller from then on), and is freed if it never
//! does. A session rmcp opened holds its slot
//! until it ends, even when its `initialize` then fails or its client goes away: its worker
//! lives until the idle timeout, and counting it keeps a caller who disconnects mid-`initialize`
//! within its cap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::Stream;

use super::trim::Trimmer;
use crate::auth::Principal;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// The slot reserved for the session an `initialize` opens, carried in the request's
/// extensions (cloned with them) from the session gate to [`CappedSessions::initialize_session`],
/// which takes it: rmcp hands that call the `initialize` message, and the message the request's
/// parts. Dropped unused with every copy of the request (rmcp refused it before opening a
/// session, or the client went away), or taken and dropped by the gate once rmcp answered, the
/// reservation frees its slot.
#[derive(Clone, Debug)]
pub(super) struct Opening(Arc<Mutex<Option<Reservation>>>);

impl Opening {
    pub(super) fn new(reservation: Reservation) -> Opening {
        Opening(Arc::new(Mutex::new(Some(reservation))))
    }

    /// The reservation, if no one took it yet.
    pub(super) fn take(&self) -> Option<Reservation> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Whether it still holds its reservation.
    #[cfg(test)]
    pub(super) fn is_reserved(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The reservation an `initialize` message carries (in the HTTP request's parts rmcp puts
    /// on it), taken.
    fn of(message: &ClientJsonRpcMessage) -> Option<Reservation> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let parts = request.request.extensions().get::<http::request::Parts>()?;
        parts.extensions.get::<Opening>()?.take()
    }
}

/// Which cap refused a session; the text completes "Server busy: ".
#[derive(Debug, PartialEq, thiserror::Error)]
pub(super) enum AtCap {
    /// The server holds its maximum of live sessions.
    #[error("it holds its maximum of {0} sessions")]
    Server(usize),
    /// The caller holds its maximum of live sessions.
    #[error("this caller holds its maximum of {0} sessions")]
    Caller(usize),
}

/// The live sessions: the open ones with their owners, and those being opened.
#[derive(Debug, Default)]
struct Held {
    /// Each open session, with the authenticated caller that opened it when one did.
    open: HashMap<SessionId, Option<String>>,
    /// Reservations not yet turned into a session, nor dropped.
    opening: usize,
    /// Per authenticated caller, its open sessions and reservations.
    by_caller: HashMap<String, usize>,
}

impl Held {
    fn live(&self) -> usize {
        self.open.len() + self.opening
    }

    /// Gives back one of `owner`'s slots.
    fn release(&mut self, owner: Option<&str>) {
        let Some(owner) = owner else { return };
        if let Some(count) = self.by_caller.get_mut(owner) {
            *count -= 1;
            if *count == 0 {
                self.by_caller.remove(owner);
            }
        }
    }
}

/// A slot held for a session about to open: one of the server's, and one of its caller's when
/// an authenticated caller opens it. [`CappedSessions::create_session`] turns it into the
/// session's; dropped before that, it frees both.
#[derive(Debug)]
pub(super) struct Reservation {
    held: Arc<Mutex<Held>>,
    owner: Option<String>,
    /// Turned into a session: nothing to free on drop.
    opened: bool,
}

impl Reservation {
    /// Makes the slot session `id`'s, bound to the reservation's owner.
    fn open(mut self, id: &SessionId) {
        let mut held = lock(&self.held);
        held.opening -= 1;
        held.open.insert(id.clone(), self.owner.take());
        self.opened = true;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.opened {
            return;
        }
        let mut held = lock(&self.held);
        held.opening -= 1;
        held.release(self.owner.as_deref());
    }
}

/// The maps hold counts a panic cannot leave half-updated: each update is one statement.
fn lock(held: &Mutex<Held>) -> MutexGuard<'_, Held> {
    held.lock().unwrap_or_else(PoisonError::into_inner)
}

/// rmcp's `LocalSessionManager` with at most `max` live sessions, each closed after `idle`
/// without traffic.
#[derive(Debug)]
pub(super) struct CappedSessions {
    inner: LocalSessionManager,
    held: Arc<Mutex<Held>>,
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
            held: Arc::default(),
            max,
            trimmer: release_memory.then(Trimmer::default),
        }
    }

    /// Reserves a slot for a new session of `owner` (issuer and subject of an authenticated
    /// caller, or `None`), who may hold at most `per_caller`; both caps are checked and the slot
    /// taken under one lock, so parallel requests cannot all pass the check.
    ///
    /// # Errors
    /// The cap that is reached, the server's first.
    pub(super) fn reserve(
        &self,
        owner: Option<String>,
        per_caller: usize,
    ) -> Result<Reservation, AtCap> {
        let mut held = lock(&self.held);
        if held.live() >= self.max {
            return Err(AtCap::Server(self.max));
        }
        if let Some(owner) = &owner {
            let count = held.by_caller.entry(owner.clone()).or_default();
            if *count >= per_caller {
                return Err(AtCap::Caller(per_caller));
            }
            *count += 1;
        }
        held.opening += 1;
        Ok(Reservation {
            held: Arc::clone(&self.held),
            owner,
            opened: false,
        })
    }

    /// Whether a request of `caller` may use session `id`: a session opened by an
    /// authenticated caller serves that caller only; one opened without a principal serves
    /// any request.
    pub(super) fn serves(&self, id: &str, caller: Option<&Principal>) -> bool {
        match lock(&self.held).open.get(id) {
            None | Some(None) => true,
            Some(Some(owner)) => caller.is_some_and(|caller| caller.identity_key() == *owner),
        }
    }

    /// Whether session `id` is open: opened here and not yet closed (by `DELETE`, idle
    /// expiry or shutdown).
    pub(super) fn is_open(&self, id: &str) -> bool {
        lock(&self.held).open.contains_key(id)
    }

    /// The number of live sessions, those being opened included.
    #[cfg(test)]
    fn live(&self) -> usize {
        lock(&self.held).live()
    }
}

/// Why the store could not serve a session operation.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionError {
    /// rmcp opened a session for an `initialize` the session gate reserved no slot for.
    #[error("no session slot was reserved for this request")]
    Unreserved,
    /// rmcp's own error.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl SessionManager for CappedSessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), SessionError> {
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        // rmcp calls this in the same poll as `create_session` returns, so the session is
        // counted from its creation: no await lies between (a client going away cannot leave
        // it uncounted). Every `initialize` the gate lets through carries a reservation (the
        // gate reads the method as rmcp will); without one a session would escape both caps.
        let Some(reservation) = Opening::of(&message) else {
            self.inner.close_session(id).await?;
            return Err(SessionError::Unreserved);
        };
        reservation.open(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        let result = self.inner.close_session(id).await;
        // rmcp calls this when a client deletes the session and again when its worker ends
        // (idle, cancelled): the slot is freed once, whichever comes first.
        let remaining = {
            let mut held = lock(&self.held);
            held.open.remove(id).map(|owner| {
                held.release(owner.as_deref());
                held.open.len()
            })
        };
        if let Some(remaining) = remaining
            && let Some(trimmer) = &self.trimmer
        {
            trimmer.session_closed(remaining);
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

    fn store(max: usize) -> CappedSessions {
        CappedSessions::new(max, Duration::from_secs(60), false)
    }

    fn caller(subject: &str) -> Option<String> {
        Some(Principal::new(subject).identity_key())
    }

    #[test]
    fn a_caller_reserves_up_to_its_cap_and_everyone_up_to_the_servers() {
        let sessions = store(3);
        let first = sessions.reserve(caller("alice"), 2).unwrap();
        let _second = sessions.reserve(caller("alice"), 2).unwrap();
        assert_eq!(
            sessions.reserve(caller("alice"), 2).unwrap_err(),
            AtCap::Caller(2)
        );
        let _anonymous = sessions.reserve(None, 2).unwrap();
        assert_eq!(
            sessions.reserve(caller("bob"), 2).unwrap_err(),
            AtCap::Server(3)
        );
        drop(first);
        assert_eq!(sessions.live(), 2);
        sessions.reserve(caller("alice"), 2).unwrap();
    }

    /// An `initialize` as rmcp hands it to the store: carrying the request's parts, and in
    /// them the gate's `opening` when there is one.
    fn initialize(opening: Option<&Opening>) -> ClientJsonRpcMessage {
        let mut message: ClientJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }))
        .unwrap();
        let (mut parts, ()) = http::Request::new(()).into_parts();
        if let Some(opening) = opening {
            parts.extensions.insert(opening.clone());
        }
        if let ClientJsonRpcMessage::Request(request) = &mut message {
            request.request.extensions_mut().insert(parts);
        }
        message
    }

    /// Initializes session `id` with `message`, as far as the store goes without a server.
    async fn initialize_session(
        sessions: &CappedSessions,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) {
        let initialized = sessions.initialize_session(id, message);
        let _ = tokio::time::timeout(Duration::from_millis(10), initialized).await;
    }

    #[tokio::test]
    async fn a_reservation_dropped_with_its_request_frees_its_slots() {
        // The client went away while its `initialize` was handled, before rmcp opened a
        // session: hyper drops the request, and the reservation with it.
        let sessions = store(1);
        let opening = Opening::new(sessions.reserve(caller("alice"), 1).unwrap());
        let message = initialize(Some(&opening));
        drop(opening);
        assert_eq!(sessions.live(), 1);
        drop(message);
        assert_eq!(sessions.live(), 0);
        sessions.reserve(caller("alice"), 1).unwrap();
    }

    #[tokio::test]
    async fn a_reservation_becomes_its_session_until_the_session_closes() {
        let sessions = store(1);
        let opening = Opening::new(sessions.reserve(caller("alice"), 1).unwrap());
        let (id, _transport) = sessions.create_session().await.unwrap();
        initialize_session(&sessions, &id, initialize(Some(&opening))).await;
        assert!(!opening.is_reserved());
        assert!(sessions.is_open(&id));
        assert!(sessions.serves(&id, Some(&Principal::new("alice"))));
        assert!(!sessions.serves(&id, Some(&Principal::new("bob"))));
        assert_eq!(
            sessions.reserve(caller("alice"), 1).unwrap_err(),
            AtCap::Server(1)
        );

        // rmcp closes a session twice (the `DELETE`, then its worker's end): freed once.
        sessions.close_session(&id).await.unwrap();
        sessions.close_session(&id).await.unwrap();
        assert_eq!(sessions.live(), 0);
        sessions.reserve(caller("alice"), 1).unwrap();
    }

    #[tokio::test]
    async fn no_session_opens_without_a_reservation() {
        let sessions = store(1);
        let (id, _transport) = sessions.create_session().await.unwrap();
        let initialized = sessions.initialize_session(&id, initialize(None)).await;
        assert!(matches!(initialized, Err(SessionError::Unreserved)));
        assert!(!sessions.inner.has_session(&id).await.unwrap());
        assert_eq!(sessions.live(), 0);
    }
}
