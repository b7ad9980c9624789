//! List-change notifications: [`ListChanges`], the handle an application tells that its tools,
//! prompts or resources changed, and their delivery to every client that can hear them: the
//! sessions of the 2025 revisions (a notification on the session, which Streamable HTTP sends on
//! its standalone stream) and the `subscriptions/listen` streams of MCP 2026-07-28 (SEP-2575),
//! whose filter decides what each gets.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{
    ErrorData, PromptListChangedNotification, ResourceListChangedNotification, ServerNotification,
    SubscriptionFilter, ToolListChangedNotification,
};
use rmcp::service::{Peer, RoleServer, SubscriptionContext, SubscriptionSendError};
use tokio::sync::broadcast::{self, error::RecvError};

use super::Server;

/// The changes a listen stream may fall behind by before it is told every list changed.
const BACKLOG: usize = 16;

/// A list whose change clients are told of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Tools,
    Prompts,
    Resources,
}

impl List {
    const ALL: [List; 3] = [List::Tools, List::Prompts, List::Resources];

    /// Its bit in a [`Session`]'s pending set.
    fn bit(self) -> u8 {
        1 << self as u8
    }

    /// Its `notifications/…/list_changed`.
    fn notification(self) -> ServerNotification {
        match self {
            List::Tools => ServerNotification::ToolListChangedNotification(
                ToolListChangedNotification::default(),
            ),
            List::Prompts => ServerNotification::PromptListChangedNotification(
                PromptListChangedNotification::default(),
            ),
            List::Resources => ServerNotification::ResourceListChangedNotification(
                ResourceListChangedNotification::default(),
            ),
        }
    }
}

/// Where the changes go: the listen streams (each holds a receiver) and the 2025 sessions.
struct Hub {
    streams: broadcast::Sender<List>,
    /// Each 2025 session that shook hands; a closed one is dropped at the next handshake or
    /// change, so the list holds the open sessions and at most one more.
    sessions: Mutex<Vec<Session>>,
}

/// A 2025 session told of changes: its client, and the lists changed since it was last told.
///
/// Each session has at most one task sending to it, and changes told while it sends are
/// merged (a client lists once whatever the number of changes): a client that stops reading
/// holds back its own notifications, never another session's, and costs no more than one task
/// however many changes follow.
#[derive(Clone)]
struct Session {
    peer: Peer<RoleServer>,
    /// The bits of the lists to tell of, and [`SENDING`] while a task sends.
    pending: Arc<AtomicU8>,
}

/// The bit of [`Session::pending`] set while a task sends to the session.
const SENDING: u8 = 1 << 7;

impl Session {
    /// Marks `list` changed, and starts the session's sending task unless one runs.
    fn tell(&self, list: List, runtime: &tokio::runtime::Handle) {
        let before = self
            .pending
            .fetch_or(list.bit() | SENDING, Ordering::AcqRel);
        if before & SENDING == 0 {
            runtime.spawn(self.clone().send());
        }
    }

    /// Sends the pending changes until none is left; a change told meanwhile is sent too.
    async fn send(self) {
        loop {
            let lists = self.pending.fetch_and(SENDING, Ordering::AcqRel) & !SENDING;
            if lists == 0 {
                match (self.pending).compare_exchange(
                    SENDING,
                    0,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return,
                    Err(_) => continue, // told of a change after all
                }
            }
            for list in List::ALL.into_iter().filter(|list| lists & list.bit() != 0) {
                if let Err(err) = self.peer.send_notification(list.notification()).await {
                    tracing::debug!(target: "fusion::server", %err, "list change not sent");
                    // A closed session is forgotten at the next change; one still open gets
                    // a task again then.
                    self.pending.store(0, Ordering::Release);
                    return;
                }
            }
        }
    }
}

/// Tells the clients of a [`Server`] that its tools, prompts or resources changed, so that they
/// list them again: `notifications/tools/list_changed`, `…/prompts/list_changed`,
/// `…/resources/list_changed` (MCP specification, tools, prompts and resources, "List Changed
/// Notification"). From [`Server::list_changes`]; cheap to clone, every clone tells the same
/// clients (those of every clone of the server).
///
/// A client of a 2025 revision gets the notification on its session (over Streamable HTTP, on
/// the session's standalone GET stream). A client of MCP 2026-07-28 gets it on each
/// `subscriptions/listen` stream it opened whose filter asks for it (`toolsListChanged`,
/// `promptsListChanged`, `resourcesListChanged`), tagged with the stream's
/// `io.modelcontextprotocol/subscriptionId` (SEP-2575). A stateless request (no session, no
/// listen stream) gets nothing: it lists again when it needs to. A client that stops reading
/// holds back its own notifications only: the changes told meanwhile reach it as one per list
/// once it reads again, and every other client as they come.
///
/// The server advertises `tools.listChanged`. Prompts and resources are your
/// [`Server::handler`]'s: advertise `prompts.listChanged` or `resources.listChanged` in its
/// capabilities, or listen streams refuse those filters. Call the methods from within the Tokio
/// runtime serving the server (a tool's action is); elsewhere the 2025 sessions are not told.
#[derive(Clone)]
pub struct ListChanges(Arc<Hub>);

