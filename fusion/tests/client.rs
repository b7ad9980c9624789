//! `fusion::client::Client` end to end: a fusion server on one end of an in-process duplex
//! stream, rmcp's real client on the other, the retry policy under Tokio's paused clock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::{
    AbortReason, CallError, Client, Decision, Envelope, Flags, RetryPolicy, read_result,
};
use fusion::server::{Exposition, Server};
use fusion::{ErrorCategory, ErrorCode, Severity, ToolError, ToolResponse};
use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, ClientConfig, ContentBlock, MetaObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

// --- a tool whose failures are scripted -------------------------------------------------------

/// Answers each `fetch` with the next scripted error, and succeeds once the script is empty.
#[derive(Clone, Default)]
struct Flaky {
    script: Arc<Mutex<VecDeque<ToolError>>>,
    calls: Arc<AtomicU32>,
}

impl Flaky {
    fn failing(errors: impl IntoIterator<Item = ToolError>) -> Flaky {
        let flaky = Flaky::default();
        flaky.script.lock().unwrap().extend(errors);
        flaky
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    /// The ID, at least three characters.
    #[schemars(length(min = 3))]
    id: String,
}

/// A flaky upstream.
#[fusion::tool]
impl Flaky {
    /// Fails as scripted, then answers `"ok <n>"` with the call count.
    #[action(read_only)]
    fn fetch(&self) -> Result<String, ToolError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        match self.script.lock().unwrap().pop_front() {
            Some(error) => Err(error),
            None => Ok(format!("ok {n}")),
        }
    }

    /// Answers `id` with a deprecation warning riding next to it.
    #[action(read_only)]
    fn lookup(&self, args: Lookup) -> ToolResponse {
        ToolResponse::text(format!("found {}", args.id)).with_warning(
            ToolError::deprecated("'lookup' is deprecated; use 'fetch'.")
                .suggest("Call flaky.fetch next time."),
        )
    }

    /// Answers with a warning alone (a warning-severity error: `isError: false`).
    #[action(read_only)]
    fn advise(&self) -> Result<String, ToolError> {
        Err(ToolError::new("PARTIAL", "Only the first page was returned.").warning())
    }
}

// --- harness ----------------------------------------------------------------------------------

/// The decisions the policy's hook saw: (attempt, code, decision, waited before).
type Log = Arc<Mutex<Vec<(u32, String, Decision, Duration)>>>;

async fn connect(server: Server) -> rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
    server
        .serve_in_process(ClientConfig::default())
        .await
        .expect("client connects")
}

/// A client of a server serving `flaky`, with `policy` logging every decision into the log.
async fn client_for(
    flaky: &Flaky,
    exposition: Exposition,
    policy: RetryPolicy,
) -> (
    Client,
    Log,
    rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
) {
    let server = Server::new("flaky-server", "1.0.0")
        .tool(flaky.clone())
        .exposition(exposition);
    let running = connect(server).await;
    let log = Log::default();
    let sink = Arc::clone(&log);
    let policy = policy.on_decision(move |event| {
        sink.lock().unwrap().push((
            event.attempt,
            event.flags.code.to_string(),
            event.decision.clone(),
            event.waited,
        ));
    });
    let client = Client::discover(running.peer().clone())
        .await
        .expect("tools/list")
        .with_retry_policy(policy);
    (client, log, running)
}

