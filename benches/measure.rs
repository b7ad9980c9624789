//! What the load harnesses (`http_load`, `peers`, `http_sessions`) share: a server process's
//! CPU time and resident memory from `/proc` (Linux only), the JSON-RPC message of a
//! Streamable HTTP answer, a keep-alive connection, and medians and quantiles of samples.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// The process's user + system CPU time so far, in clock ticks (every thread).
pub(crate) fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Ok(fields[11].parse::<u64>()? + fields[12].parse::<u64>()?)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux if that fails).
pub(crate) fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}

/// A memory field of `/proc/<pid>/status`, in KiB: `VmRSS` (resident memory), `RssAnon` (the
/// resident part that is the process's own: heap, stacks) or `RssFile` (mapped files, the
/// binary's code first: shared with other processes of the same binary, and dropped by the
/// kernel under memory pressure).
#[allow(dead_code, reason = "not read by `http_load`")]
pub(crate) fn status_kb(pid: u32, field: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB")?.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no {field} in /proc/{pid}/status"))
}

/// The JSON-RPC message of an answer's body: the body itself, or the last `data:` event holding
/// an object (`null` for an empty body).
pub(crate) fn message(text: &str) -> anyhow::Result<Value> {
    let json = if text.trim_start().starts_with('{') {
        text
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|data| data.starts_with('{'))
            .unwrap_or("null")
    };
    Ok(serde_json::from_str(json)?)
}

/// A keep-alive HTTP/1.1 connection to `addr`, with `TCP_NODELAY`.
pub(crate) async fn connect(addr: &str) -> anyhow::Result<SendRequest<Full<Bytes>>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// The median of `samples`.
pub(crate) fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The `q` quantile (0 to 1) of `sorted`, samples sorted ascending.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q) as usize]
}
