//! `fusion-billing --http ADDR` serves MCP Streamable HTTP at `/mcp` behind bearer auth:
//! `initialize` and `tools/call` sent as plain HTTP/1.1 requests to the running binary, with
//! the development tokens it prints at start (one with the `charge` scope, one without), and
//! without a token.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

#[path = "support/within.rs"]
mod within;
use within::within;

/// Sends `request` (a whole HTTP/1.1 request) to `addr` and returns the whole HTTP response.
async fn send(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

/// POSTs one JSON-RPC message to `http://{addr}/mcp`, with `token` as the bearer token, and
/// returns the whole HTTP response.
async fn post(addr: &str, token: Option<&str>, session: Option<&str>, body: &str) -> String {
    let session = session.map_or(String::new(), |id| format!("mcp-session-id: {id}\r\n"));
    let token = token.map_or(String::new(), |t| format!("authorization: Bearer {t}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2025-06-18\r\n{token}{session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    send(addr, &request).await
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1"}}}"#;

/// Opens a session with `token`: `initialize`, then `notifications/initialized`. Returns the
/// `initialize` response and the session id.
async fn open_session(addr: &str, token: &str) -> (String, String) {
    let init = within(post(addr, Some(token), None, INITIALIZE)).await;
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    let session = init
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let accepted = within(post(addr, Some(token), Some(&session), initialized)).await;
    assert!(accepted.starts_with("HTTP/1.1 202"), "{accepted}");
    (init, session)
}

/// Calls the `billing` tool with `arguments` (a JSON object with the `action`).
async fn call(addr: &str, token: &str, session: &str, arguments: &str) -> String {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"billing","arguments":{arguments}}}}}"#
    );
    let result = within(post(addr, Some(token), Some(session), &call)).await;
    assert!(result.starts_with("HTTP/1.1 200"), "{result}");
    result
}

/// The tokens the server prints: with the `charge` scope, and without it.
struct Tokens {
    charge: String,
    no_charge: String,
}

/// Reads the server's stderr up to both printed tokens.
async fn read_tokens(
    stderr: &mut tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
) -> Tokens {
    let (mut charge, mut no_charge) = (None, None);
    while charge.is_none() || no_charge.is_none() {
        let line = within(stderr.next_line())
            .await
            .unwrap()
            .expect("the tokens are printed");
        if let Some(token) = line.strip_prefix("export BILLING_TOKEN=") {
            charge = Some(token.to_owned());
        } else if let Some(token) = line.strip_prefix("export BILLING_TOKEN_READ_ONLY=") {
            no_charge = Some(token.to_owned());
        }
    }
    Tokens {
        charge: charge.unwrap(),
        no_charge: no_charge.unwrap(),
    }
}

#[tokio::test]
async fn the_binary_serves_streamable_http_at_mcp() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fusion-billing"))
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("fusion-billing starts");

    // The first line on stderr names the address, with the port the OS picked.
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = within(stderr.next_line()).await.unwrap().expect("a line");
    let addr = line
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_owned();

    let tokens = read_tokens(&mut stderr).await;

    // No token: 401, and the challenge names the public resource metadata.
    let refused = within(post(&addr, None, None, INITIALIZE)).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(
        refused.to_ascii_lowercase().contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{metadata_url}\", scope=\"charge refund\""
        )),
        "{refused}"
    );
    let metadata = within(send(
        &addr,
        &format!(
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nhost: {addr}\r\n\
             connection: close\r\n\r\n"
        ),
    ))
    .await;
    assert!(metadata.starts_with("HTTP/1.1 200"), "{metadata}");
    assert!(
        metadata.contains(&format!(r#""resource": "http://{addr}/mcp""#))
            && metadata.contains(r#""scopes_supported": ["#)
            && metadata.contains(r#""charge""#),
        "{metadata}"
    );

    // The token without `charge`: reads work, `charge` is FORBIDDEN naming the scope.
    let (init, session) = open_session(&addr, &tokens.no_charge).await;
    assert!(
        init.contains(r#""serverInfo":{"name":"fusion-billing","version":"#),
        "{init}"
    );
    let not_found = call(
        &addr,
        &tokens.no_charge,
        &session,
        r#"{"action":"get_invoice","id":"inv_2026"}"#,
    )
    .await;
    assert!(
        not_found.contains(r#"<tool_error code=\"NOT_FOUND\" severity=\"error\">"#),
        "{not_found}"
    );
    assert!(not_found.contains(r#""isError":true"#), "{not_found}");
    let read = call(
        &addr,
        &tokens.no_charge,
        &session,
        r#"{"action":"get_invoice","id":"inv_0001"}"#,
    )
    .await;
    assert!(read.contains(r#""isError":false"#), "{read}");
    assert!(read.contains(r#"\"id\":\"inv_0001\""#), "{read}");
    let charge =
        r#"{"action":"charge","invoice_id":"inv_0001","amount_cents":100,"currency":"EUR"}"#;
    let forbidden = call(&addr, &tokens.no_charge, &session, charge).await;
    assert!(
        forbidden.contains(r#"<tool_error code=\"FORBIDDEN\" severity=\"error\">"#),
        "{forbidden}"
    );
    assert!(
        forbidden.contains(r#"<detail key=\"missingScopes\">charge</detail>"#),
        "{forbidden}"
    );
    assert!(
        !forbidden.contains("dev-viewer") && !forbidden.contains(&tokens.no_charge),
        "{forbidden}"
    );

    // A refund needs its own scope.
    let refund = r#"{"action":"refund","invoice_id":"inv_0002","amount_cents":100}"#;
    let forbidden = call(&addr, &tokens.no_charge, &session, refund).await;
    assert!(
        forbidden.contains(r#"<detail key=\"missingScopes\">refund</detail>"#),
        "{forbidden}"
    );

    // The token with `charge`: the charge goes through.
    let (_, session) = open_session(&addr, &tokens.charge).await;
    let charged = call(&addr, &tokens.charge, &session, charge).await;
    assert!(charged.contains(r#""isError":false"#), "{charged}");
    assert!(charged.contains(r#"\"id\":\"inv_0001\""#), "{charged}");

    // A client that declared no elicitation cannot ask its user: the refund is not done.
    let unconfirmed = call(&addr, &tokens.charge, &session, refund).await;
    assert!(
        unconfirmed
            .contains(r#"<tool_error code=\"CONFIRMATION_UNAVAILABLE\" severity=\"error\">"#),
        "{unconfirmed}"
    );
    let invoice = r#"{"action":"get_invoice","id":"inv_0002"}"#;
    let still_paid = call(&addr, &tokens.charge, &session, invoice).await;
    assert!(
        still_paid.contains(r#"\"status\":\"paid\""#),
        "{still_paid}"
    );

    child.kill().await.unwrap();
}
