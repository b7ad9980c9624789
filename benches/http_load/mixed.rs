//! The correctness check under load: 200 mixed calls in flight, each answered exactly once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::{HOLD, MIXED_CALLS, MIXED_LIMIT, call_request, connect, exchange, spawn};

/// 200 calls in flight at once, each on its own connection, mixed: successes, validation
/// errors, not-found errors, unknown actions. Every id answered exactly once, as asked, and no
/// `SERVER_BUSY` (200 in flight, limit 200).
pub(super) async fn mixed() -> anyhow::Result<()> {
    let served = Arc::new(spawn("fusion", "mixed").await?);
    let mut senders = Vec::new();
    for _ in 0..MIXED_CALLS {
        senders.push(connect(&served).await?);
    }
    let start = Instant::now();
    let calls: Vec<_> = senders
        .into_iter()
        .zip(1..=MIXED_CALLS)
        .map(|(mut sender, id)| {
            let served = Arc::clone(&served);
            tokio::spawn(async move {
                let arguments = mixed_arguments(id);
                let request = call_request(&served, 0, id, "ledger", &arguments);
                exchange(&mut sender, request).await
            })
        })
        .collect();
    let mut answered: HashMap<u64, usize> = HashMap::new();
    let mut by_kind: HashMap<String, usize> = HashMap::new();
    let mut wrong = Vec::new();
    for call in calls {
        let (status, message) = call.await??;
        let id = message["id"].as_u64().unwrap_or(0);
        *answered.entry(id).or_default() += 1;
        let got = outcome(&message);
        if status != 200 || got != expected_outcome(id) {
            wrong.push(format!("id {id}: {status} {message}"));
        }
        *by_kind.entry(got).or_default() += 1;
    }
    let elapsed = start.elapsed();
    let missing = (1..=MIXED_CALLS)
        .filter(|id| !answered.contains_key(id))
        .count();
    let duplicated = answered.values().filter(|&&n| n > 1).count();
    println!(
        "\nmixed: {MIXED_CALLS} calls in flight (concurrency limit {MIXED_LIMIT}, each success or \
         not-found holding its slot {} ms), answered in {} ms",
        HOLD.as_millis(),
        elapsed.as_millis()
    );
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort();
    for (kind, n) in kinds {
        println!("  {kind:<16} {n}");
    }
    println!(
        "  answered ids {}, missing {missing}, answered twice {duplicated}, wrong answers {}: {}",
        answered.len(),
        wrong.len(),
        if missing == 0 && duplicated == 0 && wrong.is_empty() {
            "met"
        } else {
            "MISSED"
        }
    );
    for line in wrong.iter().take(5) {
        println!("    {line}");
    }
    Ok(())
}

/// The arguments of call `id`: four kinds in turn.
fn mixed_arguments(id: u64) -> Value {
    match id % 4 {
        0 => json!({"action": "get", "id": "e1"}),
        1 => json!({"action": "get", "id": 7}),
        2 => json!({"action": "get", "id": "e9"}),
        _ => json!({"action": "delete", "id": "e1"}),
    }
}

fn expected_outcome(id: u64) -> &'static str {
    ["ok", "VALIDATION_ERROR", "NOT_FOUND", "UNKNOWN_ACTION"][(id % 4) as usize]
}

/// `ok` for a tool result that is not an error, else its envelope's code (fusion's
/// `_meta["fusion/error"].code`), or what else came back.
fn outcome(message: &Value) -> String {
    let result = &message["result"];
    if result.is_null() {
        return format!("no result: {}", message["error"]);
    }
    if result["isError"] != true {
        return "ok".to_owned();
    }
    match result["_meta"]["fusion/error"]["code"].as_str() {
        Some(code) => code.to_owned(),
        None => "an error without a code".to_owned(),
    }
}
