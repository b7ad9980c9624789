//! The runtime-guard options of `#[fusion::tool(...)]` and `#[action(...)]`:
//! `concurrency(max_active = 8, max_queued = 64)`, `rate_limit(calls = 5, per = "1m")`,
//! `timeout = "30s"`, `scopes("invoices:write")`; parsed with darling, expanded into a
//! `GuardSpec` expression.

use darling::FromMeta;
use darling::util::Flag;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, Lit};

use crate::crate_path::CratePath;

/// The guard options, flattened into the tool's and the actions' options.
#[derive(Debug, Default, Clone, FromMeta)]
pub(crate) struct GuardArgs {
    /// `concurrency(max_active = 8, max_queued = 64)`.
    pub(crate) concurrency: Option<ConcurrencyArgs>,
    /// `rate_limit(calls = 5, per = "1m")`, keyed per caller unless `global` or `key = path`.
    pub(crate) rate_limit: Option<RateLimitArgs>,
    /// `timeout = "30s"`.
    pub(crate) timeout: Option<DurationLit>,
    /// `scopes("invoices:write", "refunds")`.
    pub(crate) scopes: Option<ScopesArg>,
}

/// `scopes("invoices:write", "refunds")`: OAuth scope tokens (RFC 6749 section 3.3), at least
/// one, each a string of printable ASCII without spaces, `"` or `\`.
#[derive(Debug, Clone)]
pub(crate) struct ScopesArg(Vec<String>);

impl FromMeta for ScopesArg {
    fn from_list(items: &[darling::ast::NestedMeta]) -> darling::Result<ScopesArg> {
        let mut errors = Vec::new();
        let mut scopes = Vec::new();
        for item in items {
            let darling::ast::NestedMeta::Lit(Lit::Str(text)) = item else {
                errors.push(
                    darling::Error::custom(
                        "expected a scope as a string literal, as in `scopes(\"invoices:write\")`",
                    )
                    .with_span(item),
                );
                continue;
            };
            let scope = text.value();
            let valid = !scope.is_empty()
                && scope
                    .bytes()
                    .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b));
            if !valid {
                errors.push(
                    darling::Error::custom(
                        "a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749, section 3.3); list several as `scopes(\"a\", \"b\")`",
                    )
                    .with_span(text),
                );
                continue;
            }
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        if !errors.is_empty() {
            return Err(darling::Error::multiple(errors));
        }
        if scopes.is_empty() {
            return Err(darling::Error::custom(
                "expected at least one scope, as in `scopes(\"invoices:write\")`",
            ));
        }
        Ok(ScopesArg(scopes))
    }
}

/// `concurrency(max_active = 8, max_queued = 64)`; `max_queued` defaults to 0.
#[derive(Debug, Clone, FromMeta)]
pub(crate) struct ConcurrencyArgs {
    max_active: Count,
    #[darling(default)]
    max_queued: Option<Count0>,
}

/// `rate_limit(calls = 5, per = "1m", global)` or `rate_limit(..., key = path::to_fn)`.
#[derive(Debug, Clone, FromMeta)]
pub(crate) struct RateLimitArgs {
    calls: Count,
    per: DurationLit,
    /// One bucket for all clients.
    global: Flag,
    /// `fn(&fusion::guard::GuardRequest<'_>) -> String`: the bucket of a call.
    key: Option<syn::Path>,
}

/// A whole number of at least 1.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count(u32);

/// A whole number, 0 allowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count0(u32);

fn whole_number(value: &Lit, minimum: u32) -> darling::Result<u32> {
    let Lit::Int(int) = value else {
        return Err(darling::Error::custom("expected a whole number, as in `8`").with_span(value));
    };
    match int.base10_parse::<u32>() {
        Ok(n) if n >= minimum => Ok(n),
        Ok(_) => {
            Err(darling::Error::custom(format!("must be at least {minimum}")).with_span(value))
        }
        Err(_) => {
            Err(darling::Error::custom("expected a whole number up to 4294967295").with_span(value))
        }
    }
}

impl FromMeta for Count {
    fn from_value(value: &Lit) -> darling::Result<Count> {
        whole_number(value, 1).map(Count)
    }
}

impl FromMeta for Count0 {
    fn from_value(value: &Lit) -> darling::Result<Count0> {
        whole_number(value, 0).map(Count0)
    }
}

/// A duration written with its unit: `"500ms"`, `"30s"`, `"2m"`, `"1h"`; more than zero.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DurationLit {
    millis: u64,
}

const DURATION_HINT: &str =
    "expected a duration with a unit, as in `\"500ms\"`, `\"30s\"`, `\"2m\"` or `\"1h\"`";

impl FromMeta for DurationLit {
    fn from_expr(expr: &Expr) -> darling::Result<DurationLit> {
        match expr {
            Expr::Lit(lit) => DurationLit::from_value(&lit.lit),
            // A `Duration` expression is not a literal the macro can check.
            _ => Err(darling::Error::custom(DURATION_HINT).with_span(expr)),
        }
    }

