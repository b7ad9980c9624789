//! Drives billing replicas (`fusion-billing --http ADDR --redis URL --public-url URL`) through a
//! load balancer with rmcp's Streamable HTTP client and `fusion::client::Client`, one check per
//! run. `scripts/replicas.sh` starts Redis, HAProxy and the replicas and runs each check in turn.
//! Each check calls as its own subject (a development token it signs, as the billing example
//! does), so each starts with a full rate-limit bucket.
//!
//! ```text
//! replicas_driver <check> --url http://127.0.0.1:PORT/mcp [options]
//!   limit      N charges by one subject: exactly --limit succeed, the rest are RATE_LIMITED
//!              with a retry_after; another subject has its own bucket
//!   sessions   a client of the previous revision (initialize, Mcp-Session-Id) through the
//!              balancer: every call reaches the replica holding its session (sticky)
//!   failover   a stream of --calls reads, --workers at a time; after a third of them,
//!              kill -KILL --kill-pid (a replica): every call is answered
//!   busy       Redis is away: charges answer SERVER_BUSY (fail closed), reads still work
//!   recovered  Redis is back: a charge succeeds (fusion's retry policy waits out SERVER_BUSY)
//!   tasks      an export task started on one replica is polled, fetched and cancelled on the
//!              others (tasks in Redis); another subject cannot see it
//!   mrtr       a refund's confirmation asked on one replica is answered on another (one
//!              request-state key); a replayed state is refused
//! options: --limit N (5) --calls N (400) --workers N (4) --kill-pid PID
//!          --replicas URL,URL,... (each replica's own /mcp, for tasks and mrtr)
//! ```
//!
//! Each check prints `PASS <check>: ...` and exits 0, or `FAIL <check>: ...` and exits 1.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use fusion::client::{CallError, CallOutput, Client};
use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

// The development tokens of the billing example (signed with the public key pair of
// `examples/dev-keys/`); the driver signs its own, one subject per check.
#[allow(dead_code)]
#[path = "billing_auth.rs"]
mod auth;

// The checks `tasks` and `mrtr`: what replicas share besides the rate limits.
#[path = "replicas_driver_shared.rs"]
mod shared;

struct Args {
    check: String,
    url: String,
    limit: u32,
    calls: u32,
    workers: u32,
    kill_pid: Option<u32>,
    replicas: Vec<String>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = std::env::args().skip(1);
    let check = args
        .next()
        .context("usage: replicas_driver <check> --url URL [options]")?;
    let mut parsed = Args {
        check,
        url: String::new(),
        limit: 5,
        calls: 400,
        workers: 4,
        kill_pid: None,
        replicas: Vec::new(),
    };
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => parsed.url = value,
            "--limit" => parsed.limit = value.parse()?,
            "--calls" => parsed.calls = value.parse()?,
            "--workers" => parsed.workers = value.parse()?,
            "--kill-pid" => parsed.kill_pid = Some(value.parse()?),
            "--replicas" => parsed.replicas = value.split(',').map(str::to_owned).collect(),
            other => bail!("unknown option {other}"),
        }
    }
    ensure!(!parsed.url.is_empty(), "--url is required");
    Ok(parsed)
}

type Connection = RunningService<RoleClient, ()>;

/// A client through the balancer at `url`, calling as `subject` (with the `charge` scope),
/// speaking the 2026-07-28 stateless lifecycle (`server/discover`, no session) or, with
/// `legacy`, `initialize` and a session.
async fn connect(url: &str, subject: &str, legacy: bool) -> anyhow::Result<(Connection, Client)> {
    let token = auth::dev_token(url, subject, auth::CHARGE_SCOPE)?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    // A session that lands on the wrong replica must show as an error, not be replaced.
    config.reinit_on_expired_session = false;
    let transport = StreamableHttpClientTransport::from_config(config);
    let lifecycle = if legacy {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    };
    let running = ().serve_with_lifecycle(transport, lifecycle).await?;
    let version = running
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();
    println!("  connected as {subject}, protocol {version}");
    let client = Client::new(running.peer().clone());
    Ok((running, client))
}

fn charge(invoice_id: &str) -> Value {
    json!({"invoice_id": invoice_id, "amount_cents": 1, "currency": "EUR"})
}

