//! Synchronous actions: nothing runs before the call is first polled. A plain `fn` runs inline,
//! on the task that polls the call (its thread, its task-locals), unless a timeout bounds the
//! call (the attribute's or the server's); then, and always for one declared
//! `#[action(blocking)]`, it runs on the runtime's blocking pool (inside the runtime and the
//! caller's `tracing` span, without the caller's task-locals), so it neither starves the async
//! workers nor outlasts its timeout, and sees its context cancelled when the call ends without
//! it. Outside a runtime every synchronous action runs inline. Behind guards they wait for
//! them, run exactly once (or not at all when refused or cancelled), and a panic comes back as
//! `INTERNAL_ERROR`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use fusion::guard::{ActionCall, ConcurrencyLimit, FromFnLayer, GuardSpec, Next, from_fn};
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
fn refuse(
    seen: &Arc<AtomicUsize>,
) -> FromFnLayer<
    impl Fn(ActionCall, Next) -> BoxFuture<'static, Result<ToolResponse, ToolError>>
    + Clone
    + Send
    + Sync
    + 'static,
> {
    let seen = Arc::clone(seen);
    from_fn(move |_call: ActionCall, _next: Next| {
        seen.fetch_add(1, Ordering::SeqCst);
        let refusal: BoxFuture<'static, Result<ToolResponse, ToolError>> =
            Box::pin(async { Err(ToolError::new(ErrorCode::Unauthorized, "No tenant.")) });
        refusal
    })
}

#[tokio::test]
async fn a_layer_that_refuses_keeps_a_synchronous_handler_from_running() {
    let desk = Desk::default();
    let runs = Arc::clone(&desk.runs);
    let seen = Arc::new(AtomicUsize::new(0));
    let tester = Tester::new()
        .tool(desk)
        .guard("desk", GuardSpec::new().layer(refuse(&seen)));
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
fn a_call_does_nothing_until_polled_and_outside_a_runtime_a_synchronous_one_ends_at_the_first_poll()
{
    let desk = Arc::new(Desk::default());
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
    /// The tenant of the task-local scope, if it is set where the action runs.
    #[action]
    fn tenant(&self) -> String {
        TENANT
            .try_with(|tenant| (*tenant).to_owned())
            .unwrap_or_else(|_| "unset".to_owned())
    }

    /// The tenant, asynchronously: on the calling task.
    #[action]
    async fn tenant_async(&self) -> String {
        self.tenant()
    }

    /// The tenant, on the blocking pool.
    #[action(blocking)]
    fn tenant_blocking(&self) -> String {
        self.tenant()
    }

    /// Spawns a task from the blocking pool, which needs a tokio runtime.
    #[action(blocking)]
    fn spawns(&self) -> String {
        drop(tokio::spawn(async {}));
        "spawned".to_owned()
    }

    /// The name of its thread.
    #[action]
    fn thread(&self) -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    /// The name of its thread, on the blocking pool.
    #[action(blocking)]
    fn thread_blocking(&self) -> String {
        self.thread()
    }

    /// The name of the current `tracing` span.
    #[action]
    fn span(&self) -> String {
        let span = tracing::Span::current();
        span.metadata().map_or("none", |m| m.name()).to_owned()
    }

    /// The name of the current `tracing` span, on the blocking pool.
    #[action(blocking)]
    fn span_blocking(&self) -> String {
        self.span()
    }
}

/// The name of its thread: a function tool declared blocking.
#[fusion::tool]
#[action(blocking)]
fn pool_thread() -> String {
    std::thread::current().name().unwrap_or_default().to_owned()
}

fn action(name: &str) -> Map<String, Value> {
    Map::from_iter([("action".to_owned(), json!(name))])
}

fn text(response: &ToolResponse) -> String {
    response
        .payload()
        .unwrap_or_else(|| panic!("{response:?}"))
        .to_owned()
}

/// A runtime with no worker threads, whose other threads (the blocking pool) are named `pool`.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .thread_name("pool")
        .enable_time()
        .build()
        .unwrap()
}

/// The name of the current thread.
fn this_thread() -> String {
    std::thread::current().name().unwrap_or_default().to_owned()
}

#[test]
fn inside_a_runtime_a_blocking_action_runs_on_its_blocking_pool_inside_the_runtime() {
    let rt = runtime();
    // `block_on` polls the call on this thread; the action runs on a thread of the pool.
    let thread = rt.block_on(Where.call(action("thread_blocking"), RequestContext::new()));
    assert_eq!(text(&thread), "pool");
    let spawns = rt.block_on(Where.call(action("spawns"), RequestContext::new()));
    assert_eq!(text(&spawns), "spawned");
    let function = rt.block_on(PoolThread.call(Map::new(), RequestContext::new()));
    assert_eq!(text(&function), "pool");
}

