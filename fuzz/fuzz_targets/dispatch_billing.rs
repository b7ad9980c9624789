//! Dispatch with arbitrary JSON arguments to the billing example's tool (the very file
//! `examples/billing.rs`): every call is answered without a panic, and every envelope in the
//! answer is well-formed XML.
//!
//! Run: `cargo +nightly fuzz run dispatch_billing fuzz/corpus/dispatch_billing -- -dict=fuzz/json.dict`.

#![no_main]

#[path = "../../examples/billing.rs"]
#[allow(dead_code, reason = "only the tool is used, not the command line")]
mod billing;

use fusion_fuzz::billing_calls::check_call;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // A fresh, seeded tool per input: a charge in one input must not change the next.
    if let Err(problem) = check_call(billing::Billing::seeded(), arguments) {
        panic!("{problem}");
    }
});
