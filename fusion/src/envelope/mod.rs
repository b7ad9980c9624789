//! The envelope: what a model reads when a call fails, and the flags client code branches on.
//! The bottom layer, importing nothing else of the crate.

pub(crate) mod code;
pub(crate) mod error;
pub(crate) mod flags;
pub mod internal;
pub(crate) mod store;
pub(crate) mod suggest;
pub(crate) mod validation_error;
pub(crate) mod xml;
