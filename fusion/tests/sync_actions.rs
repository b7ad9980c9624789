//! Synchronous actions: nothing runs before the call is first polled, and then it runs inside
//! the poller's context (a runtime, a task-local scope, a worker). Behind guards they wait
//! for them, run exactly once (or not at all when refused or cancelled), and a panic comes
//! back as `INTERNAL_ERROR`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use fusion::guard::{ConcurrencyLimit, GuardRequest, GuardSpec, Middleware, Next};
use fusion::testing::Tester;
use fusion::{BoxFuture, ErrorCode, RequestContext, ToolError, ToolExt, ToolResponse};
use serde_json::{Map, Value, json};

/// Channels a test holds a running handler with.
#[derive(Default)]
struct Hold {
    entered: Mutex<Option<mpsc::Sender<()>>>,
    release: Mutex<Option<mpsc::Receiver<()>>>,
}

#[derive(Clone, Default)]
struct Desk {
    runs: Arc<AtomicUsize>,
    hold: Arc<Hold>,
}

/// Synchronous actions.
#[fusion::tool]
impl Desk {
    /// Answers.
    #[action]
    fn answer(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        "answered".to_owned()
    }

    /// Blocks its thread until the test releases it.
    #[action]
    fn block(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let entered = self.hold.entered.lock().unwrap().take();
        let release = self.hold.release.lock().unwrap().take();
        if let (Some(entered), Some(release)) = (entered, release) {
            entered.send(()).unwrap();
            release.recv().unwrap();
        }
        "released".to_owned()
    }

