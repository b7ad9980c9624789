//! The IR of a tool: its names and descriptions, and each action's parameters and return
//! type, borrowing the user's syntax tree.

use darling::util::SpannedValue;
use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, Ident, ImplItem, Item, ItemFn, ItemImpl, PatType,
    PathArguments, Receiver, ReturnType, Signature, Type,
};

use super::Errors;
use super::attr::{self, ActionArgs, Annotations};
use crate::crate_path::CratePath;

/// A tool: an `impl` block with `#[action]` methods, or one function.
pub(crate) struct Tool<'a> {
    /// What the attribute sits on.
    pub(crate) shape: Shape<'a>,
    /// The MCP tool name.
    pub(crate) name: Name,
    /// The tool's description for the model.
    pub(crate) description: String,
    /// The discriminator field; `None` for a function tool.
    pub(crate) discriminator: Option<Name>,
    /// A `discriminator = "…"` given to a function tool (an error `valid` reports).
    pub(crate) stray_discriminator: Option<Span>,
    /// The actions, in source order (one for a function tool).
    pub(crate) actions: Vec<Action<'a>>,
    /// The path generated code names fusion by (`crate = …`, `::fusion` by default).
    pub(crate) krate: CratePath,
}

/// What `#[fusion::tool]` sits on.
pub(crate) enum Shape<'a> {
    /// A multi-action tool: an inherent `impl` block.
    Impl(&'a ItemImpl),
    /// A single-action tool: a function, served by a generated unit struct.
    Function {
        /// The function.
        item: &'a ItemFn,
        /// The generated unit struct (the function name in UpperCamelCase).
        unit: Ident,
    },
}

/// A name the model sees, with where it came from so errors can point at it.
pub(crate) struct Name {
    /// The name.
    pub(crate) value: String,
    /// The `name = "…"` literal, or the identifier the name derives from.
    pub(crate) span: Span,
}

/// One action: a method marked `#[action]`, or a function tool's function.
pub(crate) struct Action<'a> {
    /// The method's signature.
    pub(crate) sig: &'a Signature,
    /// The action name, the discriminator value.
    pub(crate) name: Name,
    /// The action's description for the model.
    pub(crate) description: String,
    /// The MCP annotations (`None` leaves a hint unset).
    pub(crate) annotations: Annotations,
    /// The receiver, if the method has one (`valid` accepts only `&self`).
    pub(crate) receiver: Option<&'a Receiver>,
    /// The typed parameters, in order.
    pub(crate) params: Vec<Param<'a>>,
    /// The return type.
    pub(crate) output: Output<'a>,
    /// `name = …` or `description = …` on a function tool's `#[action]` (errors `valid`
    /// reports: the tool attribute names a function tool).
    pub(crate) misplaced: Vec<Span>,
}

/// One typed parameter of an action.
pub(crate) struct Param<'a> {
    /// The parameter as written (`Args { id }: Args`).
    pub(crate) arg: &'a PatType,
    /// What it receives.
    pub(crate) kind: ParamKind,
}

/// What a parameter receives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// The call's arguments, deserialized.
    Arguments,
    /// The `RequestContext` by value.
    Context,
    /// `&RequestContext`.
    ContextRef,
    /// `&mut RequestContext` (an error `valid` reports).
    ContextMut,
}

/// An action's return type.
pub(crate) enum Output<'a> {
    /// No return type.
    Unit,
    /// A plain value, rendered on success.
    Value,
    /// `Result<T, E>` or an alias such as `anyhow::Result<T>` (detected syntactically: the
    /// last path segment is `Result` with one or two type arguments).
    Result(&'a Type),
}

