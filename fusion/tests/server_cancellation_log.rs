//! A cancelled call logs no warning: rmcp drops what the server answers to a cancelled request,
//! and logs an `Err` answer at WARN ("response error") first. In a test binary of its own: the
//! server runs on other threads, so the log is read through a global subscriber.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fusion::server::Server;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use tokio::sync::Notify;

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

#[path = "support/within.rs"]
mod within;
use within::within;

/// Sets its flag when dropped.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone, Default)]
struct Slow {
    started: Arc<Notify>,
    dropped: Arc<AtomicBool>,
}

/// A tool that never answers.
#[fusion::tool]
impl Slow {
    /// Waits until its future is dropped.
    #[action]
    async fn wait(&self) -> String {
        let _guard = DropGuard(self.dropped.clone());
        self.started.notify_one();
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Answers at once.
    #[action]
    fn ping(&self) -> String {
        "pong".to_owned()
    }
}

fn params(action: &str) -> CallToolRequestParams {
    let mut arguments = serde_json::Map::new();
    arguments.insert("action".into(), action.into());
    CallToolRequestParams::new("slow").with_arguments(arguments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_logs_no_warning() {
    let log = Captured::default();
    let subscriber = log.builder().with_max_level(tracing::Level::WARN).finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let slow = Slow::default();
    let server = Server::new("slow-server", "1.0.0").tool(slow.clone());
    let client = within(server.serve_in_process(())).await.unwrap();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params("wait")));
    let handle = within(
        client
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options()),
    )
    .await
    .unwrap();
    within(slow.started.notified()).await;
    within(handle.cancel(Some("the user gave up".to_owned())))
        .await
        .unwrap();
    within(async {
        while !slow.dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    // The connection keeps serving, and the cancelled call's task has had time to end.
    let pong = within(client.call_tool(params("ping"))).await.unwrap();
    assert_eq!(pong.is_error, Some(false));
    tokio::time::sleep(Duration::from_millis(200)).await;

    let log = log.text();
    assert!(!log.contains("WARN"), "{log}");
    assert!(!log.contains("The request was cancelled."), "{log}");
}
