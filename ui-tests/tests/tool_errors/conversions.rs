//! Conversions into `ToolError`: `?`, generic types, borrowing types, empty enums.

use std::fmt;

use fusion::{ErrorCode, ToolError, ToolErrors};
use std::time::Duration;

use super::SECRET;
use super::envelope::BillingError;
use super::internal::StoreError;

#[test]
fn question_mark_converts_into_tool_error() {
    fn get_invoice(id: &str) -> Result<String, ToolError> {
        if id.is_empty() {
            Err(BillingError::InvoiceNotFound { id: id.into() })?;
        }
        let stored: Result<String, StoreError> = Err(StoreError::Missing { id: id.into() });
        Ok(stored?)
    }
    assert_eq!(*get_invoice("").unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(
        get_invoice("inv_4").unwrap_err().message(),
        "no invoice inv_4"
    );
}

/// Generic types: the impls carry the bounds the envelope needs.
#[derive(Debug, ToolErrors)]
enum Wrapped<T, D> {
    #[tool_error(NOT_FOUND, recovery = "Look up {id:?} again")]
    Missing {
        #[detail]
        id: T,
    },
    #[tool_error(TIMEOUT)]
    Slow(#[retry_after] D),
    #[tool_error(internal)]
    Broken(T),
}

impl<T: fmt::Display, D> fmt::Display for Wrapped<T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wrapped::Missing { id } => write!(f, "missing {id}"),
            Wrapped::Slow(_) => f.write_str("slow"),
            Wrapped::Broken(value) => write!(f, "broken {value}"),
        }
    }
}

#[test]
fn generic_types_convert() {
    let err = ToolError::from(Wrapped::<u32, Duration>::Missing { id: 7 });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>missing 7</message>\n\
         <recovery>Look up 7 again</recovery>\n\
         <details>\n  <detail key=\"id\">7</detail>\n</details>\n\
         </tool_error>"
    );
    let err = ToolError::from(Wrapped::<&str, u8>::Slow(9));
    assert_eq!(err.retry_after_secs(), Some(9));
    let err = ToolError::from(Wrapped::<&str, u8>::Broken(SECRET));
    assert!(!err.to_xml().contains("hunter2"));
    assert_eq!(Wrapped::<String, u64>::error_contracts().len(), 3);
}

/// Lifetimes: borrowed fields are formatted into the owned envelope.
#[derive(Debug, ToolErrors)]
enum Borrowed<'a> {
    #[tool_error(NOT_FOUND, recovery = "No invoice {0}")]
    Missing(#[detail(key = "id")] &'a str),
}

impl fmt::Display for Borrowed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("borrowed")
    }
}

#[test]
fn borrowing_types_convert() {
    let id = String::from("inv_5");
    let err = ToolError::from(Borrowed::Missing(&id));
    assert_eq!(err.recovery(), Some("No invoice inv_5"));
    assert_eq!(err.detail_value("id"), Some("inv_5"));
}

/// An enum without variants has no contracts (and converts by being uninhabited).
#[derive(Debug, ToolErrors)]
enum Never {}

impl fmt::Display for Never {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

#[test]
fn empty_enums_declare_nothing() {
    assert!(Never::error_contracts().is_empty());
}
