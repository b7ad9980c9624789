//! The generated code of a valid tool: the user's item, the action constants, the definition
//! and the `Tool` impl (`definition`, `prepare`, `guards`, `input_schemas`). Cannot fail;
//! behaviour lives in `::fusion::__private` (or under the path `crate = …` gives: every runtime
//! path goes through `CratePath::private`).

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ImplItem, Item};

use super::action_ref::{action_const, action_lookup};
use super::ast::{Action, Name, ParamKind, Shape, Tool};
use super::attr;
pub(crate) use super::target::Target;

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
    let lookup = action_lookup(tool);
    let definition = definition(tool);
    let prepare = prepare(tool);
    let private = tool.krate.private();
    let guards = guards(tool);
    let input_schemas = input_schemas(tool);
    // The refusals the declared guards can send are part of the advertised error contract, and
    // so is the `RESULT_TRUNCATED` of an action with a result limit of its own.
    let limited = (tool.actions.iter()).any(|action| action.result.max_result.is_some());
    let definition_call = if guards.is_some() || limited {
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
            #lookup

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

            fn prepare(
                self: ::std::sync::Arc<Self>,
                __fusion_call: #private::ToolCall<'_>,
            ) -> ::core::result::Result<#private::PreparedCall, #private::ToolResponse> {
                #prepare
            }

            #guards
            #input_schemas
        }
    }
}

