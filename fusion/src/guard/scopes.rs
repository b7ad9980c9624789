//! The scope check: an action's required OAuth scopes against the caller's principal, before
//! the rate limits and the concurrency limits; `FORBIDDEN` or `UNAUTHORIZED`, never the token.

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::join_last;
use crate::model::context::RequestContext;

/// The `<details>` key naming the scopes a call lacks, space-separated (as OAuth's `scope`
/// parameter writes a list: RFC 6749 section 3.3).
pub(super) const MISSING_SCOPES: &str = "missingScopes";

/// Checks that the caller of `name` holds every scope in `required` (the action's, then the
/// tool's; a scope listed twice counts once).
///
/// # Errors
/// - no principal at all: `UNAUTHORIZED` (category `auth`, not retryable). The request carries
///   no credentials: the transport authenticates nobody (stdio, in-process), or the route has
///   no auth layer. Signing in from the conversation cannot fix that, so it is not
///   `AUTH_REQUIRED`; over HTTP behind [`BearerAuth`](crate::auth) a request without a token
///   is answered 401 before it reaches a tool, and the MCP client runs the sign-in.
/// - a principal lacking some: `FORBIDDEN` (category `auth`, not retryable), the missing
///   scopes named in the message, the recovery and the `missingScopes` detail. Neither error
///   shows the token, the subject or any other claim.
pub(super) fn check<'a>(
    name: &str,
    required: impl IntoIterator<Item = &'a String>,
    context: &RequestContext,
) -> Result<(), ToolError> {
    let mut required: Vec<&str> = required.into_iter().map(String::as_str).collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut seen = std::collections::HashSet::new();
    required.retain(|scope| seen.insert(*scope));
    let Some(principal) = context.principal() else {
        return Err(ToolError::new(
            ErrorCode::Unauthorized,
            format!(
                "`{name}` needs an authenticated caller with {}; this request carries no \
                 credentials.",
                scopes_phrase(&required)
            ),
        )
        .suggest(format!(
            "Do not retry: `{name}` is available only to signed-in callers. Tell the user it \
             needs a connection authorized with {}.",
            scopes_phrase(&required)
        ))
        .detail("requiredScopes", required.join(" "))
        .retryable(false));
    };
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|scope| !principal.has_scope(scope))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::Forbidden,
        format!(
            "`{name}` needs {}, which the caller's credentials do not grant.",
            scopes_phrase(&missing)
        ),
    )
    .suggest(format!(
        "Do not retry with the same credentials. Ask the user to grant {} (sign in again \
         approving it, or ask an administrator), then call `{name}` again.",
        scopes_phrase(&missing)
    ))
    .detail(MISSING_SCOPES, missing.join(" "))
    .retryable(false))
}

/// "the scope `a`", "the scopes `a` and `b`", "the scopes `a`, `b` and `c`".
fn scopes_phrase(scopes: &[&str]) -> String {
    let quoted = join_last(scopes.iter().map(|s| format!("`{s}`")), " and ");
    match scopes {
        [_] => format!("the scope {quoted}"),
        [_, ..] => format!("the scopes {quoted}"),
        [] => "no scope".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Principal;
    use crate::envelope::code::ErrorCategory;
    use crate::model::exposition::Exposition;

    fn owned(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn no_principal_is_unauthorized_and_not_retryable() {
        let required = owned(&["invoices:write"]);
        let error = check("billing.charge", &required, &RequestContext::new()).unwrap_err();
        assert_eq!(error.code(), &ErrorCode::Unauthorized);
        assert_eq!(error.flags()["errorCategory"], ErrorCategory::Auth.as_str());
        assert_eq!(error.flags()["isRetryable"], false);
        assert!(
            error.to_xml().contains("`invoices:write`"),
            "{}",
            error.to_xml()
        );
    }

    #[test]
    fn a_principal_lacking_scopes_is_forbidden_naming_only_the_missing_ones() {
        let required = owned(&[
            "invoices:read",
            "invoices:write",
            "refunds",
            "invoices:read",
        ]);
        let principal = Principal::new("alice-sub-7")
            .with_scopes(["invoices:read"])
            .with_claims(
                serde_json::json!({"email": "alice@example.com"})
                    .as_object()
                    .unwrap()
                    .clone(),
            );
        let context = RequestContext::new().with_principal(principal);
        let error = check("billing.charge", &required, &context).unwrap_err();
        assert_eq!(error.code(), &ErrorCode::Forbidden);
        assert_eq!(error.flags()["isRetryable"], false);
        assert_eq!(
            error.details(),
            [(
                MISSING_SCOPES.to_owned(),
                "invoices:write refunds".to_owned()
            )]
        );
        let xml = error.to_xml();
        assert!(
            xml.contains("the scopes `invoices:write` and `refunds`"),
            "{xml}"
        );
        assert!(error.recovery().unwrap().contains("`refunds`"));
        assert!(!xml.contains("invoices:read"), "{xml}");
        assert!(!xml.contains("alice"), "{xml}");
    }

    #[test]
    fn no_scope_needed_or_every_scope_held_passes() {
        assert!(check("billing.list", &Vec::new(), &RequestContext::new()).is_ok());
        let required = owned(&["a", "b"]);
        let context =
            RequestContext::new().with_principal(Principal::new("s").with_scopes(["b", "a"]));
        assert!(check("t", &required, &context).is_ok());
    }

    fn billing() -> crate::model::definition::ToolDefinition {
        crate::guard::tests::definition("billing", &["charge", "list"])
    }

    fn declared() -> super::super::ToolGuards {
        use super::super::{GuardSpec, RateLimit};
        super::super::ToolGuards {
            tool: GuardSpec::new().scopes(["billing"]),
            actions: vec![(
                "charge".to_owned(),
                GuardSpec::new()
                    .scopes(["charge", "billing"])
                    .rate_limit(RateLimit::global(1, std::time::Duration::from_secs(3600))),
            )],
        }
    }

    #[test]
    fn declared_scopes_reach_the_definition_and_its_error_contract() {
        let mut definition = billing();
        declared().declare_errors(&mut definition);
        let charge = &definition.actions[0];
        assert_eq!(charge.scopes, ["charge", "billing"]);
        let codes: Vec<(&str, bool)> = charge
            .errors
            .iter()
            .map(|e| (e.code.as_str(), e.retryable))
            .collect();
        assert_eq!(
            codes,
            [
                ("FORBIDDEN", false),
                ("UNAUTHORIZED", false),
                ("RATE_LIMITED", true)
            ]
        );
        assert_eq!(definition.actions[1].scopes, ["billing"]);
    }

    #[tokio::test]
    async fn a_refusal_for_scopes_takes_no_rate_limit_slot() {
        let definition = billing();
        let set = super::super::Guards::new()
            .build([(&definition, declared())])
            .unwrap();
        let gates = set.get("billing").unwrap();
        let call = |scopes: &'static [&'static str]| {
            let context = RequestContext::new()
                .with_principal(Principal::new("alice").with_scopes(scopes.iter().copied()));
            gates.run("charge", Exposition::Grouped, context, |_, _| async {
                crate::model::response::ToolResponse::text("charged")
            })
        };
        for _ in 0..3 {
            let refused = call(&["billing"]).await;
            assert_eq!(refused.tool_error().unwrap().code(), &ErrorCode::Forbidden);
        }
        // The one call an hour is still there.
        assert_eq!(
            call(&["billing", "charge"]).await.payload(),
            Some("charged")
        );
        let limited = call(&["billing", "charge"]).await;
        assert_eq!(
            limited.tool_error().unwrap().code(),
            &ErrorCode::RateLimited
        );
    }
}
