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
fn breaking_tool_renamed() {
    let before = billing(|_| {});
    let after = billing(|def| def.name = "invoicing".into());
    assert_eq!(
        diff(&before, &after).report(),
        "BREAKING billing: Tool renamed (before: 'billing'; now: 'invoicing').\n"
    );
}

#[test]
fn breaking_action_removed() {
    only(
        |def| def.actions.retain(|a| a.name != "list"),
        DeltaClass::Breaking,
        "billing.list",
        "Action removed (before: 'list'; now: absent).",
    );
}

#[test]
fn breaking_action_renamed() {
    only(
        |def| def.actions[1].name = "list_invoices".into(),
        DeltaClass::Breaking,
        "billing.list",
        "Action renamed (before: 'list'; now: 'list_invoices').",
    );
}

#[test]
fn breaking_required_field_added() {
    only(
        |def| {
            props(def, "charge").insert("customer".into(), json!({"type": "string"}));
            schema_of(def, "charge")["required"]
                .as_array_mut()
                .unwrap()
                .push(json!("customer"));
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Required field 'customer' added (before: absent; now: string).",
    );
}

#[test]
fn breaking_field_became_required() {
    only(
        |def| {
            schema_of(def, "charge")["required"]
                .as_array_mut()
                .unwrap()
                .push(json!("note"));
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'note' became required (before: optional; now: required).",
    );
}

#[test]
fn breaking_field_removed() {
    only(
        |def| {
            props(def, "charge").remove("note");
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'note' removed; it is now rejected as unknown (before: null or string; now: absent).",
    );
}

#[test]
fn breaking_field_type_changed() {
    only(
        |def| {
            props(def, "charge")["amount_cents"]["type"] = json!("string");
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Type of field 'amount_cents' changed (before: integer; now: string).",
    );
}

#[test]
fn breaking_enum_value_removed() {
    only(
        |def| {
            schema_of(def, "charge")["$defs"]["Currency"]["enum"] = json!(["EUR"]);
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'currency' no longer accepts 'USD' (before: 'EUR', 'USD'; now: 'EUR').",
    );
}

#[test]
fn breaking_action_became_destructive() {
    only(
        |def| def.actions[0].annotations.destructive = Some(true),
        DeltaClass::Breaking,
        "billing.charge",
        "Action became destructive (before: false; now: true).",
    );
}

#[test]
fn breaking_action_lost_read_only() {
    let found = deltas(|def| def.actions[1].annotations.read_only = None);
    // Losing read-only also makes the action destructive by the MCP default.
    assert_eq!(
        found,
        [
            (
                DeltaClass::Breaking,
                "billing.list".to_owned(),
                "Action became destructive (before: false (read-only); now: true (MCP default))."
                    .to_owned()
            ),
            (
                DeltaClass::Breaking,
                "billing.list".to_owned(),
                "Action is no longer read-only (before: true; now: false (MCP default))."
                    .to_owned()
            ),
        ]
    );
}

#[test]
fn breaking_scope_added() {
    only(
        |def| def.actions[0].scopes = vec!["invoices:write".to_owned()],
        DeltaClass::Breaking,
        "billing.charge",
        "Scope 'invoices:write' now required (before: none; now: 'invoices:write').",
    );
}
