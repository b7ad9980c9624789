//! `ToolResponse` into rmcp's `CallToolResult`: content blocks, `isError`, `_meta` flags,
//! `structuredContent`.

use fusion::validation::ArgumentValidator;
use fusion::{ToolError, ToolResponse};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .map(|c| c.as_text().expect("text content").text.clone())
        .collect()
}

fn meta_flags(result: &CallToolResult) -> Option<Value> {
    result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(fusion::FLAGS_META_KEY).cloned())
}

#[test]
fn error_result_carries_envelope_and_flags() {
    let err = ToolError::not_found("No invoice with that ID").actions(["billing.list_invoices"]);
    let result = CallToolResult::from(ToolResponse::error(err.clone()));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result), [err.to_xml()]);
    assert_eq!(meta_flags(&result), Some(err.flags()));
    assert_eq!(
        result.structured_content, None,
        "flags in structuredContent are opt-in"
    );
}

#[test]
fn warning_severity_error_is_not_an_error() {
    let result = CallToolResult::from(ToolResponse::error(ToolError::deprecated("old")));
    assert_eq!(result.is_error, Some(false));
    assert_eq!(meta_flags(&result).unwrap()["isError"], false);
}

#[test]
fn critical_error_is_an_error() {
    let result = CallToolResult::from(ToolResponse::error(ToolError::internal("down").critical()));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(meta_flags(&result).unwrap()["severity"], "critical");
}

#[test]
fn flags_in_structured_content_when_opted_in() {
    let err = ToolError::rate_limited("slow", 9);
    let result =
        CallToolResult::from(ToolResponse::error(err.clone()).flags_in_structured_content(true));
    assert_eq!(result.structured_content, Some(err.flags()));
    // Never on a success.
    let ok = CallToolResult::from(ToolResponse::text("done").flags_in_structured_content(true));
    assert_eq!(ok.structured_content, None);
    assert_eq!(ok.meta, None);
}

#[test]
fn success_with_a_warning_riding_next_to_it() {
    let payload = json!({"invoices": [{"id": "inv_1"}]});
    let warning = ToolError::new("TRUNCATED", "Only the first 100 invoices are listed.")
        .suggest("Pass page=2 for the rest.");
    let response = ToolResponse::json(&payload)
        .with_warning(warning.clone())
        .with_structured_content(payload.clone());
    let result = CallToolResult::from(response);
    assert_eq!(result.is_error, Some(false));
    let blocks = texts(&result);
    assert_eq!(blocks[0], r#"{"invoices":[{"id":"inv_1"}]}"#);
    assert_eq!(blocks[1], warning.clone().warning().to_xml());
    assert!(blocks[1].contains("severity=\"warning\""));
    assert_eq!(result.structured_content, Some(payload));
    assert_eq!(meta_flags(&result).unwrap()["code"], "TRUNCATED");
    assert_eq!(meta_flags(&result).unwrap()["isError"], false);
}

#[test]
fn structured_content_is_never_sent_on_an_error() {
    let payload = json!({"id": "inv_1"});
    for error in [
        ToolError::not_found("No invoice with that ID"),
        // `isError: false`, yet no success: a value for the output schema would be a lie.
        ToolError::deprecated("old"),
    ] {
        let response = ToolResponse::error(error).with_structured_content(payload.clone());
        assert_eq!(
            CallToolResult::from(response.clone()).structured_content,
            None
        );
        // The opt-in flags take its place.
        let flags = response.flags();
        let result = CallToolResult::from(response.flags_in_structured_content(true));
        assert_eq!(result.structured_content, flags);
    }
}

#[test]
fn plain_success_has_no_flags() {
    let result = CallToolResult::from(ToolResponse::text("OK"));
    assert_eq!(result.is_error, Some(false));
    assert_eq!(texts(&result), ["OK"]);
    assert_eq!(result.meta, None);
}

#[test]
fn unserializable_payload_becomes_internal_error() {
    let mut bad = std::collections::HashMap::new();
    bad.insert(vec![1u8], 1); // non-string map keys cannot be JSON
    let response = ToolResponse::json(&bad);
    assert!(response.is_error());
    assert_eq!(
        response.tool_error().unwrap().code().as_str(),
        "INTERNAL_ERROR"
    );
}

#[test]
fn validation_error_result() {
    let schema =
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
    let validator = ArgumentValidator::new("billing.get_invoice", &schema).unwrap();
    let problems = validator.check(&json!({}));
    let result = CallToolResult::from(ToolResponse::validation(problems.clone()));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result), [problems.to_xml()]);
    assert_eq!(meta_flags(&result).unwrap()["code"], "VALIDATION_ERROR");
    assert_eq!(meta_flags(&result).unwrap()["errorCategory"], "validation");
}

#[test]
fn serialized_result_has_mcp_field_names() {
    let result = CallToolResult::from(ToolResponse::error(ToolError::timeout("slow")));
    let wire = serde_json::to_value(&result).unwrap();
    assert_eq!(wire["isError"], true);
    assert_eq!(wire["_meta"]["fusion/error"]["errorCategory"], "transient");
    assert_eq!(wire["content"][0]["type"], "text");
}
