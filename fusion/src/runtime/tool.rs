//! The `Tool` trait: a tool's definition, and the first half of a call (validate the routed
//! [`ToolCall`]'s arguments into a [`PreparedCall`]). The rest of the call (routing, guards,
//! the handler, the panic boundary) is the runtime's, in `call`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::guard::ToolGuards;
use crate::model::context::{BoxFuture, RequestContext};
use crate::model::definition::ToolDefinition;
use crate::model::output::IntoToolResponse;
use crate::model::response::ToolResponse;
use crate::model::schema::InputSchemas;
use crate::runtime::compiled::CompiledTool;

/// An MCP tool whose actions fail well. `#[fusion::tool]` implements it; a
/// [`Server`](crate::server::Server) or a [`Tester`](crate::testing::Tester) registers values
/// of implementing types and runs every call the same way:
///
/// 1. the runtime routes the arguments to an action (by the discriminator, or the flat tool
///    name called) into a [`ToolCall`], and [`Tool::prepare`] validates them, synchronously:
///    a malformed call is answered here and never reaches the guards;
/// 2. the guards configured for the tool and the action (its own [`Tool::guards`], and the
///    server's) admit the call or refuse it;
/// 3. the prepared call's handler runs under the timeout, inside one panic boundary.
///
/// A hand-written tool implements the validation step only, so it gets exactly the routing
/// and the guards configured for it. `prepare` takes the tool by `Arc` and returns a call that owns what it
/// needs (like a tower `Service` future, or axum's cloned state): a handler that uses the tool
/// moves the `Arc` in, so the call can outlive the borrow of the registry it came from, and a
/// synchronous handler can run on another thread (see [`PreparedCall::blocking`]).
///
/// ```
/// use fusion::{ActionDefinition, PreparedCall, Tool, ToolCall, ToolDefinition, ToolResponse};
/// use fusion::guard::{GuardSpec, ToolGuards};
/// use serde_json::json;
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// struct Ping {
///     reply: &'static str,
/// }
///
/// impl Tool for Ping {
///     fn definition(&self) -> ToolDefinition {
///         ToolDefinition {
///             name: "ping".into(),
///             description: "Answers pong.".into(),
///             title: None,
///             discriminator: None,
///             actions: vec![ActionDefinition {
///                 name: "ping".into(),
///                 description: "Answers pong.".into(),
///                 title: None,
///                 input_schema: serde_json::from_value(json!({"type": "object"})).unwrap(),
///                 annotations: Default::default(),
///                 errors: Vec::new(),
///                 secret_fields: Vec::new(),
///                 output_schema: None,
///                 scopes: Vec::new(),
///                 task: false,
///                 task_required: false,
///                 task_deferred: false,
///                 strict_json: false,
///                 result: Default::default(),
///             }],
///         }
///     }
///
///     fn prepare(self: Arc<Self>, call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
///         // Validated against the action's input schema: no argument at all.
///         call.parse_none()?;
///         // The handler owns `self`.
///         Ok(PreparedCall::new(move |_context| async move { self.reply }))
///     }
///
///     fn guards(&self) -> ToolGuards {
///         ToolGuards {
///             tool: GuardSpec::new().timeout(Duration::from_secs(2)),
///             actions: Vec::new(),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tester = fusion::testing::Tester::new().tool(Ping { reply: "pong" });
/// tester.call("ping", json!({})).await.assert_text("pong");
/// # }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition: name, description, discriminator and actions.
    fn definition(&self) -> ToolDefinition;

    /// Validates the arguments of `call` (routed to one of the definition's actions, the
    /// discriminator taken out): the call ready to run, or the response refusing it (a
    /// `<validation_error>`). Runs before any guard, and does no I/O.
    ///
    /// The runtime hands each call its own clone of the registered `Arc` (one reference-count
    /// increment); a handler that needs the tool moves it in.
    ///
    /// # Errors
    /// The response to send instead of running the call.
    fn prepare(self: Arc<Self>, call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse>;

    /// The guards the tool declares for itself (`#[fusion::tool(concurrency(..), timeout =
    /// ..)]`, `#[action(rate_limit(..))]`): none by default. A server reads them once, at
    /// registration, and runs every call through them (see [`crate::guard`]).
    fn guards(&self) -> ToolGuards {
        ToolGuards::default()
    }

    /// How the tool's input schema is published in `tools/list`, when the tool says
    /// (`#[fusion::tool(input_schema = "as_written")]`, or `"portable"`); `None`, the default,
    /// leaves it to the server ([`Server::input_schemas`](crate::server::Server::input_schemas)).
    fn input_schemas(&self) -> Option<InputSchemas> {
        None
    }
}

