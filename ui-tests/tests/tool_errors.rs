//! Behaviour of `#[derive(ToolErrors)]`: each attribute's effect on the `<tool_error>` envelope
//! (byte-exact) and on the typed flags, and the declared contracts.

use std::fmt;
use std::time::Duration;

use fusion::{ErrorCategory, ErrorCode, ErrorContract, Severity, ToolError, ToolErrors};
use serde_json::json;

// --- action references --------------------------------------------------------------------------
//
// Real tools: `#[fusion::tool]` emits the action-reference constants `actions(..)` names.

/// The multi-action tool `billing`.
pub struct Billing;

#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action]
    fn list_invoices(&self) {}

    /// Fetches one invoice.
    #[action]
    fn get_invoice(&self) {}
}

/// The multi-action tool `invoices`.
pub struct Invoices;

#[fusion::tool]
impl Invoices {
    /// Searches invoices.
    #[action]
    fn search(&self) {}
}

/// A single-function tool: generates the unit struct `Calculator`.
#[fusion::tool]
fn calculator() {}

// --- the domain errors under test ---------------------------------------------------------------

/// A handwritten `Display`, the envelope's message.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Billing)]
enum BillingError {
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices first, then retry with a real ID",
        actions(list_invoices)
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },
    #[tool_error(code = "ALREADY_PAID")]
    AlreadyPaid,
    #[tool_error(code = "CONFLICT")]
    Locked,
    #[tool_error(RATE_LIMITED, recovery = "Wait {secs} seconds, then call again")]
    Throttled {
        #[retry_after]
        secs: u64,
    },
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BillingError::InvoiceNotFound { .. } => f.write_str("No invoice with that ID"),
            BillingError::AlreadyPaid => f.write_str("Invoice is already paid"),
            BillingError::Locked => f.write_str("Invoice is locked"),
            BillingError::Throttled { .. } => f.write_str("Too many calls"),
        }
    }
}

#[test]
fn canonical_code_with_recovery_actions_and_detail() {
    let err = ToolError::from(BillingError::InvoiceNotFound {
        id: "inv_2026_9999".into(),
    });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>No invoice with that ID</message>\n\
         <recovery>List invoices first, then retry with a real ID</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">inv_2026_9999</detail>\n</details>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "not_found",
            "isRetryable": false,
            "code": "NOT_FOUND",
            "severity": "error",
        })
    );
}

#[test]
fn custom_code_is_uncategorised_and_not_retryable() {
    let err: ToolError = BillingError::AlreadyPaid.into();
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"ALREADY_PAID\" severity=\"error\">\n\
         <message>Invoice is already paid</message>\n\
         </tool_error>"
    );
    assert_eq!(*err.code(), ErrorCode::Custom("ALREADY_PAID".into()));
    assert!(err.is_uncategorised());
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "unknown",
            "isRetryable": false,
            "code": "ALREADY_PAID",
            "severity": "error",
        })
    );
}

#[test]
fn canonical_string_code_maps_to_the_canonical_variant() {
    let err = ToolError::from(BillingError::Locked);
    assert_eq!(*err.code(), ErrorCode::Conflict);
    assert!(!err.code().is_custom());
}

#[test]
fn retry_after_from_an_integer_field_and_named_recovery() {
    let err = ToolError::from(BillingError::Throttled { secs: 30 });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
         <message>Too many calls</message>\n\
         <recovery>Wait 30 seconds, then call again</recovery>\n\
         <retry_after>30 seconds</retry_after>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "rate_limit",
            "isRetryable": true,
            "retryAfterSeconds": 30,
            "code": "RATE_LIMITED",
            "severity": "error",
        })
    );
}

/// Severity, category and retryable per variant.
#[derive(Debug, ToolErrors)]
enum Flagged {
    #[tool_error(DEPRECATED, severity = "warning")]
    OldParameter,
    #[tool_error(code = "LEDGER_CORRUPT", severity = "critical")]
    Corrupt,
    #[tool_error(code = "LEDGER_BUSY", category = "transient")]
    Busy,
    #[tool_error(code = "LEDGER_SYNCING", category = "transient", retryable = false)]
    Syncing,
    #[tool_error(CONFLICT, retryable = true)]
    Stale,
}

impl fmt::Display for Flagged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

