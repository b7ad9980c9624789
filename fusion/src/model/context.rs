//! The request context handed to actions: the request's `_meta`, its cancellation token, the
//! progress and log channels, the calling client's self-reported name, who the caller is (the
//! transport session, the authenticated principal) and, over Streamable HTTP, the HTTP request.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::auth::Principal;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Reports progress of a long call to the client (`notifications/progress`): progress so far,
/// the total when known, and a message.
pub type ProgressReporter = Arc<dyn Fn(f64, Option<f64>, Option<String>) + Send + Sync>;

/// Sends a log message to the client (`notifications/message`): its level, the logger's name
/// when set, and the data (any JSON).
pub type LogSink = Arc<dyn Fn(LogLevel, Option<String>, Value) + Send + Sync>;

/// Asks the user, through the client, for the values of a flat object schema (MCP
/// elicitation, form mode): the message to show and the requested schema; answers what the user
/// did. The server sets one when the client declared the `elicitation` capability; see
/// [`RequestContext::confirm`] and [`RequestContext::elicit`].
pub type Elicitor =
    Arc<dyn Fn(String, Map<String, Value>) -> BoxFuture<'static, Elicited> + Send + Sync>;

/// Asks the client's model for a message (MCP `sampling/createMessage`): answers the
/// client's result, or why the request failed (an error from the client, among them a user
/// who rejected the request). The server sets one when the client declared the `sampling`
/// capability; see [`RequestContext::sample`].
#[allow(
    deprecated,
    reason = "sampling is deprecated from the 2026-07-28 revision on; 2025 clients still use it"
)]
pub type Sampler = Arc<
    dyn Fn(
            rmcp::model::CreateMessageRequestParams,
        ) -> BoxFuture<'static, Result<rmcp::model::CreateMessageResult, String>>
        + Send
        + Sync,
>;

/// Starts the task of a call whose action's task is deferred
/// ([`RequestContext::start_task`]): resolves once the task exists and the call goes on as it.
pub(crate) type TaskStart = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// Asks the client for its roots (MCP `roots/list`): answers the client's roots, or why the
/// request failed. The server sets one when the client declared the `roots` capability; see
/// [`RequestContext::list_roots`].
#[allow(
    deprecated,
    reason = "roots are deprecated from the 2026-07-28 revision on; clients still offer them"
)]
pub type RootsLister =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<rmcp::model::Root>, String>> + Send + Sync>;

/// The kind of an input request (MCP 2026-07-28, multi round-trip requests, SEP-2322): the
/// method, and the client capability that answers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// `elicitation/create` (form mode): capability `elicitation`.
    Elicitation,
    /// `elicitation/create` (form mode) of a confirmation: capability `elicitation`; its answer
    /// counts only from the sealed state of the round that asked it.
    Confirmation,
    /// `sampling/createMessage`: capability `sampling`.
    Sampling,
    /// `roots/list`: capability `roots`.
    Roots,
}

/// Puts a question to a client of the stateless revision as an input request of the call's
/// `input_required` answer: the key to send it under (`None`: the next automatic key), its kind
/// and its params. Answers the client's result (JSON, checked against the kind), or `None` for
/// an elicitation the client declared no capability for; a question it has no answer to yet
/// never resolves (the call is answered with it).
pub(crate) type Inputs = Arc<
    dyn Fn(Option<String>, InputKind, Value) -> BoxFuture<'static, Option<Value>> + Send + Sync,
>;

/// What the user did with an elicitation (MCP specification 2025-06-18, client features,
/// "Elicitation": the `action` of the result).
#[derive(Clone, Debug, PartialEq)]
pub enum Elicited {
    /// The user submitted the form: its content.
    Accepted(Map<String, Value>),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the request without choosing.
    Cancelled,
    /// The request could not be made (the client lost the connection, or refused it): why.
    Failed(String),
}

