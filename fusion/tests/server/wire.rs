//! Raw JSON-RPC lines the rmcp client cannot express: every malformed request gets one clear
//! answer carrying its id, and the server keeps serving.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use super::tools::{Lab, server, within};

/// A client speaking newline-delimited JSON-RPC by hand.
struct Raw {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl Raw {
    async fn connect() -> Raw {
        let (server_end, client_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            let running = server(&Lab::default())
                .serve_io(read, write)
                .await
                .expect("handshake");
            running.waiting().await
        });
        let (read, writer) = tokio::io::split(client_end);
        let mut raw = Raw {
            reader: BufReader::new(read),
            writer,
        };
        let init = raw
            .request(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }))
            .await;
        assert_eq!(
            init["result"]["serverInfo"]["name"], "billing-server",
            "{init}"
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
        raw
    }

    async fn send(&mut self, line: &str) {
        within(async {
            self.writer.write_all(line.as_bytes()).await.unwrap();
            self.writer.write_all(b"\n").await.unwrap();
            self.writer.flush().await.unwrap();
        })
        .await;
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        within(self.reader.read_line(&mut line)).await.unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    async fn request(&mut self, message: &Value) -> Value {
        self.send(&message.to_string()).await;
        self.receive().await
    }

    /// Sends `line` and expects a JSON-RPC error answering request `id`.
    async fn error_for(&mut self, line: &str, id: Value) -> (i64, String) {
        self.send(line).await;
        let answer = self.receive().await;
        // JSON-RPC 2.0 section 5: the member is required, `null` when the id is unreadable.
        assert!(answer.get("id").is_some(), "no id member: {answer}");
        assert_eq!(answer["id"], id, "{answer}");
        let error = &answer["error"];
        (
            error["code"].as_i64().unwrap_or_else(|| panic!("{answer}")),
            error["message"].as_str().unwrap().to_owned(),
        )
    }

    /// A good call still works.
    async fn still_serving(&mut self, id: u64) {
        let answer = self
            .request(&json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }))
            .await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["content"][0]["text"], "3.0", "{answer}");
    }
}

fn tools_call(id: u64, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

#[tokio::test]
async fn arguments_that_are_not_an_object_get_invalid_params() {
    let mut raw = Raw::connect().await;
    let (code, message) = raw
        .error_for(
            &tools_call(2, json!({"name": "add", "arguments": [1, 2]})),
            json!(2),
        )
        .await;
    assert_eq!(code, -32602);
    assert_eq!(
        message,
        "params.arguments of 'tools/call' must be a JSON object of named arguments; \
         you sent an array (array(2))."
    );
    let (code, message) = raw
        .error_for(
            &tools_call(3, json!({"name": "add", "arguments": "a=1"})),
            json!(3),
        )
        .await;
    assert_eq!(code, -32602);
    assert!(message.contains("you sent a string ('a=1')"), "{message}");
    raw.still_serving(4).await;
}

#[tokio::test]
async fn a_call_without_a_name_gets_invalid_params() {
    let mut raw = Raw::connect().await;
    let (code, message) = raw
        .error_for(&tools_call(2, json!({"arguments": {}})), json!(2))
        .await;
    assert_eq!(code, -32602);
    assert_eq!(
        message,
        "'tools/call' needs params.name, the name of the tool to call."
    );
    let (code, message) = raw
        .error_for(&tools_call(3, json!({"name": 7})), json!(3))
        .await;
    assert_eq!(code, -32602);
    assert_eq!(
        message,
        "params.name of 'tools/call' must be a string naming the tool; you sent a number (7)."
    );
    raw.still_serving(4).await;
}

#[tokio::test]
async fn a_five_megabyte_string_gets_an_envelope() {
    let mut raw = Raw::connect().await;
    let line = tools_call(
        2,
        json!({"name": "lab", "arguments": {"action": "echo", "value": "x".repeat(5_000_000)}}),
    );
    raw.send(&line).await;
    let answer = raw.receive().await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["_meta"]["fusion/error"]["code"],
        "VALIDATION_ERROR"
    );
    raw.still_serving(3).await;
}

