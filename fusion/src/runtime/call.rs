//! One tool call, top to bottom. A [`Server`](crate::server::Server) and a
//! [`Tester`](crate::testing::Tester) find the tool in their
//! [registry](super::registry) by the name the client called, then run [`run`]; a direct
//! [`ToolExt::call`] runs it alone:
//!
//! ```text
//! arguments ─▶ argument limits ─▶ stringified JSON ─▶ Tool::prepare ─▶ guards ─▶ handler ─▶ ToolResponse
//!              (size, nesting)    decoded (limits     (route, validate) (rate, concurrency,
//!                                 again)                                 layers, timeout)
//!                                 └──────────────────── one panic boundary ───────────────────┘
//! ```
//!
//! A registered tool's arguments sent as strings holding JSON where the action's schema wants
//! JSON are decoded after the limits, which are checked again on what was decoded
//! ([`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments)).
//! Decoding is tried only when a string starts like JSON of another type; a call that sends
//! none pays one look at the first byte of each string.
//!
//! The registry then gives the response the action names of the client's exposition and,
//! with a contract baseline, a validation error its contract deltas.
//!
//! Routing and validation are synchronous and come first, so a malformed call is answered
//! before it can take a rate-limit slot or a concurrency slot. The guards wrap the prepared
//! call from outside, so a hand-written [`Tool`] gets the same guards as a generated one. A
//! panic anywhere (in `prepare`, in a layer of yours, in any poll of the handler) becomes
//! an `INTERNAL_ERROR` response with an error id, its message logged and never shown; the
//! server keeps serving. The server's redactor of internal causes is in force on every poll
//! of the call, around the panic boundary. A synchronous handler runs inline, or on Tokio's
//! blocking pool when it is declared blocking or a timeout bounds the call
//! ([`PreparedCall::sync`](crate::PreparedCall::sync),
//! [`PreparedCall::blocking`](crate::PreparedCall::blocking)); a panic there is carried back
//! to the polling task and caught by the same boundary.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;

use serde_json::{Map, Value};
use tracing::Instrument;

use crate::envelope::error::ToolError;
use crate::guard::{ArgumentLimits, Gates};
use crate::internal::{self, Redactor};
use crate::model::context::RequestContext;
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;
use crate::runtime::decoded::Told;
use crate::runtime::dispatch::ToolRuntime;
use crate::runtime::tool::Tool;
use crate::trace;

/// Where a call goes: the tool, its guards, and how the client named it.
pub(crate) struct Target<'a> {
    /// The registered tool; the call takes its own clone of the `Arc` (`Tool::prepare`).
    pub(crate) tool: &'a Arc<dyn Tool>,
    /// The tool's name, for the call's `tracing` span; `None` for a direct call, which gets
    /// no span of its own.
    pub(crate) name: Option<&'a str>,
    /// The guards configured for the tool, when it has any.
    pub(crate) gates: Option<&'a Gates>,
    /// For a call naming its action outside the arguments (the flat tool name
    /// `billing_charge`, a tester's `billing.charge`): the discriminator and the action,
    /// added to the arguments before routing.
    pub(crate) inject: Option<(&'a str, &'a str)>,
    /// The exposition the client called the tool in: guard messages name the action as it
    /// does (`billing_charge` for a flat tool name).
    pub(crate) exposition: Exposition,
    /// What the server does to the causes of internal errors before they are logged.
    pub(crate) redact: Option<&'a Redactor>,
    /// For a call that may run as a task: told when the call is routed, validated and
    /// admitted by the guards, and waited on before the handler runs.
    pub(crate) admission: Option<Admission>,
    /// For a registered tool whose server decodes stringified JSON arguments: the tool's
    /// runtime (its actions' schemas) and what each session was told of decoding.
    pub(crate) decoding: Option<Decoding<'a>>,
}

/// What decoding stringified JSON arguments needs: see [`Target::decoding`].
#[derive(Clone, Copy)]
pub(crate) struct Decoding<'a> {
    pub(crate) runtime: &'a ToolRuntime,
    pub(crate) told: &'a Told,
}

