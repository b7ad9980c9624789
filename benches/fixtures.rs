//! The workloads the benchmarks measure, each next to its baseline: shared by the criterion
//! bench (`runtime.rs`) and the one-run figure printer (`perf.rs`), so both measure
//! exactly the same code.
//!
//! Three workloads: rendering the README's example envelope (an absolute figure, no baseline); dispatching
//! one action against a hand-written `serde_json` + `jsonschema` + `match` tool; and calls end to
//! end over rmcp's in-process transport against the same tool written with rmcp's own macros.

// Each consumer uses a different subset of the fixtures.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use fusion::server::Server;
use fusion::{RequestContext, ToolError, ToolExt, ToolResponse};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

// --- 1. envelope rendering --------------------------------------------------------------------

/// The README's example error, with a retry delay.
pub(crate) fn seed_error() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

// --- 2. in-process dispatch -------------------------------------------------------------------

/// The arguments of the dispatched action.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Deposit {
    /// The account to credit.
    account: String,
    /// The amount in cents.
    amount_cents: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Lookup {
    /// The account to read.
    account: String,
}

/// What the action answers with.
#[derive(Serialize)]
pub(crate) struct Receipt {
    account: String,
    credited_cents: u64,
}

/// The trivial handler both sides run.
fn deposit(args: Deposit) -> Receipt {
    Receipt {
        account: args.account,
        credited_cents: args.amount_cents,
    }
}

/// A two-action fusion tool: dispatch routes on the `action` discriminator.
pub(crate) struct Accounts;

/// Accounts of a pretend bank.
#[fusion::tool]
impl Accounts {
    /// Credits an account.
    #[action]
    fn deposit(&self, args: Deposit) -> fusion::Json<Receipt> {
        fusion::Json(deposit(args))
    }

    /// Reads an account.
    #[action(read_only)]
    fn lookup(&self, args: Lookup) -> String {
        args.account
    }
}

