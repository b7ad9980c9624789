//! Tower layers around action calls: the seam for checks and records of your own (an audit
//! log, a tenant policy, a feature flag, metrics), composed with fusion's guards.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

use crate::envelope::error::ToolError;
use crate::model::context::{BoxFuture, RequestContext};
use crate::model::output::IntoToolResponse;
use crate::model::response::ToolResponse;

/// The error type of the services in an action's layer stack (tower's convention).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The service a layer added with [`GuardSpec::layer`](super::GuardSpec::layer) wraps: the
/// rest of the stack, then the action's handler. Cloning it is cheap.
pub type ActionService = BoxCloneSyncService<ActionCall, ToolResponse, BoxError>;

/// One admitted call of an action, the request of an [`ActionService`]: which tool and
/// action, and the request context. The handler travels inside it; the innermost service
/// runs it with the context the call carries when it gets there.
pub struct ActionCall {
    tool: Arc<str>,
    action: Cow<'static, str>,
    context: RequestContext,
    handler: Box<dyn FnOnce(RequestContext) -> BoxFuture<'static, ToolResponse> + Send>,
}

impl ActionCall {
    pub(super) fn new(
        tool: Arc<str>,
        action: Cow<'static, str>,
        context: RequestContext,
        handler: impl FnOnce(RequestContext) -> BoxFuture<'static, ToolResponse> + Send + 'static,
    ) -> ActionCall {
        ActionCall {
            tool,
            action,
            context,
            handler: Box::new(handler),
        }
    }

    /// The tool (`billing`).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The action (`charge`; a single-function tool's action is named like the tool).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The request's context: `_meta`, the principal, the HTTP request's parts.
    pub fn context(&self) -> &RequestContext {
        &self.context
    }

    /// The request's context, to change what the handler will see.
    pub fn context_mut(&mut self) -> &mut RequestContext {
        &mut self.context
    }
}

impl fmt::Debug for ActionCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionCall")
            .field("tool", &self.tool)
            .field("action", &self.action)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

/// The innermost service: runs the call's handler.
fn handler_service() -> ActionService {
    BoxCloneSyncService::new(tower::service_fn(|call: ActionCall| {
        let handler = call.handler;
        let response = handler(call.context);
        async move { Ok::<_, BoxError>(response.await) }
    }))
}

/// Runs `call` through `stack` and answers what it returns: its response, or the envelope of
/// its error (see [`GuardSpec::layer`](super::GuardSpec::layer)).
pub(super) async fn run(stack: &ActionService, call: ActionCall) -> ToolResponse {
    match stack.clone().oneshot(call).await {
        Ok(response) => response,
        Err(error) => ToolResponse::error(tool_error(error)),
    }
}

/// A layer's error as the model sees it: a [`ToolError`] intact, anything else
/// `INTERNAL_ERROR` with its cause logged.
fn tool_error(error: BoxError) -> ToolError {
    match error.downcast::<ToolError>() {
        Ok(error) => *error,
        Err(other) => ToolError::from_internal(&*other),
    }
}

/// One layer of a target, type-erased: the service it makes of the service inside it.
type Wrap = Arc<dyn Fn(ActionService) -> ActionService + Send + Sync>;

/// The layers of a target, outermost first.
#[derive(Clone, Default)]
pub(super) struct Layers(Vec<Wrap>);

impl Layers {
    pub(super) fn push<L>(&mut self, layer: L)
    where
        L: Layer<ActionService> + Send + Sync + 'static,
        L::Service: Service<ActionCall, Response = ToolResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<ActionCall>>::Error: Into<BoxError>,
        <L::Service as Service<ActionCall>>::Future: Send + 'static,
    {
        self.0.push(Arc::new(move |inner| {
            BoxCloneSyncService::new(layer.layer(inner).map_err(Into::into))
        }));
    }

    pub(super) fn extend(&mut self, other: &Layers) {
        self.0.extend(other.0.iter().cloned());
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The stack of `outer`'s layers around `inner`'s around the handler, or `None` when
    /// neither has a layer.
    pub(super) fn stack(outer: &Layers, inner: &Layers) -> Option<ActionService> {
        if outer.is_empty() && inner.is_empty() {
            return None;
        }
        let layers = outer.0.iter().chain(&inner.0).rev();
        Some(layers.fold(handler_service(), |service, layer| layer(service)))
    }
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} layers", self.0.len())
    }
}

/// A layer from an async function of the call and the rest of the stack, like axum's
/// `middleware::from_fn`: the function answers the call itself (a refusal) or runs the rest
/// with [`Next::run`], and may change the response. What it returns is answered like a
/// handler's output ([`IntoToolResponse`]): a `Result` whose error is a [`ToolError`] or a
/// `#[derive(ToolErrors)]` type reaches the model intact; an error without a contract
/// (`anyhow::Error`) becomes `INTERNAL_ERROR` with an `errorId`, its cause logged.
///
/// ```
/// use fusion::guard::{ActionCall, GuardSpec, Next, from_fn};
/// use fusion::{ToolError, ToolResponse};
///
/// /// Refuses calls without a tenant in the request's `_meta`.
/// async fn require_tenant(call: ActionCall, next: Next) -> Result<ToolResponse, ToolError> {
///     if call.context().meta().get("tenant").is_none() {
///         return Err(ToolError::forbidden("No tenant in the request.")
///             .suggest("Ask the user which tenant to act for, then call again."));
///     }
///     Ok(next.run(call).await)
/// }
///
/// let spec = GuardSpec::new().layer(from_fn(require_tenant));
/// ```
pub fn from_fn<F, Fut, R>(f: F) -> FromFnLayer<F>
where
    F: Fn(ActionCall, Next) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResponse,
{
    FromFnLayer(f)
}

/// The layer [`from_fn`] makes.
#[derive(Clone)]
pub struct FromFnLayer<F>(F);

impl<F> fmt::Debug for FromFnLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFnLayer")
    }
}

impl<F: Clone> Layer<ActionService> for FromFnLayer<F> {
    type Service = FromFn<F>;

    fn layer(&self, inner: ActionService) -> FromFn<F> {
        FromFn {
            f: self.0.clone(),
            inner,
        }
    }
}

/// The service of a [`from_fn`] layer.
#[derive(Clone)]
pub struct FromFn<F> {
    f: F,
    inner: ActionService,
}

impl<F> fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F, Fut, R> Service<ActionCall> for FromFn<F>
where
    F: Fn(ActionCall, Next) -> Fut,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResponse,
{
    type Response = ToolResponse;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<ToolResponse, std::convert::Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // The rest of the stack is made ready when `Next::run` calls it.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ActionCall) -> Self::Future {
        let next = Next(self.inner.clone());
        let response = (self.f)(call, next);
        Box::pin(async move { Ok(response.await.into_tool_response()) })
    }
}

/// The rest of a layer stack: the layers inside this one, then the handler.
#[must_use = "the handler runs only when `Next::run` is awaited"]
pub struct Next(ActionService);

impl Next {
    /// Runs the rest of the stack with `call` and returns its response.
    pub async fn run(self, call: ActionCall) -> ToolResponse {
        run(&self.0, call).await
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Next")
    }
}
