//! The contract lockfile end to end: canonical bytes and stable digests, tampering detection,
//! the `assert_lockfile` overwrite workflow (through the real environment variable, in a child
//! process), and `<contract_awareness>` in validation errors sent by a real server to a real
//! rmcp client.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use fusion::contract::{
    Contract, ContractBaseline, DeltaClass, LOCKFILE_FORMAT, Lockfile, LockfileError, ScopedDelta,
};
use fusion::server::{Exposition, Server};
use fusion::testing::{LockCheckError, LockStatus, Tester, check_lockfile};
use fusion::{Tool, ValidationError};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The billing tool as a model first learned it.
mod v1 {
    use schemars::JsonSchema;
    use serde::Deserialize;

    pub(crate) struct Billing;

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Charge {
        /// The invoice to charge.
        pub(crate) invoice_id: String,
        /// The amount in cents.
        pub(crate) amount_cents: u64,
        /// The currency; the invoice's when left out.
        pub(crate) currency: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct ChargeAll {
        /// Only invoices of this customer.
        pub(crate) customer: String,
        /// A note for the ledger.
        pub(crate) note: Option<String>,
    }

    /// Invoices.
    #[fusion::tool]
    impl Billing {
        /// Charges one invoice.
        #[action(idempotent)]
        pub(crate) fn charge(&self, args: Charge) -> String {
            format!(
                "{} {} {:?}",
                args.invoice_id, args.amount_cents, args.currency
            )
        }

        /// Charges every open invoice.
        #[action(destructive)]
        pub(crate) fn charge_all(&self, args: ChargeAll) -> String {
            format!("{} {:?}", args.customer, args.note)
        }
    }
}

/// The billing tool after a release: `charge` requires a currency, has a minimum amount and is
/// no longer idempotent; `charge_all` lost a field.
mod v2 {
    use schemars::JsonSchema;
    use serde::Deserialize;

