//! A real `redis-server` on a free loopback port for the tests that need one (the shared
//! rate-limit and task stores). Skipped, with the reason printed, only when no `redis-server`
//! binary is installed and `FUSION_REQUIRE_REDIS` is unset (CI sets it).

use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

/// A `redis-server` on a free loopback port, killed on drop.
pub(crate) struct Redis {
    child: Child,
    pub(crate) url: String,
}

impl Redis {
    /// Starts one, or `None` (after printing why) when the binary is missing and Redis is
    /// not required.
    pub(crate) async fn start() -> Option<Redis> {
        let binary = which("redis-server");
        let Some(binary) = binary else {
            if std::env::var_os("FUSION_REQUIRE_REDIS").is_some() {
                panic!("FUSION_REQUIRE_REDIS is set but no `redis-server` binary is on PATH");
            }
            eprintln!(
                "SKIPPED: no `redis-server` on PATH (install the Debian package redis-server, \
                 or set FUSION_REQUIRE_REDIS=1 to make this a failure)"
            );
            return None;
        };
        let port = free_port();
        let child = Command::new(binary)
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server starts");
        let url = format!("redis://127.0.0.1:{port}/");
        // Ready once it accepts connections.
        let client = redis::Client::open(url.as_str()).unwrap();
        // Up to 20 s: a loaded CI machine starts it slowly.
        for _ in 0..800 {
            if let Ok(mut connection) = client.get_multiplexed_async_connection().await {
                let pong: redis::RedisResult<String> =
                    redis::cmd("PING").query_async(&mut connection).await;
                if pong.is_ok() {
                    return Some(Redis { child, url });
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("redis-server did not accept connections on port {port} within 20 s");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A port nothing listens on (free at the time of asking).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
