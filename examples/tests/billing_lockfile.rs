//! The billing example's contract lockfile: `examples/fusion.lock` is asserted against the
//! code (`FUSION_LOCK=overwrite cargo test -p examples` rewrites it), the older contract of the
//! demo (`examples/fusion.old.lock`) is kept in step, and `--lock-check` is run as a user runs
//! it.

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use std::process::Command;

use billing::{Billing, Ledger};
use fusion::Tool;
use fusion::contract::{Contract, ContractBaseline, Lockfile};
use fusion::testing::{Tester, assert_lockfile};
use serde_json::{Value, json};

const LOCKFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fusion.lock");
const OLD_LOCKFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fusion.old.lock");

fn tester() -> Tester {
    let billing = Billing::seeded();
    let ledger = Ledger::sharing(&billing);
    Tester::new().tool(billing).tool(ledger)
}

#[test]
fn the_contract_matches_fusion_lock() {
    assert_lockfile(LOCKFILE, &tester().contract());
}

/// The contract before `charge` took a currency: today's definitions with the `currency` field
/// taken out of `charge`'s input schema (digests computed from that schema, as they were).
fn old_contract() -> Contract {
    let billing = Billing::seeded();
    let ledger = Ledger::sharing(&billing);
    let mut definition = billing.definition();
    let charge = definition
        .actions
        .iter_mut()
        .find(|a| a.name == "charge")
        .expect("a charge action");
    let schema = &mut charge.input_schema;
    schema["properties"]
        .as_object_mut()
        .expect("properties")
        .remove("currency");
    schema["required"]
        .as_array_mut()
        .expect("required")
        .retain(|f| f != "currency");
    schema.remove("$defs");
    Contract::from_definitions([&definition, &ledger.definition()])
}

#[test]
fn the_demo_baseline_is_the_contract_without_the_currency() {
    assert_lockfile(OLD_LOCKFILE, &old_contract());
}

#[tokio::test]
async fn an_agent_calibrated_on_the_old_contract_is_told_what_changed() {
    let old = Lockfile::load(OLD_LOCKFILE).expect("the old lockfile loads");
    let outcome = tester()
        .contract_baseline(ContractBaseline::new(old))
        .call(
            "billing.charge",
            json!({"invoice_id": "inv_0001", "amount_cents": 100}),
        )
        .await;
    outcome
        .assert_error("VALIDATION_ERROR")
        .assert_validation_fields(["currency"]);
    let envelope = outcome.response().validation_error().unwrap().to_xml();
    assert!(
        envelope.contains(
            "<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge\">Required field 'currency' added (before: absent; now: string in 'EUR', 'USD').</delta>\n</contract_awareness>\n<recovery>"
        ),
        "{envelope}"
    );
    // Actions that did not change carry nothing.
    let other = tester()
        .contract_baseline(ContractBaseline::new(Lockfile::load(OLD_LOCKFILE).unwrap()))
        .call("billing.refund", json!({"invoice_id": "x"}))
        .await;
    let envelope = other.response().validation_error().unwrap().to_xml();
    assert!(!envelope.contains("contract_awareness"), "{envelope}");
}

fn lock_check(lockfile: &str) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_fusion-billing"))
        .args(["--lock-check", "--lockfile", lockfile])
        .output()
        .expect("fusion-billing runs");
    (
        output.status.code().expect("an exit status"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn lock_check_passes_on_the_shipped_lockfile() {
    let (status, stdout, stderr) = lock_check(LOCKFILE);
    assert_eq!(status, 0, "{stdout}{stderr}");
    let digest = Lockfile::load(LOCKFILE).unwrap().digest().to_owned();
    assert_eq!(stdout, format!("{LOCKFILE} is up to date ({digest})\n"));
}

#[test]
fn lock_check_fails_on_breaking_drift_with_the_report() {
    let (status, stdout, stderr) = lock_check(OLD_LOCKFILE);
    assert_eq!(status, 1, "{stdout}{stderr}");
    assert_eq!(
        stdout,
        "BREAKING billing.charge: Required field 'currency' added (before: absent; now: string in 'EUR', 'USD').\n"
    );
    assert!(stderr.contains("BREAKING changes since"), "{stderr}");
}

#[test]
fn lock_check_refuses_a_tampered_lockfile() {
    let dir = std::env::temp_dir().join(format!("fusion-billing-lock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fusion.lock");
    let text = std::fs::read_to_string(LOCKFILE).unwrap();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["tools"]["billing"]["actions"]["refund"]["annotations"]["destructive"] = json!(false);
    std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    let (status, stdout, stderr) = lock_check(path.to_str().unwrap());
    assert_eq!(status, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("tampered lockfile: the entry of tool `billing` does not match its digest"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
