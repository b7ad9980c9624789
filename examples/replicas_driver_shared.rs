//! The replicas driver's checks of what replicas share besides rate limits: tasks (in Redis,
//! `RedisTaskStore`) and the key sealing MRTR request states. Each client here reaches one
//! replica directly (`--replicas`), so that a check can start something on one replica and
//! finish it on another; the tokens still name the balancer's URL, every replica's audience.

use std::time::Duration;

use anyhow::{Context, bail, ensure};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, CreateTaskResult, DetailedTask, GetTaskParams, Implementation,
    InputRequiredResult, InputResponses, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};

use super::{Args, auth};

type Replica = RunningService<RoleClient, ClientConfig>;

/// A 2026-07-28 client of the replica (or the balancer) at `endpoint`, calling as `subject` with the `charge`
/// and `refund` scopes, declaring form elicitation and, with `tasks`, the tasks extension.
async fn connect(
    args: &Args,
    endpoint: &str,
    subject: &str,
    tasks: bool,
) -> anyhow::Result<Replica> {
    let scope = format!("{} {}", auth::CHARGE_SCOPE, auth::REFUND_SCOPE);
    let token = auth::dev_token(&args.url, subject, &scope)?;
    let config = StreamableHttpClientTransportConfig::with_uri(endpoint).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    let capabilities: ClientCapabilities = serde_json::from_value(capabilities)?;
    let info = ClientConfig::new(
        capabilities,
        Implementation::new("replicas-driver", "0.0.1"),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    Ok(info.serve_with_lifecycle(transport, lifecycle).await?)
}

/// The replicas' own URLs, at least `count` of them.
fn replicas(args: &Args, count: usize) -> anyhow::Result<&[String]> {
    ensure!(
        args.replicas.len() >= count,
        "this check needs --replicas with {count} URLs, got {}",
        args.replicas.len()
    );
    Ok(&args.replicas)
}

fn params(arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        unreachable!("the driver's arguments are objects")
    };
    CallToolRequestParams::new("billing").with_arguments(arguments)
}

async fn start(replica: &Replica, arguments: Value) -> anyhow::Result<CreateTaskResult> {
    match replica.call_tool_once(params(arguments)).await? {
        CallToolResponse::Task(created) => Ok(created),
        other => bail!("expected a task, got {other:?}"),
    }
}

async fn get(replica: &Replica, id: &str) -> Result<DetailedTask, ServiceError> {
    let task = replica.peer().get_task(GetTaskParams::new(id.to_owned()));
    Ok(task.await?.task)
}

/// Polls `replica` every `pollIntervalMs` until the task settles, within 20 seconds.
async fn settled(replica: &Replica, created: &CreateTaskResult) -> anyhow::Result<DetailedTask> {
    let interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(1000));
    let poll = async {
        loop {
            let task = get(replica, &created.task.task_id).await?;
            if task.status().is_terminal() {
                return anyhow::Ok(task);
            }
            tokio::time::sleep(interval).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), poll)
        .await
        .context("the task did not settle within 20 s")?
}

fn completed(task: DetailedTask) -> anyhow::Result<Map<String, Value>> {
    match task.payload {
        TaskPayload::Completed { result } => Ok(result),
        other => bail!("expected a completed task, got {other:?}"),
    }
}

/// A task started on one replica is polled to completion on a second and fetched on the
/// third, with the result of the same call made directly on the first; a task started
/// through the balancer is fetched on every replica; a slow export started on one replica is
/// cancelled on another and stops; another subject sees none of them.
pub(crate) async fn tasks(args: &Args) -> anyhow::Result<String> {
    let urls = replicas(args, 3)?;
    let subject = "driver-tasks";
    let mut one = Vec::new();
    for url in urls {
        one.push(connect(args, url, subject, true).await?);
    }
    let export = json!({"action": "export_invoices", "format": "csv", "delay_ms": 1000});
    let created = start(&one[0], export.clone()).await?;
    let result = completed(settled(&one[1], &created).await?)?;
    for (n, replica) in one.iter().enumerate() {
        let fetched = completed(get(replica, &created.task.task_id).await?)?;
        ensure!(
            fetched == result,
            "replica {} fetched another result: {fetched:?}",
            n + 1
        );
    }
    // The same call, directly, on the replica that ran it (each keeps its own invoices).
    let plain = connect(args, &urls[0], subject, false).await?;
    let CallToolResponse::Complete(direct) = plain.call_tool_once(params(export.clone())).await?
    else {
        bail!("a client without the tasks extension was not answered directly");
    };
    let stored: CallToolResult = serde_json::from_value(Value::Object(result))?;
    ensure!(
        stored.is_error == Some(false) && stored == direct,
        "the task's result differs from the direct call's: {stored:?} / {direct:?}"
    );

    // Through the balancer, whichever replica it lands on: every replica has it.
    let through = connect(args, &args.url, subject, true).await?;
    let created = start(&through, export).await?;
    settled(&one[2], &created).await?;
    for (n, replica) in one.iter().enumerate() {
        let status = get(replica, &created.task.task_id).await?.status();
        ensure!(
            status == TaskStatus::Completed,
            "replica {} sees {status:?}",
            n + 1
        );
    }
    through.cancel().await?;

    // A slow export started on replica 1, cancelled on replica 2, seen cancelled on replica 3.
    let slow = json!({"action": "export_invoices", "format": "json", "delay_ms": 60_000});
    let created = start(&one[0], slow).await?;
    let cancel = CancelTaskParams::new(created.task.task_id.clone());
    one[1].peer().cancel_task(cancel).await?;
    let status = settled(&one[2], &created).await?.status();
    ensure!(
        status == TaskStatus::Cancelled,
        "the cancelled export ended {status:?}"
    );

    // Another subject, on another replica: the same -32602 as for a task that does not exist.
    let other = connect(args, &urls[1], "driver-tasks-other", true).await?;
    let theirs = get(&other, &created.task.task_id).await.err();
    let missing = get(&other, "0123456789abcdef0123456789abcdef").await.err();
    let code = |error: &Option<ServiceError>| match error {
        Some(ServiceError::McpError(error)) => Some(error.code.0),
        _ => None,
    };
    ensure!(
        code(&theirs) == Some(-32602) && code(&missing) == Some(-32602),
        "another subject's task answered {theirs:?}, an unknown one {missing:?}"
    );
    for replica in one.into_iter().chain([plain, other]) {
        replica.cancel().await?;
    }
    Ok(
        "an export started on replica 1 was polled to completion on replica 2 and fetched on all \
         three, the direct call's result; one started through the balancer is on every replica; \
         a slow one started on replica 1 was cancelled on replica 2; another subject gets -32602"
            .to_owned(),
    )
}

