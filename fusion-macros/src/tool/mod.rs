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
mod valid;

use proc_macro2::TokenStream;

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

/// Every error found so far, in source order (like serde's `Ctxt` and darling's
/// `Accumulator`): each stage reports all it finds instead of stopping at the first.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `tokens` (the smallest offending syntax).
    pub(crate) fn at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub(crate) fn at_span(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records every error of a darling result, keeping darling's spans and wording.
    ///
    /// Keeps darling's errors one by one, each with its own span, so they combine with ours.
    /// darling's own conversion leaves out the option's name (` at crate`) when the error
    /// already points at the option.
    pub(crate) fn darling<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                for single in error.flatten() {
                    self.errors.push(single.into());
                }
                None
            }
        }
    }

    /// All errors combined into one (each keeps its span), or `None`.
    pub(crate) fn finish(self) -> Option<syn::Error> {
        self.errors.into_iter().reduce(|mut all, next| {
            all.combine(next);
            all
        })
    }
}
