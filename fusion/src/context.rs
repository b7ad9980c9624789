//! The request context handed to actions: the request's `_meta`, its cancellation token, the
//! progress channel, the calling client's self-reported name and who the caller is.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Reports progress of a long call to the client (`notifications/progress`): progress so far,
/// the total when known, and a message.
pub type ProgressReporter = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// What an action may know about the request it serves. Take it as a parameter
/// (`ctx: fusion::RequestContext`) to read request metadata, notice cancellation or report
/// progress.
#[derive(Default)]
pub struct RequestContext {
    /// Created at the first use: most calls never look at it, and a token is an allocation.
    cancellation: OnceLock<CancellationToken>,
    /// Everything else, boxed when set: a context with nothing in it (a tool called directly)
    /// is small to move through a call, and cheap to drop.
    parts: Option<Box<Parts>>,
}

#[derive(Clone, Default)]
struct Parts {
    meta: Map<String, Value>,
    progress: Option<ProgressReporter>,
    client: Option<String>,
    caller: Option<Arc<str>>,
}

/// The `_meta` of a context that has none.
static NO_META: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

pub use tokio_util::sync::CancellationToken;

impl Clone for RequestContext {
    /// A clone shares the original's cancellation token (cancelling one cancels both), as
    /// it would if the token had been created eagerly.
    fn clone(&self) -> RequestContext {
        RequestContext {
            cancellation: OnceLock::from(self.cancellation().clone()),
            parts: self.parts.clone(),
        }
    }
}

impl RequestContext {
    /// A context with no metadata, a fresh cancellation token and no progress channel.
    pub fn new() -> RequestContext {
        RequestContext::default()
    }

    fn parts_mut(&mut self) -> &mut Parts {
        self.parts.get_or_insert_with(Box::default)
    }

    /// Sets the request's `_meta` object.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> RequestContext {
        self.parts_mut().meta = meta;
        self
    }

    /// Sets the token cancelled when the client cancels the request.
    pub fn with_cancellation(mut self, token: CancellationToken) -> RequestContext {
        self.cancellation = OnceLock::from(token);
        self
    }

    /// Sets where progress reports go.
    pub fn with_progress(mut self, reporter: ProgressReporter) -> RequestContext {
        self.parts_mut().progress = Some(reporter);
        self
    }

    /// Sets the calling client's self-reported name (`clientInfo.name`). Informational only:
    /// the client chooses it, so no guard keys on it.
    pub fn with_client(mut self, client: impl Into<String>) -> RequestContext {
        self.parts_mut().client = Some(client.into());
        self
    }

    /// Sets who is calling, as guards group calls: a server sets its transport session (one
    /// connection, or one Streamable HTTP session), never a value the request carries. Tests
    /// set it to play several callers.
    pub fn with_caller(mut self, caller: impl Into<Arc<str>>) -> RequestContext {
        self.parts_mut().caller = Some(caller.into());
        self
    }

    /// The request's `_meta` object (empty when the client sent none).
    pub fn meta(&self) -> &Map<String, Value> {
        self.parts.as_ref().map_or(&NO_META, |parts| &parts.meta)
    }

    /// The cancellation token of this request.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancellation.get_or_init(CancellationToken::new)
    }

    /// Whether the client has cancelled this request.
    pub fn is_cancelled(&self) -> bool {
        // A token nobody has seen yet cannot have been cancelled.
        self.cancellation
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// The calling client's self-reported name (`clientInfo.name`), when it sent one: for logs
    /// and messages, not for decisions (any client can claim any name).
    pub fn client(&self) -> Option<&str> {
        self.parts.as_ref()?.client.as_deref()
    }

    /// Who is calling, as guards group calls (see [`RequestContext::with_caller`]): the rate
    /// limit's default key. `None` when the transport gives no session (a stateless request);
    /// such calls share one bucket.
    pub fn caller(&self) -> Option<&str> {
        self.parts.as_ref()?.caller.as_deref()
    }

    /// Reports progress; does nothing when the client asked for no progress.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(report) = self
            .parts
            .as_ref()
            .and_then(|parts| parts.progress.as_ref())
        {
            report(progress, total, message.map(str::to_owned));
        }
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("meta", self.meta())
            .field("cancelled", &self.is_cancelled())
            .field(
                "progress",
                &self.parts.as_ref().is_some_and(|p| p.progress.is_some()),
            )
            .field("client", &self.client())
            .field("caller", &self.caller())
            .finish()
    }
}

#[cfg(test)]
mod context_tests {
    use super::*;

    #[test]
    fn an_empty_context_is_small_and_reads_as_empty() {
        // What a directly called tool moves through its call: the token cell and one pointer.
        assert!(std::mem::size_of::<RequestContext>() <= 24);
        let context = RequestContext::new();
        assert!(context.meta().is_empty());
        assert_eq!(context.client(), None);
        assert!(!context.is_cancelled());
        context.report_progress(0.5, None, None);
        assert!(format!("{context:?}").contains("meta: {}"));
    }

    #[test]
    fn what_is_set_is_read_back_and_cloned() {
        let reports = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&reports);
        let token = CancellationToken::new();
        let context = RequestContext::new()
            .with_meta(
                serde_json::json!({"traceId": "t-1"})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
            .with_client("inspector")
            .with_cancellation(token.clone())
            .with_progress(Arc::new(move |progress, total, message| {
                sink.lock().unwrap().push((progress, total, message));
            }));
        let copy = context.clone();
        for c in [&context, &copy] {
            assert_eq!(c.meta()["traceId"], "t-1");
            assert_eq!(c.client(), Some("inspector"));
        }
        copy.report_progress(1.0, Some(2.0), Some("half"));
        assert_eq!(
            *reports.lock().unwrap(),
            [(1.0, Some(2.0), Some("half".to_owned()))]
        );
        token.cancel();
        assert!(context.is_cancelled() && copy.is_cancelled());
    }
}
