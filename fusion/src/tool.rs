//! The `Tool` trait `#[fusion::tool]` implements, the tool and action definitions it reports,
//! and the request context handed to actions.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use serde_json::{Map, Value};

use crate::code::{ErrorCategory, ErrorCode, Severity};
use crate::response::ToolResponse;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What [`Tool::call`] returns: a future of the call's [`ToolResponse`] that boxes a future
/// only when the call has to wait.
///
/// Like every Rust future it does nothing until polled: a generated tool routes, validates and
/// runs its action at the first poll, inside whatever the poller set up (a runtime entered by
/// `block_on`, a task-local `scope`, a tracing span, the task `tokio::spawn` started). A call
/// that finishes without waiting (a routing or validation error, a synchronous action with no
/// guards) is answered at that first poll and boxes nothing; one that waits (an `async`
/// action, guards) boxes its future once. Hand-written tools build one with
/// [`CallFuture::ready`] or [`CallFuture::new`]. Polled again after it completed, it panics
/// (every kind alike: a boxed future is dropped as soon as it completes).
#[must_use = "a call's response is only had by awaiting it"]
pub struct CallFuture<'a> {
    state: CallState<'a>,
}

enum CallState<'a> {
    /// A generated tool's call, not started: started at the first poll. The arguments and
    /// context are taken then.
    Deferred(
        &'a dyn StartCall,
        Option<(Map<String, Value>, RequestContext)>,
    ),
    /// Taken at the first poll.
    Ready(Option<ToolResponse>),
    Pending(BoxFuture<'a, ToolResponse>),
}

impl<'a> CallFuture<'a> {
    /// A call answered already: awaiting it gives `response` at once.
    pub fn ready(response: ToolResponse) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Ready(Some(response)),
        }
    }

    /// A call still to run: `future` is boxed (one allocation) and polled when this is.
    pub fn new(future: impl Future<Output = ToolResponse> + Send + 'a) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Pending(Box::pin(future)),
        }
    }

    /// A generated tool's call: `tool.start(arguments, context)` runs at the first poll.
    pub(crate) fn deferred(
        tool: &'a dyn StartCall,
        arguments: Map<String, Value>,
        context: RequestContext,
    ) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Deferred(tool, Some((arguments, context))),
        }
    }

    /// Whether the response is known without waiting (a [`CallFuture::ready`] not yet
    /// polled). A generated tool's call is not, until polled: it has not run yet.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, CallState::Ready(Some(_)))
    }
}

impl<'a> From<BoxFuture<'a, ToolResponse>> for CallFuture<'a> {
    /// A future that is boxed already, kept as it is.
    fn from(future: BoxFuture<'a, ToolResponse>) -> CallFuture<'a> {
        CallFuture {
            state: CallState::Pending(future),
        }
    }
}

impl Future for CallFuture<'_> {
    type Output = ToolResponse;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResponse> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                CallState::Deferred(tool, call) => {
                    let tool: &dyn StartCall = *tool;
                    let (arguments, context) = call
                        .take()
                        .expect("a `CallFuture` polled again after it panicked");
                    match tool.start(arguments, context) {
                        Started::Ready(response) => {
                            this.state = CallState::Ready(None);
                            return Poll::Ready(response);
                        }
                        // Polled at once, by the next turn of the loop.
                        Started::Pending(future) => this.state = CallState::Pending(future),
                    }
                }
                CallState::Ready(response) => {
                    return Poll::Ready(
                        response
                            .take()
                            .expect("a `CallFuture` polled again after it completed"),
                    );
                }
                CallState::Pending(future) => {
                    let response = std::task::ready!(future.as_mut().poll(cx));
                    // The box is freed now, and a second poll panics like a ready one's.
                    this.state = CallState::Ready(None);
                    return Poll::Ready(response);
                }
            }
        }
    }
}

impl fmt::Debug for CallFuture<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            CallState::Deferred(..) => "not started",
            CallState::Ready(Some(_)) => "ready",
            CallState::Ready(None) => "completed",
            CallState::Pending(_) => "pending",
        };
        f.debug_struct("CallFuture").field("state", &state).finish()
    }
}

