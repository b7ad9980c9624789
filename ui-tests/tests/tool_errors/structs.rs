//! Structs: a single contract, or a wrapper of an error without a contract.

use std::fmt;

use fusion::{ErrorCategory, ErrorCode, ErrorContract, Severity, ToolError, ToolErrors};

use super::{Billing, SECRET, internal_xml};

/// A struct is a single contract: its `#[tool_error(…)]` holds the code and the tool.
#[derive(Debug, ToolErrors)]
#[tool_error(
    NOT_FOUND,
    tool = Billing,
    recovery = "List invoices of customer {customer} first",
    actions(list_invoices),
)]
struct InvoiceMissing {
    #[detail(key = "requestedId")]
    id: String,
    customer: u32,
}

impl fmt::Display for InvoiceMissing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "No invoice {}", self.id)
    }
}

#[test]
fn a_struct_is_a_single_contract() {
    let err = ToolError::from(InvoiceMissing {
        id: "inv_3".into(),
        customer: 12,
    });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>No invoice inv_3</message>\n\
         <recovery>List invoices of customer 12 first</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">inv_3</detail>\n</details>\n\
         </tool_error>"
    );
    assert_eq!(
        InvoiceMissing::error_contracts(),
        [ErrorContract::new(
            ErrorCode::NotFound,
            Severity::Error,
            None,
            None
        )]
    );
}

/// A struct wrapping an error without a contract.
#[derive(Debug, ToolErrors)]
#[tool_error(internal)]
struct LedgerDown(std::io::Error);

impl fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ledger down: {}", self.0)
    }
}

#[test]
fn an_internal_struct_hides_its_text() {
    let err = ToolError::from(LedgerDown(std::io::Error::other(SECRET)));
    assert_eq!(err.to_xml(), internal_xml(&err, "error"));
    assert_eq!(
        LedgerDown::error_contracts(),
        [ErrorContract::new(
            ErrorCode::InternalError,
            Severity::Error,
            Some(ErrorCategory::Unknown),
            Some(false)
        )]
    );
}
