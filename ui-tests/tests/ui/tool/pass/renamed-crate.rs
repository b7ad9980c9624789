//! fusion reached only under other names, as after `fu = { package = "fusion", … }` in
//! Cargo.toml or through another crate's re-export: every tool says where fusion is with
//! `crate = …`, in each accepted form (a string, a bare path, a re-export's path, `$crate` in a
//! `macro_rules!`).
//!
//! trybuild's test crate depends on fusion by its own name, so `extern crate core as fusion`
//! takes that name over: an `extern crate` at the crate root shadows the `--extern fusion`
//! entry of the extern prelude, so `::fusion` means `core` here. Any runtime path still
//! written as `::fusion::__private::…` fails to resolve, and this case fails to compile.
//! (Cargo cannot rename instead: it rejects a second dependency on `fusion` under another
//! name.)

#![deny(warnings)]

extern crate core as fusion;
// `pub`: the framework below re-exports it.
pub extern crate fusion as fu;

/// A framework re-exporting fusion, as a library crate would with `pub use fusion;`.
mod framework {
    pub use fu as rt;
}

use fu::{RequestContext, Tool as _, ToolError, ToolExt as _};

#[derive(serde::Deserialize, schemars::JsonSchema, validator::Validate)]
struct Lookup {
    #[validate(length(min = 2))]
    key: String,
}

#[derive(serde::Serialize)]
struct Found {
    len: usize,
}

#[derive(Debug)]
struct Missing;

impl core::fmt::Display for Missing {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("no such key")
    }
}

impl From<Missing> for ToolError {
    fn from(error: Missing) -> ToolError {
        ToolError::not_found(error.to_string())
    }
}

struct Store;

/// Reads and writes keys.
#[fu::tool(crate = "fu")]
impl Store {
    /// Reads a key.
    #[action(read_only)]
    fn get(&self, args: Lookup, context: &RequestContext) -> Result<Found, ToolError> {
        let _ = context.client();
        match args.key.as_str() {
            "gone" => Err(Missing.into()),
            key => Ok(Found { len: key.len() }),
        }
    }

    /// Deletes a key.
    #[action(destructive)]
    async fn delete(args: Lookup, _context: RequestContext) -> anyhow::Result<()> {
        let _ = args.key;
        Ok(())
    }

    /// Counts keys.
    #[action]
    fn count(&self) -> u32 {
        7
    }

    /// Forgets everything.
    #[action]
    fn clear(&self) {}
}

/// Pings.
#[fu::tool(crate = ::fu)]
fn ping() -> &'static str {
    "pong"
}

/// Echoes.
#[framework::rt::tool(crate = crate::framework::rt, name = "echo")]
async fn echo_text(args: Lookup) -> String {
    args.key
}

/// What a framework's `macro_rules!` writes: `$crate` names the crate defining the macro (this
/// one, here), and must keep resolving once the attribute has moved the path's tokens.
macro_rules! framework_tool {
    ($($item:tt)*) => {
        #[$crate::framework::rt::tool(crate = $crate::framework::rt)]
        $($item)*
    };
}

framework_tool! {
    /// Shouts.
    fn shout(args: Lookup) -> String {
        args.key.to_uppercase()
    }
}

fn block_on<F: core::future::Future>(future: F) -> F::Output {
    let mut future = core::pin::pin!(future);
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    loop {
        if let core::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn call(tool: impl fu::Tool, arguments: serde_json::Value) -> String {
    let serde_json::Value::Object(arguments) = arguments else {
        unreachable!()
    };
    block_on(tool.call(arguments, RequestContext::new())).content_texts()[0].clone()
}

fn main() {
    use serde_json::json;

    let definition = Store.definition();
    assert_eq!(definition.name, "store");
    assert_eq!(definition.actions.len(), 4);
    assert_eq!(Store::__fusion_action_get.qualified(), "store.get");
    assert_eq!(Ping.definition().name, "ping");
    assert_eq!(EchoText.definition().name, "echo");

    assert_eq!(
        call(Store, json!({"action": "get", "key": "abc"})),
        r#"{"len":3}"#
    );
    assert!(call(Store, json!({"action": "get", "key": "gone"})).contains("NOT_FOUND"));
    assert!(call(Store, json!({"action": "get", "key": "a"})).contains("<validation_error"));
    assert!(call(Store, json!({"action": "gte"})).contains("UNKNOWN_ACTION"));
    assert_eq!(call(Store, json!({"action": "delete", "key": "ab"})), "OK");
    assert_eq!(call(Store, json!({"action": "count"})), "7");
    assert_eq!(call(Store, json!({"action": "clear"})), "OK");
    assert_eq!(call(Ping, json!({})), "pong");
    assert_eq!(call(EchoText, json!({"key": "hi"})), "hi");
    assert_eq!(call(Shout, json!({"key": "hi"})), "HI");
}
