//! Tools, actions and answers: what a tool declares about itself (definitions, error
//! contracts, schemas), what an action gets (its request context) and what it gives back
//! (outputs and responses).

pub(crate) mod action_ref;
pub(crate) mod arguments;
pub(crate) mod context;
pub(crate) mod declared;
pub(crate) mod definition;
pub(crate) mod exposition;
pub(crate) mod output;
pub(crate) mod response;
pub(crate) mod result_fit;
pub mod schema;
