//! The figures of `BENCHMARKS.md`, "Over HTTP": fusion's Streamable HTTP server under
//! load next to a plain rmcp one, the full stack (bearer auth, a tracing subscriber, guards) next
//! to plain fusion, and 200 mixed calls in flight each answered once. Linux only (reads
//! `/proc/<pid>/stat`).
//!
//! ```text
//! cargo run --release -p fusion-benches --bin http_load                 # every figure, about 3 min
//! cargo run --release -p fusion-benches --bin http_load -- rmcp         # figures whose key holds a word
//! cargo run --release -p fusion-benches --bin http_load -- --secs 3 --rounds 7 --inflight 64
//! ```
//!
//! Keys: `rmcp` (fusion against rmcp), `sync` (the action as a plain `fn`, run inline, against
//! the same action as an `async fn`), `blocking` (the action as an `#[action(blocking)]` `fn`,
//! run on the blocking pool, against the `async fn`), `in_place` (the `async fn` with its body
//! in `tokio::task::block_in_place`, against the plain `async fn`), `stack` (the full stack
//! against plain fusion, both under one recording subscriber), `bare` (the full stack against
//! plain fusion without any subscriber), `billing` (the billing example as shipped, `fusion-billing
//! --http` with its bearer layer, alone: build it first with `cargo build --release -p examples
//! --bin fusion-billing`), `mixed` (the correctness check). The program starts
//! itself as each server (`--serve KIND`, a child process, so the load generator's own CPU is
//! not counted), then drives them from here: one keep-alive HTTP/1.1 connection per call in
//! flight (`--inflight`, 64), each sending `tools/call` of the same `add` tool back to back. Both servers of a figure run at once and take turns:
//! `--rounds` rounds (5) of `--secs` seconds (4) each, the order flipped every round. A round's
//! CPU is the server process's user + system time (`/proc/<pid>/stat`) over its calls; latency
//! is measured by the client, request written to body read. The medians over the rounds are
//! compared.
//!
//! Protocol: MCP 2026-07-28, stateless (no `initialize`; each request carries its protocol
//! version in a header and in `_meta`), which rmcp serves statelessly whatever the session
//! setting, so both sides run the same path. Answers are event streams (`json_response` off,
//! the default on both sides).
//!
//! - fusion: `Server::serve_http_on(listener)`, its defaults.
//! - rmcp: the same tool with rmcp's `#[tool_router]` (`benches/fixtures.rs`), rmcp's
//!   `StreamableHttpService` with its default configuration in `axum::serve`, `TCP_NODELAY` on
//!   each accepted socket.
//! - full stack: fusion with `BearerAuth` (HS256) as an `HttpServer::layer`, its `tool_call`
//!   span recorded, a rate limit that never refuses (a million calls a second per caller) and a
//!   concurrency limit (64 running, 1,024 waiting) on the tool. It is compared with plain fusion
//!   under the same subscriber (a `tracing` registry with a layer that visits every field of
//!   every span, at `INFO`), which records rmcp's own request span on both sides and filters
//!   fusion's span out on the plain side: a deployed server has a subscriber either way, and
//!   the stack's cost is what fusion adds under it.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use fusion::ToolError;
use fusion::auth::BearerAuth;
use fusion::auth::jsonwebtoken::{self, Algorithm, DecodingKey, EncodingKey, Header};
use fusion::guard::{ConcurrencyLimit, GuardSpec, RateLimit};
use fusion::server::Server;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

#[path = "../fixtures.rs"]
mod fixtures;
#[path = "../measure.rs"]
mod measure;

/// The HS256 secret of the full stack's bearer tokens.
const SECRET: &[u8] = b"http_load: a shared secret of at least 32 bytes";
/// The ES256 development key pair of `examples/dev-keys/`, for the `auth` servers' tokens.
const DEV_PRIVATE: &[u8] = include_bytes!("../../examples/dev-keys/es256-private.pem");
const DEV_PUBLIC: &[u8] = include_bytes!("../../examples/dev-keys/es256-public.pem");
/// The issuer the full stack's bearer tokens name and its bearer layer accepts.
const ISSUER: &str = "https://id.http-load.invalid";
/// The protocol revision every request speaks (stateless, no `initialize`).
const PROTOCOL: &str = "2026-07-28";
/// Calls in flight in the mixed check, and the concurrency limit it runs under.
const MIXED_CALLS: u64 = 200;
const MIXED_LIMIT: usize = 200;
/// How long each `ledger.get` holds its slot in the mixed check, so that all 200 overlap.
const HOLD: Duration = Duration::from_millis(200);

