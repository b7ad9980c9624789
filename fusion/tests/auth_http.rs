//! Bearer auth over real Streamable HTTP (feature `auth`): the MCP endpoint behind
//! `BearerAuth` in axum on a loopback socket, called with hyper's client. Proves the 401
//! challenges, the `FORBIDDEN` of a missing scope, and rate limits keyed by the subject.
#![cfg(feature = "auth")]

#[path = "support/mcp_http.rs"]
#[allow(dead_code, reason = "each auth test uses part of it")]
mod mcp_http;

use std::net::SocketAddr;

use fusion::auth::jsonwebtoken::{self, Algorithm, DecodingKey, EncodingKey, Header};
use fusion::auth::{BearerAuth, ProtectedResourceMetadata};
use fusion::server::http::HttpServer;
use fusion::server::{Server, StreamableHttpServerConfig};
use fusion::{ToolError, guard};
use http_body_util::Full;
use mcp_http::{billing_call, open_session, post, send};
use serde_json::{Value, json};
use tower_layer::Layer;

const PRIVATE: &[u8] = include_bytes!("fixtures/auth/es256-private.pem");
const PUBLIC: &[u8] = include_bytes!("fixtures/auth/es256-public.pem");
const OTHER_PRIVATE: &[u8] = include_bytes!("fixtures/auth/other-private.pem");
const ISSUER: &str = "https://id.example.com";

/// Invoices.
pub struct Billing;

/// Bills customers.
#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action(read_only, rate_limit(calls = 2, per = "1h"))]
    pub fn list(&self) -> Result<&'static str, ToolError> {
        Ok("no invoices")
    }

    /// Charges a card.
    #[action(scopes("charge"))]
    pub fn charge(&self) -> Result<&'static str, ToolError> {
        Ok("charged")
    }
}

/// The server on a loopback port; returns its address and resource URI.
async fn serve() -> (SocketAddr, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let mcp = Server::new("billing", "1.0.0")
        .tool(Billing)
        .streamable_http_service_with(StreamableHttpServerConfig::default());
    // The scopes the actions use: in the metadata, and in the 401 challenges.
    let scopes = ["charge"];
    let auth = BearerAuth::new(
        resource.clone(),
        ISSUER,
        DecodingKey::from_ec_pem(PUBLIC).unwrap(),
        Algorithm::ES256,
    )
    .scopes(scopes);
    let metadata = ProtectedResourceMetadata::new(resource.clone(), [ISSUER]).scopes(scopes);
    let app = axum::Router::new()
        .route_service("/mcp", auth.layer(mcp))
        .route_service(&metadata.well_known_path(), metadata.into_service());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, resource)
}

/// `claims` signed with `key` as an access token (`typ: at+jwt`, RFC 9068).
fn token_with(key: &[u8], claims: Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_pem(key).unwrap()).unwrap()
}

fn claims(resource: &str, sub: &str, scope: &str) -> Value {
    json!({
        "sub": sub, "aud": resource, "iss": ISSUER, "scope": scope,
        "exp": jsonwebtoken::get_current_timestamp() + 600,
    })
}

