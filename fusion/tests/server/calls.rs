//! `tools/call` on the wire: payloads, envelopes byte-exact with their flags, warnings, flat
//! exposition, unknown tools, the request context and progress.

use fusion::server::Exposition;
use rmcp::ServiceError;
use rmcp::model::ErrorCode as RpcCode;
use serde_json::{Value, json};

use super::tools::{
    Lab, Recorder, call, connect, connect_with, meta, params, server, texts, within,
};

const NOT_FOUND: &str = "\
<tool_error code=\"NOT_FOUND\" severity=\"error\">
<message>No invoice with that ID</message>
<recovery>List invoices first, then retry with a real ID</recovery>
<available_actions>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key=\"requestedId\">inv_2026_9999</detail>
</details>
</tool_error>";

fn not_found_flags() -> Value {
    json!({
        "isError": true,
        "errorCategory": "not_found",
        "isRetryable": false,
        "code": "NOT_FOUND",
        "severity": "error",
    })
}

#[tokio::test]
async fn a_good_call_answers_the_payload() {
    let client = connect(server(&Lab::default())).await;
    let result = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026_0001"}),
    )
    .await;
    assert_eq!(
        texts(&result),
        [r#"{"id":"inv_2026_0001","amount_cents":1200}"#]
    );
    assert_eq!(result.is_error, Some(false));
    assert!(result.meta.is_none());
    assert!(result.structured_content.is_none());

    let sum = call(&client, "add", json!({"a": 1.5, "b": 2})).await;
    assert_eq!(texts(&sum), ["3.5"]);
}

#[tokio::test]
async fn a_domain_error_travels_as_envelope_and_flags() {
    let client = connect(server(&Lab::default())).await;
    let result = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026_9999"}),
    )
    .await;
    assert_eq!(texts(&result), [NOT_FOUND]);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(meta(&result)["fusion/error"], not_found_flags());
    // Not in structuredContent unless the server opts in.
    assert!(result.structured_content.is_none());

    let throttled = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_throttle"}),
    )
    .await;
    assert_eq!(
        meta(&throttled)["fusion/error"],
        json!({
            "isError": true,
            "errorCategory": "rate_limit",
            "isRetryable": true,
            "retryAfterSeconds": 30,
            "code": "RATE_LIMITED",
            "severity": "error",
        })
    );
}

#[tokio::test]
async fn flags_go_to_structured_content_only_when_enabled() {
    let client = connect(server(&Lab::default()).flags_in_structured_content(true)).await;
    let result = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026_9999"}),
    )
    .await;
    assert_eq!(result.structured_content, Some(not_found_flags()));
    assert_eq!(meta(&result)["fusion/error"], not_found_flags());
    let good = call(&client, "add", json!({"a": 1, "b": 2})).await;
    assert!(good.structured_content.is_none());
}

#[tokio::test]
async fn invalid_arguments_answer_a_validation_envelope() {
    let client = connect(server(&Lab::default())).await;
    let result = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv", "extra": 1}),
    )
    .await;
    assert_eq!(
        texts(&result),
        ["\
<validation_error action=\"billing.get_invoice\">
<field name=\"extra\">Unknown field. You sent: 1. Expected one of the known fields: id.</field>
<field name=\"id\">Too short. You sent: 'inv'. Expected at least 5 characters.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"]
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        meta(&result)["fusion/error"],
        json!({
            "isError": true,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "VALIDATION_ERROR",
            "severity": "error",
        })
    );
}

#[tokio::test]
async fn a_missing_discriminator_lists_the_actions() {
    let client = connect(server(&Lab::default())).await;
    // No `arguments` at all: the call proceeds with an empty object.
    let result = call(&client, "billing", Value::Null).await;
    assert_eq!(
        texts(&result),
        ["\
<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">
<message>The tool 'billing' needs the argument 'action' naming the action to run.</message>
<recovery>Call 'billing' again with 'action' set to one of the available actions.</recovery>
<available_actions>
  <action>billing.list_invoices</action>
  <action>billing.get_invoice</action>
  <action>billing.refund</action>
</available_actions>
</tool_error>"]
    );
    assert_eq!(
        meta(&result)["fusion/error"]["code"],
        "MISSING_DISCRIMINATOR"
    );
}

#[tokio::test]
async fn a_warning_rides_next_to_the_payload() {
    let client = connect(server(&Lab::default())).await;
    let result = call(
        &client,
        "billing",
        json!({"action": "refund", "id": "inv_2026_0001", "partial": true}),
    )
    .await;
    assert_eq!(
        texts(&result),
        [
            "refunded inv_2026_0001",
            "\
<tool_error code=\"DEPRECATED\" severity=\"warning\">
<message>Parameter 'partial' is deprecated; refunds are whole.</message>
<recovery>Drop 'partial' from future calls.</recovery>
</tool_error>"
        ]
    );
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        meta(&result)["fusion/error"],
        json!({
            "isError": false,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "DEPRECATED",
            "severity": "warning",
        })
    );
}

