//! The bearer-token layer: validates the JWT of `Authorization: Bearer` (RFC 6750) for the
//! resource-server role of the MCP authorization specification, puts the [`Principal`] on the
//! request, and answers 401 with a `WWW-Authenticate` challenge naming the resource metadata
//! (RFC 9728 section 5.1) otherwise.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::Principal;
use super::metadata::metadata_url;

/// A tower layer that admits only requests carrying a valid bearer token for this server.
///
/// The token is read from the `Authorization: Bearer <token>` header (RFC 6750 section 2.1;
/// the MCP specification forbids tokens in query strings) and validated as a JWT: its
/// signature by one of the configured keys and algorithms, `exp` (required; 60 seconds of
/// leeway by default), `nbf` when present, `aud` (required: it must name this server's
/// resource URI, RFC 8707, as the MCP specification, Authorization, "Token Audience Binding
/// and Validation", demands), `iss` when issuers are configured, and `sub` (required).
///
/// - A valid token: the request goes on with a [`Principal`] extension (subject, scopes from
///   `scope` or `scp`, all claims; see [`Principal::from_claims`]).
/// - No token (or another scheme, such as `Basic`): `401 Unauthorized` with
///   `WWW-Authenticate: Bearer resource_metadata="<url>"` (RFC 9728 section 5.1), which tells
///   the MCP client where to discover the authorization server.
/// - A token that fails validation: `401` with `WWW-Authenticate: Bearer
///   error="invalid_token", error_description="…", resource_metadata="<url>"` (RFC 6750
///   section 3.1). The description names the failed check (expired, wrong audience, bad
///   signature…), never the token.
/// - `Authorization: Bearer` with an empty token: `400 Bad Request`, `error="invalid_request"`.
///
/// Refusals have an empty body (of the inner service's body type, which must implement
/// `Default`, as axum's and rmcp's do). Scopes are not checked here: the guards check each
/// action's scopes and answer `FORBIDDEN` in the tool result, so a model learns which scope is
/// missing. Put the layer around the MCP endpoint only, not around the metadata document
/// ([`ProtectedResourceMetadata`](super::ProtectedResourceMetadata)), which is public.
///
/// ```
/// use fusion::auth::{BearerAuth, jsonwebtoken::{Algorithm, DecodingKey}};
///
/// let auth = BearerAuth::new(
///     "https://mcp.example.com/mcp",
///     DecodingKey::from_secret(b"a shared secret of at least 32 bytes!").unwrap(),
///     Algorithm::HS256,
/// )
/// .issuer("https://id.example.com");
/// assert_eq!(
///     auth.resource_metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// // let app = axum::Router::new()
/// //     .route_service("/mcp", tower::ServiceBuilder::new().layer(auth).service(mcp))
/// ```
#[derive(Clone)]
pub struct BearerAuth {
    config: Arc<Config>,
}

#[derive(Clone)]
struct Config {
    resource: String,
    metadata_url: String,
    /// Keys with their key id (`kid`); `None`: used for tokens whatever their `kid`.
    keys: Vec<(Option<String>, DecodingKey)>,
    validation: Validation,
}

impl BearerAuth {
    /// Accepts tokens for `resource` (the MCP endpoint's canonical URI, RFC 8707 section 2:
    /// `https://mcp.example.com/mcp`; the audience tokens must name) signed with `key` by
    /// `algorithm`. The resource metadata URL defaults to the RFC 9728 well-known URL of
    /// `resource`.
    pub fn new(resource: impl Into<String>, key: DecodingKey, algorithm: Algorithm) -> BearerAuth {
        let resource = resource.into();
        let mut validation = Validation::new(algorithm);
        validation.set_audience(&[&resource]);
        validation.set_required_spec_claims(&["exp", "aud", "sub"]);
        // jsonwebtoken checks `nbf` only when asked: a token is not valid before it.
        validation.validate_nbf = true;
        BearerAuth {
            config: Arc::new(Config {
                metadata_url: metadata_url(&resource),
                resource,
                keys: vec![(None, key)],
                validation,
            }),
        }
    }

