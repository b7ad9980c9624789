//! Self-healing on the wire: `<contract_awareness>` in the validation errors a real server
//! sends, scoped per action, capped, escaped, and read back by the client.

use std::time::Duration;

use fusion::ValidationError;
use fusion::contract::{ContractBaseline, DeltaClass, Lockfile, ScopedDelta};
use fusion::server::{Exposition, Server};
use fusion::testing::Tester;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use serde_json::{Value, json};

use super::{contract_of, v1, v2};

fn baseline() -> ContractBaseline {
    let text = contract_of(&v1::Billing).to_lockfile();
    ContractBaseline::new(Lockfile::parse(&text).unwrap())
}

const CHARGE_AWARENESS: &str = "\
<contract_awareness>
  <delta severity=\"BREAKING\" scope=\"billing.charge\">Field 'currency' became required (before: optional; now: required).</delta>
  <delta severity=\"BREAKING\" scope=\"billing.charge\">Type of field 'currency' changed (before: null or string; now: string).</delta>
  <delta severity=\"RISKY\" scope=\"billing.charge\">Constraint minimum of field 'amount_cents' tightened (before: 0; now: 1).</delta>
  <delta severity=\"RISKY\" scope=\"billing.charge\">Hint idempotent changed (before: true; now: false (MCP default)).</delta>
</contract_awareness>
";

async fn call(server: Server, name: &str, arguments: Value) -> CallToolResult {
    let client = server
        .serve_in_process(ClientConfig::default())
        .await
        .expect("client");
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
        .await
        .expect("answered within 10 s")
        .expect("a tool result");
    client.cancel().await.expect("client closes");
    result
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("text").text.clone()
}

#[tokio::test]
async fn a_validation_error_tells_the_model_what_changed() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let args = json!({"action": "charge", "invoice_id": "inv_1", "amount_cents": 5});
    let result = call(server, "billing", args.clone()).await;
    let envelope = text(&result);
    let plain = call(
        Server::new("billing", "2.0.0").tool(v2::Billing),
        "billing",
        args,
    )
    .await;
    let plain = text(&plain);

    // The plain envelope with the section between the last field line and the recovery.
    let (head, recovery) = plain.split_at(plain.find("<recovery>").unwrap());
    assert_eq!(envelope, format!("{head}{CHARGE_AWARENESS}{recovery}"));
    assert!(head.contains("<field name=\"currency\">"), "{plain}");
    assert_eq!(result.is_error, Some(true));

    // Well-formed XML, the section a child of the envelope, its deltas parsed back.
    let doc = roxmltree::Document::parse(&envelope).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "validation_error");
    let children: Vec<&str> = root
        .children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(
        children,
        ["field", "contract_awareness", "recovery"],
        "{envelope}"
    );
    let section = root
        .children()
        .find(|n| n.has_tag_name("contract_awareness"))
        .unwrap();
    let deltas: Vec<(&str, &str)> = section
        .children()
        .filter(|n| n.is_element())
        .map(|n| {
            (
                n.attribute("severity").unwrap(),
                n.attribute("scope").unwrap(),
            )
        })
        .collect();
    assert_eq!(deltas.len(), 4);
    assert!(deltas.iter().all(|(_, scope)| *scope == "billing.charge"));

    // The client reads the section back, and renders the same bytes.
    let parsed = fusion::client::parse_envelope(&envelope).expect("the client parses it");
    let validation = parsed.validation().expect("a validation envelope");
    assert_eq!(validation.contract_awareness().len(), 4);
    assert!(
        validation
            .contract_awareness()
            .iter()
            .all(|d| d.scope == "billing.charge"
                && matches!(d.class, DeltaClass::Breaking | DeltaClass::Risky))
    );
    assert_eq!(validation.to_xml(), envelope);
}

#[tokio::test]
async fn the_sibling_action_gets_only_its_own_deltas() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let result = call(
        server,
        "billing",
        json!({"action": "charge_all", "note": "x"}),
    )
    .await;
    let envelope = text(&result);
    assert!(
        envelope.contains(
            "<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge_all\">Field 'note' removed; it is now rejected as unknown (before: null or string; now: absent).</delta>\n</contract_awareness>\n"
        ),
        "{envelope}"
    );
    assert!(!envelope.contains("scope=\"billing.charge\""), "{envelope}");
}

