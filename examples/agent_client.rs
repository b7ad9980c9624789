//! A small agent loop against the billing server, driven by `fusion::client`: each call's
//! outcome, and each retry decision with the flags it was made from.
//!
//! ```text
//! cargo run -p examples --example agent_client            # grouped exposition (`billing` + action)
//! cargo run -p examples --example agent_client -- --flat  # one tool per action
//! ```
//!
//! The server runs in-process on one end of a duplex stream; rmcp's client runs on the other,
//! as over stdio. `billing.charge`'s own rate limit (5 calls a minute per client) is shortened
//! here to 5 calls every 5 seconds, so the charge over the limit is retried after 1 second
//! instead of 12. Next to `billing` and `ledger` the server serves `rates`, a stand-in upstream
//! that sheds load and wants credentials, so every branch of the retry policy shows. Waits are
//! real but short (about 1.3 s in all); jitter is seeded, so every run makes the same decisions
//! with the same waits.
//!
//! The agent decides from flags only: it never reads a message to choose
//! between retry, escalate and abort. What it reads from the envelope is what the model would:
//! the available actions to call next, and the fields to fix.

#[path = "billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the billing command line"
)]
mod billing;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use fusion::auth::Principal;
use fusion::client::{CallError, CallOutput, Client, Envelope, RetryPolicy};
use fusion::guard::{GuardSpec, RateLimit};
use fusion::server::{Exposition, Server};
use fusion::{ErrorCode, ToolError};
use rmcp::ServiceExt;
use rmcp::model::{ClientConfig, Implementation};
use serde_json::{Value, json};

// --- a stand-in upstream whose failures show every branch of the policy ------------------------

/// Counts calls, to fail the first ones.
#[derive(Default)]
struct Rates {
    quotes: AtomicU32,
}

/// Exchange rates from an upstream provider.
#[fusion::tool]
impl Rates {
    /// The EUR→USD rate. The provider sheds load now and then.
    #[action(read_only, idempotent)]
    fn quote(&self) -> Result<String, ToolError> {
        match self.quotes.fetch_add(1, Ordering::SeqCst) {
            0 => Err(
                ToolError::new(ErrorCode::ServerBusy, "The provider is busy")
                    .suggest("Retry shortly."),
            ),
            _ => Ok("1.0842".to_owned()),
        }
    }

    /// Refreshes the rate cache; needs provider credentials this deployment does not have.
    #[action(idempotent)]
    fn refresh(&self) -> Result<String, ToolError> {
        Err(ToolError::unauthorized("No provider API key is configured"))
    }
}