/// The code of a tool failure, or a description of another outcome.
fn code(outcome: &Result<CallOutput, CallError>) -> String {
    match outcome {
        Ok(_) => "ok".to_owned(),
        Err(CallError::Tool(failure)) => failure.flags().code.to_string(),
        Err(other) => format!("error: {other}"),
    }
}

/// `calls` charges from one address: exactly `limit` succeed, the rest are `RATE_LIMITED`
/// with a retry_after; then a client at another address is not limited by the first's bucket.
async fn limit(args: &Args) -> anyhow::Result<String> {
    let calls = args.limit * 2 + 2;
    let (running, client) = connect(&args.url, "driver-limit", false).await?;
    let (mut ok, mut limited) = (0, 0);
    for _ in 0..calls {
        // Once, without the retry policy (it would wait out the limit).
        let outcome = client.call_once("billing.charge", charge("inv_0001")).await;
        match &outcome {
            Ok(_) => ok += 1,
            Err(CallError::Tool(failure)) if failure.flags().code.as_str() == "RATE_LIMITED" => {
                let wait = failure.flags().retry_after();
                ensure!(
                    wait.is_some_and(|w| w >= Duration::from_secs(1)),
                    "a RATE_LIMITED answer without a retry_after of 1 s or more: {wait:?}"
                );
                limited += 1;
            }
            _ => bail!("unexpected answer to a charge: {}", code(&outcome)),
        }
    }
    running.cancel().await?;
    ensure!(
        ok == args.limit && limited == calls - args.limit,
        "{ok} charges succeeded and {limited} were RATE_LIMITED of {calls}; expected exactly {} to succeed",
        args.limit
    );
    // The key is the subject: another one has its own bucket.
    let other = "driver-limit-other";
    let (running, client) = connect(&args.url, other, false).await?;
    let outcome = client.call_once("billing.charge", charge("inv_0001")).await;
    running.cancel().await?;
    ensure!(
        outcome.is_ok(),
        "a charge by {other} (its own bucket) answered {}",
        code(&outcome)
    );
    Ok(format!(
        "{calls} charges across the replicas: {ok} succeeded, {limited} RATE_LIMITED with retry_after; \
         {other} has its own bucket"
    ))
}

/// A client of the session lifecycle charges an invoice, then reads its balance ten times: each
/// read sees the charge only on the replica holding the session, so all ten must.
async fn sessions(args: &Args) -> anyhow::Result<String> {
    let (running, client) = connect(&args.url, "driver-sessions", true).await?;
    let version = running
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.clone());
    ensure!(
        version
            .as_ref()
            .is_some_and(|v| *v < ProtocolVersion::V_2026_07_28),
        "the initialize handshake negotiated {version:?}, not a session revision"
    );
    let before = balance(&client).await?;
    client
        .call("billing.charge", charge("inv_0003"))
        .await
        .context("the session's charge")?;
    for read in 1..=10 {
        let after = balance(&client).await?;
        ensure!(
            after + 1 == before,
            "read {read} saw a balance of {after} after a charge from {before}: another replica"
        );
    }
    running.cancel().await?;
    Ok(format!(
        "one session ({}): a charge and 10 reads, all on the replica holding it",
        version.map(|v| v.to_string()).unwrap_or_default()
    ))
}

async fn balance(client: &Client) -> anyhow::Result<u64> {
    let output = client.call("ledger", json!({"id": "inv_0003"})).await?;
    let value: Value = output.json()?;
    value["balance_cents"]
        .as_u64()
        .context("a balance without balance_cents")
}

/// A stream of reads, `workers` at a time; a third of the way in, the replica `kill_pid` is
/// killed. Every call must be answered, with the invoice.
async fn failover(args: &Args) -> anyhow::Result<String> {
    let (running, client) = connect(&args.url, "driver-failover", false).await?;
    let next = Arc::new(AtomicU32::new(0));
    let retried = Arc::new(AtomicU32::new(0));
    let kill_at = args.calls / 3;
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..args.workers {
        let (client, next, retried) = (client.clone(), next.clone(), retried.clone());
        let (calls, kill_pid) = (args.calls, args.kill_pid);
        workers.push(tokio::spawn(async move {
            let mut answered = 0u32;
            loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= calls {
                    return Ok::<u32, anyhow::Error>(answered);
                }
                if n == kill_at
                    && let Some(pid) = kill_pid
                {
                    println!("  call {n}: kill -KILL {pid} (a replica)");
                    std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status()?;
                }
                let output = read_invoice(&client, &retried).await?;
                let invoice: Value = output.json()?;
                ensure!(invoice["id"] == "inv_0002", "call {n} answered {invoice}");
                answered += 1;
            }
        }));
    }
    let mut answered = 0;
    for worker in workers {
        answered += worker.await??;
    }
    running.cancel().await?;
    ensure!(
        answered == args.calls,
        "{answered} of {} calls answered",
        args.calls
    );
    Ok(format!(
        "{answered}/{} reads answered in {:.1} s with a replica killed after {kill_at}; \
         {} resent by the client after a transport error",
        args.calls,
        started.elapsed().as_secs_f64(),
        retried.load(Ordering::SeqCst)
    ))
}

