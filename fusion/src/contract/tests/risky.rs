//! RISKY: a call may behave differently.

use super::*;

#[test]
fn risky_idempotent_changed() {
    only(
        |def| def.actions[0].annotations.idempotent = Some(true),
        DeltaClass::Risky,
        "billing.charge",
        "Hint idempotent changed (before: false; now: true).",
    );
}

#[test]
fn risky_error_code_added() {
    only(
        |def| {
            def.actions[0].errors.push(ErrorContract::new(
                ErrorCode::Custom("ALREADY_PAID".into()),
                Severity::Warning,
                Some(ErrorCategory::Validation),
                None,
            ))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code ALREADY_PAID added (before: absent; now: warning validation, not retryable).",
    );
}

#[test]
fn risky_constraint_tightened() {
    only(
        |def| {
            props(def, "charge")["amount_cents"]["minimum"] = json!(100);
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint minimum of field 'amount_cents' tightened (before: 1; now: 100).",
    );
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
    only(
        change,
        DeltaClass::Risky,
        "billing.charge",
        &format!(
            "Input schema changed beyond its fields (before: {}; now: {}).",
            short(&digest(&before)),
            short(&digest(&after))
        ),
    );
}
