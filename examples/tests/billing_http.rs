//! `fusion-billing --http ADDR` serves MCP Streamable HTTP at `/mcp`: an `initialize` and a
//! `tools/call` sent as plain HTTP/1.1 requests to the running binary.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

/// Fails the test instead of hanging when `future` takes more than ten seconds.
async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .expect("timed out after 10 s")
}

/// POSTs one JSON-RPC message to `http://{addr}/mcp` and returns the whole HTTP response.
async fn post(addr: &str, session: Option<&str>, body: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let session = session.map_or(String::new(), |id| format!("mcp-session-id: {id}\r\n"));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2025-06-18\r\n{session}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
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

    let init = within(post(
        &addr,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1"}}}"#,
    ))
    .await;
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    assert!(
        init.contains(r#""serverInfo":{"name":"fusion-billing","version":"#),
        "{init}"
    );
    let session = init
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: "))
        .expect("a session id");

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let accepted = within(post(&addr, Some(session), initialized)).await;
    assert!(accepted.starts_with("HTTP/1.1 202"), "{accepted}");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"billing","arguments":{"action":"get_invoice","id":"inv_2026"}}}"#;
    let result = within(post(&addr, Some(session), call)).await;
    assert!(
        result.contains(r#"<tool_error code=\"NOT_FOUND\" severity=\"error\">"#),
        "{result}"
    );
    assert!(result.contains(r#""isError":true"#), "{result}");

    child.kill().await.unwrap();
}
