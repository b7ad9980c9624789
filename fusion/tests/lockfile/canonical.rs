//! Canonical form and digests: canonical JSON that round-trips, SHA-256 digests recomputed
//! independently, pinned bytes.

use std::path::Path;

use fusion::contract::{LOCKFILE_FORMAT, Lockfile};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{contract_of, v1};

#[test]
fn lockfile_is_canonical_json_and_round_trips() {
    let contract = contract_of(&v1::Billing);
    let text = contract.to_lockfile();
    assert_eq!(text, contract.to_lockfile(), "same contract, same bytes");
    assert!(text.ends_with("}\n") && !text.ends_with("\n\n"));
    // Two-space indent, keys sorted at every level: serde_json (whose maps sort) agrees.
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_string_pretty(&value).unwrap() + "\n", text);
    assert_eq!(value["format"], json!(LOCKFILE_FORMAT));
    let lockfile = Lockfile::parse(&text).unwrap();
    assert_eq!(lockfile.contract(), &contract);
    assert_eq!(lockfile.digest(), contract.digest());
    let charge = &contract.tools["billing"].actions["charge"];
    assert_eq!(charge.required, ["amount_cents", "invoice_id"]);
    assert_eq!(charge.fields["currency"].types, ["null", "string"]);
    assert_eq!(charge.annotations.idempotent, Some(true));
}

/// The digests are SHA-256 over compact JSON with sorted keys, recomputed here independently
/// (serde_json's sorted maps and the `sha2` crate), so they cannot depend on map order, the
/// platform or the run.
#[test]
fn digests_are_sha256_of_sorted_compact_json() {
    let text = contract_of(&v1::Billing).to_lockfile();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    let sha = |v: &Value| {
        let hex: String = Sha256::digest(serde_json::to_string(v).unwrap().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("sha256:{hex}")
    };
    let top = value.as_object_mut().unwrap().remove("digest").unwrap();
    assert_eq!(top, json!(sha(&value)));
    let mut tool = value["tools"]["billing"].clone();
    let stored = tool.as_object_mut().unwrap().remove("digest").unwrap();
    assert_eq!(stored, json!(sha(&tool)));
}

/// The bytes of a fixed contract are pinned: a change in canonicalization or digests (which
/// would invalidate every user's lockfile) fails here.
#[test]
fn lockfile_bytes_are_pinned() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/billing_v1.lock");
    let contract = contract_of(&v1::Billing);
    fusion::testing::assert_lockfile(&fixture, &contract);
    assert_eq!(
        std::fs::read_to_string(&fixture).unwrap(),
        contract.to_lockfile()
    );
}
