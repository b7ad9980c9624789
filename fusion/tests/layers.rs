//! Tower layers of your own around action calls (`GuardSpec::layer`, `fusion::guard::from_fn`):
//! where they run (after validation, inside the timeout), in which order, how their errors are
//! answered (the handlers' rules), that stock tower layers compose, and that a panicking layer
//! is contained. Through `fusion::testing::Tester`, which applies the guards a server applies,
//! and once through a real server and rmcp client.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::guard::{ActionCall, FromFnLayer, GuardSpec, Next, from_fn};
use fusion::server::Server;
use fusion::testing::Tester;
use fusion::{BoxFuture, ErrorCode, ToolError, ToolErrors, ToolResponse};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// What ran, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// The arguments of `book`.
#[derive(Deserialize, JsonSchema)]
pub struct Book {
    /// The number of seats, 1 to 9.
    pub seats: u8,
}

/// A tool logging what its handlers did.
pub struct Flights {
    log: Log,
}

/// Flights.
#[fusion::tool]
impl Flights {
    /// Books seats.
    #[action]
    pub async fn book(&self, args: Book) -> String {
        self.log.lock().unwrap().push("handler".into());
        format!("booked {}", args.seats)
    }

    /// Takes a long time.
    #[action]
    pub async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(60)).await;
        self.log.lock().unwrap().push("slow finished".into());
        "done".into()
    }
}

/// A booking policy's refusal.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Flights)]
pub enum PolicyError {
    /// The client may not book.
    #[tool_error(FORBIDDEN, recovery = "Ask an administrator for the booking role.")]
    NotAllowed,
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Booking is not allowed for this client")
    }
}

/// What a `from_fn` layer of these tests returns.
type Step = BoxFuture<'static, Result<ToolResponse, ToolError>>;

/// Logs around the rest of the stack, under a name.
fn around(
    name: &'static str,
    log: &Log,
) -> FromFnLayer<impl Fn(ActionCall, Next) -> Step + Clone + Send + Sync + 'static> {
    let log = log.clone();
    from_fn(move |call: ActionCall, next: Next| -> Step {
        let log = log.clone();
        Box::pin(async move {
            let label = format!("{name} before {}.{}", call.tool(), call.action());
            log.lock().unwrap().push(label);
            let response = next.run(call).await;
            log.lock().unwrap().push(format!("{name} after"));
            Ok(response)
        })
    })
}

/// Refuses with whatever error `refuse` makes, never running the rest.
fn refuse(
    refuse: fn() -> Result<ToolResponse, ToolError>,
) -> FromFnLayer<impl Fn(ActionCall, Next) -> Step + Clone + Send + Sync + 'static> {
    from_fn(move |_call: ActionCall, _next: Next| -> Step { Box::pin(async move { refuse() }) })
}

/// Adds a warning next to the handler's response: tower's own `MapResponseLayer`.
fn warn() -> tower::util::MapResponseLayer<fn(ToolResponse) -> ToolResponse> {
    tower::util::MapResponseLayer::new(|response: ToolResponse| {
        response.with_warning(
            ToolError::new(
                ErrorCode::Custom("QUOTA_LOW".into()),
                "2 bookings left today",
            )
            .warning(),
        )
    })
}

/// Panics when called.
fn panics() -> FromFnLayer<impl Fn(ActionCall, Next) -> Step + Clone + Send + Sync + 'static> {
    from_fn(|_call: ActionCall, _next: Next| -> Step {
        Box::pin(async move { panic!("layer bug: secret=hunter2") })
    })
}

/// A hand-written tower layer and service: puts a tenant into the request's `_meta` before the
/// handler sees it.
#[derive(Clone)]
struct Tenant;

impl<S> tower::Layer<S> for Tenant {
    type Service = WithTenant<S>;
    fn layer(&self, inner: S) -> WithTenant<S> {
        WithTenant(inner)
    }
}

#[derive(Clone)]
struct WithTenant<S>(S);

impl<S: tower::Service<ActionCall>> tower::Service<ActionCall> for WithTenant<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut call: ActionCall) -> S::Future {
        let meta = std::mem::take(call.context_mut())
            .with_meta(json!({"tenant": "acme"}).as_object().unwrap().clone());
        *call.context_mut() = meta;
        self.0.call(call)
    }
}

