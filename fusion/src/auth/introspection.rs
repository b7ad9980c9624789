//! Opaque access tokens: asking the authorization server whether a token is active (OAuth 2.0
//! Token Introspection, RFC 7662), with the answers kept for a bounded time.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jsonwebtoken::Validation;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Map, Value};
use tokio::sync::{OnceCell, Semaphore};

use super::Principal;
use super::cache::{self, Digest, TokenCache, Verified};
use super::challenge::{InvalidToken, Refusal};
use super::fetch::{
    Discovery, FetchError, client, client_without_redirects, discover, is_allowed, send_json,
};

/// How long an active answer is kept at most, by default.
const MAX_AGE: Duration = Duration::from_secs(60);
/// How long the authorization server has to answer, by default.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest introspection response read, by default.
const MAX_BYTES: usize = 64 * 1024;
/// How many active answers are kept by default.
const CAPACITY: usize = 10_000;
/// How many introspections may be under way at once, by default.
const MAX_CONCURRENT: usize = 64;

/// How the resource server authenticates to the introspection endpoint (RFC 7662 section
/// 2.1, with the client authentication methods of RFC 6749 section 2.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// HTTP Basic with the form-encoded client id and secret (`client_secret_basic`).
    Basic,
    /// `client_id` and `client_secret` in the form body (`client_secret_post`).
    Post,
}

/// A token introspection endpoint (RFC 7662) and the credentials the resource server
/// authenticates to it with: the second way [`BearerAuth`](super::BearerAuth) validates
/// tokens, for opaque (non-JWT) access tokens.
///
/// Each token is POSTed once (`token=…&token_type_hint=access_token`); concurrent requests
/// carrying the same token share one introspection. An `active: true` answer is kept, keyed by
/// the SHA-256 of the token, until the earliest of the token's `exp` and
/// [`max_age`](Introspection::max_age) (default 60 seconds): a token revoked at the
/// authorization server keeps working here for at most that long. An `active: false` answer
/// is not kept: a revoked token seen again is asked about again.
///
/// An inactive token gets `401` with `error="invalid_token"` (RFC 6750 section 3.1). An
/// endpoint that fails (no answer within the [`timeout`](Introspection::timeout), an error
/// status, malformed JSON, a body over [`max_bytes`](Introspection::max_bytes)) gets `503
/// Service Unavailable` with `Retry-After: 5` and no challenge, and a warning in the log: an
/// outage of the authorization server is not the caller's fault, and a 401 would make the
/// client throw away a token that may be good. Other tokens' requests do not wait for it.
/// At most [`max_concurrent`](Introspection::max_concurrent) introspections (default 64) are
/// under way at once; a request whose token would need one more gets the same `503` at once.
/// Redirects from the endpoint are not followed (they would resend the client credentials
/// and the token elsewhere): a `3xx` answer is a failure too.
///
/// ```no_run
/// # async fn demo() -> Result<(), fusion::auth::FetchError> {
/// use fusion::auth::{BearerAuth, Introspection, Jwks};
///
/// let issuer = "https://id.example.com";
/// let auth = BearerAuth::from_jwks("https://mcp.example.com/mcp", issuer, Jwks::discover(issuer).await?)
///     .introspection(Introspection::discover(issuer, "mcp-server", "its secret").await?);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Introspection {
    endpoint: String,
    client_id: String,
    client_secret: String,
    method: ClientAuth,
    timeout: Duration,
    max_bytes: usize,
    max_age: Duration,
    capacity: usize,
    max_concurrent: usize,
}

impl Introspection {
    /// Introspects at `endpoint` (`https`, or `http` to a loopback address) as the client
    /// `client_id` with `client_secret`, by `client_secret_basic`.
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Introspection {
        Introspection {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            method: ClientAuth::Basic,
            timeout: TIMEOUT,
            max_bytes: MAX_BYTES,
            max_age: MAX_AGE,
            capacity: CAPACITY,
            max_concurrent: MAX_CONCURRENT,
        }
    }

