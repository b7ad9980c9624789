//! `fusion::testing`: the tester routes names like a server, and every assertion passes when
//! right and panics, saying what differed, when wrong.
//!
//! One test binary: the shared tools and helpers are in `testing/support.rs`, the tests grouped
//! by behaviour beside it.

#[path = "testing/support.rs"]
mod support;

#[path = "testing/names.rs"]
mod names;

#[path = "testing/cancellation.rs"]
mod cancellation;

#[path = "testing/assertions_pass.rs"]
mod assertions_pass;

#[path = "testing/assertions_fail.rs"]
mod assertions_fail;

#[path = "testing/snapshots.rs"]
mod snapshots;

#[path = "testing/registration.rs"]
mod registration;
