//! `#[fusion::tool]`: parse, validate, expand.

use proc_macro2::TokenStream;

pub(crate) fn expand(_args: TokenStream, item: TokenStream) -> TokenStream {
    let mut out = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[fusion::tool]` is not built yet",
    )
    .to_compile_error();
    out.extend(item);
    out
}