#[tokio::test]
async fn flat_exposition_names_scopes_as_flat_tools_and_the_cap_applies() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .exposition(Exposition::Flat)
        .contract_baseline(baseline().max_deltas(2));
    let result = call(server, "billing_charge", json!({"invoice_id": "inv_1"})).await;
    let envelope = text(&result);
    let section: Vec<&str> = envelope
        .lines()
        .filter(|l| l.starts_with("  <delta "))
        .collect();
    assert_eq!(section.len(), 2, "{envelope}");
    assert!(
        section
            .iter()
            .all(|l| l.starts_with("  <delta severity=\"BREAKING\" scope=\"billing_charge\">")),
        "{envelope}"
    );
}

#[tokio::test]
async fn without_a_baseline_or_without_changes_the_envelope_is_unchanged() {
    let args = json!({"action": "charge", "invoice_id": "inv_1"});
    let plain = text(
        &call(
            Server::new("b", "1").tool(v2::Billing),
            "billing",
            args.clone(),
        )
        .await,
    );
    // A baseline equal to the current contract: no delta, no section.
    let same = ContractBaseline::new(Lockfile::new(contract_of(&v2::Billing)));
    let unchanged = Server::new("b", "1")
        .tool(v2::Billing)
        .contract_baseline(same);
    assert!(unchanged.contract_awareness().unwrap().diff().is_empty());
    let with_same = text(&call(unchanged, "billing", args).await);
    assert_eq!(with_same, plain);
    assert!(!plain.contains("contract_awareness"));
    // Errors other than validation errors never carry the section.
    let server = Server::new("b", "1")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let unknown = text(&call(server, "billing", json!({"action": "charg"})).await);
    assert!(
        unknown.starts_with("<tool_error code=\"UNKNOWN_ACTION\""),
        "{unknown}"
    );
    assert!(!unknown.contains("contract_awareness"), "{unknown}");
}

#[tokio::test]
async fn the_tester_takes_the_same_baseline() {
    let tester = Tester::new()
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let outcome = tester
        .call(
            "billing.charge",
            json!({"invoice_id": "inv_1", "amount_cents": 5}),
        )
        .await;
    let snapshot = outcome.snapshot();
    assert!(snapshot.contains(CHARGE_AWARENESS), "{snapshot}");
    let flat = tester
        .call(
            "billing_charge",
            json!({"invoice_id": "inv_1", "amount_cents": 5}),
        )
        .await
        .snapshot();
    assert!(flat.contains("scope=\"billing_charge\""), "{flat}");
    assert_eq!(tester.contract(), contract_of(&v2::Billing));
}

#[test]
fn every_name_in_the_section_is_escaped() {
    let tricky = "a\"<b>&'c";
    let error = ValidationError::new("t.a")
        .with_problem("x", "Wrong. You sent: 1. Expected a string.")
        .with_contract_awareness(vec![ScopedDelta {
            class: DeltaClass::Risky,
            scope: tricky.into(),
            text: format!("Field '{tricky}' changed (before: <none>; now: a & b)."),
        }]);
    let xml = error.to_xml();
    assert!(
        xml.contains(
            "  <delta severity=\"RISKY\" scope=\"a&quot;&lt;b&gt;&amp;&apos;c\">Field 'a\"&lt;b>&amp;'c' changed (before: &lt;none>; now: a &amp; b).</delta>\n"
        ),
        "{xml}"
    );
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let delta = doc.descendants().find(|n| n.has_tag_name("delta")).unwrap();
    assert_eq!(delta.attribute("scope"), Some(tricky));
    assert_eq!(
        delta.text(),
        Some(format!("Field '{tricky}' changed (before: <none>; now: a & b).").as_str())
    );
    let mut buffer = String::new();
    error.write_xml(&mut buffer);
    assert_eq!(buffer, xml);
}
