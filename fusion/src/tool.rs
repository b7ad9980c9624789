//! The `Tool` trait: a tool's definition, and the first half of a call (route and validate
//! the arguments into a [`PreparedCall`]). The rest of the call (guards, the handler, the
//! panic boundary) is the runtime's, in `call`.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use serde_json::{Map, Value};

use crate::context::{BoxFuture, RequestContext};
use crate::definition::ToolDefinition;
use crate::guard::ToolGuards;
use crate::output::IntoToolResponse;
use crate::response::ToolResponse;

/// An MCP tool whose actions fail well. `#[fusion::tool]` implements it; a
/// [`Server`](crate::server::Server) or a [`Tester`](crate::testing::Tester) registers values
/// of implementing types and runs every call the same way:
///
/// 1. [`Tool::prepare`] routes the arguments to an action and validates them, synchronously:
///    a malformed call is answered here and never reaches the guards;
/// 2. the guards configured for the tool and the action (its own [`Tool::guards`], and the
///    server's) admit the call or refuse it;
/// 3. the prepared call's handler runs under the timeout, inside one panic boundary.
///
/// A hand-written tool implements the first step only, so it gets exactly the guards
/// configured for it:
///
/// ```
/// use fusion::{ActionDefinition, PreparedCall, Tool, ToolDefinition, ToolResponse};
/// use fusion::guard::{GuardSpec, ToolGuards};
/// use serde_json::{Map, Value, json};
/// use std::time::Duration;
///
/// struct Ping;
///
/// impl Tool for Ping {
///     fn definition(&self) -> ToolDefinition {
///         ToolDefinition {
///             name: "ping".into(),
///             description: "Answers pong.".into(),
///             discriminator: None,
///             actions: vec![ActionDefinition {
///                 name: "ping".into(),
///                 description: "Answers pong.".into(),
///                 input_schema: serde_json::from_value(json!({"type": "object"})).unwrap(),
///                 annotations: Default::default(),
///                 errors: Vec::new(),
///                 secret_fields: Vec::new(),
///                 output_schema: None,
///             }],
///         }
///     }
///
///     fn prepare(&self, arguments: Map<String, Value>) -> Result<PreparedCall<'_>, ToolResponse> {
///         if !arguments.is_empty() {
///             return Err(ToolResponse::error(fusion::ToolError::new(
///                 "VALIDATION_ERROR",
///                 "`ping` takes no arguments.",
///             )));
///         }
///         // A single-function tool's action is named like the tool.
///         Ok(PreparedCall::new("ping", |_context| async { "pong" }))
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
/// let tester = fusion::testing::Tester::new().tool(Ping);
/// tester.call("ping", json!({})).await.assert_text("pong");
/// # }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition: name, description, discriminator and actions.
    fn definition(&self) -> ToolDefinition;

    /// Routes `arguments` (the MCP `arguments` object, discriminator included for a tool with
    /// several actions) to an action and validates them: the call ready to run, or the
    /// response refusing it (`MISSING_DISCRIMINATOR`, `UNKNOWN_ACTION`, a
    /// `<validation_error>`). Runs before any guard, and does no I/O.
    ///
    /// # Errors
    /// The response to send instead of running the call.
    fn prepare(&self, arguments: Map<String, Value>) -> Result<PreparedCall<'_>, ToolResponse>;

    /// The guards the tool declares for itself (`#[fusion::tool(concurrency(..), timeout =
    /// ..)]`, `#[action(rate_limit(..))]`): none by default. A server reads them once, at
    /// registration, and runs every call through them (see [`crate::guard`]).
    fn guards(&self) -> ToolGuards {
        ToolGuards::default()
    }
}

/// A call routed to one action with its arguments validated, waiting for its guards: what
/// [`Tool::prepare`] returns. Holds the action's name (the guards are looked up by it) and the
/// handler, which gets the request's context when it runs.
#[must_use = "a prepared call does nothing until the runtime runs it"]
pub struct PreparedCall<'a> {
    action: Cow<'static, str>,
    handler: Handler<'a>,
}

enum Handler<'a> {
    Async(Box<dyn FnOnce(RequestContext) -> BoxFuture<'a, ToolResponse> + Send + 'a>),
    Blocking(Box<dyn FnOnce(RequestContext) -> ToolResponse + Send + 'a>),
}

impl<'a> PreparedCall<'a> {
    /// A call of `action` (the discriminator value; for a single-function tool, the tool's
    /// name) whose handler is asynchronous: `handler` gets the request context and returns a
    /// future of any [`IntoToolResponse`] output.
    pub fn new<F, Fut>(action: impl Into<Cow<'static, str>>, handler: F) -> PreparedCall<'a>
    where
        F: FnOnce(RequestContext) -> Fut + Send + 'a,
        Fut: Future<Output: IntoToolResponse> + Send + 'a,
    {
        let handler: Box<dyn FnOnce(RequestContext) -> BoxFuture<'a, ToolResponse> + Send + 'a> =
            Box::new(move |context| {
                let future = handler(context);
                Box::pin(async move { future.await.into_tool_response() })
            });
        PreparedCall {
            action: action.into(),
            handler: Handler::Async(handler),
        }
    }

    /// [`PreparedCall::new`] with a synchronous handler: a plain function that returns its
    /// output.
    pub fn blocking<F, R>(action: impl Into<Cow<'static, str>>, handler: F) -> PreparedCall<'a>
    where
        F: FnOnce(RequestContext) -> R + Send + 'a,
        R: IntoToolResponse,
    {
        PreparedCall {
            action: action.into(),
            handler: Handler::Blocking(Box::new(move |context| {
                handler(context).into_tool_response()
            })),
        }
    }

    /// The action the call goes to.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The action's name, owned (borrowed for the `&'static str` names generated tools use).
    pub(crate) fn action_name(&self) -> Cow<'static, str> {
        self.action.clone()
    }

    /// The handler's response, given the request's context. Only the runtime's call path runs
    /// it (inside its guards and panic boundary).
    pub(crate) async fn run(self, context: RequestContext) -> ToolResponse {
        match self.handler {
            Handler::Async(handler) => handler(context).await,
            Handler::Blocking(handler) => handler(context),
        }
    }
}

impl fmt::Debug for PreparedCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.handler {
            Handler::Async(_) => "async",
            Handler::Blocking(_) => "blocking",
        };
        f.debug_struct("PreparedCall")
            .field("action", &self.action)
            .field("handler", &kind)
            .finish()
    }
}
