//! What generated code checks on an action's arguments type, by autoref specialization:
//! generated code calls a method on several references to a probe value (`(&&probe)`); method
//! resolution tries the receiver with the most references first, so the impl on the most
//! references that the concrete type satisfies wins. The output probes
//! ([`Outputs`](crate::model::output::Outputs)) and the internal-error probe
//! ([`Internal`](crate::envelope::error::derive::Internal)) work the same way.
//!
//! The arguments are a JSON object: a type whose JSON is an array, a string, a number or a
//! boolean (`Vec<String>`, `String`, `u32`) is refused on the user's type, not at start-up when
//! the server reads the tool's schema. Generated code:
//! `(&&Arguments::<T>::NEW).__fusion_object_arguments()`. For the types listed by
//! [`NotAnObject`] the first impl applies and its method requires [`ObjectArguments`], which
//! nothing implements: the error carries the `on_unimplemented` message. Every other type takes
//! the second impl, which requires nothing (its schema is still checked at registration).
//!
//! `validator` rules run only for arguments types that have them ([`Validate`]).

use std::collections::{BTreeSet, HashSet, VecDeque};

/// The probe value for the arguments type `T`.
pub struct Arguments<T: ?Sized>(::core::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> Arguments<T> {
    /// The probe value.
    pub const NEW: Arguments<T> = Arguments(::core::marker::PhantomData);
}

/// The arguments of an action are one JSON object: implemented by nothing, so a type known
/// not to be one gets this message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an action's arguments: its JSON is not an object",
    label = "not a JSON object",
    note = "take a struct with named fields (`#[derive(Deserialize, JsonSchema)] struct Args {{ items: Vec<String> }}`), whose JSON is an object the model fills by field name"
)]
pub trait ObjectArguments {}

/// Types whose JSON is never an object.
pub trait NotAnObject {}

/// Each type with its generic parameters in brackets.
macro_rules! not_an_object {
    ($([$($generics:tt)*] $ty:ty),* $(,)?) => {$(
        impl<$($generics)*> NotAnObject for $ty {}
    )*};
}
not_an_object!(
    [] (), [] bool, [] char, [] i8, [] i16, [] i32, [] i64, [] i128, [] isize, [] u8, [] u16,
    [] u32, [] u64, [] u128, [] usize, [] f32, [] f64, [] String, [] str, [T] Vec<T>,
    [T] VecDeque<T>, [T] [T], [T, const N: usize] [T; N], [T, S] HashSet<T, S>, [T] BTreeSet<T>,
    [T: NotAnObject + ?Sized] &T, [T: NotAnObject + ?Sized] Box<T>, [A] (A,), [A, B] (A, B),
    [A, B, C] (A, B, C), [A, B, C, D] (A, B, C, D),
);

/// `T` is known not to be an object: the method requires [`ObjectArguments`].
pub trait NonObjectArguments<T: ?Sized> {
    /// Fails to compile for every `T`.
    fn __fusion_object_arguments(&self)
    where
        T: ObjectArguments,
    {
    }
}
impl<T: NotAnObject + ?Sized> NonObjectArguments<T> for &Arguments<T> {}

/// Any other type: nothing to check here.
pub trait AnyArguments {
    /// Does nothing.
    fn __fusion_object_arguments(&self) {}
}
impl<T: ?Sized> AnyArguments for Arguments<T> {}

/// Runs `validator::Validate` on a parsed arguments value when its type implements it, by the
/// same autoref specialization. Generated code: `(&&Validate(&arguments)).__fusion_validate()`.
pub struct Validate<'a, T>(pub &'a T);

/// The arguments type implements `validator::Validate`.
pub trait ViaValidator {
    /// The rule violations, if any.
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors>;
}
impl<T: validator::Validate> ViaValidator for &Validate<'_, T> {
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors> {
        self.0.validate().err()
    }
}

/// The arguments type has no `validator` rules.
pub trait NoValidator {
    /// Always `None`.
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors> {
        None
    }
}
impl<T> NoValidator for Validate<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(validator::Validate)]
    struct Checked {
        #[validate(range(min = 1))]
        n: u32,
    }
    struct Unchecked;

    #[test]
    #[allow(
        clippy::needless_borrow,
        reason = "autoref specialization: the extra references pick the impl"
    )]
    fn validation_runs_only_when_implemented() {
        assert!(
            (&&Validate(&Checked { n: 0 }))
                .__fusion_validate()
                .is_some()
        );
        assert!(
            (&&Validate(&Checked { n: 1 }))
                .__fusion_validate()
                .is_none()
        );
        assert!((&&Validate(&Unchecked)).__fusion_validate().is_none());
    }
}