impl<'a> Tool<'a> {
    /// Reads the tool from the attribute's arguments and the item. `None` when the item is
    /// not something a tool can be declared on (the error is recorded).
    pub(crate) fn from_syn(
        args: TokenStream,
        item: &'a Item,
        errors: &mut Errors,
    ) -> Option<Tool<'a>> {
        let args = attr::tool_args(args, errors);
        let (shape, default_name, attrs) = match item {
            Item::Impl(item) => {
                if let Some((_, path, _)) = &item.trait_ {
                    errors.at(
                        path,
                        "`#[fusion::tool]` goes on an inherent `impl` block, not a trait impl",
                    );
                    return None;
                }
                let default_name = type_ident(&item.self_ty)
                    .map(|ident| Name {
                        value: ident.unraw().to_string().to_snake_case(),
                        span: ident.span(),
                    })
                    .ok_or(&*item.self_ty);
                (Shape::Impl(item), default_name, &item.attrs)
            }
            Item::Fn(item) => {
                let ident = &item.sig.ident;
                let unit = Ident::new(
                    &ident.unraw().to_string().to_upper_camel_case(),
                    ident.span(),
                );
                let default_name = Name {
                    value: ident.unraw().to_string().to_snake_case(),
                    span: ident.span(),
                };
                (
                    Shape::Function { item, unit },
                    Ok(default_name),
                    &item.attrs,
                )
            }
            other => {
                errors.at(
                    item_head(other),
                    "`#[fusion::tool]` goes on an `impl` block or a function",
                );
                return None;
            }
        };

        let name = match (args.name, default_name) {
            (Some(name), _) => Name {
                span: name.span(),
                value: name.into_inner(),
            },
            (None, Ok(name)) => name,
            (None, Err(self_ty)) => {
                errors.at(
                    self_ty,
                    "cannot derive a tool name from this type; name the tool with `#[fusion::tool(name = \"...\")]`",
                );
                // A placeholder, so the empty-name check does not repeat the error; the
                // expansion never sees it (the error sends the tool to the fallback).
                Name {
                    value: "tool".to_owned(),
                    span: self_ty.span(),
                }
            }
        };
        let description = args
            .description
            .or_else(|| attr::docs(attrs))
            .unwrap_or_default();

        let (discriminator, stray_discriminator, actions) = match &shape {
            Shape::Impl(item) => {
                let discriminator = match args.discriminator {
                    Some(d) => Name {
                        span: d.span(),
                        value: d.into_inner(),
                    },
                    None => Name {
                        value: "action".to_owned(),
                        span: Span::call_site(),
                    },
                };
                (Some(discriminator), None, impl_actions(item, errors))
            }
            Shape::Function { item, .. } => {
                let action = function_action(item, &name, &description, errors);
                (None, args.discriminator.map(|d| d.span()), vec![action])
            }
        };

        Some(Tool {
            shape,
            name,
            description,
            discriminator,
            stray_discriminator,
            actions,
            krate: args.krate,
        })
    }
}

/// The `#[action]` methods of an impl block, in source order. `#[action]` on anything but a
/// method is an error.
fn impl_actions<'a>(item: &'a ItemImpl, errors: &mut Errors) -> Vec<Action<'a>> {
    let mut actions = Vec::new();
    for impl_item in &item.items {
        match impl_item {
            ImplItem::Fn(method) => {
                if let Some(args) = attr::action_args(&method.attrs, errors) {
                    actions.push(Action::from_syn(&method.sig, &method.attrs, args, None));
                }
            }
            other => {
                for marker in item_attrs(other).iter().filter(|a| attr::is_action(a)) {
                    errors.at(marker, "`#[action]` goes on a method");
                }
            }
        }
    }
    actions
}

/// The single action of a function tool: named and described like the tool. An `#[action]`
/// attribute on the function may set annotations.
fn function_action<'a>(
    item: &'a ItemFn,
    name: &Name,
    description: &str,
    errors: &mut Errors,
) -> Action<'a> {
    let args = attr::action_args(&item.attrs, errors).unwrap_or_default();
    let tool = Some((name, description));
    Action::from_syn(&item.sig, &item.attrs, args, tool)
}

impl<'a> Action<'a> {
    /// An action from its signature and options. `tool` is the tool's name and description
    /// for a function tool, whose action shares them.
    fn from_syn(
        sig: &'a Signature,
        attrs: &[Attribute],
        args: ActionArgs,
        tool: Option<(&Name, &str)>,
    ) -> Action<'a> {
        let mut misplaced = Vec::new();
        let (name, description) = match tool {
            Some((name, description)) => {
                misplaced.extend(args.name.as_ref().map(|n| n.span()));
                misplaced.extend(args.description.as_ref().map(|d| d.span()));
                (
                    Name {
                        value: name.value.clone(),
                        span: name.span,
                    },
                    description.to_owned(),
                )
            }
            None => {
                let name = match args.name {
                    Some(name) => Name {
                        span: name.span(),
                        value: name.into_inner(),
                    },
                    None => Name {
                        value: sig.ident.unraw().to_string(),
                        span: sig.ident.span(),
                    },
                };
                let description = args
                    .description
                    .map(SpannedValue::into_inner)
                    .or_else(|| attr::docs(attrs))
                    .unwrap_or_default();
                (name, description)
            }
        };