impl ListChanges {
    /// A server's: no stream open, no session yet.
    pub(super) fn new() -> Self {
        let (streams, _) = broadcast::channel(BACKLOG);
        ListChanges(Arc::new(Hub {
            streams,
            sessions: Mutex::default(),
        }))
    }
}

impl fmt::Debug for ListChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListChanges")
            .field("listening", &self.listening())
            .finish_non_exhaustive()
    }
}

impl ListChanges {
    /// The tool list changed (tools registered or withdrawn, or what a caller may see).
    pub fn tools(&self) {
        self.changed(List::Tools);
    }

    /// The handler's prompt list changed.
    pub fn prompts(&self) {
        self.changed(List::Prompts);
    }

    /// The handler's resource list changed.
    pub fn resources(&self) {
        self.changed(List::Resources);
    }

    /// The `subscriptions/listen` streams open now. A stream closes when its client cancels it
    /// or goes away (over Streamable HTTP, when the response stream is dropped).
    pub fn listening(&self) -> usize {
        self.0.streams.receiver_count()
    }

    fn changed(&self, list: List) {
        // No receiver: no stream is open, nothing to do.
        let _ = self.0.streams.send(list);
        let sessions = self.open_sessions().clone();
        if sessions.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!(target: "fusion::server", ?list, "list change outside a Tokio runtime: sessions not told");
            return;
        };
        for session in sessions {
            session.tell(list, &runtime);
        }
    }

    /// The open 2025 sessions, the closed ones forgotten.
    fn open_sessions(&self) -> MutexGuard<'_, Vec<Session>> {
        let mut sessions = (self.0.sessions.lock()).unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|session| !session.peer.is_transport_closed());
        sessions
    }

    /// Remembers the client of a 2025 session that just shook hands.
    pub(super) fn add_session(&self, peer: Peer<RoleServer>) {
        self.open_sessions().push(Session {
            peer,
            pending: Arc::default(),
        });
    }
}

impl Server {
    /// The handle that tells this server's clients its tools, prompts or resources changed;
    /// see [`ListChanges`]. Take it before serving (a tool may hold it), from any clone.
    ///
    /// ```
    /// let server = fusion::server::Server::new("catalog", "1.0.0");
    /// let changes = server.list_changes();
    /// // … after registering or withdrawing what some callers see:
    /// changes.tools();
    /// assert_eq!(changes.listening(), 0);
    /// ```
    pub fn list_changes(&self) -> ListChanges {
        self.inner.changes.clone()
    }

    /// The filter a `subscriptions/listen` stream gets: every list change (rmcp keeps those the
    /// client asked for and the capabilities advertise), and what the handler accepts besides
    /// (resource updates).
    pub(super) fn listen_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted =
            (self.delegate().accepted_subscription_filter(requested)).unwrap_or_default();
        accepted.tools_list_changed = Some(true);
        accepted.prompts_list_changed = Some(true);
        accepted.resources_list_changed = Some(true);
        accepted
    }

    /// Serves one `subscriptions/listen` stream until the client cancels it or goes away: the
    /// changes told to [`ListChanges`] its filter accepts, and whatever the handler's own
    /// `listen` sends on it.
    pub(super) async fn listen_stream(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let mut changes = self.inner.changes.0.streams.subscribe();
        let forward = async move {
            loop {
                let lists = match changes.recv().await {
                    Ok(list) => vec![list],
                    // Fell behind: which lists changed is lost, so every one did.
                    Err(RecvError::Lagged(_)) => List::ALL.to_vec(),
                    Err(RecvError::Closed) => break,
                };
                for list in lists {
                    match sink.send(list.notification()).await {
                        Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => {}
                        Err(_) => return std::future::pending().await,
                    }
                }
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            result = self.delegate().listen(context) => result,
            () = forward => unreachable!("forwarding never ends"),
        }
    }
}