    /// Reads the `introspection_endpoint` from the authorization server metadata of `issuer`
    /// (RFC 8414 section 2: `/.well-known/oauth-authorization-server` inserted before the
    /// issuer's path, else OpenID Connect Discovery's `<issuer>/.well-known/openid-configuration`).
    ///
    /// # Errors
    /// [`FetchError`] when neither document can be read, names another issuer or no
    /// `introspection_endpoint`.
    pub async fn discover(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Introspection, FetchError> {
        let http = client(TIMEOUT)?;
        let endpoint = discover(
            &http,
            &issuer.into(),
            Discovery::OauthFirst,
            "introspection_endpoint",
            MAX_BYTES,
        )
        .await?;
        Ok(Introspection::new(endpoint, client_id, client_secret))
    }

    /// How the client authenticates: `client_secret_basic` (default) or `client_secret_post`.
    pub fn client_auth(mut self, method: ClientAuth) -> Introspection {
        self.method = method;
        self
    }

    /// How long the authorization server has to answer, connection included. Default: 5
    /// seconds.
    pub fn timeout(mut self, timeout: Duration) -> Introspection {
        self.timeout = timeout;
        self
    }

    /// The largest response read, in bytes. Default: 64 KiB.
    pub fn max_bytes(mut self, max_bytes: usize) -> Introspection {
        self.max_bytes = max_bytes;
        self
    }

    /// How long an active answer is kept at most (never past the token's `exp`): the longest a
    /// token revoked at the authorization server keeps working here. `0` asks on every
    /// request. Whole seconds. Default: 60 seconds.
    pub fn max_age(mut self, max_age: Duration) -> Introspection {
        self.max_age = max_age;
        self
    }

    /// How many active answers are kept (see [`BearerAuth::token_cache`](super::BearerAuth::token_cache)).
    /// Default: 10,000.
    pub fn cache_capacity(mut self, capacity: usize) -> Introspection {
        self.capacity = capacity;
        self
    }

    /// How many introspections may be under way at once (requests sharing one token's
    /// introspection count once). A request whose token would need one more is answered `503`
    /// with `Retry-After` at once, as an outage of the endpoint, so that a flood of distinct
    /// tokens opens no more than this many connections to it. Default: 64.
    pub fn max_concurrent(mut self, max_concurrent: usize) -> Introspection {
        self.max_concurrent = max_concurrent;
        self
    }

    /// The introspection endpoint.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The running state of this configuration: the HTTP client, the cache, the flights.
    pub(super) fn start(self) -> Introspector {
        Introspector {
            http: client_without_redirects(self.timeout),
            cache: TokenCache::new(self.capacity),
            flights: Mutex::new(HashMap::new()),
            slots: Semaphore::new(self.max_concurrent),
            config: self,
        }
    }
}

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_auth", &self.method)
            .field("timeout", &self.timeout)
            .field("max_age", &self.max_age)
            .field("max_concurrent", &self.max_concurrent)
            .finish_non_exhaustive()
    }
}

/// What an answer must say besides `active: true`: what the JWT `validation` asks of a token
/// (an audience that names this resource, an accepted issuer if any is named, the leeway on
/// `exp` and `nbf`), and the claims read as scopes besides `scope` and `scp`.
pub(super) struct Checks<'a> {
    validation: &'a Validation,
    scope_claims: &'a [String],
}

impl<'a> Checks<'a> {
    /// The checks of a JWT `validation`, for introspection.
    pub(super) fn of(validation: &'a Validation, scope_claims: &'a [String]) -> Checks<'a> {
        Checks {
            validation,
            scope_claims,
        }
    }
}

type Flight = Arc<OnceCell<Result<Principal, Refusal>>>;

/// A caller's place in the introspection of one token. The last caller to leave, whether its
/// answer came or its request was cancelled, removes the flight, so that the map holds only
/// introspections some caller still waits for.
struct Seat<'a> {
    flights: &'a Mutex<HashMap<Digest, Flight>>,
    digest: Digest,
    /// This caller's share, given back under the lock when it leaves.
    flight: Option<Flight>,
}

impl<'a> Seat<'a> {
    fn take(flights: &'a Mutex<HashMap<Digest, Flight>>, digest: Digest) -> Self {
        let mut map = flights.lock().unwrap_or_else(PoisonError::into_inner);
        let flight = Arc::clone(map.entry(digest).or_default());
        Seat {
            flights,
            digest,
            flight: Some(flight),
        }
    }

    fn flight(&self) -> &Flight {
        self.flight
            .as_ref()
            .expect("a seat holds its share until dropped")
    }
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        let mut map = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        // Seats take and give back their share only under the lock, so the count is exact:
        // the map's share alone means nobody waits any more.
        let Some(mine) = self.flight.take() else {
            return;
        };
        let ours = map.get(&self.digest).is_some_and(|f| Arc::ptr_eq(f, &mine));
        drop(mine);
        if ours
            && map
                .get(&self.digest)
                .is_some_and(|f| Arc::strong_count(f) == 1)
        {
            map.remove(&self.digest);
        }
    }
}

