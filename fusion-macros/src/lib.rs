//! Procedural macros for fusion: `#[fusion::tool]` and `#[derive(ToolErrors)]`.
//!
//! Use them through the `fusion` crate, which re-exports both and documents every attribute.
//! Each macro runs the same pipeline: parse into an IR (`ast.rs`, attributes in `attr.rs`),
//! validate with every error accumulated (`valid.rs`, into `errors.rs`), expand (`expand.rs`, cannot fail), and
//! on error re-emit the user's item with a stub impl (`fallback.rs`). Both name the runtime
//! through `::fusion::__private`, or through the path their `crate = …` option gives
//! (`crate_path.rs`).

use proc_macro::TokenStream;

mod crate_path;
mod errors;
mod tool;
mod tool_errors;

/// Declares an MCP tool: on an `impl` block, a multi-action tool whose `#[action]` methods
/// are its actions; on a function, a single-action tool. See `fusion::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}

/// Turns a domain error type into an error contract. See `fusion::ToolErrors`.
#[proc_macro_derive(ToolErrors, attributes(tool_error, detail, retry_after))]
pub fn derive_tool_errors(input: TokenStream) -> TokenStream {
    tool_errors::expand(syn::parse_macro_input!(input as syn::DeriveInput)).into()
}
