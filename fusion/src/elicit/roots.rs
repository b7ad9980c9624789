//! Asking the client for its roots (MCP specification 2025-06-18, client features, "Roots":
//! `roots/list`): the directories or files it lets the server work in, and what that can end in
//! when it does not end in a list. The 2026-07-28 revision deprecates roots (SEP-2577); its
//! clients are asked through multi round-trip requests (SEP-2322).
#![allow(
    deprecated,
    reason = "roots are deprecated from the 2026-07-28 revision on; clients still offer them"
)]

use rmcp::model::{ListRootsResult, Root};

use crate::envelope::code::ErrorCategory;
use crate::envelope::error::ToolError;
use crate::model::context::{InputKind, RequestContext};
use crate::model::definition::ToolErrors;

use super::client_request::client_request_error;

/// The code of a call that needs the client's roots from a client that cannot be asked for
/// them (it declared no `roots` capability): the action is not done from this client.
pub const ROOTS_UNAVAILABLE: &str = "ROOTS_UNAVAILABLE";
/// The code of a call whose request for the client's roots failed: the client answered with an
/// error, or the connection was lost.
pub const ROOTS_FAILED: &str = "ROOTS_FAILED";

impl RequestContext {
    /// Asks the client for its roots (MCP `roots/list`): the `file://` URIs (with optional
    /// names) of the places it lets the server work in, in the client's order.
    ///
    /// A client of the 2025 revisions that declared `roots` is sent `roots/list` and the call
    /// waits for the answer. A client of the 2026-07-28 revision is asked through the call's
    /// answer (`input_required`, a `roots/list` input request) and sends the call again with
    /// its roots; one that did not declare `roots` in the request's client capabilities gets
    /// JSON-RPC `-32021` (missing required client capability), the call refused before any
    /// result.
    ///
    /// ```
    /// use fusion::RequestContext;
    /// use fusion::elicit::Unrooted;
    ///
    /// async fn workspace(ctx: &RequestContext) -> Result<String, Unrooted> {
    ///     let roots = ctx.list_roots().await?;
    ///     Ok(roots.first().map(|root| root.uri.clone()).unwrap_or_default())
    /// }
    /// ```
    ///
    /// # Errors
    /// `ROOTS_UNAVAILABLE` (not retryable) when a 2025 client cannot be asked; `ROOTS_FAILED`
    /// (transient, not retryable) when the client answers the request with an error or the
    /// connection is lost. Both convert into their envelope, like [`Unsampled`](super::Unsampled).
    pub async fn list_roots(&self) -> Result<Vec<Root>, Unrooted> {
        self.list_roots_as(None).await
    }

    /// [`RequestContext::list_roots`], the input request sent under `key` on 2026-07-28.
    pub(super) async fn list_roots_as(&self, key: Option<&str>) -> Result<Vec<Root>, Unrooted> {
        let params = Ok(serde_json::Value::Object(Default::default()));
        let read = |listed: ListRootsResult| listed.roots;
        let direct = self.roots_lister().map(|lister| move || lister());
        let failed = "the roots request failed";
        let asked = self
            .ask_client(key, InputKind::Roots, params, read, direct, failed)
            .await;
        Unrooted::of(asked)
    }
}

/// Why [`RequestContext::list_roots`] has no roots. Converts into its envelope (`?` in an action
/// returning `ToolError`), and is a [`ToolErrors`] type with a contract, so an error enum of
/// yours wraps it in a `#[tool_error(transparent)]` variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unrooted {
    /// The client cannot be asked for its roots: `ROOTS_UNAVAILABLE` (unknown, not retryable),
    /// telling the model to stop and tell the user.
    #[error("This needs the client's roots, which this client cannot be asked for")]
    Unavailable,
    /// The client answered the request with an error, or the connection was lost:
    /// `ROOTS_FAILED` (transient, not retryable).
    #[error("The client's roots could not be listed: {reason}")]
    Failed {
        /// What the client answered, or what failed.
        reason: String,
    },
}

client_request_error!(
    Unrooted,
    ROOTS_UNAVAILABLE => "Do not call again from this client: it cannot tell the server its \
        roots (MCP roots), which this action needs. Tell the user the action was not done.",
    ROOTS_FAILED => "The client did not list its roots. Tell the user the action was not done; \
        call again only if they ask.",
);

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::context::RootsLister;

    fn listing(answer: Result<&'static str, &'static str>) -> RequestContext {
        let lister: RootsLister = Arc::new(move || {
            Box::pin(async move {
                let uri = answer.map_err(str::to_owned)?;
                Ok(vec![Root::new(uri)])
            })
        });
        RequestContext::new().with_roots_lister(lister)
    }

    #[tokio::test]
    async fn a_client_with_roots_lists_them_and_one_without_gets_the_envelope() {
        let roots = listing(Ok("file:///work")).list_roots().await.unwrap();
        assert_eq!(roots[0].uri, "file:///work");
        for (context, variant, code) in [
            (RequestContext::new(), "Unavailable", ROOTS_UNAVAILABLE),
            (listing(Err("no roots here")), "Failed", ROOTS_FAILED),
        ] {
            let unrooted = context.list_roots().await.unwrap_err();
            assert_eq!(unrooted.variant(), Some(variant));
            let error = ToolError::from(unrooted);
            assert_eq!(error.code().as_str(), code, "{variant}");
            assert!(!error.is_retryable(), "{variant}");
            let contracts = Unrooted::variant_contracts();
            let (_, contract) = contracts.iter().find(|(v, _)| *v == variant).unwrap();
            assert_eq!(contract.code.as_str(), code, "{variant}");
        }
    }
}
