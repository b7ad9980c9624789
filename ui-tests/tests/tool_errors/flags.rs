//! Severity, category and retryable per variant, and the flags they set.

use std::fmt;

use fusion::{Severity, ToolError, ToolErrors};
use serde_json::json;

/// Severity, category and retryable per variant.
#[derive(Debug, ToolErrors)]
pub(super) enum Flagged {
    #[tool_error(DEPRECATED, severity = "warning")]
    OldParameter,
    #[tool_error(code = "LEDGER_CORRUPT", severity = "critical", category = "unknown")]
    Corrupt,
    #[tool_error(code = "LEDGER_BUSY", category = "transient")]
    Busy,
    #[tool_error(code = "LEDGER_SYNCING", category = "transient", retryable = false)]
    Syncing,
    #[tool_error(CONFLICT, category = "unknown", retryable = true)]
    Stale,
}

impl fmt::Display for Flagged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

#[test]
fn warning_severity_is_not_an_error() {
    let err = ToolError::from(Flagged::OldParameter);
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n\
         <message>OldParameter</message>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": false,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "DEPRECATED",
            "severity": "warning",
        })
    );
}

#[test]
fn critical_severity() {
    let err = ToolError::from(Flagged::Corrupt);
    assert_eq!(err.severity_level(), Severity::Critical);
    assert!(
        err.to_xml()
            .starts_with("<tool_error code=\"LEDGER_CORRUPT\" severity=\"critical\">\n")
    );
    assert_eq!(err.flags()["isError"], true);
}

#[test]
fn declared_category_sets_the_default_retryability() {
    let err = ToolError::from(Flagged::Busy);
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "transient",
            "isRetryable": true,
            "code": "LEDGER_BUSY",
            "severity": "error",
        })
    );
    assert!(!err.is_uncategorised());
}

#[test]
fn retryable_overrides_the_category_default() {
    let err = ToolError::from(Flagged::Syncing);
    assert_eq!(err.flags()["errorCategory"], "transient");
    assert_eq!(err.flags()["isRetryable"], false);
    let err = ToolError::from(Flagged::Stale);
    assert_eq!(err.flags()["errorCategory"], "unknown");
    assert_eq!(err.flags()["isRetryable"], true);
}
