//! `fusion::validation` end to end: schemars-derived argument types with `validator` rules,
//! checked into byte-exact `<validation_error>` envelopes. One test binary; the shared argument
//! types and helpers are in `validation/fixtures.rs`, the tests grouped by behaviour beside it.

#[path = "validation/fixtures.rs"]
mod fixtures;

#[path = "validation/envelope.rs"]
mod envelope;

#[path = "validation/ordering.rs"]
mod ordering;

#[path = "validation/schema_problems.rs"]
mod schema_problems;

#[path = "validation/unknown_fields.rs"]
mod unknown_fields;

#[path = "validation/deserialization.rs"]
mod deserialization;

#[path = "validation/rules.rs"]
mod rules;

#[path = "validation/sent_values.rs"]
mod sent_values;

#[path = "validation/secrets.rs"]
mod secrets;

#[path = "validation/secret_copies.rs"]
mod secret_copies;

#[path = "validation/many_problems.rs"]
mod many_problems;

#[path = "validation/nesting.rs"]
mod nesting;

#[path = "validation/xml.rs"]
mod xml;

#[path = "validation/compilation.rs"]
mod compilation;
