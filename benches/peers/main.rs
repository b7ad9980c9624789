//! fusion next to other MCP servers: the load generator of `peers/run.sh`, and the two Rust
//! servers it measures. Linux only (reads `/proc/<pid>/stat` and `/proc/<pid>/status`).
//!
//! ```text
//! peers serve fusion|rmcp PORT          # serve get_invoice on 127.0.0.1:PORT/mcp until killed
//! peers drive [--secs 5] [--rounds 3] [--inflight 64] [--calls N]
//!             [--only found|not-found|invalid] NAME=HOST:PORT=PID ...
//! ```
//!
//! `drive` measures servers that are already running (the script starts them). Each round gives
//! every server in turn (the order given, A B C D, A B C D, ...) `--secs` seconds of load: one
//! keep-alive HTTP/1.1 connection per call in flight, each with its own MCP session
//! (`initialize`, `notifications/initialized`, then `tools/call` back to back, `DELETE` at the
//! end of the round). The calls go round three kinds: a successful lookup, a not-found error and
//! invalid arguments; every answer must be of its kind. Per server and round: calls per second,
//! p50 and p99 latency (request written to body read), the server's CPU time per call (user +
//! system, `/proc/<pid>/stat`, over the measured window) and its resident memory right after the
//! window (`VmRSS`), the part of it that is the process's own (`RssAnon`: heap and stacks,
//! without the binary's mapped code), and `VmRSS` again a second after the round's sessions
//! were closed (`closed MB`). The table holds the medians over the rounds and the ratios to the
//! server named `rmcp`. The load generator runs on the same machine as the servers. With
//! `--calls N`, a round makes exactly N calls (shared between the sessions) instead of running
//! for `--secs`: `peers/instructions.sh` counts a server's instructions over a known number of
//! calls. With `--only`, every call is of that one kind.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod client;
#[path = "../measure.rs"]
mod measure;
mod servers;

use client::Session;

/// One kind of call, its arguments, and whether an answer is of that kind.
#[derive(Clone, Copy)]
enum Kind {
    Found,
    NotFound,
    Invalid,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Found, Kind::NotFound, Kind::Invalid];

    fn arguments(self) -> Value {
        match self {
            Kind::Found => json!({"id": "inv_1"}),
            Kind::NotFound => json!({"id": "inv_404"}),
            Kind::Invalid => json!({"id": 42}),
        }
    }

    /// A lookup is a result that is not an error and names the invoice; the two failures are an
    /// error result or a JSON-RPC error.
    fn answered(self, message: &Value) -> bool {
        let result = &message["result"];
        match self {
            Kind::Found => result["isError"] != true && result.to_string().contains("inv_1"),
            Kind::NotFound | Kind::Invalid => {
                result["isError"] == true || message.get("error").is_some()
            }
        }
    }
}

/// A server under load: its name, address and process id.
struct Target {
    name: String,
    addr: String,
    pid: u32,
}

/// One round against one server.
struct Round {
    calls_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_us_per_call: f64,
    rss_mb: f64,
    anon_mb: f64,
    /// `VmRSS` a second after the round's sessions were closed.
    closed_mb: f64,
}

