//! The tower service of the bearer-token layer: each request's token checked (as a JWT, or by
//! introspection), then the inner service called with the [`Principal`] or a challenge
//! answered in its place.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};

use super::{BearerAuth, Checks, InvalidToken, Principal, Refusal, bearer_token};

impl<S> tower_layer::Layer<S> for BearerAuth {
    type Service = BearerAuthService<S>;

    fn layer(&self, inner: S) -> BearerAuthService<S> {
        BearerAuthService {
            inner,
            auth: self.clone(),
        }
    }
}

/// The service [`BearerAuth`] wraps around an inner service (the MCP endpoint).
#[derive(Clone, Debug)]
pub struct BearerAuthService<S> {
    inner: S,
    auth: BearerAuth,
}

impl<S, B, ResBody> tower_service::Service<Request<B>> for BearerAuthService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    S::Error: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResBody>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let auth = self.auth.clone();
        if let Ok(token) = bearer_token(request.headers())
            && auth.introspects(token)
            && let Some(introspector) = auth.config.introspection.clone()
        {
            let token = token.to_owned();
            let inner = self.take_inner();
            return Box::pin(async move {
                let checks = Checks::of(&auth.config.validation, &auth.config.scope_claims);
                let outcome = introspector.principal(&token, &checks).await;
                answer(&auth, inner, request, outcome).await
            });
        }
        match auth.authenticate(request.headers()) {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
                Box::pin(self.inner.call(request))
            }
            Err(Refusal::Invalid(InvalidToken::UnknownKey)) if auth.config.jwks.is_some() => {
                // A `kid` the set lacks: fetch it again (rate-limited), then look once more.
                let inner = self.take_inner();
                Box::pin(async move {
                    if let Some(jwks) = &auth.config.jwks {
                        jwks.refresh_for_unknown_key().await;
                    }
                    let outcome = auth.authenticate(request.headers());
                    answer(&auth, inner, request, outcome).await
                })
            }
            Err(refusal) => Box::pin(std::future::ready(Ok(refuse(&auth, refusal)))),
        }
    }
}

impl<S: Clone> BearerAuthService<S> {
    /// The inner service, for a future that outlives this call: the one `poll_ready` readied,
    /// a clone left in its place (the tower contract for services moved into futures).
    fn take_inner(&mut self) -> S {
        let ready = self.inner.clone();
        std::mem::replace(&mut self.inner, ready)
    }
}

/// The inner service's answer with the principal on the request, or the challenge of a
/// refusal.
async fn answer<S, B, ResBody>(
    auth: &BearerAuth,
    mut inner: S,
    mut request: Request<B>,
    outcome: Result<Principal, Refusal>,
) -> Result<Response<ResBody>, S::Error>
where
    S: tower_service::Service<Request<B>, Response = Response<ResBody>>,
    ResBody: Default,
{
    match outcome {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            inner.call(request).await
        }
        Err(refusal) => Ok(refuse(auth, refusal)),
    }
}

/// The `WWW-Authenticate` challenge answering `refusal`.
fn refuse<ResBody: Default>(auth: &BearerAuth, refusal: Refusal) -> Response<ResBody> {
    refusal.response(&auth.config.metadata_url, &auth.config.scope)
}
