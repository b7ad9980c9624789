//! The lockfile check for `cargo test`: [`assert_lockfile`] fails on contract drift with the
//! classified report, and rewrites the file when `FUSION_LOCK=overwrite` is set.

use std::path::Path;

use crate::contract::{Contract, ContractBaseline, Lockfile, LockfileError, diff};

use super::Tester;

/// The environment variable that makes [`assert_lockfile`] rewrite the lockfile instead of
/// failing: `FUSION_LOCK=overwrite cargo test` (like trybuild's `TRYBUILD=overwrite`).
pub const LOCK_ENV: &str = "FUSION_LOCK";

/// What [`check_lockfile`] did when it passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockStatus {
    /// The lockfile records exactly the contract.
    UpToDate,
    /// The lockfile was missing, out of date, tampered with or malformed, and was rewritten.
    Written,
}

/// Why [`check_lockfile`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockCheckError {
    /// No lockfile at the path.
    #[error("no lockfile at {path}; run the tests with {LOCK_ENV}=overwrite to create it")]
    Missing {
        /// The path checked.
        path: String,
    },
    /// The lockfile could not be read or verified.
    #[error("{0}; {hint}", hint = hint())]
    Invalid(LockfileError),
    /// The contract differs from the lockfile.
    #[error("the contract differs from {path}:\n{report}{hint}", hint = hint())]
    Drift {
        /// The path checked.
        path: String,
        /// The report: one line per change, highest class first.
        report: String,
    },
    /// Writing the lockfile failed (overwrite mode).
    #[error("cannot write lockfile {path}: {message}")]
    Write {
        /// The path written.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

/// What a failed check tells to do when the change is intended.
fn hint() -> String {
    format!(
        "if the change is intended, rerun with {LOCK_ENV}=overwrite and review the lockfile diff"
    )
}

/// Checks the lockfile at `path` against `contract`; with `overwrite`, rewrites it (creating
/// directories as needed) instead of failing. The function behind [`assert_lockfile`], for
/// callers that decide themselves (a `--lock-check` command line).
///
/// # Errors
/// Without `overwrite`: [`LockCheckError::Missing`], [`LockCheckError::Invalid`] (malformed,
/// unsupported format, tampered), [`LockCheckError::Drift`] with the report. With it:
/// [`LockCheckError::Write`] when the file cannot be written.
pub fn check_lockfile(
    path: impl AsRef<Path>,
    contract: &Contract,
    overwrite: bool,
) -> Result<LockStatus, LockCheckError> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let checked = match Lockfile::load(path) {
        Ok(lockfile) if lockfile.contract() == contract => return Ok(LockStatus::UpToDate),
        Ok(lockfile) => {
            let mut report = diff(lockfile.contract(), contract).report();
            if report.is_empty() {
                // Every field of the contract is compared by the diff; kept for safety.
                report = "the contracts differ in no classified way\n".to_owned();
            }
            Err(LockCheckError::Drift {
                path: shown.clone(),
                report,
            })
        }
        Err(LockfileError::Io { .. }) if !path.exists() => Err(LockCheckError::Missing {
            path: shown.clone(),
        }),
        Err(err) => Err(LockCheckError::Invalid(err)),
    };
    if !overwrite {
        return checked;
    }
    let write = || -> std::io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, contract.to_lockfile())
    };
    write().map_err(|err| LockCheckError::Write {
        path: shown,
        message: err.to_string(),
    })?;
    Ok(LockStatus::Written)
}

/// Asserts that the lockfile at `path` records `contract`, for a user's `cargo test`.
///
/// Fails (panics) when the file is missing, malformed or tampered with, or when the contract
/// drifted; the message is the classified report, one line per change with before and after,
/// highest class first. With the environment variable [`LOCK_ENV`] set to `overwrite`
/// (`FUSION_LOCK=overwrite cargo test`), the file is rewritten instead and the test passes;
/// review the lockfile diff before committing it.
///
/// ```no_run
/// # pub struct Echo;
/// # /// Echoes.
/// # #[fusion::tool]
/// # impl Echo {
/// #     /// Says hi.
/// #     #[action(read_only)]
/// #     pub fn hi(&self) -> u32 { 42 }
/// # }
/// #[test]
/// fn contract_is_locked() {
///     let server = fusion::server::Server::new("echo", "1.0.0").tool(Echo);
///     fusion::testing::assert_lockfile(
///         concat!(env!("CARGO_MANIFEST_DIR"), "/fusion.lock"),
///         &server.contract(),
///     );
/// }
/// ```
///
/// # Panics
/// As described above, and when [`LOCK_ENV`] is set to anything but `overwrite`.
#[track_caller]
pub fn assert_lockfile(path: impl AsRef<Path>, contract: &Contract) {
    let overwrite = match std::env::var(LOCK_ENV) {
        Ok(value) if value == "overwrite" => true,
        Ok(value) if value.is_empty() => false,
        Ok(value) => panic!(
            "fusion::testing: {LOCK_ENV} is '{value}'; set it to 'overwrite' or leave it unset"
        ),
        Err(_) => false,
    };
    match check_lockfile(path.as_ref(), contract, overwrite) {
        Ok(LockStatus::UpToDate) => {}
        Ok(LockStatus::Written) => eprintln!(
            "fusion::testing: wrote lockfile {} ({LOCK_ENV}=overwrite)",
            path.as_ref().display()
        ),
        Err(err) => panic!("fusion::testing: {err}"),
    }
}

impl Tester {
    /// The contract of the registered tools, as a lockfile records it.
    pub fn contract(&self) -> Contract {
        self.registry.contract()
    }

    /// Compares the tools with a known-good contract, as
    /// [`Server::contract_baseline`](crate::server::Server::contract_baseline) does: a
    /// validation error of an action then carries the `<contract_awareness>` section. Scopes
    /// follow the call's name (`billing_charge` for a flat call, `billing.charge` otherwise).
    pub fn contract_baseline(mut self, baseline: ContractBaseline) -> Tester {
        self.registry.set_baseline(baseline);
        self
    }
}
