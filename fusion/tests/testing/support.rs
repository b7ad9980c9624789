//! The tools the tester tests share (a shop, a ledger with its own discriminator, `ping`, two
//! tools whose flat names collide), ready-made outcomes, and a catcher of assertion panics.

use std::panic::{AssertUnwindSafe, catch_unwind};

use fusion::testing::{Outcome, Tester};
use fusion::{RequestContext, ToolError, ToolResponse};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A shop.
pub(crate) struct Shop;

#[derive(Deserialize, JsonSchema, validator::Validate)]
#[serde(deny_unknown_fields)]
/// An order.
pub(crate) struct Order {
    /// The item.
    #[validate(length(min = 3))]
    pub sku: String,
    /// How many.
    #[validate(range(min = 1))]
    pub quantity: u32,
}

/// A shop.
#[fusion::tool]
impl Shop {
    /// Lists items.
    #[action(read_only)]
    pub(crate) fn list_items(&self) -> serde_json::Value {
        json!({"items": [{"sku": "abc", "price": 3}, {"sku": "def", "price": 5}], "total": 2})
    }

    /// Orders an item.
    #[action]
    pub(crate) fn order(&self, args: Order) -> Result<ToolResponse, ToolError> {
        match args.sku.as_str() {
            "abc" => Ok(ToolResponse::json(&json!({"ordered": args.quantity}))
                .with_warning(ToolError::deprecated("Use 'buy' instead."))),
            "busy" => Err(ToolError::rate_limited("Too many orders", 30)
                .suggest("Wait 30 seconds, then order again.")
                .actions(["shop.list_items", "shop.order"])
                .detail("sku", args.sku)),
            _ => Err(ToolError::not_found("No such item")
                .suggest("List items first, then order a listed SKU.")
                .actions(["shop.list_items"])
                .detail("sku", args.sku)),
        }
    }

    /// Always panics.
    #[action]
    pub(crate) fn explode(&self) -> u32 {
        panic!("the warehouse is on fire")
    }

    /// Says who called.
    #[action(read_only)]
    pub(crate) fn whoami(&self, ctx: RequestContext) -> String {
        format!("{}:{}", ctx.client().unwrap_or("-"), ctx.is_cancelled())
    }
}

/// A ledger.
pub(crate) struct Ledger;

/// A ledger with a custom discriminator.
#[fusion::tool(discriminator = "op")]
impl Ledger {
    /// The balance.
    #[action(read_only)]
    pub(crate) fn balance(&self) -> u64 {
        1200
    }
}

#[derive(Deserialize, JsonSchema)]
/// Ping arguments.
pub(crate) struct PingArgs {
    /// What to echo.
    pub text: String,
}

/// Echoes.
#[fusion::tool]
pub(crate) fn ping(args: PingArgs) -> String {
    args.text
}

pub(crate) fn tester() -> Tester {
    Tester::new().tool(Shop).tool(Ledger).tool(Ping)
}

pub(crate) async fn not_found() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "zzz", "quantity": 1}))
        .await
}

pub(crate) async fn rate_limited() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "busy", "quantity": 1}))
        .await
}

pub(crate) async fn warned() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "abc", "quantity": 2}))
        .await
}

pub(crate) async fn invalid() -> Outcome {
    tester()
        .call(
            "shop.order",
            json!({"sku": "a", "quantity": 0, "colour": "red"}),
        )
        .await
}

/// One assertion on an outcome.
pub(crate) type Check = Box<dyn FnOnce(&Outcome)>;

/// Runs `check`, which must panic, and returns its message.
#[track_caller]
pub(crate) fn panic_message(check: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(check)).expect_err("the assertion should panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => (*payload.downcast::<&str>().unwrap()).to_owned(),
    }
}

/// Two tools whose flat names collide: `foo` with action `bar_baz` and `foo_bar` with `baz`.
/// Each names its discriminator, so its one action keeps it (and a flat name).
pub(crate) struct Foo;

#[fusion::tool(discriminator = "action")]
impl Foo {
    /// An action.
    #[action]
    pub(crate) fn bar_baz(&self) -> String {
        "foo".into()
    }
}

/// The second of the colliding tools.
pub(crate) struct FooBar;

#[fusion::tool(discriminator = "action")]
impl FooBar {
    /// An action.
    #[action]
    pub(crate) fn baz(&self) -> String {
        "foo_bar".into()
    }
}