fn exact_policy() -> RetryPolicy {
    RetryPolicy::new()
        .jitter(0.0)
        .base_delay(Duration::from_millis(100))
        .max_delay(Duration::from_millis(300))
        .max_attempts(6)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn failed(
    result: Result<fusion::client::CallOutput, CallError>,
) -> Box<fusion::client::ToolFailure> {
    match result {
        Err(CallError::Tool(failure)) => failure,
        other => panic!("expected a tool failure, got {other:?}"),
    }
}

// --- retries, under the paused clock ----------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_rate_limited_call_is_retried_after_exactly_the_stated_delay_and_succeeds() {
    let flaky =
        Flaky::failing([ToolError::new(ErrorCode::RateLimited, "Too many fetches").retry_after(1)]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let start = Instant::now();
    let output = client
        .call("flaky.fetch", json!({}))
        .await
        .expect("succeeds on the retry");
    assert_eq!(start.elapsed(), secs(1), "waited exactly retryAfterSeconds");
    assert_eq!(output.text(), Some("ok 2"));
    assert_eq!(output.attempts(), 2);
    assert!(output.warnings().is_empty());
    assert_eq!(flaky.calls(), 2);
    assert_eq!(
        *log.lock().unwrap(),
        [(
            1,
            "RATE_LIMITED".to_owned(),
            Decision::Retry { wait: secs(1) },
            Duration::ZERO
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_exponentially_up_to_the_cap() {
    let busy = || ToolError::new(ErrorCode::ServerBusy, "Busy");
    let flaky = Flaky::failing([busy(), busy(), busy(), busy(), busy()]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let start = Instant::now();
    let output = client
        .call("flaky.fetch", Value::Null)
        .await
        .expect("the sixth attempt succeeds");
    assert_eq!(output.attempts(), 6);
    assert_eq!(output.text(), Some("ok 6"));
    let waits: Vec<Duration> = log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(_, _, d, _)| d.wait())
        .collect();
    assert_eq!(
        waits,
        [ms(100), ms(200), ms(300), ms(300), ms(300)],
        "doubling, capped at 300 ms"
    );
    assert_eq!(start.elapsed(), ms(1200));
    let waited: Vec<Duration> = log.lock().unwrap().iter().map(|(_, _, _, w)| *w).collect();
    assert_eq!(waited, [ms(0), ms(100), ms(300), ms(600), ms(900)]);
}

#[tokio::test(start_paused = true)]
async fn attempts_are_exhausted_and_the_last_failure_is_returned() {
    let flaky = Flaky::failing((0..10).map(|n| ToolError::timeout(format!("slow #{n}"))));
    let (client, log, _running) =
        client_for(&flaky, Exposition::Grouped, exact_policy().max_attempts(3)).await;

    let start = Instant::now();
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(start.elapsed(), ms(300), "100 ms then 200 ms");
    assert_eq!(failure.attempts(), 3);
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::AttemptsExhausted)
    );
    assert_eq!(
        failure.tool_error().unwrap().message(),
        "slow #2",
        "the last attempt's result"
    );
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert_eq!(flaky.calls(), 3);
    let decisions: Vec<&'static str> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, d, _)| d.as_str())
        .collect();
    assert_eq!(
        decisions,
        ["retry", "retry", "abort"],
        "the hook sees the give-up too"
    );
}

#[tokio::test(start_paused = true)]
async fn a_delay_past_the_budget_is_surfaced_not_slept_through() {
    let flaky = Flaky::failing([ToolError::rate_limited("Daily quota used", 3600)]);
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let start = Instant::now();
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::DelayBudgetExhausted { wait: secs(3600) })
    );
    assert_eq!(failure.flags().retry_after_secs, Some(3600));
}

#[tokio::test(start_paused = true)]
async fn auth_failures_are_escalated_without_a_retry() {
    let flaky = Flaky::failing([ToolError::unauthorized("Session expired")]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert!(failure.is_escalation());
    assert_eq!(failure.decision(), &Decision::Escalate);
    assert_eq!(failure.attempts(), 1);
    assert_eq!(failure.flags().category, ErrorCategory::Auth);
    assert_eq!(flaky.calls(), 1);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn unknown_not_found_and_critical_failures_are_not_retried() {
    let cases = [
        (
            ToolError::internal("Ledger exploded"),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            // Says "retry" in prose and flags: unknown still means no retry.
            ToolError::new("LEDGER_ODD", "Transient glitch, retry now").retryable(true),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            ToolError::not_found("No such thing"),
            Decision::Abort(AbortReason::Category(ErrorCategory::NotFound)),
        ),
        (
            ToolError::timeout("Ledger down").critical(),
            Decision::Abort(AbortReason::Critical),
        ),
    ];
    for (error, decision) in cases {
        let flaky = Flaky::failing([error.clone()]);
        let (client, _log, _running) =
            client_for(&flaky, Exposition::Grouped, exact_policy()).await;
        let failure = failed(client.call("flaky.fetch", json!({})).await);
        assert_eq!(failure.decision(), &decision, "{error:?}");
        assert_eq!(flaky.calls(), 1, "{error:?} was retried");
        assert_eq!(failure.tool_error().unwrap().to_xml(), error.to_xml());
    }
}

#[tokio::test(start_paused = true)]
async fn flags_come_from_meta_not_only_from_the_code() {
    // A custom code the client cannot categorise by itself: the server declared it transient,
    // and `_meta["fusion/error"]` says so, so the client retries it.
    let flaky = Flaky::failing([ToolError::new("LEDGER_BUSY", "Ledger locked")
        .category(ErrorCategory::Transient)
        .explanation("lock held by nightly job")]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let output = client
        .call("flaky.fetch", json!({}))
        .await
        .expect("retried");
    assert_eq!(output.attempts(), 2);
    let (_, code, decision, _) = log.lock().unwrap()[0].clone();
    assert_eq!(
        (code.as_str(), decision),
        ("LEDGER_BUSY", Decision::Retry { wait: ms(100) })
    );

    // Without the retry, the failure carries the flags and applies them to the parsed error.
    let flaky = Flaky::failing([ToolError::new("LEDGER_BUSY", "Ledger locked")
        .category(ErrorCategory::Transient)
        .explanation("lock held by nightly job")]);
    let (client, _log, _running) =
        client_for(&flaky, Exposition::Grouped, RetryPolicy::never()).await;
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert_eq!(
        failure.flags().explanation.as_deref(),
        Some("lock held by nightly job")
    );
    let parsed = failure.tool_error().unwrap();
    assert_eq!(parsed.error_category(), ErrorCategory::Transient);
    assert_eq!(parsed.explanation_text(), Some("lock held by nightly job"));
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::AttemptsExhausted)
    );
}

// --- results ---------------------------------------------------------------------------------

#[tokio::test]
async fn validation_failures_carry_the_envelope_and_are_not_retried() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let failure = failed(
        client
            .call("flaky.lookup", json!({"id": "x", "extra": true}))
            .await,
    );
    let validation = failure.validation().expect("a validation envelope");
    assert_eq!(validation.action(), "flaky.lookup");
    let names: Vec<&str> = validation.problems().iter().map(|p| p.path()).collect();
    assert_eq!(names, ["extra", "id"]);
    assert_eq!(failure.flags(), &Flags::validation());
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::Category(ErrorCategory::Validation))
    );
    assert_eq!(failure.attempts(), 1);
    assert_eq!(failure.result().is_error, Some(true));
    let raw = failure.result().content[0].as_text().unwrap().text.clone();
    assert_eq!(validation.to_xml(), raw, "re-renders to the bytes received");
}

