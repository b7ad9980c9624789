//! Who is calling: the authenticated [`Principal`] an auth layer puts on an HTTP request, the
//! client's network address ([`ClientAddr`]), and (feature `auth`) a bearer-token layer for
//! the resource-server role of the MCP authorization specification with its protected
//! resource metadata document.
//!
//! fusion reads identity from the transport, never from the request body: a
//! [`Principal`] (or a [`ClientAddr`]) found in the HTTP request's extensions reaches every
//! action as [`RequestContext::principal`](crate::RequestContext::principal) (and
//! [`RequestContext::client_addr`](crate::RequestContext::client_addr)), feeds the scope
//! checks of the guards and keys the rate limits. Any tower layer that inserts a `Principal`
//! extension works; `BearerAuth` (feature `auth`) is one.
//!
//! # Reference
#![doc = include_str!("../docs/auth.md")]

#[cfg(feature = "auth")]
mod bearer;
#[cfg(feature = "auth")]
mod cache;
#[cfg(feature = "auth")]
mod challenge;
#[cfg(feature = "auth")]
mod fetch;
#[cfg(feature = "auth")]
mod introspection;
#[cfg(feature = "auth")]
mod jwks;
#[cfg(feature = "auth")]
mod metadata;
mod principal;

#[cfg(feature = "auth")]
pub use bearer::{BearerAuth, BearerAuthService};
#[cfg(feature = "auth")]
pub use challenge::InvalidToken;
#[cfg(feature = "auth")]
pub use fetch::FetchError;
#[cfg(feature = "auth")]
pub use introspection::{ClientAuth, Introspection};
#[cfg(feature = "auth")]
pub use jwks::{Jwks, JwksBuilder};
#[cfg(feature = "auth")]
pub use metadata::{MetadataService, ProtectedResourceMetadata};
pub use principal::{ClientAddr, Principal};
#[cfg(feature = "http")]
pub(crate) use principal::{is_scope_token, quoted};

/// The JWT library the bearer layer validates tokens with (keys, algorithms, and `encode` to
/// mint tokens in tests and development), re-exported so its version matches fusion's.
#[cfg(feature = "auth")]
pub use jsonwebtoken;
