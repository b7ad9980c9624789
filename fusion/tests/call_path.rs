//! The call path end to end: calls on any executor, panics anywhere answered once, guards on
//! some actions only, hand-written tools with guards, and names the expansion uses.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fusion::guard::{ActionCall, GuardSpec};
use fusion::testing::Tester;
use fusion::{
    ErrorCode, PreparedCall, RequestContext, Tool, ToolCall, ToolDefinition, ToolError, ToolExt,
    ToolResponse,
};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

fn action(name: &str, rest: Value) -> Map<String, Value> {
    let mut map = match rest {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("action".to_owned(), json!(name));
    map
}

fn code(response: &ToolResponse) -> Option<ErrorCode> {
    response.tool_error().map(|e| e.code().clone())
}

// --- executors -----------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct N {
    n: u32,
}

struct Busy;

/// Echoes, synchronously and asynchronously.
#[fusion::tool]
impl Busy {
    /// Echoes.
    #[action]
    fn count(&self, args: N) -> u32 {
        args.n
    }

    /// Echoes, asynchronously.
    #[action]
    async fn later(&self, args: N) -> u32 {
        args.n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_joined_and_local_calls_are_all_answered() {
    // A call owns what it needs: its future can be spawned.
    let tool = Arc::new(Busy);
    let spawned = tokio::spawn(tool.call(action("count", json!({"n": 1})), RequestContext::new()));
    assert!(!spawned.await.unwrap().is_error());

    let shared = Arc::new(Busy);
    let tasks: Vec<_> = (0..50)
        .map(|n| {
            let shared = Arc::clone(&shared);
            let name = if n % 2 == 0 { "count" } else { "later" };
            tokio::spawn(async move {
                shared
                    .call(action(name, json!({"n": n})), RequestContext::new())
                    .await
            })
        })
        .collect();
    for task in tasks {
        assert!(!task.await.unwrap().is_error());
    }

    let calls = (0..200).map(|n| {
        let name = ["count", "later", "nope"][n % 3];
        shared.call(action(name, json!({"n": n})), RequestContext::new())
    });
    let responses = futures::future::join_all(calls).await;
    assert_eq!(responses.len(), 200);
    for (n, response) in responses.iter().enumerate() {
        if n % 3 == 2 {
            assert_eq!(code(response), Some(ErrorCode::UnknownAction));
        } else {
            assert!(!response.is_error(), "{response:?}");
        }
    }

    let local = tokio::task::LocalSet::new();
    let response = local
        .run_until(async {
            tokio::task::spawn_local(
                tool.call(action("later", json!({"n": 2})), RequestContext::new()),
            )
            .await
            .unwrap()
        })
        .await;
    assert!(!response.is_error());
}

// --- panics --------------------------------------------------------------------------------

static BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Panics in its `Deserialize` when `n` is 13.
struct Unlucky(u32);

impl<'de> Deserialize<'de> for Unlucky {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Unlucky, D::Error> {
        let n = u32::deserialize(deserializer)?;
        assert!(n != 13, "unlucky deserialize: secret-deser-1");
        Ok(Unlucky(n))
    }
}

impl JsonSchema for Unlucky {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Unlucky".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 0})
    }
}

#[derive(Deserialize, JsonSchema)]
struct Numbers {
    n: Unlucky,
}

/// A rule that panics on 7.
fn panicky_rule(n: u32) -> Result<(), validator::ValidationError> {
    assert!(n != 7, "rule panics: secret-rule-2");
    Ok(())
}

#[derive(Deserialize, JsonSchema, validator::Validate)]
struct Ruled {
    #[validate(custom(function = "panicky_rule"))]
    n: u32,
}

/// The first schema generation panics.
struct FirstBuildPanics;

impl<'de> Deserialize<'de> for FirstBuildPanics {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FirstBuildPanics, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| FirstBuildPanics)
    }
}

