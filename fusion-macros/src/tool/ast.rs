//! The IR of a tool: its names and descriptions, and each action's parameters and return
//! type, borrowing the user's syntax tree.

use darling::util::SpannedValue;
use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, Ident, ImplItem, Item, ItemFn, ItemImpl, PatType, Receiver, ReturnType,
    Signature, Type,
};

use super::attr::{self, ActionArgs, Annotations, PageArgs};
use super::guard::GuardArgs;
use crate::crate_path::CratePath;
use crate::errors::Errors;

/// A tool: an `impl` block with `#[action]` methods, or one function.
pub(crate) struct Tool<'a> {
    /// What the attribute sits on.
    pub(crate) shape: Shape<'a>,
    /// The MCP tool name.
    pub(crate) name: Name,
    /// The tool's title for user interfaces (`title = "…"`, else the doc comment's summary).
    pub(crate) title: Option<Name>,
    /// The tool's description for the model.
    pub(crate) description: String,
    /// The discriminator field; `None` for a function tool, and for an `impl` block with one
    /// action and no `discriminator = …`.
    pub(crate) discriminator: Option<Name>,
    /// A `discriminator = "…"` given to a function tool (an error `valid` reports).
    pub(crate) stray_discriminator: Option<Span>,
    /// `output_schema` given to `#[fusion::tool(...)]` on an `impl` block (an error `valid`
    /// reports: each action declares its own).
    pub(crate) stray_output_schema: Option<Span>,
    /// `errors(..)` given to `#[fusion::tool(...)]` on an `impl` block (an error `valid`
    /// reports: each action declares its own).
    pub(crate) stray_errors: Option<Span>,
    /// The actions, in source order (one for a function tool).
    pub(crate) actions: Vec<Action<'a>>,
    /// The path generated code names fusion by (`crate = …`, `::fusion` by default).
    pub(crate) krate: CratePath,
    /// The guards of the whole tool (for a function tool, its `#[action(...)]` guards too).
    pub(crate) guards: GuardArgs,
    /// `input_schema = "…"`: how the input schema is published (checked by `valid`).
    pub(crate) input_schema: Option<SpannedValue<String>>,
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
#[derive(Clone)]
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
    /// The action's title for user interfaces (`title = "…"`, else the doc comment's summary).
    pub(crate) title: Option<Name>,
    /// The action's description for the model.
    pub(crate) description: String,
    /// The MCP annotations, the tool's filling the unset ones (`None` leaves a hint unset).
    pub(crate) annotations: Annotations,
    /// The receiver, if the method has one (`valid` accepts only `&self`).
    pub(crate) receiver: Option<&'a Receiver>,
    /// The typed parameters, in order.
    pub(crate) params: Vec<Param<'a>>,
    /// The return type as written; `None` for `()` left implicit. The runtime's
    /// `IntoToolResponse` decides how it renders, so the macro never reads its name.
    pub(crate) output: Option<&'a Type>,
    /// The `output_schema` flag, when given (on `#[action(...)]`, or on
    /// `#[fusion::tool(...)]` for a function tool).
    pub(crate) output_schema: Option<Span>,
    /// The `blocking` flag, when given: the action runs on the blocking pool (a plain `fn`
    /// only; `valid` reports it on an `async fn`).
    pub(crate) blocking: Option<Span>,
    /// The `task` flag: the action may run as a task.
    pub(crate) task: bool,
    /// `task = required`: the action runs only as a task.
    pub(crate) task_required: bool,
    /// `task(deferred)`: the task starts when the action calls `RequestContext::start_task`.
    pub(crate) task_deferred: bool,
    /// The `strict_json` flag: the action's arguments are never decoded from stringified JSON.
    pub(crate) strict_json: bool,
    /// `max_result`, `items` and `page(..)`: how the result is fitted to a size.
    pub(crate) result: ResultArgs,
    /// `name = …`, `title = …` or `description = …` on a function tool's `#[action]` (errors
    /// `valid` reports: the tool attribute names a function tool).
    pub(crate) misplaced: Vec<Span>,
    /// The method's `#[cfg]` attributes, repeated on everything generated for it (empty for a
    /// function tool: its attributes go on the whole tool). Not `#[cfg_attr]`: what it expands
    /// to (`doc`, `deprecated`, …) may not suit a match arm or a statement.
    pub(crate) cfg: Vec<&'a Attribute>,
    /// The action's own guards (empty for a function tool: they are the tool's).
    pub(crate) guards: GuardArgs,
    /// `errors(..)`: the error variants the action declares it can return; `None` declares
    /// every variant of its error type.
    pub(crate) errors: Option<Vec<syn::Path>>,
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

impl<'a> Tool<'a> {
    /// Reads the tool from the attribute's arguments and the item. `None` when the item is
    /// not something a tool can be declared on (the error is recorded).
    pub(crate) fn from_syn(
        args: TokenStream,
        item: &'a Item,
        errors: &mut Errors,
    ) -> Option<Tool<'a>> {
        let args = attr::tool_args(args, errors);
        let mut guards = args.guards.clone();
        let tool_hints = args.annotations();
        let tool_output_schema = flag(&args.output_schema);
        let tool_errors = args.errors.clone();
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
                let unit = unit_ident(ident).unwrap_or_else(|| {
                    errors.at(
                        ident,
                        format_args!(
                            "cannot derive a type name from `{}`; rename the function",
                            ident.unraw()
                        ),
                    );
                    // A placeholder for the fallback's stub.
                    Ident::new("__FusionUnnamedTool", ident.span())
                });
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
        let title = title(args.title, attrs);

