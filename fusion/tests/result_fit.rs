//! Results that fit: a result over the limit in force is a list cut to the items that fit
//! with a `RESULT_TRUNCATED` warning naming the next call, or a `RESULT_TRUNCATED` error;
//! through a real rmcp client over an in-process transport, and through `Tester`, which
//! answers the same.

#[path = "support/in_process.rs"]
mod in_process;

use fusion::server::Server;
use fusion::testing::Tester;
use fusion::{ErrorCode, Json, ResultLimit, Severity, Tool};
use in_process::{Client, call_tool, connect, texts};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
struct Invoice {
    id: String,
    status: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ListInvoices {
    /// Only invoices in this status.
    #[allow(dead_code)]
    status: Option<String>,
    /// Invoices to skip.
    offset: Option<usize>,
    /// At most this many invoices.
    limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Search {
    /// Only invoices whose id contains this.
    query: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Page {
    total: usize,
    invoices: Vec<Invoice>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Sized {
    /// How many bytes of text to answer.
    bytes: usize,
}

/// `inv_000` to `inv_099`, each `{"id":"inv_007","status":"open"}` (31 bytes).
fn invoices() -> Vec<Invoice> {
    (0..100)
        .map(|i| Invoice {
            id: format!("inv_{i:03}"),
            status: "open".to_owned(),
        })
        .collect()
}

/// Invoices.
struct Billing;

/// Invoices, listed in pages.
#[fusion::tool]
impl Billing {
    /// Lists invoices, a page at a time.
    #[action(read_only, max_result = 200, page(offset = "offset", limit = "limit"))]
    fn list_invoices(&self, args: ListInvoices) -> Vec<Invoice> {
        let all = invoices().into_iter().skip(args.offset.unwrap_or(0));
        all.take(args.limit.unwrap_or(usize::MAX)).collect()
    }

    /// Searches invoices; no paging.
    #[action(read_only, output_schema, items = "invoices")]
    fn search(&self, args: Search) -> Json<Page> {
        let query = args.query.unwrap_or_default();
        let invoices: Vec<Invoice> = invoices()
            .into_iter()
            .filter(|i| i.id.contains(&query))
            .collect();
        Json(Page {
            total: invoices.len(),
            invoices,
        })
    }

    /// Answers `bytes` bytes of text, in two-byte characters when odd counts allow.
    #[action(read_only)]
    fn text(&self, args: Sized) -> String {
        "é".repeat(args.bytes / 2) + &"a".repeat(args.bytes % 2)
    }

    /// One invoice with a long note, in a list.
    #[action(read_only, max_result = 64)]
    fn huge(&self) -> Vec<Value> {
        vec![json!({"note": "x".repeat(500)}), json!({"note": "y"})]
    }
}

async fn call(client: &Client, arguments: Value) -> CallToolResult {
    call_tool(client, "billing", arguments).await
}

fn flags(result: &CallToolResult) -> Value {
    result.meta.clone().expect("a _meta").0["fusion/error"].clone()
}

/// The arguments of the next call, as the warning's recovery gives them.
fn next_arguments(warning: &str) -> Value {
    let start = warning.find("Call again with ").expect("a next call") + "Call again with ".len();
    let end = warning[start..].find(" for the next items").unwrap() + start;
    serde_json::from_str(&warning[start..end]).expect("JSON arguments")
}

#[tokio::test]
async fn a_long_list_comes_in_pages_the_model_can_walk() {
    let client = connect(Server::new("billing", "1.0.0").tool(Billing)).await;
    let mut arguments = json!({"action": "list_invoices", "status": "open"});
    let mut seen = Vec::new();
    for _ in 0..100 {
        let result = call(&client, arguments.clone()).await;
        assert_eq!(result.is_error, Some(false));
        let blocks = texts(&result);
        assert!(blocks[0].len() <= 200, "{} bytes", blocks[0].len());
        let page: Vec<Invoice> = serde_json::from_str(blocks[0]).unwrap();
        assert!(!page.is_empty());
        seen.extend(page.into_iter().map(|i| i.id));
        match blocks.get(1) {
            None => break,
            Some(warning) => {
                assert!(
                    warning
                        .starts_with("<tool_error code=\"RESULT_TRUNCATED\" severity=\"warning\">"),
                    "{warning}"
                );
                let flags = flags(&result);
                assert_eq!(flags["code"], "RESULT_TRUNCATED");
                assert_eq!(flags["isError"], false);
                assert_eq!(flags["errorCategory"], "validation");
                assert_eq!(flags["isRetryable"], false);
                arguments = next_arguments(warning);
                assert_eq!(arguments["status"], "open", "the filter is kept");
            }
        }
    }
    // fusion's client reads the first page's warning as the typed code.
    let first = call(&client, json!({"action": "list_invoices"})).await;
    let read = fusion::client::read_result(first).expect("a success");
    assert_eq!(read.warnings()[0].code(), &ErrorCode::ResultTruncated);
    assert_eq!(read.warnings()[0].detail_value("total"), Some("100"));
    let refused = call(&client, json!({"action": "huge"})).await;
    let Err(fusion::client::CallError::Tool(failure)) = fusion::client::read_result(refused) else {
        panic!("a tool failure");
    };
    assert_eq!(failure.flags().code, ErrorCode::ResultTruncated);
    assert!(!failure.flags().retryable);
    let expected: Vec<String> = invoices().into_iter().map(|i| i.id).collect();
    assert_eq!(seen, expected, "every invoice once, in order");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_first_page_names_its_size_and_the_exact_next_call() {
    let tester = Tester::new().tool(Billing);
    let outcome = tester.call("billing.list_invoices", json!({})).await;
    // 6 items of 31 bytes, 5 commas and 2 brackets: 193 bytes; a seventh would make 225.
    outcome
        .assert_success()
        .assert_warning(ErrorCode::ResultTruncated);
    let warning = &outcome.response().warnings()[0];
    assert_eq!(warning.detail_value("returned"), Some("6"));
    assert_eq!(warning.detail_value("total"), Some("100"));
    assert_eq!(
        warning.message(),
        "The result was cut to fit the limit of 200 bytes: 6 of 100 items were returned."
    );
    assert_eq!(
        warning.recovery(),
        Some("Call again with {\"offset\":6} for the next items.")
    );
}

#[tokio::test]
async fn a_result_exactly_at_the_limit_is_whole() {
    let tester = Tester::new()
        .tool(Billing)
        .max_result(Some(ResultLimit::bytes(300)));
    let at = tester.call("billing.text", json!({"bytes": 300})).await;
    at.assert_success();
    assert!(at.response().warnings().is_empty());
    assert_eq!(at.response().payload().unwrap().len(), 300);

    let over = tester.call("billing.text", json!({"bytes": 301})).await;
    over.assert_error(ErrorCode::ResultTruncated)
        .assert_severity(Severity::Error)
        .assert_recovery("Narrow the query with 'bytes' so the result is smaller.");
    assert_eq!(
        over.response().tool_error().unwrap().message(),
        "The result was 301 bytes, over the limit of 300 bytes; it was not returned."
    );
}

#[tokio::test]
async fn text_over_the_limit_is_refused_whole_never_split_inside_a_character() {
    let client = connect(
        Server::new("billing", "1.0.0")
            .tool(Billing)
            .max_result(Some(ResultLimit::tokens(10))),
    )
    .await;
    // 41 bytes of two-byte characters: over 40 bytes (10 tokens) by one byte.
    let result = call(&client, json!({"action": "text", "bytes": 41})).await;
    assert_eq!(result.is_error, Some(true));
    let blocks = texts(&result);
    assert_eq!(blocks.len(), 1);
    assert!(
        blocks[0].contains("The result was 11 tokens, over the limit of 10 tokens"),
        "{}",
        blocks[0]
    );
    assert!(result.structured_content.is_none());
    let whole = call(&client, json!({"action": "text", "bytes": 40})).await;
    assert_eq!(texts(&whole), ["é".repeat(20)]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_single_item_over_the_limit_is_an_error_not_an_empty_page() {
    let tester = Tester::new().tool(Billing);
    let outcome = tester.call("billing.huge", json!({})).await;
    outcome
        .assert_error(ErrorCode::ResultTruncated)
        .assert_severity(Severity::Error)
        .assert_category(fusion::ErrorCategory::Validation)
        .assert_retryable(false);
    assert!(outcome.response().payload().is_none());
}

#[tokio::test]
async fn a_list_inside_structured_content_is_cut_the_same_and_still_conforms() {
    let client = connect(
        Server::new("billing", "1.0.0")
            .tool(Billing)
            .max_result(Some(ResultLimit::bytes(150))),
    )
    .await;
    let result = call(&client, json!({"action": "search", "query": "inv_0"})).await;
    assert_eq!(result.is_error, Some(false));
    let blocks = texts(&result);
    let payload: Value = serde_json::from_str(blocks[0]).unwrap();
    assert!(blocks[0].len() <= 150);
    assert_eq!(payload["total"], 100, "the rest of the object is kept");
    let kept = payload["invoices"].as_array().unwrap().len();
    assert!((1..100).contains(&kept), "{kept}");
    assert_eq!(result.structured_content.as_ref(), Some(&payload));
    // The cut result still reads as the output type.
    let _: Page = serde_json::from_value(payload).unwrap();
    assert!(
        blocks[1].contains(
            "<recovery>Narrow the query with 'query' so the result is smaller.</recovery>"
        ),
        "{}",
        blocks[1]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn deep_and_huge_results_are_answered_well_formed() {
    let tester = Tester::new()
        .tool(Billing)
        .max_result(Some(ResultLimit::bytes(1_000)));
    let huge = tester
        .call("billing.text", json!({"bytes": 5_000_000}))
        .await;
    huge.assert_error(ErrorCode::ResultTruncated);
    let zero = Tester::new()
        .tool(Billing)
        .max_result(Some(ResultLimit::bytes(0)));
    zero.call("billing.search", json!({}))
        .await
        .assert_error(ErrorCode::ResultTruncated);
}

#[tokio::test]
async fn no_limit_leaves_results_whole() {
    let tester = Tester::new().tool(Billing);
    let outcome = tester.call("billing.search", json!({})).await;
    outcome.assert_success();
    assert!(outcome.response().warnings().is_empty());
}

#[test]
fn an_action_with_its_own_limit_declares_result_truncated() {
    let definition = Billing.definition();
    let codes = |name: &str| -> Vec<String> {
        let action = definition.actions.iter().find(|a| a.name == name).unwrap();
        action
            .errors
            .iter()
            .map(|e| e.code.as_str().to_owned())
            .collect()
    };
    assert!(codes("list_invoices").contains(&"RESULT_TRUNCATED".to_owned()));
    assert!(!codes("search").contains(&"RESULT_TRUNCATED".to_owned()));
    let list = definition
        .actions
        .iter()
        .find(|a| a.name == "list_invoices")
        .unwrap();
    assert_eq!(list.result.max_result, Some(ResultLimit::bytes(200)));
    assert_eq!(list.result.page.as_ref().unwrap().offset, "offset");
    let _unused: Map<String, Value> = Map::new();
}
