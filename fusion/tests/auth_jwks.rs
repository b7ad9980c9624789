//! Keys from the authorization server (feature `auth`): a provider on a loopback socket serves
//! its discovery document and JWKS (and counts the fetches); the MCP endpoint behind
//! `BearerAuth::from_jwks` in axum is called with hyper's client. Proves discovery, rotation
//! without a restart, the unknown-`kid` rate limit, the last good keys kept while the provider
//! is down, and refusals of bad key sets and tokens.
#![cfg(feature = "auth")]

#[path = "support/mcp_http.rs"]
#[allow(dead_code, reason = "each auth test uses part of it")]
mod mcp_http;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::IntoResponse;
use fusion::auth::jsonwebtoken::jwk::Jwk;
use fusion::auth::jsonwebtoken::{self, Algorithm, EncodingKey, Header};
use fusion::auth::{BearerAuth, FetchError as JwksError, Jwks};
use fusion::server::{Server, StreamableHttpServerConfig};
use mcp_http::post;
use serde_json::{Value, json};
use tower_layer::Layer;

const PRIVATE: &[u8] = include_bytes!("fixtures/auth/es256-private.pem");
const OTHER_PRIVATE: &[u8] = include_bytes!("fixtures/auth/other-private.pem");

/// What the provider answers at its JWKS URI.
#[derive(Clone)]
enum Answer {
    Keys(Value),
    Status(u16),
    Body(String),
    /// An answer that comes after a minute.
    Slow,
}

/// An authorization server on loopback: its issuer, its answer, and how often its JWKS was
/// fetched.
#[derive(Clone)]
struct Provider {
    issuer: String,
    answer: Arc<Mutex<Answer>>,
    fetches: Arc<AtomicUsize>,
}

impl Provider {
    async fn start(keys: Value) -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let provider = Provider {
            issuer: format!("http://{}", listener.local_addr().unwrap()),
            answer: Arc::new(Mutex::new(Answer::Keys(keys))),
            fetches: Arc::new(AtomicUsize::new(0)),
        };
        let metadata = json!({"issuer": provider.issuer, "jwks_uri": provider.jwks_uri()});
        // A tenant's issuer, `<issuer>/tenant`, published only as RFC 8414 metadata.
        let tenant = json!({
            "issuer": format!("{}/tenant", provider.issuer), "jwks_uri": provider.jwks_uri(),
        });
        let served = provider.clone();
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || async move { json_answer(&metadata) }),
            )
            .route(
                "/.well-known/oauth-authorization-server/tenant",
                axum::routing::get(move || async move { json_answer(&tenant) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let provider = served.clone();
                    async move { provider.jwks().await }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        provider
    }

    fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    async fn jwks(&self) -> axum::response::Response {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        let answer = self.answer.lock().unwrap().clone();
        match answer {
            Answer::Keys(keys) => (
                [("cache-control", "public, max-age=3600")],
                json_answer(&keys),
            )
                .into_response(),
            Answer::Status(status) => http::StatusCode::from_u16(status).unwrap().into_response(),
            Answer::Body(body) => body.into_response(),
            Answer::Slow => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "{}".into_response()
            }
        }
    }
}

fn json_answer(document: &Value) -> impl IntoResponse + use<> {
    ([("content-type", "application/json")], document.to_string())
}

/// The public JWK of a private key, named `kid`.
fn jwk(private: &[u8], kid: &str) -> Value {
    let key = EncodingKey::from_ec_pem(private).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    serde_json::to_value(jwk).unwrap()
}

fn set(keys: &[Value]) -> Value {
    json!({ "keys": keys })
}

/// An access token of `sub` for `resource` from `issuer`, signed with `private` as `kid`.
fn token(private: &[u8], kid: &str, issuer: &str, resource: &str, sub: &str) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    header.kid = Some(kid.to_owned());
    let claims = json!({
        "sub": sub, "aud": resource, "iss": issuer,
        "exp": jsonwebtoken::get_current_timestamp() + 600,
    });
    jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_ec_pem(private).unwrap(),
    )
    .unwrap()
}

/// The MCP server behind `auth` on a loopback port.
async fn serve(auth: BearerAuth) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mcp = Server::new("billing", "1.0.0")
        .streamable_http_service_with(StreamableHttpServerConfig::default());
    let app = axum::Router::new().route_service("/mcp", auth.layer(mcp));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// A server for the provider's tokens; returns its address and resource URI.
async fn serve_for(jwks: Jwks, issuer: &str) -> (SocketAddr, String) {
    let resource = "https://mcp.example.com/mcp";
    let addr = serve(BearerAuth::from_jwks(resource, issuer, jwks)).await;
    (addr, resource.to_owned())
}

/// Initializes a session with `token`: the status, and the `error_description` of a refusal.
async fn initialize(addr: SocketAddr, token: &str) -> (u16, String) {
    let reply = post(addr, Some(token), None, mcp_http::initialize("jwks-test")).await;
    (reply.status, reply.error_description())
}

