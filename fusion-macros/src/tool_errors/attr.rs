//! The helper attributes, read with darling: `#[tool_error(…)]` on the type and its variants,
//! `#[detail]` and `#[retry_after]` on fields.

use darling::ast::NestedMeta;
use darling::util::{Flag, PathList};
use darling::{Error, FromMeta, Result};
use proc_macro2::Span;

use syn::spanned::Spanned;
use syn::{Attribute, LitStr, Meta, Path};

use crate::crate_path::CratePath;
use crate::errors::Errors;

/// The canonical codes, in the order `fusion::ErrorCode` declares them: the wire string and the
/// `fusion::ErrorCode` variant it maps to.
pub(super) const CANONICAL: [(&str, &str); 18] = [
    ("MISSING_DISCRIMINATOR", "MissingDiscriminator"),
    ("UNKNOWN_ACTION", "UnknownAction"),
    ("VALIDATION_ERROR", "ValidationError"),
    ("MISSING_REQUIRED_FIELD", "MissingRequiredField"),
    ("INTERNAL_ERROR", "InternalError"),
    ("RATE_LIMITED", "RateLimited"),
    ("UNAUTHORIZED", "Unauthorized"),
    ("FORBIDDEN", "Forbidden"),
    ("NOT_FOUND", "NotFound"),
    ("CONFLICT", "Conflict"),
    ("TIMEOUT", "Timeout"),
    ("SERVER_BUSY", "ServerBusy"),
    ("DEPRECATED", "Deprecated"),
    ("AUTH_REQUIRED", "AuthRequired"),
    ("HANDOFF_UPSTREAM_UNAVAILABLE", "HandoffUpstreamUnavailable"),
    ("HANDOFF_NAMESPACE_MISMATCH", "HandoffNamespaceMismatch"),
    ("HANDOFF_CONNECTING", "HandoffConnecting"),
    ("RESULT_TRUNCATED", "ResultTruncated"),
];

/// Where a `#[tool_error(…)]` sits. Each place accepts its own keys: defaults and the tool on
/// an enum, the contract on a variant, both on a struct (a single contract).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Enum,
    Variant,
    Struct,
}

/// An error code: one of the canonical 18, or a custom domain code.
#[derive(Clone)]
pub(super) enum Code {
    /// `#[tool_error(NOT_FOUND)]` or `code = "NOT_FOUND"`: the `ErrorCode` variant name.
    Canonical(&'static str),
    /// `code = "ALREADY_PAID"`.
    Custom(LitStr),
}

/// `severity = "warning" | "error" | "critical"`.
#[derive(Clone, Copy)]
pub(super) enum Severity {
    Warning,
    Error,
    Critical,
}

/// `category = "auth" | "rate_limit" | "not_found" | "validation" | "transient" | "unknown"`.
#[derive(Clone, Copy)]
pub(super) enum Category {
    Auth,
    RateLimit,
    NotFound,
    Validation,
    Transient,
    Unknown,
}

/// Everything the `#[tool_error(…)]` attributes of one item say (several are merged).
#[derive(Clone, Default)]
pub(super) struct ToolErrorAttr {
    pub code: Option<Code>,
    pub severity: Option<Severity>,
    pub category: Option<Category>,
    pub retryable: Option<bool>,
    pub recovery: Option<LitStr>,
    pub actions: Vec<Path>,
    pub internal: bool,
    /// `transparent`: the variant's one field is itself a `ToolErrors` type, whose envelope
    /// and contracts the variant passes through.
    pub transparent: bool,
    pub tool: Option<Path>,
    /// `crate = …`: the path generated code names fusion by.
    pub krate: Option<CratePath>,
    /// Each key as written and its span, for errors about combinations of keys.
    pub keys: Vec<(String, Span)>,
}

/// The keys darling reads; the bare code word (`NOT_FOUND`) is taken out before.
#[derive(FromMeta)]
struct Keys {
    code: Option<LitStr>,
    severity: Option<Severity>,
    category: Option<Category>,
    retryable: Option<bool>,
    recovery: Option<LitStr>,
    actions: Option<PathList>,
    internal: Flag,
    transparent: Flag,
    tool: Option<Path>,
    #[darling(rename = "crate")]
    krate: Option<CratePath>,
}

impl ToolErrorAttr {
    /// Reads every `#[tool_error(…)]` in `attrs`, reporting all problems at once; `None` when
    /// there were any.
    pub(super) fn from_attrs(
        attrs: &[Attribute],
        place: Place,
        errors: &mut Errors,
    ) -> Option<ToolErrorAttr> {
        let before = errors.count();
        let mut items = Vec::new();
        for attr in attrs.iter().filter(|a| a.path().is_ident("tool_error")) {
            match &attr.meta {
                Meta::List(list) => {
                    let parsed = NestedMeta::parse_meta_list(list.tokens.clone());
                    items.extend(
                        errors
                            .handle(parsed.map_err(Error::from))
                            .unwrap_or_default(),
                    );
                }
                meta => errors.push(Error::custom("expected `#[tool_error(…)]`").with_span(meta)),
            }
        }

        let mut out = ToolErrorAttr::default();
        let rest = out.take_words(items, place, errors);
        if let Some(keys) = errors.handle(Keys::from_list(&rest)) {
            if let Some(code) = keys.code {
                if out.code.is_some() {
                    errors.push(Error::custom(DUPLICATE_CODE).with_span(&code));
                } else if code.value().is_empty() {
                    errors.push(Error::custom("empty error code").with_span(&code));
                } else {
                    out.code = Some(
                        match CANONICAL.iter().find(|(wire, _)| *wire == code.value()) {
                            Some((_, variant)) => Code::Canonical(variant),
                            None => Code::Custom(code),
                        },
                    );
                }
            }
            out.severity = keys.severity;
            out.category = keys.category;
            out.retryable = keys.retryable;
            out.recovery = keys.recovery;
            out.actions = keys.actions.map(|list| list.to_vec()).unwrap_or_default();
            out.internal = keys.internal.is_present();
            out.transparent = keys.transparent.is_present();
            out.tool = keys.tool;
            out.krate = keys.krate;
        }
        (errors.count() == before).then_some(out)
    }

