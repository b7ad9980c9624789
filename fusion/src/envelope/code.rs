//! Error codes, severities and categories: the closed-then-open vocabulary of the wire contract.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// `as_str`, `Display` and `FromStr` (failing with [`UnknownVariant`] naming `$kind`) of a
/// fieldless enum, from one table of variants and wire strings.
macro_rules! wire_strings {
    (
        $ty:ident, $kind:literal,
        $(#[$as_str_doc:meta])* as_str,
        $(#[$from_str_doc:meta])* from_str,
        $($variant:ident => $wire:literal,)*
    ) => {
        impl $ty {
            $(#[$as_str_doc])*
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $wire,)*
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::envelope::code::UnknownVariant;

            $(#[$from_str_doc])*
            fn from_str(s: &str) -> Result<$ty, $crate::envelope::code::UnknownVariant> {
                match s {
                    $($wire => Ok($ty::$variant),)*
                    _ => Err($crate::envelope::code::UnknownVariant::new($kind, s)),
                }
            }
        }
    };
}
pub(crate) use wire_strings;

/// Generates `ErrorCode` with its canonical variants, their wire strings and default categories
/// from one table, so the three can never drift apart.
macro_rules! canonical_codes {
    ($( $(#[$doc:meta])* $variant:ident => $wire:literal, $category:ident; )*) => {
        /// The code of an error envelope (`<tool_error code="…">`).
        ///
        /// The type is *closed-then-open*: one variant per canonical code, so
        /// editors autocomplete them, plus [`ErrorCode::Custom`] for domain codes such as
        /// `ALREADY_PAID`. Parsing a canonical string always yields the canonical variant, never
        /// `Custom`, and every code the framework emits itself is canonical.
        ///
        /// ```
        /// use fusion::ErrorCode;
        ///
        /// assert_eq!(ErrorCode::from("NOT_FOUND"), ErrorCode::NotFound);
        /// assert_eq!(ErrorCode::from("ALREADY_PAID").as_str(), "ALREADY_PAID");
        /// assert!(ErrorCode::from("ALREADY_PAID").is_custom());
        /// ```
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
        #[serde(from = "String")]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant, )*
            /// A domain code that is not canonical (`ALREADY_PAID`, `InvoiceNotFound`).
            ///
            /// Build it with [`ErrorCode::custom`] or `From<&str>`, which map canonical strings
            /// back to their canonical variants.
            Custom(Cow<'static, str>),
        }

        impl ErrorCode {
            /// Every canonical code, in their documented order (the variants' order).
            pub const CANONICAL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire string: `"NOT_FOUND"`, or the custom code as given.
            pub fn as_str(&self) -> &str {
                match self {
                    $( ErrorCode::$variant => $wire, )*
                    ErrorCode::Custom(code) => code,
                }
            }

            /// The canonical code whose wire string is `code`, if any.
            fn canonical(code: &str) -> Option<ErrorCode> {
                match code {
                    $( $wire => Some(ErrorCode::$variant), )*
                    _ => None,
                }
            }

            /// The default category of this code. Custom codes have none;
            /// they fall back to [`ErrorCategory::Unknown`] unless the error declares one.
            pub fn default_category(&self) -> Option<ErrorCategory> {
                match self {
                    $( ErrorCode::$variant => Some(ErrorCategory::$category), )*
                    ErrorCode::Custom(_) => None,
                }
            }
        }
    };
}

canonical_codes! {
    /// The argument object names no action (the discriminator is missing, `null` or empty).
    MissingDiscriminator => "MISSING_DISCRIMINATOR", Validation;
    /// The discriminator names an action the tool does not have.
    UnknownAction => "UNKNOWN_ACTION", Validation;
    /// The arguments do not match the action's schema or constraints.
    ValidationError => "VALIDATION_ERROR", Validation;
    /// A field the action requires was not sent.
    MissingRequiredField => "MISSING_REQUIRED_FIELD", Validation;
    /// An unexpected server-side failure; the details stay in the server log.
    InternalError => "INTERNAL_ERROR", Unknown;
    /// Too many calls; `retry_after` says when a slot frees.
    RateLimited => "RATE_LIMITED", RateLimit;
    /// The caller is not authenticated.
    Unauthorized => "UNAUTHORIZED", Auth;
    /// The caller is authenticated but not allowed to do this.
    Forbidden => "FORBIDDEN", Auth;
    /// The requested entity does not exist.
    NotFound => "NOT_FOUND", NotFound;
    /// The request conflicts with the current state (already paid, version mismatch).
    Conflict => "CONFLICT", Unknown;
    /// The call ran out of time.
    Timeout => "TIMEOUT", Transient;
    /// The server shed load: too many active and queued calls.
    ServerBusy => "SERVER_BUSY", Transient;
    /// A deprecated action or parameter was used (usually a warning).
    Deprecated => "DEPRECATED", Validation;
    /// The action needs credentials the caller has not supplied yet.
    AuthRequired => "AUTH_REQUIRED", Auth;
    /// A handoff target server is unavailable.
    HandoffUpstreamUnavailable => "HANDOFF_UPSTREAM_UNAVAILABLE", Transient;
    /// A handoff targeted the wrong namespace.
    HandoffNamespaceMismatch => "HANDOFF_NAMESPACE_MISMATCH", Validation;
    /// A handoff is still connecting.
    HandoffConnecting => "HANDOFF_CONNECTING", Transient;
    /// The result was larger than the action's result limit: a list cut to the items that fit
    /// (a warning next to them), or any other result refused (an error); see
    /// [`ResultLimit`](crate::ResultLimit).
    ResultTruncated => "RESULT_TRUNCATED", Validation;
}

impl ErrorCode {
    /// A code from a string known at compile time, without allocating.
    ///
    /// Canonical strings map to their canonical variants, like every other conversion.
    pub fn custom(code: &'static str) -> ErrorCode {
        ErrorCode::canonical(code).unwrap_or(ErrorCode::Custom(Cow::Borrowed(code)))
    }

    /// Whether this is a domain code rather than one of the 18 canonical ones.
    pub fn is_custom(&self) -> bool {
        matches!(self, ErrorCode::Custom(_))
    }
}

impl From<&str> for ErrorCode {
    fn from(code: &str) -> ErrorCode {
        ErrorCode::canonical(code).unwrap_or_else(|| ErrorCode::Custom(Cow::Owned(code.to_owned())))
    }
}

impl From<String> for ErrorCode {
    fn from(code: String) -> ErrorCode {
        ErrorCode::canonical(&code).unwrap_or(ErrorCode::Custom(Cow::Owned(code)))
    }
}

impl From<&ErrorCode> for ErrorCode {
    fn from(code: &ErrorCode) -> ErrorCode {
        code.clone()
    }
}

impl FromStr for ErrorCode {
    type Err = Infallible;

    /// Never fails: an unknown string is a custom code.
    fn from_str(code: &str) -> Result<ErrorCode, Infallible> {
        Ok(ErrorCode::from(code))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How bad an error is, and so whether the MCP result is an error (its `isError`).
///
/// | severity | `isError` | meaning |
/// |---|---|---|
/// | `warning` | `false` | guidance on the success path (deprecated parameter, fallback, truncation) |
/// | `error` | `true` | the action failed |
/// | `critical` | `true` | the action failed and must not be retried blindly |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Guidance that rides on a successful result.
    Warning,
    /// The action failed (the default).
    #[default]
    Error,
    /// The action failed and must not be retried blindly.
    Critical,
}

wire_strings! {
    Severity, "severity",
    /// The wire string: `"warning"`, `"error"` or `"critical"`.
    as_str,
    /// Parses `"warning"`, `"error"` or `"critical"` (exact, lowercase).
    from_str,
    Warning => "warning",
    Error => "error",
    Critical => "critical",
}

impl Severity {
    /// The MCP `isError` value: `true` for `error` and `critical`, `false` for `warning`.
    pub fn is_error(self) -> bool {
        !matches!(self, Severity::Warning)
    }
}

/// The error returned when a string names no [`Severity`], [`ErrorCategory`] or
/// [`DeltaClass`](crate::contract::DeltaClass).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`")]
pub struct UnknownVariant {
    kind: &'static str,
    value: String,
}

impl UnknownVariant {
    /// An error for `value`, which names no `kind` (`"severity"`, `"delta class"`).
    pub(crate) fn new(kind: &'static str, value: &str) -> UnknownVariant {
        UnknownVariant {
            kind,
            value: value.to_owned(),
        }
    }
}

/// What kind of failure an error is, for client code deciding retry, escalate or abort
/// (the `errorCategory` flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCategory {
    /// Credentials missing or insufficient: escalate, do not retry.
    Auth,
    /// Too many calls: wait exactly `retryAfterSeconds`, then retry.
    RateLimit,
    /// The entity does not exist: do not retry the same call.
    NotFound,
    /// The arguments are wrong: fix them, do not retry as-is.
    Validation,
    /// A passing condition (timeout, load shedding): retry with backoff.
    Transient,
    /// Uncategorised: do not retry, log.
    Unknown,
}

wire_strings! {
    ErrorCategory, "error category",
    /// The wire string: `"auth"`, `"rate_limit"`, `"not_found"`, `"validation"`,
    /// `"transient"` or `"unknown"`.
    as_str,
    /// Parses the wire strings of [`ErrorCategory::as_str`].
    from_str,
    Auth => "auth",
    RateLimit => "rate_limit",
    NotFound => "not_found",
    Validation => "validation",
    Transient => "transient",
    Unknown => "unknown",
}

impl ErrorCategory {
    /// The default `isRetryable` of this category: `true` for transient and rate_limit.
    pub fn is_retryable_by_default(self) -> bool {
        matches!(self, ErrorCategory::Transient | ErrorCategory::RateLimit)
    }
}

/// Serde support: all three serialize as their wire strings (`ErrorCode` deserializes from any
/// string, as `From<String>`).
mod serde_impls {
    use super::{ErrorCategory, ErrorCode, Severity};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    macro_rules! wire_string_serde {
        ($($ty:ty),*; $($parsed:ty),*) => {$(
            impl Serialize for $ty {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_str(self.as_str())
                }
            }
        )* $(
            impl<'de> Deserialize<'de> for $parsed {
                fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$parsed, D::Error> {
                    let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                    s.parse().map_err(D::Error::custom)
                }
            }
        )*};
    }

    wire_string_serde!(ErrorCode, Severity, ErrorCategory; Severity, ErrorCategory);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_strings_round_trip_to_canonical_variants() {
        assert_eq!(ErrorCode::CANONICAL.len(), 18);
        for code in ErrorCode::CANONICAL {
            assert!(!code.is_custom());
            assert_eq!(&ErrorCode::from(code.as_str()), code);
            assert_eq!(&ErrorCode::from(code.as_str().to_owned()), code);
            assert_eq!(&ErrorCode::custom(code.as_str()), code);
            assert_eq!(code.as_str().parse::<ErrorCode>().unwrap(), *code);
        }
    }

    #[test]
    fn custom_codes_keep_their_text() {
        let code: ErrorCode = "ALREADY_PAID".parse().unwrap();
        assert_eq!(code, ErrorCode::Custom("ALREADY_PAID".into()));
        assert_eq!(code.to_string(), "ALREADY_PAID");
        // Case matters: only the exact canonical spelling is canonical.
        assert!(ErrorCode::from("not_found").is_custom());
    }

    #[test]
    fn severity_and_category_parse_their_wire_strings() {
        for s in [Severity::Warning, Severity::Error, Severity::Critical] {
            assert_eq!(s.as_str().parse::<Severity>(), Ok(s));
        }
        assert!("fatal".parse::<Severity>().is_err());
        assert_eq!(
            "rate_limit".parse::<ErrorCategory>(),
            Ok(ErrorCategory::RateLimit)
        );
        assert_eq!(
            "nope".parse::<ErrorCategory>().unwrap_err().to_string(),
            "unknown error category `nope`"
        );
    }
}
