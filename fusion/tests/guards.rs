//! Runtime guards through a real server and rmcp client, and through
//! `fusion::testing::Tester` on tokio's paused clock: concurrency limits under 10,000 calls,
//! rate limits and their `retry_after`, timeouts that drop the handler, cancellation, argument
//! limits, and guards applied after validation.
//!
//! One test binary: the shared tools and the client harness are in `guards/support.rs`, the
//! tests grouped by behaviour beside it.

#[path = "guards/support.rs"]
mod support;

#[path = "guards/concurrency.rs"]
mod concurrency;

#[path = "guards/rate_limits.rs"]
mod rate_limits;

#[path = "guards/callers.rs"]
mod callers;

#[path = "guards/timeouts.rs"]
mod timeouts;

#[path = "guards/argument_limits.rs"]
mod argument_limits;

#[path = "guards/configuration.rs"]
mod configuration;

#[path = "guards/contract.rs"]
mod contract;