#[tokio::test]
async fn warnings_ride_next_to_the_payload_and_never_become_errors() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let output = client
        .call("flaky.lookup", json!({"id": "abc"}))
        .await
        .expect("a success");
    assert_eq!(output.text(), Some("found abc"));
    assert_eq!(output.warnings().len(), 1);
    let warning = &output.warnings()[0];
    assert_eq!(warning.code(), &ErrorCode::Deprecated);
    assert_eq!(warning.severity_level(), Severity::Warning);
    assert_eq!(warning.recovery(), Some("Call flaky.fetch next time."));

    // A warning alone is still a success: no payload, one warning, flags from `_meta`.
    let output = client
        .call("flaky.advise", json!({}))
        .await
        .expect("a success");
    assert_eq!(output.text(), None);
    assert_eq!(output.warnings()[0].code().as_str(), "PARTIAL");
    assert_eq!(
        output.warnings()[0].message(),
        "Only the first page was returned."
    );
    assert_eq!(output.result().is_error, Some(false));
}

#[tokio::test]
async fn a_batch_keeps_every_sibling_result() {
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let results = client
        .call_batch([
            ("flaky.lookup", json!({"id": "first"})),
            ("flaky.lookup", json!({"id": ""})),
            ("flaky.nope", json!({})),
            ("no_such_tool", json!({})),
            ("flaky.lookup", json!(["not", "an", "object"])),
            ("flaky.lookup", json!({"id": "last"})),
        ])
        .await;
    assert_eq!(results.len(), 6);
    assert_eq!(results[0].as_ref().unwrap().text(), Some("found first"));
    assert!(
        results[1]
            .as_ref()
            .unwrap_err()
            .tool_failure()
            .unwrap()
            .validation()
            .is_some()
    );
    let unknown = results[2].as_ref().unwrap_err().flags().unwrap();
    assert_eq!(unknown.code, ErrorCode::UnknownAction);
    assert!(
        matches!(results[3], Err(CallError::Protocol(_))),
        "{:?}",
        results[3]
    );
    assert!(matches!(results[4], Err(CallError::Arguments("an array"))));
    assert_eq!(results[5].as_ref().unwrap().text(), Some("found last"));
}

