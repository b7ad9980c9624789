//! Checks that need the whole input: every contract has a code, `internal` stands alone, bare
//! actions have a tool, details have distinct keys. Every problem is reported at once.

use darling::Error;

use super::ast::{Input, Variant};
use crate::errors::Errors;

impl Input<'_> {
    pub(super) fn validate(&self, errors: &mut Errors) {
        for variant in self.variants() {
            variant.validate(self, errors);
        }
    }
}

impl Variant<'_> {
    /// A `transparent` variant wraps one `ToolErrors` value and adds nothing of its own.
    fn validate_transparent(&self, errors: &mut Errors) {
        let name = self.ident;
        for (key, span) in &self.attr.keys {
            if key != "transparent" {
                errors.at_span(
                    *span,
                    format!(
                        "`{key}` does not combine with `transparent`; the wrapped error's own \
                         envelope and contract pass through"
                    ),
                );
            }
        }
        if self.fields.len() != 1 {
            errors.push(
                Error::custom(format!(
                    "`transparent` needs exactly one field in `{name}`, the wrapped error"
                ))
                .with_span(name),
            );
        }
        for field in &self.fields {
            let at = field
                .attrs
                .detail
                .as_ref()
                .map(|d| d.span)
                .or(field.attrs.retry_after);
            if let Some(span) = at {
                errors.at_span(
                    span,
                    "a `transparent` variant's field is the wrapped error; it has no details",
                );
            }
        }
    }

    fn validate(&self, input: &Input<'_>, errors: &mut Errors) {
        let attr = &self.attr;
        let name = self.ident;
        if attr.transparent {
            self.validate_transparent(errors);
            return;
        }
        if attr.internal {
            // An internal error shows the model a fixed message and an error id, nothing else:
            // anything that would put the variant's own data or advice in the envelope is out.
            for key in ["code", "category", "retryable", "recovery", "actions"] {
                if let Some(span) = attr.key_span(key) {
                    errors.at_span(
                        span,
                        format!(
                            "`{key}` does not combine with `internal`; an internal error shows \
                             the model only a fixed message and its error id"
                        ),
                    );
                }
            }
            for field in &self.fields {
                let attrs = &field.attrs;
                let helpers = [
                    ("#[detail]", attrs.detail.as_ref().map(|d| d.span)),
                    ("#[retry_after]", attrs.retry_after),
                ];
                for (helper, span) in helpers {
                    if let Some(span) = span {
                        errors.at_span(
                            span,
                            format!(
                                "`{helper}` does not combine with `internal`; an internal error \
                                 shows the model only a fixed message and its error id"
                            ),
                        );
                    }
                }
            }
        } else if attr.code.is_none() && self.read {
            errors.push(
                Error::custom(format!(
                    "missing error code on `{name}`; add `#[tool_error(NOT_FOUND)]` or \
                     `#[tool_error(code = \"…\")]`"
                ))
                .with_span(name),
            );
        }

        let tool = input.attr.tool.as_ref().or(attr.tool.as_ref());
        for action in &attr.actions {
            let bare = action.leading_colon.is_none() && action.segments.len() == 1;
            if bare && tool.is_none() && input.read {
                let bare = &action.segments[0].ident;
                errors.push(
                    Error::custom(format!(
                        "bare action `{bare}` needs its tool; write `Tool::{bare}` or add \
                         `#[tool_error(tool = Tool)]` on the type"
                    ))
                    .with_span(action),
                );
            }
        }

        let mut keys: Vec<String> = Vec::new();
        let mut retry_after = false;
        for field in &self.fields {
            if let Some(detail) = &field.attrs.detail {
                let key = match (&detail.key, field.ident) {
                    (Some(key), _) => key.value(),
                    (None, Some(ident)) => syn::ext::IdentExt::unraw(ident).to_string(),
                    (None, None) => {
                        errors.at_span(
                            detail.span,
                            "`#[detail]` on a tuple field needs a key: `#[detail(key = \"…\")]`",
                        );
                        continue;
                    }
                };
                if keys.contains(&key) {
                    let at = detail.key.as_ref().map_or(detail.span, |k| k.span());
                    errors.at_span(at, format!("duplicate detail key `{key}` in `{name}`"));
                }
                keys.push(key);
            }
            if let Some(span) = field.attrs.retry_after {
                if retry_after {
                    errors.at_span(
                        span,
                        format!(
                            "a second `#[retry_after]` in `{name}`; an error has one retry delay"
                        ),
                    );
                }
                retry_after = true;
            }
        }
    }
}