/// Calls `billing` with `action`; returns the call result.
async fn call(addr: SocketAddr, token: &str, session: &str, action: &str) -> Value {
    let reply = post(addr, Some(token), Some(session), billing_call(action)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.rpc()["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn no_token_is_401_with_the_resource_metadata_url() {
    let (addr, resource) = serve().await;
    let reply = post(
        addr,
        None,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .await;
    assert_eq!(reply.status, 401);
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        reply.headers["www-authenticate"],
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"charge\"").as_str()
    );
    // The document is there, public, and names the resource.
    let get = http::Request::get("/.well-known/oauth-protected-resource/mcp")
        .header("host", addr.to_string())
        .body(Full::default())
        .unwrap();
    let document = send(addr, get).await;
    assert_eq!(document.status, 200);
    let document: Value = serde_json::from_str(&document.body).unwrap();
    assert_eq!(document["resource"], resource.as_str());
    assert_eq!(document["authorization_servers"], json!([ISSUER]));
    assert_eq!(document["scopes_supported"], json!(["charge"]));
    assert_eq!(document["bearer_methods_supported"], json!(["header"]));
}

#[tokio::test]
async fn bad_tokens_are_401_invalid_token() {
    let (addr, resource) = serve().await;
    let mut expired = claims(&resource, "alice", "charge");
    expired["exp"] = json!(jsonwebtoken::get_current_timestamp() - 3600);
    let cases = [
        (
            "bad signature",
            token_with(OTHER_PRIVATE, claims(&resource, "alice", "charge")),
        ),
        ("expired", token_with(PRIVATE, expired)),
        (
            "wrong audience",
            token_with(
                PRIVATE,
                claims("http://elsewhere.example/mcp", "alice", "charge"),
            ),
        ),
        ("untrusted issuer", {
            let mut claims = claims(&resource, "alice", "charge");
            claims["iss"] = json!("https://evil.example");
            token_with(PRIVATE, claims)
        }),
        (
            "typed JWT, as an ID token is",
            jsonwebtoken::encode(
                &Header::new(Algorithm::ES256),
                &claims(&resource, "alice", "charge"),
                &EncodingKey::from_ec_pem(PRIVATE).unwrap(),
            )
            .unwrap(),
        ),
    ];
    for (case, token) in cases {
        let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let reply = post(addr, Some(&token), None, ping).await;
        assert_eq!(reply.status, 401, "{case}");
        let challenge = reply.headers["www-authenticate"].to_str().unwrap();
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata=\"http://"),
            "{case}: {challenge}"
        );
        assert!(
            challenge.ends_with(", scope=\"charge\""),
            "{case}: {challenge}"
        );
        assert!(!challenge.contains(&token), "{case}");
    }
}

#[tokio::test]
async fn two_authorization_headers_are_400_invalid_request() {
    let (addr, resource) = serve().await;
    let token = token_with(PRIVATE, claims(&resource, "alice", "charge"));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let request = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .header("authorization", format!("Bearer {token}"))
        .body(Full::from(ping.to_string()))
        .unwrap();
    let reply = send(addr, request).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let challenge = reply.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_request\""),
        "{challenge}"
    );
    assert!(!challenge.contains(&token), "{challenge}");
}

#[tokio::test]
async fn a_token_that_is_not_visible_ascii_is_400_invalid_request() {
    let (addr, resource) = serve().await;
    let token = token_with(PRIVATE, claims(&resource, "alice", "charge"));
    for sent in [format!("{token}é"), "é".to_owned()] {
        let reply = post(addr, Some(&sent), None, billing_call("charge")).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        let challenge = reply.challenge();
        assert!(
            challenge.starts_with("Bearer error=\"invalid_request\"")
                && challenge.contains("resource_metadata="),
            "{challenge}"
        );
    }
}

#[tokio::test]
async fn a_missing_scope_is_forbidden_and_the_scope_lets_the_call_through() {
    let (addr, resource) = serve().await;
    let reader = token_with(PRIVATE, claims(&resource, "alice", "invoices:read"));
    let session = open_session(addr, &reader).await;
    let refused = call(addr, &reader, &session, "charge").await;
    assert_eq!(refused["isError"], true);
    let envelope = text(&refused);
    assert!(
        envelope.starts_with("<tool_error code=\"FORBIDDEN\""),
        "{envelope}"
    );
    assert!(
        envelope.contains("<detail key=\"missingScopes\">charge</detail>"),
        "{envelope}"
    );
    assert!(
        envelope.contains("<recovery>") && envelope.contains("`charge`"),
        "{envelope}"
    );
    assert!(
        !envelope.contains(&reader) && !envelope.contains("alice"),
        "{envelope}"
    );
    let flags = &refused["_meta"]["fusion/error"];
    assert_eq!(flags["errorCategory"], "auth");
    assert_eq!(flags["isRetryable"], false);

    let payer = token_with(PRIVATE, claims(&resource, "bob", "invoices:read charge"));
    let session = open_session(addr, &payer).await;
    let charged = call(addr, &payer, &session, "charge").await;
    assert_eq!(charged["isError"], false, "{charged}");
    assert_eq!(text(&charged), "charged");
}