#[tokio::test]
async fn names_follow_the_servers_exposition() {
    // Flat: `flaky.fetch` is the `flaky_fetch` tool, learned from tools/list.
    let flaky = Flaky::default();
    let (client, _log, _running) = client_for(&flaky, Exposition::Flat, exact_policy()).await;
    let (tool, args) = client.route("flaky.fetch", Map::new());
    assert_eq!((tool.as_str(), args.len()), ("flaky_fetch", 0));
    assert_eq!(
        client.call("flaky.fetch", json!({})).await.unwrap().text(),
        Some("ok 1")
    );
    // A flat name is sent as is.
    assert_eq!(
        client.call("flaky_fetch", json!({})).await.unwrap().text(),
        Some("ok 2")
    );

    // Grouped: the `flaky` tool with the discriminator, which overrides one already sent.
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let (tool, args) = client.route(
        "flaky.fetch",
        json!({"action": "advise"}).as_object().unwrap().clone(),
    );
    assert_eq!(tool, "flaky");
    assert_eq!(Value::Object(args), json!({"action": "fetch"}));
    assert_eq!(
        client.call("flaky.fetch", json!({})).await.unwrap().text(),
        Some("ok 3")
    );

    // Configured instead of discovered, with another discriminator name.
    let fixed = client.clone().with_flat_names(true);
    assert_eq!(
        fixed.route("a.b.c", Map::new()).0,
        "a_b.c",
        "split at the first dot"
    );
    let renamed = client.with_flat_names(false).with_discriminator("op");
    let (_, args) = renamed.route("a.b", Map::new());
    assert_eq!(Value::Object(args), json!({"op": "b"}));
}

// --- results from elsewhere -------------------------------------------------------------------

