//! What the derive emits when the input has errors: the errors, plus stub impls so that the only
//! errors a user sees are the real ones, not a cascade of "`Billing` does not implement
//! `Into<ToolError>`" at every `?` that uses the type.

use proc_macro2::TokenStream;
use quote::quote;

use syn::DeriveInput;

use crate::crate_path::CratePath;

pub(super) fn stub(input: &DeriveInput, krate: &CratePath, errors: TokenStream) -> TokenStream {
    let ty = &input.ident;
    let private = krate.private();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    // `unused_qualifications`: the absolute paths are deliberate (hygiene).
    quote! {
        #errors

        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics #private::ToolErrors for #ty #ty_generics #where_clause {
            fn error_contracts() -> ::std::vec::Vec<#private::ErrorContract> {
                ::core::unimplemented!()
            }
        }

        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics ::core::convert::From<#ty #ty_generics> for #private::ToolError
        #where_clause
        {
            fn from(_: #ty #ty_generics) -> #private::ToolError {
                ::core::unimplemented!()
            }
        }
    }
}
