//! The expansion compiles lint-clean next to user items that shadow the prelude (`Result`, `Ok`,
//! `Some`, `String`, …) and the crates it names (`core`, `std`, `fusion`, `serde`): every path it
//! writes is absolute. No `serde` is in scope either.

#![deny(warnings)]
#![allow(dead_code)] // the shadowing items exist only to be in scope

struct Result;
struct Ok;
struct Err;
struct Some;
struct None;
struct Option;
struct String;
struct Vec;
struct Box;
struct From;
struct Into;
struct ToString;
struct Display;
struct ToolError;
mod core {}
mod std {}
mod fusion {}
mod serde {}

#[derive(Debug, ::fusion::ToolErrors)]
#[tool_error(category = "not_found")]
enum BillingError {
    #[tool_error(NOT_FOUND, recovery = "No invoice {id:?}; list invoices first")]
    InvoiceNotFound {
        #[detail]
        id: u32,
        #[retry_after]
        after: u64,
    },
    #[tool_error(code = "ALREADY_PAID", severity = "warning", retryable = false)]
    AlreadyPaid(#[detail(key = "invoice")] u32),
    #[tool_error(internal, severity = "critical")]
    Database(::std::io::Error),
}

impl ::std::fmt::Display for BillingError {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        f.write_str("billing failed")
    }
}

fn main() {
    let err = ::fusion::ToolError::from(BillingError::InvoiceNotFound { id: 1, after: 2 });
    assert_eq!(err.retry_after_secs(), ::core::option::Option::Some(2));
    let _ = ::fusion::ToolError::from(BillingError::AlreadyPaid(1));
    let _ = ::fusion::ToolError::from(BillingError::Database(::std::io::Error::other("x")));
}
