//! The bearer-token layer: validates the JWT of `Authorization: Bearer` (RFC 6750) for the
//! resource-server role of the MCP authorization specification, puts the [`Principal`] on the
//! request, and answers with a `WWW-Authenticate` challenge ([`super::challenge`]) otherwise.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, Request, Response, header};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::Principal;
use super::challenge::{InvalidToken, Refusal, is_scope_token};
use super::metadata::metadata_url;

/// A tower layer that admits only requests carrying a valid bearer token for this server.
///
/// The token is read from the `Authorization: Bearer <token>` header (RFC 6750 section 2.1;
/// the MCP specification forbids tokens in query strings) and validated as a JWT access token
/// (RFC 9068 section 4): its `typ` header (`at+jwt`, unless
/// [`accept_untyped_jwt`](BearerAuth::accept_untyped_jwt)), its signature by one of the
/// configured keys and algorithms, `iss` (required: one of the configured issuers, unless
/// built with [`BearerAuth::any_issuer`]), `aud` (required: it must name this server's
/// resource URI, RFC 8707, as the MCP specification, Authorization, "Token Audience Binding
/// and Validation", demands), `exp` (required; 60 seconds of leeway by default), `nbf` when
/// present, and `sub` (required).
///
/// - A valid token: the request goes on with a [`Principal`] extension (subject, scopes from
///   `scope` or `scp`, all claims; see [`Principal::from_claims`]).
/// - No token (or another scheme, such as `Basic`): `401 Unauthorized` with
///   `WWW-Authenticate: Bearer resource_metadata="<url>", scope="<scopes>"` (RFC 9728 section
///   5.1; `scope` as set with [`scopes`](BearerAuth::scopes), RFC 6750 section 3), which tells
///   the MCP client where to discover the authorization server and what to ask it for.
/// - A token that fails validation: `401` with `WWW-Authenticate: Bearer
///   error="invalid_token", error_description="…", resource_metadata="<url>", scope="…"` (RFC
///   6750 section 3.1). The description names the failed check (expired, wrong audience, bad
///   signature…), never the token.
/// - A malformed request, `Authorization: Bearer` with an empty token or more than one
///   `Authorization` header: `400 Bad Request`, `error="invalid_request"` (RFC 6750 section
///   3.1).
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
///     "https://id.example.com",
///     DecodingKey::from_secret(b"a shared secret of at least 32 bytes!").unwrap(),
///     Algorithm::HS256,
/// )
/// .scopes(["invoices:read", "charge"]);
/// assert_eq!(
///     auth.resource_metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// // In front of the MCP endpoint: `server.http().layer(auth)`, then `.serve(addr)`, or
/// // `.into_service()` nested in your axum app (`Router::nest_service("/mcp", ..)`).
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
    /// Whether a `typ` of `JWT`, or none, passes besides `at+jwt`.
    untyped: bool,
    /// The `scope` of the 401 challenges: space-separated scope tokens, or empty.
    scope: String,
}

impl BearerAuth {
    /// Accepts tokens for `resource` (the MCP endpoint's canonical URI, RFC 8707 section 2:
    /// `https://mcp.example.com/mcp`; the audience tokens must name) issued by `issuer` (the
    /// `iss` claim: the authorization server's RFC 8414 issuer identifier, exactly as its
    /// metadata and tokens write it, `https://id.example.com`) and signed with `key` by
    /// `algorithm`. [`issuer`](BearerAuth::issuer) accepts more issuers. The resource
    /// metadata URL defaults to the RFC 9728 well-known URL of `resource`.
    ///
    /// The issuer is required (RFC 9068 section 4, RFC 8725 section 3.8): keys often sign for
    /// more than one issuer (every tenant of a multi-tenant identity provider, a staging and a
    /// production realm), and only `iss` tells their tokens apart.
    pub fn new(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        key: DecodingKey,
        algorithm: Algorithm,
    ) -> BearerAuth {
        BearerAuth::any_issuer(resource, key, algorithm).issuer(issuer)
    }

