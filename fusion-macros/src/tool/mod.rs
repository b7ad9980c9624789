//! `#[fusion::tool]`: parse the item into an IR, validate it, expand it, or fall back.
//!
//! The stages, each in its own module:
//!
//! - [`attr`]: the tool's and each action's attribute options (darling), and doc comments;
//! - [`ast`]: the IR, borrowing the user's syntax tree (`Tool::from_syn`);
//! - [`valid`]: every check that needs the whole IR, all errors accumulated;
//! - [`expand`]: the generated code, which cannot fail;
//! - [`fallback`]: on error, the user's item (helper attributes stripped) and a stub impl, so
//!   the only errors a user sees are ours.

mod action_ref;
mod ast;
mod attr;
mod expand;
mod fallback;
mod guard;
mod name;
mod target;
mod valid;

use proc_macro2::TokenStream;

use crate::errors::Errors;

/// Expands `#[fusion::tool(args)] item`.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        // Not an item at all: rustc reports the syntax error better than we could.
        Err(error) => {
            let mut out = error.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut errors = Errors::default();
    let tool = ast::Tool::from_syn(args, &item, &mut errors);
    if let Some(tool) = &tool {
        valid::validate(tool, &mut errors);
    }
    match (tool, errors.finish()) {
        (Some(tool), None) => expand::tool(&tool),
        (tool, error) => fallback::expand(&item, tool.as_ref(), error),
    }
}
