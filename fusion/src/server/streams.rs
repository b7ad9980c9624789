//! Serving over byte streams: a pair of streams (pipes, an in-process duplex) or standard
//! input and output, with newline-delimited JSON-RPC.

use rmcp::service::{RoleServer, RunningService, ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(feature = "stdio")]
use super::ServeError;
use super::{Server, transport};

impl Server {
    /// Serves over a pair of byte streams carrying newline-delimited JSON-RPC (one message per
    /// line; lines up to 16 MiB), for in-process duplex transports and pipes. Returns once the
    /// `initialize` handshake is done; the returned service runs until the client closes the
    /// stream (`.waiting().await`) or is cancelled (`.cancel().await`).
    ///
    /// ```
    /// # async fn demo(server: fusion::server::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    /// let (read, write) = tokio::io::split(server_end);
    /// let serving = tokio::spawn(server.serve_io(read, write));
    /// // ... run an MCP client on `client_end` ...
    /// # drop(client_end);
    /// # let _ = serving.await;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// rmcp's [`ServerInitializeError`] when the handshake fails (the stream closes first,
    /// the first message is not `initialize`, no protocol version can be agreed).
    pub async fn serve_io<R, W>(
        self,
        reader: R,
        writer: W,
    ) -> Result<RunningService<RoleServer, Server>, ServerInitializeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.log_breaking_deltas();
        let mut server = self.for_new_session();
        server.local = true;
        rmcp::serve_server(server, transport::LineTransport::new(reader, writer)).await
    }

    /// Connects `client` to this server in the same process: a real rmcp client (`()` for a
    /// default one, a [`ClientInfo`](rmcp::model::ClientInfo) to name it, or any
    /// [`ClientHandler`](rmcp::ClientHandler)) speaking the same newline-delimited JSON-RPC as
    /// over stdio, through a `tokio::io::duplex` pipe (for tests and demos). The server runs on a spawned Tokio task until the client closes the
    /// connection (`.cancel().await`, or dropping it). Returns once the `initialize`
    /// handshake is done. Must run inside a Tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// /// Says hello.
    /// #[fusion::tool]
    /// #[action(read_only)]
    /// fn hello() -> String {
    ///     "hello".to_owned()
    /// }
    ///
    /// let server = fusion::server::Server::new("greeter", "1.0.0").tool(Hello);
    /// let client = server.serve_in_process(()).await?;
    /// let tools = client.list_all_tools().await?;
    /// assert_eq!(tools[0].name, "hello");
    /// client.cancel().await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// rmcp's [`ClientInitializeError`](rmcp::service::ClientInitializeError) when the
    /// handshake fails (the server's side of the failure is logged with `tracing`).
    #[cfg(feature = "client")]
    pub async fn serve_in_process<C: rmcp::ClientHandler>(
        self,
        client: C,
    ) -> Result<RunningService<rmcp::RoleClient, C>, rmcp::service::ClientInitializeError> {
        // The pipe's buffer in each direction, in bytes; longer messages just take turns.
        const BUFFER: usize = 1 << 16;
        let (server_end, client_end) = tokio::io::duplex(BUFFER);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            match self.serve_io(read, write).await {
                Ok(running) => {
                    let _ = running.waiting().await;
                }
                Err(error) => tracing::warn!(%error, "in-process MCP server: handshake failed"),
            }
        });
        rmcp::ServiceExt::serve(client, client_end).await
    }

    /// Serves over standard input and output, the way MCP clients launch local servers, until
    /// the client closes the connection. Must run inside a Tokio runtime with I/O enabled
    /// (`#[tokio::main]`). Log to standard error: standard output carries the protocol.
    ///
    /// A client that closes the connection before `initialize` (a health probe, a launcher
    /// giving up) is a normal stop: `Ok(QuitReason::Closed)`.
    ///
    /// # Errors
    /// [`ServeError`] when the handshake fails otherwise or the serving task panics.
    #[cfg(feature = "stdio")]
    pub async fn serve_stdio(self) -> Result<rmcp::service::QuitReason, ServeError> {
        let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
        let running = match self.serve_io(stdin, stdout).await {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                return Ok(rmcp::service::QuitReason::Closed);
            }
            Err(err) => return Err(ServeError::Initialize(Box::new(err))),
        };
        running.waiting().await.map_err(ServeError::Task)
    }
}
