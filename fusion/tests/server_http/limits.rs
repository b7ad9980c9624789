//! Connection-level limits, over raw sockets: half-sent heads and stalled bodies are cut off
//! after the configured timeouts, oversized bodies get 413 and a closed connection, and past the
//! connection cap a new connection waits until one closes.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::{Running, initialize, raw_exchange, read_to_close, start};

/// The head of a POST to `/mcp`, up to and including the blank line.
fn head(addr: std::net::SocketAddr, length_header: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{length_header}\r\n\r\n"
    )
}

#[tokio::test]
async fn a_half_sent_head_is_cut_off_after_the_header_timeout() {
    let Running { addr, .. } =
        start(|http| http.header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // Slowloris: part of a head, then nothing.
    stream
        .write_all(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\n").as_bytes())
        .await
        .unwrap();
    // The server closes the connection (read_to_close fails the test after 10 s otherwise).
    let received = read_to_close(&mut stream).await;
    assert!(!received.contains("200 OK"), "{received}");
}

#[tokio::test]
async fn an_idle_connection_is_cut_off_after_the_header_timeout() {
    let Running { addr, .. } =
        start(|http| http.header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_eq!(read_to_close(&mut stream).await, "");
}

#[tokio::test]
async fn a_stalled_body_gets_408_and_a_closed_connection() {
    let Running { addr, .. } =
        start(|http| http.body_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The head promises 100 bytes; 10 arrive.
    let mut request = head(addr, "content-length: 100");
    request.push_str(r#"{"jsonrpc""#);
    stream.write_all(request.as_bytes()).await.unwrap();
    let received = read_to_close(&mut stream).await;
    assert!(received.starts_with("HTTP/1.1 408"), "{received}");
    assert!(received.contains("connection: close"), "{received}");
}

#[tokio::test]
async fn an_oversized_body_gets_413_and_the_connection_closes() {
    let Running { addr, .. } = start(|http| http.max_body_bytes(1024)).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"echo","arguments":{{"value":"{}"}}}}}}"#,
        "x".repeat(4096)
    );
    // A declared length over the limit, then a valid request on the same connection: the
    // server answers 413, says it closes, and closes (the second request is never served).
    let mut bytes = head(addr, &format!("content-length: {}", body.len()));
    bytes.push_str(&body);
    let second = initialize(1);
    bytes.push_str(&head(addr, &format!("content-length: {}", second.len())));
    bytes.push_str(&second);
    let received = raw_exchange(addr, bytes.as_bytes()).await;
    assert!(received.starts_with("HTTP/1.1 413"), "{received}");
    assert!(received.contains("connection: close"), "{received}");
    assert!(received.contains(r#""id":41"#), "{received}");
    assert!(
        received.contains(&format!(
            "the body is {} bytes; the limit is 1024 bytes",
            body.len()
        )),
        "{received}"
    );
    assert_eq!(received.matches("HTTP/1.1").count(), 1, "{received}");

    // Chunked, no declared length: refused once the limit is passed.
    let mut bytes = head(addr, "transfer-encoding: chunked");
    bytes.push_str(&format!("{:x}\r\n{body}\r\n0\r\n\r\n", body.len()));
    let received = raw_exchange(addr, bytes.as_bytes()).await;
    assert!(received.starts_with("HTTP/1.1 413"), "{received}");
    assert!(received.contains("connection: close"), "{received}");
    assert!(received.contains(r#""id":41"#), "{received}");
    assert!(
        received.contains("the body is over the limit of 1024 bytes"),
        "{received}"
    );
}

/// Writes a request for a path outside MCP (answered 404) that asks the server to close after
/// answering.
async fn request_elsewhere(stream: &mut TcpStream, addr: std::net::SocketAddr) {
    let request = format!("GET /elsewhere HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
}

#[tokio::test]
async fn past_the_connection_cap_a_request_waits_until_a_connection_closes() {
    let Running { addr, .. } = start(|http| http.max_connections(4)).await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    // The kernel completes the fifth connection (the listen backlog holds it), but the server
    // does not accept it while four are open: its request is not answered.
    let mut fifth = TcpStream::connect(addr).await.unwrap();
    request_elsewhere(&mut fifth, addr).await;
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(500), fifth.read(&mut byte)).await;
    assert!(early.is_err(), "answered past the cap: {early:?}");

    drop(idle.pop());
    let received = read_to_close(&mut fifth).await;
    assert!(received.starts_with("HTTP/1.1 404"), "{received}");
}

#[tokio::test]
async fn idle_connections_free_their_slot_after_the_header_timeout() {
    let Running { addr, .. } = start(|http| {
        http.max_connections(1)
            .header_read_timeout(Duration::from_millis(200))
    })
    .await;
    let _idle = TcpStream::connect(addr).await.unwrap();
    let mut next = TcpStream::connect(addr).await.unwrap();
    request_elsewhere(&mut next, addr).await;
    // Answered once the idle connection is cut off (read_to_close fails after 10 s).
    let received = read_to_close(&mut next).await;
    assert!(received.starts_with("HTTP/1.1 404"), "{received}");
}
