//! A real rmcp client of a server over an in-process duplex stream, calling one tool with
//! arguments given as a JSON object and reading the text blocks of its result; each await
//! fails the test after twenty seconds instead of hanging.

use std::time::Duration;

use fusion::server::Server;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::Value;

pub(crate) type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A client of `server`, connected in process.
pub(crate) async fn connect(server: Server) -> Client {
    tokio::time::timeout(Duration::from_secs(20), server.serve_in_process(()))
        .await
        .expect("connected in time")
        .expect("client connects")
}

/// Calls `tool` with `arguments`, a JSON object.
pub(crate) async fn call_tool(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    tokio::time::timeout(Duration::from_secs(20), client.call_tool(request))
        .await
        .expect("answered in time")
        .expect("a tool result")
}

/// The texts of the result's content blocks, which must all be text.
pub(crate) fn texts(result: &CallToolResult) -> Vec<&str> {
    (result.content.iter())
        .map(|block| block.as_text().expect("a text block").text.as_str())
        .collect()
}
