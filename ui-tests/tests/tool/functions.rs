//! Function tools and tools on generic impls.

use fusion::{ErrorCode, RequestContext, Tool, ToolError, ToolExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{call, envelope, object, payload};

// --- function tools ---------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
pub(super) struct CalculatorArgs {
    /// The left operand.
    a: f64,
    /// The right operand.
    b: f64,
    /// `+`, `-`, `*` or `/`.
    op: String,
}

/// Evaluates one arithmetic operation.
#[fusion::tool]
#[action(read_only, idempotent, open_world = false)]
pub(super) fn calculator(args: CalculatorArgs) -> Result<f64, ToolError> {
    match args.op.as_str() {
        "+" => Ok(args.a + args.b),
        "-" => Ok(args.a - args.b),
        "*" => Ok(args.a * args.b),
        "/" if args.b == 0.0 => Err(ToolError::new(
            ErrorCode::ValidationError,
            "Division by zero.",
        )
        .suggest("Use a non-zero divisor.")),
        "/" => Ok(args.a / args.b),
        other => Err(ToolError::new(
            ErrorCode::ValidationError,
            format!("Unknown operator '{other}'."),
        )),
    }
}

#[derive(Deserialize, JsonSchema)]
pub(super) struct WeatherArgs {
    city: String,
}

/// Current weather of a city.
#[fusion::tool(name = "get_weather")]
pub(super) async fn weather(args: WeatherArgs, ctx: &RequestContext) -> String {
    tokio::task::yield_now().await;
    format!(
        "{}: sunny (for {})",
        args.city,
        ctx.client().unwrap_or("anonymous")
    )
}

#[tokio::test]
async fn a_sync_function_tool_takes_its_arguments_without_a_discriminator() {
    let sum = call(Calculator, json!({"a": 2, "b": 3.5, "op": "+"})).await;
    assert_eq!(payload(&sum), "5.5");
    let error = call(Calculator, json!({"a": 1, "b": 0, "op": "/"})).await;
    assert_eq!(error.tool_error().unwrap().message(), "Division by zero.");
    // The function stays callable as before.
    assert_eq!(
        calculator(CalculatorArgs {
            a: 2.0,
            b: 2.0,
            op: "*".into()
        })
        .unwrap(),
        4.0
    );
}

#[tokio::test]
async fn a_function_tools_validation_error_names_the_tool_alone() {
    let response = call(
        Calculator,
        json!({"a": "two", "b": 3, "op": "+", "action": "x"}),
    )
    .await;
    assert_eq!(
        envelope(&response),
        "<validation_error action=\"calculator\">
<field name=\"a\">Wrong type. You sent: 'two'. Expected a number.</field>
<field name=\"action\">Unknown field. You sent: 'x'. Expected one of the known fields: a, b, op.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"
    );
}

#[tokio::test]
async fn an_async_function_tool_gets_the_context() {
    let response = Weather
        .call(
            object(json!({"city": "Lisbon"})),
            RequestContext::new().with_client("cli"),
        )
        .await;
    assert_eq!(payload(&response), "Lisbon: sunny (for cli)");
}

// --- generic tools ----------------------------------------------------------------------------

pub(super) trait Store: Send + Sync + 'static {
    fn get(&self, key: &str) -> Option<String>;
}

pub(super) struct Fixed;
impl Store for Fixed {
    fn get(&self, key: &str) -> Option<String> {
        (key == "sku_1").then(|| "3 in stock".to_owned())
    }
}

/// Stock levels.
pub(super) struct Inventory<S> {
    store: S,
}

#[derive(Deserialize, JsonSchema)]
pub(super) struct Lookup {
    sku: String,
}

// One action, and a named discriminator: callers name the action, so adding one later
// changes nothing for them.
#[fusion::tool(discriminator = "action")]
impl<S: Store> Inventory<S> {
    /// The stock of one SKU.
    #[action]
    fn stock(&self, args: Lookup) -> Result<String, ToolError> {
        self.store
            .get(&args.sku)
            .ok_or_else(|| ToolError::not_found(format!("No SKU '{}'.", args.sku)))
    }
}

#[tokio::test]
async fn a_tool_on_a_generic_impl_works() {
    let inventory = std::sync::Arc::new(Inventory { store: Fixed });
    let found = call(&inventory, json!({"action": "stock", "sku": "sku_1"})).await;
    assert_eq!(payload(&found), "3 in stock");
    assert_eq!(inventory.definition().name, "inventory");
}