impl JsonSchema for FirstBuildPanics {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FirstBuildPanics".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        assert!(
            BUILDS.fetch_add(1, Ordering::SeqCst) != 0,
            "the first build panics: secret-build-3"
        );
        schemars::json_schema!({"type": "object"})
    }
}

struct Fragile;

/// Panics in many places.
#[fusion::tool]
impl Fragile {
    /// Deserialize panics on 13.
    #[action]
    fn parse(&self, args: Numbers) -> u32 {
        args.n.0
    }

    /// The rule panics on 7.
    #[action]
    fn rule(&self, args: Ruled) -> u32 {
        args.n
    }

    /// The action panics.
    #[action]
    async fn boom(&self) -> String {
        panic!("async boom: secret-action-4")
    }
}

/// Its runtime fails to build the first time.
#[fusion::tool]
fn shaky(args: FirstBuildPanics) -> String {
    let _ = args;
    "built".to_owned()
}

#[tokio::test]
async fn panics_in_deserialize_rules_actions_and_the_runtime_build_are_internal_errors() {
    let cases = [
        (action("parse", json!({"n": 13})), "secret-deser-1"),
        (action("rule", json!({"n": 7})), "secret-rule-2"),
        (action("boom", json!({})), "secret-action-4"),
    ];
    for (arguments, secret) in cases {
        let response = Fragile.call(arguments, RequestContext::new()).await;
        assert_eq!(code(&response), Some(ErrorCode::InternalError), "{secret}");
        assert!(!format!("{response:?}").contains(secret));
        // The tool keeps serving.
        let ok = Fragile
            .call(action("parse", json!({"n": 1})), RequestContext::new())
            .await;
        assert!(!ok.is_error(), "{ok:?}");
        let ok = Fragile
            .call(action("rule", json!({"n": 1})), RequestContext::new())
            .await;
        assert!(!ok.is_error(), "{ok:?}");
    }

    let first = Shaky.call(Map::new(), RequestContext::new()).await;
    assert_eq!(code(&first), Some(ErrorCode::InternalError));
    assert!(!format!("{first:?}").contains("secret-build-3"));
    let second = Shaky.call(Map::new(), RequestContext::new()).await;
    assert!(!second.is_error(), "the runtime is built again: {second:?}");
}

// --- guards on some actions ----------------------------------------------------------------

#[derive(Clone, Default)]
struct Mixed {
    runs: Arc<AtomicUsize>,
}

/// One guarded action, three unguarded.
#[fusion::tool]
impl Mixed {
    /// Rate limited: two per minute.
    #[action(rate_limit(calls = 2, per = "1m"))]
    fn limited(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        "limited".to_owned()
    }

    /// Free.
    #[action]
    fn free(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        "free".to_owned()
    }

    /// Free, asynchronously.
    #[action]
    async fn free_async(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        "free_async".to_owned()
    }

    /// Slower than any timeout of these tests.
    #[action]
    async fn slow(&self) -> String {
        tokio::time::sleep(Duration::from_secs(60)).await;
        "slow".to_owned()
    }
}

/// Counts the calls it sees and passes them on: a tower layer written by hand.
#[derive(Clone)]
struct Count(Arc<AtomicUsize>);

impl<S> tower::Layer<S> for Count {
    type Service = Counted<S>;
    fn layer(&self, inner: S) -> Counted<S> {
        Counted(Arc::clone(&self.0), inner)
    }
}

#[derive(Clone)]
struct Counted<S>(Arc<AtomicUsize>, S);

impl<S: tower::Service<ActionCall>> tower::Service<ActionCall> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.1.poll_ready(cx)
    }

    fn call(&mut self, call: ActionCall) -> S::Future {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.1.call(call)
    }
}

#[tokio::test]
async fn a_guarded_action_keeps_its_limit_and_the_others_are_free() {
    let mixed = Mixed::default();
    let tester = Tester::new().tool(mixed.clone());
    for _ in 0..2 {
        tester
            .call("mixed.limited", json!({}))
            .await
            .assert_text("limited");
    }
    tester
        .call("mixed.limited", json!({}))
        .await
        .assert_error(ErrorCode::RateLimited);
    for _ in 0..10 {
        tester
            .call("mixed.free", json!({}))
            .await
            .assert_text("free");
        tester
            .call("mixed.free_async", json!({}))
            .await
            .assert_text("free_async");
    }
    assert_eq!(mixed.runs.load(Ordering::SeqCst), 22);
}