#[test]
fn warning_severity_is_not_an_error() {
    let err = ToolError::from(Flagged::OldParameter);
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"DEPRECATED\" severity=\"warning\">\n\
         <message>OldParameter</message>\n\
         </tool_error>"
    );
    assert_eq!(
        err.flags(),
        json!({
            "isError": false,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "DEPRECATED",
            "severity": "warning",
        })
    );
}

#[test]
fn critical_severity() {
    let err = ToolError::from(Flagged::Corrupt);
    assert_eq!(err.severity_level(), Severity::Critical);
    assert!(
        err.to_xml()
            .starts_with("<tool_error code=\"LEDGER_CORRUPT\" severity=\"critical\">\n")
    );
    assert_eq!(err.flags()["isError"], true);
}

#[test]
fn declared_category_sets_the_default_retryability() {
    let err = ToolError::from(Flagged::Busy);
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "transient",
            "isRetryable": true,
            "code": "LEDGER_BUSY",
            "severity": "error",
        })
    );
    assert!(!err.is_uncategorised());
}

#[test]
fn retryable_overrides_the_category_default() {
    let err = ToolError::from(Flagged::Syncing);
    assert_eq!(err.flags()["errorCategory"], "transient");
    assert_eq!(err.flags()["isRetryable"], false);
    let err = ToolError::from(Flagged::Stale);
    assert_eq!(err.flags()["errorCategory"], "unknown");
    assert_eq!(err.flags()["isRetryable"], true);
}

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

/// Actions: one, several across tools, bare names with the type-level `tool`, a single-function
/// tool.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Billing)]
enum Routed {
    #[tool_error(NOT_FOUND, actions(Billing::list_invoices))]
    One,
    #[tool_error(
        NOT_FOUND,
        actions(Billing::get_invoice, Invoices::search, Calculator::calculator)
    )]
    Several,
    #[tool_error(NOT_FOUND, actions(list_invoices, get_invoice))]
    Bare,
}

impl fmt::Display for Routed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("routed")
    }
}

#[test]
fn one_action() {
    let err = ToolError::from(Routed::One);
    assert_eq!(err.available_actions(), ["billing.list_invoices"]);
}

#[test]
fn several_actions_keep_their_order() {
    let err = ToolError::from(Routed::Several);
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>routed</message>\n\
         <available_actions>\n\
         \x20 <action>billing.get_invoice</action>\n\
         \x20 <action>invoices.search</action>\n\
         \x20 <action>calculator</action>\n\
         </available_actions>\n\
         </tool_error>"
    );
}

#[test]
fn bare_actions_resolve_against_the_type_level_tool() {
    let err = ToolError::from(Routed::Bare);
    assert_eq!(
        err.available_actions(),
        ["billing.list_invoices", "billing.get_invoice"]
    );
}

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

/// `internal` variants, with a thiserror `Display` and `source` chain.
#[derive(Debug, thiserror::Error, ToolErrors)]
enum StoreError {
    #[error("ledger unavailable: {0}")]
    #[tool_error(internal)]
    Database(#[from] std::io::Error),
    #[error("ledger corrupt at {0}")]
    #[tool_error(internal, severity = "critical")]
    Corrupt(String),
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    Missing { id: String },
}

const SECRET: &str = "postgres://billing:hunter2@10.0.0.7:5432/ledger";

/// The envelope every internal error shows, for the error id it carries.
fn internal_xml(err: &ToolError, severity: &str) -> String {
    let id = err.detail_value("errorId").expect("an error id");
    assert!(id.starts_with("err_"), "{id}");
    format!(
        "<tool_error code=\"INTERNAL_ERROR\" severity=\"{severity}\">\n\
         <message>{}</message>\n\
         <recovery>{}</recovery>\n\
         <details>\n  <detail key=\"errorId\">{id}</detail>\n</details>\n\
         </tool_error>",
        fusion::internal::MESSAGE,
        fusion::internal::RECOVERY,
    )
}

#[test]
fn internal_variants_hide_the_inner_error() {
    let cause = std::io::Error::other(format!("connect {SECRET}: refused"));
    let err = ToolError::from(StoreError::from(cause));
    let xml = err.to_xml();
    assert!(!xml.contains("hunter2"), "{xml}");
    assert!(!xml.contains("ledger unavailable"), "{xml}");
    assert_eq!(xml, internal_xml(&err, "error"));
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "unknown",
            "isRetryable": false,
            "code": "INTERNAL_ERROR",
            "severity": "error",
        })
    );
}

