//! An in-memory billing MCP server built with fusion: one tool, `billing`, with five actions
//! and an error contract.
//!
//! ```text
//! cargo run -p examples --example billing                     # MCP over stdio
//! cargo run -p examples --example billing -- --http 127.0.0.1:8080  # Streamable HTTP at /mcp
//! cargo run -p examples --example billing -- --demo           # a client session, printed
//! ```
//!
//! `charge` requires the scope `charge` (`#[action(scopes("charge"))]`), `refund` the scope
//! `refund`. Over HTTP every request needs a bearer token (`fusion::auth::BearerAuth`); the
//! server prints two development tokens at start, one with both scopes and one with neither
//! (`billing_auth.rs`). Over stdio and in `--demo` the caller is the user who launched the
//! server, with both scopes.
//!
//! `export_invoices` runs as a task (MCP Tasks extension) for a client that declares the
//! extension: the call is answered at once with a task id, and the client polls `tasks/get`
//! for the export.
//!
//! Replicas behind a load balancer (`scripts/replicas.sh`): `--redis URL` keeps the rate limits
//! and the tasks in Redis, so that they share them; `--public-url URL` is the balancer's URL, the
//! audience every replica's tokens name; `--request-state-key-file PATH` is the key every
//! replica seals a confirmation's `requestState` with, so that the user's answer may reach
//! another replica than the question.
//!
//! `--flat` exposes each action as its own tool (`billing_get_invoice`, …) in any mode. The
//! same program is the `fusion-billing` binary of this package.
//!
//! The contract is locked in `examples/fusion.lock` (checked by `tests/billing_lockfile.rs`;
//! `FUSION_LOCK=overwrite cargo test -p examples` rewrites it). `--lock-check` compares the
//! running contract with it, prints one line per change, and exits with status 1 on a BREAKING
//! change. `--baseline PATH` serves with a known-good lockfile, so validation errors carry
//! `<contract_awareness>`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use fusion::server::{Exposition, Server};
use fusion::tasks::{MemoryTaskStore, TaskStore, Tasks};
use fusion::{RequestContext, ToolResponse};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tracing_subscriber::filter::LevelFilter;
use validator::Validate;

#[path = "billing_demo.rs"]
mod demo;

#[path = "billing_auth.rs"]
mod auth;

#[path = "billing_cli.rs"]
mod cli;
use cli::{Mode, USAGE, lock_check, parse_args};

