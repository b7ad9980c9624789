//! The older layouts other servers write: indented, reordered, comma-separated actions, no
//! severity, unknown delta classes.

use fusion::client::{Envelope, Flags};
use fusion::contract::{DeltaClass, ScopedDelta};
use serde_json::Value;

use super::{pairs, parse_tool_error, parse_validation, strings};

#[test]
fn older_tool_error_layouts() {
    let file: Value =
        serde_json::from_str(include_str!("../fixtures/older_envelopes.json")).unwrap();
    let vectors = file["tool_error"].as_array().unwrap();
    assert!(vectors.len() >= 10);
    for v in vectors {
        let id = v["id"].as_str().unwrap();
        let want = &v["expected"];
        let e = parse_tool_error(v["xml"].as_str().unwrap());
        assert_eq!(e.code().as_str(), want["code"], "`{id}`");
        assert_eq!(e.severity_level().as_str(), want["severity"], "`{id}`");
        assert_eq!(e.message(), want["message"], "`{id}`");
        assert_eq!(e.recovery(), want["recovery"].as_str(), "`{id}`");
        assert_eq!(e.available_actions(), strings(&want["actions"]), "`{id}`");
        let details: Vec<Vec<String>> = e
            .details()
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        assert_eq!(details, pairs(&want["details"]), "`{id}`");
        assert_eq!(e.retry_after_secs(), want["retry_after"].as_u64(), "`{id}`");
    }
}

#[test]
fn older_validation_layouts_and_contract_awareness() {
    let file: Value =
        serde_json::from_str(include_str!("../fixtures/older_envelopes.json")).unwrap();
    for v in file["validation_error"].as_array().unwrap() {
        let id = v["id"].as_str().unwrap();
        let want = &v["expected"];
        let xml = v["xml"].as_str().unwrap();
        let parsed = parse_validation(xml);
        assert_eq!(parsed.action(), want["action"], "`{id}`");
        let fields: Vec<Vec<String>> = parsed
            .problems()
            .iter()
            .map(|p| vec![p.path().to_owned(), p.line().to_owned()])
            .collect();
        assert_eq!(fields, pairs(&want["fields"]), "`{id}`");
        let deltas: Vec<Vec<String>> = parsed
            .contract_awareness()
            .iter()
            .map(|d| vec![d.class.to_string(), d.scope.clone(), d.text.clone()])
            .collect();
        assert_eq!(deltas, pairs(&want["deltas"]), "`{id}`");
        // The recovery line (`want["recovery"]`) is read but not kept: a `ValidationError`
        // always renders fusion's fixed one.
        if v["exact"] == true {
            assert_eq!(parsed.to_xml(), xml, "`{id}` does not re-render");
        }
    }
}

#[test]
fn contract_deltas_are_typed() {
    let v = parse_validation(
        "<validation_error action=\"billing.charge\">\n<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge\">a</delta>\n  <delta severity=\"RISKY\" scope=\"billing\">b</delta>\n  <delta severity=\"SEISMIC\" scope=\"x\">c</delta>\n</contract_awareness>\n</validation_error>",
    );
    // A class this client does not know (`SEISMIC`) is skipped, like an unknown section.
    let delta = |class, scope: &str, text: &str| ScopedDelta {
        class,
        scope: scope.into(),
        text: text.into(),
    };
    assert_eq!(
        v.contract_awareness(),
        [
            delta(DeltaClass::Breaking, "billing.charge", "a"),
            delta(DeltaClass::Risky, "billing", "b"),
        ]
    );
    assert!(v.is_empty());
    assert_eq!(
        Envelope::Validation(v).flags(),
        Flags::validation(),
        "validation flags never depend on the content"
    );
}
