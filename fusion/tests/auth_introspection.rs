//! Opaque tokens checked by token introspection (RFC 7662; feature `auth`): the MCP endpoint
//! behind `BearerAuth` with an `Introspection`, and an authorization server's introspection
//! endpoint in axum on loopback sockets, called with hyper's client. Proves active and inactive
//! answers, the audience check, the cache and single flight, client authentication, and the
//! answers when the endpoint hangs, fails or talks nonsense.
#![cfg(feature = "auth")]

#[path = "support/billing.rs"]
mod billing;
#[path = "support/mcp_http.rs"]
#[allow(dead_code, reason = "each auth test uses part of it")]
mod mcp_http;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use billing::Billing;
use fusion::auth::{BearerAuth, ClientAuth, Introspection};
use fusion::server::Server;
use mcp_http::{Reply, billing_call, post};
use serde_json::{Value, json};

const ISSUER: &str = "http://as.example";
/// `mcp-server:s3cret/+` form-encoded, then base64.
const BASIC: &str = "Basic bWNwLXNlcnZlcjpzM2NyZXQlMkYlMkI=";

/// A JSON answer.
fn reply(document: Value) -> axum::response::Response {
    ([("content-type", "application/json")], document.to_string()).into_response()
}

/// The authorization server: how many introspections it answered, and the resource.
#[derive(Clone)]
struct As {
    calls: Arc<AtomicUsize>,
    resource: Arc<str>,
    /// Answers to `held-…` tokens wait for a permit of the gate (none at first).
    gate: Arc<tokio::sync::Semaphore>,
    /// How many `held-…` introspections arrived.
    held: Arc<AtomicUsize>,
    /// How many requests reached `/elsewhere`, where `redirect-…` tokens are sent.
    elsewhere: Arc<AtomicUsize>,
}

/// The introspection endpoint: answers by the token's name, after checking the client.
async fn introspect(
    State(state): State<As>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    state.calls.fetch_add(1, Ordering::SeqCst);
    let field = |name: &str| {
        body.split('&')
            .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
            .unwrap_or("")
            .to_owned()
    };
    let authenticated = headers.get("authorization").is_some_and(|v| v == BASIC)
        || (field("client_id") == "mcp-server" && field("client_secret") == "s3cret%2F%2B");
    if !authenticated {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    assert_eq!(field("token_type_hint"), "access_token");
    let now = fusion::auth::jsonwebtoken::get_current_timestamp();
    let exp = now + 600;
    let at = |name: &str, value: Value| {
        let mut answer = json!({"active": true, "sub": "a", "aud": &*state.resource});
        answer[name] = value;
        reply(answer)
    };
    let active = |aud: &str| {
        json!({"active": true, "client_id": "robot", "scope": "charge", "aud": [aud],
               "iss": ISSUER, "exp": exp, "token_type": "Bearer"})
    };
    let token = field("token");
    if token.starts_with("held-") {
        state.held.fetch_add(1, Ordering::SeqCst);
        drop(state.gate.acquire().await.unwrap());
        return reply(active(&state.resource));
    }
    match token.as_str() {
        "redirect-307" => {
            return (StatusCode::TEMPORARY_REDIRECT, [("location", "/elsewhere")]).into_response();
        }
        "redirect-308" => {
            return (StatusCode::PERMANENT_REDIRECT, [("location", "/elsewhere")]).into_response();
        }
        // NumericDate is a JSON number, possibly fractional (RFC 7519 section 2).
        "exp-fraction-past" => return at("exp", json!(now as f64 - 7200.5)),
        "exp-fraction-future" => return at("exp", json!(now as f64 + 600.5)),
        "exp-negative" => return at("exp", json!(-1)),
        "exp-string" => return at("exp", json!("1000")),
        "exp-null" => return at("exp", Value::Null),
        "nbf-fraction-future" => return at("nbf", json!(now as f64 + 7200.5)),
        "nbf-string" => return at("nbf", json!("1000")),
        _ => {}
    }
    match token.as_str() {
        "good" | "slow" => {
            if field("token") == "slow" {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            reply(active(&state.resource)).into_response()
        }
        "noscope" => {
            reply(json!({"active": true, "sub": "alice", "aud": &*state.resource, "exp": exp}))
                .into_response()
        }
        "permissions" => reply(json!({
            "active": true, "sub": "bob", "aud": &*state.resource, "exp": exp,
            "permissions": ["charge"],
        })),
        "other-aud" => reply(active("http://elsewhere/mcp")).into_response(),
        "other-iss" => reply(
            json!({"active": true, "sub": "a", "aud": &*state.resource, "iss": "http://evil"}),
        )
        .into_response(),
        "expired" => {
            reply(json!({"active": true, "sub": "a", "aud": &*state.resource, "exp": exp - 7200}))
                .into_response()
        }
        "hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::OK.into_response()
        }
        "error" => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        "malformed" => ([("content-type", "application/json")], "{\"active\": tr").into_response(),
        "array" => reply(json!([true])).into_response(),
        "huge" => reply(json!({"active": true, "pad": "x".repeat(1 << 20)})).into_response(),
        // `active` must be the JSON boolean (RFC 7662 section 2.2), not a string or a number.
        "active-string" => reply(json!({"active": "true", "sub": "a", "aud": &*state.resource})),
        "active-number" => reply(json!({"active": 1, "sub": "a", "aud": &*state.resource})),
        "no-aud" => reply(json!({"active": true, "sub": "a", "exp": exp})),
        // 10 MiB in chunks, without a Content-Length.
        "chunked" => {
            let chunk = axum::body::Bytes::from(vec![b' '; 64 * 1024]);
            let chunks = (0..160).map(move |_| Ok::<_, std::io::Error>(chunk.clone()));
            let body = axum::body::Body::from_stream(futures::stream::iter(chunks));
            ([("content-type", "application/json")], body).into_response()
        }
        // Headers at once, then a byte every 100 ms: the timeout covers the whole answer.
        "trickle" => {
            let bytes = futures::stream::unfold(0, |sent| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                (sent < 100).then(|| {
                    (
                        Ok::<_, std::io::Error>(axum::body::Bytes::from(" ")),
                        sent + 1,
                    )
                })
            });
            let body = axum::body::Body::from_stream(bytes);
            ([("content-type", "application/json")], body).into_response()
        }
        _ => reply(json!({"active": false})).into_response(),
    }
}