/// An [`Introspection`] at work.
pub(super) struct Introspector {
    config: Introspection,
    /// The client, or why it could not be built (every introspection then fails).
    http: Result<reqwest::Client, FetchError>,
    cache: TokenCache,
    /// Introspections under way, by token digest: later callers wait for the first.
    flights: Mutex<HashMap<Digest, Flight>>,
    /// One permit per introspection under way, at most `max_concurrent`.
    slots: Semaphore,
}

impl Introspector {
    /// The principal of `token`, from the cache or the authorization server.
    pub(super) async fn principal(
        &self,
        token: &str,
        checks: &Checks<'_>,
    ) -> Result<Principal, Refusal> {
        let digest = cache::digest(token);
        let now = jsonwebtoken::get_current_timestamp();
        if let Some(principal) = self.cache.get(&digest, now, None) {
            return Ok(principal);
        }
        let seat = Seat::take(&self.flights, digest);
        seat.flight()
            .get_or_init(|| async {
                let Ok(_slot) = self.slots.try_acquire() else {
                    tracing::warn!(
                        endpoint = %self.config.endpoint,
                        max_concurrent = self.config.max_concurrent,
                        "token introspection refused: too many under way"
                    );
                    return Err(Refusal::Unavailable);
                };
                let answer = self.ask(token, checks).await;
                if let Ok((principal, exp)) = &answer {
                    let now = jsonwebtoken::get_current_timestamp();
                    let until = now.saturating_add(self.config.max_age.as_secs());
                    let verified = Verified {
                        principal: principal.clone(),
                        exp: exp.map_or(until, |exp| exp.min(until)),
                        key: None,
                    };
                    self.cache.insert(digest, verified, now);
                }
                answer.map(|(principal, _)| principal)
            })
            .await
            .clone()
    }

    /// One introspection: the principal and `exp` of an active token.
    async fn ask(
        &self,
        token: &str,
        checks: &Checks<'_>,
    ) -> Result<(Principal, Option<u64>), Refusal> {
        let claims = self.post(token).await.map_err(|error| {
            tracing::warn!(endpoint = %self.config.endpoint, %error, "token introspection failed");
            Refusal::Unavailable
        })?;
        let invalid = |why| Err(Refusal::Invalid(why));
        if claims.get("active") != Some(&Value::Bool(true)) {
            return invalid(InvalidToken::Inactive);
        }
        let now = i64::try_from(jsonwebtoken::get_current_timestamp()).unwrap_or(i64::MAX);
        let validation = checks.validation;
        let leeway = i64::try_from(validation.leeway).unwrap_or(i64::MAX);
        let exp = numeric_date(&claims, "exp")?;
        if exp.is_some_and(|exp| exp.saturating_add(leeway) <= now) {
            return invalid(InvalidToken::Expired);
        }
        let nbf = numeric_date(&claims, "nbf")?;
        if nbf.is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
            return invalid(InvalidToken::NotYetValid);
        }
        let exp = exp.map(|exp| u64::try_from(exp).unwrap_or(0));
        let names_us = |aud: &str| {
            validation
                .aud
                .as_ref()
                .is_some_and(|ours| ours.contains(aud))
        };
        let audience_named = match claims.get("aud") {
            Some(Value::String(aud)) => names_us(aud),
            Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).any(names_us),
            _ => return invalid(InvalidToken::MissingClaim),
        };
        if !audience_named {
            return invalid(InvalidToken::Audience);
        }
        if let Some(iss) = claims.get("iss") {
            let accepted = validation.iss.as_ref().is_none_or(|issuers| {
                issuers.is_empty() || iss.as_str().is_some_and(|iss| issuers.contains(iss))
            });
            if !accepted {
                return invalid(InvalidToken::Issuer);
            }
        }
        let principal = principal_of(claims)
            .ok_or(Refusal::Invalid(InvalidToken::MissingClaim))?
            .with_scopes_at(checks.scope_claims);
        Ok((principal, exp))
    }

    /// POSTs the introspection request; the answer's members.
    async fn post(&self, token: &str) -> Result<Map<String, Value>, FetchError> {
        let config = &self.config;
        let endpoint = &config.endpoint;
        if !Url::parse(endpoint).is_ok_and(|url| is_allowed(&url)) {
            return Err(FetchError::Insecure(endpoint.clone()));
        }
        let http = self.http.as_ref().map_err(|error| FetchError::Fetch {
            url: endpoint.clone(),
            reason: error.to_string(),
        })?;
        let mut form = vec![("token", token), ("token_type_hint", "access_token")];
        let mut request = http.post(endpoint.as_str());
        match config.method {
            ClientAuth::Basic => {
                // RFC 6749 section 2.3.1: each part form-encoded, then Basic.
                let user = form_encode(&[("", &config.client_id)]);
                let password = form_encode(&[("", &config.client_secret)]);
                request = request.basic_auth(&user[1..], Some(&password[1..]));
            }
            ClientAuth::Post => {
                form.push(("client_id", &config.client_id));
                form.push(("client_secret", &config.client_secret));
            }
        }
        let request = request
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(form_encode(&form));
        let (document, _) = send_json(request, endpoint, config.max_bytes).await?;
        match document {
            Value::Object(members) => Ok(members),
            _ => Err(FetchError::Malformed {
                url: endpoint.clone(),
                reason: "not a JSON object".to_owned(),
            }),
        }
    }
}

