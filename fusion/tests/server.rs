//! `fusion::server::Server` driven by a real rmcp client over an in-process duplex stream (no
//! mocks): the handshake, `tools/list`, envelopes on the wire, flat exposition, unknown tools,
//! panics, cancellation, concurrency, malformed requests and output schemas. One test binary;
//! the tools and the client harness are in `server/tools.rs`, the tests grouped by topic beside
//! it.

#[path = "support/within.rs"]
mod within;

#[path = "server/tools.rs"]
mod tools;

#[path = "server/listing.rs"]
mod listing;

#[path = "server/calls.rs"]
mod calls;

#[path = "server/robustness.rs"]
mod robustness;

#[path = "server/wire.rs"]
mod wire;

#[path = "server/output.rs"]
mod output;

#[path = "server/portability.rs"]
mod portability;

#[path = "server/stateless.rs"]
mod stateless;
