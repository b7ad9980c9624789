//! Type-level defaults, overridden per variant.

use std::fmt;

use fusion::{ToolError, ToolErrors};
use serde_json::json;

/// Type-level defaults, overridden per variant.
#[derive(Debug, ToolErrors)]
#[tool_error(severity = "warning", category = "validation")]
pub(super) enum Defaults {
    #[tool_error(code = "TRUNCATED")]
    Inherits,
    #[tool_error(code = "REVOKED", severity = "critical", category = "auth")]
    Overrides,
}

impl fmt::Display for Defaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("defaults")
    }
}

#[test]
fn type_level_defaults_apply_to_every_variant() {
    let err = ToolError::from(Defaults::Inherits);
    assert_eq!(
        err.flags(),
        json!({
            "isError": false,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "TRUNCATED",
            "severity": "warning",
        })
    );
}

#[test]
fn variants_override_type_level_defaults() {
    let err = ToolError::from(Defaults::Overrides);
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "auth",
            "isRetryable": false,
            "code": "REVOKED",
            "severity": "critical",
        })
    );
}