/// A column of the table: its title and the figure of a round.
type Column = (&'static str, fn(&Round) -> f64);

/// The figures of a round.
const COLUMNS: [Column; 7] = [
    ("calls/s", |r| r.calls_per_s),
    ("p50 ms", |r| r.p50_ms),
    ("p99 ms", |r| r.p99_ms),
    ("CPU µs/call", |r| r.cpu_us_per_call),
    ("RSS MB", |r| r.rss_mb),
    ("anon MB", |r| r.anon_mb),
    ("closed MB", |r| r.closed_mb),
];

struct Options {
    secs: f64,
    rounds: usize,
    inflight: usize,
    /// Calls per round, when a round is a number of calls rather than `secs` of load.
    calls: Option<usize>,
    /// The one kind of call to make, when not all three in turn.
    only: Option<Kind>,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match args.first().map(String::as_str) {
        Some("serve") => {
            let (Some(kind), Some(port)) = (args.get(1), args.get(2)) else {
                anyhow::bail!("usage: peers serve fusion|rmcp PORT");
            };
            runtime.block_on(servers::serve(kind, port.parse()?))
        }
        Some("drive") => {
            let (options, targets) = parse_drive(&args[1..])?;
            runtime.block_on(drive(&options, &targets))
        }
        _ => anyhow::bail!(
            "usage: peers serve fusion|rmcp PORT | peers drive [options] NAME=ADDR=PID ..."
        ),
    }
}

fn parse_drive(args: &[String]) -> anyhow::Result<(Options, Vec<Target>)> {
    let mut options = Options {
        secs: 5.0,
        rounds: 3,
        inflight: 64,
        calls: None,
        only: None,
    };
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| anyhow::anyhow!("{arg} needs a value"))
        };
        match arg.as_str() {
            "--secs" => options.secs = value()?.parse()?,
            "--rounds" => options.rounds = value()?.parse()?,
            "--inflight" => options.inflight = value()?.parse()?,
            "--calls" => options.calls = Some(value()?.parse()?),
            "--only" => {
                options.only = Some(match value()?.as_str() {
                    "found" => Kind::Found,
                    "not-found" => Kind::NotFound,
                    "invalid" => Kind::Invalid,
                    other => anyhow::bail!("--only found|not-found|invalid, not {other}"),
                });
            }
            target => {
                let mut parts = target.split('=');
                let (Some(name), Some(addr), Some(pid), None) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    anyhow::bail!("a target is NAME=HOST:PORT=PID, not {target}");
                };
                targets.push(Target {
                    name: name.to_owned(),
                    addr: addr.to_owned(),
                    pid: pid.parse()?,
                });
            }
        }
    }
    anyhow::ensure!(
        !targets.is_empty() && options.rounds > 0 && options.inflight > 0,
        "no target, no round, or no call in flight"
    );
    anyhow::ensure!(options.calls != Some(0), "--calls needs at least one call");
    Ok((options, targets))
}

async fn drive(options: &Options, targets: &[Target]) -> anyhow::Result<()> {
    // The servers were just started: wait until each accepts a session, and keep the answers
    // to the two failing calls for the side-by-side at the end.
    let mut answers = Vec::new();
    for target in targets {
        let mut session = client::wait_for_session(&target.addr, Duration::from_secs(60)).await?;
        let mut texts = Vec::new();
        for kind in [Kind::Invalid, Kind::NotFound] {
            let message = session.call("get_invoice", &kind.arguments()).await?.1;
            texts.push(client::model_text(&message));
        }
        session.close().await;
        answers.push(texts);
    }
    let length = match options.calls {
        Some(calls) => format!("{calls} calls"),
        None => format!("{} s", options.secs),
    };
    let kinds = match options.only {
        None => "calls round found / not found / invalid arguments",
        Some(Kind::Found) => "every call a lookup that finds",
        Some(Kind::NotFound) => "every call a lookup that finds nothing",
        Some(Kind::Invalid) => "every call with invalid arguments",
    };
    println!(
        "{} rounds x {length} per server, {} calls in flight (a session each), {kinds}",
        options.rounds, options.inflight
    );
    let ticks = measure::ticks_per_second();
    let mut rounds: Vec<Vec<Round>> = targets.iter().map(|_| Vec::new()).collect();
    for i in 0..options.rounds {
        for (target, rounds) in targets.iter().zip(&mut rounds) {
            let round = round(target, options, ticks).await?;
            println!(
                "  round {} {:<11} {:>8.0} calls/s  p50 {:>7.2} ms  p99 {:>7.2} ms  {:>8.1} µs CPU/call  {:>6.1} MB ({:.1} anon, {:.1} closed)",
                i + 1,
                target.name,
                round.calls_per_s,
                round.p50_ms,
                round.p99_ms,
                round.cpu_us_per_call,
                round.rss_mb,
                round.anon_mb,
                round.closed_mb
            );
            rounds.push(round);
        }
    }
    report(targets, &rounds);
    println!("\nThe invalid-arguments call (get_invoice {{\"id\": 42}}): what each server answers");
    for (target, texts) in targets.iter().zip(&answers) {
        println!("\n--- {}\n{}", target.name, texts[0]);
    }
    println!("\nThe not-found call (get_invoice {{\"id\": \"inv_404\"}})");
    for (target, texts) in targets.iter().zip(&answers) {
        println!("\n--- {}\n{}", target.name, texts[1]);
    }
    Ok(())
}