/// The authorization server and the MCP server on loopback ports; the MCP server's address
/// and the introspection count.
async fn serve(method: ClientAuth) -> (SocketAddr, Arc<AtomicUsize>) {
    let (addr, state) = serve_with(method, |introspection| introspection).await;
    (addr, state.calls)
}

/// As [`serve`], with the introspection settings `configure` makes; the MCP server's address
/// and the authorization server's state.
async fn serve_with(
    method: ClientAuth,
    configure: impl FnOnce(Introspection) -> Introspection,
) -> (SocketAddr, As) {
    let as_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let as_addr = as_listener.local_addr().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let calls = Arc::new(AtomicUsize::new(0));
    let state = As {
        calls: calls.clone(),
        resource: resource.clone().into(),
        gate: Arc::new(tokio::sync::Semaphore::new(0)),
        held: Arc::new(AtomicUsize::new(0)),
        elsewhere: Arc::new(AtomicUsize::new(0)),
    };
    let as_app = axum::Router::new()
        .route("/introspect", axum::routing::post(introspect))
        .route("/elsewhere", axum::routing::post(elsewhere))
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(as_listener, as_app).await.unwrap() });
    let introspection = Introspection::new(
        format!("http://{as_addr}/introspect"),
        "mcp-server",
        "s3cret/+",
    )
    .client_auth(method)
    .timeout(Duration::from_millis(500));
    let introspection = configure(introspection);
    let auth = BearerAuth::from_introspection(resource, ISSUER, introspection)
        .scope_claims(["permissions"]);
    let mcp = Server::new("billing", "1.0.0")
        .tool(Billing)
        .http()
        .stateless(true)
        .layer(auth)
        .into_service();
    let app = axum::Router::new().nest_service("/mcp", mcp);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, state)
}

/// Where the endpoint redirects: it would say any token is active.
async fn elsewhere(State(state): State<As>) -> axum::response::Response {
    state.elsewhere.fetch_add(1, Ordering::SeqCst);
    let exp = fusion::auth::jsonwebtoken::get_current_timestamp() + 600;
    reply(
        json!({"active": true, "sub": "a", "scope": "charge", "aud": &*state.resource,
                 "exp": exp}),
    )
}

/// Calls `billing.charge` with `token`.
async fn charge(addr: SocketAddr, token: &str) -> Reply {
    post(addr, Some(token), None, billing_call("charge")).await
}

fn text(reply: &Reply) -> String {
    reply.text()
}

fn description(reply: &Reply) -> String {
    assert_eq!(reply.status, 401, "{}", reply.body);
    let challenge = reply.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\""),
        "{challenge}"
    );
    challenge.to_owned()
}

#[tokio::test]
async fn an_active_token_passes_with_its_scopes_and_is_asked_about_once() {
    let (addr, calls) = serve(ClientAuth::Basic).await;
    assert_eq!(text(&charge(addr, "good").await), "charged");
    assert_eq!(text(&charge(addr, "good").await), "charged");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the second call used the cache"
    );
    // Active, but without the scope: the guard answers FORBIDDEN in the result.
    let reply = charge(addr, "noscope").await;
    assert!(text(&reply).contains("charge"), "{}", reply.body);
    assert!(reply.body.contains("FORBIDDEN"), "{}", reply.body);
    // The scope granted in another claim, read with `scope_claims`.
    assert_eq!(text(&charge(addr, "permissions").await), "charged");
}

#[tokio::test]
async fn client_secret_post_authenticates_too() {
    let (addr, _) = serve(ClientAuth::Post).await;
    assert_eq!(text(&charge(addr, "good").await), "charged");
}