// --- arguments: the schema the model sees, and the rules checked before an action runs -----

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListInvoices {
    /// Only invoices with this status; all invoices when left out.
    status: Option<Status>,
    /// How many invoices to skip, in ID order; none when left out.
    offset: Option<usize>,
    /// At most this many invoices; all that match when left out.
    limit: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetInvoice {
    /// The invoice ID, like `inv_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}$"))]
    id: String,
}

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
struct Charge {
    /// The invoice to act on, like `inv_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}$"))]
    invoice_id: String,
    /// The amount in cents (1250 is 12.50).
    #[validate(range(min = 1))]
    amount_cents: u64,
    /// The currency of the amount; must be the invoice's.
    currency: Currency,
}

// `invoice_id` and `amount_cents` are declared exactly as in `Charge`, so the tool's one flat
// input schema describes each once instead of offering two variants.
#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
struct Refund {
    /// The invoice to act on, like `inv_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}$"))]
    invoice_id: String,
    /// The amount in cents (1250 is 12.50).
    #[validate(range(min = 1))]
    amount_cents: u64,
}

#[derive(Deserialize, JsonSchema, Validate)]
#[serde(deny_unknown_fields)]
struct ExportInvoices {
    /// `csv` (a header line, then one line per invoice) or `json` (an array of invoices).
    format: Format,
    /// Milliseconds to wait before exporting, at most 60000: stands for a large export.
    #[validate(range(max = 60_000))]
    delay_ms: Option<u64>,
}

#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Format {
    Csv,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Currency {
    Eur,
    Usd,
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Currency::Eur => "EUR",
            Currency::Usd => "USD",
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Paid,
}

/// What the actions answer with, as compact JSON.
#[derive(Clone, Debug, Serialize)]
struct Invoice {
    id: String,
    amount_cents: u64,
    currency: Currency,
    status: Status,
    /// Charged so far; internal bookkeeping, not part of the answer.
    #[serde(skip)]
    paid_cents: u64,
}

impl Invoice {
    fn balance_cents(&self) -> u64 {
        self.amount_cents - self.paid_cents
    }
}

/// The invoices as CSV: a header line, then one line per invoice.
fn csv(invoices: &[Invoice]) -> String {
    let mut csv = "id,amount_cents,currency,status\n".to_owned();
    for invoice in invoices {
        let status = match invoice.status {
            Status::Open => "open",
            Status::Paid => "paid",
        };
        let (id, amount, currency) = (&invoice.id, invoice.amount_cents, invoice.currency);
        let _ = writeln!(csv, "{id},{amount},{currency},{status}");
    }
    csv
}

// --- the error contract: every way an action can fail, and what the model should do next -----

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
#[tool_error(tool = Billing)]
enum BillingError {
    #[error("No invoice with that ID")]
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices first, then retry with a real ID",
        actions(list_invoices)
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },

    // Severity warning: rides next to a successful result instead of failing the call.
    #[error("Invoice {id} is already paid")]
    #[tool_error(
        code = "ALREADY_PAID",
        severity = "warning",
        category = "validation",
        recovery = "No action needed; do not charge again."
    )]
    AlreadyPaid { id: String },

    #[error("The amount is more than the open balance of invoice {id}")]
    #[tool_error(
        code = "AMOUNT_OVER_BALANCE",
        category = "validation",
        recovery = "Charge at most {balance} cents for this invoice."
    )]
    AmountOverBalance {
        id: String,
        #[detail(key = "balanceCents")]
        balance: u64,
    },

    #[error("Invoice {id} is billed in {expected}, not {sent}")]
    #[tool_error(
        CONFLICT,
        category = "validation",
        recovery = "Charge this invoice in {expected}."
    )]
    CurrencyMismatch {
        id: String,
        sent: Currency,
        expected: Currency,
    },

    #[error("The refund is more than was paid on invoice {id}")]
    #[tool_error(
        code = "AMOUNT_OVER_PAID",
        category = "validation",
        recovery = "Refund at most {paid} cents for this invoice."
    )]
    RefundOverPaid {
        id: String,
        #[detail(key = "paidCents")]
        paid: u64,
    },

    // An error without a contract: the model gets INTERNAL_ERROR and an errorId; the cause
    // (with its connection string) goes to the server log under the same id.
    #[error("the ledger failed")]
    #[tool_error(internal)]
    Ledger(#[from] LedgerError),

    // The user did not confirm a refund: fusion's own envelope and contract pass through
    // (CONFIRMATION_UNAVAILABLE when the client cannot ask, USER_DECLINED when the user said
    // no).
    #[error(transparent)]
    #[tool_error(transparent)]
    Unconfirmed(#[from] fusion::elicit::Unconfirmed),
}

#[derive(Debug, thiserror::Error)]
#[error("ledger unavailable: {0}")]
struct LedgerError(String);

/// Opens the invoice's entry in the (pretend) ledger database, where a refund is booked; the
/// one for `inv_0003` always fails.
fn open_ledger_entry(invoice_id: &str) -> Result<(), LedgerError> {
    if invoice_id == "inv_0003" {
        return Err(LedgerError(
            "connect postgres://ledger:hunter2@10.0.0.9/ledger: connection refused".into(),
        ));
    }
    Ok(())
}

// --- the tool ----------------------------------------------------------------------------------

/// The invoices, shared by both tools. Actions take `&self` and may run concurrently: mutable
/// state lives behind a lock.
type Invoices = Arc<Mutex<BTreeMap<String, Invoice>>>;

/// Locks the invoices. A panicking action is answered with INTERNAL_ERROR and the server keeps
/// serving; no action panics halfway through an update, so a poisoned map is still consistent.
fn lock(invoices: &Invoices) -> MutexGuard<'_, BTreeMap<String, Invoice>> {
    invoices.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) struct Billing {
    invoices: Invoices,
}

impl Billing {
    pub(crate) fn seeded() -> Billing {
        let invoices = [
            ("inv_0001", 12000, Currency::Eur, Status::Open),
            ("inv_0002", 5000, Currency::Usd, Status::Paid),
            ("inv_0003", 990, Currency::Eur, Status::Open),
        ]
        .into_iter()
        .map(|(id, amount_cents, currency, status)| {
            let paid = status == Status::Paid;
            let invoice = Invoice {
                id: id.into(),
                amount_cents,
                currency,
                status,
                paid_cents: if paid { amount_cents } else { 0 },
            };
            (id.to_owned(), invoice)
        });
        Billing {
            invoices: Arc::new(Mutex::new(invoices.collect())),
        }
    }

    fn invoices(&self) -> MutexGuard<'_, BTreeMap<String, Invoice>> {
        lock(&self.invoices)
    }
}

