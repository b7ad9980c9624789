//! An example binary launched as a child process, a client connected to its stdin and stdout.
//! Needs `support/within.rs` included as `crate::within`.

use std::path::Path;
use std::process::Stdio;

use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use tokio::process::Command;

use crate::within::within;

/// Launches `binary ARGS` and connects `handler` as the client to its stdin and stdout.
pub(crate) async fn launch<H: ClientHandler>(
    binary: &str,
    args: &[&str],
    handler: H,
) -> RunningService<RoleClient, H> {
    let name = Path::new(binary).file_name().unwrap().to_string_lossy();
    let mut command = Command::new(binary);
    command.args(args);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("{name} starts: {error:?}"));
    within(handler.serve(transport))
        .await
        .expect("initialize succeeds")
}
