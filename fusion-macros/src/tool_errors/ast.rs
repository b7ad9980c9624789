//! The derive's input as an IR borrowing the syn nodes: the type, its variants (a struct is one
//! variant, its own single contract) and their fields, with the helper attributes read and the
//! `recovery` template split into text and field placeholders.

use darling::{Error, Result};
use proc_macro2::Span;

use super::attr::{FieldAttrs, Place, ToolErrorAttr, closest};
use crate::crate_path::CratePath;
use crate::errors::Errors;
use syn::ext::IdentExt;
use syn::{Attribute, Data, DeriveInput, Fields, Generics, Ident, LitStr, Member, Type};

/// The type deriving `ToolErrors`.
pub(super) struct Input<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    /// The type-level `#[tool_error(…)]`: defaults and the tool (a struct's also holds its
    /// contract, which its [`Variant`] carries too).
    pub attr: ToolErrorAttr,
    /// Whether `attr` was read without error (see [`Variant::read`]).
    pub read: bool,
    /// The path generated code names fusion by: `crate = …` on the type, else `::fusion`.
    /// Read leniently when `attr` has errors, for the stub impls.
    pub krate: CratePath,
    pub body: Body<'a>,
    /// The type's lint attributes (`#[allow(..)]`, `#[expect(..)]`), repeated on the warnings
    /// the derive raises so they can be silenced on the type; an `expect` is repeated as an
    /// `allow` on them.
    pub lints: Vec<&'a Attribute>,
}

pub(super) enum Body<'a> {
    Enum(Vec<Variant<'a>>),
    Struct(Variant<'a>),
}

/// One contract: an enum variant, or a whole struct.
pub(super) struct Variant<'a> {
    /// The variant's name, or the struct's.
    pub ident: &'a Ident,
    /// Whether its `#[tool_error(…)]` was read without error (else `attr` is the default, and
    /// a missing code is not reported on top of the real mistake).
    pub read: bool,
    pub attr: ToolErrorAttr,
    pub fields: Vec<Field<'a>>,
    pub recovery: Option<Template>,
}

pub(super) struct Field<'a> {
    pub member: Member,
    /// The field's name as written, `None` for a tuple field.
    pub ident: Option<&'a Ident>,
    pub ty: &'a Type,
    pub attrs: FieldAttrs,
}

/// A `recovery = "…"` string in the `format!` syntax thiserror's `#[error("…")]` uses.
pub(super) struct Template {
    pub lit: LitStr,
    pub pieces: Vec<Piece>,
}

pub(super) enum Piece {
    Text(String),
    /// `{id}`, `{0}`, `{id:?}`: the index of the field in [`Variant::fields`] and the format spec
    /// after the colon (empty for none).
    Field {
        field: usize,
        spec: String,
    },
}

impl<'a> Input<'a> {
    /// Reads the whole input. Every problem goes to `errors`; what could not be read is left at
    /// its default, so that validation still runs on the rest and the user sees all errors at once.
    pub(super) fn from_syn(node: &'a DeriveInput, errors: &mut Errors) -> Input<'a> {
        let (attr, body) = match &node.data {
            Data::Enum(data) => {
                let attr = ToolErrorAttr::from_attrs(&node.attrs, Place::Enum, errors);
                let variants = data
                    .variants
                    .iter()
                    .map(|v| {
                        Variant::from_syn(&v.ident, &v.attrs, &v.fields, Place::Variant, errors)
                    })
                    .collect();
                (attr, Body::Enum(variants))
            }
            Data::Struct(data) => {
                let variant = Variant::from_syn(
                    &node.ident,
                    &node.attrs,
                    &data.fields,
                    Place::Struct,
                    errors,
                );
                let attr = variant.read.then(|| variant.attr.clone());
                (attr, Body::Struct(variant))
            }
            Data::Union(data) => {
                errors.push(
                    Error::custom(
                        "`ToolErrors` cannot be derived for a union; use an enum or a struct",
                    )
                    .with_span(&data.union_token),
                );
                (Some(ToolErrorAttr::default()), Body::Enum(Vec::new()))
            }
        };
        let krate = attr
            .as_ref()
            .and_then(|a| a.krate.clone())
            .or_else(|| ToolErrorAttr::crate_path(&node.attrs))
            .unwrap_or_default();
        Input {
            ident: &node.ident,
            generics: &node.generics,
            read: attr.is_some(),
            krate,
            attr: attr.unwrap_or_default(),
            body,
            lints: node
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("allow") || a.path().is_ident("expect"))
                .collect(),
        }
    }