/// The point in a call where it may become a task (MCP Tasks extension): after routing,
/// validation and the guards' admission (a call refused by any of them is answered directly,
/// never as a task), before the handler. The server creates the task then, and lets the call
/// go on.
pub(crate) struct Admission {
    admitted: tokio::sync::oneshot::Sender<()>,
    go: tokio::sync::oneshot::Receiver<()>,
}

impl Admission {
    /// An admission, the receiver told of it, and the sender that lets the call go on.
    pub(crate) fn new() -> (
        Admission,
        tokio::sync::oneshot::Receiver<()>,
        tokio::sync::oneshot::Sender<()>,
    ) {
        let (admitted, on_admitted) = tokio::sync::oneshot::channel();
        let (go_on, go) = tokio::sync::oneshot::channel();
        (Admission { admitted, go }, on_admitted, go_on)
    }

    /// Says the call was admitted and waits to go on. When the server cannot create the task
    /// it drops the sender and the call: the handler never runs.
    pub(crate) async fn pass(self) {
        let _ = self.admitted.send(());
        if self.go.await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

impl<'a> Target<'a> {
    /// `tool` called directly: no name, no guards, no redactor, its actions named as grouped.
    fn direct(tool: &'a Arc<dyn Tool>) -> Target<'a> {
        Target {
            name: None,
            tool,
            gates: None,
            inject: None,
            exposition: Exposition::Grouped,
            redact: None,
            admission: None,
            decoding: None,
        }
    }
}

/// Runs one call of `target` with `arguments` and `context`: the whole call path (see the
/// module docs), inside the call's `tracing` span when the target is named. Never panics;
/// answers every call exactly once.
pub(crate) async fn run(
    target: Target<'_>,
    limits: &ArgumentLimits,
    arguments: Map<String, Value>,
    context: RequestContext,
) -> ToolResponse {
    let Some(name) = target.name else {
        return run_in_span(target, limits, arguments, context, None).await;
    };
    let span = trace::call_span(name);
    if span.is_disabled() {
        return run_in_span(target, limits, arguments, context, None).await;
    }
    #[cfg(feature = "opentelemetry")]
    trace::continue_trace(&span, context.meta());
    let started = std::time::Instant::now();
    let response = run_in_span(target, limits, arguments, context, Some(&span))
        .instrument(span.clone())
        .await;
    trace::record_response(&span, &response, started);
    response
}

async fn run_in_span(
    target: Target<'_>,
    limits: &ArgumentLimits,
    arguments: Map<String, Value>,
    context: RequestContext,
    span: Option<&tracing::Span>,
) -> ToolResponse {
    if let Some(error) = limits.check(&arguments) {
        return ToolResponse::error(error);
    }
    let redactor = target.redact.cloned();
    let call = catch_panics(async move {
        match target.decoding {
            None => prepare_and_run(target, arguments, context, span).await,
            Some(decoding) => {
                decode_then_run(target, decoding, limits, arguments, context, span).await
            }
        }
    });
    // Boxed: the call's future is large, and handing it on by value copied it whole a few
    // times a call (callgrind: half again the server's instructions per HTTP call).
    internal::redacting(redactor, Box::pin(call)).await
}

/// The call with the stringified JSON of its arguments decoded first (inside the panic
/// boundary), the limits checked again on what was decoded, and the response telling of it.
async fn decode_then_run(
    target: Target<'_>,
    decoding: Decoding<'_>,
    limits: &ArgumentLimits,
    mut arguments: Map<String, Value>,
    context: RequestContext,
    span: Option<&tracing::Span>,
) -> ToolResponse {
    let action = target.inject.map(|(_, action)| action);
    let Some(decoded) =
        (decoding.runtime).decode_stringified(&mut arguments, action, limits.max_bytes)
    else {
        return prepare_and_run(target, arguments, context, span).await;
    };
    let (action, fields) = (decoded.action, decoded.fields);
    tracing::debug!(
        target: "fusion::arguments",
        action,
        fields = %fields.iter().map(|f| f.path.render()).collect::<Vec<_>>().join(", "),
        "arguments sent as strings holding JSON were read as that JSON"
    );
    let session = context.caller().map(str::to_owned);
    // The limits apply to the arguments as decoded: a string can hold deeper JSON than it
    // looks, and numbers can grow when read (`1e9` is `1000000000.0`). JSON nested deeper
    // than the parser reads counts at its depth, and is refused as the action refuses it.
    let (levels, refusal) = decoded.too_deep.unzip();
    let response = match (limits.check_at_depth(&arguments, levels), refusal) {
        (Some(error), _) => ToolResponse::error(error),
        (None, Some(refusal)) => refusal,
        (None, None) => prepare_and_run(target, arguments, context, span).await,
    };
    (decoding.told).tell(response, session.as_deref(), action, &fields)
}

/// The call from routing on, its arguments within the limits: `Tool::prepare`, the guards,
/// the handler.
async fn prepare_and_run(
    target: Target<'_>,
    mut arguments: Map<String, Value>,
    context: RequestContext,
    span: Option<&tracing::Span>,
) -> ToolResponse {
    if let Some((discriminator, action)) = target.inject {
        arguments.insert(discriminator.to_owned(), Value::String(action.to_owned()));
    }
    let exposition = target.exposition;
    let admission = target.admission;
    let prepared = match Arc::clone(target.tool).prepare(arguments) {
        Ok(prepared) => prepared,
        Err(refusal) => return refusal,
    };
    if let Some(span) = span {
        trace::record_action(span, prepared.action());
    }
    match target.gates {
        None => {
            if let Some(admission) = admission {
                admission.pass().await;
            }
            prepared.run(context, (), None).await
        }
        // Boxed: the guards' state (permits, timer, layers) is large, and an unguarded
        // call's future should not carry it.
        Some(gates) => {
            let action = prepared.action_name();
            let timeout = gates.timeout(&action);
            let run = move |context, slots| async move {
                if let Some(admission) = admission {
                    admission.pass().await;
                }
                prepared.run(context, slots, timeout).await
            };
            Box::pin(gates.run(&action, exposition, context, run)).await
        }
    }
}

/// Calling a tool directly, without a server: the call path with no guards and no argument
/// limits beyond the tool's own validation. For tests that want the server's guards and
/// names, use [`Tester`](crate::testing::Tester).
///
/// Implemented for a tool by value (it is moved into an `Arc` for the call: one allocation),
/// and for `&Arc<T>` and `&Arc<dyn Tool>` (the call clones the `Arc`), so a tool kept in an
/// `Arc` is called again and again with `tool.call(..)`. The returned future owns what it
/// needs (`'static`): it can be spawned.
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
    const NONE: ArgumentLimits = ArgumentLimits {
        max_bytes: None,
        max_depth: None,
    };
    run(Target::direct(&tool), &NONE, arguments, context).await
}

/// Runs `future`, turning a panic in any poll into an `INTERNAL_ERROR` response.
async fn catch_panics<F: Future<Output = ToolResponse>>(future: F) -> ToolResponse {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(move |cx| {
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => Poll::Ready(panic_response(payload)),
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
    use crate::runtime::tool::PreparedCall;

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

        fn prepare(
            self: Arc<Self>,
            _arguments: Map<String, Value>,
        ) -> Result<PreparedCall, ToolResponse> {
            match self.0 {
                "prepare" => panic!("in prepare"),
                "blocking" => Ok(PreparedCall::blocking("panicky", |_| -> String {
                    panic!("in a blocking handler")
                })),
                _ => Ok(PreparedCall::new("panicky", |_| async {
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
        let limits = ArgumentLimits {
            max_bytes: Some(8),
            max_depth: None,
        };
        let arguments = serde_json::json!({"text": "far too long"});
        let tool: Arc<dyn Tool> = Arc::new(Panicky("prepare"));
        let response = run(
            Target::direct(&tool),
            &limits,
            arguments.as_object().unwrap().clone(),
            RequestContext::new(),
        )
        .await;
        let error = response.tool_error().unwrap();
        assert_eq!(error.code(), &ErrorCode::ValidationError);
    }
}
