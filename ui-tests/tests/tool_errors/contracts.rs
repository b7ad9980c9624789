//! The declared contracts: every variant in declaration order, internal variants, type-level
//! defaults, and the probe generated code uses.

use fusion::{ErrorCategory, ErrorCode, ErrorContract, Severity, ToolError, ToolErrors};

use super::defaults::Defaults;
use super::envelope::BillingError;
use super::flags::Flagged;
use super::internal::StoreError;

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