/// Invoices of an in-memory billing system. Amounts are integer cents.
// Runtime guards: at most 16 calls of the tool run at once and 64 wait, beyond
// that SERVER_BUSY; every action is stopped after 10 seconds (TIMEOUT).
#[fusion::tool(concurrency(max_active = 16, max_queued = 64), timeout = "10s")]
impl Billing {
    /// Lists invoices in ID order, optionally only those with one status, a page at a time.
    // At most 200 bytes of invoices a result (small, so the demo's three invoices make two
    // pages; 16000 suits a real ledger): a longer list comes back as the invoices that fit,
    // with a RESULT_TRUNCATED warning giving the arguments of the next page.
    #[action(read_only, max_result = 200, page(offset = "offset", limit = "limit"))]
    fn list_invoices(&self, args: ListInvoices) -> Vec<Invoice> {
        let invoices = self.invoices();
        let matches = |invoice: &&Invoice| args.status.is_none_or(|s| invoice.status == s);
        let page = invoices
            .values()
            .filter(matches)
            .skip(args.offset.unwrap_or(0));
        page.take(args.limit.unwrap_or(usize::MAX))
            .cloned()
            .collect()
    }

    /// Fetches one invoice by ID.
    // The only error it can return: its contract lists NOT_FOUND and nothing else.
    #[action(read_only, idempotent, errors(BillingError::InvoiceNotFound))]
    fn get_invoice(&self, args: GetInvoice) -> Result<Invoice, BillingError> {
        let invoices = self.invoices();
        let invoice = invoices.get(&args.id);
        invoice
            .cloned()
            .ok_or(BillingError::InvoiceNotFound { id: args.id })
    }

    /// Charges an open invoice; charging its whole balance marks it paid.
    // Only callers granted the scope `charge`: others are answered FORBIDDEN, naming it.
    // Five charges a minute per caller (the signed-in user, else the session); the sixth is
    // answered RATE_LIMITED with the seconds until a slot frees. Invalid calls do not count.
    #[action(
        read_only = false,
        idempotent = false,
        scopes("charge"),
        rate_limit(calls = 5, per = "1m"),
        errors(
            BillingError::InvoiceNotFound,
            BillingError::AlreadyPaid,
            BillingError::CurrencyMismatch,
            BillingError::AmountOverBalance
        )
    )]
    fn charge(&self, args: Charge) -> Result<ToolResponse, BillingError> {
        let mut invoices = self.invoices();
        let Some(invoice) = invoices.get_mut(&args.invoice_id) else {
            return Err(BillingError::InvoiceNotFound {
                id: args.invoice_id,
            });
        };
        if invoice.status == Status::Paid {
            // Not a failure: the invoice is paid, which is what the caller wanted. Answer it,
            // with a warning so the model does not try again.
            let warning = BillingError::AlreadyPaid {
                id: invoice.id.clone(),
            };
            return Ok(ToolResponse::json(&*invoice).with_warning(warning.into()));
        }
        if args.currency != invoice.currency {
            return Err(BillingError::CurrencyMismatch {
                id: invoice.id.clone(),
                sent: args.currency,
                expected: invoice.currency,
            });
        }
        if args.amount_cents > invoice.balance_cents() {
            return Err(BillingError::AmountOverBalance {
                id: invoice.id.clone(),
                balance: invoice.balance_cents(),
            });
        }
        invoice.paid_cents += args.amount_cents;
        if invoice.balance_cents() == 0 {
            invoice.status = Status::Paid;
        }
        Ok(ToolResponse::json(&*invoice))
    }

    /// Refunds part or all of what was paid on an invoice; it is open again afterwards.
    // Requires the scope `refund`, then asks the user to confirm (MCP elicitation). A client
    // that cannot ask gets CONFIRMATION_UNAVAILABLE: money leaves only on the user's own word,
    // never on the model's. Waiting for a person takes longer than the tool's 10 seconds.
    #[action(
        destructive,
        scopes("refund"),
        timeout = "2m",
        errors(
            BillingError::InvoiceNotFound,
            BillingError::RefundOverPaid,
            BillingError::Ledger,
            BillingError::Unconfirmed
        )
    )]
    async fn refund(&self, args: Refund, ctx: RequestContext) -> Result<Invoice, BillingError> {
        open_ledger_entry(&args.invoice_id)?;
        // Check before asking: never ask the user to confirm a refund that cannot happen.
        self.refundable(&args)?;
        let question = format!(
            "Refund {} cents on invoice {}?",
            args.amount_cents, args.invoice_id
        );
        ctx.confirm(question).await?;
        // Checked again under the lock that applies it: another call may have changed the
        // invoice while the user decided.
        let mut invoices = self.invoices();
        let invoice = refundable(&mut invoices, &args)?;
        invoice.paid_cents -= args.amount_cents;
        invoice.status = Status::Open;
        Ok(invoice.clone())
    }

    /// Exports every invoice, in ID order, as CSV or JSON. Runs as a task for a client of the
    /// MCP Tasks extension: it polls for the export instead of waiting on the call.
    // Stopped after 5 minutes (TIMEOUT), whatever the delay; cancelling the task stops it.
    #[action(task, read_only, idempotent, timeout = "5m")]
    async fn export_invoices(&self, args: ExportInvoices) -> ToolResponse {
        if let Some(delay) = args.delay_ms.filter(|&ms| ms > 0) {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let invoices: Vec<Invoice> = self.invoices().values().cloned().collect();
        match args.format {
            Format::Csv => ToolResponse::text(csv(&invoices)),
            Format::Json => ToolResponse::json(&invoices),
        }
    }
}

