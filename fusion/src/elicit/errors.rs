//! What a question to the user can end in, when it does not end in an answer: the error types
//! of [`RequestContext::confirm`](crate::RequestContext::confirm) and
//! [`RequestContext::elicit`](crate::RequestContext::elicit), their envelopes and contracts.

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::envelope::error::ToolError;
use crate::model::definition::{ErrorContract, ToolErrors};

use super::{
    CONFIRMATION_FAILED, CONFIRMATION_FIELD, CONFIRMATION_REQUIRED, CONFIRMATION_UNAVAILABLE,
    INPUT_REQUIRED, USER_DECLINED,
};

/// Why [`RequestContext::confirm`](crate::RequestContext::confirm) did not confirm. Converts into its envelope (`?` in an
/// action returning `ToolError`), and is a [`ToolErrors`] type with a contract, so an error
/// enum of yours wraps it in a `#[tool_error(transparent)]` variant and an action lists it in
/// `errors(..)`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unconfirmed {
    /// The client cannot ask, and the action does not take the model's word
    /// ([`RequestContext::confirm`](crate::RequestContext::confirm)):
    /// `CONFIRMATION_UNAVAILABLE` (auth, not retryable), telling the model to stop and tell
    /// the user.
    #[error("This needs the user's confirmation, which this client cannot ask for: {question}")]
    Unavailable {
        /// The question the user could not be asked.
        question: String,
    },
    /// The client cannot ask and the call did not say `confirmed: true`, from an action that
    /// takes the model's word
    /// ([`RequestContext::confirm_or_trust_model`](crate::RequestContext::confirm_or_trust_model)):
    /// `CONFIRMATION_REQUIRED` (validation, not retryable), telling the model to ask.
    #[error("This needs the user's confirmation: {question}")]
    Required {
        /// The question the user must answer.
        question: String,
    },
    /// The user declined or dismissed the question: `USER_DECLINED` (validation, not
    /// retryable: stop, do not ask again).
    #[error("The user declined: {question}")]
    Declined {
        /// The question the user was asked.
        question: String,
    },
    /// The client can ask but the request failed (an error from the client, a lost
    /// connection): `CONFIRMATION_FAILED` (transient, not retryable). The user was not asked.
    #[error("The user could not be asked: {question}")]
    Failed {
        /// The question that could not be asked.
        question: String,
    },
}

/// Why [`RequestContext::elicit`](crate::RequestContext::elicit) has no answer. Converts into its envelope, like
/// [`Unconfirmed`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    /// The client cannot ask: `INPUT_REQUIRED` (validation, not retryable), naming the fields
    /// the model should ask the user for.
    #[error("This needs input from the user: {message}")]
    Required {
        /// What the user was to be told.
        message: String,
        /// The form's fields, each with its description.
        fields: Vec<String>,
    },
    /// The user declined or dismissed the form: `USER_DECLINED`.
    #[error("The user declined: {question}")]
    Declined {
        /// What the user was told.
        question: String,
    },
    /// The answer does not fit the requested type: `VALIDATION_ERROR`.
    #[error("The user's answer does not fit the form: {error}")]
    Invalid {
        /// What the user was told.
        message: String,
        /// Why the answer does not fit.
        error: String,
    },
    /// The requested type is no flat form (a bug in the action): `INTERNAL_ERROR`.
    #[error(
        "RequestContext::elicit::<{type_name}>: an elicitation form is a flat object of \
         strings, numbers, integers, booleans and lists of unit-enum choices"
    )]
    NotAForm {
        /// The requested type.
        type_name: &'static str,
    },
}

/// Each variant of [`Unconfirmed`], in declaration order: its name, code and category.
const UNCONFIRMED: [(&str, &str, ErrorCategory); 4] = [
    ("Unavailable", CONFIRMATION_UNAVAILABLE, ErrorCategory::Auth),
    ("Required", CONFIRMATION_REQUIRED, ErrorCategory::Validation),
    ("Declined", USER_DECLINED, ErrorCategory::Validation),
    ("Failed", CONFIRMATION_FAILED, ErrorCategory::Transient),
];