/// The arguments object a model sends for one deposit.
pub(crate) fn deposit_arguments() -> Map<String, Value> {
    match json!({"action": "deposit", "account": "acc_0001", "amount_cents": 1250}) {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

/// fusion: `ToolExt::call` of the generated tool, kept in an `Arc` as a server keeps it (each
/// call clones the `Arc`), polled once (the action is synchronous and no runtime is current,
/// so it runs inline and the future is ready at the first poll; no runtime involved on either
/// side).
pub(crate) fn fusion_dispatch(
    tool: &std::sync::Arc<Accounts>,
    arguments: Map<String, Value>,
) -> ToolResponse {
    let future = pin!(tool.call(arguments, RequestContext::new()));
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(response) => response,
        Poll::Pending => unreachable!("a synchronous action is ready at once"),
    }
}

/// The JSON Schema validator of [`Deposit`] for [`validating_dispatch`]: schemars' schema,
/// formats checked, as fusion builds its own.
pub(crate) fn deposit_validator() -> jsonschema::Validator {
    let schema = serde_json::to_value(schemars::schema_for!(Deposit)).expect("a schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

/// Baseline: what a hand-written tool that validates its inputs does with `serde_json`,
/// `jsonschema` and a `match`: take the discriminator out, check the rest against the schema it
/// advertises (`is_valid`), deserialize it, run the handler, serialize the result. Errors are
/// plain strings. Only the `deposit` arm, the one measured.
pub(crate) fn validating_dispatch(
    deposit_schema: &jsonschema::Validator,
    mut arguments: Map<String, Value>,
) -> Result<String, String> {
    let action = match arguments.remove("action") {
        Some(Value::String(action)) => action,
        _ => return Err("missing action".to_owned()),
    };
    match action.as_str() {
        "deposit" => {
            let arguments = Value::Object(arguments);
            if !deposit_schema.is_valid(&arguments) {
                return Err("invalid arguments".to_owned());
            }
            let args: Deposit = serde_json::from_value(arguments).map_err(|e| e.to_string())?;
            serde_json::to_string(&deposit(args)).map_err(|e| e.to_string())
        }
        other => Err(format!("unknown action {other}")),
    }
}

// --- 3. end to end over rmcp's in-process duplex transport -------------------------------------

/// The arguments of the end-to-end tool on both sides.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// Adds two numbers. An `async fn`: it never blocks, so it runs on the worker that polls the
/// call, as rmcp's `add` below does.
#[fusion::tool]
#[action(read_only, idempotent)]
pub(crate) async fn add(args: AddArgs) -> f64 {
    args.a + args.b
}

/// The same tool as a plain `fn`: fusion runs it inline, on the task that polls the call, as
/// it runs the `async fn`.
pub(crate) mod plain {
    use super::AddArgs;

    /// Adds two numbers.
    #[fusion::tool]
    #[action(read_only, idempotent)]
    pub(crate) fn add(args: AddArgs) -> f64 {
        args.a + args.b
    }
}

/// The same tool declared blocking: fusion runs it on Tokio's blocking pool (as it runs a
/// plain `fn` under a timeout), which costs a hand-off to another thread and back on every
/// call.
pub(crate) mod blocking {
    use super::AddArgs;

    /// Adds two numbers.
    #[fusion::tool]
    #[action(read_only, idempotent, blocking)]
    pub(crate) fn add(args: AddArgs) -> f64 {
        args.a + args.b
    }
}

/// The same tool with its body in `tokio::task::block_in_place`, the other way to keep a
/// blocking body off the async workers: the worker hands its other tasks to a new thread
/// (from the blocking pool) and takes them back when the body returns. Not what fusion does
/// (a timeout cannot answer while the body holds the polling thread); measured next to it.
pub(crate) mod in_place {
    use super::AddArgs;

    /// Adds two numbers.
    #[fusion::tool]
    #[action(read_only, idempotent)]
    pub(crate) async fn add(args: AddArgs) -> f64 {
        tokio::task::block_in_place(|| args.a + args.b)
    }
}

/// The same tool written with rmcp's own macros: same arguments, same work, the sum as JSON
/// text like fusion's.
#[derive(Clone)]
pub(crate) struct RmcpAdd {
    tool_router: ToolRouter<RmcpAdd>,
}

#[tool_router]
impl RmcpAdd {
    /// Adds two numbers.
    #[tool(description = "Adds two numbers.", annotations(read_only_hint = true))]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        serde_json::to_string(&(args.a + args.b)).unwrap_or_default()
    }
}

#[tool_handler]
impl ServerHandler for RmcpAdd {}

impl RmcpAdd {
    /// The server, its router built (what each connection or HTTP session gets).
    pub(crate) fn new() -> RmcpAdd {
        RmcpAdd {
            tool_router: RmcpAdd::tool_router(),
        }
    }
}

/// An rmcp client connected to a server over `tokio::io::duplex`.
pub(crate) type Client = RunningService<RoleClient, ()>;

/// The `tools/call` request both benchmarks send.
pub(crate) fn add_call() -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"a": 1.5, "b": 2.25}) else {
        unreachable!("an object literal")
    };
    CallToolRequestParams::new("add").with_arguments(arguments)
}

/// Serves the fusion tool on one end of a duplex stream and connects rmcp's client to the other.
///
/// `FUSION_BENCH_MAX_RESULT=16000` serves it with that result limit (bytes), which every
/// result of `add` is under: what a limit costs a call it does not cut.
pub(crate) async fn fusion_client() -> Client {
    let limit = std::env::var("FUSION_BENCH_MAX_RESULT").ok();
    let limit = limit.and_then(|bytes| bytes.parse().ok());
    Server::new("bench-fusion", "0.0.0")
        .tool(Add)
        .max_result(limit.map(fusion::ResultLimit::bytes))
        .serve_in_process(())
        .await
        .expect("the client connects")
}

/// Serves the rmcp tool the same way (rmcp's own async-read/write transport).
pub(crate) async fn rmcp_client() -> Client {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let server = RmcpAdd::new();
        if let Ok(running) = server.serve((read, write)).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end).await.expect("the client connects")
}

/// One call; panics if the answer is an error (both sides must do the same work).
pub(crate) async fn call_add(client: &Client) {
    let result = client.call_tool(add_call()).await.expect("a tool result");
    assert_ne!(result.is_error, Some(true), "{result:?}");
}
