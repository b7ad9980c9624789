//! What a tool with errors expands to: the errors, the user's item without its `#[action]`
//! markers, and a stub so that the errors are the only ones a user sees (uses of the tool
//! type as a `Tool`, and `actions(Tool::method)` references, still resolve).

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

use super::action_ref::{action_const, action_lookup};
use super::ast::Tool;
use super::expand::{Target, user_item};

/// The fallback expansion. `tool` is the IR when the item could be read at all.
pub(crate) fn expand(
    item: &Item,
    tool: Option<&Tool<'_>>,
    error: Option<syn::Error>,
) -> TokenStream {
    let errors = error.map(|e| e.to_compile_error());
    let user_item = user_item(item.clone());
    let stub = tool.map(stub);
    quote! {
        #errors
        #user_item
        #stub
    }
}

/// The action constants and a `Tool` impl whose methods are never reached (the crate does not
/// compile).
fn stub(tool: &Tool<'_>) -> TokenStream {
    let Target {
        unit_struct,
        cfg,
        impl_generics,
        self_ty,
        where_clause,
    } = Target::of(tool);
    let consts = tool.actions.iter().map(|action| action_const(tool, action));
    let lookup = action_lookup(tool);
    let private = tool.krate.private();
    quote! {
        #unit_struct

        #(#cfg)*
        impl #impl_generics #self_ty #where_clause {
            #(#consts)*
            #lookup
        }

        #(#cfg)*
        impl #impl_generics #private::Tool for #self_ty #where_clause {
            fn definition(&self) -> #private::ToolDefinition {
                ::core::unimplemented!()
            }

            fn prepare(
                self: ::std::sync::Arc<Self>,
                _: #private::ToolCall<'_>,
            ) -> ::core::result::Result<#private::PreparedCall, #private::ToolResponse> {
                ::core::unimplemented!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The expansion as text, whitespace collapsed.
    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        super::super::expand(args, item).to_string()
    }

    #[test]
    fn a_tool_with_errors_keeps_the_item_and_gets_a_stub() {
        let out = expand(
            quote!(),
            quote! {
                impl Billing {
                    #[action(read_only)]
                    fn list(&mut self) {}
                }
            },
        );
        assert!(out.starts_with(":: core :: compile_error !"), "{out}");
        assert!(!out.contains("# [action"), "the marker is stripped: {out}");
        assert!(out.contains("fn list (& mut self) { }"), "{out}");
        assert!(out.contains("pub const __fusion_action_list"), "{out}");
        assert!(out.contains("pub const fn __fusion_action_named"), "{out}");
        assert!(
            out.contains("impl :: fusion :: __private :: Tool for Billing"),
            "{out}"
        );
        assert!(out.contains(":: core :: unimplemented ! ()"), "{out}");
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    }

    #[test]
    fn a_function_tool_with_errors_still_gets_its_struct() {
        let out = expand(
            quote!(discriminator = "op"),
            quote!(
                fn get_weather() {}
            ),
        );
        assert!(out.contains("struct GetWeather ;"), "{out}");
        assert!(
            out.contains("pub const __fusion_action_get_weather"),
            "{out}"
        );
    }

    #[test]
    fn markers_on_items_that_are_not_methods_are_stripped_too() {
        let out = expand(
            quote!(),
            quote! {
                impl Billing {
                    #[action]
                    const LIMIT: u8 = 3;
                }
            },
        );
        assert!(!out.contains("# [action"), "{out}");
        assert!(out.contains("const LIMIT : u8 = 3 ;"), "{out}");
    }

    #[test]
    fn an_item_that_is_no_tool_is_kept_without_a_stub() {
        let out = expand(
            quote!(),
            quote!(
                struct Billing;
            ),
        );
        assert!(out.contains("struct Billing ;"), "{out}");
        assert!(!out.contains("Tool for"), "{out}");
    }

    #[test]
    fn a_valid_tool_expands_without_errors_or_markers() {
        let out = expand(
            quote!(name = "bill"),
            quote! {
                impl Billing {
                    #[action]
                    fn list(&self) {}
                }
            },
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("# [action"), "{out}");
        assert!(
            out.contains("tool : \"bill\" , action : \"list\" , single : true"),
            "{out}"
        );
    }
}
