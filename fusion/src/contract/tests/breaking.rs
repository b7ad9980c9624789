//! BREAKING: a call that was valid can now fail.

use super::*;

#[test]
fn breaking_tool_removed() {
    let before = billing(|_| {});
    let after = Contract::default();
    let d = diff(&before, &after);
    assert_eq!(
        d.report(),
        "BREAKING billing: Tool removed (before: 'billing'; now: absent).\n"
    );
}

#[test]
fn breaking_changes() {
    reports(&[
        (
            |def| def.name = "invoicing".into(),
            "BREAKING billing: Tool renamed (before: 'billing'; now: 'invoicing').",
        ),
        (
            |def| def.actions.retain(|a| a.name != "list"),
            "BREAKING billing.list: Action removed (before: 'list'; now: absent).",
        ),
        (
            |def| def.actions[1].name = "list_invoices".into(),
            "BREAKING billing.list: Action renamed (before: 'list'; now: 'list_invoices').",
        ),
        (
            |def| {
                props(def, "charge").insert("customer".into(), json!({"type": "string"}));
                schema_of(def, "charge")["required"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!("customer"));
            },
            "BREAKING billing.charge: Required field 'customer' added (before: absent; now: string).",
        ),
        (
            |def| {
                schema_of(def, "charge")["required"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!("note"));
            },
            "BREAKING billing.charge: Field 'note' became required (before: optional; now: required).",
        ),
        (
            |def| {
                props(def, "charge").remove("note");
            },
            "BREAKING billing.charge: Field 'note' removed; it is now rejected as unknown (before: null or string; now: absent).",
        ),
        (
            |def| props(def, "charge")["amount_cents"]["type"] = json!("string"),
            "BREAKING billing.charge: Type of field 'amount_cents' changed (before: integer; now: string).",
        ),
        (
            |def| schema_of(def, "charge")["$defs"]["Currency"]["enum"] = json!(["EUR"]),
            "BREAKING billing.charge: Field 'currency' no longer accepts 'USD' (before: 'EUR', 'USD'; now: 'EUR').",
        ),
        (
            |def| def.actions[0].annotations.destructive = Some(true),
            "BREAKING billing.charge: Action became destructive (before: false; now: true).",
        ),
        (
            |def| def.actions[0].scopes = vec!["invoices:write".to_owned()],
            "BREAKING billing.charge: Scope 'invoices:write' now required (before: none; now: 'invoices:write').",
        ),
    ]);
}

#[test]
fn breaking_action_lost_read_only() {
    // Losing read-only also makes the action destructive by the MCP default.
    reports(&[(
        |def| def.actions[1].annotations.read_only = None,
        "BREAKING billing.list: Action became destructive (before: false (read-only); now: true (MCP default)).\n\
         BREAKING billing.list: Action is no longer read-only (before: true; now: false (MCP default)).",
    )]);
}