// --- the agent ---------------------------------------------------------------------------------

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let exposition = match std::env::args().nth(1).as_deref() {
        None => Exposition::Grouped,
        Some("--flat") => Exposition::Flat,
        Some(other) => anyhow::bail!("unknown argument '{other}' (usage: agent_client [--flat])"),
    };

    let billing = billing::Billing::seeded();
    let ledger = billing::Ledger::sharing(&billing);
    let server = Server::new("fusion-billing", env!("CARGO_PKG_VERSION"))
        .tool(billing)
        .tool(ledger)
        .tool(Rates::default())
        // In process, the caller is the user running the agent, allowed to charge and refund.
        .local_principal(Principal::new("agent-user").with_scopes(["charge", "refund"]))
        // The attribute says 5 charges a minute; the demo keeps the window short.
        .guard(
            "billing.charge",
            GuardSpec::new().rate_limit(RateLimit::per_caller(5, Duration::from_secs(5))),
        )
        .exposition(exposition);
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        let running = server.serve_io(read, write).await?;
        anyhow::Ok(running.waiting().await?)
    });
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("fusion-agent-client", env!("CARGO_PKG_VERSION"));
    let running = config.serve(client_end).await?;

    // Every decision, as the policy makes it: the flags it read, what it decided, how long
    // it waits. Seeded jitter: the same waits on every run.
    let policy = RetryPolicy::new()
        .base_delay(Duration::from_millis(200))
        .jitter_seed(2026)
        .on_decision(|event| {
            let flags = event.flags;
            let retry_after = flags
                .retry_after_secs
                .map_or(String::from("-"), |s| format!("{s}s"));
            println!(
                "    attempt {}: code={} category={} retryable={} retryAfter={} -> {}",
                event.attempt,
                flags.code,
                flags.category,
                flags.retryable,
                retry_after,
                event.decision,
            );
        });
    // tools/list tells the client whether `billing.get_invoice` is a grouped or a flat tool.
    let agent = Client::discover(running.peer().clone())
        .await?
        .with_retry_policy(policy);

    let started = Instant::now();
    step(
        &agent,
        "Look at the open invoices",
        "billing.list_invoices",
        json!({"status": "open"}),
    )
    .await;

    // NOT_FOUND: not retried. The envelope names what to call instead; the agent calls it.
    let outcome = step(
        &agent,
        "Fetch an invoice that does not exist",
        "billing.get_invoice",
        json!({"id": "inv_2026"}),
    )
    .await;
    if let Some(next) = outcome.as_ref().and_then(first_action) {
        step(
            &agent,
            "Follow the envelope's available action",
            &next,
            json!({}),
        )
        .await;
    }

    // VALIDATION_ERROR: not retried as-is. The agent fixes every field named, then calls again.
    let bad = json!({"invoice_id": "invoice-1", "amount_cents": 0, "currency": "eur"});
    let outcome = step(&agent, "Charge with three mistakes", "billing.charge", bad).await;
    if let Some(fields) = outcome.as_ref().and_then(fields_to_fix) {
        println!("    fields to fix: {}", fields.join(", "));
        let fixed = json!({"invoice_id": "inv_0001", "amount_cents": 2500, "currency": "EUR"});
        step(
            &agent,
            "Charge again with every field fixed",
            "billing.charge",
            fixed,
        )
        .await;
    }

    // A warning rides next to a success: never an error.
    let paid = json!({"invoice_id": "inv_0002", "amount_cents": 5000, "currency": "USD"});
    step(
        &agent,
        "Charge an invoice that is already paid",
        "billing.charge",
        paid,
    )
    .await;

    // RATE_LIMITED: the server's own guard refuses the sixth charge within the window; the
    // policy waits exactly retryAfterSeconds, then the charge goes through.
    println!("\n== Spend the charge budget: 5 charges every 5 seconds, 2 made so far");
    let cent = json!({"invoice_id": "inv_0001", "amount_cents": 1, "currency": "EUR"});
    for _ in 0..3 {
        if let Err(err) = agent.call("billing.charge", cent.clone()).await {
            println!("  unexpected: {err}");
        }
    }
    println!("  3 one-cent charges made");
    step(
        &agent,
        "Charge once more, over the rate limit",
        "billing.charge",
        cent,
    )
    .await;

    // INTERNAL_ERROR (category unknown): not retried; logged with its error id.
    let refund = json!({"invoice_id": "inv_0003", "amount_cents": 990});
    step(
        &agent,
        "Refund through a broken ledger",
        "billing.refund",
        refund,
    )
    .await;

    // SERVER_BUSY: back off with jitter.
    step(
        &agent,
        "Quote a rate from a busy provider",
        "rates.quote",
        json!({}),
    )
    .await;

    // UNAUTHORIZED: escalate, never retry.
    step(
        &agent,
        "Refresh rates without credentials",
        "rates.refresh",
        json!({}),
    )
    .await;

    // A batch: each call has its own outcome; the failing one does not sink the others.
    println!("\n== A batch of three balances, one for an invoice that does not exist");
    let ids = ["inv_0001", "inv_9999", "inv_0003"];
    let calls = ids.map(|id| ("ledger", json!({"id": id})));
    for (id, result) in ids.iter().zip(agent.call_batch(calls).await) {
        match result {
            Ok(output) => println!("  {id}: {}", payload(&output)),
            Err(err) => println!("  {id}: {err}"),
        }
    }

    println!(
        "\nDone in {:.1} s of wall time.",
        started.elapsed().as_secs_f64()
    );
    running.cancel().await?;
    serving.await??;
    Ok(())
}

/// Calls `name`, prints the outcome, and hands a failure back to the agent's plan.
async fn step(agent: &Client, title: &str, name: &str, arguments: Value) -> Option<CallError> {
    println!("\n== {title}");
    println!("  call {name} {arguments}");
    let result = agent.call(name, arguments).await;
    match &result {
        Ok(output) => {
            println!(
                "  ok after {} attempt(s): {}",
                output.attempts(),
                payload(output)
            );
            for warning in output.warnings() {
                println!(
                    "  warning {}: {} (recovery: {})",
                    warning.code(),
                    warning.message(),
                    warning.recovery().unwrap_or("-")
                );
            }
        }
        Err(CallError::Tool(failure)) => {
            let flags = failure.flags();
            println!(
                "  failed after {} attempt(s): code={} category={} retryable={} decision: {}",
                failure.attempts(),
                flags.code,
                flags.category,
                flags.retryable,
                failure.decision()
            );
            if failure.is_escalation() {
                println!("  -> escalate to a person: {failure}");
            }
            if let Some(recovery) = failure.tool_error().and_then(ToolError::recovery) {
                println!("  recovery for the model: {recovery}");
            }
        }
        Err(err) => println!("  request failed: {err}"),
    }
    result.err()
}

/// The payload, shortened for the terminal.
fn payload(output: &CallOutput) -> String {
    let text = output.text().unwrap_or("(no payload)");
    if text.chars().count() > 100 {
        format!("{}...", text.chars().take(97).collect::<String>())
    } else {
        text.to_owned()
    }
}

/// The first available action of a failed call, to call next.
fn first_action(failure: &CallError) -> Option<String> {
    let error = failure.tool_failure()?.tool_error()?;
    error.available_actions().first().cloned()
}

/// The fields a validation envelope asks to fix.
fn fields_to_fix(failure: &CallError) -> Option<Vec<String>> {
    match failure.tool_failure()?.envelope()? {
        Envelope::Validation(v) => Some(v.problems().iter().map(|p| p.path().to_owned()).collect()),
        Envelope::ToolError(_) => None,
    }
}
