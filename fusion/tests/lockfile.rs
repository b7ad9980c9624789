//! The contract lockfile end to end: canonical bytes and stable digests, tampering detection,
//! the `assert_lockfile` overwrite workflow (through the real environment variable, in a child
//! process), and `<contract_awareness>` in validation errors sent by a real server to a real
//! rmcp client. One test binary: the two versions of the billing tool are here, the tests
//! grouped by topic in `lockfile/`.

#[path = "lockfile/canonical.rs"]
mod canonical;

#[path = "lockfile/tampering.rs"]
mod tampering;

#[path = "lockfile/overwrite.rs"]
mod overwrite;

#[path = "lockfile/awareness.rs"]
mod awareness;

use std::path::PathBuf;

use fusion::Tool;
use fusion::contract::Contract;

/// The billing tool as a model first learned it.
mod v1 {
    use schemars::JsonSchema;
    use serde::Deserialize;

    pub(crate) struct Billing;

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Charge {
        /// The invoice to charge.
        pub(crate) invoice_id: String,
        /// The amount in cents.
        pub(crate) amount_cents: u64,
        /// The currency; the invoice's when left out.
        pub(crate) currency: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct ChargeAll {
        /// Only invoices of this customer.
        pub(crate) customer: String,
        /// A note for the ledger.
        pub(crate) note: Option<String>,
    }

    /// Invoices.
    #[fusion::tool]
    impl Billing {
        /// Charges one invoice.
        #[action(idempotent)]
        pub(crate) fn charge(&self, args: Charge) -> String {
            format!(
                "{} {} {:?}",
                args.invoice_id, args.amount_cents, args.currency
            )
        }

        /// Charges every open invoice.
        #[action(destructive)]
        pub(crate) fn charge_all(&self, args: ChargeAll) -> String {
            format!("{} {:?}", args.customer, args.note)
        }
    }
}

/// The billing tool after a release: `charge` requires a currency, has a minimum amount and is
/// no longer idempotent; `charge_all` lost a field.
mod v2 {
    use schemars::JsonSchema;
    use serde::Deserialize;

    pub(crate) struct Billing;

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Charge {
        /// The invoice to charge.
        pub(crate) invoice_id: String,
        /// The amount in cents.
        #[schemars(range(min = 1))]
        pub(crate) amount_cents: u64,
        /// The currency, `EUR` or `USD`.
        pub(crate) currency: String,
        /// A memo for the customer.
        pub(crate) memo: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct ChargeAll {
        /// Only invoices of this customer.
        pub(crate) customer: String,
    }

    /// Invoices.
    #[fusion::tool]
    impl Billing {
        /// Charges one invoice, in its currency.
        #[action]
        pub(crate) fn charge(&self, args: Charge) -> String {
            format!(
                "{} {} {} {:?}",
                args.invoice_id, args.amount_cents, args.currency, args.memo
            )
        }

        /// Charges every open invoice.
        #[action(destructive)]
        pub(crate) fn charge_all(&self, args: ChargeAll) -> String {
            args.customer
        }
    }
}

pub(crate) fn contract_of(tool: &impl Tool) -> Contract {
    Contract::from_definitions([&tool.definition()])
}

/// A fresh directory under the system temporary directory, unique to this test.
pub(crate) fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fusion-lock-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
