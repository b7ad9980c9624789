//! Argument limits: arguments nested too deep or too large are refused naming the limit, by the
//! server and by the tester alike.

use fusion::guard::Guards;
use fusion::server::Server;
use fusion::testing::Tester;
use serde_json::{Value, json};

use super::support::{Jobs, call, connect, text};

fn nested(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 1..levels {
        value = json!({ "inner": value });
    }
    value
}

#[tokio::test]
async fn argument_depth_and_size_limits_name_the_limit() {
    let server = Server::new("jobs", "1")
        .tool(Jobs::default())
        .max_argument_depth(Some(4))
        .max_argument_bytes(Some(200));
    let client = connect(server, "limits").await;
    let mut arguments = nested(6);
    arguments["action"] = json!("work");
    let deep = call(&client, "jobs", arguments).await;
    assert_eq!(
        text(&deep),
        "<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">\n\
         <message>The arguments are nested 5 levels deep; the limit is 4 levels of objects and arrays.</message>\n\
         <recovery>Send arguments nested at most 4 levels deep: flatten the deepest values.</recovery>\n\
         </tool_error>"
    );
    let large = call(
        &client,
        "jobs",
        json!({"action": "work", "pad": "x".repeat(300)}),
    )
    .await;
    assert!(
        text(&large).contains("over 200 bytes of JSON"),
        "{}",
        text(&large)
    );

    // The tester applies the same limits from the same configuration.
    let guards = Guards::new().max_argument_depth(Some(4));
    let tester = Tester::new().tool(Jobs::default()).guards(guards);
    let mut arguments = nested(6);
    arguments["millis"] = json!(1);
    tester
        .call("jobs.work", arguments)
        .await
        .assert_error("VALIDATION_ERROR");
}
