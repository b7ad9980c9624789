//! One `tracing` span per call: its fields say which tool and action ran and how the call
//! ended, and whatever the call logs is inside it.

use fusion::testing::Tester;
use fusion::{ToolError, ToolResponse};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tracing_subscriber::fmt::format::FmtSpan;

/// A notebook.
struct Notes;

#[derive(Deserialize, JsonSchema)]
/// Which note.
struct NoteId {
    /// The note's id.
    id: u32,
}

/// Notes.
#[fusion::tool]
impl Notes {
    /// Reads a note.
    #[action(read_only)]
    async fn get(&self, args: NoteId) -> Result<ToolResponse, ToolError> {
        match args.id {
            1 => Ok(ToolResponse::text("first note")),
            _ => Err(ToolError::not_found("No such note").suggest("List the notes first.")),
        }
    }

    /// Fails without a contract.
    #[action]
    async fn sync(&self) -> anyhow::Result<String> {
        Err(anyhow::anyhow!("connect to 10.0.0.7 refused"))
    }
}

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

/// Runs one call through a tester under a subscriber that logs span closes; returns the log.
async fn log_of(name: &str, arguments: serde_json::Value) -> String {
    let log = Captured::default();
    let subscriber = log.builder().with_span_events(FmtSpan::CLOSE).finish();
    let _default = tracing::subscriber::set_default(subscriber);
    Tester::new().tool(Notes).call(name, arguments).await;
    log.text()
}

/// The line the span's close wrote.
fn close_line(log: &str) -> &str {
    log.lines()
        .find(|line| line.contains("tool_call{") && line.contains("close"))
        .unwrap_or_else(|| panic!("no close of a tool_call span in:\n{log}"))
}

#[tokio::test(flavor = "current_thread")]
async fn a_success_is_recorded_with_its_tool_action_and_latency() {
    let log = log_of("notes", json!({"action": "get", "id": 1})).await;
    let line = close_line(&log);
    for field in [
        "tool=\"notes\"",
        "action=\"get\"",
        "outcome=\"ok\"",
        "latency_ms=",
    ] {
        assert!(line.contains(field), "{field} missing from: {line}");
    }
    assert!(!line.contains("code="), "a success has no code: {line}");
}

#[tokio::test(flavor = "current_thread")]
async fn an_error_is_recorded_with_its_code_and_category() {
    let log = log_of("notes", json!({"action": "get", "id": 2})).await;
    let line = close_line(&log);
    for field in [
        "action=\"get\"",
        "outcome=\"error\"",
        "code=\"NOT_FOUND\"",
        "category=\"not_found\"",
    ] {
        assert!(line.contains(field), "{field} missing from: {line}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn rejected_arguments_are_recorded_as_invalid() {
    let log = log_of("notes", json!({"action": "get", "id": "one"})).await;
    let line = close_line(&log);
    for field in [
        "outcome=\"invalid\"",
        "code=\"VALIDATION_ERROR\"",
        "category=\"validation\"",
    ] {
        assert!(line.contains(field), "{field} missing from: {line}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_internal_error_is_logged_inside_the_span_naming_tool_and_action() {
    let log = log_of("notes", json!({"action": "sync"})).await;
    let line = log
        .lines()
        .find(|line| line.contains("ERROR") && line.contains("error_id"))
        .unwrap_or_else(|| panic!("no internal-error line in:\n{log}"));
    assert!(
        line.contains("tool_call{"),
        "not inside the call's span: {line}"
    );
    assert!(line.contains("tool=\"notes\""), "no tool: {line}");
    assert!(line.contains("action=\"sync\""), "no action: {line}");
    assert!(
        line.contains("10.0.0.7"),
        "the cause goes to the log: {line}"
    );
}
