//! Arguments sent as strings holding JSON (`{"items": "[{\"sku\": \"a\", \"qty\": 1}]"}`), as
//! some clients send arrays and objects: read as the JSON they hold where the schema wants
//! JSON, never where it allows a string; through a real rmcp client over an in-process
//! transport, and through `Tester`. The proptest: sending a value as a string holding its JSON
//! gives the same envelope as sending it as JSON; its twin is the `stringified` fuzz target
//! (`fuzz/`), and both use `tests/support/stringified.rs`.

use fusion::RequestContext;
use fusion::server::Server;
use fusion::testing::Tester;
use proptest::prelude::*;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

#[path = "support/in_process.rs"]
mod in_process;

#[path = "support/stringified.rs"]
#[allow(
    unreachable_pub,
    reason = "public for the fuzz crate, which includes the file too"
)]
mod stringified;

use in_process::{Client, call_tool, connect, texts};
use stringified::{Shop, decodable, same_envelopes};

const WARNING: &str = "\
<tool_error code=\"VALIDATION_ERROR\" severity=\"warning\">
<message>The argument 'items' was sent as a string holding JSON; it was read as the array in that string.</message>
<recovery>Send 'items' as an array itself, not as a string, in later calls.</recovery>
</tool_error>";

async fn call(client: &Client, arguments: Value) -> CallToolResult {
    call_tool(client, "shop", arguments).await
}

fn meta(result: &CallToolResult) -> Map<String, Value> {
    result.meta.clone().map(|m| m.0).unwrap_or_default()
}

