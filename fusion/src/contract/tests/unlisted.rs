//! Changes the classification table does not name, classified all the same.

use super::*;

#[test]
fn changes_outside_the_table_are_classified() {
    only(
        |def| def.actions[0].annotations.open_world = Some(false),
        DeltaClass::Risky,
        "billing.charge",
        "Hint open-world changed (before: true (MCP default); now: false).",
    );
    only(
        |def| def.actions[0].annotations.read_only = Some(true),
        DeltaClass::Safe,
        "billing.charge",
        "Action became read-only (before: false; now: true).",
    );
    only(
        |def| def.actions[1].annotations.destructive = Some(false),
        DeltaClass::Safe,
        "billing.list",
        "Hint destructive restated with the same effect (before: false (read-only); now: false (read-only)).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, Some(true))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND became retryable (before: error not_found, not retryable; now: error not_found, retryable).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, None)
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, not retryable).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, Some(true))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, retryable).",
    );
    only(
        |def| {
            props(def, "charge")["amount_cents"]["type"] = json!("number");
        },
        DeltaClass::Risky,
        "billing.charge",
        "Type of field 'amount_cents' widened (before: integer; now: number).",
    );
    only(
        |def| {
            props(def, "charge")["amount_cents"]["minimum"] = json!(0);
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint minimum of field 'amount_cents' loosened (before: 1; now: 0).",
    );
    only(
        |def| {
            props(def, "charge")["invoice_id"]["pattern"] = json!("^inv_");
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint pattern of field 'invoice_id' changed (before: \"^inv_[0-9]{4}$\"; now: \"^inv_\").",
    );
    only(
        |def| {
            def.actions[0].output_schema =
                Some(json!({"type": "object"}).as_object().unwrap().clone())
        },
        DeltaClass::Safe,
        "billing.charge",
        "Output schema declared (before: none; now: declared).",
    );
    only(
        |def| def.discriminator = Some("op".into()),
        DeltaClass::Breaking,
        "billing",
        "Discriminator changed (before: 'action'; now: 'op').",
    );
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
