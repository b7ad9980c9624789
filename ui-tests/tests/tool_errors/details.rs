//! Details in field order, keyed by name or `key`, and retry delays of every shape.

use std::fmt;

use fusion::{ToolError, ToolErrors};
use std::time::Duration;

/// Details in field order, with and without a key, and retry delays of every shape.
#[derive(Debug, ToolErrors)]
enum Detailed {
    #[tool_error(NOT_FOUND)]
    Missing {
        #[detail]
        invoice: String,
        #[allow(dead_code)] // a field without a helper attribute stays out of the envelope
        skipped: bool,
        #[detail(key = "customerId")]
        customer: u64,
        #[detail]
        r#type: &'static str,
    },
    #[tool_error(NOT_FOUND)]
    Tuple(
        #[detail(key = "first")] String,
        #[detail(key = "second")] char,
    ),
    #[tool_error(SERVER_BUSY)]
    Busy(#[retry_after] Duration),
    #[tool_error(SERVER_BUSY)]
    Maybe {
        #[retry_after]
        after: Option<u32>,
    },
}

impl fmt::Display for Detailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("detailed")
    }
}

#[test]
fn details_in_field_order_keyed_by_name_or_key() {
    let err = ToolError::from(Detailed::Missing {
        invoice: "inv_<1>".into(),
        skipped: true,
        customer: 7,
        r#type: "draft",
    });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>detailed</message>\n\
         <details>\n\
         \x20 <detail key=\"invoice\">inv_&lt;1></detail>\n\
         \x20 <detail key=\"customerId\">7</detail>\n\
         \x20 <detail key=\"type\">draft</detail>\n\
         </details>\n\
         </tool_error>"
    );
}

#[test]
fn details_of_tuple_fields() {
    let err = ToolError::from(Detailed::Tuple("a".into(), 'b'));
    assert_eq!(
        err.details(),
        [
            ("first".to_owned(), "a".to_owned()),
            ("second".to_owned(), "b".to_owned())
        ]
    );
}

#[test]
fn retry_after_from_a_duration_rounds_up() {
    let err = ToolError::from(Detailed::Busy(Duration::from_millis(1200)));
    assert_eq!(err.retry_after_secs(), Some(2));
    assert!(
        err.to_xml()
            .ends_with("<retry_after>2 seconds</retry_after>\n</tool_error>")
    );
    assert_eq!(err.flags()["retryAfterSeconds"], 2);
}

#[test]
fn retry_after_from_an_option() {
    let err = ToolError::from(Detailed::Maybe { after: Some(5) });
    assert_eq!(err.retry_after_secs(), Some(5));
    let err = ToolError::from(Detailed::Maybe { after: None });
    assert_eq!(err.retry_after_secs(), None);
    assert!(!err.to_xml().contains("retry_after"));
    assert!(err.flags().get("retryAfterSeconds").is_none());
}