/// A call routed to one action of a tool, its arguments not validated yet: what
/// [`Tool::prepare`] gets. The runtime routed it once (by the discriminator, or the flat tool
/// name the client called) and took the discriminator out of the arguments; validating them
/// against the action's compiled input schema is [`ToolCall::parse`]'s.
#[derive(Debug)]
pub struct ToolCall<'r> {
    compiled: &'r CompiledTool,
    index: usize,
    arguments: Map<String, Value>,
}

impl<'r> ToolCall<'r> {
    /// The call of action `index` of `compiled` with `arguments`, the discriminator taken out
    /// (a flat tool name's call may send it too: the name called wins).
    pub(crate) fn new(
        compiled: &'r CompiledTool,
        index: usize,
        mut arguments: Map<String, Value>,
    ) -> ToolCall<'r> {
        if let Some(field) = compiled.discriminator() {
            arguments.remove(field);
        }
        ToolCall {
            compiled,
            index,
            arguments,
        }
    }

    /// The action's name (a single-function tool's is the tool's name; so is a hand-written
    /// tool's whose definition lists no action).
    pub fn action(&self) -> &str {
        self.compiled.action(self.index)
    }

    /// The action's index among the definition's actions, in declaration order.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The arguments as sent (stringified JSON decoded where the server does), without the
    /// discriminator.
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.arguments
    }

    /// The arguments, owned.
    pub fn into_arguments(self) -> Map<String, Value> {
        self.arguments
    }

    /// Validates the arguments against the action's input schema and deserializes them into
    /// `T`: every problem of both kinds comes back in one `<validation_error>` response. A
    /// tool whose definition lists no action takes any object, the input schema it publishes.
    ///
    /// # Errors
    /// The `<validation_error>` response to send.
    pub fn parse<T: DeserializeOwned>(self) -> Result<T, ToolResponse> {
        self.parse_with(|_: &T| None)
    }

    /// [`ToolCall::parse`], then `rules` (the `validator` crate's, when `T` has them) on the
    /// result: the problems of all three kinds in one `<validation_error>` response.
    ///
    /// # Errors
    /// The `<validation_error>` response to send.
    pub fn parse_with<T, F>(self, rules: F) -> Result<T, ToolResponse>
    where
        T: DeserializeOwned,
        F: FnOnce(&T) -> Option<validator::ValidationErrors>,
    {
        self.compiled.parse(self.index, self.arguments, rules)
    }

    /// Checks that an action without an arguments parameter received no arguments.
    ///
    /// # Errors
    /// The `<validation_error>` response to send.
    pub fn parse_none(self) -> Result<(), ToolResponse> {
        self.compiled.parse_none(self.index, self.arguments)
    }
}

/// A call routed to one action with its arguments validated, waiting for its guards: what
/// [`Tool::prepare`] returns. Holds the handler, which gets the request's context when it
/// runs. It owns everything it uses (`'static`): a handler that needs the tool holds its
/// `Arc`.
#[must_use = "a prepared call does nothing until the runtime runs it"]
pub struct PreparedCall {
    handler: Handler,
}

