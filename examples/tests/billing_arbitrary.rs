//! Dispatch with arbitrary JSON arguments to the billing tool: every call is answered without a
//! panic and every envelope in the answer is well-formed. The proptest twin of the
//! `dispatch_billing` fuzz target (`fuzz/`); both use `tests/support/billing_calls.rs`.
//! An input a fuzzer finds failing goes below as a named regression test (none found so far).

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

#[path = "support/billing_calls.rs"]
#[allow(
    unreachable_pub,
    reason = "public for the fuzz crate, which includes the file too"
)]
mod billing_calls;

use billing::Billing;
use billing_calls::check_call;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Keys the billing tool knows (so calls reach the actions), or anything. Not `delay_ms`: the
/// calls are polled without a runtime, and an export that waits needs its timer.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "action", "id", "invoice_id", "amount_cents", "currency", "status", "format",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ]
}

/// Values: the ones the billing tool understands, or any JSON a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => prop::sample::select(vec![
            "list_invoices", "get_invoice", "charge", "refund", "export_invoices", "inv_0001",
            "inv_0002", "inv_0003", "inv_9999", "EUR", "USD", "open", "paid", "csv", "json", "]]>",
            "<&>\"'", "\u{0}",
        ])
        .prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::from),
        2 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(Value::from),
        1 => "\\PC{0,24}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn any_arguments_get_an_answer_with_well_formed_envelopes(
        pairs in prop::collection::vec((key(), any_json()), 0..6)
    ) {
        let arguments: Map<String, Value> = pairs.into_iter().collect();
        check_call(Billing::seeded(), arguments).map_err(TestCaseError::fail)?;
    }
}

/// A tool whose action panics: the call machinery catches the panic and answers with a
/// well-formed `INTERNAL_ERROR` envelope, so the property must notice the panic itself, or the
/// proptest twin would never see one (the fuzz target does: libFuzzer's panic hook aborts).
struct Panicky;

/// Panics.
#[fusion::tool]
impl Panicky {
    /// Panics on every call.
    #[action]
    fn boom(&self) -> String {
        panic!("boom")
    }
}

#[test]
fn a_panic_answered_as_internal_error_still_fails_the_property() {
    let Value::Object(arguments) = serde_json::json!({}) else {
        unreachable!("an object literal")
    };
    let outcome = check_call(Panicky, arguments);
    assert!(
        outcome.is_err(),
        "check_call accepted a call whose action panicked"
    );
}