#[tokio::test]
async fn keys_are_discovered_and_bad_tokens_refused() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let issuer = provider.issuer.clone();
    let jwks = Jwks::discover(&issuer).await.unwrap();
    assert_eq!(jwks.key_ids(), ["a"]);
    assert_eq!(jwks.uri(), provider.jwks_uri());
    let (addr, resource) = serve_for(jwks, &issuer).await;

    let good = token(PRIVATE, "a", &issuer, &resource, "alice");
    assert_eq!(initialize(addr, &good).await, (200, String::new()));
    // Another issuer's token, signed by the same key.
    let foreign = token(PRIVATE, "a", "https://evil.example", &resource, "alice");
    assert_eq!(
        initialize(addr, &foreign).await.1,
        "The access token was issued by an untrusted issuer"
    );
    // `alg: none`, no signature.
    let payload = good.split('.').nth(1).unwrap();
    let none = format!("eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0Iiwia2lkIjoiYSJ9.{payload}.");
    assert_eq!(
        initialize(addr, &none).await,
        (401, "The access token is malformed".to_owned())
    );
    // HS256 with the public key's coordinates as the secret: an algorithm the key does not suit.
    let mut header = Header::new(Algorithm::HS256);
    header.typ = Some("at+jwt".to_owned());
    header.kid = Some("a".to_owned());
    let secret = jwk(PRIVATE, "a").to_string();
    let claims: Value = serde_json::from_slice(&base64_url_decode(payload)).unwrap();
    let confused = jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        initialize(addr, &confused).await,
        (401, "The access token algorithm is not accepted".to_owned())
    );
    // A `kid` the set lacks, and a key the set does not hold.
    let unknown = token(OTHER_PRIVATE, "z", &issuer, &resource, "alice");
    assert_eq!(
        initialize(addr, &unknown).await,
        (401, "The access token names an unknown key".to_owned())
    );
    let forged = token(OTHER_PRIVATE, "a", &issuer, &resource, "alice");
    assert_eq!(
        initialize(addr, &forged).await,
        (401, "The access token signature is invalid".to_owned())
    );

    // An issuer with a path and no OpenID configuration: RFC 8414 metadata, the well-known
    // suffix before the path.
    let tenant = format!("{issuer}/tenant");
    let jwks = Jwks::discover(&tenant).await.unwrap();
    let (addr, resource) = serve_for(jwks, &tenant).await;
    let good = token(PRIVATE, "a", &tenant, &resource, "alice");
    assert_eq!(initialize(addr, &good).await, (200, String::new()));
}

/// Base64url without padding, for the test's own token surgery.
fn base64_url_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes() {
        let value = ALPHABET.iter().position(|&c| c == byte).unwrap() as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}

#[tokio::test]
async fn a_rotation_is_followed_without_a_restart() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let issuer = provider.issuer.clone();
    // The default unknown-key interval: the fetch at start does not hold back the one a new
    // key needs, however soon after it comes.
    let jwks = Jwks::fetch(provider.jwks_uri()).await.unwrap();
    let (addr, resource) = serve_for(jwks.clone(), &issuer).await;
    let old = token(PRIVATE, "a", &issuer, &resource, "alice");
    assert_eq!(initialize(addr, &old).await.0, 200);
    assert_eq!(initialize(addr, &old).await.0, 200);
    assert_eq!(provider.fetches(), 1);

    // The provider adds key b and drops key a.
    provider.answer(Answer::Keys(set(&[jwk(OTHER_PRIVATE, "b")])));
    let new = token(OTHER_PRIVATE, "b", &issuer, &resource, "alice");
    assert_eq!(initialize(addr, &new).await.0, 200);
    assert_eq!(provider.fetches(), 2);
    assert_eq!(jwks.key_ids(), ["b"]);
    // The old token was remembered, but its key left the set.
    assert_eq!(
        initialize(addr, &old).await,
        (401, "The access token names an unknown key".to_owned())
    );
}

#[tokio::test]
async fn a_flood_of_unknown_kids_does_not_hammer_the_provider() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let issuer = provider.issuer.clone();
    let jwks = Jwks::builder()
        .unknown_key_interval(Duration::from_secs(3600))
        .fetch(provider.jwks_uri())
        .await
        .unwrap();
    let (addr, resource) = serve_for(jwks, &issuer).await;
    let mut calls = Vec::new();
    for i in 0..50 {
        let made_up = token(
            PRIVATE,
            &format!("made-up-{i}"),
            &issuer,
            &resource,
            "mallory",
        );
        calls.push(tokio::spawn(
            async move { initialize(addr, &made_up).await },
        ));
    }
    for call in calls {
        assert_eq!(call.await.unwrap().0, 401);
    }
    // The fetch at start, and one for the first made-up `kid`: the 49 others wait for it or
    // come within the interval.
    assert_eq!(provider.fetches(), 2);
    let good = token(PRIVATE, "a", &issuer, &resource, "alice");
    assert_eq!(initialize(addr, &good).await.0, 200);
}

