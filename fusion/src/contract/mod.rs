//! Contract governance: the contract models learn, the `fusion.lock`
//! lockfile that records it, the classified diff between two contracts, and the self-healing
//! deltas validation errors carry.
//!
#![doc = include_str!("../docs/lockfile.md")]

mod awareness;
mod diff;
mod digest;
mod lockfile;
mod model;

pub use crate::envelope::validation_error::{DeltaClass, ScopedDelta};
pub use awareness::{Awareness, ContractBaseline, DEFAULT_MAX_DELTAS};
pub use diff::{ContractDiff, Delta, diff};
pub use lockfile::{LOCKFILE_FORMAT, Lockfile, LockfileError};
pub use model::{
    ActionContract, Contract, ErrorEntry, FieldContract, Hints, MAX_FIELD_DEPTH, ToolContract,
};

#[cfg(test)]
mod tests;
