//! One tool call, top to bottom. A [`Server`](crate::server::Server) and a
//! [`Tester`](crate::testing::Tester) [resolve](Registry::resolve) the name the client called
//! and its arguments once into a [`Resolved`] value (the tool, the action, the arguments, the
//! exposition), then run it in two steps, [`Registry::admit`] and [`Registry::run`]; a direct
//! [`ToolExt::call`] routes and runs the tool alone:
//!
//! ```text
//!           ┌──────────────────────────── admit ───────────────────────────┐  ┌──────── run ────────┐
//! Resolved ─▶ argument limits ─▶ stringified JSON ─▶ Tool::prepare ─▶ guards ─▶ timeout, layers, handler ─▶ answer
//!             (size, nesting)    decoded (limits     (validate)       (scopes, rate,
//!                                again)                               concurrency slots)
//!             └─── one panic boundary per step, the server's redactor in force, one span ───┘
//! ```
//!
//! Between the steps the call is an [`Admitted`] value that owns what it needs: a server
//! decides there whether the call becomes a task (MCP Tasks extension), so a call refused by
//! any check is answered directly, never as a task.
//!
//! A registered tool's arguments sent as strings holding JSON where the action's schema wants
//! JSON are decoded after the limits, which are checked again on what was decoded
//! ([`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments)).
//! Decoding is tried only when a string starts like JSON of another type; a call that sends
//! none pays one look at the first byte of each string.
//!
//! The answer is made once ([`Registry::finish`]): the decoded fields told, the span's outcome
//! recorded, the result fitted to its limit, and the action names of the client's exposition
//! with, given a contract baseline, a validation error's contract deltas.
//!
//! Routing and validation are synchronous and come first, so a malformed call is answered
//! before it can take a rate-limit slot or a concurrency slot. The guards wrap the prepared
//! call from outside, so a hand-written [`Tool`] gets the same guards as a generated one. A
//! panic anywhere (in `prepare`, in a layer of yours, in any poll of the handler) becomes
//! an `INTERNAL_ERROR` response with an error id, its message logged and never shown; the
//! server keeps serving. A synchronous handler runs inline, or on Tokio's blocking pool when
//! it is declared blocking or a timeout bounds the call
//! ([`PreparedCall::sync`](crate::PreparedCall::sync),
//! [`PreparedCall::blocking`](crate::PreparedCall::blocking)); a panic there is carried back
//! to the polling task and caught by the same boundary.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Instrument;

use crate::envelope::error::ToolError;
use crate::guard::Pass;
use crate::internal;
use crate::model::context::RequestContext;
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;
use crate::runtime::compiled::CompiledTool;
use crate::runtime::fit::{self, Fitting};
use crate::runtime::registry::{Registered, Registry, Resolved};
use crate::runtime::tool::{PreparedCall, Tool, ToolCall};
use crate::trace;
use crate::validation::DecodedField;

/// A call the guards admitted, waiting to run ([`Registry::admit`], then [`Registry::run`]):
/// the prepared handler, its pass through the guards, the request's context, and what the
/// answer needs. It owns all of it, so it can be run on another task (a task's call).
pub(crate) struct Admitted {
    state: CallState,
    prepared: PreparedCall,
    /// The guards' pass; `None` when nothing guards the action.
    pass: Option<Pass>,
    context: RequestContext,
}

/// What a call carries from its resolution to its answer.
struct CallState {
    tool: Arc<Registered>,
    /// The action called; `None` when the call was refused for naming none.
    action: Option<usize>,
    /// Whether the name called carried the action.
    named: bool,
    exposition: Exposition,
    /// The call's `tracing` span and when it started.
    span: Option<(tracing::Span, Instant)>,
    /// The session and the fields read from stringified JSON, when some were.
    decoded: Option<(Option<String>, Vec<DecodedField>)>,
    /// The arguments as read, kept for the next call of a cut list when the action pages.
    paging: Option<Map<String, Value>>,
}

impl CallState {
    fn action_name(&self) -> &str {
        self.tool.compiled.action(self.action.unwrap_or_default())
    }
}

impl Registry {
    /// Runs one resolved call whole: [`Registry::admit`], then [`Registry::run`]. Never
    /// panics; answers every call exactly once.
    pub(crate) async fn call(&self, resolved: Resolved, context: RequestContext) -> ToolResponse {
        match self.admit(resolved, context).await {
            Ok(admitted) => self.run(admitted).await,
            Err(response) => response,
        }
    }

