//! What asking the client's model (sampling) and asking for the client's roots share: the
//! request sent either way (an input request on 2026-07-28, a request of its own to a 2025
//! client), and the contract and envelope of their error types.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::model::context::{BoxFuture, InputKind, RequestContext};

impl RequestContext {
    /// The client's answer to a request of kind `kind`. A client of the 2026-07-28 revision
    /// gets the input request `params` under `key`, and its answer is read as `A`, then taken
    /// by `read`; a client of the 2025 revisions is sent `direct` (`None`: it cannot be), whose
    /// failure is logged as `failed`. `None` when the client can be asked neither way;
    /// `Some(Err(reason))` when the request failed or the answer does not read.
    pub(super) async fn ask_client<A: DeserializeOwned, T>(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Result<Value, serde_json::Error>,
        read: impl FnOnce(A) -> T,
        direct: Option<impl FnOnce() -> BoxFuture<'static, Result<T, String>>>,
        failed: &str,
    ) -> Option<Result<T, String>> {
        if let Some(inputs) = self.inputs() {
            let params = match params {
                Ok(params) => params,
                Err(error) => return Some(Err(error.to_string())),
            };
            let answer = inputs(key.map(str::to_owned), kind, params).await?;
            return Some(
                serde_json::from_value(answer)
                    .map(read)
                    .map_err(|e| e.to_string()),
            );
        }
        Some(direct?().await.inspect_err(|reason| {
            tracing::warn!(target: "fusion::elicit", reason = reason.as_str(), "{failed}");
        }))
    }
}

/// The contract ([`ToolErrors`](crate::ToolErrors)) and the envelope of `$ty`, the error type
/// of a request to the client: `Unavailable` (the client cannot be asked; code `$unavailable`,
/// category unknown) or `Failed { reason }` (code `$failed`, transient), neither retryable,
/// each with its recovery. Also `$ty::of`, the error of how [`RequestContext::ask_client`]
/// ended.
macro_rules! client_request_error {
    ($ty:ident, $unavailable:expr => $if_unavailable:expr, $failed:expr => $if_failed:expr $(,)?) => {
        impl $ty {
            /// Each variant, in declaration order: its name, code, category and recovery.
            const VARIANTS: [(&'static str, &'static str, ErrorCategory, &'static str); 2] = [
                (
                    "Unavailable",
                    $unavailable,
                    ErrorCategory::Unknown,
                    $if_unavailable,
                ),
                ("Failed", $failed, ErrorCategory::Transient, $if_failed),
            ];

            fn index(&self) -> usize {
                match self {
                    $ty::Unavailable => 0,
                    $ty::Failed { .. } => 1,
                }
            }

            /// The answer, or the error of a request that had none.
            fn of<T>(asked: Option<Result<T, String>>) -> Result<T, $ty> {
                (asked.ok_or($ty::Unavailable)?).map_err(|reason| $ty::Failed { reason })
            }
        }

        impl ToolErrors for $ty {
            fn variant_contracts() -> Vec<(&'static str, $crate::model::definition::ErrorContract)>
            {
                ($ty::VARIANTS.iter())
                    .map(|&(variant, code, category, _)| {
                        (variant, $crate::elicit::errors::contract(code, category))
                    })
                    .collect()
            }

            fn variant(&self) -> Option<&'static str> {
                Some($ty::VARIANTS[self.index()].0)
            }
        }

        impl From<$ty> for ToolError {
            fn from(error: $ty) -> ToolError {
                let (_, code, category, recovery) = $ty::VARIANTS[error.index()];
                let message = error.to_string();
                $crate::elicit::errors::refusal(code, category, message, recovery.to_owned())
            }
        }
    };
}
pub(super) use client_request_error;