/// A read-only, idempotent call: fusion's retry policy retries what the tool answers
/// (`SERVER_BUSY`, `TIMEOUT`); a transport error (a replica gone mid-request, which the balancer
/// did not retry) has no answer to decide from, and the read is resent here, as only an
/// idempotent call may be.
async fn read_invoice(client: &Client, retried: &AtomicU32) -> anyhow::Result<CallOutput> {
    let mut attempt = 1;
    loop {
        match client
            .call("billing.get_invoice", json!({"id": "inv_0002"}))
            .await
        {
            Err(CallError::Protocol(error)) if attempt < 5 => {
                println!("  transport error, resending the read: {error}");
                retried.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
                attempt += 1;
            }
            outcome => return Ok(outcome?),
        }
    }
}

/// Redis is away: every charge is refused with `SERVER_BUSY` and a retry_after (the limit
/// cannot be checked, so the call does not run); reads, which no rate limit covers, still work.
async fn busy(args: &Args) -> anyhow::Result<String> {
    let (running, client) = connect(&args.url, "driver-busy", false).await?;
    let calls = 6;
    for n in 0..calls {
        let started = Instant::now();
        let outcome = client.call_once("billing.charge", charge("inv_0001")).await;
        let Err(CallError::Tool(failure)) = &outcome else {
            bail!("charge {n} with Redis away answered {}", code(&outcome));
        };
        let flags = failure.flags();
        ensure!(
            flags.code.as_str() == "SERVER_BUSY" && flags.retry_after().is_some(),
            "charge {n} with Redis away answered {} (retry_after {:?})",
            flags.code,
            flags.retry_after()
        );
        ensure!(
            started.elapsed() < Duration::from_secs(3),
            "charge {n} took {:?} to be refused",
            started.elapsed()
        );
    }
    let read = client
        .call_once("billing.get_invoice", json!({"id": "inv_0002"}))
        .await;
    running.cancel().await?;
    ensure!(
        read.is_ok(),
        "a read with Redis away answered {}",
        code(&read)
    );
    Ok(format!(
        "{calls} charges with Redis away: all SERVER_BUSY with retry_after (fail closed); reads still answered"
    ))
}

/// Redis is back: a charge succeeds, through fusion's retry policy (it waits out a
/// `SERVER_BUSY` retry_after if a replica has not reconnected yet).
async fn recovered(args: &Args) -> anyhow::Result<String> {
    let (running, client) = connect(&args.url, "driver-recovered", false).await?;
    let started = Instant::now();
    let outcome = client.call("billing.charge", charge("inv_0001")).await;
    running.cancel().await?;
    let output = outcome.map_err(|err| anyhow::anyhow!("a charge after Redis came back: {err}"))?;
    Ok(format!(
        "a charge succeeded after Redis came back ({} attempt(s), {:.1} s)",
        output.attempts(),
        started.elapsed().as_secs_f64()
    ))
}

#[tokio::main]
async fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            eprintln!("replicas_driver: {err}");
            std::process::exit(2);
        }
    };
    let outcome = match args.check.as_str() {
        "limit" => limit(&args).await,
        "sessions" => sessions(&args).await,
        "failover" => failover(&args).await,
        "busy" => busy(&args).await,
        "recovered" => recovered(&args).await,
        "tasks" => shared::tasks(&args).await,
        "mrtr" => shared::mrtr(&args).await,
        other => Err(anyhow::anyhow!("unknown check {other}")),
    };
    match outcome {
        Ok(summary) => println!("PASS {}: {summary}", args.check),
        Err(err) => {
            println!("FAIL {}: {err:#}", args.check);
            std::process::exit(1);
        }
    }
}