    /// Like [`BearerAuth::new`], but accepts tokens whatever their issuer, with or without
    /// `iss`: whoever holds a signing key the layer trusts can mint tokens for any issuer it
    /// likes. For tests and development with keys of your own; a server behind a real
    /// authorization server names it with [`BearerAuth::new`]. Calling
    /// [`issuer`](BearerAuth::issuer) afterwards restricts it to the issuers named.
    pub fn any_issuer(
        resource: impl Into<String>,
        key: DecodingKey,
        algorithm: Algorithm,
    ) -> BearerAuth {
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
                untyped: false,
                scope: String::new(),
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

    /// Accepts tokens issued by `issuer` (the `iss` claim, an RFC 8414 issuer identifier,
    /// compared exactly) as well as those named before; after [`BearerAuth::any_issuer`],
    /// only tokens of the issuers named this way.
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
    /// server that names resources by another identifier). Never a client id: an ID token's
    /// `aud` is the client id it was issued to.
    pub fn audience(mut self, audience: impl Into<String>) -> BearerAuth {
        let config = self.config();
        config
            .validation
            .aud
            .get_or_insert_with(Default::default)
            .insert(audience.into());
        self
    }

    /// Also accepts tokens whose `typ` header is `JWT` (or `application/jwt`) or absent,
    /// besides the `at+jwt` of RFC 9068. For authorization servers that do not type their
    /// access tokens: Keycloak, Auth0 (unless the API's token profile is RFC 9068), Microsoft
    /// Entra ID (`JWT`) and Okta's custom authorization servers (no `typ`) among them.
    ///
    /// By default only `at+jwt` passes (RFC 9068 sections 2.1 and 4, RFC 8725 section 3.11):
    /// an ID token, typed `JWT` and signed by the same keys, cannot then stand in for an
    /// access token. With this setting the audience check alone keeps ID tokens out (their
    /// `aud` is the client id), so do not add a client id with
    /// [`audience`](BearerAuth::audience).
    pub fn accept_untyped_jwt(mut self) -> BearerAuth {
        self.config().untyped = true;
        self
    }

    /// The scopes the `scope` attribute of the 401 challenges names (RFC 6750 section 3):
    /// what an MCP client asks the authorization server for when it signs in (MCP
    /// specification, Authorization, "Scope Selection Strategy"). Give the scopes your
    /// actions use, the `scopes_supported` of the resource metadata: fusion answers a missing
    /// scope in the tool result, not with a step-up challenge, so a token lacking one gets
    /// no second chance to ask. Each is a scope token (RFC 6749 section 3.3: printable ASCII,
    /// no space, quote or backslash); others are left out. Default: none, and no `scope`
    /// attribute (a client then asks for every scope of `scopes_supported`).
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> BearerAuth {
        let mut named: Vec<String> = Vec::new();
        for scope in scopes {
            let scope = scope.into();
            if is_scope_token(&scope) && !named.contains(&scope) {
                named.push(scope);
            }
        }
        self.config().scope = named.join(" ");
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
        if !is_access_token_type(header.typ.as_deref(), config.untyped) {
            return Err(InvalidToken::Type);
        }
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

    /// The principal of a request's credentials, or why there is none.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Err(Refusal::NoToken);
        };
        if values.next().is_some() {
            return Err(Refusal::SeveralCredentials);
        }
        let value = value.to_str().map_err(|_| Refusal::NoToken)?;
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(Refusal::NoToken);
        }
        let token = token.trim();
        if token.is_empty() {
            return Err(Refusal::Empty);
        }
        self.validate(token).map_err(Refusal::Invalid)
    }
}

