//! Scopes over real Streamable HTTP behind `BearerAuth` (feature `auth`), called with hyper's
//! client: the step-up challenge of `Server::insufficient_scope_challenge` (HTTP 403, exact
//! `WWW-Authenticate`), the in-band `FORBIDDEN` without it, and `tools/list` shrinking to what
//! a token's scopes allow with `Server::hide_unauthorized_actions`.
#![cfg(feature = "auth")]

#[path = "support/billing.rs"]
mod billing;
#[path = "support/mcp_http.rs"]
#[allow(dead_code, reason = "each auth test uses part of it")]
mod mcp_http;

use std::net::SocketAddr;

use billing::Billing;
use fusion::auth::BearerAuth;
use fusion::auth::jsonwebtoken::{self, Algorithm, DecodingKey, EncodingKey, Header};
use fusion::server::{Exposition, Server};
use http_body_util::Full;
use mcp_http::{Reply, billing_call, open_session, post, send};
use serde_json::json;

const PRIVATE: &[u8] = include_bytes!("fixtures/auth/es256-private.pem");
const PUBLIC: &[u8] = include_bytes!("fixtures/auth/es256-public.pem");
const ISSUER: &str = "https://id.example.com";

/// `Billing` behind `BearerAuth` on a loopback port, with `configure`'s settings given the
/// bearer layer's resource metadata URL; returns the address and the resource URI.
async fn serve(configure: impl FnOnce(Server, &str) -> Server) -> (SocketAddr, String) {
    serve_http(configure, false).await
}

/// [`serve`], sessionless when `stateless`.
async fn serve_http(
    configure: impl FnOnce(Server, &str) -> Server,
    stateless: bool,
) -> (SocketAddr, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let auth = BearerAuth::new(
        resource.clone(),
        ISSUER,
        DecodingKey::from_ec_pem(PUBLIC).unwrap(),
        Algorithm::ES256,
    );
    let server = configure(
        Server::new("billing", "1.0.0").tool(Billing),
        auth.resource_metadata_url(),
    );
    let http = server.http().stateless(stateless).layer(auth);
    tokio::spawn(http.serve_on(listener));
    (addr, resource)
}

/// A token for `resource` granting `scope` (space-separated).
fn token(resource: &str, scope: &str) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    let claims = json!({
        "sub": "alice", "aud": resource, "iss": ISSUER, "scope": scope,
        "exp": jsonwebtoken::get_current_timestamp() + 600,
    });
    jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_ec_pem(PRIVATE).unwrap(),
    )
    .unwrap()
}

/// Calls `billing` with `action`.
async fn call(addr: SocketAddr, token: &str, session: &str, action: &str) -> Reply {
    post(addr, Some(token), Some(session), billing_call(action)).await
}

#[tokio::test]
async fn a_missing_scope_is_403_insufficient_scope_with_the_setting() {
    let (addr, resource) =
        serve(|server, metadata| server.insufficient_scope_challenge(metadata)).await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;

    let refused = call(addr, &reader, &session, "charge").await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.headers["www-authenticate"],
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"charge invoices:read\", \
             resource_metadata=\"http://{addr}/.well-known/oauth-protected-resource/mcp\", \
             error_description=\"The access token lacks a scope this call requires\""
        )
        .as_str()
    );
    assert_eq!(refused.body, "");

    // What the token allows goes through, in the same session.
    let listed = call(addr, &reader, &session, "list").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.rpc()["result"]["content"][0]["text"], "no invoices");

    // Stepped up, the client calls again with a token granting the scope.
    let payer = token(&resource, "invoices:read charge");
    let session = open_session(addr, &payer).await;
    let charged = call(addr, &payer, &session, "charge").await;
    assert_eq!(charged.status, 200, "{}", charged.body);
    assert_eq!(charged.rpc()["result"]["content"][0]["text"], "charged");
}

#[tokio::test]
async fn a_missing_scope_is_the_forbidden_envelope_without_the_setting() {
    let (addr, resource) = serve(|server, _| server).await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let refused = call(addr, &reader, &session, "charge").await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert!(refused.headers.get("www-authenticate").is_none());
    let result = &refused.rpc()["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["_meta"]["fusion/error"]["code"], "FORBIDDEN");
}

#[tokio::test]
async fn a_token_lists_only_the_actions_its_scopes_allow_when_hiding() {
    let (addr, resource) = serve(|server, _| server.hide_unauthorized_actions(true)).await;
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let actions = |reply: &Reply| {
        reply.rpc()["result"]["tools"][0]["inputSchema"]["properties"]["action"]["enum"].clone()
    };

    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let listed = post(addr, Some(&reader), Some(&session), list.clone()).await;
    assert_eq!(actions(&listed), json!(["list"]));
    // Calling the hidden action is calling one that does not exist.
    let refused = call(addr, &reader, &session, "charge").await.rpc();
    assert_eq!(
        refused["result"]["_meta"]["fusion/error"]["code"],
        "UNKNOWN_ACTION"
    );

    let payer = token(&resource, "charge");
    let session = open_session(addr, &payer).await;
    let listed = post(addr, Some(&payer), Some(&session), list).await;
    assert_eq!(actions(&listed), json!(["list", "charge"]));
}

#[tokio::test]
async fn the_challenge_follows_the_call_paths_routing_in_flat_exposition() {
    let (addr, resource) = serve(|server, metadata| {
        (server.exposition(Exposition::Flat)).insufficient_scope_challenge(metadata)
    })
    .await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let flat = |name: &str| {
        json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": name, "arguments": {}},
        })
    };
    let refused = post(addr, Some(&reader), Some(&session), flat("billing_charge")).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let challenge = refused.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("scope=\"charge invoices:read\""),
        "{challenge}"
    );
    // A name the catalog does not route is the call path's to answer.
    let unknown = post(addr, Some(&reader), Some(&session), flat("billing_chrage")).await;
    assert_eq!(unknown.status, 200, "{}", unknown.body);
    assert_eq!(unknown.rpc()["error"]["code"], -32602);
}

