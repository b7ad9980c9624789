//! Measures what a burst of MCP sessions costs a fusion Streamable HTTP server, and whether the
//! memory comes back once they expire. Linux only (reads `/proc/<pid>/status`).
//!
//! ```text
//! cargo run --release -p fusion-benches --bin http_sessions                  # 10,000 initialize, default cap
//! cargo run --release -p fusion-benches --bin http_sessions -- --sessions 20000 --max-sessions 5000
//! ```
//!
//! The program starts itself as the server (a child process, so the client's own allocations
//! are not counted), with a 5-second idle timeout. It prints the server's resident memory
//! (VmRSS) as started and once it has served 64 sessions that then expired (the idle figure
//! the others are compared with), then sends `--sessions` `initialize` requests 64 at a time,
//! each on its own connection, and prints the memory right after the burst and after its
//! sessions expired, and the peak (VmHWM). `--bursts N` (default 4) repeats burst and expiry,
//! to tell memory kept by the allocator (the figure levels off) from a leak (it keeps growing).
//!
//! Built with `--features mimalloc`, the program (and so the server) uses mimalloc as its global
//! allocator instead of glibc's malloc, a choice a server binary can make (the library never
//! makes it):
//!
//! ```text
//! cargo run --release -p fusion-benches --features mimalloc --bin http_sessions
//! ```

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fusion::server::Server;

#[allow(dead_code, reason = "only the memory figures are read here")]
mod measure;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;

/// How long a session may sit idle in the measured server.
const IDLE: Duration = Duration::from_secs(5);
/// Requests in flight at once during the burst.
const CONCURRENCY: usize = 64;

/// The global allocator, with `--features mimalloc`.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The allocator the server runs on.
const ALLOCATOR: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "glibc malloc"
};

/// Says hello.
#[fusion::tool]
#[action(read_only)]
fn hello() -> String {
    "hello".to_owned()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse::<usize>())
            .transpose()
    };
    let max_sessions =
        value("--max-sessions")?.unwrap_or(fusion::server::http::DEFAULT_MAX_SESSIONS);
    if args.iter().any(|a| a == "--serve") {
        return serve(max_sessions).await;
    }
    let sessions = value("--sessions")?.unwrap_or(10_000);
    let bursts = value("--bursts")?.unwrap_or(4).max(1);
    println!(
        "{sessions} initialize requests a burst, {CONCURRENCY} at a time, {bursts} bursts; cap \
         {max_sessions} sessions, idle timeout {} s",
        IDLE.as_secs()
    );
    measure(ALLOCATOR, sessions, max_sessions, bursts).await
}

/// The server: prints its address, serves until killed.
async fn serve(max_sessions: usize) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    Server::new("sessions", "1.0.0")
        .tool(Hello)
        .http()
        .max_sessions(max_sessions)
        .session_idle_timeout(IDLE)
        .serve_on(listener)
        .await?;
    Ok(())
}

async fn measure(
    label: &str,
    sessions: usize,
    max_sessions: usize,
    bursts: usize,
) -> anyhow::Result<()> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(["--serve", "--max-sessions", &max_sessions.to_string()])
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let pid = child.id().expect("a running child");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped")).lines();
    let addr = stdout.next_line().await?.expect("the server's address");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = measure::status_kb(pid, "VmRSS")?;
    let mb = |kb: u64| kb as f64 / 1024.0;
    println!("\n{label}");
    println!("  idle, as started                 {:6.1} MB", mb(started));
    // What the server keeps once it has served at all (worker threads' caches, rmcp's and
    // hyper's lazily built state): one session per connection, left to expire.
    burst(&addr, CONCURRENCY).await?;
    tokio::time::sleep(IDLE + Duration::from_secs(3)).await;
    let idle = measure::status_kb(pid, "VmRSS")?;
    println!(
        "  idle, after {CONCURRENCY} sessions expired {:6.1} MB (\"idle\" below)",
        mb(idle)
    );
    // Each burst after the first: freed memory the allocator kept is reused; a figure that
    // levels off is the allocator keeping memory (fragmentation), one that keeps growing a leak.
    for n in 1..=bursts {
        let (accepted, refused) = burst(&addr, sessions).await?;
        let after_burst = measure::status_kb(pid, "VmRSS")?;
        tokio::time::sleep(IDLE + Duration::from_secs(3)).await;
        let expired = measure::status_kb(pid, "VmRSS")?;
        println!(
            "  burst {n}: {accepted} sessions opened, {refused} refused; after it {:6.1} MB, \
             after expiry {:6.1} MB ({:+.0} % of idle, {:+.0} % of as started)",
            mb(after_burst),
            mb(expired),
            (expired as f64 / idle as f64 - 1.0) * 100.0,
            (expired as f64 / started as f64 - 1.0) * 100.0
        );
    }
    let peak = measure::status_kb(pid, "VmHWM")?;
    println!("  peak (VmHWM)                     {:6.1} MB", mb(peak));
    child.kill().await?;
    Ok(())
}

/// Sends `sessions` `initialize` requests, [`CONCURRENCY`] at a time; counts the sessions
/// opened and refused.
async fn burst(addr: &str, sessions: usize) -> anyhow::Result<(usize, usize)> {
    let next = Arc::new(AtomicUsize::new(0));
    let accepted = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (addr, next) = (addr.to_owned(), Arc::clone(&next));
            let (accepted, refused) = (Arc::clone(&accepted), Arc::clone(&refused));
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::Relaxed) < sessions {
                    match initialize(&addr).await {
                        Ok(200) => accepted.fetch_add(1, Ordering::Relaxed),
                        Ok(_) | Err(_) => refused.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await?;
    }
    Ok((
        accepted.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
    ))
}

/// One `initialize` on its own connection; the HTTP status.
async fn initialize(addr: &str) -> std::io::Result<u16> {
    const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"burst","version":"1"}}}"#;
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         content-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let status = response
        .get(9..12)
        .and_then(|code| std::str::from_utf8(code).ok()?.parse().ok())
        .unwrap_or(0);
    Ok(status)
}