#[test]
fn internal_variants_may_set_their_severity() {
    let err = ToolError::from(StoreError::Corrupt(SECRET.into()));
    let xml = err.to_xml();
    assert!(!xml.contains("hunter2"), "{xml}");
    assert_eq!(xml, internal_xml(&err, "critical"));
}

#[test]
fn thiserror_display_is_the_message() {
    let err = ToolError::from(StoreError::Missing { id: "inv_9".into() });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>no invoice inv_9</message>\n\
         </tool_error>"
    );
}

/// Type-level defaults, overridden per variant.
#[derive(Debug, ToolErrors)]
#[tool_error(severity = "warning", category = "validation")]
enum Defaults {
    #[tool_error(code = "TRUNCATED")]
    Inherits,
    #[tool_error(code = "REVOKED", severity = "critical", category = "auth")]
    Overrides,
}

impl fmt::Display for Defaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("defaults")
    }
}

#[test]
fn type_level_defaults_apply_to_every_variant() {
    let err = ToolError::from(Defaults::Inherits);
    assert_eq!(
        err.flags(),
        json!({
            "isError": false,
            "errorCategory": "validation",
            "isRetryable": false,
            "code": "TRUNCATED",
            "severity": "warning",
        })
    );
}

#[test]
fn variants_override_type_level_defaults() {
    let err = ToolError::from(Defaults::Overrides);
    assert_eq!(
        err.flags(),
        json!({
            "isError": true,
            "errorCategory": "auth",
            "isRetryable": false,
            "code": "REVOKED",
            "severity": "critical",
        })
    );
}

/// A struct is a single contract: its `#[tool_error(…)]` holds the code and the tool.
#[derive(Debug, ToolErrors)]
#[tool_error(
    NOT_FOUND,
    tool = Billing,
    recovery = "List invoices of customer {customer} first",
    actions(list_invoices),
)]
struct InvoiceMissing {
    #[detail(key = "requestedId")]
    id: String,
    customer: u32,
}

impl fmt::Display for InvoiceMissing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "No invoice {}", self.id)
    }
}

#[test]
fn a_struct_is_a_single_contract() {
    let err = ToolError::from(InvoiceMissing {
        id: "inv_3".into(),
        customer: 12,
    });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>No invoice inv_3</message>\n\
         <recovery>List invoices of customer 12 first</recovery>\n\
         <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
         <details>\n  <detail key=\"requestedId\">inv_3</detail>\n</details>\n\
         </tool_error>"
    );
    assert_eq!(
        InvoiceMissing::error_contracts(),
        [ErrorContract::new(
            ErrorCode::NotFound,
            Severity::Error,
            None,
            None
        )]
    );
}

/// A struct wrapping an error without a contract.
#[derive(Debug, ToolErrors)]
#[tool_error(internal)]
struct LedgerDown(std::io::Error);

impl fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ledger down: {}", self.0)
    }
}

#[test]
fn an_internal_struct_hides_its_text() {
    let err = ToolError::from(LedgerDown(std::io::Error::other(SECRET)));
    assert_eq!(err.to_xml(), internal_xml(&err, "error"));
    assert_eq!(
        LedgerDown::error_contracts(),
        [ErrorContract::new(
            ErrorCode::InternalError,
            Severity::Error,
            Some(ErrorCategory::Unknown),
            Some(false)
        )]
    );
}

#[test]
fn error_contracts_list_every_variant_in_declaration_order() {
    assert_eq!(
        <BillingError as ToolErrors>::error_contracts(),
        [
            ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, None),
            ErrorContract::new(ErrorCode::from("ALREADY_PAID"), Severity::Error, None, None),
            ErrorContract::new(ErrorCode::Conflict, Severity::Error, None, None),
            ErrorContract::new(ErrorCode::RateLimited, Severity::Error, None, None),
        ]
    );
    let contracts = Flagged::error_contracts();
    assert_eq!(contracts[0].severity, Severity::Warning);
    assert_eq!(contracts[0].category, ErrorCategory::Validation);
    assert_eq!(contracts[1].severity, Severity::Critical);
    assert_eq!(
        (contracts[2].category, contracts[2].retryable),
        (ErrorCategory::Transient, true)
    );
    assert_eq!(
        (contracts[3].category, contracts[3].retryable),
        (ErrorCategory::Transient, false)
    );
    assert_eq!(
        (contracts[4].category, contracts[4].retryable),
        (ErrorCategory::Unknown, true)
    );
}

