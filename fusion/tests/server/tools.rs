//! The tools the server tests serve, and a harness connecting a real rmcp client to a
//! `fusion::server::Server` over an in-process duplex stream.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use fusion::server::Server;
use fusion::{
    ActionDefinition, Annotations, PreparedCall, RequestContext, Tool, ToolCall, ToolDefinition,
    ToolError, ToolErrors, ToolResponse,
};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::Notify;

pub(crate) use crate::within::within;

// --- a multi-action tool with an error contract ------------------------------------------------

pub(crate) struct Billing;

#[derive(Deserialize, JsonSchema, validator::Validate)]
pub(crate) struct GetInvoice {
    /// The invoice ID, like `inv_2026_0001`.
    #[validate(length(min = 5))]
    pub(crate) id: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Refund {
    /// The invoice to refund.
    pub(crate) id: String,
    /// Deprecated: refunds are always whole.
    pub(crate) partial: Option<bool>,
}

#[derive(Serialize)]
pub(crate) struct Invoice {
    pub(crate) id: String,
    pub(crate) amount_cents: u64,
}

#[derive(Debug, ToolErrors)]
#[tool_error(tool = Billing)]
pub(crate) enum BillingError {
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices first, then retry with a real ID",
        actions(list_invoices)
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },
    #[tool_error(RATE_LIMITED, recovery = "Wait {secs} seconds, then retry")]
    Throttled {
        #[retry_after]
        secs: u64,
    },
}

impl std::fmt::Display for BillingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BillingError::InvoiceNotFound { .. } => f.write_str("No invoice with that ID"),
            BillingError::Throttled { .. } => f.write_str("Too many calls"),
        }
    }
}

/// Invoices of the billing system.
#[fusion::tool]
impl Billing {
    /// Lists invoice IDs, newest first.
    #[action(read_only, idempotent)]
    pub(crate) fn list_invoices(&self) -> Vec<String> {
        vec!["inv_2026_0001".into()]
    }

    /// Fetches one invoice by ID.
    #[action(read_only, idempotent, open_world = false)]
    pub(crate) async fn get_invoice(&self, args: GetInvoice) -> Result<Invoice, BillingError> {
        match args.id.as_str() {
            "inv_2026_0001" => Ok(Invoice {
                id: args.id,
                amount_cents: 1200,
            }),
            "inv_throttle" => Err(BillingError::Throttled { secs: 30 }),
            _ => Err(BillingError::InvoiceNotFound { id: args.id }),
        }
    }

    /// Refunds an invoice.
    #[action(destructive)]
    pub(crate) fn refund(&self, args: Refund) -> ToolResponse {
        let response = ToolResponse::text(format!("refunded {}", args.id));
        match args.partial {
            Some(_) => response.with_warning(
                ToolError::deprecated("Parameter 'partial' is deprecated; refunds are whole.")
                    .suggest("Drop 'partial' from future calls."),
            ),
            None => response,
        }
    }
}

// --- a single-function tool -------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AddArgs {
    pub(crate) a: f64,
    pub(crate) b: f64,
}

/// Adds two numbers.
#[fusion::tool]
#[action(read_only, idempotent)]
pub(crate) fn add(args: AddArgs) -> f64 {
    args.a + args.b
}

// --- a tool that misbehaves on purpose --------------------------------------------------------

/// Flags a test watches from outside the server.
#[derive(Clone, Default)]
pub(crate) struct Probe {
    /// Notified when `wait` has started.
    pub(crate) started: Arc<Notify>,
    /// Set when the future of `wait` is dropped.
    pub(crate) dropped: Arc<AtomicBool>,
}

/// Keeps the intentional panics of `explode` and `Named` (hundreds of them in the concurrency
/// test) out of the test output; every other panic, assertion failures included, still prints.
pub(crate) fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("");
            if !(message.starts_with("boom:") || message.starts_with("hand-written tool")) {
                default(info);
            }
        }));
    });
}

/// Sets its flag when dropped: proves a future was dropped, not merely told to stop.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone, Default)]
pub(crate) struct Lab {
    pub(crate) probe: Probe,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Echo {
    /// Any JSON value.
    pub(crate) value: Value,
}

/// Test helpers.
#[fusion::tool]
impl Lab {
    /// Panics.
    #[action]
    pub(crate) fn explode(&self) -> String {
        panic!("boom: postgres://admin:hunter2@db")
    }