type AsyncHandler = Box<dyn FnOnce(RequestContext) -> BoxFuture<'static, ToolResponse> + Send>;
type SyncHandler = Box<dyn FnOnce(RequestContext) -> ToolResponse + Send>;

enum Handler {
    Async(AsyncHandler),
    /// Runs on the polling task, or on the blocking pool when a timeout bounds the call.
    Sync(SyncHandler),
    /// Always runs on the blocking pool.
    Blocking(SyncHandler),
}

/// A synchronous handler, its output turned into the call's response.
fn sync_handler<F, R>(handler: F) -> SyncHandler
where
    F: FnOnce(RequestContext) -> R + Send + 'static,
    R: IntoToolResponse,
{
    Box::new(move |context| handler(context).into_tool_response())
}

impl PreparedCall {
    /// A call whose handler is asynchronous: `handler` gets the request context and returns a
    /// future of any [`IntoToolResponse`] output. The future runs on the task that polls the
    /// call; at a timeout, or when the client cancels, it is dropped.
    pub fn new<F, Fut>(handler: F) -> PreparedCall
    where
        F: FnOnce(RequestContext) -> Fut + Send + 'static,
        Fut: Future<Output: IntoToolResponse> + Send + 'static,
    {
        let handler: AsyncHandler = Box::new(move |context| {
            let future = handler(context);
            Box::pin(async move { future.await.into_tool_response() })
        });
        PreparedCall {
            handler: Handler::Async(handler),
        }
    }

    /// [`PreparedCall::new`] with a synchronous handler that does not block: a plain function
    /// that returns its output (what `#[fusion::tool]` makes of a plain `fn` action).
    ///
    /// The handler runs inline, on the task that polls the call, at the cost of an async
    /// handler: with the caller's runtime, `tracing` span and `tokio::task_local!` values.
    /// When a timeout bounds the call (the `timeout` guard of the action or its tool), it runs
    /// on the blocking pool instead, as [`PreparedCall::blocking`] describes, so that the
    /// timeout answers at its deadline even if the handler blocks.
    ///
    /// Inline, a handler that blocks holds its async worker thread, and every task waiting
    /// for that thread, as long as it blocks: a handler that may block (file or database I/O,
    /// a long computation) without a timeout belongs in [`PreparedCall::blocking`].
    pub fn sync<F, R>(handler: F) -> PreparedCall
    where
        F: FnOnce(RequestContext) -> R + Send + 'static,
        R: IntoToolResponse,
    {
        PreparedCall {
            handler: Handler::Sync(sync_handler(handler)),
        }
    }

    /// [`PreparedCall::new`] with a synchronous handler that may block: a plain function that
    /// returns its output, free to block (file or database I/O, a long computation). What
    /// `#[fusion::tool]` makes of an `#[action(blocking)]`.
    ///
    /// When the call is polled inside a Tokio runtime, the handler runs on the runtime's
    /// blocking pool (`tokio::task::spawn_blocking`), never on an async worker, so a slow
    /// action does not stall the other calls. The blocking thread is inside the runtime
    /// (`tokio::spawn` and `Handle::current` work there), with the caller's `tracing`
    /// subscriber and span, but the calling task's `tokio::task_local!` values are not set
    /// there. The pool has a bounded number of threads (512 by default, tokio's
    /// `Builder::max_blocking_threads`); past it, a blocking call waits for a thread, under its
    /// timeout. Outside a runtime (a call driven by `futures::executor::block_on`), the
    /// handler runs inline, at the first poll. The hand-off to the pool and back costs each
    /// call a thread wake-up either way (tens of microseconds of CPU), which
    /// [`PreparedCall::sync`] saves a handler that does not block.
    ///
    /// A thread cannot be stopped from outside. When the call ends before the handler does
    /// (its timeout passed, the client cancelled, the call's future was dropped), the call is
    /// answered at once (`TIMEOUT` at the deadline) and the handler keeps its thread until it
    /// returns; its output is then discarded. The handler's context is cancelled at that moment
    /// ([`RequestContext::is_cancelled`] turns `true`): a long handler that checks it between
    /// steps stops early. The call's concurrency slots stay taken until the handler returns,
    /// so a limit also bounds the threads its timed-out calls still occupy.
    pub fn blocking<F, R>(handler: F) -> PreparedCall
    where
        F: FnOnce(RequestContext) -> R + Send + 'static,
        R: IntoToolResponse,
    {
        PreparedCall {
            handler: Handler::Blocking(sync_handler(handler)),
        }
    }

