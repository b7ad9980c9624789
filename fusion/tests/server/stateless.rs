//! The MCP 2026-07-28 lifecycle over a connection (stdio, in process): no `initialize`, each
//! request's `_meta` names the revision. The methods it removed are not found, and a
//! `subscriptions/listen` stream is acknowledged, then carries the list changes told to
//! `Server::list_changes`.

use fusion::server::ListChanges;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

use super::tools::{Lab, server, within};

/// A 2026-07-28 client speaking newline-delimited JSON-RPC by hand.
struct Inline {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl Inline {
    /// A connection to the lab's server, and the server's list-change handle.
    fn connect() -> (Inline, ListChanges) {
        let (server_end, client_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        let server = server(&Lab::default());
        let changes = server.list_changes();
        tokio::spawn(async move {
            let running = server.serve_io(read, write).await.expect("first request");
            running.waiting().await
        });
        let (read, writer) = tokio::io::split(client_end);
        let reader = BufReader::new(read);
        (Inline { reader, writer }, changes)
    }

    /// Sends request `id` of `method` with `params`, its `_meta` that of 2026-07-28.
    async fn send(&mut self, id: u64, method: &str, mut params: Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        within(async {
            let line = format!("{line}\n");
            self.writer.write_all(line.as_bytes()).await.unwrap();
            self.writer.flush().await.unwrap();
        })
        .await;
    }

    async fn receive(&mut self) -> Value {
        let mut line = String::new();
        within(self.reader.read_line(&mut line)).await.unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }
}

#[tokio::test]
async fn a_2026_connection_finds_no_removed_method_and_listens_for_changes() {
    let (mut client, changes) = Inline::connect();
    client.send(1, "tools/list", json!({})).await;
    assert!(client.receive().await["result"]["tools"].is_array());
    for (id, method) in [
        (2, "logging/setLevel"),
        (3, "resources/subscribe"),
        (4, "ping"),
    ] {
        client.send(id, method, json!({})).await;
        let answer = client.receive().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    client
        .send(5, "logging/setLevel", json!({"level": "debug"}))
        .await;
    assert_eq!(client.receive().await["error"]["code"], -32601);

    client
        .send(
            6,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    let ack = client.receive().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        6
    );
    // The stream subscribes right after its acknowledgement is sent.
    within(async {
        while changes.listening() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    changes.prompts();
    changes.tools();
    let change = client.receive().await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        6
    );
}
