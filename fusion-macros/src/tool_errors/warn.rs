//! Warnings the derive raises without failing the build: a variant whose code has no category
//! (a custom code, or `CONFLICT`, left uncategorized) gives client code the flag `unknown`,
//! which it cannot branch on. Stable Rust has no warning API for procedural macros, so each
//! warning is the use of a `#[deprecated]` constant, spanned on the variant: rustc reports it
//! as a warning there. `category = "unknown"` states the category and silences it, as does
//! `#[allow(deprecated)]` on the type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::ast::{Input, Variant};
use super::attr::Code;

/// The warning items of `input`, empty when every variant has a category.
pub(super) fn uncategorized(input: &Input<'_>) -> TokenStream {
    let warnings = input
        .variants()
        .iter()
        .filter_map(|variant| warning(input, variant));
    quote!(#(#warnings)*)
}

fn warning(input: &Input<'_>, variant: &Variant<'_>) -> Option<TokenStream> {
    let attr = &variant.attr;
    if attr.internal || attr.category.or(input.attr.category).is_some() {
        return None;
    }
    let code = match attr.code.as_ref()? {
        Code::Custom(lit) => lit.value(),
        // The one canonical code, internal errors aside, without a default category.
        Code::Canonical("Conflict") => "CONFLICT".to_owned(),
        Code::Canonical(_) => return None,
    };
    let note = format!(
        "the code `{code}` of `{}` has no category, so client code reads its category as \
         `unknown`; add `category = \"validation\"` (or `auth`, `rate_limit`, `not_found`, \
         `transient`; `unknown` to keep it) to the variant or the type",
        variant.ident
    );
    let span = variant.ident.span();
    let constant = quote_spanned!(span=> UNCATEGORIZED_CODE);
    // An `expect` becomes an `allow`: the type's expectation is the user's to fulfil there, and
    // a copy on a warning item that does not raise the lint would itself warn.
    let lints = input.lints.iter().map(|attr| match &attr.meta {
        syn::Meta::List(list) if list.path.is_ident("expect") => {
            let lints = &list.tokens;
            quote!(#[allow(#lints)])
        }
        _ => quote!(#attr),
    });
    Some(quote! {
        #(#lints)*
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(dead_code)]
            const UNCATEGORIZED_CODE: () = ();
            #constant
        };
    })
}