#[tokio::test]
async fn a_hidden_action_is_never_challenged() {
    let (addr, resource) = serve(|server, metadata| {
        (server.hide_unauthorized_actions(true)).insufficient_scope_challenge(metadata)
    })
    .await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let refused = call(addr, &reader, &session, "charge").await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    let result = &refused.rpc()["result"];
    assert_eq!(result["_meta"]["fusion/error"]["code"], "UNKNOWN_ACTION");
}

/// POSTs `message` as [`post`] does, with `headers` set over its own (`host`,
/// `mcp-protocol-version`), and no session when `session` is `None`.
async fn post_with(
    addr: SocketAddr,
    token: &str,
    session: Option<&str>,
    headers: &[(&str, &str)],
    message: serde_json::Value,
) -> Reply {
    let host = addr.to_string();
    let mut request = http::Request::post("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"));
    for (name, value) in [
        ("host", host.as_str()),
        ("mcp-protocol-version", "2025-06-18"),
    ] {
        if !headers.iter().any(|(set, _)| *set == name) {
            request = request.header(name, value);
        }
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    send(addr, request.body(Full::from(message.to_string())).unwrap()).await
}

#[tokio::test]
async fn every_other_refusal_answers_before_the_challenge() {
    let (addr, resource) =
        serve(|server, metadata| server.insufficient_scope_challenge(metadata)).await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let charge = billing_call("charge");

    // The Host gate (DNS rebinding) answers first.
    let host = [("host", "evil.example")];
    let refused = post_with(addr, &reader, Some(&session), &host, charge.clone()).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.challenge(), "");
    assert_eq!(refused.body, "Forbidden: Host header is not allowed");

    // So does the protocol version check.
    let version = [("mcp-protocol-version", "1999-01-01")];
    let refused = post_with(addr, &reader, Some(&session), &version, charge.clone()).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.challenge(), "");
    assert!(refused.body.contains("1999-01-01"), "{}", refused.body);

    // And the session check: a call outside a session.
    let refused = post_with(addr, &reader, None, &[], charge.clone()).await;
    assert_eq!(refused.status / 100, 4, "{}", refused.body);
    assert_ne!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.challenge(), "");

    // The scopes come before the arguments: invalid arguments still get the challenge.
    let invalid = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge", "amount": "x"}},
    });
    let refused = post_with(addr, &reader, Some(&session), &[], invalid).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.challenge().contains("insufficient_scope"));

    // The session goes on after all of these, and the same call, stepped up, runs in it.
    assert_eq!(
        call(addr, &reader, &session, "list").await.text(),
        "no invoices"
    );
    let payer = token(&resource, "invoices:read charge");
    let retry = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge"}},
    });
    let charged = post(addr, Some(&payer), Some(&session), retry).await;
    assert_eq!(charged.text(), "charged");
}

#[tokio::test]
async fn a_tools_call_notification_goes_on_as_without_the_setting() {
    let notification = json!({
        "jsonrpc": "2.0", "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge"}},
    });
    let mut answers = Vec::new();
    for challenge in [false, true] {
        let (addr, resource) = serve(|server, metadata| match challenge {
            true => server.insufficient_scope_challenge(metadata),
            false => server,
        })
        .await;
        let reader = token(&resource, "invoices:read");
        let session = open_session(addr, &reader).await;
        let reply = post(addr, Some(&reader), Some(&session), notification.clone()).await;
        assert_eq!(reply.challenge(), "");
        answers.push((reply.status, reply.body));
        // Nothing ran: the session still answers.
        assert_eq!(
            call(addr, &reader, &session, "list").await.text(),
            "no invoices"
        );
    }
    assert_eq!(answers[0], answers[1]);
    assert_ne!(answers[1].0, 403);
}

#[tokio::test]
async fn a_batch_is_400_invalid_request_with_the_setting() {
    let (addr, resource) =
        serve(|server, metadata| server.insufficient_scope_challenge(metadata)).await;
    let reader = token(&resource, "invoices:read");
    let session = open_session(addr, &reader).await;
    let batch = json!([billing_call("charge")]);
    let refused = post(addr, Some(&reader), Some(&session), batch).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.challenge(), "");
    let error = &refused.rpc()["error"];
    assert_eq!(error["code"], -32600);
    assert_eq!(
        error["message"],
        "Invalid request: a JSON-RPC message is an object; this body is an array."
    );
}

#[tokio::test]
async fn a_sessionless_server_challenges_too() {
    let (addr, resource) = serve_http(
        |server, metadata| server.insufficient_scope_challenge(metadata),
        true,
    )
    .await;
    let reader = token(&resource, "invoices:read");
    let refused = post(addr, Some(&reader), None, billing_call("charge")).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.challenge().contains("insufficient_scope"));
    let listed = post(addr, Some(&reader), None, billing_call("list")).await;
    assert_eq!(listed.text(), "no invoices");
}
