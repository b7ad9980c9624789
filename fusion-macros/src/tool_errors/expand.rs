//! Code generation for a validated input; cannot fail. Emits the `ToolErrors` impl (one
//! `ErrorContract` per variant, in declaration order) and `From<E> for ToolError` (the envelope:
//! the type's `Display` as the message, then one builder call per declared section). Every
//! runtime path goes through `Input::krate` (`::fusion` unless `crate = …` names another).

use std::fmt::Write as _;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};

use super::ast::{Body, Field, Input, Piece, Template, Variant};
use super::attr::{Category, Code, Severity};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{GenericParam, Ident, LitStr, Path, Type};

pub(super) fn derive(input: &Input<'_>) -> TokenStream {
    let ty = input.ident;
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let where_clause = where_clause(input);
    let private = input.krate.private();
    let contracts = input.variants().iter().map(|v| {
        let name = v.ident.unraw().to_string();
        match (v.attr.transparent, v.fields.first()) {
            // The wrapped type's contracts, each under this variant's name.
            (true, Some(field)) => {
                let inner = field.ty;
                quote! {
                    __fusion_contracts.extend(
                        <#inner as #private::ToolErrors>::error_contracts()
                            .into_iter()
                            .map(|__fusion_contract| (#name, __fusion_contract)),
                    );
                }
            }
            _ => {
                let contract = contract(input, v);
                quote!(__fusion_contracts.push((#name, #contract));)
            }
        }
    });
    let variant_names = variant_names(input);
    let warnings = super::warn::uncategorized(input);
    let body = from_body(input);
    // `unused_qualifications`: the absolute paths are deliberate (hygiene), even where the
    // user's scope would make them redundant.
    quote! {
        #warnings

        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics #private::ToolErrors for #ty #ty_generics #where_clause {
            fn variant_contracts()
                -> ::std::vec::Vec<(&'static str, #private::ErrorContract)>
            {
                #[allow(unused_mut)]
                let mut __fusion_contracts = ::std::vec::Vec::new();
                #(#contracts)*
                __fusion_contracts
            }

            fn variant(&self) -> ::core::option::Option<&'static str> {
                #variant_names
            }
        }

        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics ::core::convert::From<#ty #ty_generics> for #private::ToolError
        #where_clause
        {
            fn from(__fusion_error: #ty #ty_generics) -> #private::ToolError {
                #body
            }
        }
    }
}

/// A span with the call site's name resolution (the expansion's own identifiers, lints treated
/// as the macro's) and the location of `at` (so errors point at the user's token).
fn located(at: Span) -> Span {
    Span::call_site().located_at(at)
}

/// The name a pattern binds field `index` to.
fn binding(index: usize, at: Span) -> Ident {
    Ident::new(&format!("__fusion_{index}"), located(at))
}

/// One `ErrorContract::new(code, severity, category, retryable)`.
fn contract(input: &Input<'_>, variant: &Variant<'_>) -> TokenStream {
    let attr = &variant.attr;
    let private = &input.krate.private();
    if attr.internal {
        let severity = severity(private, attr.severity.unwrap_or(Severity::Error));
        return quote! {
            #private::ErrorContract::new(
                #private::ErrorCode::InternalError,
                #severity,
                ::core::option::Option::Some(#private::ErrorCategory::Unknown),
                ::core::option::Option::Some(false),
            )
        };
    }
    let code = code(private, attr.code.as_ref());
    let severity = severity(
        private,
        attr.severity
            .or(input.attr.severity)
            .unwrap_or(Severity::Error),
    );
    let category = option(
        attr.category
            .or(input.attr.category)
            .map(|c| category(private, c)),
    );
    let retryable = option(attr.retryable.map(|r| quote!(#r)));
    quote!(#private::ErrorContract::new(#code, #severity, #category, #retryable))
}

/// The body of `ToolErrors::variant`: the name of the variant `self` is.
fn variant_names(input: &Input<'_>) -> TokenStream {
    let arms = input.variants().iter().map(|variant| {
        let name = variant.ident.unraw().to_string();
        let path = variant_path(input, variant);
        quote!(#path { .. } => ::core::option::Option::Some(#name),)
    });
    quote! {
        #[allow(unreachable_patterns)]
        match self {
            #(#arms)*
            _ => ::core::option::Option::None,
        }
    }
}

/// The body of `From::from`: one match arm per variant.
fn from_body(input: &Input<'_>) -> TokenStream {
    let variants = input.variants();
    if variants.is_empty() {
        return quote!(match __fusion_error {});
    }
    // The message is the type's `Display`. Formatting goes through this function, spanned on the
    // type's name, so a missing `Display` is reported there rather than inside the expansion
    // (once: rustc merges the identical errors of several arms).
    let display = variants
        .iter()
        .any(|v| !v.attr.internal && !v.attr.transparent)
        .then(|| {
            quote_spanned! {located(input.ident.span())=>
                fn __fusion_display<__FusionT: ?::core::marker::Sized + ::core::fmt::Display>(
                    __fusion_value: &__FusionT,
                ) -> ::std::string::String {
                    ::std::string::ToString::to_string(__fusion_value)
                }
            }
        });
    let autoref = variants.iter().any(|v| v.attr.internal) && input.generics.params.is_empty();
    let imports = autoref.then(|| {
        let private = input.krate.private();
        quote!(
            use #private::{InternalChain as _, InternalDisplay as _};
        )
    });
    let passed = transparent(input);
    let arms = variants.iter().map(|variant| {
        let pattern = pattern(input, variant);
        let envelope = if variant.attr.transparent {
            quote!(::core::unreachable!("passed through above"))
        } else if variant.attr.internal {
            internal(input, variant)
        } else {
            envelope(input, variant)
        };
        quote!(#pattern => #envelope,)
    });
    quote! {
        #imports
        #display
        #passed
        match &__fusion_error {
            #(#arms)*
        }
    }
}

/// Passes each `transparent` variant's wrapped error through, by value, before the envelope
/// match (which borrows): `let __fusion_error = match __fusion_error { E::V(e) => return
/// e.into(), other => other };`. Nothing when no variant is transparent.
fn transparent(input: &Input<'_>) -> Option<TokenStream> {
    let private = input.krate.private();
    let arms: Vec<TokenStream> = input
        .variants()
        .iter()
        .filter(|v| v.attr.transparent)
        .filter_map(|variant| {
            let field = variant.fields.first()?;
            let member = &field.member;
            let path = variant_path(input, variant);
            Some(quote! {
                #path { #member: __fusion_inner, .. } => {
                    return <#private::ToolError as ::core::convert::From<_>>::from(__fusion_inner);
                }
            })
        })
        .collect();
    if arms.is_empty() {
        return None;
    }
    Some(quote! {
        #[allow(unreachable_patterns)]
        let __fusion_error = match __fusion_error {
            #(#arms)*
            __fusion_other => __fusion_other,
        };
    })
}

/// The path of `variant` in patterns: `Billing::NotFound`, or the struct's own name.
fn variant_path(input: &Input<'_>, variant: &Variant<'_>) -> TokenStream {
    let ty = input.ident;
    match &input.body {
        Body::Enum(_) => {
            let name = variant.ident;
            quote!(#ty::#name)
        }
        Body::Struct(_) => quote!(#ty),
    }
}

/// `Billing::NotFound { id: __fusion_0, .. }`, binding only the fields the envelope reads.
fn pattern(input: &Input<'_>, variant: &Variant<'_>) -> TokenStream {
    let path = variant_path(input, variant);
    let used = used_fields(variant);
    let fields = used.iter().map(|&index| {
        let member = &variant.fields[index].member;
        let name = binding(index, Span::call_site());
        quote!(#member: #name)
    });
    quote!(#path { #(#fields,)* .. })
}

/// The indices of the fields the envelope reads, in field order.
fn used_fields(variant: &Variant<'_>) -> Vec<usize> {
    if variant.attr.internal {
        return Vec::new();
    }
    let in_recovery = |index: usize| {
        variant
            .recovery
            .iter()
            .flat_map(|t| &t.pieces)
            .any(|piece| matches!(piece, Piece::Field { field, .. } if *field == index))
    };
    (0..variant.fields.len())
        .filter(|&index| {
            let attrs = &variant.fields[index].attrs;
            attrs.detail.is_some() || attrs.retry_after.is_some() || in_recovery(index)
        })
        .collect()
}

/// An internal variant: `INTERNAL_ERROR` with an error id; the value is logged, never shown.
fn internal(input: &Input<'_>, variant: &Variant<'_>) -> TokenStream {
    // Autoref specialization picks the error chain when the type is a `std::error::Error`, its
    // `Display` otherwise. It cannot see through generic parameters (and the chain needs
    // `'static`), so a generic type always logs its `Display`.
    let span = located(input.ident.span());
    let private = input.krate.private_at(span);
    let envelope = if input.generics.params.is_empty() {
        quote_spanned!(span=> (&&#private::Internal(&__fusion_error)).__fusion_internal())
    } else {
        quote_spanned! {span=>
            #private::InternalDisplay::__fusion_internal(
                &#private::Internal(&__fusion_error),
            )
        }
    };
    match variant.attr.severity {
        Some(level) => {
            let level = severity(&input.krate.private(), level);
            quote!(#envelope.severity(#level))
        }
        None => envelope,
    }
}

/// `ToolError::new(code, message)` and one builder call per declared section.
fn envelope(input: &Input<'_>, variant: &Variant<'_>) -> TokenStream {
    let attr = &variant.attr;
    let private = &input.krate.private();
    let code = code(private, attr.code.as_ref());
    let message = quote_spanned!(located(input.ident.span())=> __fusion_display(&__fusion_error));
    let mut chain = quote!(#private::ToolError::new(#code, #message));
    if let Some(level) = attr.severity.or(input.attr.severity) {
        let level = severity(private, level);
        chain.extend(quote!(.severity(#level)));
    }
    if let Some(template) = &variant.recovery {
        let recovery = recovery(template);
        chain.extend(quote!(.suggest(#recovery)));
    }
    if !attr.actions.is_empty() {
        let tool = input.attr.tool.as_ref().or(attr.tool.as_ref());
        let actions = attr.actions.iter().map(|action| {
            let constant = action_constant(action, tool, private);
            quote!(#private::ActionRef::qualified(#constant))
        });
        chain.extend(quote!(.actions([#(#actions),*])));
    }
    for (index, field) in variant.fields.iter().enumerate() {
        if let Some(detail) = &field.attrs.detail {
            let key = match (&detail.key, field.ident) {
                (Some(key), _) => key.clone(),
                (None, ident) => {
                    let name = ident.map(|i| i.unraw().to_string()).unwrap_or_default();
                    LitStr::new(&name, detail.span)
                }
            };
            let at = located(field.ty.span());
            let value = binding(index, at);
            chain.extend(quote_spanned!(at=> .detail(#key, #value)));
        }
        if field.attrs.retry_after.is_some() {
            let at = located(field.ty.span());
            let value = binding(index, at);
            let private = input.krate.private_at(at);
            chain.extend(quote_spanned! {at=>
                .retry_after(#private::RetryAfterSecs::retry_after_secs(#value))
            });
        }
    }
    if let Some(c) = attr.category.or(input.attr.category) {
        let c = category(private, c);
        chain.extend(quote!(.category(#c)));
    }
    if let Some(retryable) = attr.retryable {
        chain.extend(quote!(.retryable(#retryable)));
    }
    chain
}

/// The recovery text: a literal, or `::std::format!` over the fields it names. Placeholders are
/// rewritten to positional arguments, one per distinct field.
fn recovery(template: &Template) -> TokenStream {
    let span = template.span();
    let mut format = String::new();
    let mut plain = String::new();
    let mut args: Vec<usize> = Vec::new();
    for piece in &template.pieces {
        match piece {
            Piece::Text(text) => {
                plain.push_str(text);
                format.push_str(&text.replace('{', "{{").replace('}', "}}"));
            }
            Piece::Field { field, spec } => {
                let position = args.iter().position(|a| a == field).unwrap_or_else(|| {
                    args.push(*field);
                    args.len() - 1
                });
                let _ = match spec.as_str() {
                    "" => write!(format, "{{{position}}}"),
                    spec => write!(format, "{{{position}:{spec}}}"),
                };
            }
        }
    }
    if args.is_empty() {
        return LitStr::new(&plain, span).into_token_stream();
    }
    let format = LitStr::new(&format, span);
    let args = args.iter().map(|&index| binding(index, span));
    quote!(::std::format!(#format, #(#args),*))
}

/// `Billing::list_invoices` → the `ActionRef` `#[fusion::tool]`'s
/// `Billing::__fusion_action_named("list_invoices")` finds, as a constant; a bare
/// `list_invoices` takes the type-level `tool`. A method that is no action fails the constant's
/// evaluation with a message naming the closest action method, spanned on the user's token.
fn action_constant(action: &Path, tool: Option<&Path>, private: &TokenStream) -> TokenStream {
    let count = action.segments.len();
    let last = &action.segments[count - 1].ident;
    let method = LitStr::new(&last.unraw().to_string(), last.span());
    // As a qualified path (`<Gen<u8>>::…`): the tool is a type, which may have generic
    // arguments (`Gen<u8>::…` does not parse as an expression).
    let tool = if count == 1 && action.leading_colon.is_none() {
        match tool {
            Some(tool) => quote!(<#tool>),
            None => quote!(<()>), // unreachable: rejected in `valid.rs`
        }
    } else {
        let leading = &action.leading_colon;
        let init = action.segments.iter().take(count - 1);
        quote!(<#leading #(#init)::*>)
    };
    let span = last.span();
    let panic = quote_spanned!(span=> ::core::panic!("{}", __fusion_message));
    quote_spanned! {span=>
        {
            const __FUSION_ACTION: #private::ActionRef =
                match #tool::__fusion_action_named(#method) {
                    #private::ActionLookup::Found(__fusion_action) => __fusion_action,
                    #private::ActionLookup::Missing(__fusion_message) => #panic,
                };
            __FUSION_ACTION
        }
    }
}

/// `private` is the runtime module (`CratePath::private`); likewise for `severity` and `category`.
fn code(private: &TokenStream, code: Option<&Code>) -> TokenStream {
    match code {
        Some(Code::Canonical(variant)) => {
            let variant = Ident::new(variant, Span::call_site());
            quote!(#private::ErrorCode::#variant)
        }
        Some(Code::Custom(code)) => quote!(#private::ErrorCode::custom(#code)),
        // Unreachable: a variant without a code is rejected in `valid.rs`.
        None => quote!(#private::ErrorCode::InternalError),
    }
}

fn severity(private: &TokenStream, severity: Severity) -> TokenStream {
    let variant = match severity {
        Severity::Warning => quote!(Warning),
        Severity::Error => quote!(Error),
        Severity::Critical => quote!(Critical),
    };
    quote!(#private::Severity::#variant)
}

fn category(private: &TokenStream, category: Category) -> TokenStream {
    let variant = match category {
        Category::Auth => quote!(Auth),
        Category::RateLimit => quote!(RateLimit),
        Category::NotFound => quote!(NotFound),
        Category::Validation => quote!(Validation),
        Category::Transient => quote!(Transient),
        Category::Unknown => quote!(Unknown),
    };
    quote!(#private::ErrorCategory::#variant)
}

fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The user's where clause plus, for a type with type parameters, the bounds the envelope
/// needs: the type's `Display`, and each read field's formatting trait when its type mentions a
/// parameter (as thiserror infers them). Without type parameters the bounds would be trivial, and
/// a missing `Display` is reported on the user's tokens instead (see [`from_body`]).
fn where_clause(input: &Input<'_>) -> TokenStream {
    let existing = input
        .generics
        .where_clause
        .iter()
        .flat_map(|w| &w.predicates);
    let params: Vec<&Ident> = input
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Type(t) => Some(&t.ident),
            _ => None,
        })
        .collect();
    let mut bounds: Vec<TokenStream> = Vec::new();
    if !params.is_empty() {
        let ty = input.ident;
        let (_, ty_generics, _) = input.generics.split_for_impl();
        bounds.push(quote!(#ty #ty_generics: ::core::fmt::Display));
        for variant in input.variants() {
            for index in used_fields(variant) {
                let field = &variant.fields[index];
                if mentions(field.ty.to_token_stream(), &params) {
                    push_field_bounds(&mut bounds, input, variant, index, field);
                }
            }
        }
    }
    let existing: Vec<_> = existing.collect();
    if existing.is_empty() && bounds.is_empty() {
        return TokenStream::new();
    }
    let mut seen = Vec::new();
    bounds.retain(|b| {
        let key = b.to_string();
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    quote!(where #(#existing,)* #(#bounds,)*)
}

/// The traits the envelope uses field `index` through.
fn push_field_bounds(
    bounds: &mut Vec<TokenStream>,
    input: &Input<'_>,
    variant: &Variant<'_>,
    index: usize,
    field: &Field<'_>,
) {
    let ty: &Type = field.ty;
    if field.attrs.detail.is_some() {
        bounds.push(quote!(#ty: ::core::fmt::Display));
    }
    if field.attrs.retry_after.is_some() {
        let private = input.krate.private();
        bounds.push(quote!(#ty: #private::RetryAfterSecs));
    }
    for piece in variant.recovery.iter().flat_map(|t| &t.pieces) {
        match piece {
            Piece::Field { field, spec } if *field == index => {
                if let Some(fmt) = format_trait(spec) {
                    bounds.push(quote!(#ty: ::core::fmt::#fmt));
                }
            }
            _ => {}
        }
    }
}

/// The `core::fmt` trait a format spec uses (`?` → `Debug`, `x` → `LowerHex`, …); `None` for
/// `p`, which every reference implements.
fn format_trait(spec: &str) -> Option<Ident> {
    let name = match spec.chars().last() {
        Some('?') => "Debug",
        Some('x') => "LowerHex",
        Some('X') => "UpperHex",
        Some('o') => "Octal",
        Some('b') => "Binary",
        Some('e') => "LowerExp",
        Some('E') => "UpperExp",
        Some('p') => return None,
        _ => "Display",
    };
    Some(Ident::new(name, Span::call_site()))
}

/// Whether `tokens` name one of the type parameters.
fn mentions(tokens: TokenStream, params: &[&Ident]) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => params.iter().any(|p| **p == ident),
        proc_macro2::TokenTree::Group(group) => mentions(group.stream(), params),
        _ => false,
    })
}
