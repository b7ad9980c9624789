//! Tampering and malformed files: a changed entry or digest is caught, foreign files are
//! refused clearly.

use fusion::contract::{Lockfile, LockfileError};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{contract_of, v1};

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