/// Medians over the rounds, and the ratios to the server named `rmcp` (else the first).
fn report(targets: &[Target], rounds: &[Vec<Round>]) {
    let medians: Vec<Vec<f64>> = rounds
        .iter()
        .map(|rounds| {
            COLUMNS
                .iter()
                .map(|(_, figure)| measure::median(rounds.iter().map(figure).collect()))
                .collect()
        })
        .collect();
    let base = targets.iter().position(|t| t.name == "rmcp").unwrap_or(0);
    let header: String = COLUMNS
        .iter()
        .map(|(name, _)| format!("{name:>12}"))
        .collect();
    println!("\nmedians of the rounds");
    println!("{:<12}{header}", "server");
    for (target, row) in targets.iter().zip(&medians) {
        let cells: String = row.iter().map(|v| format!("{v:>12.1}")).collect();
        println!("{:<12}{cells}", target.name);
    }
    println!("\nratio to {}", targets[base].name);
    println!("{:<12}{header}", "server");
    for (target, row) in targets.iter().zip(&medians) {
        let cells: String = row
            .iter()
            .zip(&medians[base])
            .map(|(v, b)| format!("{:>11.2}x", v / b))
            .collect();
        println!("{:<12}{cells}", target.name);
    }
    if let Some(fusion) = targets.iter().position(|t| t.name == "fusion") {
        let ratio = |column: usize| medians[fusion][column] / medians[base][column];
        let met = |ok: bool| if ok { "met" } else { "MISSED" };
        println!(
            "\nfusion: CPU per call {:.2}x {} (goal <= 1.0x), RSS {:.2}x {} (goal <= 1.2x)",
            ratio(3),
            targets[base].name,
            ratio(4),
            targets[base].name
        );
        println!(
            "        {} and {}; its own memory (anon) {:.2}x, the rest is the binary's mapped code; \
             RSS once the sessions closed {:.2}x",
            met(ratio(3) <= 1.0),
            met(ratio(4) <= 1.2),
            ratio(5),
            ratio(6)
        );
    }
}

/// Opens `inflight` sessions on `target`, drives them for `secs`, closes them.
async fn round(target: &Target, options: &Options, ticks: f64) -> anyhow::Result<Round> {
    let mut sessions = Vec::new();
    for _ in 0..options.inflight {
        sessions.push(Session::open(&target.addr).await?);
    }
    let cpu_before = measure::cpu_ticks(target.pid)?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(options.secs);
    let workers: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(worker, mut session)| {
            let name = target.name.clone();
            // This session's share of a fixed number of calls.
            let share = options.calls.map(|calls| {
                calls / options.inflight + usize::from(worker < calls % options.inflight)
            });
            let only = options.only;
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut turn = worker;
                let more = |made: usize| match share {
                    Some(share) => made < share,
                    None => Instant::now() < deadline,
                };
                while more(latencies.len()) {
                    let kind = only.unwrap_or(Kind::ALL[turn % Kind::ALL.len()]);
                    turn += 1;
                    let sent = Instant::now();
                    let (status, message) = session.call("get_invoice", &kind.arguments()).await?;
                    latencies.push(sent.elapsed().as_secs_f64() * 1e3);
                    anyhow::ensure!(
                        status == 200 && kind.answered(&message),
                        "{name}: unexpected answer {status} {message}"
                    );
                }
                Ok((latencies, session))
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut sessions = Vec::new();
    for worker in workers {
        let (some, session) = worker.await??;
        latencies.extend(some);
        sessions.push(session);
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = (measure::cpu_ticks(target.pid)? - cpu_before) as f64 / ticks;
    let rss_kb = measure::status_kb(target.pid, "VmRSS")?;
    let anon_kb = measure::status_kb(target.pid, "RssAnon")?;
    for session in sessions {
        session.close().await;
    }
    // What the server keeps once its sessions are gone (fusion gives freed memory back to the
    // system 200 ms after its last session closes).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let closed_kb = measure::status_kb(target.pid, "VmRSS")?;
    let calls = latencies.len() as f64;
    latencies.sort_by(f64::total_cmp);
    Ok(Round {
        calls_per_s: calls / wall,
        p50_ms: measure::quantile(&latencies, 0.50),
        p99_ms: measure::quantile(&latencies, 0.99),
        cpu_us_per_call: cpu * 1e6 / calls,
        rss_mb: rss_kb as f64 / 1024.0,
        anon_mb: anon_kb as f64 / 1024.0,
        closed_mb: closed_kb as f64 / 1024.0,
    })
}