/// `Tool::input_schemas`, when the tool says how its input schema is published; nothing
/// otherwise (the trait's default leaves it to the server).
fn input_schemas(tool: &Tool<'_>) -> Option<TokenStream> {
    let private = tool.krate.private();
    let form = match tool.input_schema.as_ref()?.as_str() {
        "as_written" => quote!(AsWritten),
        _ => quote!(Portable),
    };
    Some(quote! {
        fn input_schemas(&self) -> ::core::option::Option<#private::InputSchemas> {
            ::core::option::Option::Some(#private::InputSchemas::#form)
        }
    })
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

/// The body of `__fusion_definition`.
fn definition(tool: &Tool<'_>) -> TokenStream {
    let name = &tool.name.value;
    let description = &tool.description;
    let discriminator = some_string(tool.discriminator.as_ref());
    let title = some_string(tool.title.as_ref());
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
    // The output and arguments probes call trait methods, which need their traits in scope;
    // an unused glob import would warn, so it is only emitted when a probe is.
    let probes = tool
        .actions
        .iter()
        .any(|a| nameable_output(a).is_some() || a.arguments().is_some())
        .then(|| autoref_import(tool));
    quote! {
        #probes
        let mut __fusion_actions = ::std::vec::Vec::new();
        #(#actions)*
        #private::ToolDefinition {
            name: ::std::string::String::from(#name),
            description: ::std::string::String::from(#description),
            title: #title,
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
    let title = some_string(action.title.as_ref());
    let input_schema = match action.arguments() {
        // Spanned on the user's type: "`Args: JsonSchema` is not satisfied" lands there. This
        // and the `parse` call are the only places the bounds are required, so each missing
        // trait is reported once.
        Some(param) => {
            let ty = &param.arg.ty;
            let private = tool.krate.private_at(ty.span());
            // A type whose JSON is no object (`Vec<String>`) is refused here, on the type.
            quote_spanned! {ty.span()=> {
                (&&#private::Arguments::<#ty>::NEW).__fusion_object_arguments();
                #private::schema_for::<#ty>()
            }}
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
    // Probed rather than required: an output that is not `IntoToolResponse` is reported once,
    // on the action's return type, by `prepare`.
    let errors = match (nameable_output(action), &action.errors) {
        (Some(ty), None) => quote!((&&#private::Outputs::<#ty>::NEW).__fusion_contracts()),
        (Some(ty), Some(variants)) => declared_errors(tool, ty, variants),
        (None, _) => quote!(::std::vec::Vec::new()),
    };
    let output_schema = output_schema(tool, action);
    let task = action.task;
    let task_required = action.task_required;
    let task_deferred = action.task_deferred;
    let strict_json = action.strict_json;
    let result = result_fit(&private, &action.result);
    quote! {
        #private::ActionDefinition {
            name: ::std::string::String::from(#name),
            description: ::std::string::String::from(#description),
            title: #title,
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
            scopes: ::std::vec::Vec::new(),
            task: #task,
            task_required: #task_required,
            task_deferred: #task_deferred,
            strict_json: #strict_json,
            result: #result,
        }
    }
}

/// The action's `ResultFit`: its `max_result` (bytes), `items` and `page(..)`.
fn result_fit(private: &TokenStream, result: &super::ast::ResultArgs) -> TokenStream {
    let max_result = match result.max_result {
        Some(bytes) => quote!(::core::option::Option::Some(#private::ResultLimit::Bytes(#bytes))),
        None => quote!(::core::option::Option::None),
    };
    let items = match &result.items {
        Some(path) => quote!(::core::option::Option::Some(::std::string::String::from(#path))),
        None => quote!(::core::option::Option::None),
    };
    let page = match &result.page {
        Some(page) => {
            let (offset, limit) = (&page.offset, &page.limit);
            quote!(::core::option::Option::Some(#private::Paging {
                offset: ::std::string::String::from(#offset),
                limit: ::std::string::String::from(#limit),
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    quote!(#private::ResultFit { max_result: #max_result, items: #items, page: #page })
}

/// The contracts of the variants an action declares with `errors(..)`. The closure is never
/// called: it has the compiler check that each path is a variant of the action's error type
/// (errors land on the user's path).
fn declared_errors(tool: &Tool<'_>, output: &syn::Type, variants: &[syn::Path]) -> TokenStream {
    let private = tool.krate.private();
    let error_of = quote_spanned!(output.span()=> <#output as #private::ErrorOf>::Error);
    let patterns = variants
        .iter()
        .map(|path| quote_spanned!(path.span()=> #path { .. } => {}));
    let names = variant_names(variants);
    quote! {{
        let _ = |__fusion_error: &#error_of| match __fusion_error {
            #(#patterns)*
            #[allow(unreachable_patterns)]
            _ => {}
        };
        #private::declared_contracts::<#output>(&[#(#names),*])
    }}
}

/// The variant names of `errors(..)` paths: each path's last segment.
fn variant_names(variants: &[syn::Path]) -> Vec<String> {
    variants
        .iter()
        .filter_map(|path| path.segments.last())
        .map(|segment| segment.ident.unraw().to_string())
        .collect()
}

/// `ActionDefinition::output_schema`, when the action declares `output_schema`: the schema of
/// its output's success type (`StructuredOutput::Success`), probed like the contracts, so a
/// return type without one is reported once, by `prepare`.
fn output_schema(tool: &Tool<'_>, action: &Action<'_>) -> TokenStream {
    match (action.output_schema, nameable_output(action)) {
        (Some(_), Some(ty)) => {
            let private = tool.krate.private();
            quote!((&&#private::Outputs::<#ty>::NEW).__fusion_output_schema())
        }
        _ => quote!(::core::option::Option::None),
    }
}

/// The action's return type when the definition can name it: written out, and not an
/// `impl Trait` (which only the function's own body may name).
fn nameable_output<'a>(action: &Action<'a>) -> Option<&'a syn::Type> {
    let ty = action.output?;
    let opaque = ty
        .to_token_stream()
        .into_iter()
        .any(|token| matches!(&token, proc_macro2::TokenTree::Ident(i) if i == "impl"));
    (!opaque).then_some(ty)
}

/// The body of `Tool::prepare`: take the action the runtime routed the call to, validate its
/// arguments, and hand the handler to a `PreparedCall`.
fn prepare(tool: &Tool<'_>) -> TokenStream {
    let body = match &tool.shape {
        // One action: nothing to match.
        Shape::Function { .. } => action_arm(tool, &tool.actions[0]),
        Shape::Impl(_) => {
            let arms = tool.actions.iter().enumerate().map(|(index, action)| {
                let cfg = &action.cfg;
                match action_index(tool, index) {
                    Some(index) => {
                        let arm = action_arm(tool, action);
                        quote! {
                            #(#cfg)*
                            __fusion_index if __fusion_index == #index => { #arm }
                        }
                    }
                    None => {
                        let arm = action_arm(tool, action);
                        quote! {
                            #(#cfg)*
                            #index => { #arm }
                        }
                    }
                }
            });
            quote! {
                match __fusion_call.index() {
                    #(#arms)*
                    _ => {
                        ::core::unreachable!("the runtime routes only to declared actions")
                    }
                }
            }
        }
    };
    // The validation and declared-errors probes are trait methods; an unused glob import would
    // warn, so it is only emitted when an action takes arguments or declares its errors.
    let probes = tool
        .actions
        .iter()
        .any(|a| a.arguments().is_some() || a.errors.is_some())
        .then(|| autoref_import(tool));
    quote! {
        #probes
        #body
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

/// One action's branch of `prepare`: validate its arguments, then the `PreparedCall` that
/// calls it and turns its output into the response.
fn action_arm(tool: &Tool<'_>, action: &Action<'_>) -> TokenStream {
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
            let call = quote!(__fusion_call);
            let parse = quote_spanned! {ty.span()=>
                #call.parse_with::<#ty, _>(#rules)
            };
            quote!(let __fusion_args: #ty = #parse?;)
        }
        None => quote!(__fusion_call.parse_none()?;),
    };

    let method = &action.sig.ident;
    let callee = match &tool.shape {
        Shape::Impl(_) => quote!(Self::#method),
        Shape::Function { .. } => quote!(#method),
    };
    // The handler owns the tool's `Arc` (moved into the closure); `&self` borrows from it.
    let receiver = action.receiver.map(|_| quote!(&self));
    let params = action.params.iter().map(|param| match param.kind {
        ParamKind::Arguments => quote!(__fusion_args),
        ParamKind::Context => quote!(__fusion_context),
        // `valid` rejects `&mut`; this arm exists only so the match is total.
        ParamKind::ContextRef | ParamKind::ContextMut => quote!(&__fusion_context),
    });
    let awaited = action.is_async().then(|| quote!(.await));
    let args = receiver.into_iter().chain(params);
    let invoke = quote!(#callee(#(#args),*) #awaited);

    // The output becomes the response through the runtime's traits, spanned on the return
    // type: "cannot be an action's output" lands there.
    let span = action
        .output
        .map_or_else(proc_macro2::Span::call_site, Spanned::span);
    let private_at = tool.krate.private_at(span);
    let respond = match action.output_schema {
        Some(_) => quote_spanned!(span=> #private_at::respond_structured),
        None => quote_spanned!(span=> #private_at::respond),
    };
    // The output's local, reported at the return type too but resolved where it was written,
    // so an unmet bound's primary span is the user's type.
    let output = located_at(quote!(__fusion_output), span);
    let name = &action.name.value;
    // The action may be `#[deprecated]`: the generated call is not a use to warn about.
    let allow = quote! {
        #[allow(deprecated, reason = "the tool serves its actions, deprecated or not")]
    };
    // An action declaring its variants reports a variant returned outside the declaration.
    let check = action.errors.as_deref().map(|variants| {
        let names = variant_names(variants);
        let tool_name = &tool.name.value;
        // A probe: an output that is no `Result` is reported once, by the definition.
        quote! {
            (&&#private::Declared(&__fusion_output))
                .__fusion_check_declared(&[#(#names),*], #tool_name, #name);
        }
    });
    let prepared = if action.is_async() {
        quote! {
            #private::PreparedCall::new(move |__fusion_context| async move {
                #allow
                let __fusion_output = #invoke;
                #check
                #respond(#output)
            })
        }
    } else {
        // A plain `fn` runs inline (or on the blocking pool under a timeout); one declared
        // `blocking` always runs on the pool.
        let constructor = match action.blocking {
            Some(_) => quote!(blocking),
            None => quote!(sync),
        };
        quote! {
            #private::PreparedCall::#constructor(move |__fusion_context| {
                #allow
                let __fusion_output = #invoke;
                #check
                #respond(#output)
            })
        }
    };
    quote! {
        #parse
        ::core::result::Result::Ok(#prepared)
    }
}

/// `tokens` reported at `at` but resolved where they were written: for the locals a call
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

/// `Some(String::from(value))`, or `None`.
fn some_string(value: Option<&Name>) -> TokenStream {
    match value.map(|name| &name.value) {
        Some(v) => quote!(::core::option::Option::Some(::std::string::String::from(#v))),
        None => quote!(::core::option::Option::None),
    }
}

/// Brings the autoref-specialization traits into scope for the probes' method calls.
fn autoref_import(tool: &Tool<'_>) -> TokenStream {
    let private = tool.krate.private();
    quote! {
        use #private::autoref::*;
    }
}

#[cfg(test)]
#[path = "expand_tests.rs"]
mod tests;
