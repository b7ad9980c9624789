//! The next call a cut list names: built from the arguments as the action read them (a
//! stringified offset decoded), a limit sent reduced by the items returned so that a walk
//! returns what was asked for, only the paging arguments when the rest is long; the cut's
//! warning first among the flags; text never cut; paging names checked at registration.

use fusion::testing::Tester;
use fusion::{ErrorCode, ResultLimit, Severity};
use serde_json::{Value, json};

#[path = "support/paged.rs"]
mod paged;
use paged::{Paged, ids};

/// Listings.
struct Pages;

/// Lists in pages.
#[fusion::tool]
impl Pages {
    /// Lists ids, a page at a time.
    #[action(read_only, max_result = 40, page(offset = "offset", limit = "limit"))]
    fn ids(&self, args: Paged) -> Vec<String> {
        ids(&args)
    }

    /// Every id, with no way to page or narrow.
    #[action(read_only, max_result = 40)]
    fn all(&self) -> Vec<String> {
        ids(&Paged::default())
    }

    /// Every id as text that happens to hold a JSON array; limited by the server's setting.
    #[action(read_only)]
    fn text(&self) -> String {
        serde_json::to_string(&ids(&Paged::default())).unwrap()
    }
}

/// The arguments of the next call a cut list's warning names.
fn next_call(recovery: &str) -> Value {
    let start = recovery.find('{').expect("arguments in the recovery");
    let end = recovery.rfind('}').expect("arguments in the recovery");
    serde_json::from_str(&recovery[start..=end]).expect("JSON arguments")
}

fn warning_recovery(outcome: &fusion::testing::Outcome) -> String {
    let warning = &outcome.response().warnings()[0];
    assert_eq!(warning.code(), &ErrorCode::ResultTruncated);
    warning.recovery().expect("a recovery").to_owned()
}

#[tokio::test]
async fn a_stringified_offset_moves_forward_as_if_sent_as_a_number() {
    let tester = Tester::new().tool(Pages);
    let outcome = tester
        .call("pages.ids", json!({"offset": "6", "limit": "8"}))
        .await;
    assert_eq!(
        outcome.response().payload(),
        Some(r#"["id_06","id_07","id_08","id_09"]"#)
    );
    // The cut is the first warning, so it is the one the flags carry; the decoding note follows.
    let warnings = outcome.response().warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(
        outcome.response().flags().unwrap()["code"],
        "RESULT_TRUNCATED"
    );
    assert_eq!(
        next_call(&warning_recovery(&outcome)),
        json!({"offset": 10, "limit": 4}),
        "numbers, past the items returned, as many more as were asked for"
    );
}

#[tokio::test]
async fn walking_with_a_limit_returns_exactly_the_items_asked_for() {
    let tester = Tester::new().tool(Pages);
    let mut arguments = json!({"offset": 3, "limit": 7});
    let mut seen = Vec::new();
    for _ in 0..10 {
        let outcome = tester.call("pages.ids", arguments.clone()).await;
        outcome.assert_success();
        let page: Vec<String> =
            serde_json::from_str(outcome.response().payload().unwrap()).unwrap();
        seen.extend(page);
        if outcome.response().warnings().is_empty() {
            break;
        }
        arguments = next_call(&warning_recovery(&outcome));
    }
    let expected: Vec<String> = (3..10).map(|i| format!("id_{i:02}")).collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn long_arguments_are_not_repeated_in_the_next_call() {
    let tester = Tester::new().tool(Pages);
    let query = "n".repeat(100_000);
    let outcome = tester.call("pages.ids", json!({"query": query})).await;
    let recovery = warning_recovery(&outcome);
    assert_eq!(
        recovery,
        r#"Call again with the same arguments but {"offset":4} for the next items."#
    );
    let warning_xml = outcome.response().warnings()[0].to_xml();
    assert!(warning_xml.len() < 1_000, "{} bytes", warning_xml.len());
    // Short arguments are written out whole.
    let outcome = tester.call("pages.ids", json!({"query": "n"})).await;
    assert_eq!(
        next_call(&warning_recovery(&outcome)),
        json!({"query": "n", "offset": 4})
    );
}

#[tokio::test]
async fn a_list_that_cannot_be_paged_or_narrowed_says_so() {
    let outcome = Tester::new().tool(Pages).call("pages.all", json!({})).await;
    outcome.assert_success();
    assert_eq!(
        warning_recovery(&outcome),
        "The other items cannot be fetched: this action takes no arguments to page or narrow its result."
    );
}

#[tokio::test]
async fn text_holding_json_is_never_cut() {
    let tester = Tester::new()
        .tool(Pages)
        .max_result(Some(ResultLimit::bytes(40)));
    let outcome = tester.call("pages.text", json!({})).await;
    outcome
        .assert_error(ErrorCode::ResultTruncated)
        .assert_severity(Severity::Error)
        .assert_recovery(
            "Do not call this action again the same way: it takes no arguments to narrow its result.",
        );
    // The same text under a limit it fits comes whole, byte for byte.
    let roomy = Tester::new()
        .tool(Pages)
        .max_result(Some(ResultLimit::bytes(1_000)));
    let whole = roomy.call("pages.text", json!({})).await;
    whole.assert_success();
    let text = serde_json::to_string(&ids(&Paged::default())).unwrap();
    assert_eq!(whole.response().payload(), Some(text.as_str()));
    assert!(whole.response().warnings().is_empty());
}

/// Paging that names arguments the action does not take.
struct Misnamed;

/// Lists in pages, wrongly declared.
#[fusion::tool]
impl Misnamed {
    /// Lists ids.
    #[action(read_only, max_result = 40, page(offset = "skip", limit = "limit"))]
    fn ids(&self, args: Paged) -> Vec<String> {
        ids(&args)
    }
}

#[test]
#[should_panic(
    expected = "tool `misnamed`, action `ids`: page(offset = \"skip\") names no argument of the action (its arguments: limit, offset, query)"
)]
fn paging_that_names_no_argument_is_refused_at_registration() {
    let _ = Tester::new().tool(Misnamed);
}