        let mut receiver = None;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => receiver = Some(r),
                FnArg::Typed(arg) => params.push(Param {
                    kind: ParamKind::of(&arg.ty),
                    arg,
                }),
            }
        }
        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) if is_result(ty) => Output::Result(ty),
            ReturnType::Type(..) => Output::Value,
        };

        Action {
            sig,
            name,
            description,
            annotations: args.annotations,
            receiver,
            params,
            output,
            misplaced,
        }
    }

    /// The arguments parameter (the first, when there are several).
    pub(crate) fn arguments(&self) -> Option<&Param<'a>> {
        self.params.iter().find(|p| p.kind == ParamKind::Arguments)
    }

    /// Whether the action is an `async fn`.
    pub(crate) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
    }
}

impl ParamKind {
    /// A parameter whose type's last path segment is `RequestContext` receives the context
    /// (by value or by reference); any other parameter receives the arguments.
    fn of(ty: &Type) -> ParamKind {
        match ty {
            Type::Reference(r) if is_request_context(&r.elem) => match r.mutability {
                Some(_) => ParamKind::ContextMut,
                None => ParamKind::ContextRef,
            },
            ty if is_request_context(ty) => ParamKind::Context,
            _ => ParamKind::Arguments,
        }
    }
}

fn is_request_context(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "RequestContext"),
        Type::Paren(p) => is_request_context(&p.elem),
        Type::Group(g) => is_request_context(&g.elem),
        _ => false,
    }
}

/// `Result<T, E>`, `std::result::Result<T, E>`, `anyhow::Result<T>`, `io::Result<T>`: the last
/// path segment is `Result` with one or two type arguments.
fn is_result(ty: &Type) -> bool {
    let Type::Path(p) = ty else {
        return matches!(ty, Type::Group(g) if is_result(&g.elem));
    };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let PathArguments::AngleBracketed(generics) = &last.arguments else {
        return false;
    };
    let types = generics
        .args
        .iter()
        .filter(|a| matches!(a, GenericArgument::Type(_)))
        .count();
    last.ident == "Result" && (1..=2).contains(&types)
}

/// The identifier a tool name derives from: the last path segment of the impl's type.
fn type_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        Type::Group(g) => type_ident(&g.elem),
        Type::Paren(p) => type_ident(&p.elem),
        _ => None,
    }
}

/// The attributes of an impl item that is not a method.
fn item_attrs(item: &ImplItem) -> &[Attribute] {
    match item {
        ImplItem::Const(c) => &c.attrs,
        ImplItem::Type(t) => &t.attrs,
        ImplItem::Macro(m) => &m.attrs,
        ImplItem::Fn(f) => &f.attrs,
        _ => &[],
    }
}

/// The keyword and name of an item (`struct Invoice`), where "wrong kind of item" errors
/// point.
fn item_head(item: &Item) -> TokenStream {
    fn head(keyword: &impl ToTokens, ident: &Ident) -> TokenStream {
        let mut tokens = keyword.to_token_stream();
        ident.to_tokens(&mut tokens);
        tokens
    }
    match item {
        Item::Struct(i) => head(&i.struct_token, &i.ident),
        Item::Enum(i) => head(&i.enum_token, &i.ident),
        Item::Union(i) => head(&i.union_token, &i.ident),
        Item::Trait(i) => head(&i.trait_token, &i.ident),
        Item::Mod(i) => head(&i.mod_token, &i.ident),
        Item::Type(i) => head(&i.type_token, &i.ident),
        Item::Const(i) => head(&i.const_token, &i.ident),
        Item::Static(i) => head(&i.static_token, &i.ident),
        other => other.to_token_stream(),
    }
}