    fn config(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.config)
    }

    /// Adds a key used for tokens whose header names `key_id` (`kid`), for key rotation or
    /// several signers. Tokens with another or no `kid` are checked against the key given to
    /// [`BearerAuth::new`].
    pub fn key(mut self, key_id: impl Into<String>, key: DecodingKey) -> BearerAuth {
        self.config().keys.push((Some(key_id.into()), key));
        self
    }

    /// Sets the accepted algorithms (every key must suit each: an RSA key for `RS256`, an EC
    /// key for `ES256`, a secret for `HS256`). Default: the one given to [`BearerAuth::new`].
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> BearerAuth {
        self.config().validation.algorithms = algorithms.into_iter().collect();
        self
    }

    /// Accepts tokens issued by `issuer` (the `iss` claim, an RFC 8414 issuer URL), and from
    /// then on only tokens of the issuers named this way. Default: any issuer.
    pub fn issuer(mut self, issuer: impl Into<String>) -> BearerAuth {
        let config = self.config();
        let mut issuers: Vec<String> = config.validation.iss.iter().flatten().cloned().collect();
        issuers.push(issuer.into());
        config.validation.set_issuer(&issuers);
        config
            .validation
            .required_spec_claims
            .insert("iss".to_owned());
        self
    }

    /// Accepts `audience` as well as the resource URI in the `aud` claim (an authorization
    /// server that names resources by another identifier).
    pub fn audience(mut self, audience: impl Into<String>) -> BearerAuth {
        let config = self.config();
        config
            .validation
            .aud
            .get_or_insert_with(Default::default)
            .insert(audience.into());
        self
    }

    /// How far past `exp` (and before `nbf`) a token is still accepted, for clock skew
    /// between servers; whole seconds. Default: 60 seconds.
    pub fn leeway(mut self, leeway: Duration) -> BearerAuth {
        self.config().validation.leeway = leeway.as_secs();
        self
    }

    /// Sets the URL the `WWW-Authenticate` challenge names as `resource_metadata` (where
    /// [`ProtectedResourceMetadata`](super::ProtectedResourceMetadata) is served), when not the
    /// well-known URL of the resource.
    pub fn resource_metadata(mut self, url: impl Into<String>) -> BearerAuth {
        self.config().metadata_url = url.into();
        self
    }

    /// The resource URI tokens must be issued for.
    pub fn resource(&self) -> &str {
        &self.config.resource
    }

    /// The URL of the resource metadata the challenge names.
    pub fn resource_metadata_url(&self) -> &str {
        &self.config.metadata_url
    }

    /// Validates `token` (a compact JWT, without the `Bearer ` prefix) as the layer does.
    ///
    /// # Errors
    /// [`InvalidToken`], saying which check failed.
    pub fn validate(&self, token: &str) -> Result<Principal, InvalidToken> {
        let config = &*self.config;
        let header = jsonwebtoken::decode_header(token).map_err(|_| InvalidToken::Malformed)?;
        let mut last = InvalidToken::UnknownKey;
        for (id, key) in &config.keys {
            if id.is_some() && *id != header.kid {
                continue;
            }
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &config.validation) {
                Ok(data) => {
                    return Principal::from_claims(data.claims).ok_or(InvalidToken::Malformed);
                }
                Err(error) => {
                    last = InvalidToken::from_kind(error.kind());
                    if last != InvalidToken::Signature && last != InvalidToken::Algorithm {
                        return Err(last);
                    }
                }
            }
        }
        Err(last)
    }
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.config.resource)
            .field("resource_metadata", &self.config.metadata_url)
            .field("keys", &self.config.keys.len())
            .field("algorithms", &self.config.validation.algorithms)
            .field("issuers", &self.config.validation.iss)
            .finish_non_exhaustive()
    }
}

