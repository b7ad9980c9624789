//! The generated code of a valid tool: the user's item, the action constants, the definition
//! and the `Tool` impl. Cannot fail; behaviour lives in `::fusion::__private` (or under the
//! path `crate = …` gives: every runtime path goes through `CratePath::private`).

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, ImplItem, Item};

use super::ast::{Action, Output, ParamKind, Shape, Tool};
use super::attr;

/// The whole expansion.
pub(crate) fn tool(tool: &Tool<'_>) -> TokenStream {
    let user_item = user_item(tool.shape.item());
    let Target {
        unit_struct,
        cfg,
        impl_generics,
        self_ty,
        where_clause,
    } = Target::of(tool);
    let consts = tool.actions.iter().map(|action| action_const(tool, action));
    let definition = definition(tool);
    let call = call(tool);
    let private = tool.krate.private();
    let guards = guards(tool);
    // The parameters of `Tool::call` and of `StartCall::start`, which it defers to.
    let call_params = quote! {
        &'__fusion self,
        __fusion_arguments: #private::serde_json::Map<
            ::std::string::String,
            #private::serde_json::Value,
        >,
        __fusion_context: #private::RequestContext,
    };
    // The refusals the declared guards can send are part of the advertised error contract.
    let definition_call = if guards.is_some() {
        quote! {
            let mut __fusion_definition = Self::__fusion_definition();
            #private::Tool::guards(self).declare_errors(&mut __fusion_definition);
            __fusion_definition
        }
    } else {
        quote!(Self::__fusion_definition())
    };

    quote! {
        #user_item
        #unit_struct

        #(#cfg)*
        impl #impl_generics #self_ty #where_clause {
            #(#consts)*

            #[doc(hidden)]
            pub fn __fusion_definition() -> #private::ToolDefinition {
                #definition
            }
        }

        #(#cfg)*
        impl #impl_generics #private::Tool for #self_ty #where_clause {
            fn definition(&self) -> #private::ToolDefinition {
                #definition_call
            }

            fn call<'__fusion>(#call_params) -> #private::CallFuture<'__fusion> {
                #private::defer(self, __fusion_arguments, __fusion_context)
            }

            #guards
        }

        #(#cfg)*
        impl #impl_generics #private::StartCall for #self_ty #where_clause {
            fn start<'__fusion>(#call_params) -> #private::Started<'__fusion> {
                #call
            }
        }
    }
}

/// `Tool::guards`, when the tool or an action declares a guard; nothing otherwise (the
/// trait's default declares none).
fn guards(tool: &Tool<'_>) -> Option<TokenStream> {
    if tool.guards.is_empty() && tool.actions.iter().all(|a| a.guards.is_empty()) {
        return None;
    }
    let private = tool.krate.private();
    let spec = tool.guards.expand(&tool.krate);
    let actions = tool
        .actions
        .iter()
        .filter(|a| !a.guards.is_empty())
        .map(|action| {
            let cfg = &action.cfg;
            let name = &action.name.value;
            let spec = action.guards.expand(&tool.krate);
            quote! {
                #(#cfg)*
                __fusion_actions.push((::std::string::String::from(#name), #spec));
            }
        });
    Some(quote! {
        fn guards(&self) -> #private::ToolGuards {
            #[allow(unused_mut, reason = "no action may declare guards")]
            let mut __fusion_actions = ::std::vec::Vec::new();
            #(#actions)*
            #private::ToolGuards {
                tool: #spec,
                actions: __fusion_actions,
            }
        }
    })
}

/// The type that implements `Tool`, and how to write impls for it.
pub(crate) struct Target<'a> {
    /// A function tool's generated unit struct; empty for an impl block.
    pub(crate) unit_struct: TokenStream,
    /// The item's `#[cfg]` attributes, repeated on every generated item.
    pub(crate) cfg: Vec<&'a Attribute>,
    /// `<T: Store>` of `impl<T: Store> Inventory<T>`.
    pub(crate) impl_generics: TokenStream,
    /// `Inventory<T>`, or the unit struct.
    pub(crate) self_ty: TokenStream,
    /// The impl's where clause.
    pub(crate) where_clause: TokenStream,
}

