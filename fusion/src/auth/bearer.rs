//! The bearer-token layer: validates the JWT of `Authorization: Bearer` (RFC 6750) for the
//! resource-server role of the MCP authorization specification, puts the [`Principal`] on the
//! request, and answers with a `WWW-Authenticate` challenge ([`super::challenge`]) otherwise.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, header};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::Principal;
use super::cache::{self, TokenCache, Verified};
use super::challenge::{InvalidToken, Refusal, is_scope_token};
use super::introspection::{Checks, Introspection, Introspector};
use super::jwks::{ASYMMETRIC, Jwks, KeySet};
use super::metadata::metadata_url;

#[path = "bearer_service.rs"]
mod service;
pub use service::BearerAuthService;

/// How many verified tokens a layer remembers by default.
const TOKEN_CACHE: usize = 10_000;

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
/// The keys are given at start-up ([`BearerAuth::new`], for tests and development) or fetched
/// from the authorization server's JWKS and kept up to date ([`BearerAuth::from_jwks`]). A
/// token verified once is remembered until its `exp` (see
/// [`token_cache`](BearerAuth::token_cache)), so a caller's later requests skip the signature
/// check.
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
/// - A malformed request, `Authorization: Bearer` with an empty token or one that is not
///   visible ASCII, or more than one `Authorization` header: `400 Bad Request`,
///   `error="invalid_request"` (RFC 6750 section 3.1).
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
    /// The authorization server's key set, besides `keys`.
    jwks: Option<Jwks>,
    /// Tokens verified, for this configuration only: a change makes a new one.
    cache: Arc<TokenCache>,
    validation: Validation,
    /// Whether a `typ` of `JWT`, or none, passes besides `at+jwt`.
    untyped: bool,
    /// The `scope` of the 401 challenges: space-separated scope tokens, or empty.
    scope: String,
    /// Where tokens that are not JWTs are checked.
    introspection: Option<Arc<Introspector>>,
    /// Claims read as scopes besides `scope` and `scp`.
    scope_claims: Vec<String>,
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
        BearerAuth::build(resource.into(), vec![(None, key)], None, &[algorithm])
    }

    /// A layer for `resource` with `keys` and `jwks`, accepting `algorithms`, any issuer.
    fn build(
        resource: String,
        keys: Vec<(Option<String>, DecodingKey)>,
        jwks: Option<Jwks>,
        algorithms: &[Algorithm],
    ) -> BearerAuth {
        let mut validation = Validation::new(algorithms[0]);
        validation.algorithms = algorithms.to_vec();
        validation.set_audience(&[&resource]);
        validation.set_required_spec_claims(&["exp", "aud", "sub"]);
        // jsonwebtoken checks `nbf` only when asked: a token is not valid before it.
        validation.validate_nbf = true;
        BearerAuth {
            config: Arc::new(Config {
                metadata_url: metadata_url(&resource),
                resource,
                keys,
                jwks,
                cache: Arc::new(TokenCache::new(TOKEN_CACHE)),
                validation,
                untyped: false,
                scope: String::new(),
                introspection: None,
                scope_claims: Vec::new(),
            }),
        }
    }

    /// Accepts tokens for `resource` issued by `issuer` (as for [`BearerAuth::new`]) and signed
    /// by a key of `jwks`, the authorization server's key set, kept up to date as it rotates
    /// them. Each key verifies the asymmetric algorithms of its type (or its `alg`), never an
    /// HMAC one; [`algorithms`](BearerAuth::algorithms) narrows them. A token naming a `kid`
    /// the set lacks makes it fetch the set again (rate-limited, see [`Jwks`]).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), fusion::auth::FetchError> {
    /// use fusion::auth::{BearerAuth, Jwks};
    ///
    /// let issuer = "https://id.example.com/realms/main";
    /// let auth = BearerAuth::from_jwks(
    ///     "https://mcp.example.com/mcp",
    ///     issuer,
    ///     Jwks::discover(issuer).await?,
    /// )
    /// .accept_untyped_jwt();
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_jwks(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        jwks: Jwks,
    ) -> BearerAuth {
        BearerAuth::build(resource.into(), Vec::new(), Some(jwks), &ASYMMETRIC).issuer(issuer)
    }

    /// Accepts tokens for `resource` that the authorization server `issuer` says are active at
    /// its introspection endpoint (RFC 7662): opaque tokens, or JWTs of keys not held here.
    pub fn from_introspection(
        resource: impl Into<String>,
        issuer: impl Into<String>,
        introspection: Introspection,
    ) -> BearerAuth {
        BearerAuth::build(resource.into(), Vec::new(), None, &ASYMMETRIC)
            .issuer(issuer)
            .introspection(introspection)
    }

    /// Checks tokens that are not JWTs (not three base64url segments with a JSON header), and
    /// every token when the layer has no keys, at `introspection`'s endpoint. An active answer
    /// must name this resource in `aud` (or an [`audience`](BearerAuth::audience)), an
    /// accepted issuer in `iss` if any, and not be past `exp`; the subject is `sub`, else
    /// `client_id`. See [`Introspection`] for the answers to failures and the caching.
    pub fn introspection(mut self, introspection: Introspection) -> BearerAuth {
        self.config().introspection = Some(Arc::new(introspection.start()));
        self
    }

    /// Whether `token` is checked by introspection rather than as a JWT.
    fn introspects(&self, token: &str) -> bool {
        let config = &*self.config;
        config.introspection.is_some()
            && ((config.keys.is_empty() && config.jwks.is_none())
                || jsonwebtoken::decode_header(token).is_err())
    }

    /// The configuration to change; tokens verified under the old one are forgotten.
    fn config(&mut self) -> &mut Config {
        let config = Arc::make_mut(&mut self.config);
        config.cache = Arc::new(TokenCache::new(config.cache.capacity()));
        config
    }

    /// How many verified tokens are remembered (keyed by the SHA-256 of the token, never the
    /// token): a request whose token was verified before skips the signature check while the
    /// token has not reached its `exp` and its key is still in the key set. When full, expired
    /// entries are dropped first, then an arbitrary eighth of the others. Each entry holds the
    /// token's claims. `0` turns the cache off. Default: 10,000.
    pub fn token_cache(mut self, capacity: usize) -> BearerAuth {
        self.config().cache = Arc::new(TokenCache::new(capacity));
        self
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

    /// Also reads scopes from `claims`, each a claim name or a dotted path to a space-separated
    /// string or an array of strings (Auth0's `permissions`, Keycloak's `realm_access.roles`),
    /// besides `scope` and `scp`. A path that is itself a claim's name is read as that claim
    /// (a namespaced claim: `https://example.com/roles`); otherwise each name along it may hold
    /// dots (`resource_access.my.app.roles`, for the client `my.app`). Default: none.
    pub fn scope_claims(
        mut self,
        claims: impl IntoIterator<Item = impl Into<String>>,
    ) -> BearerAuth {
        self.config().scope_claims = claims.into_iter().map(Into::into).collect();
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
        let keys = config.jwks.as_ref().map(Jwks::current);
        let digest = cache::digest(token);
        let now = jsonwebtoken::get_current_timestamp();
        if let Some(principal) = config.cache.get(&digest, now, keys.as_deref()) {
            return Ok(principal);
        }
        let (claims, key) = self.verify(token, keys.as_deref())?;
        let exp = claims.get("exp").and_then(Value::as_u64);
        let principal = Principal::from_claims(claims).ok_or(InvalidToken::Malformed)?;
        let principal = principal.with_scopes_at(&config.scope_claims);
        if let Some(exp) = exp {
            let verified = Verified {
                principal: principal.clone(),
                exp,
                key,
            };
            config.cache.insert(digest, verified, now);
        }
        Ok(principal)
    }

    /// Checks `token`'s type, signature and claims against the keys given and the key set
    /// `keys`; returns its claims and the serial of the set's key that verified it.
    fn verify(
        &self,
        token: &str,
        keys: Option<&KeySet>,
    ) -> Result<(Map<String, Value>, Option<u64>), InvalidToken> {
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
            match attempt(token, key, &config.validation)? {
                Ok(claims) => return Ok((claims, None)),
                Err(why) => last = why,
            }
        }
        // Keys of the set: those of the token's `kid` (all, for a token without one), each for
        // the accepted algorithms of its type.
        for key in keys.map_or(&[][..], |keys| &keys.keys) {
            if header.kid.is_some() && key.id.is_some() && key.id != header.kid {
                continue;
            }
            let mut validation = config.validation.clone();
            validation
                .algorithms
                .retain(|alg| key.algorithms.contains(alg));
            if validation.algorithms.is_empty() {
                last = InvalidToken::Algorithm;
                continue;
            }
            match attempt(token, &key.key, &validation)? {
                Ok(claims) => return Ok((claims, Some(key.serial))),
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    /// The principal of a request's credentials, or why there is none.
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
        self.validate(bearer_token(headers)?)
            .map_err(Refusal::Invalid)
    }
}

/// The bearer token of a request, or why there is none.
fn bearer_token(headers: &HeaderMap) -> Result<&str, Refusal> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::NoToken);
    };
    if values.next().is_some() {
        return Err(Refusal::SeveralCredentials);
    }
    let bytes = value.as_bytes();
    let scheme = bytes.split(|&b| b == b' ').next().unwrap_or_default();
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Err(Refusal::NoToken);
    }
    // A token is visible ASCII (RFC 6750 section 2.1, `b64token`): anything else is malformed.
    let value = value.to_str().map_err(|_| Refusal::NotAscii)?;
    let (_, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim();
    if token.is_empty() {
        return Err(Refusal::Empty);
    }
    // A space or tab inside is not visible ASCII either (`Bearer a b`).
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Refusal::NotAscii);
    }
    Ok(token)
}

/// Decodes `token` with `key`: its claims, or (inner `Err`) a signature or algorithm failure
/// another key may not have; (outer `Err`) any other failure is the token's, whatever the key.
fn attempt(
    token: &str,
    key: &DecodingKey,
    validation: &Validation,
) -> Result<Result<Map<String, Value>, InvalidToken>, InvalidToken> {
    match jsonwebtoken::decode::<Map<String, Value>>(token, key, validation) {
        Ok(data) => Ok(Ok(data.claims)),
        Err(error) => match InvalidToken::from_kind(error.kind()) {
            why @ (InvalidToken::Signature | InvalidToken::Algorithm) => Ok(Err(why)),
            why => Err(why),
        },
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
            .field("jwks", &self.config.jwks)
            .field("token_cache", &self.config.cache.capacity())
            .field("algorithms", &self.config.validation.algorithms)
            .field("issuers", &self.config.validation.iss)
            .field("accept_untyped_jwt", &self.config.untyped)
            .field("scopes", &self.config.scope)
            .field("introspection", &self.config.introspection.is_some())
            .field("scope_claims", &self.config.scope_claims)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "bearer_tests.rs"]
mod tests;