    pub(crate) struct Billing;

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct Charge {
        /// The invoice to charge.
        pub(crate) invoice_id: String,
        /// The amount in cents.
        #[schemars(range(min = 1))]
        pub(crate) amount_cents: u64,
        /// The currency, `EUR` or `USD`.
        pub(crate) currency: String,
        /// A memo for the customer.
        pub(crate) memo: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(crate) struct ChargeAll {
        /// Only invoices of this customer.
        pub(crate) customer: String,
    }

    /// Invoices.
    #[fusion::tool]
    impl Billing {
        /// Charges one invoice, in its currency.
        #[action]
        pub(crate) fn charge(&self, args: Charge) -> String {
            format!(
                "{} {} {} {:?}",
                args.invoice_id, args.amount_cents, args.currency, args.memo
            )
        }

        /// Charges every open invoice.
        #[action(destructive)]
        pub(crate) fn charge_all(&self, args: ChargeAll) -> String {
            args.customer
        }
    }
}

fn contract_of(tool: &impl Tool) -> Contract {
    Contract::from_definitions([&tool.definition()])
}

/// A fresh directory under the system temporary directory, unique to this test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fusion-lock-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

// --- canonical form and digests ---------------------------------------------------------------

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

// --- tampering and malformed files ------------------------------------------------------------

fn edit(text: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut value: Value = serde_json::from_str(text).unwrap();
    f(&mut value);
    serde_json::to_string_pretty(&value).unwrap()
}

#[test]
fn a_changed_tool_entry_is_tampering_even_with_the_top_digest_left_alone() {
    let text = contract_of(&v1::Billing).to_lockfile();
    let tampered = edit(&text, |v| {
        v["tools"]["billing"]["actions"]["charge"]["annotations"]["idempotent"] = json!(false);
    });
    match Lockfile::parse(&tampered) {
        Err(LockfileError::Tampered { tool, .. }) => assert_eq!(tool.as_deref(), Some("billing")),
        other => panic!("expected tampering, got {other:?}"),
    }
    let message = Lockfile::parse(&tampered).unwrap_err().to_string();
    assert!(
        message.starts_with(
            "tampered lockfile: the entry of tool `billing` does not match its digest"
        ),
        "{message}"
    );
}

#[test]
fn a_consistent_tool_digest_does_not_hide_a_changed_top_digest() {
    let text = contract_of(&v1::Billing).to_lockfile();
    // The tool entry edited and its digest recomputed, the server digest left alone.
    let mut edited = contract_of(&v1::Billing);
    edited.tools.get_mut("billing").unwrap().description = "Edited.".into();
    let forged_tool = edit(&edited.to_lockfile(), |_| {});
    let tampered = edit(&forged_tool, |v| {
        let original: Value = serde_json::from_str(&text).unwrap();
        v["digest"] = original["digest"].clone();
    });
    match Lockfile::parse(&tampered) {
        Err(LockfileError::Tampered { tool: None, .. }) => {}
        other => panic!("expected tampering of the server digest, got {other:?}"),
    }
}

#[test]
fn malformed_and_foreign_files_are_refused_clearly() {
    let text = contract_of(&v1::Billing).to_lockfile();
    let cases: Vec<(String, &str)> = vec![
        ("{ not json".into(), "malformed lockfile: not JSON"),
        (
            "[]".into(),
            "malformed lockfile: the top level is not a JSON object",
        ),
        (
            edit(&text, |v| v["format"] = json!(2)),
            "lockfile format 2 is not supported (this fusion reads format 1)",
        ),
        (
            edit(&text, |v| {
                v.as_object_mut().unwrap().remove("format");
            }),
            "malformed lockfile: no `format` key",
        ),
        (
            edit(&text, |v| {
                v["tools"]["billing"]
                    .as_object_mut()
                    .unwrap()
                    .remove("digest");
            }),
            "malformed lockfile: tool `billing` has no `digest` key",
        ),
    ];
    for (input, expected) in cases {
        let err = Lockfile::parse(&input).unwrap_err().to_string();
        assert!(err.starts_with(expected), "{err}");
    }
    // An unknown key is refused even when every digest matches it.
    let mut value: Value = serde_json::from_str(&text).unwrap();
    value["tools"]["billing"]["actions"]["charge"]["surprise"] = json!(1);
    let tool = value["tools"]["billing"].as_object_mut().unwrap();
    tool.remove("digest");
    let digest = sha_of(&Value::Object(tool.clone()));
    tool.insert("digest".into(), json!(digest));
    let root = value.as_object_mut().unwrap();
    root.remove("digest");
    let top = sha_of(&Value::Object(root.clone()));
    root.insert("digest".into(), json!(top));
    let err = Lockfile::parse(&value.to_string()).unwrap_err().to_string();
    assert!(
        err.starts_with("malformed lockfile: tool `billing`: unknown field `surprise`"),
        "{err}"
    );
    let missing = Lockfile::load("/nonexistent/fusion.lock").unwrap_err();
    assert!(matches!(missing, LockfileError::Io { .. }), "{missing:?}");
}

fn sha_of(v: &Value) -> String {
    let hex: String = Sha256::digest(serde_json::to_string(v).unwrap().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

// --- the test helper and its overwrite workflow ------------------------------------------------

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
            "child_assert_lockfile",
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

// --- self-healing: <contract_awareness> on the wire --------------------------------------------

fn baseline() -> ContractBaseline {
    let text = contract_of(&v1::Billing).to_lockfile();
    ContractBaseline::new(Lockfile::parse(&text).unwrap())
}

const CHARGE_AWARENESS: &str = "\
<contract_awareness>
  <delta severity=\"BREAKING\" scope=\"billing.charge\">Field 'currency' became required (before: optional; now: required).</delta>
  <delta severity=\"BREAKING\" scope=\"billing.charge\">Type of field 'currency' changed (before: null or string; now: string).</delta>
  <delta severity=\"RISKY\" scope=\"billing.charge\">Constraint minimum of field 'amount_cents' tightened (before: 0; now: 1).</delta>
  <delta severity=\"RISKY\" scope=\"billing.charge\">Hint idempotent changed (before: true; now: false (MCP default)).</delta>
</contract_awareness>
";

async fn call(server: Server, name: &str, arguments: Value) -> CallToolResult {
    let client = server
        .serve_in_process(ClientConfig::default())
        .await
        .expect("client");
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
        .await
        .expect("answered within 10 s")
        .expect("a tool result");
    client.cancel().await.expect("client closes");
    result
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("text").text.clone()
}

#[tokio::test]
async fn a_validation_error_tells_the_model_what_changed() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let args = json!({"action": "charge", "invoice_id": "inv_1", "amount_cents": 5});
    let result = call(server, "billing", args.clone()).await;
    let envelope = text(&result);
    let plain = call(
        Server::new("billing", "2.0.0").tool(v2::Billing),
        "billing",
        args,
    )
    .await;
    let plain = text(&plain);

    // The plain envelope with the section between the last field line and the recovery.
    let (head, recovery) = plain.split_at(plain.find("<recovery>").unwrap());
    assert_eq!(envelope, format!("{head}{CHARGE_AWARENESS}{recovery}"));
    assert!(head.contains("<field name=\"currency\">"), "{plain}");
    assert_eq!(result.is_error, Some(true));

    // Well-formed XML, the section a child of the envelope, its deltas parsed back.
    let doc = roxmltree::Document::parse(&envelope).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "validation_error");
    let children: Vec<&str> = root
        .children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(
        children,
        ["field", "contract_awareness", "recovery"],
        "{envelope}"
    );
    let section = root
        .children()
        .find(|n| n.has_tag_name("contract_awareness"))
        .unwrap();
    let deltas: Vec<(&str, &str)> = section
        .children()
        .filter(|n| n.is_element())
        .map(|n| {
            (
                n.attribute("severity").unwrap(),
                n.attribute("scope").unwrap(),
            )
        })
        .collect();
    assert_eq!(deltas.len(), 4);
    assert!(deltas.iter().all(|(_, scope)| *scope == "billing.charge"));

    // The client reads the section back, and renders the same bytes.
    let parsed = fusion::client::parse_envelope(&envelope).expect("the client parses it");
    let validation = parsed.validation().expect("a validation envelope");
    assert_eq!(validation.contract_awareness().len(), 4);
    assert!(
        validation
            .contract_awareness()
            .iter()
            .all(|d| d.scope == "billing.charge"
                && matches!(d.class, DeltaClass::Breaking | DeltaClass::Risky))
    );
    assert_eq!(validation.to_xml(), envelope);
}

#[tokio::test]
async fn the_sibling_action_gets_only_its_own_deltas() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let result = call(
        server,
        "billing",
        json!({"action": "charge_all", "note": "x"}),
    )
    .await;
    let envelope = text(&result);
    assert!(
        envelope.contains(
            "<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge_all\">Field 'note' removed; it is now rejected as unknown (before: null or string; now: absent).</delta>\n</contract_awareness>\n"
        ),
        "{envelope}"
    );
    assert!(!envelope.contains("scope=\"billing.charge\""), "{envelope}");
}

#[tokio::test]
async fn flat_exposition_names_scopes_as_flat_tools_and_the_cap_applies() {
    let server = Server::new("billing", "2.0.0")
        .tool(v2::Billing)
        .exposition(Exposition::Flat)
        .contract_baseline(baseline().max_deltas(2));
    let result = call(server, "billing_charge", json!({"invoice_id": "inv_1"})).await;
    let envelope = text(&result);
    let section: Vec<&str> = envelope
        .lines()
        .filter(|l| l.starts_with("  <delta "))
        .collect();
    assert_eq!(section.len(), 2, "{envelope}");
    assert!(
        section
            .iter()
            .all(|l| l.starts_with("  <delta severity=\"BREAKING\" scope=\"billing_charge\">")),
        "{envelope}"
    );
}

#[tokio::test]
async fn without_a_baseline_or_without_changes_the_envelope_is_unchanged() {
    let args = json!({"action": "charge", "invoice_id": "inv_1"});
    let plain = text(
        &call(
            Server::new("b", "1").tool(v2::Billing),
            "billing",
            args.clone(),
        )
        .await,
    );
    // A baseline equal to the current contract: no delta, no section.
    let same = ContractBaseline::new(Lockfile::new(contract_of(&v2::Billing)));
    let unchanged = Server::new("b", "1")
        .tool(v2::Billing)
        .contract_baseline(same);
    assert!(unchanged.contract_awareness().unwrap().diff().is_empty());
    let with_same = text(&call(unchanged, "billing", args).await);
    assert_eq!(with_same, plain);
    assert!(!plain.contains("contract_awareness"));
    // Errors other than validation errors never carry the section.
    let server = Server::new("b", "1")
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let unknown = text(&call(server, "billing", json!({"action": "charg"})).await);
    assert!(
        unknown.starts_with("<tool_error code=\"UNKNOWN_ACTION\""),
        "{unknown}"
    );
    assert!(!unknown.contains("contract_awareness"), "{unknown}");
}

#[tokio::test]
async fn the_tester_takes_the_same_baseline() {
    let tester = Tester::new()
        .tool(v2::Billing)
        .contract_baseline(baseline());
    let outcome = tester
        .call(
            "billing.charge",
            json!({"invoice_id": "inv_1", "amount_cents": 5}),
        )
        .await;
    let snapshot = outcome.snapshot();
    assert!(snapshot.contains(CHARGE_AWARENESS), "{snapshot}");
    let flat = tester
        .call(
            "billing_charge",
            json!({"invoice_id": "inv_1", "amount_cents": 5}),
        )
        .await
        .snapshot();
    assert!(flat.contains("scope=\"billing_charge\""), "{flat}");
    assert_eq!(tester.contract(), contract_of(&v2::Billing));
}

#[test]
fn every_name_in_the_section_is_escaped() {
    let tricky = "a\"<b>&'c";
    let error = ValidationError::new("t.a")
        .with_problem("x", "Wrong. You sent: 1. Expected a string.")
        .with_contract_awareness(vec![ScopedDelta {
            class: DeltaClass::Risky,
            scope: tricky.into(),
            text: format!("Field '{tricky}' changed (before: <none>; now: a & b)."),
        }]);
    let xml = error.to_xml();
    assert!(
        xml.contains(
            "  <delta severity=\"RISKY\" scope=\"a&quot;&lt;b&gt;&amp;&apos;c\">Field 'a\"&lt;b>&amp;'c' changed (before: &lt;none>; now: a &amp; b).</delta>\n"
        ),
        "{xml}"
    );
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let delta = doc.descendants().find(|n| n.has_tag_name("delta")).unwrap();
    assert_eq!(delta.attribute("scope"), Some(tricky));
    assert_eq!(
        delta.text(),
        Some(format!("Field '{tricky}' changed (before: <none>; now: a & b).").as_str())
    );
    let mut buffer = String::new();
    error.write_xml(&mut buffer);
    assert_eq!(buffer, xml);
    // The exact-length measure counts the section: one allocation, no slack.
    assert_eq!(xml.len(), xml.capacity());
}
