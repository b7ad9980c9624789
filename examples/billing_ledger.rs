//! The billing example's second tool: `ledger`, one action with an output schema, over the same
//! invoices as `billing`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Billing, BillingError, Currency, GetInvoice, Invoices, lock};

/// What remains to be paid on one invoice.
#[derive(Serialize, JsonSchema)]
struct Balance {
    /// The invoice ID.
    id: String,
    /// The currency of the invoice.
    currency: Currency,
    /// The amount still to pay, in cents.
    balance_cents: u64,
}

pub(crate) struct Ledger {
    invoices: Invoices,
}

impl Ledger {
    /// A ledger over the same invoices as `billing`.
    pub(crate) fn sharing(billing: &Billing) -> Ledger {
        Ledger {
            invoices: Arc::clone(&billing.invoices),
        }
    }
}

/// Balances of the billing system's invoices, as structured data.
#[fusion::tool(timeout = "10s")]
impl Ledger {
    /// The open balance of one invoice. Declares an output schema: a success carries
    /// `structuredContent`; an error carries the envelope only, which clients accept.
    #[action(
        read_only,
        idempotent,
        output_schema,
        errors(BillingError::InvoiceNotFound)
    )]
    fn balance(&self, args: GetInvoice) -> Result<Balance, BillingError> {
        let invoices = lock(&self.invoices);
        let invoice = invoices
            .get(&args.id)
            .ok_or(BillingError::InvoiceNotFound { id: args.id })?;
        Ok(Balance {
            id: invoice.id.clone(),
            currency: invoice.currency,
            balance_cents: invoice.balance_cents(),
        })
    }
}
