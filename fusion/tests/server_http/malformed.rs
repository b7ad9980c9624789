//! Bodies that are not one JSON-RPC request get HTTP 400 with the JSON-RPC error stdio gives
//! (rmcp alone answers 415 with plain text); a `tools/call` whose JSON serde refuses gets a
//! `VALIDATION_ERROR` envelope.

use serde_json::{Value, json};

use crate::harness::{Running, open_session, post, start};

#[tokio::test]
async fn bodies_that_are_not_json_rpc_get_400_with_an_explanation() {
    let Running { addr, .. } = start(|http| http).await;
    let session = open_session(addr).await;

    // Cut short: not JSON, but the id is readable.
    let reply = post(
        addr,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"#,
    )
    .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let message = reply.message();
    assert_eq!(message["id"], 5);
    assert_eq!(message["error"]["code"], -32700);
    assert_eq!(
        message["error"]["message"],
        "Parse error: the body is not valid JSON."
    );

    // A batch (JSON-RPC batches are not part of MCP since 2025-06-18).
    let reply = post(
        addr,
        Some(&session),
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
    )
    .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    let message = reply.message();
    assert_eq!(message["id"], Value::Null);
    assert_eq!(message["error"]["code"], -32600);
    assert_eq!(
        message["error"]["message"],
        "Invalid request: a JSON-RPC message is an object; this body is an array."
    );

    // Params that are not an object.
    let call = json!({
        "jsonrpc": "2.0", "id": "call-7", "method": "tools/call", "params": ["echo"],
    });
    let reply = post(addr, Some(&session), call.to_string()).await;
    assert_eq!(reply.status, 400, "{reply:?}");
    let message = reply.message();
    assert_eq!(message["id"], "call-7");
    assert_eq!(message["error"]["code"], -32602);
    assert_eq!(
        message["error"]["message"],
        "'tools/call' needs params: an object with 'name' (the tool to call) and 'arguments' (an object)."
    );
}

/// The `VALIDATION_ERROR` envelope's flags in a `tools/call` reply.
fn envelope_code(reply: &crate::harness::Reply) -> Value {
    assert_eq!(reply.status, 200, "{reply:?}");
    let message = reply.message();
    assert_eq!(message["result"]["isError"], true, "{message}");
    message["result"]["_meta"]["fusion/error"]["code"].clone()
}

#[tokio::test]
async fn json_serde_refuses_in_a_call_gets_a_validation_envelope() {
    let Running { addr, .. } = start(|http| http).await;
    let session = open_session(addr).await;

    let huge_number = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"value":1E400}}}"#;
    let reply = post(addr, Some(&session), huge_number).await;
    assert_eq!(envelope_code(&reply), "VALIDATION_ERROR");
    assert_eq!(reply.message()["id"], 8);
    assert!(reply.body.contains("64-bit float"), "{}", reply.body);

    let lone_surrogate = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"value":"\ud800"}}}"#;
    let reply = post(addr, Some(&session), lone_surrogate).await;
    assert_eq!(envelope_code(&reply), "VALIDATION_ERROR");
    assert!(reply.body.contains("surrogate"), "{}", reply.body);
}

#[tokio::test]
async fn arguments_deeper_than_the_parser_reads_get_a_validation_envelope() {
    let Running { addr, .. } = start(|http| http).await;
    let session = open_session(addr).await;
    let deep = |levels: usize| {
        // `value` is level 2 of the arguments; its arrays add the rest.
        format!(
            r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"echo","arguments":{{"value":{}1{}}}}}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    let max = fusion::server::MAX_READABLE_ARGUMENT_DEPTH;
    // Past what serde_json reads (128 levels for the whole message).
    for levels in [max + 1, 10_000] {
        let reply = post(addr, Some(&session), deep(levels)).await;
        assert_eq!(envelope_code(&reply), "VALIDATION_ERROR");
        assert!(
            reply
                .body
                .contains(&format!("nested deeper than {max} levels")),
            "{}",
            reply.body
        );
    }
    // The deepest readable arguments reach the tool's own depth check (64 levels).
    let reply = post(addr, Some(&session), deep(max)).await;
    assert_eq!(envelope_code(&reply), "VALIDATION_ERROR");
    assert!(reply.body.contains("validation_error"), "{}", reply.body);
}