    /// Waits forever, ignoring cancellation: only dropping its future ends it.
    #[action]
    pub(crate) async fn wait(&self) -> String {
        let _guard = DropGuard(self.probe.dropped.clone());
        self.probe.started.notify_one();
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Reports progress three times, then answers.
    #[action]
    pub(crate) async fn progress(&self, ctx: RequestContext) -> String {
        for step in 1..=3 {
            ctx.report_progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
            tokio::task::yield_now().await;
        }
        "done".to_owned()
    }

    /// The calling client's identity and whether a progress token came in `_meta`.
    #[action]
    pub(crate) fn whoami(&self, ctx: &RequestContext) -> String {
        format!(
            "{} progressToken={}",
            ctx.client().unwrap_or("anonymous"),
            ctx.meta().contains_key("progressToken")
        )
    }

    /// Echoes the size of the value it received.
    #[action]
    pub(crate) fn echo(&self, args: Echo) -> String {
        format!("{} bytes", args.value.to_string().len())
    }
}

// --- a hand-written tool ------------------------------------------------------------------------

/// A `Tool` implemented by hand, with any name and actions. Its `call` panics before returning
/// a future: the server must contain that too.
pub(crate) struct Named {
    definition: ToolDefinition,
}

impl Named {
    /// A multi-action tool.
    pub(crate) fn new(tool: &str, actions: &[&str]) -> Named {
        Named {
            definition: ToolDefinition {
                name: tool.to_owned(),
                description: format!("The {tool} tool."),
                title: None,
                discriminator: Some("action".to_owned()),
                actions: actions.iter().map(|a| action(a)).collect(),
            },
        }
    }

    /// A single-function tool whose arguments have `schema`.
    pub(crate) fn with_schema(tool: &str, schema: Value) -> Named {
        let mut named = Named::single(tool);
        named.definition.actions[0].input_schema = match schema {
            Value::Object(schema) => schema,
            other => panic!("a schema object, not {other}"),
        };
        named
    }

    /// A single-function tool.
    pub(crate) fn single(tool: &str) -> Named {
        Named {
            definition: ToolDefinition {
                name: tool.to_owned(),
                description: format!("The {tool} tool."),
                title: None,
                discriminator: None,
                actions: vec![action(tool)],
            },
        }
    }
}

fn action(name: &str) -> ActionDefinition {
    ActionDefinition {
        name: name.to_owned(),
        description: format!("Does {name}."),
        title: None,
        input_schema: serde_json::json!({"type": "object"})
            .as_object()
            .unwrap()
            .clone(),
        annotations: Annotations::default(),
        errors: Vec::new(),
        secret_fields: Vec::new(),
        output_schema: None,
        scopes: Vec::new(),
        task: false,
        task_required: false,
        task_deferred: false,
        strict_json: false,
        result: Default::default(),
    }
}

impl Tool for Named {
    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn prepare(self: Arc<Self>, _call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
        panic!(
            "hand-written tool {} panicked in prepare",
            self.definition.name
        )
    }
}

/// The message a server builder panicked with (a refused registration or exposition), or
/// `None` when `build` returned a server.
pub(crate) fn builder_panic(build: impl FnOnce() -> Server) -> Option<String> {
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(build));
    built.err().map(|payload| {
        *payload
            .downcast::<String>()
            .expect("a formatted panic message")
    })
}

/// The server most tests talk to.
pub(crate) fn server(lab: &Lab) -> Server {
    Server::new("billing-server", "1.2.3")
        .tool(Billing)
        .tool(Add)
        .tool(lab.clone())
}

// --- the client side ----------------------------------------------------------------------------

pub(crate) const CLIENT_NAME: &str = "fusion-test-client";

/// An rmcp client handler that records the progress notifications it receives.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    pub(crate) progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new(CLIENT_NAME, "0.0.1");
        config
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

pub(crate) type Client = RunningService<RoleClient, Recorder>;

/// Serves `server` on one end of a duplex stream and connects an rmcp client to the other.
pub(crate) async fn connect(server: Server) -> Client {
    connect_with(server, Recorder::default()).await
}

pub(crate) async fn connect_with(server: Server, recorder: Recorder) -> Client {
    within(server.serve_in_process(recorder))
        .await
        .expect("client connects")
}

pub(crate) fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let request = CallToolRequestParams::new(name.to_owned());
    match arguments {
        Value::Object(map) => request.with_arguments(map),
        Value::Null => request,
        other => panic!("arguments must be an object, got {other}"),
    }
}

pub(crate) async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    within(client.call_tool(params(name, arguments)))
        .await
        .expect("a tool result")
}

/// The text blocks of a result.
pub(crate) fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|block| block.as_text().expect("a text block").text.as_str())
        .collect()
}

/// `_meta` of a result, as a JSON object.
pub(crate) fn meta(result: &CallToolResult) -> Map<String, Value> {
    result.meta.clone().map(|m| m.0).unwrap_or_default()
}