#[tokio::test]
async fn concurrent_requests_with_one_token_share_one_introspection() {
    let (addr, calls) = serve(ClientAuth::Basic).await;
    let replies = futures::future::join_all((0..8).map(|_| charge(addr, "slow"))).await;
    for reply in &replies {
        assert_eq!(text(reply), "charged");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn inactive_and_mismatched_tokens_are_invalid_and_not_cached() {
    let (addr, calls) = serve(ClientAuth::Basic).await;
    let revoked = description(&charge(addr, "revoked").await);
    assert!(
        revoked.contains("The access token is not active"),
        "{revoked}"
    );
    description(&charge(addr, "revoked").await);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "inactive answers are not kept"
    );
    let cases = [
        ("active-string", "not active"),
        ("active-number", "not active"),
        ("no-aud", "lacks a required claim"),
        ("other-aud", "not issued for this resource"),
        ("other-iss", "untrusted issuer"),
        ("expired", "expired"),
        ("exp-fraction-past", "expired"),
        ("exp-negative", "expired"),
        ("nbf-fraction-future", "not valid yet"),
        ("exp-string", "malformed"),
        ("exp-null", "malformed"),
        ("nbf-string", "malformed"),
    ];
    for (token, why) in cases {
        let challenge = description(&charge(addr, token).await);
        assert!(challenge.contains(why), "{token}: {challenge}");
    }
}

#[tokio::test]
async fn a_failing_endpoint_is_503_in_bounded_time_and_blocks_no_one() {
    let (addr, _) = serve(ClientAuth::Basic).await;
    let hanging = tokio::spawn(charge(addr, "hang"));
    // While one request waits on the hanging endpoint, others go through.
    assert_eq!(text(&charge(addr, "good").await), "charged");
    for token in ["error", "malformed", "array", "huge", "chunked", "trickle"] {
        let reply = charge(addr, token).await;
        assert_eq!(reply.status, 503, "{token}: {}", reply.body);
        assert_eq!(reply.headers["retry-after"], "5");
        assert!(reply.headers.get("www-authenticate").is_none(), "{token}");
    }
    // The timeout (500 ms here) ends the hanging one.
    let reply = tokio::time::timeout(Duration::from_secs(10), hanging)
        .await
        .expect("bounded by the introspection timeout")
        .unwrap();
    assert_eq!(reply.status, 503);
}

#[tokio::test]
async fn a_fractional_exp_in_the_future_passes() {
    let (addr, _) = serve(ClientAuth::Basic).await;
    let reply = charge(addr, "exp-fraction-future").await;
    assert!(
        reply.body.contains("FORBIDDEN"),
        "active, no scope: {}",
        reply.body
    );
}

#[tokio::test]
async fn introspections_in_flight_are_capped_and_the_excess_is_503_at_once() {
    let (addr, state) = serve_with(ClientAuth::Basic, |introspection| {
        introspection
            .max_concurrent(4)
            .timeout(Duration::from_secs(30))
    })
    .await;
    let call = |token: String| tokio::spawn(async move { charge(addr, &token).await });
    let mut held: Vec<_> = (0..4).map(|n| call(format!("held-{n}"))).collect();
    let arrived = async {
        while state.held.load(Ordering::SeqCst) < 4 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), arrived)
        .await
        .expect("the cap's worth of introspections reach the endpoint");
    // Another request with a token already being introspected shares that introspection.
    held.push(call("held-0".to_owned()));
    // Distinct tokens beyond the cap: 503 without waiting for the endpoint.
    let excess = (4..12).map(|n| async move { charge(addr, &format!("held-{n}")).await });
    let excess = futures::future::join_all(excess);
    let excess = tokio::time::timeout(Duration::from_secs(10), excess)
        .await
        .expect("the excess is answered without waiting for the held introspections");
    for reply in &excess {
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert_eq!(reply.headers["retry-after"], "5");
        assert!(reply.headers.get("www-authenticate").is_none());
    }
    assert_eq!(state.held.load(Ordering::SeqCst), 4);
    assert_eq!(
        state.calls.load(Ordering::SeqCst),
        4,
        "the excess never reached it"
    );
    state.gate.add_permits(64);
    for task in held {
        assert_eq!(text(&task.await.unwrap()), "charged");
    }
    // The slots are free again.
    assert_eq!(text(&charge(addr, "held-new").await), "charged");
    assert_eq!(text(&charge(addr, "good").await), "charged");
}

#[tokio::test]
async fn a_redirect_from_the_endpoint_is_an_outage_and_sends_nothing_on() {
    let (addr, state) = serve_with(ClientAuth::Post, |introspection| introspection).await;
    for token in ["redirect-307", "redirect-308"] {
        let reply = charge(addr, token).await;
        assert_eq!(reply.status, 503, "{token}: {}", reply.body);
        assert_eq!(reply.headers["retry-after"], "5");
    }
    assert_eq!(
        state.elsewhere.load(Ordering::SeqCst),
        0,
        "the client secret and the token were not resent"
    );
}
