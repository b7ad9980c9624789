//! The `crate = …` option of both macros: the path generated code reaches fusion through.
//!
//! Like serde's `#[serde(crate = "…")]`: a user who renames the dependency
//! (`fu = { package = "fusion", … }`) or re-exports fusion from their own crate names the path,
//! and every runtime path the expansion writes starts with it instead of `::fusion`.

use darling::ast::NestedMeta;
use darling::{Error, FromMeta, Result};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Path};

/// The path to the fusion crate in generated code: `::fusion` unless `crate = …` names another.
///
/// Accepts a string literal holding a path (`crate = "::fu"`, serde's form) or the path itself
/// (`crate = ::fu`). The path is used as written, so `fu` resolves like any relative path at the
/// macro's call site; `::fu` names an extern crate only. It cannot carry generic arguments.
///
/// Boxed: every variant's attributes carry an `Option` of it, nearly always `None`.
#[derive(Clone, Debug)]
pub(crate) struct CratePath(Box<Path>);

const EXPECTED: &str = "expected the path to fusion, as in `crate = \"::fu\"` or `crate = ::fu`";

impl Default for CratePath {
    fn default() -> CratePath {
        CratePath(Box::new(syn::parse_quote!(::fusion)))
    }
}

impl CratePath {
    /// `<path>::__private`: the module generated code names every runtime item through.
    pub(crate) fn private(&self) -> TokenStream {
        let path = &self.0;
        quote!(#path::__private)
    }

    /// [`private`](Self::private) located at `at`, for code spanned on a user's token (so
    /// rustc reports an unmet bound there). Each token keeps its own name resolution, so a
    /// path such as `$crate::fusion` handed over by a `macro_rules!` still resolves.
    pub(crate) fn private_at(&self, at: Span) -> TokenStream {
        self.private()
            .into_iter()
            .map(|mut token| {
                token.set_span(token.span().located_at(at));
                token
            })
            .collect()
    }

    /// The first valid `crate = …` among `items`, every other item and every error ignored.
    ///
    /// For the fallback: when the options as a whole fail to parse, the stub impls still name
    /// the runtime through the user's path, so a renamed fusion adds no unresolved-path errors
    /// to the real one (which the strict parse reports).
    pub(crate) fn find(items: &[NestedMeta]) -> Option<CratePath> {
        items.iter().find_map(|item| match item {
            NestedMeta::Meta(meta) if meta.path().is_ident("crate") => {
                CratePath::from_meta(meta).ok()
            }
            _ => None,
        })
    }

    fn from_lit(lit: &LitStr) -> Result<CratePath> {
        if lit.value().trim().is_empty() {
            return Err(Error::custom("the path to fusion cannot be empty").with_span(lit));
        }
        // `parse_mod_style`: a path without generic arguments (`::fu`, `crate::rt::fusion`).
        let path = lit.parse_with(Path::parse_mod_style).map_err(|_| {
            Error::custom(format!(
                "`{}` is not a path; `crate` takes the path to fusion, as in `crate = \"::fu\"`",
                lit.value()
            ))
            .with_span(lit)
        })?;
        Ok(CratePath(Box::new(path)))
    }

    fn from_path(path: &Path) -> Result<CratePath> {
        if let Some(segment) = path.segments.iter().find(|s| !s.arguments.is_empty()) {
            return Err(
                Error::custom("the path to fusion cannot have generic arguments")
                    .with_span(&segment.arguments),
            );
        }
        Ok(CratePath(Box::new(path.clone())))
    }
}

impl FromMeta for CratePath {
    fn from_meta(item: &Meta) -> Result<CratePath> {
        match item {
            Meta::NameValue(nv) => CratePath::from_expr(&nv.value),
            other => Err(Error::custom(EXPECTED).with_span(other)),
        }
    }

