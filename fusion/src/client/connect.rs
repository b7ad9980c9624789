//! [`connect`]: an rmcp client connection whose lifecycle follows its protocol version.

use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService, Service,
    serve_client_with_lifecycle,
};
use rmcp::transport::IntoTransport;

/// Connects `service` (a `ClientConfig`, or any rmcp client handler) over `transport` with the
/// lifecycle of the protocol version it names (`get_info().protocol_version`; rmcp's default is
/// the newest, 2026-07-28). Pass the running service's peer to [`Client::new`](super::Client::new)
/// or [`Client::discover`](super::Client::discover), and keep the running service: dropping it
/// closes the connection.
///
/// - From MCP 2026-07-28 on (no `initialize`, SEP-2575): `server/discover` first, then every
///   request carries its `_meta` (`io.modelcontextprotocol/protocolVersion`, `clientInfo`,
///   `clientCapabilities`) and, over Streamable HTTP, the `MCP-Protocol-Version`, `Mcp-Method`
///   and `Mcp-Name` headers. A server that answers `server/discover` with an error other than a
///   2026-07-28 rejection (`-32021`, `-32020`), or not within 10 seconds, predates the revision:
///   the `initialize` handshake follows on the same transport, at 2025-11-25.
/// - Before (2025-11-25 and older): the `initialize` handshake at that version.
///
/// Corrects rmcp's `ServiceExt::serve`, which always opens with the `initialize` handshake,
/// even for a configuration naming 2026-07-28 (its default): a server of that revision only
/// refuses it (over Streamable HTTP, `-32020` for the missing `MCP-Protocol-Version` header;
/// an rmcp server supporting 2026-07-28 alone, `-32022`), and rmcp's own conformance client
/// fails the suite's `tools_call` scenario for it.
///
/// # Errors
/// rmcp's [`ClientInitializeError`]: the transport failed, the server shares no protocol
/// version with the client, or it refused the handshake.
pub async fn connect<S, T, E, A>(
    service: S,
    transport: T,
) -> Result<RunningService<RoleClient, S>, ClientInitializeError>
where
    S: Service<RoleClient>,
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = lifecycle(service.get_info().protocol_version);
    serve_client_with_lifecycle(service, transport, lifecycle).await
}

/// The lifecycle of `version`: the handshake for a version that has one, else discovery with
/// the newest handshake as the fallback for servers older than `version`.
fn lifecycle(version: ProtocolVersion) -> ClientLifecycleMode {
    if version.has_initialize() {
        return ClientLifecycleMode::Initialize;
    }
    ClientLifecycleMode::Auto {
        preferred_versions: vec![version],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_chooses_the_lifecycle() {
        assert_eq!(
            lifecycle(ProtocolVersion::V_2025_11_25),
            ClientLifecycleMode::Initialize
        );
        assert_eq!(
            lifecycle(ProtocolVersion::V_2026_07_28),
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            }
        );
    }
}