    /// Takes out what darling cannot read: the bare code word (`NOT_FOUND`), and keys written in
    /// the wrong place. Returns the rest, for darling, and records every key's span.
    fn take_words(
        &mut self,
        items: Vec<NestedMeta>,
        place: Place,
        errors: &mut Errors,
    ) -> Vec<NestedMeta> {
        let mut rest = Vec::new();
        for item in items {
            let NestedMeta::Meta(meta) = &item else {
                rest.push(item); // darling reports the stray literal
                continue;
            };
            let path = meta.path();
            let name = path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if matches!(meta, Meta::Path(_)) && is_code_word(&name) {
                if let Some(error) = misplaced("an error code", place, Place::Enum) {
                    errors.push(error.with_span(path));
                } else if self.code.is_some() {
                    errors.push(Error::custom(DUPLICATE_CODE).with_span(path));
                } else if let Some(code) =
                    errors.handle(canonical_word(&name).map_err(|e| e.with_span(path)))
                {
                    self.code = Some(code);
                    self.keys.push(("code".to_owned(), path.span()));
                }
                continue;
            }
            let misplaced = match name.as_str() {
                "code" | "retryable" | "recovery" | "actions" | "internal" | "transparent" => {
                    misplaced(&format!("`{name}`"), place, Place::Enum)
                }
                "tool" | "crate" => misplaced(&format!("`{name}`"), place, Place::Variant),
                _ => None,
            };
            if let Some(error) = misplaced {
                errors.push(error.with_span(path));
                continue;
            }
            if let Some(code) = lowercase_code(meta) {
                errors.push(
                    Error::custom(format!(
                        "unknown key `{name}`; canonical error codes are uppercase: `{code}`"
                    ))
                    .with_span(path),
                );
                continue;
            }
            self.keys.push((name, path.span()));
            rest.push(item);
        }
        rest
    }

    /// The `crate = …` of the type's `#[tool_error(…)]`, read leniently for the fallback (see
    /// [`CratePath::find`]): the stub impls name the runtime through it even when the
    /// attribute has errors.
    pub(super) fn crate_path(attrs: &[Attribute]) -> Option<CratePath> {
        attrs
            .iter()
            .filter(|a| a.path().is_ident("tool_error"))
            .filter_map(|a| a.meta.require_list().ok())
            .filter_map(|list| NestedMeta::parse_meta_list(list.tokens.clone()).ok())
            .find_map(|items| CratePath::find(&items))
    }

    /// Where `key` was written, if it was.
    pub(super) fn key_span(&self, key: &str) -> Option<Span> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, span)| *span)
    }
}

const DUPLICATE_CODE: &str = "duplicate error code; give each variant exactly one";

/// A bare word in screaming snake case: a canonical code, or a misspelling of one.
fn is_code_word(word: &str) -> bool {
    word.bytes().any(|b| b.is_ascii_uppercase())
        && word
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A lowercase bare word that spells a canonical code (`not_found`), which would otherwise read
/// as an unknown key.
fn lowercase_code(meta: &Meta) -> Option<&'static str> {
    let word = meta.require_path_only().ok()?.get_ident()?.to_string();
    CANONICAL
        .iter()
        .map(|(wire, _)| *wire)
        .find(|wire| wire.eq_ignore_ascii_case(&word))
}