#[tokio::test]
async fn rate_limits_are_keyed_by_the_subject_across_sessions() {
    let (addr, resource) = serve().await;
    let carol = token_with(PRIVATE, claims(&resource, "carol", ""));
    let first = open_session(addr, &carol).await;
    let second = open_session(addr, &carol).await;
    assert_ne!(first, second);
    // Two calls an hour: the second session of the same subject spends the same bucket.
    assert_eq!(
        text(&call(addr, &carol, &first, "list").await),
        "no invoices"
    );
    assert_eq!(
        text(&call(addr, &carol, &second, "list").await),
        "no invoices"
    );
    let limited = call(addr, &carol, &second, "list").await;
    assert!(
        text(&limited).starts_with("<tool_error code=\"RATE_LIMITED\""),
        "{limited}"
    );
    // Another subject has a bucket of its own.
    let dave = token_with(PRIVATE, claims(&resource, "dave", ""));
    let session = open_session(addr, &dave).await;
    assert_eq!(
        text(&call(addr, &dave, &session, "list").await),
        "no invoices"
    );
}

/// A stateless server (no sessions) without auth, recording the TCP peer as `ClientAddr`.
async fn serve_stateless(guards: guard::Guards) -> SocketAddr {
    use axum::extract::{ConnectInfo, Request};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    let mcp = Server::new("billing", "1.0.0")
        .tool(Billing)
        .guards(guards)
        .streamable_http_service_with(config);
    let app = axum::Router::new()
        .route_service("/mcp", mcp)
        .layer(axum::middleware::map_request(
            |ConnectInfo(peer): ConnectInfo<SocketAddr>, mut request: Request| async move {
                request
                    .extensions_mut()
                    .insert(fusion::auth::ClientAddr(peer));
                request
            },
        ));
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// A stateless `list` call claiming to be forwarded for `forwarded_for`.
async fn stateless_list(addr: SocketAddr, forwarded_for: &str) -> String {
    let message = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "list"}},
    });
    let request = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("x-forwarded-for", forwarded_for)
        .body(Full::from(message.to_string()))
        .unwrap();
    let reply = send(addr, request).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    text(&reply.rpc()["result"]).to_owned()
}

#[tokio::test]
async fn stateless_calls_are_keyed_by_address_and_forwarded_headers_need_a_trusted_proxy() {
    // Untrusted peer: the forwarded header is the client's own claim, and changes nothing.
    let addr = serve_stateless(guard::Guards::new()).await;
    assert_eq!(stateless_list(addr, "203.0.113.1").await, "no invoices");
    assert_eq!(stateless_list(addr, "203.0.113.2").await, "no invoices");
    let limited = stateless_list(addr, "203.0.113.3").await;
    assert!(
        limited.starts_with("<tool_error code=\"RATE_LIMITED\""),
        "{limited}"
    );

    // Behind a trusted proxy (the loopback peer), each forwarded client has its own bucket.
    let proxies = guard::TrustedProxies::parse(["127.0.0.0/8"]).unwrap();
    let addr = serve_stateless(guard::Guards::new().trusted_proxies(proxies)).await;
    for _ in 0..2 {
        assert_eq!(stateless_list(addr, "203.0.113.1").await, "no invoices");
    }
    let limited = stateless_list(addr, "203.0.113.1").await;
    assert!(
        limited.starts_with("<tool_error code=\"RATE_LIMITED\""),
        "{limited}"
    );
    assert_eq!(stateless_list(addr, "203.0.113.2").await, "no invoices");
}

/// `charge` called in-process (over `serve_in_process`, as over stdio) on `server`.
async fn charge_in_process(server: Server) -> String {
    let client = server.serve_in_process(()).await.unwrap();
    let arguments = json!({"action": "charge"}).as_object().unwrap().clone();
    let params = rmcp::model::CallToolRequestParams::new("billing").with_arguments(arguments);
    let result = client.call_tool(params).await.unwrap();
    client.cancel().await.unwrap();
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test]
async fn a_local_principal_is_the_caller_over_stdio_and_in_process_never_over_http() {
    use fusion::auth::Principal;
    let payer = Principal::new("local-user").with_scopes(["charge"]);
    let server = Server::new("billing", "1.0.0")
        .tool(Billing)
        .local_principal(payer);
    assert_eq!(charge_in_process(server.clone()).await, "charged");

    // A local principal lacking the scope is refused for it, like a token lacking it.
    let reader = Server::new("billing", "1.0.0")
        .tool(Billing)
        .local_principal(Principal::new("local-user"));
    let refused = charge_in_process(reader).await;
    assert!(
        refused.starts_with("<tool_error code=\"FORBIDDEN\"")
            && refused.contains("<detail key=\"missingScopes\">charge</detail>"),
        "{refused}"
    );

    // Over HTTP without an auth layer the same server authenticates nobody.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener));
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "auth-test", "version": "1"},
        },
    });
    let reply = post(addr, None, None, init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(addr, None, Some(&session), initialized).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    let message = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge"}},
    });
    let reply = post(addr, None, Some(&session), message).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = &reply.rpc()["result"];
    assert!(
        text(result).starts_with("<tool_error code=\"UNAUTHORIZED\""),
        "{result}"
    );
}

