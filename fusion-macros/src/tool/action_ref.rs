//! The action references of a tool: a constant per action, which `#[derive(ToolErrors)]`
//! checks `actions(Tool::method)` against, and the lookup that resolves a method name to one.
//! Emitted by the expansion and by the fallback alike, so that a tool with errors does not
//! add unresolved references to the user's error types.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;

use super::ast::{Action, Tool};

/// The action reference `#[derive(ToolErrors)]` checks `actions(Tool::method)` against, named
/// after the method (not the action name) so the compiler resolves the user's path.
pub(crate) fn action_const(tool: &Tool<'_>, action: &Action<'_>) -> TokenStream {
    let ident = const_ident(&action.sig.ident);
    let tool_name = &tool.name.value;
    let action_name = &action.name.value;
    let single = tool.discriminator.is_none();
    let private = tool.krate.private();
    let cfg = &action.cfg;
    quote! {
        #(#cfg)*
        #[doc(hidden)]
        #[allow(non_upper_case_globals, reason = "named after the method it refers to")]
        pub const #ident: #private::ActionRef = #private::ActionRef {
            tool: #tool_name,
            action: #action_name,
            single: #single,
        };
    }
}

/// `__fusion_action_named`: the compile-time lookup `#[derive(ToolErrors)]` resolves
/// `actions(Tool::method)` through, so that a misspelt method is an error naming the tool's
/// real action methods (not a hidden constant rustc would suggest).
pub(crate) fn action_lookup(tool: &Tool<'_>) -> TokenStream {
    let private = tool.krate.private();
    let tool_name = &tool.name.value;
    let methods: Vec<String> = tool
        .actions
        .iter()
        .map(|a| a.sig.ident.unraw().to_string())
        .collect();
    let offers = tool.actions.iter().zip(&methods).map(|(action, method)| {
        let ident = const_ident(&action.sig.ident);
        let cfg = &action.cfg;
        let hint = format!(
            "tool `{tool_name}` has no action method by this name; did you mean `{method}`?"
        );
        quote! {
            #(#cfg)*
            let __fusion_search = __fusion_search.offer(#method, Self::#ident, #hint);
        }
    });
    let missing = format!(
        "tool `{tool_name}` has no action method by this name; its action methods are: {}",
        methods
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    quote! {
        #[doc(hidden)]
        pub const fn __fusion_action_named(method: &str) -> #private::ActionLookup {
            let __fusion_search = #private::ActionSearch::new(method);
            #(#offers)*
            __fusion_search.finish(#missing)
        }
    }
}

/// `__fusion_action_<method>`, spanned on the method name.
pub(crate) fn const_ident(method: &Ident) -> Ident {
    format_ident!("__fusion_action_{}", method.unraw(), span = method.span())
}
