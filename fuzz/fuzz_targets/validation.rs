//! The validation formatter on arbitrary JSON against a schema with constraints: no panic, and
//! every `<validation_error>` envelope is well-formed XML.
//!
//! Run: `cargo +nightly fuzz run validation fuzz/corpus/validation -- -dict=fuzz/json.dict`.

#![no_main]

use std::sync::LazyLock;

use fusion::validation::ArgumentValidator;
use fusion_fuzz::constrained::{check_arguments, validator};
use libfuzzer_sys::fuzz_target;

static VALIDATOR: LazyLock<ArgumentValidator> = LazyLock::new(validator);

fuzz_target!(|data: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Err(problem) = check_arguments(&VALIDATOR, &arguments) {
        panic!("{problem}");
    }
});
