//! `#[derive(ToolErrors)]`: read the input (`ast`, attributes in `attr`), check it (`valid`),
//! generate the impls (`expand`), or on error report everything next to stub impls (`fallback`).

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;
mod warn;

use proc_macro2::TokenStream;

use crate::errors::Errors;

pub(crate) fn expand(input: syn::DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let ast = ast::Input::from_syn(&input, &mut errors);
    ast.validate(&mut errors);
    match errors.finish() {
        None => expand::derive(&ast),
        Some(error) => fallback::stub(&input, &ast.krate, error.to_compile_error()),
    }
}

#[cfg(test)]
mod tests;
