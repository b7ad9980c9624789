//! The billing example as shipped (`fusion-billing --http`: ES256 bearer tokens checked by its
//! `BearerAuth` layer, its guards, its tracing) under load: one `get_invoice` call repeated by
//! every connection, for 16 callers (the example lets one caller have 8 calls running or
//! waiting), each with a development token signed as the binary signs its own.

use std::process::Stdio;
use std::sync::Arc;

use fusion::auth::jsonwebtoken::{self, Algorithm, EncodingKey, Header};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::{Call, DEV_PRIVATE, Options, Round, Served, measure, round};

/// The p50 latency the billing example must stay under at 64 calls in flight, in µs.
const P50_TARGET_US: f64 = 10_000.0;

/// The issuer of the example's development tokens.
const DEV_ISSUER: &str = "https://dev-issuer.fusion-billing.invalid";
/// How many callers share the load.
const CALLERS: usize = 16;

/// A development token of the billing example for `caller` at `resource`.
fn token(resource: &str, caller: usize) -> anyhow::Result<String> {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": DEV_ISSUER, "sub": format!("caller-{caller}"), "aud": resource,
        "scope": "charge refund", "iat": now, "exp": now + 3600,
    });
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    let key = EncodingKey::from_ec_pem(DEV_PRIVATE)?;
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

/// Starts `fusion-billing --http` on a free port, from the directory of this program (build it
/// with `cargo build --release -p examples --bin fusion-billing`).
async fn spawn() -> anyhow::Result<Served> {
    let binary = std::env::current_exe()?.with_file_name("fusion-billing");
    anyhow::ensure!(
        binary.exists(),
        "{} is missing: cargo build --release -p examples --bin fusion-billing",
        binary.display()
    );
    let mut child = Command::new(&binary)
        .args(["--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().expect("a running child");
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut addr = None;
    while addr.is_none() {
        let Some(line) = lines.next_line().await? else {
            anyhow::bail!("fusion-billing stopped before printing its address and token");
        };
        if let Some(url) = line.strip_prefix("listening on http://") {
            addr = url.strip_suffix("/mcp").map(str::to_owned);
        }
    }
    let addr = addr.expect("read above");
    let resource = format!("http://{addr}/mcp");
    let tokens = (0..CALLERS)
        .map(|caller| token(&resource, caller))
        .collect::<anyhow::Result<_>>()?;
    // Keep reading its log, so that a full pipe never blocks it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Served {
        name: "billing",
        addr,
        tokens,
        pid,
        call: Call {
            tool: "billing",
            arguments: json!({"action": "get_invoice", "id": "inv_0001"}),
            text: None,
        },
        _child: Arc::new(child),
    })
}

/// Rounds against the billing example; prints each and the medians, with the p50 target.
pub(super) async fn billing(options: &Options) -> anyhow::Result<()> {
    let served = spawn().await?;
    let ticks = measure::ticks_per_second();
    let mut rounds: Vec<Round> = Vec::new();
    for i in 0..options.rounds {
        let r = round(&served, options.inflight, options.secs, ticks).await?;
        println!(
            "  round {}: {:.0} calls/s {:.1} µs CPU/call p50 {:.0} µs p99 {:.0} µs",
            i + 1,
            r.calls_per_s,
            r.cpu_us_per_call,
            r.p50_us,
            r.p99_us
        );
        rounds.push(r);
    }
    let median = |f: fn(&Round) -> f64| measure::median(rounds.iter().map(f).collect());
    let p50 = median(|r| r.p50_us);
    println!(
        "\nthe billing example as shipped (bearer auth, ES256, {CALLERS} callers; get_invoice) ({} rounds x {} s, {} in flight; medians)",
        options.rounds, options.secs, options.inflight
    );
    println!("calls/s          {:>10.0}", median(|r| r.calls_per_s));
    println!("CPU µs per call  {:>10.1}", median(|r| r.cpu_us_per_call));
    println!(
        "p50 latency µs   {p50:>10.0}  target < {P50_TARGET_US:.0} {}",
        if p50 < P50_TARGET_US { "met" } else { "MISSED" }
    );
    println!("p99 latency µs   {:>10.0}", median(|r| r.p99_us));
    Ok(())
}