    /// The handler's response, given the request's context. Only the runtime's call path runs
    /// it (inside its guards and panic boundary). `keep` (the call's concurrency slots) lives
    /// as long as the handler: it is dropped with an async handler's future, and when a
    /// blocking handler returns, on its thread, even after the call was answered without it.
    /// `timeout` is the one the guards run the call under (they enforce it): under one, a
    /// synchronous handler runs on the blocking pool, so that the deadline can be answered
    /// while it blocks.
    pub(crate) async fn run<K: Send + 'static>(
        self,
        context: RequestContext,
        keep: K,
        timeout: Option<Duration>,
    ) -> ToolResponse {
        match self.handler {
            Handler::Async(handler) => {
                let response = handler(context).await;
                drop(keep);
                response
            }
            Handler::Sync(handler) if timeout.is_none() => {
                let response = handler(context);
                drop(keep);
                response
            }
            Handler::Sync(handler) | Handler::Blocking(handler) => {
                run_blocking(handler, context, keep).await
            }
        }
    }
}

impl fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.handler {
            Handler::Async(_) => "async",
            Handler::Sync(_) => "sync",
            Handler::Blocking(_) => "blocking",
        };
        f.debug_struct("PreparedCall")
            .field("handler", &kind)
            .finish()
    }
}

/// Runs a blocking handler on the current Tokio runtime's blocking pool, or inline outside a
/// runtime. The handler gets its own cancellation token, a child of the request's, cancelled
/// when this future is dropped before the thread returns (timeout, client cancellation): the
/// handler learns the call is over without the request's token being cancelled for anyone
/// else. A panic on the blocking thread is resumed here, so the call path's one panic boundary
/// answers it like a panic in an async handler.
async fn run_blocking<K: Send + 'static>(
    handler: SyncHandler,
    context: RequestContext,
    keep: K,
) -> ToolResponse {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        let response = handler(context);
        drop(keep);
        return response;
    };
    let token = context.cancellation().child_token();
    let context = context.with_cancellation(token.clone());
    // The caller's `tracing` subscriber and span, and the server's redactor of internal
    // causes, so the action logs as it would inline.
    let dispatch = tracing::dispatcher::get_default(tracing::Dispatch::clone);
    let span = tracing::Span::current();
    let redactor = crate::internal::current_redactor();
    let thread = runtime.spawn_blocking(move || {
        let response = tracing::dispatcher::with_default(&dispatch, || {
            let _span = span.enter();
            crate::internal::redacting_sync(redactor, || handler(context))
        });
        // The slots go back once the thread is done, whether or not anyone still waits.
        drop(keep);
        response
    });
    let abandoned = token.drop_guard();
    let joined = thread.await;
    abandoned.disarm();
    match joined {
        Ok(response) => response,
        Err(error) => match error.try_into_panic() {
            Ok(payload) => std::panic::resume_unwind(payload),
            // The runtime shut down before the thread ran the handler.
            Err(_) => ToolResponse::error(
                crate::envelope::error::ToolError::new(
                    crate::envelope::code::ErrorCode::ServerBusy,
                    "The server is shutting down; the call did not run.",
                )
                .suggest("Call it again once the server is back."),
            ),
        },
    }
}