mod billing;
mod mixed;
mod servers;

// --- the client --------------------------------------------------------------------------------

/// A server child process (killed when the last copy is dropped).
#[derive(Clone)]
struct Served {
    name: &'static str,
    addr: String,
    /// The bearer tokens of its callers, one per connection in turn (none: no auth).
    tokens: Vec<String>,
    pid: u32,
    /// The call every round repeats.
    call: Call,
    _child: Arc<Child>,
}

/// A `tools/call` a round repeats, and the text its result must have (`None`: any result
/// that is not an error).
#[derive(Clone)]
struct Call {
    tool: &'static str,
    arguments: Value,
    text: Option<&'static str>,
}

impl Call {
    /// `add(1.5, 2.25)` of the servers this program starts.
    fn add() -> Call {
        Call {
            tool: "add",
            arguments: json!({"a": 1.5, "b": 2.25}),
            text: Some("3.75"),
        }
    }

    fn answered(&self, message: &Value) -> bool {
        match (result_text(message), self.text) {
            (Some((text, false)), Some(expected)) => text == expected,
            (Some((_, is_error)), None) => !is_error,
            _ => false,
        }
    }
}

async fn spawn(name: &'static str, kind: &str) -> anyhow::Result<Served> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--serve", kind])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().expect("a running child");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let addr = lines.next_line().await?.expect("the server's address");
    let mut tokens = Vec::new();
    if kind == "full" || kind.starts_with("auth") {
        tokens.extend(lines.next_line().await?);
    }
    Ok(Served {
        name,
        addr,
        tokens,
        pid,
        call: Call::add(),
        _child: Arc::new(child),
    })
}