/// Why a bearer token was refused: the `error_description` of the `invalid_token` challenge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidToken {
    /// Not a readable JWT, or its claims lack `sub`.
    Malformed,
    /// The signature does not verify with the configured keys.
    Signature,
    /// The token's algorithm is not accepted, or does not suit the key.
    Algorithm,
    /// No configured key matches the token's `kid`.
    UnknownKey,
    /// Past `exp` (beyond the leeway).
    Expired,
    /// Before `nbf`.
    NotYetValid,
    /// `aud` does not name this resource.
    Audience,
    /// `iss` is not an accepted issuer.
    Issuer,
    /// A required claim (`exp`, `aud`, `sub`, `iss`) is missing.
    MissingClaim,
}

impl InvalidToken {
    fn from_kind(kind: &ErrorKind) -> InvalidToken {
        match kind {
            ErrorKind::InvalidSignature => InvalidToken::Signature,
            ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
                InvalidToken::Algorithm
            }
            ErrorKind::ExpiredSignature => InvalidToken::Expired,
            ErrorKind::ImmatureSignature => InvalidToken::NotYetValid,
            ErrorKind::InvalidAudience => InvalidToken::Audience,
            ErrorKind::InvalidIssuer => InvalidToken::Issuer,
            ErrorKind::MissingRequiredClaim(_) => InvalidToken::MissingClaim,
            _ => InvalidToken::Malformed,
        }
    }

    /// The `error_description` (RFC 6750 section 3): one sentence of printable ASCII without
    /// quotes or backslashes.
    pub fn description(self) -> &'static str {
        match self {
            InvalidToken::Malformed => "The access token is malformed",
            InvalidToken::Signature => "The access token signature is invalid",
            InvalidToken::Algorithm => "The access token algorithm is not accepted",
            InvalidToken::UnknownKey => "The access token names an unknown key",
            InvalidToken::Expired => "The access token expired",
            InvalidToken::NotYetValid => "The access token is not valid yet",
            InvalidToken::Audience => "The access token was not issued for this resource",
            InvalidToken::Issuer => "The access token was issued by an untrusted issuer",
            InvalidToken::MissingClaim => "The access token lacks a required claim",
        }
    }
}

impl fmt::Display for InvalidToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

impl std::error::Error for InvalidToken {}

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

/// The outcome of reading a request's credentials.
enum Refusal {
    /// No bearer token: a bare challenge.
    NoToken,
    /// `Bearer` with nothing after it.
    Empty,
    /// A token that failed validation.
    Invalid(InvalidToken),
}

impl BearerAuth {
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Refusal::NoToken);
        };
        let value = value.to_str().map_err(|_| Refusal::NoToken)?;
        let Some((scheme, token)) = value.split_once(' ').or(Some((value, ""))) else {
            return Err(Refusal::NoToken);
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(Refusal::NoToken);
        }
        let token = token.trim();
        if token.is_empty() {
            return Err(Refusal::Empty);
        }
        self.validate(token).map_err(Refusal::Invalid)
    }

    /// The refusal response: the status and the `WWW-Authenticate` challenge.
    fn refuse<B: Default>(&self, refusal: &Refusal) -> Response<B> {
        let metadata = &self.config.metadata_url;
        let (status, challenge) = match refusal {
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\""),
            ),
            Refusal::Empty => (
                StatusCode::BAD_REQUEST,
                format!(
                    "Bearer error=\"invalid_request\", error_description=\"The bearer token is \
                     empty\", resource_metadata=\"{metadata}\""
                ),
            ),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", \
                     resource_metadata=\"{metadata}\"",
                    why.description()
                ),
            ),
        };
        let mut response = Response::new(B::default());
        *response.status_mut() = status;
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

