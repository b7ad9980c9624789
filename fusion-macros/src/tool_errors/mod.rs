//! `#[derive(ToolErrors)]`: read the input (`ast`, attributes in `attr`), check it (`valid`),
//! generate the impls (`expand`), or on error report everything next to stub impls (`fallback`).

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;
mod warn;

use proc_macro2::TokenStream;

pub(crate) fn expand(input: syn::DeriveInput) -> TokenStream {
    let mut errors = darling::Error::accumulator();
    let ast = ast::Input::from_syn(&input, &mut errors);
    ast.validate(&mut errors);
    match errors.finish() {
        Ok(()) => expand::derive(&ast),
        Err(errors) => fallback::stub(&input, &ast.krate, errors.write_errors()),
    }
}

#[cfg(test)]
mod tests;