impl<'a> Target<'a> {
    pub(crate) fn of(tool: &Tool<'a>) -> Target<'a> {
        match &tool.shape {
            Shape::Impl(item) => {
                let (impl_generics, _, where_clause) = item.generics.split_for_impl();
                Target {
                    unit_struct: TokenStream::new(),
                    cfg: cfg_attrs(&item.attrs),
                    impl_generics: impl_generics.to_token_stream(),
                    self_ty: item.self_ty.to_token_stream(),
                    where_clause: where_clause.to_token_stream(),
                }
            }
            Shape::Function { item, unit } => {
                let cfg = cfg_attrs(&item.attrs);
                let vis = &item.vis;
                let doc = format!(
                    "The MCP tool `{}`, served by the function `{}` (generated by `#[fusion::tool]`).",
                    tool.name.value, item.sig.ident
                );
                let unit_struct = quote! {
                    #(#cfg)*
                    #[doc = #doc]
                    #[derive(
                        ::core::clone::Clone,
                        ::core::marker::Copy,
                        ::core::fmt::Debug,
                        ::core::default::Default
                    )]
                    #vis struct #unit;
                };
                Target {
                    unit_struct,
                    cfg,
                    impl_generics: TokenStream::new(),
                    self_ty: unit.to_token_stream(),
                    where_clause: TokenStream::new(),
                }
            }
        }
    }
}

fn cfg_attrs(attrs: &[Attribute]) -> Vec<&Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).collect()
}

impl Shape<'_> {
    /// The item the attribute sits on.
    pub(crate) fn item(&self) -> Item {
        match self {
            Shape::Impl(item) => Item::Impl((*item).clone()),
            Shape::Function { item, .. } => Item::Fn((*item).clone()),
        }
    }
}

/// The user's item as written, minus the `#[action]` markers (they are not attributes rustc
/// knows).
pub(crate) fn user_item(mut item: Item) -> Item {
    match &mut item {
        Item::Impl(item) => {
            for impl_item in &mut item.items {
                let attrs = match impl_item {
                    ImplItem::Fn(i) => &mut i.attrs,
                    ImplItem::Const(i) => &mut i.attrs,
                    ImplItem::Type(i) => &mut i.attrs,
                    ImplItem::Macro(i) => &mut i.attrs,
                    _ => continue,
                };
                attrs.retain(|a| !attr::is_action(a));
            }
        }
        Item::Fn(item) => item.attrs.retain(|a| !attr::is_action(a)),
        _ => {}
    }
    item
}

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

/// `__fusion_action_<method>`, spanned on the method name.
pub(crate) fn const_ident(method: &Ident) -> Ident {
    format_ident!("__fusion_action_{}", method.unraw(), span = method.span())
}

