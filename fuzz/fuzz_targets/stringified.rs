//! Arguments sent as strings holding their JSON, on arbitrary values: the decoded path and the
//! direct path give the same envelopes for the same values (the property of
//! `fusion/tests/support/stringified.rs`, which the proptest in
//! `fusion/tests/stringified_arguments.rs` checks too).
//!
//! Input: two bytes choosing which fields go as strings (and pretty-printed or not), then a
//! JSON object of `shop.order` arguments.
//!
//! Run: `cargo +nightly fuzz run stringified fuzz/corpus/stringified -- -dict=fuzz/json.dict`.

#![no_main]

use std::sync::LazyLock;

use fusion::testing::Tester;
use fusion_fuzz::stringified::{Shop, decodable, same_envelopes};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

static TESTER: LazyLock<Tester> = LazyLock::new(|| Tester::new().tool(Shop));

const FIELDS: [&str; 5] = ["items", "shipping", "priority", "discount", "gift"];

fuzz_target!(|data: &[u8]| {
    let [low, high, json @ ..] = data else {
        return;
    };
    let Ok(Value::Object(direct)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let choices = u16::from_le_bytes([*low, *high]);
    let stringified: Vec<(String, bool)> = (FIELDS.iter().enumerate())
        .filter(|(i, _)| choices & (1 << (2 * i)) != 0)
        .filter(|(_, name)| direct.get(**name).is_some_and(|v| decodable(name, v)))
        .map(|(i, name)| ((*name).to_owned(), choices & (1 << (2 * i + 1)) != 0))
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    if let Err(problem) = runtime.block_on(same_envelopes(&TESTER, &direct, &stringified)) {
        panic!("{problem}");
    }
});
