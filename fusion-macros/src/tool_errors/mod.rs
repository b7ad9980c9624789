//! `#[derive(ToolErrors)]`: parse, validate, expand.

use proc_macro2::TokenStream;

pub(crate) fn expand(input: syn::DeriveInput) -> TokenStream {
    syn::Error::new_spanned(&input.ident, "`#[derive(ToolErrors)]` is not built yet")
        .to_compile_error()
}
