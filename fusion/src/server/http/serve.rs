//! The connection loop of [`HttpServer::serve_on`]: accept while under the connection cap, set
//! `TCP_NODELAY`, serve each connection with hyper's HTTP/1.1 server under a header read timeout,
//! stop gracefully.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::config::{HttpServer, ServedBy};
use crate::auth::ClientAddr;

impl HttpServer {
    /// Binds `addr` (`"127.0.0.1:8080"`, a `SocketAddr`) and serves until the
    /// [`graceful_shutdown`](HttpServer::graceful_shutdown) signal, or forever. See
    /// [`HttpServer::serve_on`].
    ///
    /// # Errors
    /// The error of binding `addr`.
    pub async fn serve(self, addr: impl tokio::net::ToSocketAddrs) -> io::Result<()> {
        let listener = TcpListener::bind(addr).await?;
        self.serve_on(listener).await
    }

    /// Serves on `listener` (bound by you: to print its port, to pass it from systemd) until
    /// the [`graceful_shutdown`](HttpServer::graceful_shutdown) signal, or forever. Must run
    /// inside a Tokio runtime with I/O and time enabled.
    ///
    /// Each accepted socket gets `TCP_NODELAY` (Streamable HTTP writes a response's head and
    /// its events in separate writes; with Nagle's algorithm the second waits for the client's
    /// delayed ACK, about 40 ms a call) and HTTP/1.1 with the
    /// [header read timeout](HttpServer::header_read_timeout). At most
    /// [`max_connections`](HttpServer::max_connections) are open at once: at the cap the loop
    /// stops accepting until one closes, and the kernel's listen backlog holds new connections.
    /// Each request carries the connection's peer as a [`ClientAddr`] extension (what the rate
    /// limits key callers without a token by). An accept that fails (out of file descriptors)
    /// is logged and retried after a second; the loop never ends on it.
    ///
    /// # Errors
    /// None today: the `Result` is for errors of future listeners.
    pub async fn serve_on(mut self, listener: TcpListener) -> io::Result<()> {
        let header_read_timeout = self.header_read_timeout;
        // One permit per open connection, held by its task. A semaphore around accept, not
        // tower's `ConcurrencyLimit`: that one counts requests in flight, and an idle keep-alive
        // connection holds a file descriptor with none.
        let connections = Arc::new(Semaphore::new(
            self.max_connections.min(Semaphore::MAX_PERMITS),
        ));
        let shutdown = self.shutdown.take();
        let cancel = CancellationToken::new();
        let router = self.build(cancel.clone(), ServedBy::Fusion);
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout);
        let graceful = GracefulShutdown::new();
        let mut shutdown = shutdown.unwrap_or_else(|| Box::pin(std::future::pending()));
        loop {
            let (slot, stream, peer) = tokio::select! {
                accepted = accept_within(&connections, &listener) => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        accept_failed(error).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let service =
                router
                    .clone()
                    .map_request(move |mut request: axum::extract::Request<_>| {
                        request.extensions_mut().insert(ClientAddr(peer));
                        request
                    });
            let service = TowerToHyperService::new(service);
            let connection = http.serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    // Timeouts and clients hanging up land here: routine.
                    tracing::debug!(target: "fusion::server", %error, "HTTP connection ended");
                }
                drop(slot);
            });
        }
        drop(listener);
        // Ends the sessions first: their open event streams would otherwise keep connections
        // (and this call) alive forever.
        cancel.cancel();
        graceful.shutdown().await;
        Ok(())
    }
}

/// The next connection once one of the `connections` slots is free: the slot, the connection
/// (with `TCP_NODELAY` set) and its peer. Until a slot frees, nothing is accepted.
async fn accept_within(
    connections: &Arc<Semaphore>,
    listener: &TcpListener,
) -> io::Result<(OwnedSemaphorePermit, TcpStream, SocketAddr)> {
    let slot = Arc::clone(connections)
        .acquire_owned()
        .await
        .expect("the connection semaphore is never closed");
    let (stream, peer) = listener.accept().await?;
    if let Err(error) = stream.set_nodelay(true) {
        tracing::warn!(target: "fusion::server", %error, "could not set TCP_NODELAY");
    }
    Ok((slot, stream, peer))
}

/// Waits out a failed accept. Per-connection errors (the peer reset before the accept) are
/// retried at once; others (out of file descriptors) after a second, as axum's `serve` does,
/// so the loop does not spin while they last.
async fn accept_failed(error: io::Error) {
    let per_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    );
    if per_connection {
        return;
    }
    tracing::error!(target: "fusion::server", %error, "accepting an HTTP connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_sockets_have_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let slots = Arc::new(Semaphore::new(1));
        let (accepted, _client) = tokio::join!(accept_within(&slots, &listener), client);
        assert!(accepted.unwrap().1.nodelay().unwrap());
    }
}