/// An MCP tool whose actions fail well. `#[fusion::tool]` implements it; a server registers
/// values of implementing types.
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition: name, description, discriminator and actions.
    fn definition(&self) -> ToolDefinition;

    /// Runs one call: `arguments` is the MCP `arguments` object (discriminator included for
    /// multi-action tools). Every failure, including a panic in the action, comes back as a
    /// [`ToolResponse`] error; this never panics and never hangs on its own.
    ///
    /// Nothing runs before the returned future is first polled, so the context the action
    /// needs (a runtime, a task-local, a span) is the poller's, as with any future.
    fn call<'a>(&'a self, arguments: Map<String, Value>, context: RequestContext)
    -> CallFuture<'a>;

    /// The guards the tool declares for itself (`#[fusion::tool(concurrency(..), timeout =
    /// ..)]`, `#[action(rate_limit(..))]`): none by default. A server reads them once, at
    /// registration, and applies them through [`RequestContext::guarded`], which `call` must
    /// run its handler through (see [`crate::guard`]).
    fn guards(&self) -> crate::guard::ToolGuards {
        crate::guard::ToolGuards::default()
    }
}

/// The body of a generated [`Tool::call`], which [`CallFuture`] runs at its first poll:
/// generated `call` only packs its arguments (see `fusion::__private::defer`), so calling it
/// does no work and the future it returns holds no boxed state. Not public API.
#[doc(hidden)]
pub trait StartCall: Send + Sync {
    /// Routes, validates and runs the call: the response when it needed no waiting, the
    /// boxed future that waits otherwise.
    fn start<'a>(&'a self, arguments: Map<String, Value>, context: RequestContext) -> Started<'a>;
}

/// What [`StartCall::start`] gives: smaller than a [`CallFuture`] (which also holds a call
/// not started), so generated code moves it without a `memcpy` call. Not public API.
#[doc(hidden)]
pub enum Started<'a> {
    /// The call needed no waiting.
    Ready(ToolResponse),
    /// The call waits: its future, boxed once.
    Pending(BoxFuture<'a, ToolResponse>),
}

/// One error an action can produce: its code and the flags it carries. Fed by
/// `#[derive(ToolErrors)]`; part of the tool's contract (`_meta` and the lockfile).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorContract {
    /// The code.
    pub code: ErrorCode,
    /// The severity the code is produced with.
    pub severity: Severity,
    /// The category client code sees.
    pub category: ErrorCategory,
    /// Whether an identical retry can succeed.
    pub retryable: bool,
}

impl ErrorContract {
    /// A contract entry with the defaults of SPEC section 1 filled in: the category falls back
    /// to the code's default (then `unknown`), retryability to the category's default.
    pub fn new(
        code: ErrorCode,
        severity: Severity,
        category: Option<ErrorCategory>,
        retryable: Option<bool>,
    ) -> ErrorContract {
        let category = category
            .or_else(|| code.default_category())
            .unwrap_or(ErrorCategory::Unknown);
        ErrorContract {
            retryable: retryable.unwrap_or_else(|| category.is_retryable_by_default()),
            code,
            severity,
            category,
        }
    }
}

/// A domain error type with an error contract: `#[derive(ToolErrors)]` implements it, along
/// with `From<Self> for ToolError` (SPEC section 8).
pub trait ToolErrors: Into<crate::ToolError> {
    /// Every code the type can produce, with its severity, category and retryability, in
    /// declaration order. Feeds the tool definition and the lockfile.
    fn error_contracts() -> Vec<ErrorContract>;
}

/// MCP tool annotations (MCP specification 2025-06-18, "Tool annotations"): hints about an
/// action's behaviour. `None` leaves the hint unset, so clients apply the MCP defaults
/// (not read-only, destructive, not idempotent, open world).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Annotations {
    /// The action does not modify its environment (`readOnlyHint`).
    pub read_only: Option<bool>,
    /// The action may perform destructive updates (`destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it repeatedly with the same arguments has no further effect (`idempotentHint`).
    pub idempotent: Option<bool>,
    /// The action talks to an open world of external entities (`openWorldHint`).
    pub open_world: Option<bool>,
}