impl<S, B, ResBody> tower_service::Service<Request<B>> for BearerAuthService<S>
where
    S: tower_service::Service<Request<B>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
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
        match self.auth.authenticate(request.headers()) {
            Ok(principal) => {
                request.extensions_mut().insert(principal);
                Box::pin(self.inner.call(request))
            }
            Err(refusal) => {
                let response = self.auth.refuse(&refusal);
                Box::pin(std::future::ready(Ok(response)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    const SECRET: &[u8] = b"a test secret of thirty-two bytes!!";
    const RESOURCE: &str = "https://mcp.example.com/mcp";

    fn auth() -> BearerAuth {
        BearerAuth::new(
            RESOURCE,
            DecodingKey::from_secret(SECRET).unwrap(),
            Algorithm::HS256,
        )
        .issuer("https://id.example.com")
    }

    fn token(claims: Value) -> String {
        jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET).unwrap(),
        )
        .unwrap()
    }

    fn now() -> u64 {
        jsonwebtoken::get_current_timestamp()
    }

    fn good() -> Value {
        json!({
            "sub": "alice", "aud": RESOURCE, "iss": "https://id.example.com",
            "exp": now() + 600, "scope": "invoices:read charge",
        })
    }

    #[test]
    fn a_good_token_gives_its_principal() {
        let principal = auth().validate(&token(good())).unwrap();
        assert_eq!(principal.subject(), "alice");
        assert_eq!(principal.scopes(), ["invoices:read", "charge"]);
    }

    #[test]
    fn each_failed_check_is_named() {
        let with = |key: &str, value: Value| {
            let mut claims = good();
            claims[key] = value;
            auth().validate(&token(claims)).unwrap_err()
        };
        assert_eq!(with("exp", json!(now() - 3600)), InvalidToken::Expired);
        assert_eq!(with("nbf", json!(now() + 3600)), InvalidToken::NotYetValid);
        assert!(with("nbf", json!("soon")) == InvalidToken::Malformed);
        assert_eq!(
            with("aud", json!("https://other.example/mcp")),
            InvalidToken::Audience
        );
        assert_eq!(
            with("iss", json!("https://evil.example")),
            InvalidToken::Issuer
        );
        let mut no_sub = good();
        no_sub.as_object_mut().unwrap().remove("sub");
        assert_eq!(
            auth().validate(&token(no_sub)).unwrap_err(),
            InvalidToken::MissingClaim
        );
        let forged = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &good(),
            &EncodingKey::from_secret(b"another secret of thirty-two bytes!").unwrap(),
        )
        .unwrap();
        assert_eq!(
            auth().validate(&forged).unwrap_err(),
            InvalidToken::Signature
        );
        assert_eq!(
            auth().validate("not.a.jwt").unwrap_err(),
            InvalidToken::Malformed
        );
    }

    #[test]
    fn a_second_audience_is_accepted_when_configured() {
        let mut claims = good();
        claims["aud"] = json!("api://billing");
        assert!(auth().validate(&token(claims.clone())).is_err());
        assert!(
            auth()
                .audience("api://billing")
                .validate(&token(claims))
                .is_ok()
        );
    }

    #[test]
    fn challenges_follow_rfc_6750_and_rfc_9728() {
        let auth = auth();
        let challenge = |headers: HeaderMap| {
            let refusal = auth.authenticate(&headers).err().unwrap();
            let response: Response<()> = auth.refuse(&refusal);
            (
                response.status(),
                response.headers()[header::WWW_AUTHENTICATE]
                    .to_str()
                    .unwrap()
                    .to_owned(),
            )
        };
        let metadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            challenge(HeaderMap::new()),
            (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\"")
            )
        );
        let mut basic = HeaderMap::new();
        basic.insert(header::AUTHORIZATION, "Basic YTpi".parse().unwrap());
        assert_eq!(challenge(basic).0, StatusCode::UNAUTHORIZED);
        let mut empty = HeaderMap::new();
        empty.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(challenge(empty).0, StatusCode::BAD_REQUEST);
        let mut expired = good();
        expired["exp"] = json!(now() - 3600);
        let sent = token(expired);
        let mut bad = HeaderMap::new();
        bad.insert(
            header::AUTHORIZATION,
            format!("bearer {sent}").parse().unwrap(),
        );
        let (status, text) = challenge(bad);
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            text,
            format!(
                "Bearer error=\"invalid_token\", error_description=\"The access token expired\", \
                 resource_metadata=\"{metadata}\""
            )
        );
        assert!(!text.contains(&sent));
    }
}