#[tokio::test]
async fn a_call_nested_deeper_than_the_json_parser_reads_gets_an_envelope() {
    let mut raw = Raw::connect().await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":{{"name":"lab","arguments":{{"action":"echo","value":{}1{}}}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    raw.send(&deep).await;
    let answer = raw.receive().await;
    assert_eq!(answer["id"], "deep-1");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["fusion/error"]["code"],
        "VALIDATION_ERROR"
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("nested deeper than 125 levels"), "{text}");
    // The advice names the tools' default limit, which a model following it meets.
    assert!(
        text.contains("Send arguments nested at most 64 levels deep, unless the tool allows more"),
        "{text}"
    );
    raw.still_serving(3).await;
}

#[tokio::test]
async fn json_the_parser_refuses_gets_an_envelope_in_a_call_and_an_error_elsewhere() {
    let mut raw = Raw::connect().await;
    let huge = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lab","arguments":{"action":"echo","value":1E400}}}"#;
    raw.send(huge).await;
    let answer = raw.receive().await;
    assert_eq!(answer["id"], 4);
    assert_eq!(
        answer["result"]["_meta"]["fusion/error"]["code"], "VALIDATION_ERROR",
        "{answer}"
    );
    // Outside a call there is no envelope to give: a JSON-RPC error saying what is wrong.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":"deep-2","method":"ping","params":{{"x":{}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let (code, message) = raw.error_for(&deep, json!("deep-2")).await;
    assert_eq!(code, -32600);
    assert_eq!(
        message,
        "Invalid request: the message nests deeper than 128 levels."
    );
    let (code, message) = raw
        .error_for(
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"\ud800"}}"#,
            json!(5),
        )
        .await;
    assert_eq!(code, -32700);
    assert!(message.contains("unpaired UTF-16 surrogate"), "{message}");
    raw.still_serving(6).await;
}

#[tokio::test]
async fn every_bad_line_is_answered_even_when_the_client_closes_right_after() {
    let mut raw = Raw::connect().await;
    let mut batch = String::new();
    for id in 100..150 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",bad\n"
        ));
    }
    within(async {
        raw.writer.write_all(batch.as_bytes()).await.unwrap();
        raw.writer.shutdown().await.unwrap();
    })
    .await;
    let mut ids = Vec::new();
    let mut line = String::new();
    while within(raw.reader.read_line(&mut line)).await.unwrap() > 0 {
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        ids.push(answer["id"].as_u64().unwrap());
        line.clear();
    }
    ids.sort_unstable();
    assert_eq!(ids, (100..150).collect::<Vec<_>>());
}

#[tokio::test]
async fn lines_that_are_not_json_rpc_get_clear_errors() {
    let mut raw = Raw::connect().await;
    // Cut short: not JSON, but the id is readable.
    let (code, message) = raw
        .error_for(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"#,
            json!(5),
        )
        .await;
    assert_eq!(
        (code, message.as_str()),
        (-32700, "Parse error: the line is not valid JSON.")
    );
    // Not an object.
    let (code, message) = raw.error_for("[1, 2, 3]", Value::Null).await;
    assert_eq!(code, -32600);
    assert_eq!(
        message,
        "Invalid request: a JSON-RPC message is an object; this line is an array."
    );
    // No method.
    let (code, _) = raw
        .error_for(r#"{"jsonrpc":"2.0","id":6,"params":{}}"#, json!(6))
        .await;
    assert_eq!(code, -32600);
    // An unknown method is not a malformed request.
    let (code, _) = raw
        .error_for(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate"}"#,
            json!(7),
        )
        .await;
    assert_eq!(code, -32601);
    // A malformed notification gets no answer: the next line read answers the next request.
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#)
        .await;
    raw.still_serving(8).await;
}