#[tokio::test]
async fn flat_exposition_injects_the_discriminator_and_renames_available_actions() {
    let client = connect(server(&Lab::default()).exposition(Exposition::Flat)).await;
    let listed = call(&client, "billing_list_invoices", json!({})).await;
    assert_eq!(texts(&listed), [r#"["inv_2026_0001"]"#]);
    // A discriminator sent by the model cannot pick another action.
    let forced = call(
        &client,
        "billing_list_invoices",
        json!({"action": "refund"}),
    )
    .await;
    assert_eq!(texts(&forced), [r#"["inv_2026_0001"]"#]);

    let missing = call(
        &client,
        "billing_get_invoice",
        json!({"id": "inv_2026_9999"}),
    )
    .await;
    assert_eq!(
        texts(&missing),
        [NOT_FOUND.replace("billing.list_invoices", "billing_list_invoices")]
    );
    assert_eq!(meta(&missing)["fusion/error"], not_found_flags());

    // The grouped name no longer exists.
    let err = within(client.call_tool(params("billing", json!({"action": "refund"}))))
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::McpError(e) if e.code == RpcCode::INVALID_PARAMS));
}

#[tokio::test]
async fn flat_exposition_names_the_flat_tool_in_validation_envelopes() {
    let client = connect(server(&Lab::default()).exposition(Exposition::Flat)).await;
    let result = call(&client, "billing_get_invoice", json!({"id": "inv"})).await;
    assert_eq!(
        texts(&result),
        ["\
<validation_error action=\"billing_get_invoice\">
<field name=\"id\">Too short. You sent: 'inv'. Expected at least 5 characters.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"]
    );
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_by_default() {
    let client = connect(server(&Lab::default())).await;
    let err = within(client.call_tool(params("billng", json!({}))))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = err else {
        panic!("expected a JSON-RPC error, got {err:?}");
    };
    assert_eq!(error.code, RpcCode::INVALID_PARAMS);
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "Unknown tool: 'billng'");
    // The connection keeps serving.
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 1})).await),
        ["2.0"]
    );
}

#[tokio::test]
async fn an_unknown_tool_answers_an_envelope_when_enabled() {
    let client = connect(server(&Lab::default()).unknown_tool_as_envelope(true)).await;
    let result = call(&client, "billng", json!({})).await;
    assert_eq!(
        texts(&result),
        ["\
<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">
<message>No tool named 'billng'.</message>
<recovery>Did you mean 'billing'? Call one of the available tools.</recovery>
<available_actions>
  <action>billing</action>
  <action>add</action>
  <action>lab</action>
</available_actions>
</tool_error>"]
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(meta(&result)["fusion/error"]["errorCategory"], "validation");

    let far = call(&client, "xyzzy", json!({})).await;
    assert!(texts(&far)[0].contains("<recovery>Call one of the available tools.</recovery>"));
}

#[tokio::test]
async fn the_request_context_carries_the_client_and_meta() {
    let client = connect(server(&Lab::default())).await;
    let result = call(&client, "lab", json!({"action": "whoami"})).await;
    // rmcp clients put a progress token in every request's `_meta`.
    assert_eq!(texts(&result), ["fusion-test-client progressToken=true"]);
}

#[tokio::test]
async fn progress_reports_reach_the_client() {
    let recorder = Recorder::default();
    let client = connect_with(server(&Lab::default()), recorder.clone()).await;
    let result = call(&client, "lab", json!({"action": "progress"})).await;
    assert_eq!(texts(&result), ["done"]);
    // Sent before the result; the client handles notifications on tasks of their own.
    within(async {
        while recorder.progress.lock().unwrap().len() < 3 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    let mut reports: Vec<(f64, Option<f64>, Option<String>)> = recorder
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    reports.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(
        reports,
        [
            (1.0, Some(3.0), Some("step 1".to_owned())),
            (2.0, Some(3.0), Some("step 2".to_owned())),
            (3.0, Some(3.0), Some("step 3".to_owned())),
        ]
    );
}
