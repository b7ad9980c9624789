//! The fixtures of the suite's `server-stateless` scenario (MCP 2026-07-28, SEP-2575): a tool
//! that logs, one that asks the user a question, and two that change the tool and prompt lists
//! (told to clients through `Server::list_changes`).

use std::sync::OnceLock;
use std::time::Duration;

use fusion::server::ListChanges;
use fusion::{LogLevel, RequestContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The server's list-change handle, set once in `main`.
static CHANGES: OnceLock<ListChanges> = OnceLock::new();

/// Hands the triggers the server's list-change handle.
pub(crate) fn tell(changes: ListChanges) {
    let _ = CHANGES.set(changes);
}

fn changes() -> Option<&'static ListChanges> {
    CHANGES.get()
}

/// The answer `test_streaming_elicitation` asks for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Confirmation {
    /// Whether to go on
    confirmed: bool,
}

/// Sends log messages during execution (at info and debug)
#[fusion::tool]
pub(crate) async fn test_logging_tool(ctx: RequestContext) -> &'static str {
    ctx.log_as(
        Some("conformance-server"),
        LogLevel::Info,
        "Logging tool started",
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    ctx.log_as(
        Some("conformance-server"),
        LogLevel::Debug,
        "Logging tool working",
    );
    ctx.log_as(
        Some("conformance-server"),
        LogLevel::Info,
        "Logging tool done",
    );
    "Logging tool completed"
}

/// Asks the user to confirm (elicitation), answered on the response stream
#[fusion::tool]
pub(crate) async fn test_streaming_elicitation(ctx: RequestContext) -> String {
    match ctx.elicit::<Confirmation>("Please confirm to go on").await {
        Ok(answer) => format!("Elicitation completed: confirmed={}", answer.confirmed),
        Err(unanswered) => format!("Elicitation completed: {unanswered}"),
    }
}

/// Tells clients the tool list changed
#[fusion::tool]
pub(crate) fn test_trigger_tool_change() -> &'static str {
    changes().map(ListChanges::tools);
    "Tool list change sent"
}

/// Tells clients the prompt list changed
#[fusion::tool]
pub(crate) fn test_trigger_prompt_change() -> &'static str {
    changes().map(ListChanges::prompts);
    "Prompt list change sent"
}