impl Billing {
    /// Whether `args` can be refunded now.
    fn refundable(&self, args: &Refund) -> Result<(), BillingError> {
        refundable(&mut self.invoices(), args).map(|_| ())
    }
}

/// The invoice `args` refunds, when it exists and was paid at least as much.
fn refundable<'a>(
    invoices: &'a mut BTreeMap<String, Invoice>,
    args: &Refund,
) -> Result<&'a mut Invoice, BillingError> {
    let Some(invoice) = invoices.get_mut(&args.invoice_id) else {
        return Err(BillingError::InvoiceNotFound {
            id: args.invoice_id.clone(),
        });
    };
    if args.amount_cents > invoice.paid_cents {
        return Err(BillingError::RefundOverPaid {
            id: invoice.id.clone(),
            paid: invoice.paid_cents,
        });
    }
    Ok(invoice)
}

// --- a second tool with an output schema: `billing_ledger.rs` --------------------------------

#[path = "billing_ledger.rs"]
mod ledger;
pub(crate) use ledger::Ledger;

// --- serving -----------------------------------------------------------------------------------

fn server(exposition: Exposition) -> Server {
    // The name and version clients see in `initialize`.
    let billing = Billing::seeded();
    let ledger = Ledger::sharing(&billing);
    Server::new("fusion-billing", env!("CARGO_PKG_VERSION"))
        .tool(billing)
        .tool(ledger)
        .exposition(exposition)
        .tasks(task_settings(MemoryTaskStore::default()))
        // The caller over stdio and in `--demo`: the user who launched the server. Never over
        // HTTP, where only a bearer token's principal counts.
        .local_principal(auth::local_user())
}

/// How tasks (`export_invoices`) are kept: an hour from creation, and an hour after they
/// settle; clients are asked to poll every half second. In this process's memory, or in Redis
/// for replicas (`--redis`).
fn task_settings(store: impl TaskStore) -> Tasks {
    Tasks::new(store).poll_interval(Duration::from_millis(500))
}

// `pub(crate)`: the `fusion-billing` binary (`bin/fusion-billing.rs`) runs this file as a module.
#[tokio::main]
pub(crate) async fn main() -> anyhow::Result<()> {
    let (mode, exposition, contract, replica) = match parse_args() {
        Ok(parsed) => parsed,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("billing: {problem}");
            }
            eprintln!("{USAGE}");
            std::process::exit(if problem.is_empty() { 0 } else { 2 });
        }
    };
    // Logs go to stderr: over stdio, stdout carries the protocol. INTERNAL_ERROR causes land
    // here, next to the errorId the model was given.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(LevelFilter::WARN)
        .without_time()
        .init();

    let mut server = replica.apply(server(exposition))?;
    if let Some(path) = &contract.baseline {
        let baseline = fusion::contract::Lockfile::load(path)?;
        server = server.contract_baseline(fusion::contract::ContractBaseline::new(baseline));
    }
    match mode {
        Mode::LockCheck => {
            let path = contract.lockfile.as_deref().unwrap_or(cli::LOCKFILE);
            std::process::exit(lock_check(&server, path));
        }
        // Returns when the client closes stdin.
        Mode::Stdio => {
            server.serve_stdio().await?;
        }
        Mode::Http(addr) => {
            // Bound here to print the port the OS picked; `serve_on` sets TCP_NODELAY on each
            // connection and applies fusion's HTTP defaults (timeouts, a session cap, Host and
            // Origin checks).
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            let local = format!("http://{}/mcp", listener.local_addr()?);
            eprintln!("listening on {local}");
            // Behind a load balancer, the URL clients use (the audience of their tokens).
            let resource = replica.public_url.unwrap_or(local);
            // Bearer tokens on `/mcp` (401 with a `WWW-Authenticate` challenge without one);
            // the RFC 9728 metadata the challenge names is public, outside the layer.
            let issuer = replica.issuer.as_deref();
            let client = replica.introspection_client.as_deref();
            let (bearer, metadata) = auth::bearer(&resource, issuer, client).await?;
            match issuer {
                None => auth::print_dev_tokens(&resource, bearer.resource_metadata_url())?,
                Some(issuer) => {
                    eprintln!("bearer tokens of {issuer} required; with one in $BILLING_TOKEN,");
                    auth::print_try(&resource);
                }
            }
            server
                .http()
                .layer(bearer)
                .routes(metadata)
                .serve_on(listener)
                .await?;
        }
        Mode::Demo => demo::run(server, exposition).await?,
    }
    Ok(())
}
