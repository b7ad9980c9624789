//! What a layer of the MCP route's front hands a request on to: the layers after it and rmcp's
//! service. The front ([`super::front`]) nests the layers' functions in one future, each given
//! the rest as a closure, so that a request makes one allocation for the whole front, not the
//! three per layer (a boxed future, a boxed copy of the services behind, and its boxed future)
//! of an `axum::middleware::from_fn` layer. axum's own `Next` is one too, so each function also
//! runs alone as such a layer (the layers' tests do so).

use std::future::Future;

use axum::extract::Request;
use axum::response::Response;

/// The rest of the front, run once with the request.
pub(super) trait Next: Send {
    /// Runs the rest with `request`: its response.
    fn run(self, request: Request) -> impl Future<Output = Response> + Send;
}

impl<F, Fut> Next for F
where
    F: FnOnce(Request) -> Fut + Send,
    Fut: Future<Output = Response> + Send,
{
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        self(request)
    }
}

impl Next for axum::middleware::Next {
    fn run(self, request: Request) -> impl Future<Output = Response> + Send {
        axum::middleware::Next::run(self, request)
    }
}
