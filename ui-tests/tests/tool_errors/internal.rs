//! `internal` variants: the inner error's text never reaches the envelope; a thiserror
//! `Display` is the message.

use fusion::{ToolError, ToolErrors};
use serde_json::json;

use super::{SECRET, internal_xml};

/// `internal` variants, with a thiserror `Display` and `source` chain.
#[derive(Debug, thiserror::Error, ToolErrors)]
pub(super) enum StoreError {
    #[error("ledger unavailable: {0}")]
    #[tool_error(internal)]
    Database(#[from] std::io::Error),
    #[error("ledger corrupt at {0}")]
    #[tool_error(internal, severity = "critical")]
    Corrupt(String),
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    Missing { id: String },
}

#[test]
fn internal_variants_hide_the_inner_error() {
    let cause = std::io::Error::other(format!("connect {SECRET}: refused"));
    let err = ToolError::from(StoreError::from(cause));
    let xml = err.to_xml();
    assert!(!xml.contains("hunter2"), "{xml}");
    assert!(!xml.contains("ledger unavailable"), "{xml}");
    assert_eq!(xml, internal_xml(&err, "error"));
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "unknown",
            "isRetryable": false,
            "code": "INTERNAL_ERROR",
            "severity": "error",
        })
    );
}

#[test]
fn internal_variants_may_set_their_severity() {
    let err = ToolError::from(StoreError::Corrupt(SECRET.into()));
    let xml = err.to_xml();
    assert!(!xml.contains("hunter2"), "{xml}");
    assert_eq!(xml, internal_xml(&err, "critical"));
}

#[test]
fn thiserror_display_is_the_message() {
    let err = ToolError::from(StoreError::Missing { id: "inv_9".into() });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>no invoice inv_9</message>\n\
         </tool_error>"
    );
}