impl Unconfirmed {
    fn index(&self) -> usize {
        match self {
            Unconfirmed::Unavailable { .. } => 0,
            Unconfirmed::Required { .. } => 1,
            Unconfirmed::Declined { .. } => 2,
            Unconfirmed::Failed { .. } => 3,
        }
    }
}

pub(super) fn contract(code: &'static str, category: ErrorCategory) -> ErrorContract {
    ErrorContract::new(
        ErrorCode::custom(code),
        Severity::Error,
        Some(category),
        Some(false),
    )
}

impl ToolErrors for Unconfirmed {
    fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
        (UNCONFIRMED.iter())
            .map(|&(variant, code, category)| (variant, contract(code, category)))
            .collect()
    }

    fn variant(&self) -> Option<&'static str> {
        Some(UNCONFIRMED[self.index()].0)
    }
}

impl ToolErrors for Unanswered {
    fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
        let internal = ErrorContract::new(
            ErrorCode::InternalError,
            Severity::Error,
            Some(ErrorCategory::Unknown),
            Some(false),
        );
        let invalid = ErrorContract::new(ErrorCode::ValidationError, Severity::Error, None, None);
        vec![
            (
                "Required",
                contract(INPUT_REQUIRED, ErrorCategory::Validation),
            ),
            (
                "Declined",
                contract(USER_DECLINED, ErrorCategory::Validation),
            ),
            ("Invalid", invalid),
            ("NotAForm", internal),
        ]
    }

    fn variant(&self) -> Option<&'static str> {
        Some(match self {
            Unanswered::Required { .. } => "Required",
            Unanswered::Declined { .. } => "Declined",
            Unanswered::Invalid { .. } => "Invalid",
            Unanswered::NotAForm { .. } => "NotAForm",
        })
    }
}

/// The envelope of `code`, category `category`, not retryable, with `message` and `recovery`.
pub(super) fn refusal(
    code: &'static str,
    category: ErrorCategory,
    message: String,
    recovery: String,
) -> ToolError {
    ToolError::new(code, message)
        .category(category)
        .retryable(false)
        .suggest(recovery)
}

impl From<Unconfirmed> for ToolError {
    fn from(unconfirmed: Unconfirmed) -> ToolError {
        let (_, code, category) = UNCONFIRMED[unconfirmed.index()];
        let recovery = match &unconfirmed {
            Unconfirmed::Unavailable { .. } => {
                "Do not call again: the user's client cannot show them this question. Tell the \
                 user the action was not done and needs a client that can ask them to confirm \
                 (MCP elicitation)."
                    .to_owned()
            }
            Unconfirmed::Required { question } => format!(
                "Ask the user: {question} If they agree, call again with the same arguments and \
                 \"{CONFIRMATION_FIELD}\": true. If they do not, do not call again."
            ),
            Unconfirmed::Declined { .. } => DECLINED.to_owned(),
            Unconfirmed::Failed { .. } => "The user's client could not show the question. Tell \
                                           the user the action was not done; call again only \
                                           if they ask."
                .to_owned(),
        };
        refusal(code, category, unconfirmed.to_string(), recovery)
    }
}

impl From<Unanswered> for ToolError {
    fn from(unanswered: Unanswered) -> ToolError {
        let message = unanswered.to_string();
        match unanswered {
            Unanswered::Required { fields, .. } => refusal(
                INPUT_REQUIRED,
                ErrorCategory::Validation,
                message,
                format!(
                    "Ask the user for {}, then call again with the same arguments and these.",
                    fields.join(", ")
                ),
            ),
            Unanswered::Declined { .. } => refusal(
                USER_DECLINED,
                ErrorCategory::Validation,
                message,
                DECLINED.to_owned(),
            ),
            Unanswered::Invalid { .. } => ToolError::new(ErrorCode::ValidationError, message)
                .suggest("Call again; the user will be asked again."),
            not_a_form @ Unanswered::NotAForm { .. } => ToolError::from_internal(&not_a_form),
        }
    }
}

/// The recovery of `USER_DECLINED`.
const DECLINED: &str = "Tell the user the action was not done. Do not call again unless they ask.";
