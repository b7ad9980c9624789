//! A newline-delimited JSON-RPC transport (stdio, in-process duplex) that answers every request
//! it cannot parse, where rmcp's would stay silent or answer without the request id; and why
//! serving over stdio stopped ([`ServeError`]).

use std::io;
use std::sync::Arc;

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::malformed::{self, Answer};

/// The longest line (one JSON-RPC message) read, in bytes: rmcp's own default (16 MiB), so a
/// payload acceptable over HTTP is acceptable here too. Longer lines are answered and dropped.
pub(super) const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized line is kept to find its request id.
const OVERSIZED_PREFIX: usize = 64 * 1024;

/// Newline-delimited JSON-RPC over any byte stream, for [`Server::serve_io`](super::Server::serve_io).
///
/// Unlike rmcp's `AsyncRwTransport`, a line the parser rejects is answered (JSON-RPC 2.0,
/// section 5) with the request's own id whenever a shallow scan finds it, so the client's
/// pending request completes:
///
/// | line | answer |
/// |---|---|
/// | not JSON | `-32700` parse error |
/// | JSON nested deeper than serde's 128 levels | `-32600` invalid request; for a `tools/call`, a `VALIDATION_ERROR` envelope |
/// | numbers beyond `f64`, unpaired surrogate escapes (JSON serde refuses) | `-32700` parse error; for a `tools/call`, a `VALIDATION_ERROR` envelope |
/// | longer than the limit ([`DEFAULT_MAX_LINE_BYTES`]) | `-32600` invalid request, the line dropped |
/// | a standard method with params that do not fit (`tools/call` without `name`, `arguments` not an object) | `-32602` invalid params, saying what is wrong |
/// | a notification or a response | nothing (JSON-RPC never answers those) |
pub(super) struct LineTransport<R, W> {
    reader: BufReader<R>,
    /// The line read so far; survives a cancelled `receive` (rmcp polls it inside `select!`).
    line: Vec<u8>,
    /// Bytes of the current line beyond the limit, once it is over.
    overflow: usize,
    max_line_bytes: usize,
    writer: Arc<Mutex<W>>,
    /// Answers to malformed lines still being written; awaited at end of input so a client
    /// that closes its side right after a bad line still gets every answer.
    pending: Vec<tokio::task::JoinHandle<()>>,
}

enum Line {
    Complete,
    Oversized,
    Eof,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(super) fn new(reader: R, writer: W) -> LineTransport<R, W> {
        LineTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            overflow: 0,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            writer: Arc::new(Mutex::new(writer)),
            pending: Vec::new(),
        }
    }

    /// Reads up to the next `\n` into `self.line` without holding more than the limit.
    /// Cancellation-safe: bytes are only consumed after they are stored.
    async fn read_line(&mut self) -> io::Result<Line> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                return Ok(Line::Eof);
            }
            let (take, complete) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if self.overflow > 0 || self.line.len() + take > self.max_line_bytes {
                let room = OVERSIZED_PREFIX.saturating_sub(self.line.len());
                let keep = room.min(take);
                self.line.extend_from_slice(&buf[..keep]);
                self.overflow += take - keep;
            } else {
                self.line.extend_from_slice(&buf[..take]);
            }
            self.reader.consume(take);
            if complete {
                return Ok(if self.overflow > 0 {
                    Line::Oversized
                } else {
                    Line::Complete
                });
            }
        }
    }

    /// Answers a malformed line. The write runs on a task of its own: `receive` is polled
    /// inside rmcp's `select!` and may be dropped at any await, which must never leave half a
    /// message on the stream.
    fn answer(&mut self, answer: Answer) {
        tracing::debug!(target: "fusion::server", id = ?answer.id(), message = %answer.message(), "malformed request");
        let writer = self.writer.clone();
        let message = answer.to_json();
        self.pending.retain(|answer| !answer.is_finished());
        self.pending.push(tokio::spawn(async move {
            if let Err(err) = write_line(&writer, &message).await {
                tracing::warn!(target: "fusion::server", %err, "could not answer a malformed request");
            }
        }));
    }

    /// Waits for the answers to malformed lines still being written. Dropping this future
    /// part-way leaves the rest running (a dropped `JoinHandle` detaches, never aborts).
    async fn flush_answers(&mut self) {
        for answer in std::mem::take(&mut self.pending) {
            let _ = answer.await;
        }
    }
}

/// Writes `message` as one line: a message rmcp sends, or the answer to a malformed line
/// ([`Answer::to_json`]).
async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    message: &impl serde::Serialize,
) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move { write_line(&writer, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let read = self.read_line().await;
            let line = std::mem::take(&mut self.line);
            let overflow = std::mem::take(&mut self.overflow);
            match read {
                Ok(Line::Complete) => {}
                Ok(Line::Oversized) => {
                    let (id, error) = malformed::answer_oversized(
                        &line,
                        line.len() + overflow,
                        self.max_line_bytes,
                    );
                    self.answer(Answer::Error(id, error));
                    continue;
                }
                // A last line without `\n` is an incomplete message: nothing to deliver.
                Ok(Line::Eof) => {
                    self.flush_answers().await;
                    return None;
                }
                Err(err) => {
                    tracing::error!(target: "fusion::server", %err, "reading the transport failed");
                    return None;
                }
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
                Ok(message) => return Some(message),
                Err(err) => {
                    if let Some(answer) = malformed::answer_unparsable(text, &err, "line") {
                        self.answer(answer);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.writer.lock().await.shutdown().await
    }
}

/// Why [`Server::serve_stdio`](super::Server::serve_stdio) stopped with an error.
#[cfg(feature = "stdio")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The `initialize` handshake failed (boxed: rmcp's error is large).
    #[error("MCP initialization failed: {0}")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The task serving the connection panicked or was aborted.
    #[error("the MCP serving task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}
