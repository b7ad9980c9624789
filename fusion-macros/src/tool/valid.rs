//! Every check of a tool that `expand` relies on, each error on the smallest offending token
//! and all of them reported at once.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{GenericParam, Ident, Receiver, Type};

use super::ast::{Action, ParamKind, Shape, Tool};
use super::name::{self, Kind};
use crate::errors::Errors;

/// Checks the whole tool.
pub(crate) fn validate(tool: &Tool<'_>, errors: &mut Errors) {
    let tool_name_ok =
        name::check(&tool.name, Kind::Tool, errors) && name::check_start(&tool.name, errors);
    let action_titles = tool.actions.iter().filter_map(|a| a.title.as_ref());
    for title in tool.title.iter().chain(action_titles) {
        if title.value.trim().is_empty() {
            errors.at_span(
                title.span,
                "the title cannot be empty; leave `title` out to use the doc comment's summary",
            );
        }
    }
    if let Some(discriminator) = &tool.discriminator
        && discriminator.value.is_empty()
    {
        errors.at_span(discriminator.span, "the discriminator cannot be empty");
    }
    if let Some(form) = &tool.input_schema
        && !matches!(form.as_str(), "portable" | "as_written")
    {
        errors.at_span(
            form.span(),
            "`input_schema` is `\"portable\"` (rewritten for LLM APIs, the default) or `\"as_written\"` (the arguments type's schema unchanged)",
        );
    }
    if let Some(span) = tool.stray_discriminator {
        errors.at_span(
            span,
            "a function tool has no discriminator; `discriminator` applies to tools declared on an `impl` block",
        );
    }
    if let Some(span) = tool.stray_errors {
        errors.at_span(
            span,
            "`errors(..)` on `#[fusion::tool(...)]` applies to function tools; on an `impl` block, list each action's variants with `#[action(errors(..))]`",
        );
    }
    if let Some(span) = tool.stray_output_schema {
        errors.at_span(
            span,
            "`output_schema` on `#[fusion::tool(...)]` applies to function tools; on an `impl` block, mark each action with `#[action(output_schema)]`",
        );
    }

    let key_conflict = "`rate_limit` takes `global` or `key = …`, not both: `global` puts every call in one bucket";
    if let Some(span) = tool.guards.conflicting_key() {
        errors.at_span(span, key_conflict);
    }
    for action in &tool.actions {
        if let Some(span) = action.guards.conflicting_key() {
            errors.at_span(span, key_conflict);
        }
    }

    let function = matches!(tool.shape, Shape::Function { .. });
    if let Shape::Impl(item) = tool.shape
        && tool.actions.is_empty()
    {
        errors.at(
            &item.self_ty,
            "this tool has no actions; mark each method the model may call with `#[action]`",
        );
    }
    let impl_params = match tool.shape {
        Shape::Impl(item) => type_params(&item.generics.params),
        Shape::Function { .. } => Vec::new(),
    };

    for (index, action) in tool.actions.iter().enumerate() {
        if !function {
            // A single-action tool without a discriminator is served under its own name.
            if name::check(&action.name, Kind::Action, errors)
                && tool_name_ok
                && tool.discriminator.is_some()
            {
                name::check_flat(&tool.name, &action.name, errors);
            }
            if let Some(first) = tool.actions[..index]
                .iter()
                .find(|a| a.name.value == action.name.value)
            {
                errors.at_span(
                    action.name.span,
                    format_args!(
                        "duplicate action name `{}`; the method `{}` already uses it",
                        action.name.value, first.sig.ident
                    ),
                );
            }
        }
        for span in &action.misplaced {
            errors.at_span(
                *span,
                "a function tool takes its name, title and description from `#[fusion::tool(...)]`; `#[action(...)]` on it only sets annotations, `output_schema`, `blocking`, `task`, `strict_json` and guards",
            );
        }
        check_signature(action, function, errors);
        check_params(action, &impl_params, errors);
        check_declared_errors(action, errors);
    }
}

/// `errors(..)` needs a written return type to find the error type in, and names each
/// variant once.
fn check_declared_errors(action: &Action<'_>, errors: &mut Errors) {
    let Some(variants) = &action.errors else {
        return;
    };
    if action.output.is_none() {
        errors.at(
            &action.sig.ident,
            "`errors(..)` lists variants of the action's error type, but the action returns `()`; return `Result<T, E>` or remove `errors(..)`",
        );
    }
    if let Some(output @ Type::ImplTrait(_)) = action.output {
        errors.at(
            output,
            "`errors(..)` needs the action's return type written out (`Result<T, E>`), not `impl Trait`",
        );
    }
    for (index, path) in variants.iter().enumerate() {
        if variants[..index].contains(path) {
            errors.at(path, "this variant is already listed in `errors(..)`");
        }
    }
}

