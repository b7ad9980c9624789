//! Whose bucket a caller without a token spends, over a real socket: its address, across new
//! sessions; behind a trusted proxy, the address the proxy wrote in its header, never a header
//! the client wrote itself; an IPv6 client's /64.

use fusion::ToolError;
use fusion::guard::{ForwardedHeader, Guards, TrustedProxies};
use fusion::server::Server;
use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::json;

use crate::harness::{Running, open_session, post_request, send, start_server};

/// Quotes.
pub(crate) struct Quotes;

/// Quotes prices.
#[fusion::tool]
impl Quotes {
    /// Gets a quote: twice an hour per caller.
    #[action(read_only, rate_limit(calls = 2, per = "1h"))]
    pub(crate) fn get(&self) -> Result<&'static str, ToolError> {
        Ok("a quote")
    }
}

/// The quotes server on a loopback port with `guards`, with sessions or without.
async fn serve(guards: Guards, stateless: bool) -> std::net::SocketAddr {
    let server = Server::new("quotes", "1.0.0").tool(Quotes).guards(guards);
    let Running { addr, .. } = start_server(server, |http| http.stateless(stateless)).await;
    addr
}

/// Trusts the loopback peer (the tests' client plays the proxy).
fn behind_loopback_proxy() -> TrustedProxies {
    TrustedProxies::parse(["127.0.0.0/8", "::1"]).unwrap()
}

/// Calls `quotes.get` in `session` (or statelessly) with `headers` (what a proxy, or the
/// client itself, sent); true when it ran, false when it was `RATE_LIMITED`.
async fn get_quote(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    headers: &[(&str, &str)],
) -> bool {
    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "quotes", "arguments": {}},
    });
    let mut request = post_request(addr, session);
    for (name, value) in headers {
        // `header` appends: two of one name are two header lines, in this order.
        request = request.header(*name, *value);
    }
    let reply = send(
        addr,
        request
            .body(Full::new(Bytes::from(call.to_string())))
            .unwrap(),
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let text = reply.message()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    match text.as_str() {
        "a quote" => true,
        limited if limited.starts_with("<tool_error code=\"RATE_LIMITED\"") => false,
        other => panic!("neither a quote nor RATE_LIMITED: {other}"),
    }
}

#[tokio::test]
async fn a_new_session_does_not_give_a_caller_without_a_token_a_new_bucket() {
    let addr = serve(Guards::new(), false).await;
    let first = open_session(addr).await;
    assert!(get_quote(addr, Some(&first), &[]).await);
    assert!(get_quote(addr, Some(&first), &[]).await);
    assert!(!get_quote(addr, Some(&first), &[]).await);
    // Another `initialize` from the same address: the same bucket, still empty.
    let second = open_session(addr).await;
    assert!(!get_quote(addr, Some(&second), &[]).await);
}

#[tokio::test]
async fn behind_a_trusted_proxy_sessions_of_one_client_share_its_bucket_and_others_have_their_own()
{
    let addr = serve(
        Guards::new().trusted_proxies(behind_loopback_proxy()),
        false,
    )
    .await;
    let alice = [("x-forwarded-for", "203.0.113.1")];
    for _ in 0..2 {
        let session = open_session(addr).await;
        assert!(get_quote(addr, Some(&session), &alice).await);
    }
    let third = open_session(addr).await;
    assert!(!get_quote(addr, Some(&third), &alice).await);
    let bob = [("x-forwarded-for", "203.0.113.2")];
    assert!(get_quote(addr, Some(&third), &bob).await);
}

#[tokio::test]
async fn behind_a_trusted_proxy_a_forwarded_header_the_client_wrote_is_ignored() {
    // The proxy (HAProxy's `option forwardfor`, nginx's `$proxy_add_x_forwarded_for`) writes
    // X-Forwarded-For and passes the client's own `Forwarded` through untouched.
    let addr = serve(Guards::new().trusted_proxies(behind_loopback_proxy()), true).await;
    let mut ran = Vec::new();
    for n in 1..=3 {
        let claim = format!("for=198.51.100.{n}");
        let headers = [
            ("forwarded", claim.as_str()),
            ("x-forwarded-for", "203.0.113.1"),
        ];
        ran.push(get_quote(addr, None, &headers).await);
    }
    assert_eq!(ran, [true, true, false], "one client, one bucket");

    // A client's own X-Forwarded-For line comes first; the proxy's line, appended, last
    // (RFC 9110 section 5.3: lines of one name are one list, in order).
    let addr = serve(Guards::new().trusted_proxies(behind_loopback_proxy()), true).await;
    let mut ran = Vec::new();
    for n in 1..=3 {
        let claim = format!("198.51.100.{n}");
        let headers = [
            ("x-forwarded-for", claim.as_str()),
            ("x-forwarded-for", "203.0.113.1"),
        ];
        ran.push(get_quote(addr, None, &headers).await);
    }
    assert_eq!(ran, [true, true, false], "one client, one bucket");
}

#[tokio::test]
async fn proxies_that_write_forwarded_are_read_from_forwarded_alone() {
    let proxies = behind_loopback_proxy().header(ForwardedHeader::Forwarded);
    let addr = serve(Guards::new().trusted_proxies(proxies), true).await;
    let mut ran = Vec::new();
    for n in 1..=3 {
        let claim = format!("198.51.100.{n}");
        let headers = [
            ("x-forwarded-for", claim.as_str()),
            ("forwarded", "for=\"[2001:db8:cafe::17]:4711\";proto=https"),
        ];
        ran.push(get_quote(addr, None, &headers).await);
    }
    assert_eq!(ran, [true, true, false], "one client, one bucket");
    let other = [("forwarded", "for=192.0.2.60, for=127.0.0.1")];
    assert!(
        get_quote(addr, None, &other).await,
        "another client, past a trusted hop"
    );
}

#[tokio::test]
async fn an_ipv6_client_is_keyed_by_its_64() {
    let addr = serve(Guards::new().trusted_proxies(behind_loopback_proxy()), true).await;
    // Three addresses of one /64 (RFC 4291 section 2.5.1: the low 64 bits are the
    // interface, which the client picks at will).
    let one = [("x-forwarded-for", "2001:db8:1:2::1")];
    let two = [("x-forwarded-for", "2001:db8:1:2:8a2e:370:7334:9")];
    let three = [("x-forwarded-for", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:4711")];
    assert!(get_quote(addr, None, &one).await);
    assert!(get_quote(addr, None, &two).await);
    assert!(!get_quote(addr, None, &three).await);
    // The next /64 is another client.
    let next = [("x-forwarded-for", "2001:db8:1:3::1")];
    assert!(get_quote(addr, None, &next).await);

    // An IPv4-mapped address is the IPv4 address, keyed alone (/32).
    let addr = serve(Guards::new().trusted_proxies(behind_loopback_proxy()), true).await;
    assert!(get_quote(addr, None, &[("x-forwarded-for", "::ffff:203.0.113.1")]).await);
    assert!(get_quote(addr, None, &[("x-forwarded-for", "203.0.113.1")]).await);
    assert!(!get_quote(addr, None, &[("x-forwarded-for", "203.0.113.1")]).await);
    assert!(get_quote(addr, None, &[("x-forwarded-for", "203.0.113.2")]).await);
}