#[tokio::test]
async fn a_stringified_array_is_read_as_the_array_and_the_session_is_told_once() {
    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let sent = json!({
        "action": "order",
        "items": "[{\"sku\": \"a\", \"qty\": 1}]",
        "note": "[\"not\", \"an\", \"array\"]"
    });
    let first = call(&client, sent.clone()).await;
    assert_eq!(first.is_error, Some(false));
    let blocks = texts(&first);
    let payload: Value = serde_json::from_str(blocks[0]).unwrap();
    assert_eq!(payload["items"], json!([{"sku": "a", "qty": 1}]));
    // A string field is never parsed, whatever it looks like.
    assert_eq!(payload["note"], "[\"not\", \"an\", \"array\"]");
    assert_eq!(blocks[1], WARNING);
    let meta = meta(&first);
    assert_eq!(meta["fusion/decoded"], json!(["items"]));
    assert_eq!(meta["fusion/error"]["isError"], false);
    assert_eq!(meta["fusion/error"]["code"], "VALIDATION_ERROR");

    // The same session is told once: later results carry the `_meta` flag only.
    let again = call(&client, sent).await;
    assert_eq!(texts(&again).len(), 1);
    let meta = self::meta(&again);
    assert_eq!(meta["fusion/decoded"], json!(["items"]));
    assert!(!meta.contains_key("fusion/error"));

    // A call sending JSON as JSON carries no flag.
    let plain = call(&client, json!({"action": "order", "items": []})).await;
    assert!(plain.meta.is_none());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_decoded_value_that_is_invalid_is_refused_as_if_sent_as_json() {
    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let items = json!([{"sku": "a", "qty": -1}, {"sku": 7}]);
    let direct = call(&client, json!({"action": "order", "items": items})).await;
    let stringified = call(
        &client,
        json!({"action": "order", "items": items.to_string(), "priority": "300"}),
    )
    .await;
    let direct_texts = texts(&direct);
    assert_eq!(direct.is_error, Some(true));
    assert_eq!(stringified.is_error, Some(true));
    let got = texts(&stringified)[0];
    assert!(got.contains("<field name=\"items[0].qty\">"), "{got}");
    assert!(got.contains("<field name=\"priority\">"), "{got}");
    let without_priority: Vec<&str> = (got.lines())
        .filter(|line| !line.starts_with("<field name=\"priority\">"))
        .collect();
    assert_eq!(without_priority.join("\n"), direct_texts[0]);
    assert_eq!(
        meta(&stringified)["fusion/decoded"],
        json!(["items", "priority"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn strict_actions_and_servers_that_turn_it_off_refuse_the_string() {
    let sent = json!({"action": "strict_order", "items": "[]"});
    let refusal = "<field name=\"items\">Wrong type. You sent: '[]'. Expected an array.</field>";

    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let strict = call(&client, sent).await;
    assert_eq!(strict.is_error, Some(true));
    assert!(texts(&strict)[0].contains(refusal), "{}", texts(&strict)[0]);
    assert!(!meta(&strict).contains_key("fusion/decoded"));
    client.cancel().await.unwrap();

    let off = Server::new("shop", "1.0.0")
        .tool(Shop)
        .decode_stringified_arguments(false);
    let client = connect(off).await;
    let refused = call(&client, json!({"action": "order", "items": "[]"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(texts(&refused)[0].contains(refusal));
    client.cancel().await.unwrap();

    let tester = Tester::new().tool(Shop).decode_stringified_arguments(false);
    let outcome = tester.call("shop.order", json!({"items": "[]"})).await;
    outcome.assert_error("VALIDATION_ERROR");
}

#[tokio::test]
async fn decoded_arguments_meet_the_limits_as_decoded() {
    // `1e9` is four bytes as sent and twelve as read (`1000000000.0`).
    let numbers = format!("[{}]", vec!["1e9"; 40].join(","));
    let sent = json!({"action": "order", "items": [], "discount": 1, "note": "x"});
    let mut arguments = sent.as_object().unwrap().clone();
    arguments.insert("items".into(), Value::from(numbers.as_str()));
    let size = serde_json::to_string(&arguments).unwrap().len();
    let client = connect(
        Server::new("shop", "1.0.0")
            .tool(Shop)
            .max_argument_bytes(Some(size + 10)),
    )
    .await;
    let result = call(&client, Value::Object(arguments)).await;
    assert_eq!(result.is_error, Some(true));
    let text = texts(&result)[0];
    assert!(
        text.starts_with("<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">")
            && text.contains(&format!("over {} bytes of JSON", size + 10)),
        "{text}"
    );
    assert_eq!(meta(&result)["fusion/decoded"], json!(["items"]));
    client.cancel().await.unwrap();

    // Deeper than the validator allows once read: refused for its depth, like sent JSON.
    let deep = format!("{}{}", "[".repeat(80), "]".repeat(80));
    let tester = Tester::new().tool(Shop);
    let outcome = tester.call("shop.order", json!({ "items": deep })).await;
    let error = outcome
        .response()
        .validation_error()
        .expect("a validation error");
    assert!(
        error.to_xml().contains("Arguments nested too deeply"),
        "{}",
        error.to_xml()
    );
}

/// An array nested `levels` deep (`[[[]]]` is 3).
fn nested(levels: usize) -> Value {
    (1..levels).fold(json!([]), |inner, _| Value::Array(vec![inner]))
}

#[tokio::test]
async fn json_nested_deeper_than_the_parser_reads_is_refused_for_its_depth_like_sent_json() {
    // serde_json reads 127 levels at most: 130 levels in a string cannot be read, yet the
    // call gets the refusal the same array sent as JSON gets (no transport reads 130 levels:
    // the tester sends it in memory).
    let direct: Map<String, Value> = [("items".to_owned(), nested(130))].into_iter().collect();
    let stringified = [("items".to_owned(), false)];
    let tester = Tester::new().tool(Shop);
    same_envelopes(&tester, &direct, &stringified)
        .await
        .unwrap();
    let outcome = tester
        .call("shop.order", Value::Object(direct.clone()))
        .await;
    let envelope = outcome.response().content_texts()[0].to_owned();
    assert!(
        envelope.contains(
            "<field name=\"(root)\">Arguments nested too deeply. You sent: an object nested 131 \
             levels deep. Expected at most 64 levels of nesting.</field>"
        ),
        "{envelope}"
    );

    // Through a real client, the string arrives (only the JSON in it is deep) and gets the
    // same envelope.
    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let sent = json!({"action": "order", "items": nested(130).to_string()});
    let result = call(&client, sent).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result)[0], envelope);
    assert_eq!(meta(&result)["fusion/decoded"], json!(["items"]));
    client.cancel().await.unwrap();

    // A server limit on nesting refuses it first, counting the same depth.
    let guards = || fusion::guard::Guards::new().max_argument_depth(Some(100));
    let limited = Tester::new().tool(Shop).guards(guards());
    same_envelopes(&limited, &direct, &stringified)
        .await
        .unwrap();
    let outcome = limited.call("shop.order", Value::Object(direct)).await;
    let text = outcome.response().content_texts()[0].to_owned();
    assert!(
        text.contains("The arguments are nested 131 levels deep; the limit is 100 levels"),
        "{text}"
    );
}

#[tokio::test]
async fn a_whole_number_for_a_float_is_to_be_sent_as_a_number() {
    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let sent = json!({"action": "order", "items": [], "discount": "5", "priority": "3"});
    let result = call(&client, sent).await;
    assert_eq!(result.is_error, Some(false));
    let payload: Value = serde_json::from_str(texts(&result)[0]).unwrap();
    assert_eq!(
        (payload["discount"].as_f64(), payload["priority"].as_u64()),
        (Some(5.0), Some(3))
    );
    assert_eq!(
        texts(&result)[1],
        "<tool_error code=\"VALIDATION_ERROR\" severity=\"warning\">
<message>The arguments 'discount' and 'priority' were sent as strings holding JSON; each was read as the value in its string.</message>
<recovery>Send 'discount' as a number and 'priority' as an integer, not as strings, in later calls.</recovery>
</tool_error>"
    );
    client.cancel().await.unwrap();

    // A fresh session is told about the one field, in the words for one.
    let client = connect(Server::new("shop", "1.0.0").tool(Shop)).await;
    let one = call(
        &client,
        json!({"action": "order", "items": [], "discount": "7"}),
    )
    .await;
    assert_eq!(
        texts(&one)[1],
        "<tool_error code=\"VALIDATION_ERROR\" severity=\"warning\">
<message>The argument 'discount' was sent as a string holding JSON; it was read as the number in that string.</message>
<recovery>Send 'discount' as a number itself, not as a string, in later calls.</recovery>
</tool_error>"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_tester_call_with_a_caller_is_told_once_and_without_one_every_time() {
    let tester = Tester::new().tool(Shop);
    let sent = json!({"items": "[]", "gift": "true"});
    for _ in 0..2 {
        let outcome = tester.call("shop.order", sent.clone()).await;
        assert_eq!(outcome.response().warnings().len(), 1);
        assert_eq!(outcome.response().decoded_arguments(), ["gift", "items"]);
    }
    let context = || RequestContext::new().with_caller("session-1");
    let first = tester
        .call_with("shop.order", sent.clone(), context())
        .await;
    assert_eq!(first.response().warnings().len(), 1);
    let second = tester.call_with("shop.order", sent, context()).await;
    assert!(second.response().warnings().is_empty());
    second.assert_json_contains(json!({"gift": true, "items": []}));
}

// --- the decoded path and the direct path give the same envelopes ---------------------------

/// Any JSON value, a few levels deep, leaning on the shapes of `Order`.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..300).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        prop::sample::select(vec!["a", "[1]", "{}", "5", "true", "]]>", "<x>"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let key = prop::sample::select(vec!["sku", "qty", "street", "zip", "other"]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.prop_map(str::to_owned), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Arguments of `shop.order` whose stringifiable fields hold values of the type the schema
/// wants at the top (anything inside), and which of them to send as strings (pretty or not).
fn arguments() -> impl Strategy<Value = (Map<String, Value>, Vec<(String, bool)>)> {
    let items = prop::collection::vec(any_json(), 0..4).prop_map(Value::Array);
    let shipping = prop::collection::vec(
        (
            prop::sample::select(vec!["street", "zip", "other"]).prop_map(str::to_owned),
            any_json(),
        ),
        0..3,
    )
    .prop_map(|pairs| Value::Object(pairs.into_iter().collect()));
    // Whole numbers only: `2.5` is JSON an integer place refuses, so its string is validated as
    // sent (a unit test covers it).
    let integer = prop_oneof![(-5i64..300).prop_map(Value::from), Just(json!(3.0))];
    let number = any::<f64>()
        .prop_filter("finite", |f| f.is_finite())
        .prop_map(Value::from);
    (
        items,
        prop::option::of(shipping),
        prop::option::of(integer),
        prop::option::of(number),
        prop::option::of(any::<bool>().prop_map(Value::from)),
        prop::option::of(any_json()),
        prop::collection::vec((any::<bool>(), any::<bool>()), 5),
    )
        .prop_map(
            |(items, shipping, priority, discount, gift, note, choices)| {
                let mut args = Map::new();
                args.insert("items".into(), items);
                let optional = [
                    ("shipping", shipping),
                    ("priority", priority),
                    ("discount", discount),
                    ("gift", gift),
                ];
                for (name, value) in optional {
                    if let Some(value) = value {
                        args.insert(name.into(), value);
                    }
                }
                if let Some(note) = note {
                    args.insert("note".into(), note);
                }
                let names = ["items", "shipping", "priority", "discount", "gift"];
                let stringified = (names.iter().zip(choices))
                    .filter(|(name, (chosen, _))| {
                        *chosen && args.get(**name).is_some_and(|v| decodable(name, v))
                    })
                    .map(|(name, (_, pretty))| ((*name).to_owned(), pretty))
                    .collect();
                (args, stringified)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_value_sent_as_a_string_of_its_json_gets_the_envelope_of_the_value(
        (direct, stringified) in arguments()
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let tester = Tester::new().tool(Shop);
        let outcome = runtime.block_on(same_envelopes(&tester, &direct, &stringified));
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}