/// The severity of a log message to the client: the syslog levels of RFC 5424, as MCP names them
/// (MCP specification, server utilities, "Logging"), least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation (`info`).
    Info,
    /// Normal but significant events.
    Notice,
    /// Something to look at.
    Warning,
    /// An operation failed.
    Error,
    /// A component failed.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level as MCP spells it on the wire: `debug`, `info`, `notice`, `warning`, `error`,
    /// `critical`, `alert`, `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

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
    log: Option<LogSink>,
    elicitor: Option<Elicitor>,
    sampler: Option<Sampler>,
    task_start: Option<TaskStart>,
    roots: Option<RootsLister>,
    inputs: Option<Inputs>,
    client: Option<String>,
    caller: Option<Arc<str>>,
    principal: Option<Principal>,
    /// The HTTP request the call came in (its body consumed), over Streamable HTTP.
    #[cfg(feature = "http")]
    http: Option<Arc<http::request::Parts>>,
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

    fn parts(&self) -> Option<&Parts> {
        self.parts.as_deref()
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

    /// Sets where log messages go ([`RequestContext::log`]).
    pub fn with_log(mut self, sink: LogSink) -> RequestContext {
        self.parts_mut().log = Some(sink);
        self
    }

    /// Sets how the user is asked ([`RequestContext::confirm`], [`RequestContext::elicit`]):
    /// a server sets it when the client can elicit; a test sets one that answers as a user
    /// would.
    pub fn with_elicitor(mut self, elicitor: Elicitor) -> RequestContext {
        self.parts_mut().elicitor = Some(elicitor);
        self
    }

    /// How the user can be asked, when the client can elicit.
    pub(crate) fn elicitor(&self) -> Option<&Elicitor> {
        self.parts()?.elicitor.as_ref()
    }

    /// Sets how the client's model is asked ([`RequestContext::sample`]): a server sets it
    /// when the client can sample; a test sets one that answers as a model would.
    pub fn with_sampler(mut self, sampler: Sampler) -> RequestContext {
        self.parts_mut().sampler = Some(sampler);
        self
    }

    /// How the client's model can be asked, when the client can sample.
    pub(crate) fn sampler(&self) -> Option<&Sampler> {
        self.parts()?.sampler.as_ref()
    }

    /// Sets how the call's deferred task starts ([`RequestContext::start_task`]).
    pub(crate) fn with_task_start(mut self, start: TaskStart) -> RequestContext {
        self.parts_mut().task_start = Some(start);
        self
    }

    /// For an action declared `#[action(task(deferred))]` (or `task(required, deferred)`)
    /// called by a client that declares the MCP Tasks extension: the call becomes a task here.
    /// The client is answered with the task (`resultType: "task"`) and the action goes on in
    /// the background; its questions from here on are the task's (`input_required`, answered
    /// with `tasks/update`), those before were asked as a direct call's (SEP-2663: input
    /// gathered before the task is created). Does nothing for any other call: one running as
    /// a task from the start, or a direct call.
    ///
    /// ```
    /// use fusion::RequestContext;
    /// use fusion::elicit::Unconfirmed;
    ///
    /// pub struct Deploys;
    ///
    /// #[fusion::tool]
    /// impl Deploys {
    ///     /// Deploys the release once the user confirms, then waits for it to roll out.
    ///     #[action(task(required, deferred))]
    ///     pub async fn deploy(&self, ctx: RequestContext) -> Result<String, Unconfirmed> {
    ///         ctx.confirm("Deploy v2 to production?").await?;
    ///         ctx.start_task().await;
    ///         // … the long roll-out, polled by the client as a task …
    ///         Ok("v2 is live.".to_owned())
    ///     }
    /// }
    /// ```
    pub async fn start_task(&self) {
        let start = self.parts().and_then(|parts| parts.task_start.clone());
        if let Some(start) = start {
            start().await;
        }
    }

    /// Sets how the client's roots are listed ([`RequestContext::list_roots`]): a server sets
    /// it when the client declared `roots`; a test sets one that answers as a client would.
    pub fn with_roots_lister(mut self, lister: RootsLister) -> RequestContext {
        self.parts_mut().roots = Some(lister);
        self
    }

    /// How the client's roots can be listed, when the client declared `roots`.
    pub(crate) fn roots_lister(&self) -> Option<&RootsLister> {
        self.parts()?.roots.as_ref()
    }

    /// Sets the round that puts this call's questions to a client of the stateless revision:
    /// it takes the place of the elicitor, the sampler and the roots lister.
    pub(crate) fn with_inputs(mut self, inputs: Inputs) -> RequestContext {
        self.parts_mut().inputs = Some(inputs);
        self
    }

    /// The round of the call, for a client of the stateless revision.
    pub(crate) fn inputs(&self) -> Option<&Inputs> {
        self.parts()?.inputs.as_ref()
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

    /// Sets the authenticated caller, in place of the one the HTTP request carries (see
    /// [`RequestContext::principal`]): for tests and in-process callers, or a transport that
    /// authenticates callers its own way.
    pub fn with_principal(mut self, principal: Principal) -> RequestContext {
        self.parts_mut().principal = Some(principal);
        self
    }

    /// Sets the HTTP request the call came in (method, URI, headers, extensions; no body). A
    /// server serving Streamable HTTP sets it from what rmcp hands over.
    #[cfg(feature = "http")]
    pub fn with_http_parts(mut self, parts: Arc<http::request::Parts>) -> RequestContext {
        self.parts_mut().http = Some(parts);
        self
    }

    /// The request's `_meta` object (empty when the client sent none).
    pub fn meta(&self) -> &Map<String, Value> {
        self.parts().map_or(&NO_META, |parts| &parts.meta)
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
        self.parts()?.client.as_deref()
    }

    /// Who is calling, as guards group calls (see [`RequestContext::with_caller`]): the
    /// transport session. The rate limit's default key when the call has neither a principal
    /// nor a client address (stdio, in-process; see
    /// [`RateKey::Caller`](crate::guard::RateKey::Caller)). `None` when the transport gives no
    /// session (a stateless request).
    pub fn caller(&self) -> Option<&str> {
        self.parts()?.caller.as_deref()
    }

    /// The authenticated caller: the one set with [`RequestContext::with_principal`], else the
    /// [`Principal`] extension of the HTTP request (put there by an auth layer such as
    /// `fusion::auth::BearerAuth`, feature `auth`), else over stdio and in-process the
    /// server's [`Server::local_principal`](crate::server::Server::local_principal). `None`
    /// when the call is not authenticated (stdio or in-process without a local principal, HTTP
    /// without an auth layer). The scope checks of the guards read it, and the rate limits key
    /// on its subject.
    pub fn principal(&self) -> Option<&Principal> {
        let parts = self.parts()?;
        if let Some(principal) = &parts.principal {
            return Some(principal);
        }
        #[cfg(feature = "http")]
        if let Some(http) = &parts.http {
            return http.extensions.get::<Principal>();
        }
        None
    }

    /// The HTTP request the call came in (method, URI, version, headers and extensions; the
    /// body is consumed by the transport), when it came over Streamable HTTP. A layer's own
    /// request extensions are in `http_parts()?.extensions`.
    #[cfg(feature = "http")]
    pub fn http_parts(&self) -> Option<&http::request::Parts> {
        self.parts()?.http.as_deref()
    }

    /// The HTTP request's headers, when the call came over Streamable HTTP.
    #[cfg(feature = "http")]
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.http_parts().map(|parts| &parts.headers)
    }

    /// The network peer of the HTTP request ([`ClientAddr`](crate::auth::ClientAddr), when the
    /// server's accept loop recorded it): the client, or the last proxy in front of the
    /// server. `None` for other transports, and always without the `http` feature.
    pub fn client_addr(&self) -> Option<std::net::SocketAddr> {
        #[cfg(feature = "http")]
        if let Some(http) = self.http_parts() {
            return http
                .extensions
                .get::<crate::auth::ClientAddr>()
                .map(|addr| addr.0);
        }
        None
    }

    /// Reports progress; does nothing when the client asked for no progress.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(report) = self.parts().and_then(|parts| parts.progress.as_ref()) {
            report(progress, total, message.map(str::to_owned));
        }
    }

    /// Sends a log message to the client as an MCP `notifications/message` (MCP specification,
    /// server utilities, "Logging"): `level`, and `data`, any JSON (a string, an object).
    /// Served by [`Server`](crate::server::Server) over stdio (or any byte stream), messages
    /// reach the client in the order sent, interleaved in order with progress reports, all
    /// before the call's result. Over Streamable HTTP, rmcp sends them on the session's own
    /// event stream (the one the client opens with HTTP GET), not the call's: a client receives
    /// them while it holds that stream open, possibly after the result. Does nothing when
    /// nothing listens (a tool called directly). The server drops the messages below the level
    /// the client asked for: with `logging/setLevel` in a 2025 session (once the
    /// [`Server::handler`](crate::server::Server::handler) accepted it; every level before),
    /// with `io.modelcontextprotocol/logLevel` in the `_meta` of a 2026-07-28 request (none
    /// without it), where they ride the call's own event stream.
    ///
    /// ```
    /// use fusion::{LogLevel, RequestContext};
    /// # fn demo(ctx: &RequestContext) {
    /// ctx.log(LogLevel::Info, "reindexing 120 invoices");
    /// ctx.log(LogLevel::Warning, serde_json::json!({"skipped": ["inv_7"], "reason": "locked"}));
    /// # }
    /// ```
    pub fn log(&self, level: LogLevel, data: impl Into<Value>) {
        self.log_as(None, level, data);
    }

    /// [`RequestContext::log`] with the name of the logger (the component) in the message's
    /// `logger` field.
    pub fn log_as(&self, logger: Option<&str>, level: LogLevel, data: impl Into<Value>) {
        if let Some(sink) = self.parts().and_then(|parts| parts.log.as_ref()) {
            sink(level, logger.map(str::to_owned), data.into());
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
                &self.parts().is_some_and(|p| p.progress.is_some()),
            )
            .field("client", &self.client())
            .field("caller", &self.caller())
            .field("principal", &self.principal())
            .finish_non_exhaustive()
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
            .with_meta(Map::from_iter([("traceId".to_owned(), Value::from("t-1"))]))
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

    #[test]
    fn log_messages_go_to_the_sink_with_level_logger_and_data() {
        RequestContext::new().log(LogLevel::Error, "nobody listens");
        let messages = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&messages);
        let context = RequestContext::new().with_log(Arc::new(move |level, logger, data| {
            sink.lock().unwrap().push((level, logger, data));
        }));
        context.log(LogLevel::Info, "started");
        context.clone().log_as(
            Some("indexer"),
            LogLevel::Warning,
            serde_json::json!({"skipped": 2}),
        );
        assert_eq!(
            *messages.lock().unwrap(),
            [
                (LogLevel::Info, None, Value::from("started")),
                (
                    LogLevel::Warning,
                    Some("indexer".to_owned()),
                    serde_json::json!({"skipped": 2})
                ),
            ]
        );
        assert_eq!(LogLevel::Emergency.as_str(), "emergency");
        assert!(LogLevel::Debug < LogLevel::Warning);
    }
}
