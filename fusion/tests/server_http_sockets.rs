//! `Server::serve_http_on` / `Server::http()` (feature `http`) over real loopback sockets: a
//! hyper HTTP/1.1 client for requests, raw `TcpStream`s for what a client library will not send
//! (half-sent heads, stalled bodies, oversized bodies). One test binary; the harness is in
//! `server_http/harness.rs`, the tests grouped by topic beside it.
#![cfg(feature = "http")]

#[path = "support/within.rs"]
mod within;

#[path = "support/http1.rs"]
mod http1;

#[path = "server_http/harness.rs"]
mod harness;

#[path = "support/captured.rs"]
mod captured;

#[path = "server_http/serving.rs"]
mod serving;

#[path = "server_http/malformed.rs"]
mod malformed;

#[path = "server_http/limits.rs"]
mod limits;

#[path = "server_http/sessions.rs"]
mod sessions;

#[path = "server_http/load.rs"]
mod load;

#[path = "server_http/parallel.rs"]
mod parallel;
#[path = "server_http/rate_keys.rs"]
mod rate_keys;
