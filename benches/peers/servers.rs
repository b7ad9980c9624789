//! The two Rust peers of `peers/run.sh`: the same `get_invoice` tool with fusion and with rmcp's
//! own macros, each served over Streamable HTTP on `127.0.0.1:PORT/mcp` with its defaults.

use std::sync::Arc;

use fusion::ToolError;
use fusion::server::Server;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// The arguments of `get_invoice` on every peer.
#[derive(Deserialize, JsonSchema)]
struct GetInvoiceArgs {
    /// The invoice's id.
    id: String,
}

/// What `get_invoice` answers with.
#[derive(Serialize, JsonSchema)]
struct Invoice {
    id: String,
    customer: String,
    amount_cents: u64,
    currency: String,
    status: String,
}

/// The one invoice there is, `inv_1`.
fn find(id: &str) -> Option<Invoice> {
    (id == "inv_1").then(|| Invoice {
        id: "inv_1".to_owned(),
        customer: "cus_1".to_owned(),
        amount_cents: 1250,
        currency: "EUR".to_owned(),
        status: "paid".to_owned(),
    })
}

/// Reads one invoice by its id. Only `inv_1` exists. An `async fn`: it never blocks, so it runs
/// on the worker that polls the call, as rmcp's synchronous tool below does.
#[fusion::tool]
#[action(read_only)]
async fn get_invoice(args: GetInvoiceArgs) -> Result<fusion::Json<Invoice>, ToolError> {
    find(&args.id).map(fusion::Json).ok_or_else(|| {
        ToolError::not_found(format!("No invoice with id {}", args.id))
            .suggest("Read invoice inv_1")
            .detail("requestedId", args.id)
    })
}

/// The same tool with rmcp's `#[tool_router]`: same arguments, same work. Written as rmcp's
/// README writes a server: a unit struct, and `#[tool_handler]` with its default router
/// (`Self::tool_router()`, built on each request).
#[derive(Clone)]
struct RmcpInvoices;

#[tool_router]
impl RmcpInvoices {
    /// Reads one invoice by its id.
    #[tool(
        description = "Reads one invoice by its id. Only `inv_1` exists.",
        annotations(read_only_hint = true)
    )]
    fn get_invoice(
        &self,
        Parameters(args): Parameters<GetInvoiceArgs>,
    ) -> Result<rmcp::Json<Invoice>, String> {
        find(&args.id)
            .map(rmcp::Json)
            .ok_or_else(|| format!("No invoice with id {}", args.id))
    }
}

#[tool_handler]
impl ServerHandler for RmcpInvoices {}

/// Serves `kind` (`fusion` or `rmcp`) on `127.0.0.1:port` until killed.
pub(crate) async fn serve(kind: &str, port: u16) -> anyhow::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    match kind {
        // fusion: `serve_http_on`, its defaults (sessions, event streams, TCP_NODELAY).
        "fusion" => {
            Server::new("peer-fusion", "1.0.0")
                .tool(GetInvoice)
                .serve_http_on(listener)
                .await?;
        }
        // rmcp: `StreamableHttpService` with its default configuration (sessions, event streams)
        // in `axum::serve`, `TCP_NODELAY` on each accepted socket.
        "rmcp" => {
            use axum::serve::ListenerExt;
            use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
            use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
            let mcp = StreamableHttpService::new(
                || Ok(RmcpInvoices),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", mcp);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
        other => anyhow::bail!("no server kind {other} (fusion, rmcp)"),
    }
    Ok(())
}