    /// The contracts in declaration order.
    pub(super) fn variants(&self) -> &[Variant<'a>] {
        match &self.body {
            Body::Enum(variants) => variants,
            Body::Struct(variant) => std::slice::from_ref(variant),
        }
    }
}

impl<'a> Variant<'a> {
    fn from_syn(
        ident: &'a Ident,
        attrs: &[Attribute],
        fields: &'a Fields,
        place: Place,
        errors: &mut Errors,
    ) -> Variant<'a> {
        let attr = ToolErrorAttr::from_attrs(attrs, place, errors);
        let fields: Vec<Field<'a>> = fields
            .iter()
            .zip(fields.members())
            .map(|(field, member)| Field {
                member,
                ident: field.ident.as_ref(),
                ty: &field.ty,
                attrs: FieldAttrs::from_attrs(&field.attrs, errors).unwrap_or_default(),
            })
            .collect();
        let recovery = attr
            .as_ref()
            .and_then(|a| a.recovery.as_ref())
            .and_then(|lit| errors.handle(Template::parse(lit, ident, &fields)));
        Variant {
            ident,
            read: attr.is_some(),
            attr: attr.unwrap_or_default(),
            fields,
            recovery,
        }
    }
}

impl Template {
    /// Splits `lit` into text and placeholders, each resolved to a field of `variant`.
    fn parse(lit: &LitStr, variant: &Ident, fields: &[Field<'_>]) -> Result<Template> {
        let value = lit.value();
        let fail = |message: String| Error::custom(message).with_span(lit);
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = value.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '}' => {
                    return Err(fail(
                        "unmatched `}` in `recovery`; write `}}` for a literal brace".into(),
                    ));
                }
                '{' => {
                    let mut inner = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => inner.push(c),
                            None => {
                                return Err(fail(
                                    "unclosed `{` in `recovery`; write `{{` for a literal brace"
                                        .into(),
                                ));
                            }
                        }
                    }
                    let (name, spec) = inner.split_once(':').unwrap_or((&inner, ""));
                    if spec.contains('$') || spec.contains('*') {
                        return Err(fail(format!(
                            "`{{{inner}}}` in `recovery`: width and precision arguments (`$`, `*`) are not supported"
                        )));
                    }
                    let field = resolve(name, variant, fields).map_err(fail)?;
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Field {
                        field,
                        spec: spec.to_owned(),
                    });
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template {
            lit: lit.clone(),
            pieces,
        })
    }

    /// The span of the `recovery` string.
    pub(super) fn span(&self) -> Span {
        self.lit.span()
    }
}

/// The index of the field a placeholder names: `{id}` for a named field, `{0}` for a tuple field.
fn resolve(
    name: &str,
    variant: &Ident,
    fields: &[Field<'_>],
) -> std::result::Result<usize, String> {
    if name.is_empty() {
        return Err(
            "`{}` in `recovery` names no field; write the field, as in `{id}` or `{0}`".to_owned(),
        );
    }
    let found = fields.iter().position(|f| match &f.member {
        Member::Named(ident) => ident.unraw() == name,
        Member::Unnamed(index) => index.index.to_string() == name,
    });
    if let Some(found) = found {
        return Ok(found);
    }
    let named: Vec<String> = fields
        .iter()
        .filter_map(|f| Some(f.ident?.unraw().to_string()))
        .collect();
    Err(match closest(name, named.iter().map(String::as_str)) {
        Some(near) => format!(
            "`{{{name}}}` in `recovery`: `{variant}` has no field `{name}`; did you mean `{near}`?"
        ),
        None if fields.is_empty() => {
            format!("`{{{name}}}` in `recovery`: `{variant}` has no fields")
        }
        None => format!("`{{{name}}}` in `recovery`: `{variant}` has no field `{name}`"),
    })
}