/// The server through `Server::http()` behind `BearerAuth`, with `configure`'s settings, on a
/// loopback port; returns its address and resource URI.
async fn serve_http(configure: impl FnOnce(HttpServer) -> HttpServer) -> (SocketAddr, String) {
    serve_http_with(|auth| auth, configure).await
}

/// [`serve_http`] with `bearer`'s settings on the bearer layer too.
async fn serve_http_with(
    bearer: impl FnOnce(BearerAuth) -> BearerAuth,
    configure: impl FnOnce(HttpServer) -> HttpServer,
) -> (SocketAddr, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let auth = bearer(BearerAuth::new(
        resource.clone(),
        ISSUER,
        DecodingKey::from_ec_pem(PUBLIC).unwrap(),
        Algorithm::ES256,
    ));
    let http = configure(Server::new("billing", "1.0.0").tool(Billing).http()).layer(auth);
    tokio::spawn(http.serve_on(listener));
    (addr, resource)
}

#[tokio::test]
async fn a_session_serves_only_the_caller_that_opened_it() {
    let (addr, resource) = serve_http(|http| http).await;

    let alice = token_with(PRIVATE, claims(&resource, "alice", "charge"));
    let bob = token_with(PRIVATE, claims(&resource, "bob", "charge"));
    let session = open_session(addr, &alice).await;

    let message = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge"}},
    });
    let stolen = post(addr, Some(&bob), Some(&session), message.clone()).await;
    assert_eq!(stolen.status, 404, "{}", stolen.body);
    assert!(stolen.body.contains("Session not found"), "{}", stolen.body);

    let own = post(addr, Some(&alice), Some(&session), message).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(text(&own.rpc()["result"]), "charged");
}

#[tokio::test]
async fn a_session_is_bound_to_its_issuer_and_subject_as_a_pair() {
    // Joined with a space, (`ISSUER x`, `alice`) and (`ISSUER`, `x alice`) read the same.
    let other_issuer = format!("{ISSUER} x");
    let (addr, resource) =
        serve_http_with(|auth| auth.issuer(other_issuer.clone()), |http| http).await;

    let mut owner = claims(&resource, "alice", "charge");
    owner["iss"] = json!(other_issuer);
    let owner = token_with(PRIVATE, owner);
    let intruder = token_with(PRIVATE, claims(&resource, "x alice", "charge"));
    let session = open_session(addr, &owner).await;

    let message = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": "charge"}},
    });
    let stolen = post(addr, Some(&intruder), Some(&session), message.clone()).await;
    assert_eq!(stolen.status, 404, "{}", stolen.body);

    let own = post(addr, Some(&owner), Some(&session), message).await;
    assert_eq!(own.status, 200, "{}", own.body);
}

#[tokio::test]
async fn one_caller_cannot_take_every_session() {
    let (addr, resource) =
        serve_http(|http| http.max_sessions(10).max_sessions_per_caller(2)).await;

    let greedy = token_with(PRIVATE, claims(&resource, "greedy", ""));
    let other = token_with(PRIVATE, claims(&resource, "other", ""));
    open_session(addr, &greedy).await;
    open_session(addr, &greedy).await;
    let init = json!({
        "jsonrpc": "2.0", "id": 9, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "auth-test", "version": "1"},
        },
    });
    let refused = post(addr, Some(&greedy), None, init).await;
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(refused.headers.contains_key("retry-after"));
    let message: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(message["id"], 9);
    assert!(
        message["error"]["message"]
            .as_str()
            .unwrap()
            .contains("this caller holds its maximum of 2 sessions"),
        "{message}"
    );
    // Another caller still gets a session.
    open_session(addr, &other).await;
}
