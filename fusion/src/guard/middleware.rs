//! User-written middleware around action calls: the layer the built-in guards sit in, open to
//! checks of your own (a tenant header, an audit log, a feature flag).

use std::fmt;
use std::sync::Arc;

use crate::context::BoxFuture;
use crate::error::ToolError;
use crate::response::ToolResponse;

use super::GuardRequest;

/// A layer around the calls of a tool or of one action, registered with
/// [`GuardSpec::middleware`](super::GuardSpec::middleware).
///
/// It runs after routing, validation, the rate limits and the concurrency limits, and inside
/// the timeout: it sees only well-formed calls that were admitted. It either answers the call
/// itself (a refusal) or runs the rest of the chain with [`Next::run`] and may change what comes
/// back. A tool's middleware wraps its actions' middleware; within one target, middleware runs
/// in the order it was added.
///
/// Errors follow the handlers' rules (seed "Throwing vs returning"): an `Err` carrying a
/// [`ToolError`] or a `#[derive(ToolErrors)]` type (through `?` or `.into()`) reaches the model
/// intact; an error without a contract (`anyhow::Error`, a boxed error, `std::io::Error`)
/// becomes `INTERNAL_ERROR` with an `errorId`, its cause logged and never shown. A panic is
/// contained like a handler's.
///
/// ```
/// use fusion::guard::{GuardRequest, Middleware, Next};
/// use fusion::{BoxFuture, ErrorCode, ToolError, ToolResponse};
///
/// /// Refuses calls without a tenant in the request's `_meta`.
/// struct RequireTenant;
///
/// impl Middleware for RequireTenant {
///     fn handle<'a>(
///         &'a self,
///         call: &'a GuardRequest<'a>,
///         next: Next<'a>,
///     ) -> BoxFuture<'a, Result<ToolResponse, ToolError>> {
///         Box::pin(async move {
///             if call.context.meta().get("tenant").is_none() {
///                 return Err(ToolError::new(ErrorCode::Unauthorized, "No tenant in the request.")
///                     .suggest("Ask the user which tenant to act for."));
///             }
///             Ok(next.run().await)
///         })
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles one call: `call` names the tool and action and carries the request context;
    /// `next` runs the rest of the chain and, at its end, the handler.
    fn handle<'a>(
        &'a self,
        call: &'a GuardRequest<'a>,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<ToolResponse, ToolError>>;
}

/// The rest of a middleware chain: the middleware after this one, then the handler.
#[must_use = "the handler runs only when `Next::run` is awaited"]
pub struct Next<'a> {
    call: &'a GuardRequest<'a>,
    rest: &'a [Arc<dyn Middleware>],
    handler: BoxFuture<'a, ToolResponse>,
}

impl<'a> Next<'a> {
    /// Runs the rest of the chain and returns its response.
    pub async fn run(self) -> ToolResponse {
        chain(self.call, self.rest, self.handler).await
    }
}

impl fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("remaining_middleware", &self.rest.len())
            .finish_non_exhaustive()
    }
}

/// Runs `handler` through `layers`, outermost first.
pub(super) fn chain<'a>(
    call: &'a GuardRequest<'a>,
    layers: &'a [Arc<dyn Middleware>],
    handler: BoxFuture<'a, ToolResponse>,
) -> BoxFuture<'a, ToolResponse> {
    match layers.split_first() {
        None => handler,
        Some((first, rest)) => Box::pin(async move {
            let next = Next {
                call,
                rest,
                handler,
            };
            first
                .handle(call, next)
                .await
                .unwrap_or_else(ToolResponse::error)
        }),
    }
}

/// The middleware of a target, in order; printable for `GuardSpec`'s `Debug`.
#[derive(Clone, Default)]
pub(super) struct Layers(pub(super) Vec<Arc<dyn Middleware>>);

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} middleware", self.0.len())
    }
}
