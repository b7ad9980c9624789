//! The `(field, line)` pairs of a validation error, for tests that compare the lines whole.

use fusion::testing::Tester;
use fusion::{Tool, ValidationError};
use serde_json::Value;

/// The `(field, line)` pairs of the validation error that `tool` answers `name` with, called
/// with `arguments`; panics, showing the answer, when it is not a validation error.
pub(crate) async fn problems(
    tool: impl Tool,
    name: &str,
    arguments: Value,
) -> Vec<(String, String)> {
    let outcome = Tester::new().tool(tool).call(name, arguments).await;
    let validation = outcome
        .response()
        .validation_error()
        .unwrap_or_else(|| panic!("expected a validation error, got {}", outcome.snapshot()));
    lines_of(validation)
}

/// The `(field, line)` pairs of `error`, in its order.
pub(crate) fn lines_of(error: &ValidationError) -> Vec<(String, String)> {
    error
        .problems()
        .iter()
        .map(|p| (p.path().to_owned(), p.line().to_owned()))
        .collect()
}

/// `expected` as owned pairs, to compare with [`problems`].
pub(crate) fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(field, line)| ((*field).to_owned(), (*line).to_owned()))
        .collect()
}