/// Receiver, generics, `unsafe`, `blocking` on an `async fn`.
fn check_signature(action: &Action<'_>, function: bool, errors: &mut Errors) {
    let sig = action.sig;
    if let Some(unsafety) = &sig.unsafety {
        errors.at(unsafety, "an action cannot be an `unsafe fn`");
    }
    if let Some(span) = action.blocking
        && action.is_async()
    {
        errors.at_span(
            span,
            "`blocking` is for a plain `fn`, which it moves to the blocking pool; an `async fn` runs on the task that polls the call: make the action a plain `fn`, or move its blocking work into `tokio::task::spawn_blocking`",
        );
    }
    for param in &sig.generics.params {
        match param {
            GenericParam::Type(_) | GenericParam::Const(_) => {
                errors.at(param, "actions cannot be generic");
            }
            // Lifetimes are inferred at the call; they cannot make the call ambiguous.
            GenericParam::Lifetime(_) => {}
        }
    }
    if let Some(receiver) = action.receiver {
        if function {
            errors.at(receiver, "a function tool has no `self`");
        } else {
            check_receiver(receiver, errors);
        }
    }
}

/// Only `&self`: a tool serves concurrent calls, so it is shared and never consumed.
fn check_receiver(receiver: &Receiver, errors: &mut Errors) {
    match &*receiver.ty {
        Type::Reference(r) if is_self(&r.elem) => {
            if r.mutability.is_some() {
                errors.at(
                    receiver,
                    "an action takes `&self`, not `&mut self`: a tool serves concurrent calls; keep mutable state behind a `Mutex` or an atomic",
                );
            }
        }
        ty if is_self(ty) => errors.at(
            receiver,
            "an action takes `&self`, not `self`: a tool serves concurrent calls and is never consumed",
        ),
        _ => errors.at(
            receiver,
            "an action takes `&self` or no receiver: a tool serves concurrent calls",
        ),
    }
}

fn is_self(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
}

/// At most one arguments parameter, taken by value and not depending on the impl's type
/// parameters; at most one context, by value or `&`.
fn check_params(action: &Action<'_>, impl_params: &[&Ident], errors: &mut Errors) {
    let mut arguments = 0;
    let mut contexts = 0;
    for param in &action.params {
        match param.kind {
            ParamKind::Arguments => {
                arguments += 1;
                if arguments > 1 {
                    errors.at(
                        param.arg,
                        "an action takes at most one arguments parameter; put every argument in one struct (if this is the request context, name its type `RequestContext`: the macro recognizes it by name)",
                    );
                    continue;
                }
                check_arguments_type(&param.arg.ty, impl_params, errors);
            }
            ParamKind::Context | ParamKind::ContextRef | ParamKind::ContextMut => {
                contexts += 1;
                if contexts > 1 {
                    errors.at(
                        param.arg,
                        "an action takes at most one `RequestContext` parameter",
                    );
                } else if param.kind == ParamKind::ContextMut {
                    errors.at(
                        &param.arg.ty,
                        "take the `RequestContext` by value or by `&`, not by `&mut`",
                    );
                }
            }
        }
    }
}

fn check_arguments_type(ty: &Type, impl_params: &[&Ident], errors: &mut Errors) {
    match ty {
        Type::Reference(r) => errors.at(
            r.and_token,
            "the arguments parameter takes its type by value: it is deserialized from each call; if this is the request context, name its type `RequestContext` (the macro recognizes it by name)",
        ),
        Type::ImplTrait(_) => errors.at(ty, "actions cannot be generic"),
        _ => {
            // A generic impl's definition is written once for every instantiation, so the
            // schema must not depend on its parameters.
            if let Some(ident) = mentions(ty.to_token_stream(), impl_params) {
                errors.at(
                    &ident,
                    format_args!(
                        "the arguments type cannot use the impl's parameter `{ident}`: a tool's input schema is the same for every instantiation"
                    ),
                );
            } else if !impl_params.is_empty()
                && let Some(ident) = mentions_self(ty.to_token_stream())
            {
                // `<Self as HasArgs>::Args` depends on the parameters as much as `T` does.
                errors.at(
                    &ident,
                    "the arguments type of a generic impl cannot use `Self`: a tool's input schema is the same for every instantiation",
                );
            }
        }
    }
}

