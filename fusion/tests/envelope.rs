//! The `<tool_error>` envelope: golden vectors, well-formedness under arbitrary input, flags.

use fusion::{ErrorCategory, ErrorCode, Severity, ToolError};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Builds a `ToolError` from a golden vector's `input` object.
fn from_vector_input(input: &Value) -> ToolError {
    let mut e = ToolError::new(
        input["code"].as_str().unwrap(),
        input["message"].as_str().unwrap(),
    );
    if let Some(s) = input.get("suggest") {
        e = e.suggest(s.as_str().unwrap());
    }
    if let Some(actions) = input.get("actions") {
        e = e.actions(
            actions
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        );
    }
    if let Some(sev) = input.get("severity") {
        e = e.severity(sev.as_str().unwrap().parse().unwrap());
    }
    if let Some(details) = input.get("details") {
        for pair in details.as_array().unwrap() {
            e = e.detail(pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        }
    }
    if let Some(secs) = input.get("retry_after") {
        e = e.retry_after(secs.as_u64().unwrap());
    }
    e
}

#[test]
fn golden_vectors_are_byte_exact() {
    let file: Value = serde_json::from_str(include_str!("fixtures/tool_error.json")).unwrap();
    let vectors = file["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 18, "the fixture lost vectors");
    for v in vectors {
        let id = v["id"].as_str().unwrap();
        let e = from_vector_input(&v["input"]);
        assert_eq!(
            e.to_xml(),
            v["expected_xml"].as_str().unwrap(),
            "vector `{id}`"
        );
        assert_eq!(
            e.is_error(),
            v["is_error"].as_bool().unwrap(),
            "vector `{id}`"
        );
        assert_eq!(e.flags()["isError"], v["is_error"], "vector `{id}`");
        let mut buf = String::new();
        e.write_xml(&mut buf);
        assert_eq!(
            buf,
            e.to_xml(),
            "vector `{id}`: write_xml and to_xml differ"
        );
    }
}

#[test]
fn builder_sections_are_readable_back() {
    let e = ToolError::new("ALREADY_PAID", "Invoice inv_1 is already paid")
        .warning()
        .suggest("No action needed.")
        .actions(["billing.get_invoice"])
        .actions(vec![String::from("billing.list_invoices")])
        .with_details([("invoiceId", "inv_1"), ("status", "paid")])
        .detail("amount", 1200)
        .retry_after(5)
        .explanation("customer double-clicked");
    assert_eq!(e.code(), &ErrorCode::Custom("ALREADY_PAID".into()));
    assert_eq!(e.severity_level(), Severity::Warning);
    assert_eq!(e.message(), "Invoice inv_1 is already paid");
    assert_eq!(e.recovery(), Some("No action needed."));
    assert_eq!(
        e.available_actions(),
        ["billing.get_invoice", "billing.list_invoices"]
    );
    assert_eq!(e.details()[2], ("amount".to_owned(), "1200".to_owned()));
    assert_eq!(e.detail_value("status"), Some("paid"));
    assert_eq!(e.retry_after_secs(), Some(5));
    assert_eq!(e.explanation_text(), Some("customer double-clicked"));
    assert!(!e.to_xml().contains("double-clicked"), "explanation leaked");
    assert_eq!(ToolError::not_found("x").suggest("").recovery(), None);
}

#[test]
fn canonical_constructors() {
    let table: [(ToolError, &str, Severity); 9] = [
        (ToolError::not_found("m"), "NOT_FOUND", Severity::Error),
        (ToolError::conflict("m"), "CONFLICT", Severity::Error),
        (
            ToolError::unauthorized("m"),
            "UNAUTHORIZED",
            Severity::Error,
        ),
        (ToolError::forbidden("m"), "FORBIDDEN", Severity::Error),
        (
            ToolError::rate_limited("m", 30),
            "RATE_LIMITED",
            Severity::Error,
        ),
        (ToolError::timeout("m"), "TIMEOUT", Severity::Error),
        (ToolError::deprecated("m"), "DEPRECATED", Severity::Warning),
        (
            ToolError::missing_required_field("currency"),
            "MISSING_REQUIRED_FIELD",
            Severity::Error,
        ),
        (ToolError::internal("m"), "INTERNAL_ERROR", Severity::Error),
    ];
    for (e, code, severity) in table {
        assert_eq!(e.code().as_str(), code);
        assert_eq!(e.severity_level(), severity, "{code}");
        assert!(!e.code().is_custom(), "{code}");
    }
    assert_eq!(
        ToolError::rate_limited("m", 30).retry_after_secs(),
        Some(30)
    );
    let missing = ToolError::missing_required_field("currency");
    assert_eq!(missing.detail_value("field"), Some("currency"));
    assert!(missing.message().contains("'currency'"));
    assert!(
        ToolError::internal("m")
            .recovery()
            .unwrap()
            .contains("Do not retry")
    );
}

/// Expected flags for every canonical code, spelled out one by one.
#[test]
fn flags_table_for_every_canonical_code() {
    use ErrorCategory::*;
    let table: [(&str, ErrorCategory, bool); 18] = [
        ("MISSING_DISCRIMINATOR", Validation, false),
        ("UNKNOWN_ACTION", Validation, false),
        ("VALIDATION_ERROR", Validation, false),
        ("MISSING_REQUIRED_FIELD", Validation, false),
        ("INTERNAL_ERROR", Unknown, false),
        ("RATE_LIMITED", RateLimit, true),
        ("UNAUTHORIZED", Auth, false),
        ("FORBIDDEN", Auth, false),
        ("NOT_FOUND", NotFound, false),
        ("CONFLICT", Unknown, false),
        ("TIMEOUT", Transient, true),
        ("SERVER_BUSY", Transient, true),
        ("DEPRECATED", Validation, false),
        ("AUTH_REQUIRED", Auth, false),
        ("HANDOFF_UPSTREAM_UNAVAILABLE", Transient, true),
        ("HANDOFF_NAMESPACE_MISMATCH", Validation, false),
        ("HANDOFF_CONNECTING", Transient, true),
        ("RESULT_TRUNCATED", Validation, false),
    ];
    assert_eq!(
        table.map(|(c, _, _)| ErrorCode::from(c)).to_vec(),
        ErrorCode::CANONICAL.to_vec(),
        "the table must cover every canonical code, in order"
    );
    for (code, category, retryable) in table {
        let e = ToolError::new(code, "m");
        assert_eq!(
            e.flags(),
            json!({
                "isError": true,
                "errorCategory": category.as_str(),
                "isRetryable": retryable,
                "code": code,
                "severity": "error",
            }),
            "{code}"
        );
    }
}

#[test]
fn flags_for_custom_codes() {
    // Without a declared category: unknown, not retryable.
    assert_eq!(
        ToolError::new("ALREADY_PAID", "m").warning().flags(),
        json!({
            "isError": false,
            "errorCategory": "unknown",
            "isRetryable": false,
            "code": "ALREADY_PAID",
            "severity": "warning",
        })
    );
    // With a declared category, retryability follows it unless overridden.
    let declared = ToolError::new("LEDGER_BUSY", "m")
        .category(ErrorCategory::Transient)
        .retry_after(3)
        .explanation("ledger lock held");
    assert_eq!(
        declared.flags(),
        json!({
            "isError": true,
            "errorCategory": "transient",
            "isRetryable": true,
            "retryAfterSeconds": 3,
            "code": "LEDGER_BUSY",
            "severity": "error",
            "explanation": "ledger lock held",
        })
    );
    assert_eq!(
        declared.retryable(false).critical().flags()["isRetryable"],
        false
    );
}

#[test]
fn flags_have_exactly_the_spec_keys() {
    let flags = ToolError::rate_limited("m", 2).explanation("e").flags();
    let keys: Vec<&str> = flags
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    // serde_json without `preserve_order` sorts keys; either way the set is exact.
    assert_eq!(
        sorted,
        [
            "code",
            "errorCategory",
            "explanation",
            "isError",
            "isRetryable",
            "retryAfterSeconds",
            "severity"
        ]
    );
}

// --- well-formedness under arbitrary input --------------------------------------------------

/// Text we wrote as an XML 1.0 parser reports it: forbidden characters replaced, line ends
/// normalized (XML 1.0 section 2.11). Applied to the parser's output too, because parsers
/// differ in how far they normalize (the round trip holds "line endings aside"); idempotent.
fn expected_text(s: &str) -> String {
    replace_forbidden(s)
        .replace("\r\n", "\n")
        .replace('\r', "\n")
}

/// The same for attribute values, which parsers also normalize (XML 1.0 section 3.3.3):
/// after line-end normalization, each tab and newline becomes a space.
fn expected_attr(s: &str) -> String {
    expected_text(s).replace(['\t', '\n'], " ")
}

fn replace_forbidden(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => '\u{FFFD}',
            _ => c,
        })
        .collect()
}