/// Whether a JWT's `typ` header marks an access token: `at+jwt` (RFC 9068 section 2.1), with
/// or without the `application/` prefix (RFC 7515 section 4.1.9), in any case (media types
/// compare case-insensitively, RFC 2045); with `untyped`, also `JWT` or no `typ`.
fn is_access_token_type(typ: Option<&str>, untyped: bool) -> bool {
    let Some(typ) = typ else {
        return untyped;
    };
    let typ = typ.to_ascii_lowercase();
    let typ = typ.strip_prefix("application/").unwrap_or(&typ);
    typ == "at+jwt" || (untyped && typ == "jwt")
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.config.resource)
            .field("resource_metadata", &self.config.metadata_url)
            .field("keys", &self.config.keys.len())
            .field("algorithms", &self.config.validation.algorithms)
            .field("issuers", &self.config.validation.iss)
            .field("accept_untyped_jwt", &self.config.untyped)
            .field("scopes", &self.config.scope)
            .finish_non_exhaustive()
    }
}

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
                let config = &self.auth.config;
                let response = refusal.response(&config.metadata_url, &config.scope);
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
            "https://id.example.com",
            DecodingKey::from_secret(SECRET).unwrap(),
            Algorithm::HS256,
        )
    }

    /// `claims` signed as an access token (`typ: at+jwt`).
    fn token(claims: Value) -> String {
        typed(Some("at+jwt"), claims)
    }

    fn typed(typ: Option<&str>, claims: Value) -> String {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(SECRET).unwrap()).unwrap()
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
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some("at+jwt".to_owned());
        let forged = jsonwebtoken::encode(
            &header,
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
    fn a_token_of_another_issuer_or_of_none_is_refused() {
        let mut evil = good();
        evil["iss"] = json!("https://evil.example");
        assert_eq!(
            auth().validate(&token(evil.clone())).unwrap_err(),
            InvalidToken::Issuer
        );
        let mut none = good();
        none.as_object_mut().unwrap().remove("iss");
        assert_eq!(
            auth().validate(&token(none.clone())).unwrap_err(),
            InvalidToken::MissingClaim
        );
        assert!(
            auth()
                .issuer("https://evil.example")
                .validate(&token(evil.clone()))
                .is_ok()
        );
        // Only when asked for by name.
        let any = BearerAuth::any_issuer(
            RESOURCE,
            DecodingKey::from_secret(SECRET).unwrap(),
            Algorithm::HS256,
        );
        assert!(any.validate(&token(evil)).is_ok());
        assert!(any.validate(&token(none)).is_ok());
    }

    #[test]
    fn only_access_tokens_typed_at_jwt_are_accepted() {
        for typ in [
            "at+jwt",
            "application/at+jwt",
            "AT+JWT",
            "Application/At+Jwt",
        ] {
            assert!(auth().validate(&typed(Some(typ), good())).is_ok(), "{typ}");
        }
        for typ in [Some("JWT"), None, Some("id+jwt"), Some("at+jwt2")] {
            assert_eq!(
                auth().validate(&typed(typ, good())).unwrap_err(),
                InvalidToken::Type,
                "{typ:?}"
            );
        }
        let untyped = auth().accept_untyped_jwt();
        for typ in [Some("at+jwt"), Some("JWT"), Some("application/jwt"), None] {
            assert!(untyped.validate(&typed(typ, good())).is_ok(), "{typ:?}");
        }
        assert_eq!(
            untyped
                .validate(&typed(Some("id+jwt"), good()))
                .unwrap_err(),
            InvalidToken::Type
        );
        // An ID token (typed JWT, `aud` the client id) is still refused for its audience.
        let mut id_token = good();
        id_token["aud"] = json!("billing-client");
        assert_eq!(
            untyped.validate(&typed(Some("JWT"), id_token)).unwrap_err(),
            InvalidToken::Audience
        );
    }

    #[test]
    fn the_challenge_scopes_are_scope_tokens_each_once() {
        let auth = auth().scopes(["invoices:read", "charge", "invoices:read", "two words", ""]);
        assert_eq!(auth.config.scope, "invoices:read charge");
        let response: Response<()> = Refusal::NoToken.response("", &auth.config.scope);
        assert!(
            response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap()
                .ends_with(", scope=\"invoices:read charge\""),
        );
    }

    #[test]
    fn credentials_come_from_one_authorization_header() {
        let refusal = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(header::AUTHORIZATION, value.parse().unwrap());
            }
            auth().authenticate(&headers).err()
        };
        let sent = format!("Bearer {}", token(good()));
        assert_eq!(refusal(&[&sent]), None);
        assert_eq!(refusal(&[]), Some(Refusal::NoToken));
        assert_eq!(refusal(&["Basic YTpi"]), Some(Refusal::NoToken));
        assert_eq!(refusal(&["Bearer "]), Some(Refusal::Empty));
        // RFC 6750 section 3.1: more than one set of credentials is a malformed request.
        for twice in [[sent.as_str(), &sent], [&sent, "Basic YTpi"]] {
            assert_eq!(refusal(&twice), Some(Refusal::SeveralCredentials));
        }
        let mut expired = good();
        expired["exp"] = json!(now() - 3600);
        assert_eq!(
            refusal(&[&format!("bearer {}", token(expired))]),
            Some(Refusal::Invalid(InvalidToken::Expired))
        );
    }
}