#[test]
fn a_plain_fn_runs_inline_on_the_thread_and_task_that_poll_the_call() {
    let rt = runtime();
    // Guards other than a timeout leave it inline.
    let tester = Tester::new().tool(Where).guard(
        "where",
        GuardSpec::new().concurrency(ConcurrencyLimit::new(4, 4)),
    );
    rt.block_on(tester.call("where.thread", json!({})))
        .assert_text(&this_thread());
    let tenant = rt.block_on(TENANT.scope("acme", tester.call("where.tenant", json!({}))));
    tenant.assert_text("acme");
}

#[test]
fn under_a_timeout_a_plain_fn_runs_on_the_blocking_pool() {
    let rt = runtime();
    // A timeout the server sets, which the attribute cannot know of.
    let tester = Tester::new()
        .tool(Where)
        .guard("where", GuardSpec::new().timeout(Duration::from_secs(30)));
    rt.block_on(tester.call("where.thread", json!({})))
        .assert_text("pool");
    rt.block_on(TENANT.scope("acme", tester.call("where.tenant", json!({}))))
        .assert_text("unset");
}

#[test]
fn outside_a_runtime_a_synchronous_action_runs_inline() {
    for name in ["thread", "thread_blocking"] {
        let thread = futures::executor::block_on(Where.call(action(name), RequestContext::new()));
        assert_eq!(text(&thread), this_thread(), "{name}");
    }
}

#[tokio::test]
async fn the_callers_task_locals_reach_an_async_action_and_a_plain_fn_but_not_a_blocking_one() {
    let call = |name: &str| TENANT.scope("acme", Where.call(action(name), RequestContext::new()));
    assert_eq!(text(&call("tenant_async").await), "acme");
    assert_eq!(text(&call("tenant").await), "acme");
    assert_eq!(text(&call("tenant_blocking").await), "unset");
}

#[tokio::test]
async fn a_synchronous_action_runs_inside_the_callers_tracing_span() {
    use tracing::Instrument as _;
    let _subscriber = tracing::subscriber::set_default(tracing_subscriber::registry());
    for name in ["span", "span_blocking"] {
        let response = Where
            .call(action(name), RequestContext::new())
            .instrument(tracing::info_span!("request"))
            .await;
        assert_eq!(text(&response), "request", "{name}");
    }
}

// --- blocking actions do not hold the call up ----------------------------------------------------

/// Blocks its thread.
#[derive(Clone, Default)]
struct Sleeper {
    /// Whether `patient` saw its context cancelled, once it returned.
    saw_cancellation: Arc<Mutex<Option<bool>>>,
}

/// Blocking actions.
#[fusion::tool]
impl Sleeper {
    /// Sleeps two seconds, past its timeout.
    #[action(timeout = "200ms")]
    fn nap(&self) -> String {
        std::thread::sleep(Duration::from_secs(2));
        "rested".to_owned()
    }

    /// Sleeps a second and a half, with no timeout, on the blocking pool.
    #[action(blocking)]
    fn snooze(&self) -> String {
        std::thread::sleep(Duration::from_millis(1500));
        "rested".to_owned()
    }

    /// Sleeps a second and a half, not declared blocking, with no timeout of its own.
    #[action]
    fn doze(&self) -> String {
        std::thread::sleep(Duration::from_millis(1500));
        "rested".to_owned()
    }

    /// Answers at once, asynchronously.
    #[action]
    async fn ping(&self) -> String {
        "pong".to_owned()
    }

    /// Works in steps until its context is cancelled (or ten seconds pass).
    #[action(timeout = "100ms")]
    fn patient(&self, ctx: RequestContext) -> String {
        let give_up = Instant::now() + Duration::from_secs(10);
        while !ctx.is_cancelled() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(5));
        }
        *self.saw_cancellation.lock().unwrap() = Some(ctx.is_cancelled());
        "done".to_owned()
    }
}

/// Waits (up to five seconds) until `sleeper.patient` has returned; whether it saw its
/// context cancelled.
async fn patient_returned(sleeper: &Sleeper) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(saw) = *sleeper.saw_cancellation.lock().unwrap() {
            return saw;
        }
        assert!(Instant::now() < deadline, "`patient` never returned");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_action_past_its_timeout_is_answered_timeout_at_the_deadline() {
    let tester = Tester::new().tool(Sleeper::default());
    let started = Instant::now();
    tester
        .call("sleeper.nap", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(1500),
        "answered after {took:?}, not at the 200 ms deadline"
    );
}

