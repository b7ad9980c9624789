//! What a call returns: validation envelopes, warnings next to the payload, batches, and names
//! routed by the server's exposition.

use fusion::client::{AbortReason, CallError, Decision, Flags};
use fusion::server::Exposition;
use fusion::{ErrorCategory, ErrorCode, Severity};
use serde_json::{Map, Value, json};

use super::{Flaky, client_for, exact_policy, failed};

#[tokio::test]
async fn validation_failures_carry_the_envelope_and_are_not_retried() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let failure = failed(
        client
            .call("flaky.lookup", json!({"id": "x", "extra": true}))
            .await,
    );
    let validation = failure.validation().expect("a validation envelope");
    assert_eq!(validation.action(), "flaky.lookup");
    let names: Vec<&str> = validation.problems().iter().map(|p| p.path()).collect();
    assert_eq!(names, ["extra", "id"]);
    assert_eq!(failure.flags(), &Flags::validation());
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::Category(ErrorCategory::Validation))
    );
    assert_eq!(failure.attempts(), 1);
    assert_eq!(failure.result().is_error, Some(true));
    let raw = failure.result().content[0].as_text().unwrap().text.clone();
    assert_eq!(validation.to_xml(), raw, "re-renders to the bytes received");
}

#[tokio::test]
async fn warnings_ride_next_to_the_payload_and_never_become_errors() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let output = client
        .call("flaky.lookup", json!({"id": "abc"}))
        .await
        .expect("a success");
    assert_eq!(output.text(), Some("found abc"));
    assert_eq!(output.warnings().len(), 1);
    let warning = &output.warnings()[0];
    assert_eq!(warning.code(), &ErrorCode::Deprecated);
    assert_eq!(warning.severity_level(), Severity::Warning);
    assert_eq!(warning.recovery(), Some("Call flaky.fetch next time."));

    // A warning alone is still a success: no payload, one warning, flags from `_meta`.
    let output = client
        .call("flaky.advise", json!({}))
        .await
        .expect("a success");
    assert_eq!(output.text(), None);
    assert_eq!(output.warnings()[0].code().as_str(), "PARTIAL");
    assert_eq!(
        output.warnings()[0].message(),
        "Only the first page was returned."
    );
    assert_eq!(output.result().is_error, Some(false));
}

#[tokio::test]
async fn a_batch_keeps_every_sibling_result() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let results = client
        .call_batch([
            ("flaky.lookup", json!({"id": "first"})),
            ("flaky.lookup", json!({"id": ""})),
            ("flaky.nope", json!({})),
            ("no_such_tool", json!({})),
            ("flaky.lookup", json!(["not", "an", "object"])),
            ("flaky.lookup", json!({"id": "last"})),
        ])
        .await;
    assert_eq!(results.len(), 6);
    assert_eq!(results[0].as_ref().unwrap().text(), Some("found first"));
    assert!(
        results[1]
            .as_ref()
            .unwrap_err()
            .tool_failure()
            .unwrap()
            .validation()
            .is_some()
    );
    let unknown = results[2].as_ref().unwrap_err().flags().unwrap();
    assert_eq!(unknown.code, ErrorCode::UnknownAction);
    assert!(
        matches!(results[3], Err(CallError::Protocol(_))),
        "{:?}",
        results[3]
    );
    assert!(matches!(results[4], Err(CallError::Arguments("an array"))));
    assert_eq!(results[5].as_ref().unwrap().text(), Some("found last"));
}

#[tokio::test]
async fn names_follow_the_servers_exposition() {
    // Flat: `flaky.fetch` is the `flaky_fetch` tool, learned from tools/list.
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Flat, exact_policy()).await;
    let (tool, args) = client.route("flaky.fetch", Map::new());
    assert_eq!((tool.as_str(), args.len()), ("flaky_fetch", 0));
    assert_eq!(
        client.call("flaky.fetch", json!({})).await.unwrap().text(),
        Some("ok 1")
    );
    // A flat name is sent as is.
    assert_eq!(
        client.call("flaky_fetch", json!({})).await.unwrap().text(),
        Some("ok 2")
    );

    // Grouped: the `flaky` tool with the discriminator, which overrides one already sent.
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let (tool, args) = client.route(
        "flaky.fetch",
        json!({"action": "advise"}).as_object().unwrap().clone(),
    );
    assert_eq!(tool, "flaky");
    assert_eq!(Value::Object(args), json!({"action": "fetch"}));
    assert_eq!(
        client.call("flaky.fetch", json!({})).await.unwrap().text(),
        Some("ok 3")
    );

    // Configured instead of discovered, with another discriminator name.
    let fixed = client.clone().with_flat_names(true);
    assert_eq!(
        fixed.route("a.b.c", Map::new()).0,
        "a_b.c",
        "split at the first dot"
    );
    let renamed = client.with_flat_names(false).with_discriminator("op");
    let (_, args) = renamed.route("a.b", Map::new());
    assert_eq!(Value::Object(args), json!({"op": "b"}));
}
