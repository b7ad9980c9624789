//! The envelope a variant renders: canonical and custom codes, recovery, actions, a detail and
//! a retry delay, byte-exact, with the flags that follow from the code.

use std::fmt;

use fusion::{ErrorCode, ToolError, ToolErrors};
use serde_json::json;

use super::Billing;

/// A handwritten `Display`, the envelope's message.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Billing)]
#[allow(
    deprecated,
    reason = "two codes stay uncategorised: the tests read their flags"
)]
pub(super) enum BillingError {
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices first, then retry with a real ID",
        actions(list_invoices)
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },
    #[tool_error(code = "ALREADY_PAID")]
    AlreadyPaid,
    #[tool_error(code = "CONFLICT")]
    Locked,
    #[tool_error(RATE_LIMITED, recovery = "Wait {secs} seconds, then call again")]
    Throttled {
        #[retry_after]
        secs: u64,
    },
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BillingError::InvoiceNotFound { .. } => f.write_str("No invoice with that ID"),
            BillingError::AlreadyPaid => f.write_str("Invoice is already paid"),
            BillingError::Locked => f.write_str("Invoice is locked"),
            BillingError::Throttled { .. } => f.write_str("Too many calls"),
        }
    }
}

#[test]
fn canonical_code_with_recovery_actions_and_detail() {
    let err = ToolError::from(BillingError::InvoiceNotFound {
        id: "inv_2026_9999".into(),
    });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>No invoice with that ID</message>\n\
         <recovery>List invoices first, then retry with a real ID</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">inv_2026_9999</detail>\n</details>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "not_found",
            "isRetryable": false,
            "code": "NOT_FOUND",
            "severity": "error",
        })
    );
}

#[test]
fn custom_code_is_uncategorised_and_not_retryable() {
    let err: ToolError = BillingError::AlreadyPaid.into();
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"ALREADY_PAID\" severity=\"error\">\n\
         <message>Invoice is already paid</message>\n\
         </tool_error>"
    );
    assert_eq!(*err.code(), ErrorCode::Custom("ALREADY_PAID".into()));
    assert!(err.is_uncategorised());
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "unknown",
            "isRetryable": false,
            "code": "ALREADY_PAID",
            "severity": "error",
        })
    );
}

#[test]
fn canonical_string_code_maps_to_the_canonical_variant() {
    let err = ToolError::from(BillingError::Locked);
    assert_eq!(*err.code(), ErrorCode::Conflict);
    assert!(!err.code().is_custom());
}

#[test]
fn retry_after_from_an_integer_field_and_named_recovery() {
    let err = ToolError::from(BillingError::Throttled { secs: 30 });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
         <message>Too many calls</message>\n\
         <recovery>Wait 30 seconds, then call again</recovery>\n\
         <retry_after>30 seconds</retry_after>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "rate_limit",
            "isRetryable": true,
            "retryAfterSeconds": 30,
            "code": "RATE_LIMITED",
            "severity": "error",
        })
    );
}
