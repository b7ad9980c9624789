//! Runnable programs a fusion user copies from; run them with
//! `cargo run -p examples --example <name>`.
