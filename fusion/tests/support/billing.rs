//! The `billing` tool of the auth tests: `list`, read-only and open to any caller, and
//! `charge`, which needs the `charge` scope.

use fusion::ToolError;

/// Invoices.
pub(crate) struct Billing;

/// Bills customers.
#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    pub(crate) fn list(&self) -> Result<&'static str, ToolError> {
        Ok("no invoices")
    }

    /// Charges a card.
    #[action(scopes("charge"))]
    pub(crate) fn charge(&self) -> Result<&'static str, ToolError> {
        Ok("charged")
    }
}
