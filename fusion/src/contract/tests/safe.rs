//! SAFE: old calls keep working.

use super::*;

#[test]
fn safe_tool_added() {
    let before = billing(|_| {});
    let mut after = before.clone();
    after.tools.extend(
        Contract::from_definitions([&tool("ledger", vec![action("balance", json!({}))])]).tools,
    );
    assert_eq!(
        diff(&before, &after).report(),
        "SAFE ledger: Tool added (before: absent; now: 'ledger').\n"
    );
}

#[test]
fn safe_changes() {
    reports(&[
        (
            |def| {
                def.actions
                    .push(action("refund", json!({"type": "object"})))
            },
            "SAFE billing.refund: Action added (before: absent; now: 'refund').",
        ),
        (
            |def| {
                props(def, "charge").insert("memo".into(), json!({"type": "string"}));
            },
            "SAFE billing.charge: Optional field 'memo' added (before: absent; now: string).",
        ),
        (
            |def| schema_of(def, "charge")["required"] = json!(["invoice_id", "amount_cents"]),
            "SAFE billing.charge: Field 'currency' became optional (before: required; now: optional).",
        ),
        (
            |def| {
                schema_of(def, "charge")["$defs"]["Currency"]["enum"] =
                    json!(["EUR", "GBP", "USD"]);
            },
            "SAFE billing.charge: Field 'currency' also accepts 'GBP' (before: 'EUR', 'USD'; now: 'EUR', 'GBP', 'USD').",
        ),
        (
            |def| def.actions[0].errors.clear(),
            "SAFE billing.charge: Error code NOT_FOUND removed (before: error not_found, not retryable; now: absent).",
        ),
    ]);
}

/// `currency: String` becoming `currency: Option<String>`: schemars drops it from `required`
/// and adds `null` to its types. That is one SAFE change (the table's row "a required field
/// becoming optional"), not also a RISKY "type widened".
#[test]
fn safe_required_field_became_option() {
    reports(&[
        (
            |def| {
                schema_of(def, "charge")["required"] = json!(["invoice_id", "amount_cents"]);
                props(def, "charge")["currency"] = json!({"anyOf": [{"$ref": "#/$defs/Currency"}, {"type": "null"}], "description": "The currency."});
            },
            "SAFE billing.charge: Field 'currency' became optional (before: required; now: optional).",
        ),
        (
            |def| {
                schema_of(def, "charge")["required"] = json!(["invoice_id", "currency"]);
                props(def, "charge")["amount_cents"] =
                    json!({"type": ["integer", "null"], "format": "uint64", "minimum": 1});
            },
            "SAFE billing.charge: Field 'amount_cents' became optional (before: required; now: optional).",
        ),
        // Accepting `null` on a field that stays required is still a widening.
        (
            |def| {
                props(def, "charge")["amount_cents"] =
                    json!({"type": ["integer", "null"], "format": "uint64", "minimum": 1});
            },
            "RISKY billing.charge: Type of field 'amount_cents' widened (before: integer; now: integer or null).",
        ),
    ]);
    // A field of any type narrowed to `null` while becoming optional is no widening.
    let found = deltas(|def| {
        schema_of(def, "charge")["required"] = json!(["invoice_id", "currency"]);
        props(def, "charge")["amount_cents"] = json!({"type": "null"});
    });
    assert!(
        found
            .iter()
            .any(|(class, _, text)| *class == DeltaClass::Breaking
                && text.starts_with("Type of field 'amount_cents' changed")),
        "{found:#?}"
    );
}

#[test]
fn safe_scope_removed() {
    let scoped = |scopes: &[&str]| {
        billing(|def| def.actions[0].scopes = scopes.iter().map(|s| (*s).to_owned()).collect())
    };
    assert_eq!(
        diff(
            &scoped(&["refunds", "invoices:write"]),
            &scoped(&["invoices:write"])
        )
        .report(),
        "SAFE billing.charge: Scope 'refunds' no longer required (before: 'invoices:write', \
         'refunds'; now: 'invoices:write').\n"
    );
}

#[test]
fn an_action_no_longer_a_task_is_safe_and_the_lockfile_keeps_the_flag() {
    let task = billing(|def| def.actions[0].task = true);
    let report = diff(&task, &billing(|_| {})).report();
    assert_eq!(
        report,
        "SAFE billing.charge: May run as a task (before: yes; now: no).\n"
    );
    let text = task.to_lockfile();
    assert!(text.contains("\"task\": true"), "{text}");
    let parsed = crate::contract::Lockfile::parse(&text).unwrap();
    assert!(parsed.contract().tools["billing"].actions["charge"].task);
    // Left out when false, so lockfiles written before tasks existed read unchanged.
    assert!(!billing(|_| {}).to_lockfile().contains("\"task\""));
}

#[test]
fn an_action_becoming_task_only_is_breaking_and_the_lockfile_keeps_the_flag() {
    let required = billing(|def| def.actions[0].task_required = true);
    let plain = billing(|_| {});
    assert_eq!(
        diff(&plain, &required).report(),
        "BREAKING billing.charge: Runs only as a task (before: no; now: yes).\n\
         RISKY billing.charge: May run as a task (before: no; now: yes).\n"
    );
    let optional = billing(|def| def.actions[0].task = true);
    assert_eq!(
        diff(&required, &optional).report(),
        "SAFE billing.charge: Runs only as a task (before: yes; now: no).\n"
    );
    let text = required.to_lockfile();
    assert!(text.contains("\"task_required\": true"), "{text}");
    let parsed = crate::contract::Lockfile::parse(&text).unwrap();
    assert!(parsed.contract().tools["billing"].actions["charge"].task_required);
    assert!(!optional.to_lockfile().contains("task_required"));
}