/// A `tools/call` POST of the 2026-07-28 revision: protocol version in the headers and `_meta`,
/// with the bearer token of `connection` (connections take the tokens in turn).
fn call_request(
    served: &Served,
    connection: usize,
    id: u64,
    tool: &str,
    arguments: &Value,
) -> http::Request<Full<Bytes>> {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientInfo": {"name": "http_load", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut request = http::Request::post("/mcp")
        .header("host", &served.addr)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    if let Some(token) = served.tokens.get(connection % served.tokens.len().max(1)) {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid request")
}

/// A keep-alive HTTP/1.1 connection to `served`.
async fn connect(served: &Served) -> anyhow::Result<SendRequest<Full<Bytes>>> {
    measure::connect(&served.addr).await
}

/// Sends one request; the status and the JSON-RPC message of the body (the body itself, or the
/// last `data:` event holding an object).
async fn exchange(
    sender: &mut SendRequest<Full<Bytes>>,
    request: http::Request<Full<Bytes>>,
) -> anyhow::Result<(u16, Value)> {
    sender.ready().await?;
    let response = sender.send_request(request).await?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await?.to_bytes();
    Ok((status, measure::message(std::str::from_utf8(&body)?)?))
}

/// The text of a tool result, and whether it is an error.
fn result_text(message: &Value) -> Option<(&str, bool)> {
    let result = message.get("result")?;
    let text = result["content"][0]["text"].as_str()?;
    Some((text, result["isError"] == true))
}

/// The number of spans the full stack's subscriber saw close (its `/spans` route).
async fn spans_closed(served: &Served) -> anyhow::Result<u64> {
    let mut sender = connect(served).await?;
    let request = http::Request::get("/spans")
        .header("host", &served.addr)
        .body(Full::new(Bytes::new()))?;
    let response = sender.send_request(request).await?;
    let body = response.into_body().collect().await?.to_bytes();
    Ok(std::str::from_utf8(&body)?.trim().parse()?)
}

/// One round against one server.
struct Round {
    calls_per_s: f64,
    cpu_us_per_call: f64,
    p50_us: f64,
    p99_us: f64,
}

/// Drives `served` with `inflight` connections for `secs`, each repeating `served.call`; every
/// answer must be the one expected.
async fn round(served: &Served, inflight: usize, secs: f64, ticks: f64) -> anyhow::Result<Round> {
    let call = &served.call;
    let mut senders = Vec::new();
    for _ in 0..inflight {
        let mut sender = connect(served).await?;
        // Warm-up: one call per connection, untimed.
        let request = call_request(served, senders.len(), 0, call.tool, &call.arguments);
        let (status, message) = exchange(&mut sender, request).await?;
        anyhow::ensure!(
            status == 200 && call.answered(&message),
            "{}: unexpected answer {status} {message}",
            served.name
        );
        senders.push(sender);
    }
    let cpu_before = measure::cpu_ticks(served.pid)?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let workers: Vec<_> = senders
        .into_iter()
        .enumerate()
        .map(|(worker, mut sender)| {
            let served = served.clone();
            tokio::spawn(async move {
                let call = &served.call;
                let mut latencies = Vec::new();
                let mut id = (worker as u64) << 32;
                while Instant::now() < deadline {
                    id += 1;
                    let request = call_request(&served, worker, id, call.tool, &call.arguments);
                    let sent = Instant::now();
                    let (status, message) = exchange(&mut sender, request).await?;
                    latencies.push(sent.elapsed().as_secs_f64() * 1e6);
                    anyhow::ensure!(
                        status == 200 && message["id"] == id && call.answered(&message),
                        "{}: unexpected answer {status} {message}",
                        served.name
                    );
                }
                Ok(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for worker in workers {
        latencies.extend(worker.await??);
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = (measure::cpu_ticks(served.pid)? - cpu_before) as f64 / ticks;
    let calls = latencies.len() as f64;
    latencies.sort_by(f64::total_cmp);
    Ok(Round {
        calls_per_s: calls / wall,
        cpu_us_per_call: cpu * 1e6 / calls,
        p50_us: measure::quantile(&latencies, 0.50),
        p99_us: measure::quantile(&latencies, 0.99),
    })
}

/// A table row: name, the figure of a round, whether higher is better, the target ratio.
type Row = (&'static str, fn(&Round) -> f64, bool, Option<f64>);

/// Medians over rounds, fusion (`a`) against its baseline (`b`); prints the table.
async fn compare(
    title: &str,
    a: &Served,
    b: &Served,
    options: &Options,
    cpu_target: Option<f64>,
    throughput_target: Option<f64>,
    p50_target: Option<f64>,
) -> anyhow::Result<()> {
    let ticks = measure::ticks_per_second();
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for i in 0..options.rounds {
        // Flip the order every round: whatever drifts hits both alike.
        if i % 2 == 0 {
            ra.push(round(a, options.inflight, options.secs, ticks).await?);
            rb.push(round(b, options.inflight, options.secs, ticks).await?);
        } else {
            rb.push(round(b, options.inflight, options.secs, ticks).await?);
            ra.push(round(a, options.inflight, options.secs, ticks).await?);
        }
        let (x, y) = (ra.last().expect("pushed"), rb.last().expect("pushed"));
        println!(
            "  round {}: {} {:.0} calls/s {:.1} µs CPU/call p50 {:.0} µs | {} {:.0} calls/s {:.1} µs CPU/call p50 {:.0} µs",
            i + 1,
            a.name,
            x.calls_per_s,
            x.cpu_us_per_call,
            x.p50_us,
            b.name,
            y.calls_per_s,
            y.cpu_us_per_call,
            y.p50_us
        );
    }
    let median =
        |rounds: &[Round], f: fn(&Round) -> f64| measure::median(rounds.iter().map(f).collect());
    println!(
        "\n{title} ({} rounds x {} s, {} in flight; medians)",
        options.rounds, options.secs, options.inflight
    );
    println!(
        "{:<22} {:>12} {:>12} {:>7}  {:<10} met?",
        "figure", a.name, b.name, "ratio", "target"
    );
    let rows: [Row; 4] = [
        ("calls/s", |r| r.calls_per_s, true, throughput_target),
        ("CPU µs per call", |r| r.cpu_us_per_call, false, cpu_target),
        ("p50 latency µs", |r| r.p50_us, false, p50_target),
        ("p99 latency µs", |r| r.p99_us, false, None),
    ];
    for (name, f, higher_is_better, target) in rows {
        let (x, y) = (median(&ra, f), median(&rb, f));
        let ratio = x / y;
        let (target, met) = match target {
            Some(t) if higher_is_better => (
                format!(">= {t:.2}x"),
                if ratio >= t { "met" } else { "MISSED" },
            ),
            Some(t) => (
                format!("<= {t:.2}x"),
                if ratio <= t { "met" } else { "MISSED" },
            ),
            None => (String::new(), ""),
        };
        println!("{name:<22} {x:>12.1} {y:>12.1} {ratio:>6.2}x  {target:<10} {met}");
    }
    Ok(())
}

struct Options {
    secs: f64,
    rounds: usize,
    inflight: usize,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| args.iter().position(|a| a == name).map(|i| args.get(i + 1));
    if let Some(kind) = value("--serve") {
        let kind = kind.cloned().unwrap_or_default();
        // The servers: tokio's default multi-threaded runtime, as `#[tokio::main]` gives.
        return tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(servers::serve(&kind));
    }
    let number = |name: &str, default: f64| -> anyhow::Result<f64> {
        Ok(match value(name) {
            Some(Some(v)) => v.parse()?,
            Some(None) => anyhow::bail!("{name} needs a value"),
            None => default,
        })
    };
    let options = Options {
        secs: number("--secs", 4.0)?,
        rounds: number("--rounds", 5.0)? as usize,
        inflight: number("--inflight", 64.0)? as usize,
    };
    let mut words = Vec::new();
    let mut skip = false;
    for arg in &args {
        if skip {
            skip = false;
        } else if arg.starts_with("--") {
            skip = true;
        } else {
            words.push(arg.as_str());
        }
    }
    let wanted = |key: &str| words.is_empty() || words.iter().any(|w| key.contains(w));
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async {
            if wanted("rmcp") {
                let fusion = spawn("fusion", "fusion").await?;
                let rmcp = spawn("rmcp", "rmcp").await?;
                compare(
                    "fusion (serve_http_on defaults) vs rmcp (StreamableHttpService in axum::serve)",
                    &fusion,
                    &rmcp,
                    &options,
                    Some(1.0),
                    None,
                    Some(1.0),
                )
                .await?;
            }
            // A plain `fn` inline, on the blocking pool, and in `block_in_place`, each against
            // the same action as an `async fn`.
            let sync_kinds = [
                ("sync", "plain fn", "fusion-sync", "a plain fn (inline)", Some(1.10)),
                ("blocking", "blocking fn", "fusion-blocking", "an #[action(blocking)] fn (blocking pool)", None),
                ("in_place", "block_in_place", "fusion-in-place", "an async fn with its body in tokio::task::block_in_place", None),
            ];
            for (key, label, kind, what, target) in sync_kinds {
                if wanted(key) {
                    let sync = spawn(label, kind).await?;
                    let plain = spawn("async fn", "fusion").await?;
                    let title = format!("fusion: the action as {what} vs as an async fn");
                    compare(&title, &sync, &plain, &options, target, None, None).await?;
                }
            }
            if wanted("stack") {
                let full = spawn("full stack", "full").await?;
                let plain = spawn("plain", "traced").await?;
                compare(
                    "full stack (bearer auth, fusion's span, rate + concurrency limits) vs plain fusion, both under a recording subscriber",
                    &full,
                    &plain,
                    &options,
                    Some(1.10),
                    Some(1.0 / 1.10),
                    None,
                )
                .await?;
                println!(
                    "spans closed, over every call of every round: {} under the full stack, {} \
                     under plain fusion (rmcp's only)",
                    spans_closed(&full).await?,
                    spans_closed(&plain).await?
                );
            }
            if wanted("bare") {
                let full = spawn("full stack", "full").await?;
                let bare = spawn("bare", "fusion").await?;
                compare(
                    "full stack vs plain fusion without any subscriber",
                    &full,
                    &bare,
                    &options,
                    None,
                    None,
                    None,
                )
                .await?;
            }
            // Bearer auth (ES256) against none, with the verified-token cache and without.
            for (key, label, kind, target) in [
                ("auth", "bearer auth", "auth", Some(1.15)),
                ("uncached", "bearer auth, no cache", "auth-uncached", None),
            ] {
                if wanted(key) {
                    let auth = spawn(label, kind).await?;
                    let plain = spawn("no auth", "fusion").await?;
                    let title = format!("{label} (ES256, one token) vs fusion without auth");
                    compare(&title, &auth, &plain, &options, target, None, None).await?;
                }
            }
            if wanted("billing") {
                billing::billing(&options).await?;
            }
            if wanted("mixed") {
                mixed::mixed().await?;
            }
            Ok(())
        })
}