/// The canonical code `word` names, or an error with the closest one.
fn canonical_word(word: &str) -> Result<Code> {
    if let Some((_, variant)) = CANONICAL.iter().find(|(wire, _)| *wire == word) {
        return Ok(Code::Canonical(variant));
    }
    let wires = CANONICAL.iter().map(|(wire, _)| *wire);
    Err(Error::custom(match closest(word, wires) {
        Some(wire) => format!("unknown error code `{word}`; did you mean `{wire}`?"),
        None => format!(
            "unknown error code `{word}`; bare codes are the canonical ones (`NOT_FOUND`, \
             `CONFLICT`, …), write a custom code as `code = \"{word}\"`"
        ),
    }))
}

/// The error for `what` written at `place`, when `wrong` is the place it does not belong.
fn misplaced(what: &str, place: Place, wrong: Place) -> Option<Error> {
    (place == wrong).then(|| {
        Error::custom(match wrong {
            Place::Enum => format!("{what} goes on each variant, not on the enum"),
            _ => format!("{what} goes on the enum, not on a variant"),
        })
    })
}

/// The candidate closest to `word`, if any is close enough to be a likely typo.
pub(super) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The error for a string that names none of `allowed`.
fn unknown_value(what: &str, value: &str, allowed: &[&str]) -> Error {
    Error::custom(match closest(value, allowed.iter().copied()) {
        Some(near) => format!("unknown {what} `{value}`; did you mean `{near}`?"),
        None => {
            let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            format!(
                "unknown {what} `{value}`; expected one of {}",
                list.join(", ")
            )
        }
    })
}

impl FromMeta for Severity {
    fn from_string(value: &str) -> Result<Severity> {
        match value {
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            "critical" => Ok(Severity::Critical),
            _ => Err(unknown_value(
                "severity",
                value,
                &["warning", "error", "critical"],
            )),
        }
    }
}

impl FromMeta for Category {
    fn from_string(value: &str) -> Result<Category> {
        const ALLOWED: [&str; 6] = [
            "auth",
            "rate_limit",
            "not_found",
            "validation",
            "transient",
            "unknown",
        ];
        match value {
            "auth" => Ok(Category::Auth),
            "rate_limit" => Ok(Category::RateLimit),
            "not_found" => Ok(Category::NotFound),
            "validation" => Ok(Category::Validation),
            "transient" => Ok(Category::Transient),
            "unknown" => Ok(Category::Unknown),
            _ => Err(unknown_value("category", value, &ALLOWED)),
        }
    }
}

/// `#[detail]` or `#[detail(key = "requestedId")]` on a field.
pub(super) struct DetailAttr {
    pub key: Option<LitStr>,
    /// The attribute's name, for errors about it.
    pub span: Span,
}

#[derive(FromMeta)]
struct DetailKeys {
    key: Option<LitStr>,
}

/// The helper attributes of one field.
#[derive(Default)]
pub(super) struct FieldAttrs {
    pub detail: Option<DetailAttr>,
    /// The span of `retry_after` in `#[retry_after]`, when present.
    pub retry_after: Option<Span>,
}

impl FieldAttrs {
    /// Reads `#[detail]` and `#[retry_after]`, reporting all problems at once; `None` when
    /// there were any.
    pub(super) fn from_attrs(attrs: &[Attribute], errors: &mut Errors) -> Option<FieldAttrs> {
        let before = errors.count();
        let mut out = FieldAttrs::default();
        for attr in attrs {
            // The attribute's name: on stable, a span cannot cover the whole `#[…]`.
            let span = attr.path().span();
            if attr.path().is_ident("detail") {
                let key = match &attr.meta {
                    Meta::Path(_) => Some(None),
                    meta => errors.handle(DetailKeys::from_meta(meta).map(|d| d.key)),
                };
                if out.detail.is_some() {
                    errors
                        .push(Error::custom("duplicate `#[detail]` on one field").with_span(attr));
                } else if let Some(key) = key {
                    out.detail = Some(DetailAttr { key, span });
                }
            } else if attr.path().is_ident("retry_after") {
                if attr.meta.require_path_only().is_err() {
                    errors.push(
                        Error::custom("`#[retry_after]` takes no arguments").with_span(&attr.meta),
                    );
                } else if out.retry_after.is_some() {
                    errors.push(
                        Error::custom("duplicate `#[retry_after]` on one field").with_span(attr),
                    );
                } else {
                    out.retry_after = Some(span);
                }
            }
        }
        (errors.count() == before).then_some(out)
    }
}
