//! Generated code compiles without warnings next to user items that shadow the prelude and
//! std names it could have used unqualified.

#![deny(
    warnings,
    missing_docs,
    unreachable_pub,
    unused_qualifications,
    unused_results
)]
#![allow(non_camel_case_types, reason = "shadowing prelude names is the point")]

/// Shadows `core::result::Result`.
pub struct Result;
/// Shadows `Result::Ok`.
pub struct Ok;
/// Shadows `Result::Err`.
pub struct Err;
/// Shadows `Option::Some`.
pub struct Some;
/// Shadows `Option::None`.
pub struct None;
/// Shadows `std::string::String`.
pub struct String;
/// Shadows `std::vec::Vec`.
pub struct Vec;
/// Shadows `std::boxed::Box`.
pub struct Box;
/// Shadows `core::option::Option`.
pub struct Option;
/// Shadows the `Default` trait.
pub trait Default {}
/// Shadows the `Clone` trait.
pub trait Clone {}

/// Shadows `vec!`.
#[macro_export]
macro_rules! vec {
    () => {
        compile_error!("the user's `vec!`")
    };
}

/// Shadows `unreachable!`.
#[macro_export]
macro_rules! unreachable {
    ($($t:tt)*) => {
        compile_error!("the user's `unreachable!`")
    };
}

/// The arguments and results, out of reach of the shadowing names above: `validator`'s
/// derive writes a bare `Some`, and only fusion's expansions are under test here.
pub mod types {
    use serde::{Deserialize, Serialize};

    /// A lookup, with `validator` rules (so the validation probe is exercised).
    #[derive(Deserialize, schemars::JsonSchema, validator::Validate)]
    pub struct Lookup {
        /// The key.
        #[validate(length(min = 1))]
        pub key: String,
    }

    /// A result.
    #[derive(Serialize, schemars::JsonSchema)]
    pub struct Found {
        /// The value.
        pub value: u32,
    }
}

use types::{Found, Lookup};

/// A key-value store.
pub struct Store;

/// Reads and writes keys.
#[fusion::tool]
impl Store {
    /// Reads a key.
    #[action(read_only)]
    pub fn get(&self, args: Lookup) -> core::result::Result<Found, fusion::ToolError> {
        core::result::Result::Ok(Found {
            value: u32::try_from(args.key.len()).unwrap_or(0),
        })
    }

    /// Reads a key, as structured content.
    #[action(read_only, output_schema)]
    pub async fn get_structured(
        &self,
        args: Lookup,
    ) -> core::result::Result<Found, fusion::ToolError> {
        self.get(args)
    }

    /// Deletes a key.
    #[action(destructive)]
    pub async fn delete(
        &self,
        args: Lookup,
        context: fusion::RequestContext,
    ) -> anyhow::Result<()> {
        let _ = (args.key, context.client());
        anyhow::Result::Ok(())
    }

    /// Counts keys.
    #[action]
    pub fn count(&self) -> u32 {
        0
    }

    /// Forgets everything.
    #[action]
    pub fn clear(_context: &fusion::RequestContext) {}
}

/// A tool without probes: no arguments, nothing returned.
pub struct Silent;

/// Does nothing.
#[fusion::tool]
impl Silent {
    /// Nothing, quietly.
    #[action]
    pub fn nothing(&self) {}
}

/// Pings.
#[fusion::tool]
pub fn ping() -> &'static str {
    "pong"
}

/// A tool whose only action renders structured content: no probe, so no probe import.
#[fusion::tool(output_schema)]
pub fn latest() -> fusion::Json<Found> {
    fusion::Json(Found { value: 1 })
}

fn main() {
    use fusion::Tool as _;
    assert_eq!(Store.definition().actions.len(), 5);
    assert!(Latest.definition().actions[0].output_schema.is_some());
    assert_eq!(Ping.definition().name, "ping");
    assert_eq!(Silent.definition().actions[0].name, "nothing");
    assert_eq!(Store::__fusion_action_get.qualified(), "store.get");
}
