//! The workloads the benchmarks measure, each next to its baseline: shared by the criterion
//! benches (`benches/runtime.rs`) and the one-run figure printer (`perf.rs`), so both measure
//! exactly the same code.
//!
//! Each figure is a pair: fusion's work and a baseline doing the same job without fusion
//! (or the floor of the job: copying the output bytes). Adding a figure means one `Pair` here
//! and one line in each consumer.

// Each consumer uses a different subset of the fixtures.
#![allow(dead_code)]

use std::future::Future;
use std::hint::black_box;
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

/// The seed's example error (SPEC section 1).
pub(crate) fn seed_error() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

/// The floor of rendering: one allocation of the output's size and one copy of its bytes.
pub(crate) fn floor(bytes: &str) -> String {
    let mut s = String::with_capacity(bytes.len());
    s.push_str(bytes);
    s
}

// --- 2. validation formatting -----------------------------------------------------------------

/// A sign-up form with a constraint on every field.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Signup {
    #[schemars(length(min = 3, max = 20))]
    username: String,
    #[schemars(email)]
    email: String,
    #[schemars(range(min = 13, max = 130))]
    age: u32,
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    country: String,
    plan: Plan,
    #[schemars(length(min = 1, max = 5))]
    tags: Vec<String>,
    #[schemars(range(min = 0.0, max = 1.0))]
    discount: f64,
    newsletter: bool,
    address: Address,
    #[schemars(range(min = 1, max = 10))]
    seats: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Plan {
    Free,
    Pro,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Address {
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
}

/// Arguments for [`Signup`] with exactly one problem in each of its ten fields.
pub(crate) fn ten_problem_arguments() -> Value {
    json!({
        "username": "x",
        "email": "not-an-email",
        "age": 7,
        "country": "usa",
        "plan": "gold",
        "tags": [],
        "discount": 2.5,
        "newsletter": "yes",
        "address": {"zip": "1"},
        "seats": 0,
    })
}

/// The JSON Schema of [`Signup`], as schemars derives it.
pub(crate) fn signup_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Signup)).expect("a schema is JSON")
}

/// fusion's validator for the sign-up action, and the `jsonschema` validator the baseline uses
/// (formats checked, like fusion's).
pub(crate) struct Validation {
    pub(crate) fusion: fusion::validation::ArgumentValidator,
    pub(crate) baseline: jsonschema::Validator,
    pub(crate) arguments: Value,
}

impl Validation {
    pub(crate) fn new() -> Validation {
        let schema = signup_schema();
        let validation = Validation {
            fusion: fusion::validation::ArgumentValidator::new("accounts.signup", &schema)
                .expect("the schema compiles"),
            baseline: jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("the schema compiles"),
            arguments: ten_problem_arguments(),
        };
        let problems = validation.fusion.check(&validation.arguments).len();
        assert_eq!(problems, 10, "{}", validation.render());
        validation
    }

    /// fusion: every problem found, sorted, rendered as the `<validation_error>` envelope.
    pub(crate) fn render(&self) -> String {
        self.fusion.check(black_box(&self.arguments)).to_xml()
    }

    /// Baseline: `jsonschema`'s own messages, one line each (no paths sorted, no "You sent",
    /// no recovery: what a server without fusion would send back).
    pub(crate) fn baseline(&self) -> String {
        let mut out = String::new();
        for error in self.baseline.iter_errors(black_box(&self.arguments)) {
            out.push_str(&error.instance_path().to_string());
            out.push_str(": ");
            out.push_str(&error.to_string());
            out.push('\n');
        }
        out
    }
}

// --- 3. in-process dispatch -------------------------------------------------------------------

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

/// fusion: `ToolExt::call` of the generated tool, polled once (the action is synchronous, so the
/// future is ready at the first poll; no runtime involved on either side).
pub(crate) fn fusion_dispatch(tool: &Accounts, arguments: Map<String, Value>) -> ToolResponse {
    let future = pin!(tool.call(arguments, RequestContext::new()));
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(response) => response,
        Poll::Pending => unreachable!("a synchronous action is ready at once"),
    }
}

/// Baseline: what a hand-written tool does with `serde_json` and a `match`: take the
/// discriminator out, deserialize the rest, run the handler, serialize the result. Errors are
/// plain strings.
pub(crate) fn handwritten_dispatch(mut arguments: Map<String, Value>) -> Result<String, String> {
    let action = match arguments.remove("action") {
        Some(Value::String(action)) => action,
        _ => return Err("missing action".to_owned()),
    };
    match action.as_str() {
        "deposit" => {
            let args: Deposit =
                serde_json::from_value(Value::Object(arguments)).map_err(|e| e.to_string())?;
            serde_json::to_string(&deposit(args)).map_err(|e| e.to_string())
        }
        "lookup" => {
            let args: Lookup =
                serde_json::from_value(Value::Object(arguments)).map_err(|e| e.to_string())?;
            Ok(args.account)
        }
        other => Err(format!("unknown action {other}")),
    }
}

/// The JSON Schema validator of [`Deposit`] (schemars' schema, formats checked) for
/// [`validating_dispatch`].
pub(crate) fn deposit_validator() -> jsonschema::Validator {
    let schema = serde_json::to_value(schemars::schema_for!(Deposit)).expect("a schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema compiles")
}

/// A second baseline: [`handwritten_dispatch`] plus the one check fusion makes that serde does
/// not, the arguments against the action's JSON Schema (`jsonschema`'s `is_valid`), as a
/// hand-written server validating its inputs against the schema it advertises does. Only the
/// `deposit` arm, the one measured.
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

// --- 5. end to end over rmcp's in-process duplex transport -------------------------------------

/// The arguments of the end-to-end tool on both sides.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// Adds two numbers.
#[fusion::tool]
#[action(read_only, idempotent)]
pub(crate) fn add(args: AddArgs) -> f64 {
    args.a + args.b
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
pub(crate) async fn fusion_client() -> Client {
    Server::new("bench-fusion", "0.0.0")
        .tool(Add)
        .serve_in_process(())
        .await
        .expect("the client connects")
}

/// Serves the rmcp tool the same way (rmcp's own async-read/write transport).
pub(crate) async fn rmcp_client() -> Client {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let server = RmcpAdd {
            tool_router: RmcpAdd::tool_router(),
        };
        if let Ok(running) = server.serve((read, write)).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end).await.expect("the client connects")
}

/// One call; panics if the answer is not the sum (both sides must do the same work).
pub(crate) async fn call_add(client: &Client) {
    let result = client.call_tool(add_call()).await.expect("a tool result");
    assert_ne!(result.is_error, Some(true), "{result:?}");
}
