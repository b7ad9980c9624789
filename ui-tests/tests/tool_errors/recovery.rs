//! Recovery interpolation: named and tuple fields, format specs, escaped braces, and the text
//! escaped in the envelope.

use std::fmt;

use fusion::{ToolError, ToolErrors};

/// Recovery interpolation: named fields, tuple fields, format specs, escaped braces.
#[derive(Debug, ToolErrors)]
enum Interpolated {
    #[tool_error(
        NOT_FOUND,
        recovery = "No invoice {id:?} for customer {customer}; call {{list}} first"
    )]
    Named { id: String, customer: u32 },
    #[tool_error(NOT_FOUND, recovery = "Retry with {1} instead of {0} ({0})")]
    Tuple(String, String),
    #[tool_error(VALIDATION_ERROR, recovery = "Amount must be > 0 & < {max:>6}")]
    Padded { max: u32 },
}

impl fmt::Display for Interpolated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interpolated")
    }
}

#[test]
fn recovery_interpolates_named_fields() {
    let err = ToolError::from(Interpolated::Named {
        id: "inv_1".into(),
        customer: 42,
    });
    assert_eq!(
        err.recovery(),
        Some("No invoice \"inv_1\" for customer 42; call {list} first")
    );
}

#[test]
fn recovery_interpolates_tuple_fields() {
    let err = ToolError::from(Interpolated::Tuple("inv_1".into(), "inv_2".into()));
    assert_eq!(
        err.recovery(),
        Some("Retry with inv_2 instead of inv_1 (inv_1)")
    );
}

#[test]
fn recovery_text_is_escaped_in_the_envelope() {
    let err = ToolError::from(Interpolated::Padded { max: 500 });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">\n\
         <message>interpolated</message>\n\
         <recovery>Amount must be > 0 &amp; &lt;    500</recovery>\n\
         </tool_error>"
    );
}