#[test]
fn an_error_in_prose_is_a_failure_without_a_contract() {
    // Another server answers an error in prose, without flags.
    let result = CallToolResult::error(vec![ContentBlock::text("Something broke.")]);
    let failure = failed(read_result(result));
    assert!(failure.envelope().is_none());
    assert!(failure.parse_error().is_some());
    assert_eq!(failure.flags(), &Flags::uncontracted());
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::Category(ErrorCategory::Unknown))
    );
    assert_eq!(
        failure.to_string(),
        "INTERNAL_ERROR (unknown): Something broke."
    );

    // With flags in `_meta` but prose content, the flags still decide.
    let mut result = CallToolResult::error(vec![ContentBlock::text("Slow down.")]);
    let mut meta = Map::new();
    meta.insert(
        fusion::FLAGS_META_KEY.to_owned(),
        ToolError::rate_limited("x", 9).flags(),
    );
    result.meta = Some(MetaObject(meta));
    let failure = failed(read_result(result));
    assert_eq!(failure.flags().retry_after_secs, Some(9));
    assert_eq!(failure.decision(), &Decision::Retry { wait: secs(9) });

    // An older envelope, no flags: derived from the code.
    let result = CallToolResult::error(vec![ContentBlock::text(
        "<tool_error code=\"FORBIDDEN\"><message>No access</message><available_actions>a.b, c.d</available_actions></tool_error>",
    )]);
    let failure = failed(read_result(result));
    assert_eq!(failure.flags().category, ErrorCategory::Auth);
    assert!(failure.is_escalation());
    match failure.envelope() {
        Some(Envelope::ToolError(e)) => assert_eq!(e.available_actions(), ["a.b", "c.d"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_envelope_may_follow_a_prose_block() {
    // Another server writes a human summary first, the envelope second.
    let result = CallToolResult::error(vec![
        ContentBlock::image("aGk=", "image/png"),
        ContentBlock::text("The upstream is busy."),
        ContentBlock::text(ToolError::new(ErrorCode::ServerBusy, "Busy").to_xml()),
    ]);
    let failure = failed(read_result(result));
    assert!(failure.parse_error().is_none());
    assert_eq!(failure.tool_error().unwrap().message(), "Busy");
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert!(matches!(failure.decision(), Decision::Retry { .. }));

    // No text at all, or non-text content only: no contract, not retried.
    for content in [vec![], vec![ContentBlock::image("aGk=", "image/png")]] {
        let failure = failed(read_result(CallToolResult::error(content)));
        assert!(failure.envelope().is_none());
        assert!(failure.parse_error().is_some());
        assert_eq!(failure.flags(), &Flags::uncontracted());
        assert_eq!(failure.to_string(), "INTERNAL_ERROR (unknown): (no text)");
    }
}

#[test]
fn a_rate_limit_waits_the_envelopes_delay_when_meta_states_none_readable() {
    // `_meta` flags whose `retryAfterSeconds` is absent, a string or negative: the
    // `<retry_after>` of the envelope still decides the wait, never the 250 ms backoff.
    let envelope = ToolError::rate_limited("Slow down", 7).to_xml();
    for stated in [None, Some(json!("7")), Some(json!(-7)), Some(json!(0))] {
        let mut flags = json!({
            "isError": true, "errorCategory": "rate_limit", "isRetryable": true,
            "code": "RATE_LIMITED", "severity": "error",
        });
        if let Some(stated) = &stated {
            flags["retryAfterSeconds"] = stated.clone();
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(envelope.clone())]);
        let mut meta = Map::new();
        meta.insert(fusion::FLAGS_META_KEY.to_owned(), flags);
        result.meta = Some(MetaObject(meta));
        let failure = failed(read_result(result));
        assert_eq!(failure.flags().retry_after_secs, Some(7), "{stated:?}");
        assert_eq!(
            failure.decision(),
            &Decision::Retry { wait: secs(7) },
            "{stated:?}"
        );
    }
}

/// Another MCP server, written on rmcp directly: its tools carry dots in their names (MCP
/// allows them), and `ns` is a tool too. Every call answers the tool name and arguments it got.
struct Dotted;

impl rmcp::ServerHandler for Dotted {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::model::ErrorData> {
        let schema = json!({"type": "object"}).as_object().unwrap().clone();
        Ok(rmcp::model::ListToolsResult::with_all_items(
            ["github.search", "a.b.c", "ns"]
                .into_iter()
                .map(|name| rmcp::model::Tool::new(name, "Echoes.", schema.clone()))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::model::ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(
            CallToolResult::success(vec![ContentBlock::text(format!("{} {args}", request.name))])
                .into(),
        )
    }
}

#[tokio::test]
async fn a_listed_tool_name_with_dots_is_called_as_is() {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = Dotted.serve(server_end).await.expect("handshake");
        running.waiting().await
    });
    let running = ClientConfig::default()
        .serve(client_end)
        .await
        .expect("client connects");
    let client = Client::discover(running.peer().clone()).await.unwrap();
    for (name, sent) in [
        ("github.search", "github.search {}"),
        ("a.b.c", "a.b.c {}"),
        // Not listed: `tool.action` of a grouped tool, as before.
        ("ns.list", r#"ns {"action":"list"}"#),
    ] {
        let output = client.call(name, json!({})).await.unwrap();
        assert_eq!(output.text(), Some(sent), "{name}");
    }
    // Without discovery the client cannot know: split at the first dot.
    let fixed = client.with_flat_names(false);
    assert_eq!(fixed.route("github.search", Map::new()).0, "github");
}

#[test]
fn a_payload_of_xml_that_only_looks_like_an_envelope_is_the_payload() {
    let payload = "<tool_errors><count>0</count></tool_errors>";
    let warning = ToolError::deprecated("Use v2.").warning().to_xml();
    let result = CallToolResult::success(vec![
        ContentBlock::text(warning),
        ContentBlock::text(payload),
    ]);
    let output = read_result(result).unwrap();
    assert_eq!(output.text(), Some(payload));
    assert_eq!(output.warnings().len(), 1);
    assert_eq!(output.warnings()[0].code(), &ErrorCode::Deprecated);
}