fn flights() -> (Flights, Log) {
    let log = Log::default();
    (Flights { log: log.clone() }, log)
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

#[tokio::test]
async fn the_tools_layers_wrap_the_actions_and_both_wrap_the_handler() {
    let (tool, log) = flights();
    let tester = Tester::new()
        .tool(tool)
        .guard("flights", GuardSpec::new().layer(around("tool", &log)))
        .guard(
            "flights.book",
            GuardSpec::new()
                .layer(around("first", &log))
                .layer(around("second", &log)),
        );
    tester
        .call("flights.book", json!({"seats": 2}))
        .await
        .assert_text("booked 2");
    assert_eq!(
        entries(&log),
        [
            "tool before flights.book",
            "first before flights.book",
            "second before flights.book",
            "handler",
            "second after",
            "first after",
            "tool after",
        ]
    );
}

#[tokio::test]
async fn a_malformed_call_never_reaches_a_layer() {
    let (tool, log) = flights();
    let tester = Tester::new()
        .tool(tool)
        .guard("flights", GuardSpec::new().layer(around("tool", &log)));
    tester
        .call("flights.book", json!({"seats": "two"}))
        .await
        .assert_error(ErrorCode::ValidationError);
    assert!(entries(&log).is_empty(), "{:?}", entries(&log));
}

#[tokio::test]
async fn a_refusal_keeps_its_contract_and_the_handler_never_runs() {
    let (tool, log) = flights();
    let tester = Tester::new().tool(tool).guard(
        "flights.book",
        GuardSpec::new().layer(refuse(|| Err(PolicyError::NotAllowed.into()))),
    );
    tester
        .call("flights.book", json!({"seats": 2}))
        .await
        .assert_error(ErrorCode::Forbidden)
        .assert_recovery("Ask an administrator for the booking role.");
    assert!(entries(&log).is_empty(), "{:?}", entries(&log));
}

#[tokio::test]
async fn an_error_without_a_contract_becomes_internal_error() {
    let (tool, _log) = flights();
    let tester = Tester::new().tool(tool).guard(
        "flights",
        GuardSpec::new().layer(refuse(|| {
            Err(anyhow::anyhow!("policy store at 10.0.0.7 unreachable").into())
        })),
    );
    let outcome = tester.call("flights.book", json!({"seats": 2})).await;
    outcome.assert_error(ErrorCode::InternalError);
    let envelope = outcome.response().tool_error().unwrap().to_xml();
    assert!(!envelope.contains("10.0.0.7"), "{envelope}");
    assert!(envelope.contains("errorId"), "{envelope}");
}

#[tokio::test]
async fn a_stock_tower_layer_may_add_a_warning_to_a_success() {
    let (tool, _log) = flights();
    let tester = Tester::new()
        .tool(tool)
        .guard("flights.book", GuardSpec::new().layer(warn()));
    tester
        .call("flights.book", json!({"seats": 1}))
        .await
        .assert_text("booked 1")
        .assert_warning("QUOTA_LOW");
}

#[tokio::test]
async fn only_the_guarded_action_runs_its_layers() {
    let (tool, log) = flights();
    let tester = Tester::new().tool(tool).guard(
        "flights.slow",
        GuardSpec::new().layer(refuse(|| Err(PolicyError::NotAllowed.into()))),
    );
    tester
        .call("flights.book", json!({"seats": 4}))
        .await
        .assert_text("booked 4");
    assert_eq!(entries(&log), ["handler"]);
}

#[tokio::test(start_paused = true)]
async fn the_timeout_covers_layers_and_handler() {
    let (tool, log) = flights();
    let tester = Tester::new().tool(tool).guard(
        "flights.slow",
        GuardSpec::new()
            .timeout(Duration::from_secs(5))
            .layer(around("tool", &log)),
    );
    tester
        .call("flights.slow", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
    tokio::time::sleep(Duration::from_secs(120)).await;
    // The layer started, the handler's future was dropped with the stack: neither the
    // handler's end nor the layer's "after" ever ran.
    assert_eq!(entries(&log), ["tool before flights.slow"]);
}

#[tokio::test]
async fn a_panicking_layer_is_contained_and_the_server_keeps_serving() {
    let (tool, log) = flights();
    let server = Server::new("flights", "1.0.0")
        .tool(tool)
        .guard("flights.slow", GuardSpec::new().layer(panics()));
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        let running = server.serve_io(read, write).await.expect("handshake");
        running.waiting().await
    });
    let client = ClientConfig::default().serve(client_end).await.unwrap();

    let call = |action: &str, args: serde_json::Value| {
        let mut arguments = args.as_object().unwrap().clone();
        arguments.insert("action".into(), action.into());
        CallToolRequestParams::new("flights").with_arguments(arguments)
    };
    let panicked = client.call_tool(call("slow", json!({}))).await.unwrap();
    assert_eq!(panicked.is_error, Some(true));
    let text = format!("{:?}", panicked.content);
    assert!(text.contains("INTERNAL_ERROR"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");

    let next = client
        .call_tool(call("book", json!({"seats": 3})))
        .await
        .unwrap();
    assert_ne!(next.is_error, Some(true));
    assert!(format!("{:?}", next.content).contains("booked 3"));
    assert_eq!(entries(&log), ["handler"]);

    client.cancel().await.unwrap();
    serving.await.unwrap().unwrap();
}

/// Reads the tenant a layer put into `_meta`.
pub struct Desk;

/// A desk.
#[fusion::tool]
impl Desk {
    /// Says which tenant the call is for.
    #[action(read_only)]
    pub async fn whoami(&self, ctx: fusion::RequestContext) -> String {
        ctx.meta()["tenant"].as_str().unwrap_or("none").to_owned()
    }
}

#[tokio::test]
async fn a_hand_written_tower_layer_changes_what_the_handler_sees() {
    let tester = Tester::new()
        .tool(Desk)
        .guard("desk", GuardSpec::new().layer(Tenant));
    tester.call("desk", json!({})).await.assert_text("acme");
}
