//! RISKY: a call may behave differently.

use super::*;

#[test]
fn risky_changes() {
    reports(&[
        (
            |def| def.actions[0].annotations.idempotent = Some(true),
            "RISKY billing.charge: Hint idempotent changed (before: false; now: true).",
        ),
        (
            |def| {
                def.actions[0].errors.push(ErrorContract::new(
                    ErrorCode::Custom("ALREADY_PAID".into()),
                    Severity::Warning,
                    Some(ErrorCategory::Validation),
                    None,
                ))
            },
            "RISKY billing.charge: Error code ALREADY_PAID added (before: absent; now: warning validation, not retryable).",
        ),
        (
            |def| props(def, "charge")["amount_cents"]["minimum"] = json!(100),
            "RISKY billing.charge: Constraint minimum of field 'amount_cents' tightened (before: 1; now: 100).",
        ),
        (
            |def| def.actions[0].task = true,
            "RISKY billing.charge: May run as a task (before: no; now: yes).",
        ),
        (
            |def| def.actions[0].strict_json = true,
            "RISKY billing.charge: Arguments taken only as sent (before: no; now: yes).",
        ),
    ]);
}

#[test]
fn risky_other_schema_change() {
    let change = |def: &mut ToolDefinition| {
        schema_of(def, "charge").insert("additionalProperties".into(), json!(true));
    };
    let (before, after) = (billing(|_| {}), billing(change));
    let digest = |c: &Contract| {
        c.tools["billing"].actions["charge"]
            .input_structure_digest
            .clone()
    };
    assert_ne!(digest(&before), digest(&after));
    let text = format!(
        "RISKY billing.charge: Input schema changed beyond its fields (before: {}; now: {}).",
        short(&digest(&before)),
        short(&digest(&after))
    );
    reports(&[(change, &text)]);
}
