//! The `Tool` trait `#[fusion::tool]` implements.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::{Map, Value};

pub use crate::context::{CancellationToken, ProgressReporter, RequestContext};
pub use crate::definition::{
    ActionDefinition, Annotations, ErrorContract, ToolDefinition, ToolErrors,
};
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
