//! Every error a macro finds, in source order (like serde's `Ctxt`): each stage reports all it
//! finds instead of stopping at the first, and the user sees them at once.

/// The errors found so far.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `tokens` (the smallest offending syntax).
    pub(crate) fn at(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub(crate) fn at_span(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records every error of a darling error one by one, each with its own span, so they
    /// combine with ours. darling's own conversion leaves out the option's name (` at crate`)
    /// when the error already points at the option.
    pub(crate) fn push(&mut self, error: darling::Error) {
        for single in error.flatten() {
            self.errors.push(single.into());
        }
    }

    /// The value of a darling result, or `None` with its errors recorded.
    pub(crate) fn handle<T>(&mut self, result: darling::Result<T>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    /// How many errors so far, to tell whether a step added any.
    pub(crate) fn count(&self) -> usize {
        self.errors.len()
    }

    /// All errors combined into one (each keeps its span), or `None`.
    pub(crate) fn finish(self) -> Option<syn::Error> {
        self.errors.into_iter().reduce(|mut all, next| {
            all.combine(next);
            all
        })
    }
}