fn any_text() -> impl Strategy<Value = String> {
    // Mix arbitrary Unicode with the characters that matter most, `]]>` included.
    let text = prop_oneof![
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just('<'),
                Just('>'),
                Just('&'),
                Just('"'),
                Just('\''),
                Just('\u{0}'),
                Just('\r'),
                Just('\u{FFFE}'),
                Just('\u{FFFF}'),
                Just(']'),
                any::<char>()
            ],
            0..24
        )
        .prop_map(|cs| cs.into_iter().collect()),
    ];
    text
}

/// XML 1.0 (section 2.4) forbids a literal `]]>` in element content: its `>` is escaped, so
/// every envelope is well-formed for strict parsers too.
#[test]
fn the_end_of_cdata_is_escaped_in_text() {
    let xml = ToolError::new("NOT_FOUND", "m").suggest("]]>").to_xml();
    assert!(xml.contains("<recovery>]]&gt;</recovery>"), "{xml}");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let recovery = doc
        .descendants()
        .find(|n| n.has_tag_name("recovery"))
        .unwrap();
    assert_eq!(recovery.text(), Some("]]>"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn envelope_is_well_formed_and_fields_cannot_escape(
        code in any_text(),
        message in any_text(),
        recovery in any_text(),
        actions in proptest::collection::vec(any_text(), 0..3),
        details in proptest::collection::vec((any_text(), any_text()), 0..3),
        retry in 0u64..100_000,
        severity in prop_oneof![Just(Severity::Warning), Just(Severity::Error), Just(Severity::Critical)],
    ) {
        let e = ToolError::new(code.as_str(), message.as_str())
            .suggest(recovery.as_str())
            .actions(actions.iter().map(String::as_str))
            .with_details(details.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .retry_after(retry)
            .severity(severity);
        let xml = e.to_xml();
        let doc = roxmltree::Document::parse(&xml)
            .map_err(|err| TestCaseError::fail(format!("not well-formed: {err}\n{xml}")))?;

        // The tree has exactly the sections we set, so no content opened or closed a tag.
        let root = doc.root_element();
        prop_assert_eq!(root.tag_name().name(), "tool_error");
        let want_code = expected_attr(&code);
        prop_assert_eq!(root.attribute("code").map(expected_attr), Some(want_code));
        prop_assert_eq!(root.attribute("severity"), Some(severity.as_str()));
        let sections: Vec<&str> = root.children().filter(|n| n.is_element()).map(|n| n.tag_name().name()).collect();
        let mut expected = vec!["message"];
        if !recovery.is_empty() { expected.push("recovery"); }
        if !actions.is_empty() { expected.push("available_actions"); }
        if !details.is_empty() { expected.push("details"); }
        if retry > 0 { expected.push("retry_after"); }
        prop_assert_eq!(sections, expected);

        let section = |name: &str| root.children().find(|n| n.has_tag_name(name)).unwrap();
        prop_assert_eq!(expected_text(section("message").text().unwrap_or("")), expected_text(&message));
        if !actions.is_empty() {
            let got: Vec<String> = section("available_actions").children().filter(|n| n.is_element())
                .map(|n| expected_text(n.text().unwrap_or(""))).collect();
            let want: Vec<String> = actions.iter().map(|a| expected_text(a)).collect();
            prop_assert_eq!(got, want);
        }
        if !details.is_empty() {
            let got: Vec<(String, String)> = section("details").children().filter(|n| n.is_element())
                .map(|n| (expected_attr(n.attribute("key").unwrap()), expected_text(n.text().unwrap_or("")))).collect();
            let want: Vec<(String, String)> = details.iter().map(|(k, v)| (expected_attr(k), expected_text(v))).collect();
            prop_assert_eq!(got, want);
        }
    }
}
