//! What a task costs over a direct call: the same action through a real rmcp client over an
//! in-process duplex stream, called directly (a client without the Tasks extension), and as a
//! task (create, then `tasks/get` until it has completed, result included) kept in memory and,
//! when `FUSION_BENCH_REDIS` names a Redis (`redis://127.0.0.1:6379/`), in Redis.
//!
//! Run: `cargo bench -p fusion --features redis --bench tasks` (with `FUSION_BENCH_REDIS` set
//! for the Redis line). Batches of each alternate so machine noise hits them alike; each line
//! gives the median time per call or task, the overhead over the direct call and the ratio.

use std::time::{Duration, Instant};

use fusion::server::Server;
use fusion::tasks::{MemoryTaskStore, Tasks};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation,
};
use rmcp::service::{RoleClient, RunningService};

mod support;

/// Calls or tasks per timed batch.
const BATCH: u32 = 200;

/// Exports.
#[fusion::tool]
#[action(task, read_only)]
async fn export() -> String {
    "id,amount\n1,42".to_owned()
}

type Client = RunningService<RoleClient, ClientConfig>;

async fn client(tasks: Tasks, declares_tasks: bool) -> Client {
    let capabilities = match declares_tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(capabilities, Implementation::new("bench", "1.0.0"));
    let server = Server::new("bench", "1.0.0")
        .tool(Export)
        .tasks(tasks.poll_interval(Duration::from_millis(1)));
    server
        .serve_in_process(config)
        .await
        .expect("client connects")
}

/// One call; when it becomes a task, polled until it has completed. Returns the polls made.
async fn run(client: &Client) -> u32 {
    let request = CallToolRequestParams::new("export");
    let response = client.call_tool_once(request).await.expect("an answer");
    let CallToolResponse::Task(created) = response else {
        return 0;
    };
    let mut polls = 0;
    loop {
        polls += 1;
        let params = GetTaskParams::new(created.task.task_id.clone());
        let task = client.peer().get_task(params).await.expect("the task");
        if task.task.status().is_terminal() {
            return polls;
        }
        tokio::task::yield_now().await;
    }
}

/// The Redis case, when `FUSION_BENCH_REDIS` names a Redis and the `redis` feature is on.
fn redis_case(rt: &tokio::runtime::Runtime) -> Option<(&'static str, Client)> {
    #[cfg(feature = "redis")]
    if let Ok(url) = std::env::var("FUSION_BENCH_REDIS") {
        let store = fusion::tasks::RedisTaskStore::new(&url)
            .expect("a Redis URL")
            .prefix(format!("fusion-bench:{}", fusion::internal::new_error_id()));
        return Some((
            "task, in Redis",
            rt.block_on(client(Tasks::new(store), true)),
        ));
    }
    let _ = rt;
    None
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut cases = vec![
        ("direct call", rt.block_on(client(Tasks::default(), false))),
        (
            "task, in memory",
            rt.block_on(client(
                Tasks::new(MemoryTaskStore::with_capacity(1 << 20)),
                true,
            )),
        ),
    ];
    cases.extend(redis_case(&rt));
    for (name, client) in &cases {
        let polls = rt.block_on(run(client));
        println!("{name}: {polls} tasks/get before the result (first run)");
    }
    let mut samples = vec![Vec::new(); cases.len()];
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        for ((_, client), samples) in cases.iter().zip(&mut samples) {
            samples.push(support::ns_per_call(BATCH, || rt.block_on(run(client))));
        }
    }
    let direct = support::median(&mut samples[0]);
    println!(
        "side by side, median of {} batches of {BATCH}:",
        samples[0].len()
    );
    println!("  direct call: {:.1} µs/call", direct / 1e3);
    for ((name, _), samples) in cases.iter().zip(&mut samples).skip(1) {
        let task = support::median(samples);
        println!(
            "  {name}: {:.1} µs/task, overhead {:.1} µs/task, ratio {:.2}x",
            task / 1e3,
            (task - direct) / 1e3,
            task / direct
        );
    }
}
