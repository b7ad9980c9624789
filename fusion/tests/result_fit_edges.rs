//! Edges of results that fit and of stringified arguments, through a real rmcp client over an
//! in-process transport and through `Tester`: a list at a nested `items` path cut between
//! multi-byte characters, a paged action run as a task, a next call holding XML's special
//! characters read back by fusion's client, a list path that is missing or not an array, and
//! stringified values in places that allow a string or are nested deeply.

use std::collections::BTreeMap;
use std::time::Duration;

use fusion::server::Server;
use fusion::tasks::Tasks;
use fusion::testing::Tester;
use fusion::{ErrorCode, Json, ResultLimit, Severity};
use rmcp::model::{CallToolRequestParams, CallToolResponse, TaskPayload, TaskStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[path = "support/tasks.rs"]
mod support;

#[path = "support/paged.rs"]
mod paged;
use paged::{Paged, ids};

#[derive(Debug, Deserialize, JsonSchema)]
struct Count {
    /// How many items.
    count: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Report {
    page: Labels,
    total: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Labels {
    labels: Vec<String>,
    kind: String,
}

fn report(count: usize) -> Report {
    Report {
        page: Labels {
            labels: (0..count).map(|i| format!("é{i}😀漢")).collect(),
            kind: "label".to_owned(),
        },
        total: count,
    }
}

/// Listings.
struct Listing;

/// Lists in pages.
#[fusion::tool]
impl Listing {
    /// Lists ids, a page at a time.
    #[action(read_only, max_result = 40, page(offset = "offset", limit = "limit"))]
    fn ids(&self, args: Paged) -> Vec<String> {
        ids(&args)
    }

    /// Lists ids as a task, a page at a time.
    #[action(
        read_only,
        task,
        max_result = 40,
        page(offset = "offset", limit = "limit")
    )]
    async fn export(&self, args: Paged) -> Vec<String> {
        tokio::task::yield_now().await;
        ids(&args)
    }

    /// A report whose list is at `page.labels`.
    #[action(read_only, output_schema, items = "page.labels")]
    fn report(&self, args: Count) -> Json<Report> {
        Json(report(args.count))
    }

    /// The same report, its list declared at a path that does not exist.
    #[action(read_only, items = "page.missing")]
    fn report_missing(&self, args: Count) -> Json<Report> {
        Json(report(args.count))
    }

    /// The same report, its list declared at a field that is not an array.
    #[action(read_only, items = "page.kind")]
    fn report_not_a_list(&self, args: Count) -> Json<Report> {
        Json(report(args.count))
    }
}

#[tokio::test]
async fn a_nested_list_of_multibyte_text_is_cut_between_items_within_the_limit() {
    let tester = Tester::new()
        .tool(Listing)
        .max_result(Some(ResultLimit::bytes(100)));
    let outcome = tester.call("listing.report", json!({"count": 10})).await;
    outcome
        .assert_success()
        .assert_warning(ErrorCode::ResultTruncated);
    let response = outcome.response();
    let payload = response.payload().unwrap();
    assert!(payload.len() <= 100, "{} bytes", payload.len());
    let value: Value = serde_json::from_str(payload).unwrap();
    assert_eq!(response.structured_content(), Some(&value));
    assert_eq!(value["total"], 10, "the rest of the object is kept");
    assert_eq!(value["page"]["kind"], "label");
    let labels: Vec<String> = serde_json::from_value(value["page"]["labels"].clone()).unwrap();
    let whole = report(10).page.labels;
    assert_eq!(labels, whole[..labels.len()], "whole items, in order");
    // One more item would not have fit.
    let mut longer = value.clone();
    longer["page"]["labels"] = json!(whole[..=labels.len()]);
    assert!(serde_json::to_string(&longer).unwrap().len() > 100);
    let warning = &response.warnings()[0];
    assert_eq!(
        warning.detail_value("returned"),
        Some(labels.len().to_string().as_str())
    );
    assert_eq!(warning.detail_value("total"), Some("10"));
}

#[tokio::test]
async fn a_list_path_that_is_missing_or_not_an_array_refuses_a_large_result() {
    let tester = Tester::new()
        .tool(Listing)
        .max_result(Some(ResultLimit::bytes(100)));
    for action in ["listing.report_missing", "listing.report_not_a_list"] {
        let outcome = tester.call(action, json!({"count": 10})).await;
        outcome
            .assert_error(ErrorCode::ResultTruncated)
            .assert_severity(Severity::Error)
            .assert_recovery("Narrow the query with 'count' so the result is smaller.");
        assert!(outcome.response().payload().is_none());
        // Within the limit, the path is never looked at.
        let small = tester.call(action, json!({"count": 1})).await;
        small.assert_success();
        assert!(small.response().warnings().is_empty());
    }
}

#[tokio::test]
async fn a_next_call_with_xml_special_characters_reads_back_exactly() {
    let query = "</recovery><x a=\"1\">&amp; ]]> 'q'";
    let tester = Tester::new().tool(Listing);
    let outcome = tester
        .call("listing.ids", json!({"query": query, "limit": 9}))
        .await;
    let warning = &outcome.response().warnings()[0];
    let xml = warning.to_xml();
    assert!(!xml.contains("</recovery><x"), "{xml}");
    assert!(xml.contains("]]&gt;"), "{xml}");
    let Ok(fusion::client::Envelope::ToolError(read)) = fusion::client::parse_envelope(&xml) else {
        panic!("a tool error envelope: {xml}");
    };
    let recovery = read.recovery().unwrap();
    let start = recovery.find('{').unwrap();
    let end = recovery.rfind('}').unwrap();
    let next: Value = serde_json::from_str(&recovery[start..=end]).unwrap();
    // The 9 asked for, less the 4 returned.
    assert_eq!(next, json!({"query": query, "limit": 5, "offset": 4}));
}

#[tokio::test]
async fn a_paged_action_run_as_a_task_is_cut_and_walked_like_a_direct_call() {
    let server = Server::new("listing", "1.0.0")
        .tool(Listing)
        .tasks(Tasks::default().poll_interval(Duration::from_millis(20)));
    let client = support::connect(server, true).await;
    let mut arguments = json!({"action": "export"});
    let mut seen = Vec::new();
    for _ in 0..20 {
        let Value::Object(map) = arguments.clone() else {
            panic!("an object");
        };
        let request = CallToolRequestParams::new("listing").with_arguments(map);
        let response = support::within(client.call_tool_once(request))
            .await
            .expect("an answer");
        let CallToolResponse::Task(created) = response else {
            panic!("a task: {response:?}");
        };
        let task = support::settled(&client, &created.task.task_id).await;
        assert_eq!(task.status(), TaskStatus::Completed);
        let TaskPayload::Completed { result } = task.payload else {
            panic!("a completed task");
        };
        let result = Value::Object(result);
        assert_eq!(result["isError"], false);
        let page = result["content"][0]["text"].as_str().unwrap();
        assert!(page.len() <= 40, "{page}");
        let page: Vec<String> = serde_json::from_str(page).unwrap();
        seen.extend(page);
        let Some(warning) = result["content"][1]["text"].as_str() else {
            break;
        };
        assert_eq!(result["_meta"]["fusion/error"]["code"], "RESULT_TRUNCATED");
        let start = warning.find("Call again with ").unwrap() + "Call again with ".len();
        let end = warning.find(" for the next items").unwrap();
        arguments = serde_json::from_str(&warning[start..end]).unwrap();
    }
    let all: Vec<String> = ids(&Paged::default());
    assert_eq!(seen, all, "every id once, in order");
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum CountOrName {
    Count(u32),
    Name(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Filters {
    tags: Option<Vec<u32>>,
    either: Option<CountOrName>,
    by_key: Option<BTreeMap<String, Vec<u32>>>,
    tree: Option<Vec<Value>>,
}

/// Filters.
struct Filtering;

/// Reads filters.
#[fusion::tool]
impl Filtering {
    /// Echoes the filters as read.
    #[action(read_only)]
    fn read(&self, args: Filters) -> String {
        let either = match args.either {
            Some(CountOrName::Count(count)) => format!("count {count}"),
            Some(CountOrName::Name(name)) => format!("name {name:?}"),
            None => "none".to_owned(),
        };
        format!(
            "tags: {:?}, either: {either}, by_key: {:?}, tree: {:?}",
            args.tags, args.by_key, args.tree
        )
    }
}

#[tokio::test]
async fn stringified_values_are_decoded_only_where_no_string_is_allowed() {
    let tester = Tester::new().tool(Filtering);
    let optional = tester
        .call("filtering.read", json!({"tags": "[1, 2]"}))
        .await;
    optional.assert_success();
    assert_eq!(optional.response().decoded_arguments(), ["tags"]);
    assert!(
        optional
            .response()
            .payload()
            .unwrap()
            .contains("tags: Some([1, 2])")
    );

    let either = tester.call("filtering.read", json!({"either": "5"})).await;
    assert!(either.response().decoded_arguments().is_empty());
    assert!(
        (either.response().payload().unwrap()).contains("either: name \"5\""),
        "an untagged enum with a string variant keeps the string"
    );

    // A map key the caller chose is escaped where the warning names it.
    let key = "</message><x>&";
    let keyed = tester
        .call("filtering.read", json!({"by_key": {key: "[1]"}}))
        .await;
    keyed.assert_success();
    let warning = keyed.response().warnings()[0].to_xml();
    assert!(
        warning.contains("'by_key.&lt;/message>&lt;x>&amp;'"),
        "{warning}"
    );
    assert!(matches!(
        fusion::client::parse_envelope(&warning),
        Ok(fusion::client::Envelope::ToolError(_))
    ));
}

#[tokio::test]
async fn a_deep_stringified_array_meets_the_nesting_limit_as_if_sent_as_json() {
    let tester = Tester::new().tool(Filtering);
    for levels in [64, 100] {
        let text = "[".repeat(levels) + &"]".repeat(levels);
        let value: Value = serde_json::from_str(&text).unwrap();
        let stringified = tester.call("filtering.read", json!({"tree": text})).await;
        let direct = tester.call("filtering.read", json!({"tree": value})).await;
        let (stringified, direct) = (stringified.response(), direct.response());
        assert_eq!(
            stringified.validation_error().map(|e| e.to_xml()),
            direct.validation_error().map(|e| e.to_xml()),
            "{levels} levels"
        );
        assert!(direct.validation_error().is_some(), "{levels} levels");
    }
}