        let (discriminator, stray_discriminator, stray_output_schema, actions) = match &shape {
            Shape::Impl(item) => {
                let mut actions = impl_actions(item, errors);
                for action in &mut actions {
                    action.annotations = action.annotations.or(tool_hints);
                }
                // One action and no `discriminator = …`: the tool is its action, as a function
                // tool is, and takes the action's arguments without naming it.
                let discriminator = match args.discriminator {
                    Some(d) => Some(Name {
                        span: d.span(),
                        value: d.into_inner(),
                    }),
                    None if actions.len() == 1 => None,
                    None => Some(Name {
                        value: "action".to_owned(),
                        span: Span::call_site(),
                    }),
                };
                (discriminator, None, tool_output_schema, actions)
            }
            Shape::Function { item, .. } => {
                let mut action = function_action(item, &name, &description, errors);
                action.title.clone_from(&title);
                action.annotations = action.annotations.or(tool_hints);
                // Either place declares them: the tool is its one action.
                guards = guards.or(std::mem::take(&mut action.guards));
                // Either place declares it: the tool is its one action.
                action.output_schema = action.output_schema.or(tool_output_schema);
                if action.errors.is_none() {
                    action.errors = tool_errors.clone().map(|e| e.into_inner().to_vec());
                }
                let stray_discriminator = args.discriminator.map(|d| d.span());
                (None, stray_discriminator, None, vec![action])
            }
        };

        let stray_errors = match shape {
            Shape::Impl(_) => tool_errors.map(|e| e.span()),
            Shape::Function { .. } => None,
        };
        Some(Tool {
            shape,
            name,
            title,
            description,
            discriminator,
            stray_discriminator,
            stray_output_schema,
            stray_errors,
            actions,
            krate: args.krate,
            guards,
            input_schema: args.input_schema,
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
                    let mut action = Action::from_syn(&method.sig, &method.attrs, args, None);
                    action.cfg = method
                        .attrs
                        .iter()
                        .filter(|a| a.path().is_ident("cfg"))
                        .collect();
                    actions.push(action);
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
/// attribute on the function may set annotations and `output_schema`.
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
        let guards = args.guards();
        let mut misplaced = Vec::new();
        let (name, description) = match tool {
            Some((name, description)) => {
                misplaced.extend(args.name.as_ref().map(|n| n.span()));
                misplaced.extend(args.title.as_ref().map(|t| t.span()));
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
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(&**ty),
        };

        Action {
            sig,
            name,
            // A function tool's action takes the tool's (see `Tool::from_syn`).
            title: title(args.title, attrs).filter(|_| tool.is_none()),
            description,
            annotations: args.annotations,
            receiver,
            params,
            output,
            output_schema: flag(&args.output_schema),
            blocking: flag(&args.blocking),
            task: args.task.is_some(),
            task_required: args.task.is_some_and(|task| task.required),
            task_deferred: args.task.is_some_and(|task| task.deferred),
            strict_json: args.strict_json.is_present(),
            result: ResultArgs {
                max_result: args.max_result,
                items: args.items,
                page: args.page,
            },
            misplaced,
            cfg: Vec::new(),
            guards,
            errors: args.errors.map(|paths| paths.to_vec()),
        }
    }

    /// The arguments parameter (the first, when there are several).
    pub(crate) fn arguments(&self) -> Option<&Param<'a>> {
        self.params.iter().find(|p| p.kind == ParamKind::Arguments)
    }

    /// The predicates of the action's `#[cfg(...)]` attributes (the action exists when all
    /// hold).
    pub(crate) fn cfg_predicates(&self) -> Vec<TokenStream> {
        self.cfg
            .iter()
            .filter_map(|a| a.meta.require_list().ok())
            .map(|list| list.tokens.clone())
            .collect()
    }

    /// Whether the action is an `async fn`.
    pub(crate) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some()
    }
}

/// The title given as `title = "…"` (where errors about it point), else the doc comment's
/// summary; `None` when there is neither.
fn title(given: Option<SpannedValue<String>>, attrs: &[Attribute]) -> Option<Name> {
    match given {
        Some(title) => Some(Name {
            span: title.span(),
            value: title.into_inner(),
        }),
        None => attr::doc_title(attrs)
            .filter(|title| !title.is_empty())
            .map(|value| Name {
                value,
                span: Span::call_site(),
            }),
    }
}

/// The span of a bare-word flag that was given.
fn flag(flag: &darling::util::Flag) -> Option<Span> {
    flag.is_present().then(|| flag.span())
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

/// The unit struct serving a function tool: the function name in UpperCamelCase, when that is
/// an identifier (`_2fa_verify` gives `2faVerify`, `__` nothing, `self_` the keyword `Self`).
fn unit_ident(function: &Ident) -> Option<Ident> {
    let name = function.unraw().to_string().to_upper_camel_case();
    // `syn` parses no keyword and no invalid identifier as an `Ident`, and never panics.
    let mut ident = syn::parse_str::<Ident>(&name).ok()?;
    ident.set_span(function.span());
    Some(ident)
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

/// `max_result = ..`, `items = ".."` and `page(offset = "..", limit = "..")` of an action.
#[derive(Debug, Default)]
pub(crate) struct ResultArgs {
    pub(crate) max_result: Option<usize>,
    pub(crate) items: Option<String>,
    pub(crate) page: Option<PageArgs>,
}
