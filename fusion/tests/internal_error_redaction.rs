//! The causes of internal errors as the log gets them: verbatim by default, rewritten by the
//! redactor a server or a tester is given, and never shown to the model either way. In a test
//! binary of its own: the server runs on other threads, so the log is read through a global
//! subscriber, shared by the tests and read line by line through each error's id.

use std::sync::OnceLock;

use fusion::server::Server;
use fusion::testing::Tester;
use rmcp::model::CallToolRequestParams;

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

#[path = "support/within.rs"]
mod within;
use within::within;

const PASSWORD: &str = "hunter2-b1lling";
const SECRET: &str = "postgres://billing:hunter2-b1lling@10.0.0.7:5432/ledger";

/// Hides the ledger's password wherever a cause names it.
fn hide_password(cause: &str) -> String {
    cause.replace(PASSWORD, "[redacted]")
}

/// The log every test of this binary writes to.
fn log() -> &'static Captured {
    static LOG: OnceLock<Captured> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Captured::default();
        tracing::subscriber::set_global_default(log.builder().finish()).unwrap();
        log
    })
}

struct Ledger;

/// A ledger whose database is unreachable.
#[fusion::tool]
impl Ledger {
    /// Fails with the driver's error, which names the connection string.
    #[action(read_only)]
    async fn balance(&self) -> anyhow::Result<u64> {
        tokio::task::yield_now().await;
        Err(anyhow::anyhow!("connect {SECRET}: connection refused").context("reading balance"))
    }

    /// The same from a synchronous action, which runs on a thread of its own.
    #[action(read_only)]
    fn export(&self) -> anyhow::Result<u64> {
        Err(anyhow::anyhow!("connect {SECRET}: connection refused"))
    }

    /// Panics with the connection string in its message.
    #[action(read_only)]
    async fn audit(&self) -> u64 {
        tokio::task::yield_now().await;
        panic!("lost the connection to {SECRET}")
    }
}

/// The `errorId` an envelope carries.
fn error_id(envelope: &str) -> &str {
    let open = "<detail key=\"errorId\">";
    let start = envelope
        .find(open)
        .unwrap_or_else(|| panic!("no error id in {envelope}"))
        + open.len();
    &envelope[start..start + "err_".len() + 16]
}

/// The log line of the error `id`.
fn logged_line(id: &str) -> String {
    let log = log().text();
    log.lines()
        .find(|line| line.contains(id))
        .unwrap_or_else(|| panic!("the id {id} is not in the log:\n{log}"))
        .to_owned()
}

/// The envelope says nothing of the cause, redacted or not.
fn assert_no_cause(envelope: &str) {
    for part in [PASSWORD, "postgres://", "[redacted]", "connection refused"] {
        assert!(
            !envelope.contains(part),
            "{part:?} reached the model: {envelope}"
        );
    }
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    action: &str,
) -> String {
    let mut arguments = serde_json::Map::new();
    arguments.insert("action".into(), action.into());
    let params = CallToolRequestParams::new("ledger").with_arguments(arguments);
    let result = within(client.call_tool(params)).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{action}");
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_redactor_rewrites_every_cause_before_the_log_and_another_server_keeps_its_own() {
    log();
    let redacting = Server::new("ledger", "1.0.0")
        .tool(Ledger)
        .redact_internal_causes(hide_password);
    let verbatim = Server::new("ledger", "1.0.0").tool(Ledger);
    let redacting = within(redacting.serve_in_process(())).await.unwrap();
    let verbatim = within(verbatim.serve_in_process(())).await.unwrap();

    for action in ["balance", "export", "audit"] {
        let envelope = call(&redacting, action).await;
        assert_no_cause(&envelope);
        let line = logged_line(error_id(&envelope));
        assert!(
            !line.contains(PASSWORD),
            "{action}: the password was logged: {line}"
        );
        assert!(
            line.contains("postgres://billing:[redacted]@10.0.0.7:5432/ledger"),
            "{action}: the rest of the cause is not logged: {line}"
        );
        assert!(line.contains("ERROR"), "{action}: {line}");

        // Without a redactor, the same failure is logged verbatim.
        let envelope = call(&verbatim, action).await;
        assert_no_cause(&envelope);
        let line = logged_line(error_id(&envelope));
        assert!(line.contains(SECRET), "{action}: not verbatim: {line}");
    }
    within(redacting.cancel()).await.unwrap();
    within(verbatim.cancel()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_testers_redactor_rewrites_causes_as_a_servers_does() {
    log();
    let tester = Tester::new()
        .tool(Ledger)
        .redact_internal_causes(hide_password);
    for name in ["ledger.balance", "ledger.export", "ledger.audit"] {
        let outcome = tester.call(name, serde_json::json!({})).await;
        outcome.assert_error(fusion::ErrorCode::InternalError);
        let envelope = outcome.response().content_texts()[0].to_owned();
        assert_no_cause(&envelope);
        let line = logged_line(error_id(&envelope));
        assert!(!line.contains(PASSWORD), "{name}: {line}");
        assert!(line.contains("[redacted]"), "{name}: {line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redactor_that_panics_withholds_the_cause_and_the_call_is_still_answered() {
    log();
    let tester = Tester::new()
        .tool(Ledger)
        .redact_internal_causes(|_| panic!("the redactor itself failed"));
    for name in ["ledger.balance", "ledger.export", "ledger.audit"] {
        let outcome = tester.call(name, serde_json::json!({})).await;
        outcome.assert_error(fusion::ErrorCode::InternalError);
        let envelope = outcome.response().content_texts()[0].to_owned();
        let line = logged_line(error_id(&envelope));
        assert!(!line.contains(PASSWORD), "{name}: {line}");
        assert!(
            line.contains("(cause withheld: the redactor panicked)"),
            "{name}: {line}"
        );
    }
}