/// One action of a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionDefinition {
    /// The action's name, the discriminator value (`list_invoices`). For a single-function
    /// tool, the tool's own name.
    pub name: String,
    /// What the action does, for the model (from the doc comment or `description = "…"`).
    pub description: String,
    /// The JSON Schema of the action's own arguments (an object schema, discriminator
    /// excluded; `$defs` kept).
    pub input_schema: Map<String, Value>,
    /// The behaviour hints.
    pub annotations: Annotations,
    /// The errors the action's error type can produce, in declaration order.
    pub errors: Vec<ErrorContract>,
    /// Argument paths whose values must never be echoed (`(redacted)` in validation errors).
    pub secret_fields: Vec<String>,
    /// The JSON Schema of the action's success value, as it serializes (schemars' serialize
    /// contract, `$defs` kept), declared with `#[action(output_schema)]`; `None` otherwise.
    ///
    /// A server advertises it as the MCP tool's `outputSchema` (MCP specification 2025-06-18,
    /// "Tools", "Output Schema") in flat exposition, and in grouped exposition for a tool with
    /// exactly one action. MCP requires an object schema: a server omits a schema whose
    /// top-level `type` is not `"object"` and logs a warning.
    pub output_schema: Option<Map<String, Value>>,
}

/// A tool: a name, a description and its actions.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The MCP tool name (`billing`).
    pub name: String,
    /// What the tool is for, for the model.
    pub description: String,
    /// The discriminator field naming the action (`action` by default); `None` for a
    /// single-function tool, whose arguments are the action's arguments.
    pub discriminator: Option<String>,
    /// The actions, in declaration order.
    pub actions: Vec<ActionDefinition>,
}

impl ToolDefinition {
    /// The qualified name of an action as models see it: `tool.action`, or `tool` alone for a
    /// single-function tool (SPEC section 2).
    pub fn qualified_name(&self, action: &str) -> String {
        match self.discriminator {
            Some(_) => format!("{}.{}", self.name, action),
            None => self.name.clone(),
        }
    }

    /// The action named `name`.
    pub fn action(&self, name: &str) -> Option<&ActionDefinition> {
        self.actions.iter().find(|a| a.name == name)
    }
}

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
    guards: Option<crate::guard::GuardScope>,
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

    /// Sets the identity of the calling client (used as a rate-limit key, never echoed).
    pub fn with_client(mut self, client: impl Into<String>) -> RequestContext {
        self.parts_mut().client = Some(client.into());
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

    /// The calling client's identity, when the transport knows it.
    pub fn client(&self) -> Option<&str> {
        self.parts.as_ref()?.client.as_deref()
    }

    /// Puts a server's guards, for calls of tool `tool`, into the context.
    pub(crate) fn with_guards(mut self, scope: Option<crate::guard::GuardScope>) -> RequestContext {
        if scope.is_some() || self.parts.is_some() {
            self.parts_mut().guards = scope;
        }
        self
    }

    /// Whether the call came with guards (a server's, see [`RequestContext::with_guards`]).
    #[inline]
    pub(crate) fn has_guards(&self) -> bool {
        self.parts
            .as_ref()
            .is_some_and(|parts| parts.guards.is_some())
    }

    /// The guards of action `action` for this call, ready to [`run`](crate::guard::Guarded::run)
    /// the handler: rate limits, concurrency limits and the timeout the server (or tester)
    /// configured for the tool and the action (SPEC section 4). Call it after routing and
    /// validation, so malformed calls never take a slot. Without guards in the context (a tool
    /// called directly) the handler just runs.
    pub fn guarded(&self, action: &str) -> crate::guard::Guarded {
        let guards = self.parts.as_ref().and_then(|parts| parts.guards.as_ref());
        crate::guard::Guarded::new(self, guards, action)
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
            .field(
                "guarded",
                &self.parts.as_ref().is_some_and(|p| p.guards.is_some()),
            )
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
        assert!(context.guarded("any").is_open());
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
