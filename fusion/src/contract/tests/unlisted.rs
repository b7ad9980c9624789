//! Changes the classification table does not name, classified all the same.

use super::*;

#[test]
fn changes_outside_the_table_are_classified() {
    reports(&[
        (
            |def| def.actions[0].annotations.open_world = Some(false),
            "RISKY billing.charge: Hint open-world changed (before: true (MCP default); now: false).",
        ),
        (
            |def| def.actions[0].annotations.read_only = Some(true),
            "SAFE billing.charge: Action became read-only (before: false; now: true).",
        ),
        (
            |def| def.actions[1].annotations.destructive = Some(false),
            "SAFE billing.list: Hint destructive restated with the same effect (before: false (read-only); now: false (read-only)).",
        ),
        (
            |def| {
                def.actions[0].errors[0] =
                    ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, Some(true))
            },
            "RISKY billing.charge: Error code NOT_FOUND became retryable (before: error not_found, not retryable; now: error not_found, retryable).",
        ),
        (
            |def| {
                def.actions[0].errors[0] =
                    ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, None)
            },
            "RISKY billing.charge: Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, not retryable).",
        ),
        (
            |def| {
                def.actions[0].errors[0] =
                    ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, Some(true))
            },
            "RISKY billing.charge: Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, retryable).",
        ),
        (
            |def| {
                props(def, "charge")["amount_cents"]["type"] = json!("number");
            },
            "RISKY billing.charge: Type of field 'amount_cents' widened (before: integer; now: number).",
        ),
        (
            |def| {
                props(def, "charge")["amount_cents"]["minimum"] = json!(0);
            },
            "RISKY billing.charge: Constraint minimum of field 'amount_cents' loosened (before: 1; now: 0).",
        ),
        (
            |def| {
                props(def, "charge")["invoice_id"]["pattern"] = json!("^inv_");
            },
            "RISKY billing.charge: Constraint pattern of field 'invoice_id' changed (before: \"^inv_[0-9]{4}$\"; now: \"^inv_\").",
        ),
        (
            |def| {
                def.actions[0].output_schema =
                    Some(json!({"type": "object"}).as_object().unwrap().clone())
            },
            "SAFE billing.charge: Output schema declared (before: none; now: declared).",
        ),
        (
            |def| def.discriminator = Some("op".into()),
            "BREAKING billing: Discriminator changed (before: 'action'; now: 'op').",
        ),
    ]);
}

#[test]
fn a_single_action_tool_gaining_an_action_is_breaking_and_says_why() {
    let single = |def: &mut ToolDefinition| {
        def.discriminator = None;
        def.actions.truncate(1);
    };
    let d = diff(&billing(single), &billing(|_| {}));
    let breaking: Vec<&str> = d
        .deltas()
        .iter()
        .filter(|delta| delta.class == DeltaClass::Breaking)
        .map(|delta| delta.text.as_str())
        .collect();
    assert_eq!(breaking.len(), 1, "{:#?}", d.deltas());
    assert!(
        breaking[0].starts_with(
            "Discriminator changed (before: none (a single-action tool); now: 'action'). \
             Every call must now name its action in 'action'"
        ),
        "{}",
        breaking[0]
    );
    // The new action itself is reported too, as an addition.
    assert!(
        d.deltas()
            .iter()
            .any(|delta| delta.action.as_deref() == Some("list")),
        "{:#?}",
        d.deltas()
    );
}