/// The NumericDate claim `name` (RFC 7519 section 2: seconds since the epoch, a JSON number,
/// possibly fractional), floored to whole seconds; `None` when absent. A claim of another type
/// makes the answer malformed.
fn numeric_date(claims: &Map<String, Value>, name: &str) -> Result<Option<i64>, Refusal> {
    match claims.get(name) {
        None => Ok(None),
        // `as` saturates: a date past the range of i64 is as far as it goes.
        Some(Value::Number(date)) => Ok(date.as_f64().map(|date| date.floor() as i64)),
        Some(_) => Err(Refusal::Invalid(InvalidToken::Malformed)),
    }
}

/// `application/x-www-form-urlencoded` of `pairs`.
fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut url = Url::parse("http://form.invalid/").expect("a valid URL");
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_owned()
}

/// The principal of an introspection answer: as [`Principal::from_claims`], with the subject
/// `client_id` when there is no `sub` (a token of the client-credentials grant).
fn principal_of(mut claims: Map<String, Value>) -> Option<Principal> {
    let no_sub = claims
        .get("sub")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if no_sub && let Some(client_id) = claims.get("client_id").cloned() {
        claims.insert("sub".to_owned(), client_id);
    }
    Principal::from_claims(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_escapes_reserved_characters() {
        assert_eq!(
            form_encode(&[("token", "a+b/c=d"), ("x", "é ")]),
            "token=a%2Bb%2Fc%3Dd&x=%C3%A9+"
        );
        assert_eq!(&form_encode(&[("", "id:1")])[1..], "id%3A1");
    }

    #[test]
    fn a_client_credentials_token_is_its_client() {
        let claims = serde_json::json!({"active": true, "client_id": "robot", "scope": "a b"});
        let principal = principal_of(claims.as_object().unwrap().clone()).unwrap();
        assert_eq!(principal.subject(), "robot");
        assert_eq!(principal.scopes(), ["a", "b"]);
        let claims = serde_json::json!({"active": true, "sub": "alice", "client_id": "app"});
        let principal = principal_of(claims.as_object().unwrap().clone()).unwrap();
        assert_eq!(principal.subject(), "alice");
    }

    /// A loopback endpoint that accepts connections and never answers.
    async fn hanging_endpoint() -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/introspect", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        (url, held)
    }

    fn flights(introspector: &Introspector) -> usize {
        introspector.flights.lock().unwrap().len()
    }

    #[tokio::test]
    async fn callers_who_give_up_leave_no_flight_behind() {
        let (url, _held) = hanging_endpoint().await;
        let introspector = Arc::new(Introspection::new(url, "rs", "secret").start());
        let validation = Validation::default();
        let mut waiting = Vec::new();
        for token in ["a", "a", "a", "b", "c"] {
            let introspector = Arc::clone(&introspector);
            let validation = validation.clone();
            waiting.push(tokio::spawn(async move {
                let checks = Checks::of(&validation, &[]);
                introspector.principal(token, &checks).await
            }));
        }
        while flights(&introspector) < 3 {
            tokio::task::yield_now().await;
        }
        for task in &waiting {
            task.abort();
        }
        for task in waiting {
            assert!(task.await.unwrap_err().is_cancelled());
        }
        assert_eq!(flights(&introspector), 0);
    }

    #[tokio::test]
    async fn an_answered_flight_is_removed() {
        let introspector = Introspection::new("http://127.0.0.1:9/introspect", "rs", "secret")
            .timeout(Duration::from_secs(1))
            .start();
        let validation = Validation::default();
        let checks = Checks::of(&validation, &[]);
        let answer = introspector.principal("token", &checks).await;
        assert!(matches!(answer, Err(Refusal::Unavailable)));
        assert_eq!(flights(&introspector), 0);
    }
}