    /// The first step of a call (see the module docs): the argument limits, the routing error
    /// of a call naming no action, stringified JSON decoded (and the limits again),
    /// [`Tool::prepare`], and the guards' admission (scopes, rate limits, concurrency slots).
    /// A refusal at any of them is the answer, made as [`Registry::run`] makes one.
    pub(crate) async fn admit(
        &self,
        resolved: Resolved,
        context: RequestContext,
    ) -> Result<Admitted, ToolResponse> {
        let Resolved {
            tool,
            action,
            named,
            arguments,
            exposition,
        } = resolved;
        let mut state = CallState {
            span: start_span(&tool.definition.name, &context),
            tool,
            action: action.as_ref().ok().copied(),
            named,
            exposition,
            decoded: None,
            paging: None,
        };
        let span = state.span.as_ref().map(|(span, _)| span.clone());
        let steps = self.admitting(&mut state, action, arguments, context);
        // Boxed: the call's future is large, and handing it on by value copied it whole a few
        // times a call (callgrind: half again the server's instructions per HTTP call).
        let steps = internal::redacting(self.redact.clone(), Box::pin(catch_panics(steps, Err)));
        match in_span(span, steps).await {
            Ok((prepared, pass, context)) => Ok(Admitted {
                state,
                prepared,
                pass,
                context,
            }),
            Err(refusal) => Err(self.finish(&state, refusal)),
        }
    }

    async fn admitting(
        &self,
        state: &mut CallState,
        action: Result<usize, ToolError>,
        mut arguments: Map<String, Value>,
        context: RequestContext,
    ) -> Result<(PreparedCall, Option<Pass>, RequestContext), ToolResponse> {
        let limits = self.guards().argument_limits();
        if let Some(error) = limits.check(&arguments) {
            return Err(ToolResponse::error(error));
        }
        let index = action.map_err(ToolResponse::error)?;
        let tool = &state.tool;
        let decoded = (!self.strict_json)
            .then(|| (tool.compiled).decode_stringified(index, &mut arguments, limits.max_bytes))
            .flatten();
        if let Some(decoded) = decoded {
            tracing::debug!(
                target: "fusion::arguments",
                action = tool.compiled.qualified(index),
                fields = %decoded.fields.iter().map(|f| f.path.render()).collect::<Vec<_>>().join(", "),
                "arguments sent as strings holding JSON were read as that JSON"
            );
            state.decoded = Some((context.caller().map(str::to_owned), decoded.fields));
            // The limits apply to the arguments as decoded: a string can hold deeper JSON than
            // it looks, and numbers can grow when read (`1e9` is `1000000000.0`). JSON nested
            // deeper than the parser reads counts at its depth, and is refused as the action
            // refuses it.
            let (levels, refusal) = decoded.too_deep.unzip();
            if let Some(error) = limits.check_at_depth(&arguments, levels) {
                return Err(ToolResponse::error(error));
            }
            if let Some(refusal) = refusal {
                return Err(refusal);
            }
        }
        let tool = &state.tool;
        let declaration = tool.definition.actions.get(index);
        if declaration.is_some_and(|a| a.result.page.is_some() && self.result_limit(a).is_some()) {
            state.paging = Some(arguments.clone());
        }
        let call = ToolCall::new(&tool.compiled, index, arguments);
        let prepared = Arc::clone(&tool.tool).prepare(call)?;
        if let Some((span, _)) = &state.span {
            trace::record_action(span, state.action_name());
        }
        let pass = match &state.tool.gates {
            None => None,
            Some(gates) => (gates
                .admit(state.action_name(), state.exposition, &context)
                .await)
                .map_err(ToolResponse::error)?,
        };
        Ok((prepared, pass, context))
    }

    /// The second step: the admitted call's handler, under the guards' timeout and layers,
    /// inside the panic boundary; then its answer.
    pub(crate) async fn run(&self, admitted: Admitted) -> ToolResponse {
        let Admitted {
            state,
            prepared,
            pass,
            context,
        } = admitted;
        let span = state.span.as_ref().map(|(span, _)| span.clone());
        let handler = async {
            match (&state.tool.gates, pass) {
                (Some(gates), Some(pass)) => {
                    let action = state.action_name();
                    let timeout = pass.timeout();
                    let run = move |context, slots| prepared.run(context, slots, timeout);
                    // Boxed: the guards' state (permits, timer, layers) is large, and an
                    // unguarded call's future should not carry it.
                    Box::pin(gates.proceed(action, pass, context, run)).await
                }
                _ => prepared.run(context, (), None).await,
            }
        };
        let handler = catch_panics(handler, std::convert::identity);
        let response = in_span(
            span,
            internal::redacting(self.redact.clone(), Box::pin(handler)),
        );
        let response = response.await;
        self.finish(&state, response)
    }