    fn from_value(value: &Lit) -> darling::Result<DurationLit> {
        let text = match value {
            Lit::Str(text) => text.value(),
            Lit::Int(int) => {
                let message = format!(
                    "a duration needs a unit: write `\"{}s\"` for seconds or `\"{}ms\"` for milliseconds",
                    int.base10_digits(),
                    int.base10_digits()
                );
                return Err(darling::Error::custom(message).with_span(value));
            }
            _ => return Err(darling::Error::custom(DURATION_HINT).with_span(value)),
        };
        let Some(millis) = parse_duration(&text) else {
            return Err(darling::Error::custom(DURATION_HINT).with_span(value));
        };
        if millis == 0 {
            return Err(
                darling::Error::custom("a duration must be more than zero").with_span(value)
            );
        }
        Ok(DurationLit { millis })
    }
}

/// `"30s"` → 30,000 ms. `None` without a known unit or digits.
fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

impl GuardArgs {
    /// Whether no guard option is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.concurrency.is_none()
            && self.rate_limit.is_none()
            && self.timeout.is_none()
            && self.scopes.is_none()
    }

    /// `self` with every option `over` sets taken from `over`.
    pub(crate) fn or(self, over: GuardArgs) -> GuardArgs {
        GuardArgs {
            concurrency: over.concurrency.or(self.concurrency),
            rate_limit: over.rate_limit.or(self.rate_limit),
            timeout: over.timeout.or(self.timeout),
            scopes: over.scopes.or(self.scopes),
        }
    }

    /// The `GuardSpec` expression.
    pub(crate) fn expand(&self, krate: &CratePath) -> TokenStream {
        let private = krate.private();
        let duration = |d: &DurationLit| {
            let millis = d.millis;
            quote!(::core::time::Duration::from_millis(#millis))
        };
        let mut spec = quote!(#private::GuardSpec::new());
        if let Some(c) = &self.concurrency {
            let active = c.max_active.0 as usize;
            let queued = c.max_queued.map_or(0, |q| q.0) as usize;
            spec = quote!(#spec.concurrency(#private::ConcurrencyLimit::new(#active, #queued)));
        }
        if let Some(r) = &self.rate_limit {
            let calls = r.calls.0;
            let per = duration(&r.per);
            let mut limit = if r.global.is_present() {
                quote!(#private::RateLimit::global(#calls, #per))
            } else {
                quote!(#private::RateLimit::per_caller(#calls, #per))
            };
            if let Some(key) = &r.key {
                limit = quote!(#limit.key_by(#key));
            }
            spec = quote!(#spec.rate_limit(#limit));
        }
        if let Some(t) = &self.timeout {
            let t = duration(t);
            spec = quote!(#spec.timeout(#t));
        }
        if let Some(ScopesArg(scopes)) = &self.scopes {
            spec = quote!(#spec.scopes([#(#scopes),*]));
        }
        spec
    }

    /// Where `global` and `key` are both given (an error `valid` reports), if they are.
    pub(crate) fn conflicting_key(&self) -> Option<Span> {
        let r = self.rate_limit.as_ref()?;
        match (&r.key, r.global.is_present()) {
            (Some(key), true) => Some(syn::spanned::Spanned::span(key)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_known_unit() {
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("30s"), Some(30_000));
        assert_eq!(parse_duration("2m"), Some(120_000));
        assert_eq!(parse_duration("1h"), Some(3_600_000));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("3d"), None);
        assert_eq!(parse_duration("1.5s"), None);
        assert_eq!(parse_duration("99999999999999999h"), None);
    }
}

#[cfg(test)]
mod parse_tests {
    #[test]
    fn options_parse() {
        let out = super::super::expand(
            quote::quote!(concurrency(max_active = 8, max_queued = 64), timeout = "1s"),
            quote::quote!(impl Jobs { #[action(timeout = "2s", rate_limit(calls = 3, per = "1m"))] fn work(&self) {} }),
        )
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
    }
}

#[cfg(test)]
mod scope_tests {
    fn expand(action: proc_macro2::TokenStream) -> String {
        super::super::expand(
            quote::quote!(),
            quote::quote!(impl Billing { #action fn charge(&self) {} }),
        )
        .to_string()
    }

    #[test]
    fn scopes_expand_into_the_guard_spec() {
        let out = expand(quote::quote!(#[action(scopes("invoices:write", "refunds"))]));
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains(r#". scopes (["invoices:write" , "refunds"])"#),
            "{out}"
        );
    }

    #[test]
    fn scopes_must_be_scope_tokens() {
        for (bad, message) in [
            (
                quote::quote!(#[action(scopes("invoices write"))]),
                "a scope is printable ASCII",
            ),
            (
                quote::quote!(#[action(scopes(""))]),
                "a scope is printable ASCII",
            ),
            (
                quote::quote!(#[action(scopes(invoices))]),
                "expected a scope as a string literal",
            ),
            (
                quote::quote!(#[action(scopes())]),
                "expected at least one scope",
            ),
        ] {
            let out = expand(bad);
            assert!(
                out.contains("compile_error") && out.contains(message),
                "{out}"
            );
        }
    }
}