#[tokio::test]
async fn tool_wide_layers_see_every_action_of_a_tool_with_one_guarded_action() {
    let seen = Arc::new(AtomicUsize::new(0));
    let tester = Tester::new()
        .tool(Mixed::default())
        .guard("mixed", GuardSpec::new().layer(Count(Arc::clone(&seen))));
    tester
        .call("mixed.free", json!({}))
        .await
        .assert_text("free");
    tester
        .call("mixed.free_async", json!({}))
        .await
        .assert_text("free_async");
    tester
        .call("mixed.limited", json!({}))
        .await
        .assert_text("limited");
    assert_eq!(seen.load(Ordering::SeqCst), 3);

    // A layer on one action only: that action sees it, the others do not.
    let seen = Arc::new(AtomicUsize::new(0));
    let tester = Tester::new().tool(Mixed::default()).guard(
        "mixed.free",
        GuardSpec::new().layer(Count(Arc::clone(&seen))),
    );
    tester
        .call("mixed.free", json!({}))
        .await
        .assert_text("free");
    tester
        .call("mixed.free_async", json!({}))
        .await
        .assert_text("free_async");
    assert_eq!(seen.load(Ordering::SeqCst), 1);

    // A tool-wide timeout reaches every action, those without a guard of their own too.
    let tester = Tester::new()
        .tool(Mixed::default())
        .guard("mixed", GuardSpec::new().timeout(Duration::from_millis(50)));
    tester
        .call("mixed.free", json!({}))
        .await
        .assert_text("free");
    tester
        .call("mixed.slow", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
}

#[tokio::test]
async fn through_a_real_server_the_guarded_action_is_limited_and_the_others_are_not() {
    use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
    let seen = Arc::new(AtomicUsize::new(0));
    let server = fusion::server::Server::new("mixed", "1")
        .tool(Mixed::default())
        .guard(
            "mixed.free",
            GuardSpec::new().layer(Count(Arc::clone(&seen))),
        );
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new("review", "0.0.1");
    let client = server.serve_in_process(info).await.unwrap();
    let call = |name: &str| {
        let params = CallToolRequestParams::new("mixed".to_owned()).with_arguments(
            json!({"action": name})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        client.call_tool(params)
    };
    for _ in 0..2 {
        assert_ne!(call("limited").await.unwrap().is_error, Some(true));
    }
    let refused = call("limited").await.unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(
        format!("{refused:?}").contains("RATE_LIMITED"),
        "{refused:?}"
    );
    for _ in 0..5 {
        assert_ne!(call("free").await.unwrap().is_error, Some(true));
        assert_ne!(call("free_async").await.unwrap().is_error, Some(true));
    }
    assert_eq!(seen.load(Ordering::SeqCst), 5);
    client.cancel().await.unwrap();
}

// --- hand-written tools --------------------------------------------------------------------

/// Written by hand: the handlers that use the tool own its `Arc`.
struct Hand;

impl Tool for Hand {
    fn definition(&self) -> ToolDefinition {
        Mixed::default().definition()
    }

    fn prepare(self: Arc<Self>, call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
        match call.action() {
            "free" => Ok(PreparedCall::blocking(|_| "blocking")),
            "free_async" => Ok(PreparedCall::new(move |_| async move {
                tokio::task::yield_now().await;
                format!("async {}", self.definition().name)
            })),
            "slow" => Ok(PreparedCall::new(|_| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                "slow"
            })),
            "limited" => Ok(PreparedCall::new(|_| async {
                if true {
                    panic!("hand-written panic");
                }
                "unreachable"
            })),
            _ => Err(ToolResponse::error(ToolError::new(
                ErrorCode::UnknownAction,
                "No such action.",
            ))),
        }
    }

    fn guards(&self) -> fusion::guard::ToolGuards {
        fusion::guard::ToolGuards {
            tool: GuardSpec::new().timeout(Duration::from_millis(50)),
            actions: vec![(
                "free".to_owned(),
                GuardSpec::new()
                    .rate_limit(fusion::guard::RateLimit::global(1, Duration::from_secs(60))),
            )],
        }
    }
}

#[tokio::test]
async fn a_hand_written_tool_gets_exactly_the_guards_configured_for_it() {
    let seen = Arc::new(AtomicUsize::new(0));
    let hand = Arc::new(Hand);
    let tester = Tester::new().tool(Hand).guard(
        "mixed.free_async",
        GuardSpec::new().layer(Count(Arc::clone(&seen))),
    );
    tester
        .call("mixed.free", json!({}))
        .await
        .assert_text("blocking");
    // Its own rate limit on `free`: one a minute.
    tester
        .call("mixed.free", json!({}))
        .await
        .assert_error(ErrorCode::RateLimited);
    // The tester's middleware on `free_async`.
    tester
        .call("mixed.free_async", json!({}))
        .await
        .assert_text("async mixed");
    assert_eq!(seen.load(Ordering::SeqCst), 1);
    // Its own tool-wide timeout.
    tester
        .call("mixed.slow", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
    // A panic in its handler: one internal error, and it keeps serving.
    tester
        .call("mixed.limited", json!({}))
        .await
        .assert_error(ErrorCode::InternalError);
    // Its own refusal from `prepare`.
    tester
        .call("mixed.nope", json!({}))
        .await
        .assert_error(ErrorCode::UnknownAction);
    // Called directly (through an `Arc`, again and again), it runs unguarded.
    for _ in 0..3 {
        let direct = hand
            .call(action("free", json!({})), RequestContext::new())
            .await;
        assert_eq!(direct.payload(), Some("blocking"));
    }
}

// --- names the expansion uses --------------------------------------------------------------

struct Engine;

/// Actions named like the generated trait methods.
#[fusion::tool]
impl Engine {
    /// Starts.
    #[action]
    fn start(&self, args: N) -> u32 {
        args.n + 1
    }

    /// Calls.
    #[action]
    fn call(args: N) -> u32 {
        args.n + 2
    }
}

#[tokio::test]
async fn actions_named_start_and_call_are_served() {
    let response = ToolExt::call(
        Engine,
        action("start", json!({"n": 1})),
        RequestContext::new(),
    )
    .await;
    assert_eq!(
        format!("{response:?}"),
        format!("{:?}", ToolResponse::json(&2))
    );
    let response = ToolExt::call(
        Engine,
        action("call", json!({"n": 1})),
        RequestContext::new(),
    )
    .await;
    assert_eq!(
        format!("{response:?}"),
        format!("{:?}", ToolResponse::json(&3))
    );
}

// --- a panic whose payload panics when dropped ---------------------------------------------

/// A panic payload whose drop panics again.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("the payload's drop panics");
        }
    }
}

struct Booby;

/// Panics with a `Bomb`.
#[fusion::tool]
impl Booby {
    /// Synchronously.
    #[action]
    fn now(&self) -> String {
        std::panic::panic_any(Bomb)
    }

    /// Asynchronously.
    #[action]
    async fn later(&self) -> String {
        std::panic::panic_any(Bomb)
    }
}

#[test]
fn a_panic_payload_that_panics_when_dropped_never_unwinds_out_of_poll() {
    for name in ["now", "later"] {
        let mut call = Box::pin(Booby.call(action(name, json!({})), RequestContext::new()));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let polled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.as_mut().poll(&mut cx)));
        let Ok(std::task::Poll::Ready(response)) = polled else {
            panic!("{name}: unwound out of poll or pending");
        };
        assert_eq!(code(&response), Some(ErrorCode::InternalError), "{name}");
    }
}