/// On a runtime with one thread (`#[tokio::test]`'s), which the call's timer needs too: the
/// action sleeps on a thread of the blocking pool and the call is answered at the deadline.
#[tokio::test]
async fn a_blocking_action_or_a_plain_fn_given_a_timeout_by_the_server_times_out_while_its_thread_sleeps()
 {
    for name in ["sleeper.snooze", "sleeper.doze"] {
        let tester = Tester::new()
            .tool(Sleeper::default())
            .guard(name, GuardSpec::new().timeout(Duration::from_millis(100)));
        let started = Instant::now();
        tester
            .call(name, json!({}))
            .await
            .assert_error(ErrorCode::Timeout);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(1000),
            "{name}: answered after {took:?}, not at the 100 ms deadline"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_actions_on_every_worker_do_not_hold_up_another_call() {
    let tester = Arc::new(Tester::new().tool(Sleeper::default()));
    let started = Instant::now();
    // As many sleeping calls as the runtime has workers.
    let sleepers: Vec<_> = (0..2)
        .map(|_| {
            let tester = Arc::clone(&tester);
            tokio::spawn(async move { tester.call("sleeper.snooze", json!({})).await })
        })
        .collect();
    // Let both start sleeping.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let other = {
        let tester = Arc::clone(&tester);
        tokio::spawn(async move { tester.call("sleeper.ping", json!({})).await })
    };
    other.await.unwrap().assert_text("pong");
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(1000),
        "the async call waited {took:?}, for the sleepers"
    );
    for sleeper in sleepers {
        sleeper.await.unwrap().assert_text("rested");
    }
}

#[tokio::test]
async fn a_cooperative_blocking_action_sees_its_context_cancelled_at_the_timeout() {
    let sleeper = Sleeper::default();
    let tester = Tester::new().tool(sleeper.clone());
    let started = Instant::now();
    tester
        .call("sleeper.patient", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
    assert!(patient_returned(&sleeper).await, "saw the cancellation");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_blocking_action_sees_its_context_cancelled_when_the_client_cancels() {
    let sleeper = Sleeper::default();
    // `patient`'s own timeout is 100 ms; a longer one configured here replaces it, so the
    // client's cancellation comes first.
    let tester = Tester::new().tool(sleeper.clone()).guard(
        "sleeper.patient",
        GuardSpec::new().timeout(Duration::from_secs(30)),
    );
    let context = RequestContext::new();
    let cancel = context.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    });
    tester
        .call_with("sleeper.patient", json!({}), context)
        .await
        .assert_cancelled();
    assert!(patient_returned(&sleeper).await, "saw the cancellation");
}

/// Written by hand: a blocking handler that owns the tool's `Arc`, under the tool's own
/// timeout.
#[derive(Default)]
struct Stubborn {
    /// Whether the handler saw its context cancelled, once it returned.
    saw_cancellation: Arc<Mutex<Option<bool>>>,
}

impl fusion::Tool for Stubborn {
    fn definition(&self) -> fusion::ToolDefinition {
        fusion::ToolDefinition {
            name: "stubborn".to_owned(),
            description: "Works until told to stop.".to_owned(),
            title: None,
            discriminator: None,
            actions: Vec::new(),
        }
    }

    fn prepare(
        self: Arc<Self>,
        _call: fusion::ToolCall<'_>,
    ) -> Result<fusion::PreparedCall, ToolResponse> {
        Ok(fusion::PreparedCall::blocking(move |ctx| {
            let give_up = Instant::now() + Duration::from_secs(10);
            while !ctx.is_cancelled() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(5));
            }
            *self.saw_cancellation.lock().unwrap() = Some(ctx.is_cancelled());
            "stopped"
        }))
    }

    fn guards(&self) -> fusion::guard::ToolGuards {
        fusion::guard::ToolGuards {
            tool: GuardSpec::new().timeout(Duration::from_millis(50)),
            actions: Vec::new(),
        }
    }
}

#[tokio::test]
async fn a_hand_written_blocking_handler_is_stopped_by_its_own_timeout_and_told_so() {
    let stubborn = Stubborn::default();
    let saw_cancellation = Arc::clone(&stubborn.saw_cancellation);
    let tester = Tester::new().tool(stubborn);
    tester
        .call("stubborn", json!({}))
        .await
        .assert_error(ErrorCode::Timeout);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(saw) = *saw_cancellation.lock().unwrap() {
            assert!(saw, "the handler returned without seeing the cancellation");
            break;
        }
        assert!(Instant::now() < deadline, "the handler never returned");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