/// A refund asks its user to confirm (MRTR `input_required`, sealed `requestState`): asked on
/// replica 1, the answer sent to replica 2 opens the state (one shared key) and the refund is
/// done there; the same state sent again to replica 2 or to replica 3 (the states taken are
/// recorded in Redis), or with other arguments, is refused.
pub(crate) async fn mrtr(args: &Args) -> anyhow::Result<String> {
    let urls = replicas(args, 3)?;
    let subject = "driver-mrtr";
    let asking = connect(args, &urls[0], subject, false).await?;
    let answering = connect(args, &urls[1], subject, false).await?;
    let third = connect(args, &urls[2], subject, false).await?;
    let refund = json!({"action": "refund", "invoice_id": "inv_0002", "amount_cents": 100});
    let question = match asking.call_tool_once(params(refund.clone())).await? {
        CallToolResponse::InputRequired(question) => question,
        other => bail!("the refund did not ask its user: {other:?}"),
    };
    let (state, answer) = answer(&question)?;

    let retry = |arguments: Value| {
        params(arguments)
            .with_input_responses(answer.clone())
            .with_request_state(state.clone())
    };
    let done = answering.call_tool_once(retry(refund.clone())).await?;
    let CallToolResponse::Complete(done) = done else {
        bail!("the answer on replica 2 was not the refund's result: {done:?}");
    };
    ensure!(
        done.is_error == Some(false),
        "the answer on replica 2 was refused: {}",
        text(&done)
    );
    let invoice: Value = serde_json::from_str(&text(&done))?;
    ensure!(
        invoice["status"] == "open",
        "the refunded invoice is {invoice}"
    );

    let mut refused = Vec::new();
    let other = json!({"action": "refund", "invoice_id": "inv_0002", "amount_cents": 200});
    let cases = [
        ("replayed on replica 2", &answering, refund.clone()),
        ("replayed on replica 3", &third, refund),
        ("sent with other arguments", &answering, other),
    ];
    for (case, replica, arguments) in cases {
        // A refused state is a JSON-RPC error: -32602, its `data.code` REQUEST_STATE_INVALID.
        let refusal = match replica.call_tool_once(retry(arguments)).await {
            Err(ServiceError::McpError(error)) => error,
            other => bail!("the {case} state was not refused: {other:?}"),
        };
        let code = refusal.data.as_ref().and_then(|data| data["code"].as_str());
        ensure!(
            refusal.code.0 == -32602 && code == Some("REQUEST_STATE_INVALID"),
            "the {case} state answered {refusal:?}"
        );
        refused.push(case);
    }
    asking.cancel().await?;
    answering.cancel().await?;
    third.cancel().await?;
    Ok(format!(
        "a refund asked on replica 1 was confirmed on replica 2 (one request-state key); \
         the state {}: REQUEST_STATE_INVALID",
        refused.join(" / ")
    ))
}

/// The request state of `question`, and the user's yes to its one elicitation.
fn answer(question: &InputRequiredResult) -> anyhow::Result<(String, InputResponses)> {
    let state = question.request_state.clone().context("no requestState")?;
    let requests = question
        .input_requests
        .as_ref()
        .context("no inputRequests")?;
    let [key] = requests.keys().collect::<Vec<_>>()[..] else {
        bail!("expected one question, got {requests:?}");
    };
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    Ok((state, InputResponses::from([(key.clone(), yes)])))
}

fn text(result: &CallToolResult) -> String {
    (result.content.first())
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}