    /// The answer to a call, made once. Each step rewrites the response for one reason:
    /// the model is told which fields were read from stringified JSON (on any answer, so it
    /// learns to send JSON); the span records the outcome as the action gave it; a success
    /// over the result limit is cut or refused; and the answer is named as the client's
    /// exposition names actions, with contract deltas and flags as the server asks.
    fn finish(&self, state: &CallState, response: ToolResponse) -> ToolResponse {
        let response = match (&state.decoded, state.action) {
            (Some((session, fields)), Some(index)) => {
                let action = state.tool.compiled.qualified(index);
                self.told.tell(response, session.as_deref(), action, fields)
            }
            _ => response,
        };
        if let Some((span, started)) = &state.span {
            trace::record_response(span, &response, *started);
        }
        let response = match self.fitting(state) {
            Some(fitting) => fit::fit(response, &fitting),
            None => response,
        };
        self.answer(response, state.exposition)
    }

    /// What fitting the result of the call needs, when a result limit is in force for the
    /// action called.
    fn fitting<'s>(&self, state: &'s CallState) -> Option<Fitting<'s>> {
        let definition = &state.tool.definition;
        let action = definition.actions.get(state.action?)?;
        Some(Fitting {
            limit: self.result_limit(action)?,
            action,
            discriminator: (definition.discriminator.as_deref()).filter(|_| !state.named),
            arguments: state.paging.as_ref(),
        })
    }
}

/// The call's `tracing` span, continuing the caller's trace, when the subscriber wants it.
fn start_span(tool: &str, context: &RequestContext) -> Option<(tracing::Span, Instant)> {
    let span = trace::call_span(tool);
    if span.is_disabled() {
        return None;
    }
    #[cfg(feature = "opentelemetry")]
    trace::continue_trace(&span, context.meta());
    #[cfg(not(feature = "opentelemetry"))]
    let _ = context;
    Some((span, Instant::now()))
}

/// `future` inside `span`, when there is one.
async fn in_span<F: Future>(span: Option<tracing::Span>, future: F) -> F::Output {
    match span {
        Some(span) => future.instrument(span).await,
        None => future.await,
    }
}

/// Calling a tool directly, without a server: the call path with no guards and no argument
/// limits beyond the tool's own validation. For tests that want the server's guards and
/// names, use [`Tester`](crate::testing::Tester).
///
/// Implemented for a tool by value (it is moved into an `Arc` for the call: one allocation),
/// and for `&Arc<T>` and `&Arc<dyn Tool>` (the call clones the `Arc`), so a tool kept in an
/// `Arc` is called again and again with `tool.call(..)`. The returned future owns what it
/// needs (`'static`): it can be spawned. Each direct call reads the tool's definition and
/// compiles its input schemas for that call alone (nothing is kept between calls, or shared
/// between tools of one type); a server or a [`Tester`](crate::testing::Tester) compiles them
/// once, when the tool is registered, so code that calls a tool many times registers it.
///
/// ```
/// use fusion::{RequestContext, ToolExt};
/// use serde_json::json;
/// use std::sync::Arc;
///
/// /// Adds two numbers.
/// #[fusion::tool]
/// fn add(args: Pair) -> u64 {
///     args.a + args.b
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Pair { a: u64, b: u64 }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let arguments = json!({"a": 2, "b": 3}).as_object().unwrap().clone();
/// let response = Add.call(arguments.clone(), RequestContext::new()).await;
/// assert_eq!(response.payload(), Some("5"));
///
/// let shared = Arc::new(Add);
/// let spawned = tokio::spawn(shared.call(arguments, RequestContext::new()));
/// assert_eq!(spawned.await.unwrap().payload(), Some("5"));
/// # }
/// ```
pub trait ToolExt {
    /// Runs one call: routing, validation, the handler, panics caught. Nothing runs before
    /// the returned future is first polled.
    fn call(
        self,
        arguments: Map<String, Value>,
        context: RequestContext,
    ) -> impl Future<Output = ToolResponse> + Send + 'static;
}

impl<T: Tool> ToolExt for T {
    fn call(
        self,
        arguments: Map<String, Value>,
        context: RequestContext,
    ) -> impl Future<Output = ToolResponse> + Send + 'static {
        call_directly(Arc::new(self), arguments, context)
    }
}

impl<T: Tool> ToolExt for &Arc<T> {
    fn call(
        self,
        arguments: Map<String, Value>,
        context: RequestContext,
    ) -> impl Future<Output = ToolResponse> + Send + 'static {
        call_directly(Arc::<T>::clone(self), arguments, context)
    }
}