/// What the provider answers, and whether the refresh's error is the one expected.
type Failure = (Answer, fn(&JwksError) -> bool);

#[tokio::test]
async fn a_provider_down_leaves_the_last_good_keys() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let issuer = provider.issuer.clone();
    let jwks = Jwks::fetch(provider.jwks_uri()).await.unwrap();
    let (addr, resource) = serve_for(jwks.clone(), &issuer).await;
    let failures: [Failure; 3] = [
        (Answer::Status(503), |e| {
            matches!(e, JwksError::Status { status: 503, .. })
        }),
        (Answer::Body("<html>".to_owned()), |e| {
            matches!(e, JwksError::Malformed { .. })
        }),
        (Answer::Keys(json!({"keys": []})), |e| {
            matches!(e, JwksError::NoKeys(_))
        }),
    ];
    for (i, (answer, expected)) in failures.into_iter().enumerate() {
        provider.answer(answer);
        let error = jwks.refresh().await.unwrap_err();
        assert!(expected(&error), "{error}");
        assert_eq!(jwks.key_ids(), ["a"]);
        // A token not seen before, so its signature is checked against the kept key.
        let fresh = token(PRIVATE, "a", &issuer, &resource, &format!("user-{i}"));
        assert_eq!(initialize(addr, &fresh).await.0, 200);
    }
}

#[tokio::test]
async fn bad_key_sets_are_refused_in_bounded_time() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let limited = || {
        Jwks::builder()
            .timeout(Duration::from_millis(500))
            .max_bytes(64 * 1024)
    };
    let huge = format!("{{\"keys\": [], \"padding\": \"{}\"}}", "x".repeat(100_000));
    provider.answer(Answer::Body(huge));
    let error = limited().fetch(provider.jwks_uri()).await.unwrap_err();
    assert!(
        matches!(error, JwksError::TooLarge { limit: 65536, .. }),
        "{error}"
    );
    provider.answer(Answer::Slow);
    let error = limited().fetch(provider.jwks_uri()).await.unwrap_err();
    assert!(matches!(error, JwksError::Timeout(_)), "{error}");
    provider.answer(Answer::Body("{\"keys\": ".to_owned()));
    let error = limited().fetch(provider.jwks_uri()).await.unwrap_err();
    assert!(matches!(error, JwksError::Malformed { .. }), "{error}");
    // Keys of the wrong type: a symmetric key, an EC key claiming an RSA algorithm, an
    // encryption key.
    let mut claims_rsa = jwk(PRIVATE, "rs");
    claims_rsa["alg"] = json!("RS256");
    let mut encryption = jwk(PRIVATE, "enc");
    encryption["use"] = json!("enc");
    encryption["alg"] = json!("ES256");
    let oct = json!({"kty": "oct", "kid": "hs", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"});
    provider.answer(Answer::Keys(set(&[oct, claims_rsa, encryption])));
    let error = limited().fetch(provider.jwks_uri()).await.unwrap_err();
    assert!(matches!(error, JwksError::NoKeys(_)), "{error}");
    // Plain http to anything but loopback is never fetched.
    let error = limited()
        .fetch("http://id.example.com/jwks")
        .await
        .unwrap_err();
    assert!(matches!(error, JwksError::Insecure(_)), "{error}");
    // Discovery naming another issuer.
    provider.answer(Answer::Keys(set(&[jwk(PRIVATE, "a")])));
    let error = limited()
        .discover(format!("{}/", provider.issuer))
        .await
        .unwrap_err();
    assert!(matches!(error, JwksError::IssuerMismatch { .. }), "{error}");
}

#[tokio::test]
async fn a_refresh_waiting_on_a_slow_provider_blocks_no_other_caller() {
    let provider = Provider::start(set(&[jwk(PRIVATE, "a")])).await;
    let issuer = provider.issuer.clone();
    let jwks = Jwks::builder()
        .unknown_key_interval(Duration::ZERO)
        .timeout(Duration::from_secs(3))
        .fetch(provider.jwks_uri())
        .await
        .unwrap();
    let (addr, resource) = serve_for(jwks, &issuer).await;
    provider.answer(Answer::Slow);
    let unknown = token(OTHER_PRIVATE, "new", &issuer, &resource, "bob");
    let waiting = tokio::spawn(async move { initialize(addr, &unknown).await });
    while provider.fetches() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let good = token(PRIVATE, "a", &issuer, &resource, "alice");
    assert_eq!(initialize(addr, &good).await.0, 200);
    assert!(!waiting.is_finished());
    // The fetch times out; the caller gets its 401.
    assert_eq!(
        waiting.await.unwrap(),
        (401, "The access token names an unknown key".to_owned())
    );
}
