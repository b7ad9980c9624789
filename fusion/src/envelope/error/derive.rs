//! What `#[derive(ToolErrors)]` expansions call at run time: a `#[retry_after]` field's delay
//! in seconds, and the error of a `#[tool_error(internal)]` variant.

use crate::envelope::error::ToolError;

/// A `#[retry_after]` field's delay in whole seconds, the unit of `<retry_after>`.
/// Implemented for the integer types (a count of seconds; negative means unset),
/// `std::time::Duration` (rounded up, so 1.2 s is 2 s: a retry must not come early) and
/// `Option` of those (`None` means unset). Generated code:
/// `::fusion::__private::RetryAfterSecs::retry_after_secs(&field)`.
#[diagnostic::on_unimplemented(
    message = "`#[retry_after]` needs a whole number of seconds or a `std::time::Duration`, not `{Self}`",
    label = "not a retry delay",
    note = "use an integer type (seconds), `std::time::Duration`, or an `Option` of one"
)]
pub trait RetryAfterSecs {
    /// The delay in whole seconds; `0` means unset.
    fn retry_after_secs(&self) -> u64;
}

macro_rules! retry_after_integer {
    ($($ty:ty),*) => {$(
        impl RetryAfterSecs for $ty {
            fn retry_after_secs(&self) -> u64 {
                // Negative: no delay. Too large for u64: the largest delay.
                u64::try_from(*self).unwrap_or(if *self > 0 { u64::MAX } else { 0 })
            }
        }
    )*};
}
retry_after_integer!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

impl RetryAfterSecs for ::core::time::Duration {
    fn retry_after_secs(&self) -> u64 {
        // Rounded up: one more second for any fraction.
        self.as_secs()
            .saturating_add(u64::from(self.subsec_nanos() > 0))
    }
}

impl<T: RetryAfterSecs> RetryAfterSecs for Option<T> {
    fn retry_after_secs(&self) -> u64 {
        self.as_ref().map_or(0, T::retry_after_secs)
    }
}

impl<T: RetryAfterSecs + ?Sized> RetryAfterSecs for &T {
    fn retry_after_secs(&self) -> u64 {
        T::retry_after_secs(self)
    }
}

/// Borrows a `#[tool_error(internal)]` variant's whole error value to log it: its error chain
/// when it implements `std::error::Error`, else its `Display`.
/// Generated code: `(&&Internal(&error)).__fusion_internal()`.
pub struct Internal<'a, E>(pub &'a E);

/// The value is a `std::error::Error`: log the chain.
pub trait InternalChain {
    /// `INTERNAL_ERROR` with an error id; the chain goes to the log.
    fn __fusion_internal(self) -> ToolError;
}
impl<E: std::error::Error + 'static> InternalChain for &&Internal<'_, E> {
    fn __fusion_internal(self) -> ToolError {
        ToolError::from_internal(self.0)
    }
}

/// The value only implements `Display`: log that.
pub trait InternalDisplay {
    /// `INTERNAL_ERROR` with an error id; the text goes to the log.
    fn __fusion_internal(self) -> ToolError;
}
impl<E: ::core::fmt::Display> InternalDisplay for &Internal<'_, E> {
    fn __fusion_internal(self) -> ToolError {
        crate::envelope::internal::from_display(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn retry_after_secs<T: RetryAfterSecs + ?Sized>(value: &T) -> u64 {
        value.retry_after_secs()
    }

    #[test]
    fn integer_delays_are_whole_seconds() {
        assert_eq!(retry_after_secs(&30u8), 30);
        assert_eq!(retry_after_secs(&30u64), 30);
        assert_eq!(retry_after_secs(&u128::MAX), u64::MAX);
        assert_eq!(retry_after_secs(&45i32), 45);
        assert_eq!(retry_after_secs(&-5i64), 0);
        assert_eq!(retry_after_secs(&i128::MAX), u64::MAX);
        assert_eq!(retry_after_secs(&7usize), 7);
    }

    #[test]
    fn durations_round_up_to_whole_seconds() {
        assert_eq!(retry_after_secs(&Duration::from_millis(1200)), 2);
        assert_eq!(retry_after_secs(&Duration::from_secs(3)), 3);
        assert_eq!(retry_after_secs(&Duration::from_nanos(1)), 1);
        assert_eq!(retry_after_secs(&Duration::ZERO), 0);
        assert_eq!(retry_after_secs(&Duration::MAX), u64::MAX);
    }

    #[test]
    fn options_and_references_delegate() {
        assert_eq!(retry_after_secs(&Some(Duration::from_millis(10))), 1);
        assert_eq!(retry_after_secs(&None::<u32>), 0);
        assert_eq!(retry_after_secs(&&12u16), 12);
    }
}
