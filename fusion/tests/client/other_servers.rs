//! Results from elsewhere: errors in prose, an envelope after a prose block, another MCP
//! server's dotted tool names, a payload that only looks like an envelope.

use fusion::client::{AbortReason, Client, Decision, Envelope, Flags, read_result};
use fusion::{ErrorCategory, ErrorCode, ToolError};
use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, ClientConfig, ContentBlock, MetaObject};
use serde_json::{Map, Value, json};

use super::{failed, secs};

#[test]
fn an_error_in_prose_is_a_failure_without_a_contract() {
    // Another server answers an error in prose, without flags.
    let result = CallToolResult::error(vec![ContentBlock::text("Something broke.")]);
    let failure = failed(read_result(result));
    assert!(failure.envelope().is_none());
    assert!(failure.parse_error().is_some());
    assert_eq!(failure.flags(), &Flags::uncontracted());
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::Category(ErrorCategory::Unknown))
    );
    assert_eq!(
        failure.to_string(),
        "INTERNAL_ERROR (unknown): Something broke."
    );

    // With flags in `_meta` but prose content, the flags still decide.
    let mut result = CallToolResult::error(vec![ContentBlock::text("Slow down.")]);
    let mut meta = Map::new();
    meta.insert(
        fusion::FLAGS_META_KEY.to_owned(),
        ToolError::rate_limited("x", 9).flags(),
    );
    result.meta = Some(MetaObject(meta));
    let failure = failed(read_result(result));
    assert_eq!(failure.flags().retry_after_secs, Some(9));
    assert_eq!(failure.decision(), &Decision::Retry { wait: secs(9) });

    // An older envelope, no flags: derived from the code.
    let result = CallToolResult::error(vec![ContentBlock::text(
        "<tool_error code=\"FORBIDDEN\"><message>No access</message><available_actions>a.b, c.d</available_actions></tool_error>",
    )]);
    let failure = failed(read_result(result));
    assert_eq!(failure.flags().category, ErrorCategory::Auth);
    assert!(failure.is_escalation());
    match failure.envelope() {
        Some(Envelope::ToolError(e)) => assert_eq!(e.available_actions(), ["a.b", "c.d"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_envelope_may_follow_a_prose_block() {
    // Another server writes a human summary first, the envelope second.
    let result = CallToolResult::error(vec![
        ContentBlock::image("aGk=", "image/png"),
        ContentBlock::text("The upstream is busy."),
        ContentBlock::text(ToolError::new(ErrorCode::ServerBusy, "Busy").to_xml()),
    ]);
    let failure = failed(read_result(result));
    assert!(failure.parse_error().is_none());
    assert_eq!(failure.tool_error().unwrap().message(), "Busy");
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert!(matches!(failure.decision(), Decision::Retry { .. }));

    // No text at all, or non-text content only: no contract, not retried.
    for content in [vec![], vec![ContentBlock::image("aGk=", "image/png")]] {
        let failure = failed(read_result(CallToolResult::error(content)));
        assert!(failure.envelope().is_none());
        assert!(failure.parse_error().is_some());
        assert_eq!(failure.flags(), &Flags::uncontracted());
        assert_eq!(failure.to_string(), "INTERNAL_ERROR (unknown): (no text)");
    }
}

#[test]
fn a_rate_limit_waits_the_envelopes_delay_when_meta_states_none_readable() {
    // `_meta` flags whose `retryAfterSeconds` is absent, a string or negative: the
    // `<retry_after>` of the envelope still decides the wait, never the 250 ms backoff.
    let envelope = ToolError::rate_limited("Slow down", 7).to_xml();
    for stated in [None, Some(json!("7")), Some(json!(-7)), Some(json!(0))] {
        let mut flags = json!({
            "isError": true, "errorCategory": "rate_limit", "isRetryable": true,
            "code": "RATE_LIMITED", "severity": "error",
        });
        if let Some(stated) = &stated {
            flags["retryAfterSeconds"] = stated.clone();
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(envelope.clone())]);
        let mut meta = Map::new();
        meta.insert(fusion::FLAGS_META_KEY.to_owned(), flags);
        result.meta = Some(MetaObject(meta));
        let failure = failed(read_result(result));
        assert_eq!(failure.flags().retry_after_secs, Some(7), "{stated:?}");
        assert_eq!(
            failure.decision(),
            &Decision::Retry { wait: secs(7) },
            "{stated:?}"
        );
    }
}

/// Another MCP server, written on rmcp directly: its tools carry dots in their names (MCP
/// allows them), and `ns` is a tool too. Every call answers the tool name and arguments it got.
struct Dotted;

impl rmcp::ServerHandler for Dotted {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::model::ErrorData> {
        let schema = json!({"type": "object"}).as_object().unwrap().clone();
        Ok(rmcp::model::ListToolsResult::with_all_items(
            ["github.search", "a.b.c", "ns"]
                .into_iter()
                .map(|name| rmcp::model::Tool::new(name, "Echoes.", schema.clone()))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::model::ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(
            CallToolResult::success(vec![ContentBlock::text(format!("{} {args}", request.name))])
                .into(),
        )
    }
}

#[tokio::test]
async fn a_listed_tool_name_with_dots_is_called_as_is() {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = Dotted.serve(server_end).await.expect("handshake");
        running.waiting().await
    });
    let running = ClientConfig::default()
        .serve(client_end)
        .await
        .expect("client connects");
    let client = Client::discover(running.peer().clone()).await.unwrap();
    for (name, sent) in [
        ("github.search", "github.search {}"),
        ("a.b.c", "a.b.c {}"),
        // Not listed: `tool.action` of a grouped tool, as before.
        ("ns.list", r#"ns {"action":"list"}"#),
    ] {
        let output = client.call(name, json!({})).await.unwrap();
        assert_eq!(output.text(), Some(sent), "{name}");
    }
    // Without discovery the client cannot know: split at the first dot.
    let fixed = client.with_flat_names(false);
    assert_eq!(fixed.route("github.search", Map::new()).0, "github");
}

#[test]
fn a_payload_of_xml_that_only_looks_like_an_envelope_is_the_payload() {
    let payload = "<tool_errors><count>0</count></tool_errors>";
    let warning = ToolError::deprecated("Use v2.").warning().to_xml();
    let result = CallToolResult::success(vec![
        ContentBlock::text(warning),
        ContentBlock::text(payload),
    ]);
    let output = read_result(result).unwrap();
    assert_eq!(output.text(), Some(payload));
    assert_eq!(output.warnings().len(), 1);
    assert_eq!(output.warnings()[0].code(), &ErrorCode::Deprecated);
}
