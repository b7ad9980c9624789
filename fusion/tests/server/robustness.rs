//! The server keeps serving: panics, client cancellation, a thousand concurrent calls, and
//! oversized arguments.

use std::sync::atomic::Ordering;
use std::time::Duration;

use fusion::server::Server;
use rmcp::model::{CallToolRequest, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;
use tokio::task::JoinSet;

use super::tools::{Lab, Named, call, connect, meta, params, quiet_panics, server, texts, within};

#[tokio::test]
async fn a_panicking_action_answers_internal_error_and_the_next_call_succeeds() {
    quiet_panics();
    let client = connect(server(&Lab::default())).await;
    let result = call(&client, "lab", json!({"action": "explode"})).await;
    let envelope = texts(&result)[0];
    assert!(
        envelope.starts_with("<tool_error code=\"INTERNAL_ERROR\" severity=\"error\">"),
        "{envelope}"
    );
    assert!(envelope.contains("<detail key=\"errorId\">"), "{envelope}");
    assert!(
        !envelope.contains("hunter2"),
        "the panic message leaked: {envelope}"
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(meta(&result)["fusion/error"]["code"], "INTERNAL_ERROR");

    let next = call(&client, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(texts(&next), ["5.0"]);
}

#[tokio::test]
async fn a_hand_written_tool_panicking_in_call_is_contained() {
    quiet_panics();
    let server = Server::new("s", "1").tool(Named::single("fragile"));
    let client = connect(server.tool(super::tools::Add)).await;
    let result = call(&client, "fragile", json!({})).await;
    assert!(texts(&result)[0].starts_with("<tool_error code=\"INTERNAL_ERROR\""));
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 1})).await),
        ["2.0"]
    );
}

#[tokio::test]
async fn client_cancellation_drops_the_action_future() {
    let lab = Lab::default();
    let client = connect(server(&lab)).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(
        "lab",
        json!({"action": "wait"}),
    )));
    let handle = within(
        client
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options()),
    )
    .await
    .unwrap();
    within(lab.probe.started.notified()).await;
    assert!(!lab.probe.dropped.load(Ordering::SeqCst));

    // Sends `notifications/cancelled` for the request.
    within(handle.cancel(Some("the user gave up".to_owned())))
        .await
        .unwrap();
    within(async {
        while !lab.probe.dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;

    // The connection keeps serving.
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 2})).await),
        ["3.0"]
    );
}

#[tokio::test]
async fn abandoning_a_call_future_cancels_it_too() {
    let lab = Lab::default();
    let client = connect(server(&lab)).await;
    // rmcp's client sends `notifications/cancelled` when a call future is dropped.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool(params("lab", json!({"action": "wait"}))),
    )
    .await;
    assert!(abandoned.is_err(), "the call cannot finish on its own");
    within(async {
        while !lab.probe.dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Sum(i64),
    Validation,
    Internal,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_are_each_answered_once() {
    quiet_panics();
    let client = connect(server(&Lab::default())).await;
    let mut calls = JoinSet::new();
    for i in 0..1000i64 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            let (name, arguments) = match i % 3 {
                0 => ("add", json!({"a": i, "b": 1})),
                1 => ("add", json!({"a": "not a number", "b": i})),
                _ => ("lab", json!({"action": "explode"})),
            };
            let result = peer.call_tool(params(name, arguments)).await;
            (i, result)
        });
    }
    let answers = tokio::time::timeout(Duration::from_secs(120), async {
        let mut answers = Vec::new();
        while let Some(joined) = calls.join_next().await {
            answers.push(joined.expect("the call task"));
        }
        answers
    })
    .await
    .expect("every call answered within 120 s");

    assert_eq!(answers.len(), 1000);
    let mut seen = vec![false; 1000];
    for (i, result) in answers {
        let result = result.unwrap_or_else(|e| panic!("call {i} failed: {e}"));
        let text = texts(&result)[0];
        let kind = if text.starts_with("<validation_error action=\"add\">") {
            Kind::Validation
        } else if text.starts_with("<tool_error code=\"INTERNAL_ERROR\"") {
            Kind::Internal
        } else {
            Kind::Sum(text.parse::<f64>().unwrap_or_else(|_| panic!("{text}")) as i64)
        };
        let expected = match i % 3 {
            0 => Kind::Sum(i + 1),
            1 => Kind::Validation,
            _ => Kind::Internal,
        };
        assert_eq!(kind, expected, "call {i}: {text}");
        assert_eq!(
            result.is_error,
            Some(expected != Kind::Sum(i + 1)),
            "call {i}"
        );
        assert!(!seen[i as usize], "call {i} answered twice");
        seen[i as usize] = true;
    }
    // Still serving afterwards.
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 1})).await),
        ["2.0"]
    );
}

#[tokio::test]
async fn arguments_over_the_size_limit_answer_a_validation_error() {
    let client = connect(server(&Lab::default())).await;
    let huge = "x".repeat(5_000_000);
    let result = call(&client, "lab", json!({"action": "echo", "value": huge})).await;
    assert_eq!(
        texts(&result),
        ["\
<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">
<message>The arguments are over 4194304 bytes of JSON (at least 5000026 bytes sent).</message>
<recovery>Send arguments under 4194304 bytes: shorten the longest values or split the work into several calls.</recovery>
</tool_error>"]
    );
    assert_eq!(meta(&result)["fusion/error"]["errorCategory"], "validation");
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 1})).await),
        ["2.0"]
    );

    // Without the limit the tool sees all of it.
    let unlimited = connect(server(&Lab::default()).max_argument_bytes(None)).await;
    let result = call(
        &unlimited,
        "lab",
        json!({"action": "echo", "value": "x".repeat(5_000_000)}),
    )
    .await;
    assert_eq!(texts(&result), ["5000002 bytes"]);
}

#[tokio::test]
async fn deeply_nested_arguments_answer_a_validation_error() {
    let client = connect(server(&Lab::default())).await;
    let mut value = json!(1);
    for _ in 0..100 {
        value = json!([value]);
    }
    let result = call(&client, "lab", json!({"action": "echo", "value": value})).await;
    let envelope = texts(&result)[0];
    assert!(
        envelope.starts_with("<validation_error action=\"lab.echo\">"),
        "{envelope}"
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        texts(&call(&client, "add", json!({"a": 1, "b": 1})).await),
        ["2.0"]
    );
}
