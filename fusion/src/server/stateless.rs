//! What a request of the MCP 2026-07-28 lifecycle (SEP-2575: no `initialize`, the client's
//! protocol version, information and capabilities in every request's `_meta`) gets that a
//! request of a 2025 session does not: the methods the revision removed are not found, and log
//! messages reach the client only at the level the request's `_meta` asks for.

use rmcp::model::{ErrorCode as RpcCode, ErrorData, ProtocolVersion};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use serde_json::Value;

use crate::model::context::LogLevel;
use crate::validation::sent_value;

/// The `_meta` key of a 2026-07-28 request's log level (SEP-2575).
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// The requests MCP 2026-07-28 removed, with what replaces each.
const REMOVED: &[(&str, &str)] = &[
    (
        "initialize",
        "send server/discover, and the protocol version and client capabilities in each request's _meta",
    ),
    ("ping", "any request shows the server is up"),
    (
        "logging/setLevel",
        "set io.modelcontextprotocol/logLevel in the _meta of the request whose log messages you want",
    ),
    ("resources/subscribe", "open a subscriptions/listen stream"),
    (
        "resources/unsubscribe",
        "cancel the subscriptions/listen stream",
    ),
];

/// Whether `version` is of the lifecycle without `initialize` (MCP 2026-07-28 or later).
fn is_stateless_version(version: &ProtocolVersion) -> bool {
    !version.has_initialize()
}

/// Whether the request is one of the 2026-07-28 lifecycle: its `_meta` names 2026-07-28 or
/// later, or it is served on a connection that opened on such a request. A request of a 2025
/// session (`initialize`) is not, even if its `_meta` names nothing.
pub(super) fn is_stateless_request(context: &RmcpContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| is_stateless_version(&version))
}

/// JSON-RPC `-32601` for a method MCP 2026-07-28 removed, asked in a request of that revision
/// (Streamable HTTP answers it with HTTP 404), saying what replaces it; `None` for any other
/// method or a request of a 2025 session.
///
/// Corrects rmcp 3.11, which serves `logging/setLevel` whatever the request's revision, and
/// parses a removed request whose params lack its 2025 fields (an `initialize` carrying only
/// `_meta`) as a custom request.
pub(super) fn removed(method: &str, context: &RmcpContext<RoleServer>) -> Option<ErrorData> {
    let instead = instead_of(method)?;
    is_stateless_request(context).then(|| removed_error(method, instead))
}

/// The error of [`removed`]: `Method not found: 'initialize' was removed in MCP 2026-07-28; …`.
pub(super) fn removed_error(method: &str, instead: &str) -> ErrorData {
    let name = sent_value(&Value::String(method.to_owned()));
    ErrorData::new(
        RpcCode::METHOD_NOT_FOUND,
        format!("Method not found: {name} was removed in MCP 2026-07-28; {instead}."),
        None,
    )
}

/// What replaces `method`, which MCP 2026-07-28 removed, for an answer refusing it.
pub(super) fn instead_of(method: &str) -> Option<&'static str> {
    let (_, instead) = REMOVED.iter().find(|(name, _)| *name == method)?;
    Some(instead)
}

/// The least severe level of the log messages the client gets for this request (`stateless`:
/// whether it is one of the 2026-07-28 lifecycle, [`is_stateless_request`]); `None` sends
/// none. A 2026-07-28 request gets messages only when its `_meta` sets
/// `io.modelcontextprotocol/logLevel`, at that level and above (SEP-2575); a value that is not
/// an MCP level (`"loud"`, `3`) counts as not set. A request of a 2025 session gets those at
/// `session`, the level its client set with `logging/setLevel`, and above; every one before it
/// sets one.
pub(super) fn log_threshold(
    context: &RmcpContext<RoleServer>,
    stateless: bool,
    session: Option<LogLevel>,
) -> Option<LogLevel> {
    if !stateless {
        return Some(session.unwrap_or(LogLevel::Debug));
    }
    let level = context.meta.get(LOG_LEVEL_KEY).and_then(Value::as_str);
    level.and_then(parse_level)
}

/// The level of a `logging/setLevel` request (rmcp's level spells itself as MCP does).
#[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
pub(super) fn set_level(request: &rmcp::model::SetLevelRequestParams) -> LogLevel {
    let name = serde_json::to_value(request.level).unwrap_or_default();
    name.as_str()
        .and_then(parse_level)
        .expect("an MCP log level")
}

/// The level MCP spells `name`.
fn parse_level(name: &str) -> Option<LogLevel> {
    use LogLevel::*;
    let levels = [
        Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency,
    ];
    levels.into_iter().find(|level| level.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mcp_level_parses_and_nothing_else() {
        for level in [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Notice,
            LogLevel::Warning,
            LogLevel::Error,
            LogLevel::Critical,
            LogLevel::Alert,
            LogLevel::Emergency,
        ] {
            assert_eq!(parse_level(level.as_str()), Some(level));
        }
        assert_eq!(parse_level("Info"), None);
        assert_eq!(parse_level("loud"), None);
    }

    #[test]
    fn a_removed_method_says_what_replaces_it() {
        let error = removed_error("logging/setLevel", REMOVED[2].1);
        assert_eq!(error.code, RpcCode::METHOD_NOT_FOUND);
        assert_eq!(
            error.message,
            "Method not found: 'logging/setLevel' was removed in MCP 2026-07-28; set \
             io.modelcontextprotocol/logLevel in the _meta of the request whose log messages \
             you want."
        );
        assert!(is_stateless_version(&ProtocolVersion::V_2026_07_28));
        assert!(!is_stateless_version(&ProtocolVersion::V_2025_11_25));
    }
}
