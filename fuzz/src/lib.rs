//! What the fuzz targets share with the ordinary test suite: the properties themselves,
//! included by path so libFuzzer and proptest check exactly the same thing.

#[path = "../../fusion/tests/support/constrained.rs"]
pub mod constrained;

#[path = "../../examples/tests/support/billing_calls.rs"]
pub mod billing_calls;

#[path = "../../fusion/tests/support/stringified.rs"]
pub mod stringified;
