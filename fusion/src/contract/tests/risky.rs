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
        (
            |def| def.actions[0].result.max_result = Some(crate::ResultLimit::tokens(100)),
            "RISKY billing.charge: Result limit (before: none; now: 400 bytes).",
        ),
        (
            |def| def.actions[0].result.items = Some("invoices".into()),
            "RISKY billing.charge: Result list (before: none; now: invoices).",
        ),
    ]);
}

/// A limit lowered may cut a result that came whole (RISKY); raised, it only returns more;
/// paging added only changes what a cut result's warning says (SAFE), removed it takes the
/// next call away (RISKY).
#[test]
fn result_limits_and_paging_between_two_limits() {
    let limited = |bytes: usize, paged: bool| {
        billing(move |def| {
            def.actions[0].result.max_result = Some(crate::ResultLimit::bytes(bytes));
            def.actions[0].result.page = paged.then(|| crate::Paging {
                offset: "offset".into(),
                limit: "limit".into(),
            });
        })
    };
    assert_eq!(
        diff(&limited(400, false), &limited(200, false)).report(),
        "RISKY billing.charge: Result limit lowered (before: 400 bytes; now: 200 bytes).\n"
    );
    assert_eq!(
        diff(&limited(200, false), &limited(400, true)).report(),
        "SAFE billing.charge: Paging (before: none; now: offset 'offset', limit 'limit').\n\
         SAFE billing.charge: Result limit (before: 200 bytes; now: 400 bytes).\n"
    );
    assert_eq!(
        diff(&limited(200, true), &limited(200, false)).report(),
        "RISKY billing.charge: Paging (before: offset 'offset', limit 'limit'; now: none).\n"
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
    let text = format!(
        "RISKY billing.charge: Input schema changed beyond its fields (before: {}; now: {}).",
        short(&digest(&before)),
        short(&digest(&after))
    );
    reports(&[(change, &text)]);
}
