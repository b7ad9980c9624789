//! Bearer auth against a real OpenID provider (feature `auth`): `oidc-provider` from npm
//! (clients/oidc/provider.mjs) on loopback, issuing JWT access tokens for the MCP resource
//! (RFC 8707 resource indicators, client-credentials grant) and opaque tokens checked by
//! introspection (RFC 7662). The MCP endpoint behind `BearerAuth` in axum, called with hyper.
//!
//! Skips when node or the npm package is missing (`npm ci` in clients/oidc installs it),
//! unless FUSION_REQUIRE_OIDC=1.
#![cfg(feature = "auth")]

#[path = "support/billing.rs"]
mod billing;
#[path = "support/mcp_http.rs"]
#[allow(dead_code, reason = "each auth test uses part of it")]
mod mcp_http;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use billing::Billing;
use fusion::auth::{BearerAuth, Introspection, Jwks};
use fusion::server::Server;
use mcp_http::{billing_call, post};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// clients/oidc, if the provider can run here.
fn provider_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/oidc");
    let node = std::process::Command::new("node").arg("--version").output();
    let ready = node.is_ok_and(|out| out.status.success())
        && dir.join("node_modules/oidc-provider").is_dir();
    if ready {
        return Some(dir);
    }
    assert!(
        std::env::var("FUSION_REQUIRE_OIDC").as_deref() != Ok("1"),
        "FUSION_REQUIRE_OIDC=1 but node or clients/oidc/node_modules is missing (npm ci there)"
    );
    eprintln!("skipped: node or clients/oidc/node_modules missing");
    None
}

/// Starts the provider on `port`; returns once it listens.
async fn start(dir: &Path, port: u16, state: &Path, rotate: bool) -> Child {
    let mut command = Command::new("node");
    command
        .current_dir(dir)
        .arg("provider.mjs")
        .arg(port.to_string())
        .arg(state)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if rotate {
        command.arg("rotate");
    }
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("listening") {
                return true;
            }
        }
        false
    });
    assert!(listening.await.unwrap(), "the provider did not start");
    // Keep reading: the provider logs notices, and dies writing to a closed pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

/// An access token from the provider for `resource` (client credentials, scope `charge`).
async fn mint(issuer: &str, resource: &str) -> String {
    let body = format!(
        "grant_type=client_credentials&scope=charge&resource={}",
        resource
            .replace(':', "%3A")
            .replace('/', "%2F")
            .replace('?', "%3F")
            .replace('=', "%3D")
            .replace('&', "%26")
    );
    let reply = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth("mcp-client", Some("client-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let reply: Value = serde_json::from_slice(&reply).unwrap();
    reply["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {reply}"))
        .to_owned()
}

/// Revokes `token` at the provider (RFC 7009).
async fn revoke(issuer: &str, token: &str) {
    let status = reqwest::Client::new()
        .post(format!("{issuer}/token/revocation"))
        .basic_auth("mcp-client", Some("client-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success(), "{status}");
}

/// Calls `billing.charge` with `token`: the status and the tool text or the challenge.
async fn charge(addr: SocketAddr, token: &str) -> (u16, String) {
    let reply = post(addr, Some(token), None, billing_call("charge")).await;
    match reply.status {
        200 => (200, reply.text()),
        status => (status, reply.challenge()),
    }
}

#[tokio::test]
async fn tokens_of_a_real_provider() {
    let Some(dir) = provider_dir() else { return };
    let state = std::env::temp_dir().join(format!("fusion-oidc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let issuer = format!("http://127.0.0.1:{port}");
    let mut provider = start(&dir, port, &state, false).await;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let jwks = Jwks::builder()
        .unknown_key_interval(Duration::ZERO)
        .discover(&issuer)
        .await
        .unwrap();
    // No answer kept, so a revocation shows at once (the default keeps one for 60 s).
    let introspection = Introspection::discover(&issuer, "mcp-server", "server-secret")
        .await
        .unwrap()
        .max_age(Duration::ZERO)
        .timeout(Duration::from_secs(2));
    let auth = BearerAuth::from_jwks(resource.clone(), &issuer, jwks)
        .leeway(Duration::ZERO)
        .introspection(introspection);
    let mcp = Server::new("billing", "1.0.0")
        .tool(Billing)
        .http()
        .stateless(true)
        .layer(auth)
        .into_service();
    let app = axum::Router::new().nest_service("/mcp", mcp);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // A JWT access token for this resource.
    let good = mint(&issuer, &resource).await;
    assert_eq!(good.split('.').count(), 3);
    assert_eq!(charge(addr, &good).await, (200, "charged".to_owned()));

    // One for another resource.
    let other = mint(&issuer, &format!("http://{addr}/other")).await;
    let (status, challenge) = charge(addr, &other).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains("not issued for this resource"),
        "{challenge}"
    );

    // An opaque token, checked by introspection, then revoked.
    let opaque = mint(&issuer, &format!("{resource}?format=opaque")).await;
    assert_eq!(opaque.split('.').count(), 1);
    assert_eq!(charge(addr, &opaque).await, (200, "charged".to_owned()));
    revoke(&issuer, &opaque).await;
    let (status, challenge) = charge(addr, &opaque).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("not active"), "{challenge}");

    // A token that lives one second, used after it.
    let short = mint(&issuer, &format!("{resource}?ttl=1")).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (status, challenge) = charge(addr, &short).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("expired"), "{challenge}");

    // The provider restarts with a new signing key first: fusion fetches it for the new kid.
    provider.kill().await.unwrap();
    let mut provider = start(&dir, port, &state, true).await;
    let rotated = mint(&issuer, &resource).await;
    let kid = |token: &str| {
        fusion::auth::jsonwebtoken::decode_header(token)
            .unwrap()
            .kid
            .unwrap()
    };
    assert_ne!(kid(&rotated), kid(&good));
    assert_eq!(charge(addr, &rotated).await, (200, "charged".to_owned()));

    // The provider down: an opaque token cannot be checked, which is not the caller's fault.
    let unchecked = mint(&issuer, &format!("{resource}?format=opaque")).await;
    provider.kill().await.unwrap();
    let (status, _) = charge(addr, &unchecked).await;
    assert_eq!(status, 503);
    // JWTs whose key is known still pass.
    assert_eq!(charge(addr, &rotated).await, (200, "charged".to_owned()));
    let _ = std::fs::remove_dir_all(&state);
}
