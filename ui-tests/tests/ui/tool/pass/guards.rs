#![deny(warnings)]

use std::time::Duration;

use fusion::guard::GuardRequest;

pub struct Jobs;

fn tenant(request: &GuardRequest<'_>) -> String {
    request.context.client().unwrap_or_default().to_owned()
}

/// Jobs.
#[fusion::tool(concurrency(max_active = 8, max_queued = 64), timeout = "1m")]
impl Jobs {
    /// Works.
    #[action(timeout = "500ms", rate_limit(calls = 5, per = "1h", key = tenant))]
    pub async fn work(&self) {}

    /// Reads.
    #[action(read_only, concurrency(max_active = 2), rate_limit(calls = 100, per = "1s", global))]
    pub fn read(&self) -> u32 {
        1
    }

    /// Plain.
    #[action]
    pub fn plain(&self) {}
}

/// Pings, a function tool with guards in both places.
#[fusion::tool(timeout = "3s")]
#[action(rate_limit(calls = 1, per = "2m"))]
fn ping() -> &'static str {
    "pong"
}

fn main() {
    use fusion::Tool;
    let guards = Jobs.guards();
    assert_eq!(guards.tool.timeout, Some(Duration::from_secs(60)));
    assert_eq!(guards.tool.concurrency.map(|c| c.max_queued), Some(64));
    let names: Vec<_> = guards.actions.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["work", "read"]);
    assert_eq!(guards.actions[0].1.timeout, Some(Duration::from_millis(500)));
    let ping = Ping.guards();
    assert_eq!(ping.tool.timeout, Some(Duration::from_secs(3)));
    assert_eq!(ping.tool.rate_limit.map(|r| r.per), Some(Duration::from_secs(120)));
    assert!(ping.actions.is_empty());
}