/// The type and const parameters of an impl.
fn type_params(params: &syn::punctuated::Punctuated<GenericParam, syn::Token![,]>) -> Vec<&Ident> {
    params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            GenericParam::Const(c) => Some(&c.ident),
            GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// The first `Self` in `tokens`.
fn mentions_self(tokens: TokenStream) -> Option<Ident> {
    tokens.into_iter().find_map(|tree| match tree {
        TokenTree::Ident(ident) if ident == "Self" => Some(ident),
        TokenTree::Group(group) => mentions_self(group.stream()),
        _ => None,
    })
}

/// The first identifier in `tokens` that is one of `names`.
fn mentions(tokens: TokenStream, names: &[&Ident]) -> Option<Ident> {
    if names.is_empty() {
        return None;
    }
    tokens.into_iter().find_map(|tree| match tree {
        TokenTree::Ident(ident) if names.iter().any(|n| **n == ident) => Some(ident),
        TokenTree::Group(group) => mentions(group.stream(), names),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::super::{Errors, ast::Tool};
    use super::validate;

    /// The messages the pipeline reports for `#[fusion::tool(args)] item`, in order.
    fn messages(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> Vec<String> {
        let item: syn::Item = syn::parse2(item).unwrap();
        let mut errors = Errors::default();
        if let Some(tool) = Tool::from_syn(args, &item, &mut errors) {
            validate(&tool, &mut errors);
        }
        errors
            .finish()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_valid_tool_has_no_errors() {
        let item = quote! {
            impl Billing {
                #[action(read_only)]
                fn list(&self, args: List, ctx: &::fusion::RequestContext) -> Result<u8, E> {}
                #[action]
                async fn get(Args { id }: Args) {}
                #[action(blocking)]
                fn export(&self) {}
                fn helper(&mut self, a: u8, b: u8) {}
            }
        };
        assert_eq!(messages(quote!(), item), Vec::<String>::new());
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let item = quote! {
            impl Billing {
                #[action(name = "list")]
                fn list_all(&mut self, a: A, b: B) {}
                #[action(name = "list")]
                fn list_some<T>(self, ctx: RequestContext, again: RequestContext) {}
                #[action(name = "")]
                unsafe fn nameless(&self, args: &A) {}
                #[action(bogus)]
                fn bogus(&self) {}
                #[action(blocking)]
                async fn sleepy(&self) {}
            }
        };
        assert_eq!(
            messages(quote!(discriminator = ""), item),
            [
                // darling lists the known options only when there are few; with the guard
                // options there are ten.
                "Unknown field: `bogus`",
                "the discriminator cannot be empty",
                "an action takes `&self`, not `&mut self`: a tool serves concurrent calls; keep mutable state behind a `Mutex` or an atomic",
                "an action takes at most one arguments parameter; put every argument in one struct (if this is the request context, name its type `RequestContext`: the macro recognizes it by name)",
                "duplicate action name `list`; the method `list_all` already uses it",
                "actions cannot be generic",
                "an action takes `&self`, not `self`: a tool serves concurrent calls and is never consumed",
                "an action takes at most one `RequestContext` parameter",
                "the action name cannot be empty",
                "an action cannot be an `unsafe fn`",
                "the arguments parameter takes its type by value: it is deserialized from each call; if this is the request context, name its type `RequestContext` (the macro recognizes it by name)",
                "`blocking` is for a plain `fn`, which it moves to the blocking pool; an `async fn` runs on the task that polls the call: make the action a plain `fn`, or move its blocking work into `tokio::task::spawn_blocking`",
            ]
        );
    }

    #[test]
    fn a_function_tool_takes_no_self_no_discriminator_and_no_action_name() {
        let item = quote! {
            #[action(name = "other", read_only)]
            fn ping(&self) {}
        };
        assert_eq!(
            messages(quote!(discriminator = "op"), item),
            [
                "a function tool has no discriminator; `discriminator` applies to tools declared on an `impl` block",
                "a function tool takes its name, title and description from `#[fusion::tool(...)]`; `#[action(...)]` on it only sets annotations, `output_schema`, `blocking`, `task`, `strict_json` and guards",
                "a function tool has no `self`",
            ]
        );
    }

    #[test]
    fn output_schema_goes_on_actions_or_function_tools() {
        let item = quote! {
            impl Billing {
                #[action]
                fn get(&self) -> Invoice {}
            }
        };
        assert_eq!(
            messages(quote!(output_schema), item),
            [
                "`output_schema` on `#[fusion::tool(...)]` applies to function tools; on an `impl` block, mark each action with `#[action(output_schema)]`"
            ]
        );
        // A function tool takes it in either place; its return type is the runtime's to check
        // (`StructuredOutput`).
        for (args, item) in [
            (
                quote!(output_schema),
                quote!(
                    fn get() -> Invoice {}
                ),
            ),
            (
                quote!(),
                quote!(
                    #[action(output_schema)]
                    fn get() -> Invoice {}
                ),
            ),
        ] {
            assert_eq!(messages(args, item), Vec::<String>::new());
        }
    }

    #[test]
    fn names_must_suit_every_llm_api() {
        let item = quote! {
            impl Billing {
                #[action(name = "list invoices")]
                fn list(&self) {}
            }
        };
        assert_eq!(
            messages(quote!(name = "billing.v2"), item),
            [
                "the tool name `billing.v2` contains `.`: MCP allows dots, but LLM APIs (Anthropic, OpenAI) accept tool names matching `^[a-zA-Z0-9_-]{1,64}$` only; write `_` or `-` instead",
                "the action name `list invoices` contains ` `: LLM APIs (Anthropic, OpenAI) accept tool names matching `^[a-zA-Z0-9_-]{1,64}$` only; rename it with `#[action(name = \"...\")]`",
            ]
        );
        // Derived names too, and lengths: a name, and the flat `tool_action`, of at most 64.
        let long = "a".repeat(65);
        let item = quote! {
            impl Billing {
                #[action(name = #long)]
                fn long(&self) {}
                #[action]
                fn list_every_invoice_of_every_customer_in_every_currency_ever(&self) {}
            }
        };
        assert_eq!(
            messages(quote!(), item),
            [
                format!("the action name `{long}` is 65 characters long: LLM APIs (Anthropic, OpenAI) accept tool names of at most 64 (`^[a-zA-Z0-9_-]{{1,64}}$`); shorten it with `#[action(name = \"...\")]`"),
                "the flat tool name `billing_list_every_invoice_of_every_customer_in_every_currency_ever` is 67 characters long: flat exposition serves this action as `<tool>_<action>`, and LLM APIs (Anthropic, OpenAI) accept tool names of at most 64; shorten the action name with `#[action(name = \"...\")]` or the tool name".to_owned(),
            ]
        );
        // A function tool has no flat name of its own: 64 characters pass.
        let name = "a".repeat(64);
        assert_eq!(
            messages(
                quote!(name = #name),
                quote!(
                    fn ping() {}
                )
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn titles_cannot_be_empty() {
        let item = quote! {
            impl Billing {
                #[action(title = " ")]
                fn list(&self) {}
            }
        };
        assert_eq!(
            messages(quote!(title = ""), item),
            [
                "the title cannot be empty; leave `title` out to use the doc comment's summary",
                "the title cannot be empty; leave `title` out to use the doc comment's summary",
            ]
        );
    }

    #[test]
    fn a_generic_impl_keeps_its_parameters_out_of_the_arguments() {
        let item = quote! {
            impl<S: Store, const N: usize> Inventory<S> {
                #[action]
                fn find(&self, args: Query<Vec<S>>) {}
                #[action]
                fn top(&self, args: Top<N>) {}
                #[action]
                fn fine(&self, args: Query<String>) -> S {}
                #[action]
                fn projected(&self, args: <Self as HasArgs>::Args) {}
            }
        };
        assert_eq!(
            messages(quote!(), item),
            [
                "the arguments type cannot use the impl's parameter `S`: a tool's input schema is the same for every instantiation",
                "the arguments type cannot use the impl's parameter `N`: a tool's input schema is the same for every instantiation",
                "the arguments type of a generic impl cannot use `Self`: a tool's input schema is the same for every instantiation",
            ]
        );
        // Without parameters, `Self` names one type.
        let item = quote! {
            impl Inventory {
                #[action]
                fn projected(&self, args: <Self as HasArgs>::Args) {}
            }
        };
        assert_eq!(messages(quote!(), item), Vec::<String>::new());
    }

    #[test]
    fn a_function_name_must_give_a_type_name() {
        for (item, name) in [
            (
                quote!(
                    pub fn _2fa_verify() {}
                ),
                "_2fa_verify",
            ),
            (
                quote!(
                    pub fn __() {}
                ),
                "__",
            ),
            (
                quote!(
                    pub fn self_() {}
                ),
                "self_",
            ),
        ] {
            assert_eq!(
                messages(quote!(), item).first(),
                Some(&format!(
                    "cannot derive a type name from `{name}`; rename the function"
                ))
            );
        }
        // `__` gives no tool name either.
        assert_eq!(
            messages(
                quote!(),
                quote!(
                    pub fn __() {}
                )
            )
            .len(),
            2
        );
        assert_eq!(
            messages(
                quote!(),
                quote!(
                    pub fn r#type() {}
                )
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn misplaced_markers_and_items_are_errors() {
        let item = quote! {
            impl Billing {
                #[action]
                const LIMIT: u8 = 3;
                #[action]
                #[action]
                fn twice(&self) {}
            }
        };
        assert_eq!(
            messages(quote!(), item),
            [
                "`#[action]` goes on a method",
                "duplicate `#[action]` attribute"
            ]
        );
        assert_eq!(
            messages(
                quote!(),
                quote!(
                    enum Billing {}
                )
            ),
            ["`#[fusion::tool]` goes on an `impl` block or a function"]
        );
        assert_eq!(
            messages(quote!(), quote!(impl [u8] { #[action] fn a(&self) {} })),
            [
                "cannot derive a tool name from this type; name the tool with `#[fusion::tool(name = \"...\")]`"
            ]
        );
    }
}