    fn from_expr(expr: &Expr) -> Result<CratePath> {
        match expr {
            Expr::Lit(ExprLit {
                lit: Lit::Str(lit), ..
            }) => CratePath::from_lit(lit),
            Expr::Path(path) if path.qself.is_none() => CratePath::from_path(&path.path),
            // The invisible group a `macro_rules!` wraps a `$path:path` fragment in.
            Expr::Group(group) => CratePath::from_expr(&group.expr),
            other => Err(Error::custom(EXPECTED).with_span(other)),
        }
    }
}

/// Asserts that `tokens` name the runtime only through `path` (as `path.to_string()` writes
/// it, `":: my :: rt"`): every `__private` follows it, at least one does, and no identifier
/// `fusion` is left anywhere but in those paths (literals, such as doc text, may mention it).
#[cfg(test)]
pub(crate) fn assert_runtime_only_through(tokens: &TokenStream, path: &str) {
    fn idents(tokens: TokenStream, out: &mut Vec<String>) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(ident) => out.push(ident.to_string()),
                proc_macro2::TokenTree::Group(group) => idents(group.stream(), out),
                _ => {}
            }
        }
    }
    let mut all = Vec::new();
    idents(tokens.clone(), &mut all);
    let text = tokens.to_string();
    let private = text.matches("__private").count();
    let through = text.matches(&format!("{path} :: __private")).count();
    assert!(private > 0, "no runtime path at all: {text}");
    assert_eq!(
        private, through,
        "a runtime path does not start with `{path}`: {text}"
    );
    let in_path = path.split(' ').filter(|s| *s == "fusion").count();
    let fusion = all.iter().filter(|ident| *ident == "fusion").count();
    assert_eq!(
        fusion,
        in_path * private,
        "an identifier `fusion` is left outside `{path} :: __private`: {text}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(meta: Meta) -> std::result::Result<String, String> {
        CratePath::from_meta(&meta)
            .map(|path| path.private().to_string())
            .map_err(|error| syn::Error::from(error).to_string())
    }

    #[test]
    fn the_default_is_the_fusion_crate() {
        assert_eq!(
            CratePath::default().private().to_string(),
            ":: fusion :: __private"
        );
    }

    #[test]
    fn a_string_and_a_bare_path_mean_the_same() {
        let expected = Ok(":: fu :: __private".to_owned());
        assert_eq!(parse(syn::parse_quote!(crate = "::fu")), expected);
        assert_eq!(parse(syn::parse_quote!(crate = ::fu)), expected);
        assert_eq!(
            parse(syn::parse_quote!(crate = crate::rt::fusion)),
            Ok("crate :: rt :: fusion :: __private".to_owned())
        );
        assert_eq!(
            parse(syn::parse_quote!(crate = "fu")),
            Ok("fu :: __private".to_owned())
        );
    }

    #[test]
    fn what_is_not_a_plain_path_is_an_error() {
        assert_eq!(
            parse(syn::parse_quote!(crate = "")),
            Err("the path to fusion cannot be empty".to_owned())
        );
        assert_eq!(
            parse(syn::parse_quote!(crate = "fu-sion")),
            Err(
                "`fu-sion` is not a path; `crate` takes the path to fusion, as in `crate = \"::fu\"`"
                    .to_owned()
            )
        );
        assert_eq!(
            parse(syn::parse_quote!(crate = fu::<T>)),
            Err("the path to fusion cannot have generic arguments".to_owned())
        );
        for meta in [
            syn::parse_quote!(crate = 5),
            syn::parse_quote!(crate),
            syn::parse_quote!(crate(fu)),
        ] {
            assert_eq!(parse(meta), Err(EXPECTED.to_owned()));
        }
    }

    #[test]
    fn find_skips_everything_but_a_valid_crate_option() {
        let items =
            NestedMeta::parse_meta_list(quote!(nme = "x", crate = 5, crate = ::fu, 7)).unwrap();
        let found = CratePath::find(&items).map(|p| p.private().to_string());
        assert_eq!(found.as_deref(), Some(":: fu :: __private"));
        assert!(CratePath::find(&items[..2]).is_none());
    }
}
