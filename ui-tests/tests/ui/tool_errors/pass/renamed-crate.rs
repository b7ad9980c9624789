//! fusion reached only under other names, as after `fu = { package = "fusion", … }` in
//! Cargo.toml or through another crate's re-export: every derive says where fusion is with
//! `#[tool_error(crate = …)]`, in each accepted form (a string, a bare path, a re-export's
//! path), and every section of the envelope is generated.
//!
//! trybuild's test crate depends on fusion by its own name, so `extern crate core as fusion`
//! takes that name over: an `extern crate` at the crate root shadows the `--extern fusion`
//! entry of the extern prelude, so `::fusion` means `core` here. Any runtime path still
//! written as `::fusion::__private::…` fails to resolve, and this case fails to compile.

#![deny(warnings)]

extern crate core as fusion;
// `pub`: the framework below re-exports it.
pub extern crate fusion as fu;

/// A framework re-exporting fusion, as a library crate would with `pub use fusion;`.
mod framework {
    pub use fu as rt;
}

use core::fmt;

struct Billing;

/// Invoices.
#[fu::tool(crate = fu)]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    fn list_invoices(&self) -> Result<Vec<String>, BillingError> {
        Err(BillingError::Paid)
    }
}

#[derive(Debug, fu::ToolErrors)]
#[tool_error(crate = fu, tool = Billing, severity = "error")]
enum BillingError {
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices, then retry with a real ID, not {id:?}",
        actions(list_invoices)
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },
    #[tool_error(RATE_LIMITED, category = "rate_limit")]
    Throttled(#[retry_after] std::time::Duration),
    #[tool_error(code = "ALREADY_PAID", severity = "warning", category = "validation", retryable = false)]
    Paid,
    #[tool_error(internal, severity = "critical")]
    Database(std::io::Error),
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("billing failed")
    }
}

/// Generic: the where clause and the internal envelope take other runtime paths.
#[derive(Debug, framework::rt::ToolErrors)]
#[tool_error(crate = crate::framework::rt)]
enum Lookup<T, D> {
    #[tool_error(TIMEOUT)]
    Slow(#[detail(key = "key")] T, #[retry_after] D),
    #[tool_error(internal)]
    Broken(T),
}

impl<T: fmt::Debug, D: fmt::Debug> fmt::Display for Lookup<T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lookup failed: {self:?}")
    }
}

/// A struct is its own contract, `crate` next to it.
#[derive(Debug, fu::ToolErrors)]
#[tool_error(CONFLICT, crate = "::fu", category = "validation")]
struct Stale;

impl fmt::Display for Stale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stale")
    }
}

fn main() {
    use fu::{ErrorCategory, ErrorCode, Tool as _, ToolError, ToolErrors as _};

    let err = ToolError::from(BillingError::InvoiceNotFound { id: "inv_1".into() });
    assert_eq!(err.detail_value("requestedId"), Some("inv_1"));
    assert!(
        err.to_xml()
            .contains("<action>billing</action>")
    );
    let err = ToolError::from(BillingError::Throttled(std::time::Duration::from_secs(2)));
    assert_eq!(err.retry_after_secs(), Some(2));
    assert!(!ToolError::from(BillingError::Paid).is_error());
    let err = ToolError::from(BillingError::Database(std::io::Error::other("secret")));
    assert_eq!(*err.code(), ErrorCode::InternalError);
    assert_eq!(BillingError::error_contracts().len(), 4);

    let err = ToolError::from(Lookup::<&str, u64>::Slow("k1", 5));
    assert_eq!(err.detail_value("key"), Some("k1"));
    assert_eq!(err.retry_after_secs(), Some(5));
    let err = ToolError::from(Lookup::<&str, u64>::Broken("x"));
    assert_eq!(*err.code(), ErrorCode::InternalError);

    let err = ToolError::from(Stale);
    assert_eq!(err.error_category(), ErrorCategory::Validation);

    // The tool declares the derive's contracts in its definition.
    assert_eq!(Billing.definition().actions[0].errors.len(), 4);
}