#[test]
fn internal_variants_contract_internal_error() {
    let internal = ErrorContract {
        code: ErrorCode::InternalError,
        severity: Severity::Error,
        category: ErrorCategory::Unknown,
        retryable: false,
    };
    assert_eq!(
        StoreError::error_contracts(),
        [
            internal.clone(),
            ErrorContract {
                severity: Severity::Critical,
                ..internal
            },
            ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, None),
        ]
    );
}

#[test]
fn type_level_defaults_reach_the_contract() {
    assert_eq!(
        Defaults::error_contracts(),
        [
            ErrorContract::new(
                ErrorCode::from("TRUNCATED"),
                Severity::Warning,
                Some(ErrorCategory::Validation),
                None
            ),
            ErrorContract::new(
                ErrorCode::from("REVOKED"),
                Severity::Critical,
                Some(ErrorCategory::Auth),
                None
            ),
        ]
    );
}

#[test]
fn the_contract_probe_sees_derived_types() {
    use fusion::__private::Outputs;
    use fusion::__private::autoref::DeclaredContracts as _;
    assert_eq!(
        (&&Outputs::<Result<(), BillingError>>::NEW).__fusion_contracts(),
        BillingError::error_contracts()
    );
    // The autoref form generated code writes, even where plain method syntax would do.
    #[allow(clippy::needless_borrow)]
    let none = (&&Outputs::<Result<(), ToolError>>::NEW).__fusion_contracts();
    assert!(none.is_empty());
}

#[test]
fn question_mark_converts_into_tool_error() {
    fn get_invoice(id: &str) -> Result<String, ToolError> {
        if id.is_empty() {
            Err(BillingError::InvoiceNotFound { id: id.into() })?;
        }
        let stored: Result<String, StoreError> = Err(StoreError::Missing { id: id.into() });
        Ok(stored?)
    }
    assert_eq!(*get_invoice("").unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(
        get_invoice("inv_4").unwrap_err().message(),
        "no invoice inv_4"
    );
}

/// Generic types: the impls carry the bounds the envelope needs.
#[derive(Debug, ToolErrors)]
enum Wrapped<T, D> {
    #[tool_error(NOT_FOUND, recovery = "Look up {id:?} again")]
    Missing {
        #[detail]
        id: T,
    },
    #[tool_error(TIMEOUT)]
    Slow(#[retry_after] D),
    #[tool_error(internal)]
    Broken(T),
}

impl<T: fmt::Display, D> fmt::Display for Wrapped<T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wrapped::Missing { id } => write!(f, "missing {id}"),
            Wrapped::Slow(_) => f.write_str("slow"),
            Wrapped::Broken(value) => write!(f, "broken {value}"),
        }
    }
}

#[test]
fn generic_types_convert() {
    let err = ToolError::from(Wrapped::<u32, Duration>::Missing { id: 7 });
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>missing 7</message>\n\
         <recovery>Look up 7 again</recovery>\n\
         <details>\n  <detail key=\"id\">7</detail>\n</details>\n\
         </tool_error>"
    );
    let err = ToolError::from(Wrapped::<&str, u8>::Slow(9));
    assert_eq!(err.retry_after_secs(), Some(9));
    let err = ToolError::from(Wrapped::<&str, u8>::Broken(SECRET));
    assert!(!err.to_xml().contains("hunter2"));
    assert_eq!(Wrapped::<String, u64>::error_contracts().len(), 3);
}

/// Lifetimes: borrowed fields are formatted into the owned envelope.
#[derive(Debug, ToolErrors)]
enum Borrowed<'a> {
    #[tool_error(NOT_FOUND, recovery = "No invoice {0}")]
    Missing(#[detail(key = "id")] &'a str),
}

impl fmt::Display for Borrowed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("borrowed")
    }
}

#[test]
fn borrowing_types_convert() {
    let id = String::from("inv_5");
    let err = ToolError::from(Borrowed::Missing(&id));
    assert_eq!(err.recovery(), Some("No invoice inv_5"));
    assert_eq!(err.detail_value("id"), Some("inv_5"));
}

/// An enum without variants has no contracts (and converts by being uninhabited).
#[derive(Debug, ToolErrors)]
enum Never {}

impl fmt::Display for Never {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}

