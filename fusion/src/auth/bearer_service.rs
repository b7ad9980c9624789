//! The tower service of the bearer-token layer: each request's token checked (as a JWT, or by
//! introspection), then the inner service called with the [`Principal`] or a challenge
//! answered in its place.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};

use super::{BearerAuth, Checks, InvalidToken, Refusal, bearer_token};

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
        if let Ok(token) = bearer_token(request.headers())
            && self.auth.introspects(token)
            && let Some(introspector) = self.auth.config.introspection.clone()
        {
            let token = token.to_owned();
            let auth = self.auth.clone();
            let ready = self.inner.clone();
            let mut inner = std::mem::replace(&mut self.inner, ready);
            return Box::pin(async move {
                match introspector
                    .principal(
                        &token,
                        &Checks::of(&auth.config.validation, &auth.config.scope_claims),
                    )
                    .await
                {
                    Ok(principal) => {
                        request.extensions_mut().insert(principal);
                        inner.call(request).await
                    }
                    Err(refusal) => {
                        let config = &auth.config;
                        Ok(refusal.response(&config.metadata_url, &config.scope))
                    }
                }
            });
        }
        let refusal = match self.auth.authenticate(request.headers()) {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
                return Box::pin(self.inner.call(request));
            }
            Err(refusal) => refusal,
        };
        let auth = self.auth.clone();
        let (Refusal::Invalid(InvalidToken::UnknownKey), Some(jwks)) =
            (&refusal, auth.config.jwks.clone())
        else {
            let response = refusal.response(&auth.config.metadata_url, &auth.config.scope);
            return Box::pin(std::future::ready(Ok(response)));
        };
        // A `kid` the set lacks: fetch it again (rate-limited), then look once more.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        Box::pin(async move {
            jwks.refresh_for_unknown_key().await;
            match auth.authenticate(request.headers()) {
                Ok(principal) => {
                    request.extensions_mut().insert(principal);
                    inner.call(request).await
                }
                Err(refusal) => {
                    let config = &auth.config;
                    Ok(refusal.response(&config.metadata_url, &config.scope))
                }
            }
        })
    }
}