/// The body of `__fusion_definition`.
fn definition(tool: &Tool<'_>) -> TokenStream {
    let name = &tool.name.value;
    let description = &tool.description;
    let discriminator = match &tool.discriminator {
        Some(d) => {
            let d = &d.value;
            quote!(::core::option::Option::Some(::std::string::String::from(#d)))
        }
        None => quote!(::core::option::Option::None),
    };
    let private = tool.krate.private();
    // One `push` per action, so an action's `#[cfg]` can remove its entry.
    let actions = tool.actions.iter().map(|action| {
        let cfg = &action.cfg;
        let definition = action_definition(tool, action);
        quote! {
            #(#cfg)*
            __fusion_actions.push(#definition);
        }
    });
    // The contract probes call trait methods, which need their traits in scope; an unused
    // glob import would warn, so it is only emitted when a probe is.
    let probes = tool
        .actions
        .iter()
        .any(|a| matches!(a.output, Output::Result(_)))
        .then(|| autoref_import(tool));
    quote! {
        #probes
        let mut __fusion_actions = ::std::vec::Vec::new();
        #(#actions)*
        #private::ToolDefinition {
            name: ::std::string::String::from(#name),
            description: ::std::string::String::from(#description),
            discriminator: #discriminator,
            actions: __fusion_actions,
        }
    }
}

/// One `ActionDefinition`.
fn action_definition(tool: &Tool<'_>, action: &Action<'_>) -> TokenStream {
    let private = tool.krate.private();
    let name = &action.name.value;
    let description = &action.description;
    let input_schema = match action.arguments() {
        // Spanned on the user's type: "`Args: JsonSchema` is not satisfied" lands there. This
        // and the `parse` call are the only places the bounds are required, so each missing
        // trait is reported once.
        Some(param) => {
            let ty = &param.arg.ty;
            let private = tool.krate.private_at(ty.span());
            quote_spanned!(ty.span()=> #private::schema_for::<#ty>())
        }
        None => quote!(#private::empty_object_schema()),
    };
    let hint = |hint: Option<bool>| match hint {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let annotations = &action.annotations;
    let read_only = hint(annotations.read_only);
    let destructive = hint(annotations.destructive);
    let idempotent = hint(annotations.idempotent);
    let open_world = hint(annotations.open_world);
    let errors = match action.output {
        Output::Result(ty) => quote! {
            (&&#private::Contracts::<
                <#ty as #private::ResultParts>::Err,
            >::NEW)
                .__fusion_contracts()
        },
        Output::Unit | Output::Value(_) => quote!(::std::vec::Vec::new()),
    };
    let output_schema = output_schema(tool, action);
    quote! {
        #private::ActionDefinition {
            name: ::std::string::String::from(#name),
            description: ::std::string::String::from(#description),
            input_schema: #input_schema,
            annotations: #private::Annotations {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            errors: #errors,
            secret_fields: ::std::vec::Vec::new(),
            output_schema: #output_schema,
        }
    }
}

/// `ActionDefinition::output_schema`: the success type's schema when the action declares
/// `output_schema`. Spanned on the success type: "`Invoice: JsonSchema` is not satisfied" lands
/// there. This is the only place `JsonSchema` is required, and `render` the only place
/// `Serialize` is, so each missing trait is reported once.
fn output_schema(tool: &Tool<'_>, action: &Action<'_>) -> TokenStream {
    let (Some(_), Some(success)) = (action.output_schema, action.success_type()) else {
        return quote!(::core::option::Option::None);
    };
    let private = tool.krate.private_at(success.span());
    // Through the projection for a `Result`: an alias (`anyhow::Result<T>`) may not name `T`
    // where the macro can see it.
    let ty = match action.output {
        Output::Result(ty) => quote_spanned!(success.span()=> <#ty as #private::ResultParts>::Ok),
        Output::Unit | Output::Value(_) => success.to_token_stream(),
    };
    quote_spanned! {success.span()=>
        ::core::option::Option::Some(#private::output_schema_for::<#ty>())
    }
}

/// The body of `StartCall::start` (what `Tool::call` defers to the first poll): build the
/// runtime once, route, parse, call, render.
fn call(tool: &Tool<'_>) -> TokenStream {
    let body = match &tool.shape {
        // One action: no discriminator to route on.
        Shape::Function { .. } => action_arm(tool, &tool.actions[0], quote!(0)),
        Shape::Impl(_) => {
            let arms = tool.actions.iter().enumerate().map(|(index, action)| {
                let cfg = &action.cfg;
                match action_index(tool, index) {
                    Some(index) => {
                        let arm = action_arm(tool, action, quote!(__fusion_index));
                        quote! {
                            #(#cfg)*
                            __fusion_index if __fusion_index == #index => {
                                #arm
                            }
                        }
                    }
                    None => {
                        let arm = action_arm(tool, action, quote!(#index));
                        quote! {
                            #(#cfg)*
                            #index => { #arm }
                        }
                    }
                }
            });
            let private = tool.krate.private();
            quote! {
                let mut __fusion_arguments = __fusion_arguments;
                let __fusion_index = match __fusion_runtime.route(&mut __fusion_arguments) {
                    ::core::result::Result::Ok(__fusion_index) => __fusion_index,
                    ::core::result::Result::Err(__fusion_response) => {
                        return #private::Started::Ready(__fusion_response);
                    }
                };
                match __fusion_index {
                    #(#arms)*
                    _ => {
                        ::core::unreachable!("the router only returns indexes of declared actions")
                    }
                }
            }
        }
    };
    // The probes (validation, rendering, error conversion) are trait methods; an unused glob
    // import would warn, so it is only emitted when an action has a probe.
    let probes = tool
        .actions
        .iter()
        .any(|a| a.arguments().is_some() || !matches!(a.output, Output::Unit))
        .then(|| autoref_import(tool));
    let private = tool.krate.private();
    quote! {
        #probes
        static __FUSION_RUNTIME: #private::RuntimeCell =
            #private::RuntimeCell::new();
        // At the first poll of the `CallFuture` (see `defer`): routing, validation and a
        // synchronous, unguarded action run at once; only what waits is boxed (see
        // `call_now`, `run_sync`, `run_async`).
        #private::call_now(move || {
            let __fusion_runtime =
                match #private::runtime(&__FUSION_RUNTIME, Self::__fusion_definition) {
                    ::core::result::Result::Ok(__fusion_runtime) => __fusion_runtime,
                    ::core::result::Result::Err(__fusion_response) => {
                        return #private::Started::Ready(__fusion_response);
                    }
                };
            #body
        })
    }
}

/// The index of action `index` in the definition when an earlier action has a `#[cfg]`: the
/// count of the earlier actions that are compiled in. `None` when it is `index` itself.
fn action_index(tool: &Tool<'_>, index: usize) -> Option<TokenStream> {
    let earlier = &tool.actions[..index];
    if earlier.iter().all(|a| a.cfg_predicates().is_empty()) {
        return None;
    }
    let enabled = earlier.iter().map(|a| {
        let predicates = a.cfg_predicates();
        quote!(((true #(&& ::core::cfg!(#predicates))*) as usize))
    });
    Some(quote!((0usize #(+ #enabled)*)))
}

/// One action's branch of `call`: parse its arguments, call it, render the outcome. `index`
/// is its index in the definition.
fn action_arm(tool: &Tool<'_>, action: &Action<'_>, index: TokenStream) -> TokenStream {
    let private = tool.krate.private();
    let parse = match action.arguments() {
        Some(param) => {
            let ty = &param.arg.ty;
            let rules = quote! {
                |__fusion_args: &#ty| {
                    (&&#private::Validate(__fusion_args)).__fusion_validate()
                }
            };
            // Spanned on the user's type: "`Args: DeserializeOwned` is not satisfied" lands
            // there (see `action_definition` for `JsonSchema`). The locals keep the call
            // site's resolution, so they stay the expansion's own when a `macro_rules!` writes
            // the attribute around the user's item.
            let (runtime, arguments) = (quote!(__fusion_runtime), quote!(__fusion_arguments));
            let parse = quote_spanned! {ty.span()=>
                #runtime.parse::<#ty, _>(#index, #arguments, #rules)
            };
            quote! {
                let __fusion_args: #ty = match #parse {
                    ::core::result::Result::Ok(__fusion_args) => __fusion_args,
                    ::core::result::Result::Err(__fusion_response) => {
                        return #private::Started::Ready(__fusion_response);
                    }
                };
            }
        }
        None => quote! {
            if let ::core::result::Result::Err(__fusion_response) =
                __fusion_runtime.parse_none(#index, __fusion_arguments)
            {
                return #private::Started::Ready(__fusion_response);
            }
        },
    };

    let method = &action.sig.ident;
    let callee = match &tool.shape {
        Shape::Impl(_) => quote!(Self::#method),
        Shape::Function { .. } => quote!(#method),
    };
    let receiver = action.receiver.map(|_| quote!(self));
    let params = action.params.iter().map(|param| match param.kind {
        ParamKind::Arguments => quote!(__fusion_args),
        ParamKind::Context => quote!(__fusion_context),
        // `valid` rejects `&mut`; this arm exists only so the match is total.
        ParamKind::ContextRef | ParamKind::ContextMut => quote!(&__fusion_context),
    });
    let awaited = action.is_async().then(|| quote!(.await));
    let args = receiver.into_iter().chain(params);
    let invoke = quote!(#callee(#(#args),*) #awaited);

    let render = |value: TokenStream| match (action.output_schema, action.success_type()) {
        // `output_schema`: structured content, whatever the type (`valid` rejected those the
        // probe would answer otherwise). Spanned on the success type, where "`Invoice:
        // Serialize` is not satisfied" belongs. A plain value is checked not to be a `Result`
        // behind an alias (see the probes below).
        (Some(_), Some(success)) => {
            let private = tool.krate.private_at(success.span());
            let plain = matches!(action.output, Output::Value(_)).then(|| {
                quote_spanned! {success.span()=>
                    (&&#private::Plain(&#value)).__fusion_plain_kind().check(&#value);
                }
            });
            quote_spanned! {success.span()=>
                {
                    #plain
                    #private::render_structured(#value)
                }
            }
        }
        // The probe, spanned on the success type: an unmet bound ("cannot be an action's
        // success value", "must spell its return type `Result<T, E>`") lands there.
        (_, success) => {
            let span = success.map_or_else(proc_macro2::Span::call_site, Spanned::span);
            let private = tool.krate.private_at(span);
            let value = located_at(value, span);
            quote_spanned! {span=>
                (&&&#private::Out(&#value)).__fusion_render_kind().render(#value)
            }
        }
    };
    // The action may be `#[deprecated]`: the generated call is not a use to warn about.
    let allow = quote! {
        #[allow(deprecated, reason = "the tool serves its actions, deprecated or not")]
    };
    let outcome = match action.output {
        Output::Unit => quote! {
            #allow
            #invoke;
            #private::UnitTag.render(())
        },
        Output::Value(_) => {
            let render = render(quote!(__fusion_value));
            quote! {
                #allow
                let __fusion_value = #invoke;
                #render
            }
        }
        Output::Result(ty) => {
            let render = render(quote!(__fusion_value));
            // Spanned on the return type: "cannot be an action's error" lands there.
            let error = located_at(quote!(__fusion_error), ty.span());
            let private_at = tool.krate.private_at(ty.span());
            let convert = quote_spanned! {ty.span()=>
                (&&#private_at::ErrOf(&#error)).__fusion_error_kind().convert(#error)
            };
            let invoke = quote_spanned!(ty.span()=> #private_at::into_result(#invoke));
            quote! {
                #allow
                let __fusion_outcome = #invoke;
                match __fusion_outcome {
                    ::core::result::Result::Ok(__fusion_value) => #render,
                    ::core::result::Result::Err(__fusion_error) => {
                        #private::ToolResponse::error(#convert)
                    }
                }
            }
        }
    };
    // The guards run between validation and the handler (SPEC section 4), the handler inside
    // them: a refusal means it never starts, a timeout drops it. A synchronous handler with no
    // guards runs at once, at the first poll of the call's `CallFuture` (in `start`).
    let run = if action.is_async() {
        quote!(#private::run_async(__fusion_guarded, async move { #outcome }))
    } else {
        quote!(#private::run_sync(__fusion_guarded, move || { #outcome }))
    };
    quote! {
        #parse
        let __fusion_guarded = #private::guarded(&__fusion_context, __fusion_runtime, #index);
        #run
    }
}

/// `tokens` reported at `at` but resolved where they were written: for the locals a probe
/// spanned on the user's type names (see `CratePath::private_at`).
fn located_at(tokens: TokenStream, at: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            token.set_span(token.span().located_at(at));
            token
        })
        .collect()
}

/// Brings the autoref-specialization traits into scope for the probes' method calls.
fn autoref_import(tool: &Tool<'_>) -> TokenStream {
    let private = tool.krate.private();
    quote! {
        use #private::autoref::*;
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use crate::crate_path::assert_runtime_only_through;

    /// An impl block with every kind of action: each probe, parameter and outcome the
    /// expansion writes runtime paths for.
    fn every_kind_of_action() -> TokenStream {
        quote! {
            impl<S: Store> Billing<S> where S: Send {
                #[action(read_only)]
                fn get(&self, args: Get, ctx: &RequestContext) -> Result<Invoice, BillingError> {}
                #[action]
                async fn list(args: List, ctx: RequestContext) -> Vec<Invoice> {}
                #[action(destructive)]
                fn purge(&self) {}
                #[action]
                fn count(&self) -> anyhow::Result<u32> {}
                #[action(output_schema)]
                fn total(&self) -> anyhow::Result<Total> {}
                #[action(output_schema)]
                fn summary(&self) -> Summary {}
            }
        }
    }

    #[test]
    fn output_schema_actions_render_structured_content() {
        let out = super::super::expand(quote!(), every_kind_of_action()).to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert_eq!(out.matches("output_schema_for").count(), 2, "{out}");
        assert_eq!(out.matches("render_structured").count(), 2, "{out}");
        assert!(
            out.contains(
                "output_schema_for :: < < anyhow :: Result < Total > as :: fusion :: __private :: ResultParts > :: Ok > ()"
            ),
            "{out}"
        );
        assert_eq!(
            out.matches("output_schema : :: core :: option :: Option :: None")
                .count(),
            4,
            "{out}"
        );
    }

    #[test]
    fn the_runtime_is_fusion_by_default() {
        let out = super::super::expand(quote!(), every_kind_of_action());
        assert_runtime_only_through(&out, ":: fusion");
    }

    #[test]
    fn every_runtime_path_goes_through_the_crate_option() {
        for krate in [quote!(crate = ::my::rt), quote!(crate = "::my::rt")] {
            let out = super::super::expand(krate, every_kind_of_action());
            assert!(!out.to_string().contains("compile_error"), "{out}");
            assert_runtime_only_through(&out, ":: my :: rt");
        }
        let out = super::super::expand(
            quote!(name = "weather", crate = fu),
            quote!(
                async fn get_weather(args: Place) -> Result<String, anyhow::Error> {}
            ),
        );
        assert!(!out.to_string().contains("compile_error"), "{out}");
        assert_runtime_only_through(&out, "fu");
    }

    #[test]
    fn the_stub_of_a_tool_with_errors_goes_through_the_crate_option_too() {
        // An error in the item: the options were read.
        let out = super::super::expand(
            quote!(crate = ::my::rt),
            quote!(impl Billing { #[action] fn list(&mut self) {} }),
        );
        assert!(out.to_string().contains("compile_error"), "{out}");
        assert_runtime_only_through(&out, ":: my :: rt");
        // An error in the options themselves: `crate` is still found.
        let out = super::super::expand(
            quote!(nme = "billing", crate = ::my::rt),
            quote!(impl Billing { #[action] fn list(&self) {} }),
        );
        assert!(out.to_string().contains("Unknown field: `nme`"), "{out}");
        assert_runtime_only_through(&out, ":: my :: rt");
    }

    #[test]
    fn a_bad_crate_option_is_reported_on_its_value() {
        let out = super::super::expand(
            quote!(crate = 5),
            quote!(
                fn ping() {}
            ),
        );
        let text = out.to_string();
        assert!(
            text.contains(
                "expected the path to fusion, as in `crate = \\\"::fu\\\"` or `crate = ::fu`"
            ),
            "{text}"
        );
        assert!(!text.contains(" at crate"), "{text}");
    }
}