#[test]
fn empty_enums_declare_nothing() {
    assert!(Never::error_contracts().is_empty());
}

/// The expansion compiles lint-clean next to user items that shadow the prelude.
mod hygiene {
    #![deny(warnings)]
    #![allow(dead_code)] // the shadowing items exist only to be in scope

    use super::Billing;

    struct Result;
    struct Ok;
    struct Some;
    struct None;
    struct String;
    struct Vec;
    struct Box;
    struct Option;
    struct From;
    struct Into;
    // A constant named like a field: a generated `Missing { id, .. }` pattern would match
    // against it instead of binding the field. (`__fusion_*` names are the expansion's own.)
    #[allow(non_upper_case_globals)]
    const id: u8 = 0;

    #[derive(Debug, fusion::ToolErrors)]
    #[tool_error(tool = Billing, category = "not_found")]
    enum ShadowedError {
        #[tool_error(NOT_FOUND, recovery = "Look for {id} again", actions(list_invoices))]
        Missing {
            #[detail]
            id: u32,
            #[retry_after]
            after: u64,
        },
        #[tool_error(internal)]
        Broken(std::io::Error),
    }

    impl std::fmt::Display for ShadowedError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("shadowed")
        }
    }

    #[test]
    fn expansion_ignores_shadowing_items() {
        let err = fusion::ToolError::from(ShadowedError::Missing { id: 3, after: 1 });
        assert_eq!(
            err.recovery(),
            ::core::option::Option::Some("Look for 3 again")
        );
        let err = fusion::ToolError::from(ShadowedError::Broken(std::io::Error::other("x")));
        assert_eq!(*err.code(), fusion::ErrorCode::InternalError);
    }
}

/// End to end with the real `#[fusion::tool]`: an action's derived error keeps its envelope
/// through a call, and its contracts reach the tool definition.
mod with_the_tool_macro {
    use fusion::{RequestContext, Tool, ToolError, ToolErrors, ToolExt};
    use serde_json::{Map, Value, json};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct PayInvoice {
        id: String,
    }

    /// Pays invoices.
    struct Ledger;

    #[fusion::tool]
    impl Ledger {
        /// Lists unpaid invoices.
        #[action(read_only)]
        fn list_unpaid(&self) -> Vec<String> {
            vec!["inv_1".to_owned()]
        }

        /// Pays one invoice.
        #[action]
        fn pay(&self, args: PayInvoice) -> Result<String, PayError> {
            Err(PayError::AlreadyPaid { id: args.id })
        }
    }

    #[derive(Debug, ToolErrors)]
    #[tool_error(tool = Ledger)]
    enum PayError {
        #[tool_error(code = "ALREADY_PAID", category = "validation", actions(list_unpaid))]
        AlreadyPaid {
            #[detail]
            id: String,
        },
        #[tool_error(internal)]
        Store(std::io::Error),
    }

    impl std::fmt::Display for PayError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                PayError::AlreadyPaid { .. } => f.write_str("The invoice is already paid."),
                PayError::Store(error) => write!(f, "store failed: {error}"),
            }
        }
    }

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[tokio::test]
    async fn a_derived_error_keeps_its_envelope_through_a_call() {
        let response = Ledger
            .call(
                arguments(json!({"action": "pay", "id": "inv_7"})),
                RequestContext::new(),
            )
            .await;
        let error: &ToolError = response.tool_error().expect("a tool error");
        assert_eq!(
            error.to_xml(),
            "<tool_error code=\"ALREADY_PAID\" severity=\"error\">\n\
             <message>The invoice is already paid.</message>\n\
             <available_actions>\n  <action>ledger.list_unpaid</action>\n</available_actions>\n\
             <details>\n  <detail key=\"id\">inv_7</detail>\n</details>\n\
             </tool_error>"
        );
        assert_eq!(error.flags()["errorCategory"], "validation");
    }

    #[test]
    fn the_contracts_reach_the_tool_definition() {
        let definition = Ledger.definition();
        let pay = definition.action("pay").expect("the pay action");
        assert_eq!(pay.errors, PayError::error_contracts());
        assert_eq!(pay.errors[1].code, fusion::ErrorCode::InternalError);
        let store = ToolError::from(PayError::Store(std::io::Error::other("disk full")));
        assert_eq!(*store.code(), fusion::ErrorCode::InternalError);
        assert!(definition.action("list_unpaid").unwrap().errors.is_empty());
    }
}
