//! The error contract an action declares variant by variant
//! (`#[action(errors(BillingError::NotFound, BillingError::Conflict))]`): the contracts it
//! advertises, and what happens when it returns a variant it did not declare.
//!
//! The compiler checks the declaration: each path must be a variant of the action's own
//! error type, so a misspelt variant is rustc's "no variant named …" with its suggestion, and
//! a variant of another type is a type mismatch. A variant returned outside the declaration
//! is still answered (the model gets its real envelope) and logged once per tool, action and
//! variant at `WARN` (target `fusion::contract`): a panic would replace the envelope the model
//! needs with an internal error, and a compile-time guarantee would need an error type per
//! action, which ends one shared error enum and `?` across actions.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, PoisonError};

use crate::model::definition::{ErrorContract, ToolErrors};

/// An action output that can fail: `Result<T, E>`, whose error type declares variants.
#[diagnostic::on_unimplemented(
    message = "`errors(..)` lists variants of the action's error type, but `{Self}` is not a `Result<T, E>`",
    label = "the action's return type",
    note = "return `Result<T, E>` with `E: fusion::ToolErrors` (derived), or remove `errors(..)`"
)]
pub trait ErrorOf {
    /// The error type.
    type Error: ToolErrors;

    /// The error, when the output is one.
    fn error(&self) -> Option<&Self::Error>;
}

impl<T, E: ToolErrors> ErrorOf for Result<T, E> {
    type Error = E;

    fn error(&self) -> Option<&E> {
        self.as_ref().err()
    }
}

/// The contracts of the declared `variants` of `R`'s error type, in declaration order.
///
/// # Panics
///
/// When a variant has no contract: the type's `ToolErrors` impl is written by hand without
/// [`ToolErrors::variant_contracts`] (the compiler has already checked the variant exists).
pub fn declared_contracts<R: ErrorOf>(variants: &[&str]) -> Vec<ErrorContract> {
    let all = R::Error::variant_contracts();
    let mut declared = Vec::new();
    for variant in variants {
        // A `transparent` variant carries every contract of the error it wraps.
        let before = declared.len();
        declared.extend(
            all.iter()
                .filter(|(name, _)| name == variant)
                .map(|(_, contract)| contract.clone()),
        );
        assert!(
            declared.len() > before,
            "`errors(..)` declares `{variant}`, but the `ToolErrors` impl of `{}` lists no \
             contract for it: derive `ToolErrors`, or implement `ToolErrors::variant_contracts`",
            std::any::type_name::<R::Error>()
        );
    }
    declared
}

/// Logs (once per tool, action and variant) an error output whose variant is not among
/// `variants`, the action's declaration. Success outputs and error types that cannot name
/// their variant pass silently.
pub(crate) fn check_declared<R: ErrorOf>(
    output: &R,
    variants: &[&str],
    tool: &'static str,
    action: &'static str,
) {
    let Some(variant) = output.error().and_then(ToolErrors::variant) else {
        return;
    };
    if variants.contains(&variant) || !first_report(tool, action, variant) {
        return;
    }
    let code = R::Error::variant_contracts()
        .into_iter()
        .find(|(name, _)| *name == variant)
        .map(|(_, contract)| contract.code.as_str().to_owned())
        .unwrap_or_default();
    tracing::warn!(
        target: "fusion::contract",
        tool,
        action,
        variant,
        code = code.as_str(),
        "the action returned an error variant its `errors(..)` does not declare; the client \
         gets the envelope, but the advertised contract and the lockfile do not list the code: \
         add the variant to `#[action(errors(..))]`"
    );
}

/// The probe generated code checks an action's output through:
/// `(&&Declared(&output)).__fusion_check_declared(..)` logs an undeclared variant when the output
/// is a `Result` of a `ToolErrors` type and does nothing otherwise, so an output that is not
/// one is reported once, by the definition's `ErrorOf` bound.
pub struct Declared<'a, R>(pub &'a R);

/// The output is a `Result`: check it.
pub trait CheckDeclared {
    /// Logs a variant returned outside `variants`, once per tool, action and variant.
    fn __fusion_check_declared(&self, variants: &[&str], tool: &'static str, action: &'static str);
}
impl<R: ErrorOf> CheckDeclared for &Declared<'_, R> {
    fn __fusion_check_declared(&self, variants: &[&str], tool: &'static str, action: &'static str) {
        check_declared(self.0, variants, tool, action);
    }
}

/// The output is not (reported by the definition): nothing to check.
pub trait SkipDeclared {
    /// Nothing.
    fn __fusion_check_declared(
        &self,
        _variants: &[&str],
        _tool: &'static str,
        _action: &'static str,
    ) {
    }
}
impl<R> SkipDeclared for Declared<'_, R> {}

/// Whether this is the first report of `variant` from `tool`'s `action` in this process (no
/// allocation: the names are the generated code's literals). At most [`MAX_REPORTED`]
/// distinct reports are remembered; past that, each one is logged.
fn first_report(tool: &'static str, action: &'static str, variant: &'static str) -> bool {
    static REPORTED: LazyLock<Mutex<HashSet<Report>>> = LazyLock::new(Mutex::default);
    let mut reported = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
    if reported.len() >= MAX_REPORTED {
        return true;
    }
    reported.insert((tool, action, variant))
}

/// One report: the tool, the action and the variant.
type Report = (&'static str, &'static str, &'static str);

/// How many distinct undeclared variants are remembered, so reports stay bounded in memory.
const MAX_REPORTED: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::code::{ErrorCode, Severity};

    enum Failure {
        Missing,
        Busy,
    }

    impl From<Failure> for crate::ToolError {
        fn from(_: Failure) -> crate::ToolError {
            crate::ToolError::new(ErrorCode::NotFound, "missing")
        }
    }

    impl ToolErrors for Failure {
        fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
            vec![
                (
                    "Missing",
                    ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, None),
                ),
                (
                    "Busy",
                    ErrorContract::new(ErrorCode::RateLimited, Severity::Error, None, None),
                ),
            ]
        }

        fn variant(&self) -> Option<&'static str> {
            Some(match self {
                Failure::Missing => "Missing",
                Failure::Busy => "Busy",
            })
        }
    }

    #[test]
    fn declared_variants_select_their_contracts_in_declaration_order() {
        let contracts = declared_contracts::<Result<(), Failure>>(&["Busy"]);
        assert_eq!(contracts.len(), 1);
        assert_eq!(contracts[0].code, ErrorCode::RateLimited);
        let all = Failure::error_contracts();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].code, ErrorCode::NotFound);
    }

    #[test]
    #[should_panic(expected = "declares `Gone`")]
    fn a_variant_without_a_contract_is_named() {
        declared_contracts::<Result<(), Failure>>(&["Gone"]);
    }

    #[test]
    fn each_undeclared_variant_is_reported_once() {
        let busy: Result<(), Failure> = Err(Failure::Busy);
        assert!(first_report("t", "a", "Missing"));
        assert!(!first_report("t", "a", "Missing"));
        assert!(first_report("t", "b", "Missing"));
        // Declared and successful outputs are never recorded.
        check_declared(&busy, &["Busy"], "t", "c");
        check_declared(&Ok::<(), Failure>(()), &[], "t", "c");
        assert!(first_report("t", "c", "Busy"));
        let missing: Result<(), Failure> = Err(Failure::Missing);
        check_declared(&missing, &["Busy"], "t", "d");
        assert!(!first_report("t", "d", "Missing"));
    }
}
