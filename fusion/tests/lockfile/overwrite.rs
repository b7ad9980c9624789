//! The test helper and its overwrite workflow: `check_lockfile` creates, detects drift and
//! rewrites; `assert_lockfile` obeys the environment variable in a child process.

use std::path::Path;
use std::process::Command;

use fusion::contract::LockfileError;
use fusion::testing::{LockCheckError, LockStatus, check_lockfile};

use super::{contract_of, scratch, v1, v2};

#[test]
fn check_lockfile_creates_detects_drift_and_rewrites() {
    let path = scratch("workflow").join("nested/fusion.lock");
    let (old, new) = (contract_of(&v1::Billing), contract_of(&v2::Billing));

    assert!(matches!(
        check_lockfile(&path, &old, false),
        Err(LockCheckError::Missing { .. })
    ));
    assert_eq!(
        check_lockfile(&path, &old, true).unwrap(),
        LockStatus::Written
    );
    assert_eq!(
        check_lockfile(&path, &old, false).unwrap(),
        LockStatus::UpToDate
    );

    let Err(LockCheckError::Drift { report, .. }) = check_lockfile(&path, &new, false) else {
        panic!("expected drift");
    };
    assert!(
        report.starts_with(
            "BREAKING billing.charge: Field 'currency' became required (before: optional; now: required).\n"
        ),
        "{report}"
    );
    assert!(report.contains("\nCOSMETIC billing.charge: "), "{report}");
    assert_eq!(report, fusion::contract::diff(&old, &new).report());

    assert_eq!(
        check_lockfile(&path, &new, true).unwrap(),
        LockStatus::Written
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), new.to_lockfile());

    // A tampered file is refused, and overwritten on request.
    std::fs::write(&path, new.to_lockfile().replace("Charges", "Charge")).unwrap();
    assert!(matches!(
        check_lockfile(&path, &new, false),
        Err(LockCheckError::Invalid(LockfileError::Tampered { .. }))
    ));
    assert_eq!(
        check_lockfile(&path, &new, true).unwrap(),
        LockStatus::Written
    );
}

/// Run by `assert_lockfile_obeys_the_environment_variable` in a child process, with
/// `FUSION_LOCK_TEST_PATH` naming the lockfile and `FUSION_LOCK` set or not.
#[test]
#[ignore = "run in a child process by assert_lockfile_obeys_the_environment_variable"]
fn child_assert_lockfile() {
    let path = std::env::var("FUSION_LOCK_TEST_PATH").expect("FUSION_LOCK_TEST_PATH");
    fusion::testing::assert_lockfile(path, &contract_of(&v2::Billing));
}

fn run_child(path: &Path, overwrite: bool) -> std::process::Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            // The test's path in this binary: its module, then its name.
            "overwrite::child_assert_lockfile",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("FUSION_LOCK_TEST_PATH", path)
        .env_remove(fusion::testing::LOCK_ENV);
    if overwrite {
        command.env(fusion::testing::LOCK_ENV, "overwrite");
    }
    command.output().expect("the test binary runs")
}

#[test]
fn assert_lockfile_obeys_the_environment_variable() {
    let path = scratch("env").join("fusion.lock");
    std::fs::write(&path, contract_of(&v1::Billing).to_lockfile()).unwrap();

    let failing = run_child(&path, false);
    let stderr = String::from_utf8_lossy(&failing.stderr);
    let stdout = String::from_utf8_lossy(&failing.stdout);
    assert!(!failing.status.success(), "{stdout}\n{stderr}");
    let out = format!("{stdout}{stderr}");
    assert!(
        out.contains("fusion::testing: the contract differs from"),
        "{out}"
    );
    assert!(
        out.contains(
            "BREAKING billing.charge: Field 'currency' became required (before: optional; now: required)."
        ),
        "{out}"
    );
    assert!(out.contains("rerun with FUSION_LOCK=overwrite"), "{out}");
    // The file is left alone.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        contract_of(&v1::Billing).to_lockfile()
    );

    let rewriting = run_child(&path, true);
    assert!(
        rewriting.status.success(),
        "{}",
        String::from_utf8_lossy(&rewriting.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        contract_of(&v2::Billing).to_lockfile()
    );
    let again = run_child(&path, false);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}
