//! Behaviour of `#[fusion::tool]`: dispatch, routing errors, argument validation, return and
//! error kinds, panics, the generated definition, the action constants and output schemas. One test binary;
//! the tools and their tests are grouped by topic in `tool/`.

#[path = "tool/definitions.rs"]
mod definitions;
#[path = "tool/dispatch.rs"]
mod dispatch;
#[path = "tool/functions.rs"]
mod functions;
#[path = "tool/outcomes.rs"]
mod outcomes;
#[path = "tool/output_schema.rs"]
mod output_schema;

use fusion::{RequestContext, ToolExt, ToolResponse};
use serde_json::{Map, Value};

// --- helpers ---------------------------------------------------------------------------------

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// One direct call: `tool` by value, or a `&Arc` of one to call again.
async fn call(tool: impl ToolExt, arguments: Value) -> ToolResponse {
    tool.call(object(arguments), RequestContext::new()).await
}

/// The envelope of a failed call (`<tool_error>` or `<validation_error>`).
fn envelope(response: &ToolResponse) -> String {
    assert!(response.is_error(), "expected an error, got {response:?}");
    response.content_texts().remove(0)
}

fn payload(response: &ToolResponse) -> &str {
    match response.payload() {
        Some(text) => text,
        None => panic!("expected a success, got {response:?}"),
    }
}