impl ToolExt for &Arc<dyn Tool> {
    fn call(
        self,
        arguments: Map<String, Value>,
        context: RequestContext,
    ) -> impl Future<Output = ToolResponse> + Send + 'static {
        call_directly(Arc::clone(self), arguments, context)
    }
}

async fn call_directly(
    tool: Arc<dyn Tool>,
    arguments: Map<String, Value>,
    context: RequestContext,
) -> ToolResponse {
    let call = async move {
        let compiled = CompiledTool::new(&tool.definition())
            .map_err(|error| ToolResponse::error(ToolError::from_internal(&error)))?;
        let index = (compiled.route(&arguments, None, |_| true)).map_err(ToolResponse::error)?;
        let prepared = tool.prepare(ToolCall::new(&compiled, index, arguments))?;
        Ok(prepared.run(context, (), None).await)
    };
    catch_panics(call, Err)
        .await
        .unwrap_or_else(std::convert::identity)
}

/// Runs `future`, turning a panic in any poll into an `INTERNAL_ERROR` response (made the
/// future's output by `answer`).
async fn catch_panics<F: Future>(future: F, answer: fn(ToolResponse) -> F::Output) -> F::Output {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(move |cx| {
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => Poll::Ready(answer(panic_response(payload))),
        }
    })
    .await
}

tokio::task_local! {
    /// Set when a call run by [`noting_panics`] panicked.
    static PANICKED: std::cell::Cell<bool>;
}

/// Runs a call, and says whether it panicked (its response is then the `INTERNAL_ERROR` of
/// the panic): a task's call that panicked is a failed task, not a tool error.
pub(crate) async fn noting_panics<F: Future<Output = ToolResponse>>(
    call: F,
) -> (ToolResponse, bool) {
    let noted = async {
        let response = call.await;
        (response, PANICKED.with(std::cell::Cell::get))
    };
    PANICKED.scope(std::cell::Cell::new(false), noted).await
}

/// The `INTERNAL_ERROR` response of a caught panic (the payload's message is logged with the
/// error id). The payload is dropped under a panic guard too: a payload whose `Drop` panics
/// would otherwise unwind out of the code that caught the first panic; such a second payload
/// is leaked, not dropped.
fn panic_response(payload: Box<dyn std::any::Any + Send>) -> ToolResponse {
    let _ = PANICKED.try_with(|panicked| panicked.set(true));
    let response = ToolResponse::error(ToolError::from_panic(&*payload));
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::code::ErrorCode;
    use crate::model::definition::ToolDefinition;

    /// Panics where it is told to.
    struct Panicky(&'static str);

    impl Tool for Panicky {
        fn definition(&self) -> ToolDefinition {
            ToolDefinition {
                name: "panicky".into(),
                description: String::new(),
                title: None,
                discriminator: None,
                actions: Vec::new(),
            }
        }

        fn prepare(self: Arc<Self>, _call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
            match self.0 {
                "prepare" => panic!("in prepare"),
                "blocking" => Ok(PreparedCall::blocking(|_| -> String {
                    panic!("in a blocking handler")
                })),
                _ => Ok(PreparedCall::new(|_| async {
                    tokio::task::yield_now().await;
                    if true {
                        panic!("in a later poll");
                    }
                    "unreachable"
                })),
            }
        }
    }

    #[tokio::test]
    async fn a_panic_anywhere_is_one_internal_error() {
        for place in ["prepare", "blocking", "async"] {
            let response = Panicky(place).call(Map::new(), RequestContext::new()).await;
            let error = response.tool_error().expect(place);
            assert_eq!(error.code(), &ErrorCode::InternalError, "{place}");
            assert!(
                !error.to_xml().contains("in "),
                "{place}: {}",
                error.to_xml()
            );
        }
    }

    #[tokio::test]
    async fn limits_refuse_before_the_tool_is_asked() {
        let mut registry = Registry::default();
        registry.set_limits(|guards| guards.max_argument_bytes(Some(8)));
        assert!(registry.register(Arc::new(Panicky("prepare"))).is_ok());
        let route = crate::runtime::registry::Route {
            tool: 0,
            action: None,
            exposition: Exposition::Grouped,
        };
        let arguments = serde_json::json!({"text": "far too long"});
        let arguments = arguments.as_object().unwrap().clone();
        let resolved = registry.resolve(&route, arguments, None);
        let response = registry.call(resolved, RequestContext::new()).await;
        let error = response.tool_error().unwrap();
        assert_eq!(error.code(), &ErrorCode::ValidationError);
    }
}