    /// Panics.
    #[action]
    fn boom(&self) -> String {
        self.runs.fetch_add(1, Ordering::SeqCst);
        panic!("invariant broken: secret-token-456")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synchronous_action_behind_a_concurrency_limit_waits_for_its_slot() {
    let desk = Desk::default();
    let (entered_tx, entered_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    *desk.hold.entered.lock().unwrap() = Some(entered_tx);
    *desk.hold.release.lock().unwrap() = Some(release_rx);
    let runs = Arc::clone(&desk.runs);
    let tester = Arc::new(Tester::new().tool(desk).guard(
        "desk.block",
        GuardSpec::new().concurrency(ConcurrencyLimit::new(1, 0)),
    ));

    let first = {
        let tester = Arc::clone(&tester);
        tokio::spawn(async move { tester.call("desk.block", json!({})).await })
    };
    tokio::task::spawn_blocking(move || entered_rx.recv().unwrap())
        .await
        .unwrap();
    // The slot is held by the first call, blocked inside its handler: no queue, refused.
    tester
        .call("desk.block", json!({}))
        .await
        .assert_error(ErrorCode::ServerBusy);
    release_tx.send(()).unwrap();
    first.await.unwrap().assert_text("released");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the refused handler never ran"
    );
    // The slot is free again.
    tester
        .call("desk.block", json!({}))
        .await
        .assert_text("released");
}

#[tokio::test]
async fn a_synchronous_action_that_panics_is_an_internal_error_with_or_without_guards() {
    for guarded in [false, true] {
        let desk = Desk::default();
        let runs = Arc::clone(&desk.runs);
        let mut tester = Tester::new().tool(desk);
        if guarded {
            tester = tester.guard("desk", GuardSpec::new().timeout(Duration::from_secs(5)));
        }
        let outcome = tester.call("desk.boom", json!({})).await;
        outcome.assert_error(ErrorCode::InternalError);
        assert!(!outcome.snapshot().contains("secret-token-456"));
        assert_eq!(runs.load(Ordering::SeqCst), 1, "guarded: {guarded}");
        // The tool keeps serving.
        tester
            .call("desk.answer", json!({}))
            .await
            .assert_text("answered");
    }
}

#[tokio::test]
async fn a_call_cancelled_before_it_starts_runs_no_synchronous_handler() {
    let desk = Desk::default();
    let runs = Arc::clone(&desk.runs);
    let tester = Tester::new().tool(desk);
    let context = RequestContext::new();
    context.cancellation().cancel();
    tester
        .call_with("desk.answer", json!({}), context)
        .await
        .assert_cancelled();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// Refuses every call, counting them.
struct Refuse(Arc<AtomicUsize>);

impl Middleware for Refuse {
    fn handle<'a>(
        &'a self,
        _call: &'a GuardRequest<'a>,
        _next: Next<'a>,
    ) -> BoxFuture<'a, Result<ToolResponse, ToolError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(ToolError::new(ErrorCode::Unauthorized, "No tenant.")) })
    }
}

#[tokio::test]
async fn middleware_that_refuses_keeps_a_synchronous_handler_from_running() {
    let desk = Desk::default();
    let runs = Arc::clone(&desk.runs);
    let seen = Arc::new(AtomicUsize::new(0));
    let tester = Tester::new().tool(desk).guard(
        "desk",
        GuardSpec::new().middleware(Refuse(Arc::clone(&seen))),
    );
    tester
        .call("desk.answer", json!({}))
        .await
        .assert_error(ErrorCode::Unauthorized);
    assert_eq!(
        (runs.load(Ordering::SeqCst), seen.load(Ordering::SeqCst)),
        (0, 1)
    );
}

fn poll_once(future: &mut BoxFuture<'_, ToolResponse>) -> std::task::Poll<ToolResponse> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    future.as_mut().poll(&mut cx)
}

#[test]
fn a_call_does_nothing_until_polled_and_a_synchronous_one_ends_at_the_first_poll() {
    let desk = Desk::default();
    let runs = Arc::clone(&desk.runs);
    drop(desk.call(action("answer"), RequestContext::new()));
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a dropped call never ran");

    let mut call: BoxFuture<'_, ToolResponse> =
        Box::pin(desk.call(action("answer"), RequestContext::new()));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let std::task::Poll::Ready(response) = poll_once(&mut call) else {
        panic!("a synchronous, unguarded call is answered at its first poll");
    };
    assert_eq!(response.payload(), Some("answered"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let mut refused: BoxFuture<'_, ToolResponse> =
        Box::pin(desk.call(action("nope"), RequestContext::new()));
    let std::task::Poll::Ready(response) = poll_once(&mut refused) else {
        panic!("an unknown action is answered at the first poll");
    };
    assert_eq!(
        *response.tool_error().unwrap().code(),
        ErrorCode::UnknownAction
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

// --- where a synchronous action runs -----------------------------------------------------------

tokio::task_local! {
    static TENANT: &'static str;
}

/// Reports the context it runs in.
#[derive(Clone, Copy)]
struct Where;

/// Where the action runs.
#[fusion::tool]
impl Where {
    /// The tenant of the task-local scope.
    #[action]
    fn tenant(&self) -> String {
        TENANT.with(|tenant| (*tenant).to_owned())
    }

    /// Spawns a task, which needs a tokio runtime.
    #[action]
    fn spawns(&self) -> String {
        drop(tokio::spawn(async {}));
        "spawned".to_owned()
    }

    /// The name of its thread.
    #[action]
    fn thread(&self) -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }
}

fn action(name: &str) -> Map<String, Value> {
    Map::from_iter([("action".to_owned(), json!(name))])
}

/// A runtime whose workers are named `worker`.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("worker")
        .build()
        .unwrap()
}

/// `call` itself made inside the context.
#[test]
fn a_call_made_inside_a_context_runs_its_synchronous_action_there() {
    let rt = runtime();
    let call = |name: &str| Where.call(action(name), RequestContext::new());
    let tenant = rt.block_on(TENANT.scope("acme", async { call("tenant").await }));
    assert_eq!(
        format!("{tenant:?}"),
        format!("{:?}", ToolResponse::text("acme"))
    );
    assert!(!rt.block_on(async { call("spawns").await }).is_error());
    let thread = rt
        .block_on(rt.spawn(async move { call("thread").await }))
        .unwrap();
    assert_eq!(
        format!("{thread:?}"),
        format!("{:?}", ToolResponse::text("worker"))
    );
}

// A call does nothing before its first poll, like any future: each call below is made outside
// the context and wrapped in it, and its synchronous action still runs inside it.

#[test]
fn block_on_of_a_call_runs_its_synchronous_action_inside_the_runtime() {
    let response = runtime().block_on(Where.call(action("spawns"), RequestContext::new()));
    assert!(!response.is_error(), "{response:?}");
}

#[tokio::test]
async fn a_task_local_scope_around_a_call_reaches_its_synchronous_action() {
    let response = TENANT
        .scope("acme", Where.call(action("tenant"), RequestContext::new()))
        .await;
    assert!(!response.is_error(), "{response:?}");
}

#[test]
fn a_spawned_call_runs_its_synchronous_action_on_a_worker() {
    let rt = runtime();
    let _enter = rt.enter();
    let spawned = tokio::spawn(Where.call(action("thread"), RequestContext::new()));
    let response = rt.block_on(spawned).unwrap();
    assert_eq!(
        format!("{response:?}"),
        format!("{:?}", ToolResponse::text("worker"))
    );
}
