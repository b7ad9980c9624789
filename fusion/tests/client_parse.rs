//! `fusion::client::parse_envelope`: the inverse of rendering (golden vectors and arbitrary
//! values), the older layouts other servers write, and garbage (a clear error, never a panic).

use fusion::client::{Envelope, Flags, ParseErrorKind, parse_envelope};
use fusion::contract::{DeltaClass, ScopedDelta};
use fusion::validation::FieldProblem;
use fusion::{ErrorCategory, ErrorCode, Severity, ToolError, ValidationError};
use proptest::prelude::*;
use serde_json::Value;

fn parse_tool_error(xml: &str) -> ToolError {
    match parse_envelope(xml) {
        Ok(Envelope::ToolError(e)) => e,
        other => panic!("not a tool error: {other:?}\n{xml}"),
    }
}

fn parse_validation(xml: &str) -> ValidationError {
    match parse_envelope(xml) {
        Ok(Envelope::Validation(v)) => v,
        other => panic!("not a validation envelope: {other:?}\n{xml}"),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(value: &Value) -> Vec<Vec<String>> {
    value
        .as_array()
        .map(|items| items.iter().map(strings).collect())
        .unwrap_or_default()
}

// --- the golden vectors ---------------------------------------------------------------------

#[test]
fn every_golden_vector_parses_back_to_the_same_bytes_and_sections() {
    let file: Value = serde_json::from_str(include_str!("fixtures/tool_error.json")).unwrap();
    let vectors = file["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 18, "the fixture lost vectors");
    for v in vectors {
        let id = v["id"].as_str().unwrap();
        let xml = v["expected_xml"].as_str().unwrap();
        let input = &v["input"];
        let parsed = parse_tool_error(xml);
        assert_eq!(parsed.to_xml(), xml, "vector `{id}` does not re-render");
        // The sections themselves, not only the bytes. Forbidden characters were replaced
        // when rendering, so compare against the rendered text of the input where it matters.
        if id != "xml10-forbidden-chars" {
            assert_eq!(parsed.code().as_str(), input["code"], "vector `{id}`");
            assert_eq!(parsed.message(), input["message"], "vector `{id}`");
            assert_eq!(
                parsed.available_actions(),
                strings(&input["actions"]),
                "vector `{id}`"
            );
            let details: Vec<Vec<String>> = parsed
                .details()
                .iter()
                .map(|(k, v)| vec![k.clone(), v.clone()])
                .collect();
            assert_eq!(details, pairs(&input["details"]), "vector `{id}`");
        }
        assert_eq!(
            parsed.recovery().unwrap_or(""),
            input["suggest"].as_str().unwrap_or(""),
            "vector `{id}`"
        );
        assert_eq!(
            parsed.severity_level().as_str(),
            input["severity"].as_str().unwrap_or("error"),
            "vector `{id}`"
        );
        assert_eq!(
            parsed.retry_after_secs().unwrap_or(0),
            input["retry_after"].as_u64().unwrap_or(0),
            "vector `{id}`"
        );
        assert_eq!(parsed.is_error(), v["is_error"].as_bool().unwrap());
    }
}

#[test]
fn the_cdata_end_pinned_literal_by_a_vector_is_read() {
    // `closing-tag-injection`: `]]>` stays literal in element text, which strict XML parsers
    // reject; this one must not.
    let e = parse_tool_error(
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>&lt;/message>&lt;/tool_error>&lt;tool_error code=\"OK\"></message>\n<recovery>]]> &amp; &lt;![CDATA[</recovery>\n</tool_error>",
    );
    assert_eq!(
        e.message(),
        "</message></tool_error><tool_error code=\"OK\">"
    );
    assert_eq!(e.recovery(), Some("]]> & <![CDATA["));
}

// --- older layouts ----------------------------------------------------------------------------

#[test]
fn older_tool_error_layouts() {
    let file: Value = serde_json::from_str(include_str!("fixtures/older_envelopes.json")).unwrap();
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
    let file: Value = serde_json::from_str(include_str!("fixtures/older_envelopes.json")).unwrap();
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

#[test]
fn the_server_validation_envelope_round_trips() {
    let server = ValidationError::new("billing.get_invoice")
        .with_problem(
            "id",
            "Too short. You sent: 'inv'. Expected at least 5 characters.",
        )
        .with_problem(
            "extra",
            "Unknown field. You sent: 1. Expected one of the known fields: id.",
        )
        .with_problem("items[0].sku", "Wrong type & <bad>. You sent: 'a\tb'.");
    let parsed = parse_validation(&server.to_xml());
    assert_eq!(parsed.to_xml(), server.to_xml());
    assert_eq!(parsed, server);
    assert_eq!(parsed.action(), "billing.get_invoice");
    assert_eq!(
        parsed.field("items[0].sku"),
        Some("Wrong type & <bad>. You sent: 'a\tb'.")
    );
    assert_eq!(
        parsed.problems()[0],
        FieldProblem::new(
            "extra",
            "Unknown field. You sent: 1. Expected one of the known fields: id."
        )
    );
}

// --- garbage ----------------------------------------------------------------------------------

#[test]
fn garbage_gets_a_clear_error_with_its_position() {
    let cases: [(&str, &str, usize); 12] = [
        (
            "",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "Internal server error",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "<tool_errors>x</tool_errors>",
            "no <tool_error> or <validation_error> envelope found at byte 0",
            0,
        ),
        (
            "<tool_error><message>m</message></tool_error>",
            "<tool_error> has no `code` attribute at byte 12",
            12,
        ),
        (
            "<tool_error code=\"X\" severity=\"fatal\"></tool_error>",
            "unknown severity `fatal`: expected warning, error or critical at byte 38",
            38,
        ),
        (
            "<tool_error code=\"X\"><message>m</message>",
            "the envelope ends early: expected </tool_error> at byte 41",
            41,
        ),
        (
            "<tool_error code=\"X\"><message>a <b>bold</b></message></tool_error>",
            "unexpected element <b>: expected text or </message> at byte 35",
            35,
        ),
        (
            "<tool_error code=\"X\">stray<message>m</message></tool_error>",
            "unexpected text \"stray\": expected an element or </tool_error> at byte 26",
            26,
        ),
        (
            "<tool_error code=\"X\"><retry_after>soon</retry_after></tool_error>",
            "<retry_after> reads `soon`: expected a whole number of seconds, like `30 seconds` at byte 52",
            52,
        ),
        (
            "<tool_error code=\"X\"><message>a</message><message>b</message></tool_error>",
            "<message> appears twice at byte 50",
            50,
        ),
        (
            "<tool_error code=\"X\"><details><detail>v</detail></details></tool_error>",
            "<detail> has no `key` attribute at byte 38",
            38,
        ),
        (
            "<validation_error><field name=\"a\">x</field></validation_error>",
            "<validation_error> has no `action` attribute at byte 18",
            18,
        ),
    ];
    for (input, message, offset) in cases {
        let err = parse_envelope(input).expect_err(input);
        assert_eq!(err.to_string(), message, "{input:?}");
        assert_eq!(err.offset(), offset, "{input:?}");
    }
}

#[test]
fn malformed_xml_is_reported_as_such() {
    for input in [
        "<tool_error code=\"X\"><message>m</recovery></tool_error>",
        "<tool_error code=\"X\"><message>&nbsp;</message></tool_error>",
        "<tool_error code=\"X\"><message>a & b</message></tool_error>",
        "<tool_error code=X><message>m</message></tool_error>",
        "<tool_error code=\"X\" code=\"Y\"></tool_error>",
        "<tool_error code=\"X\"><message>&#0;</message></tool_error>",
        "<tool_error code=\"X\"",
    ] {
        let err = parse_envelope(input).expect_err(input);
        assert!(
            matches!(
                err.kind(),
                ParseErrorKind::Xml(_) | ParseErrorKind::UnexpectedEof { .. }
            ),
            "{input:?}: {err}"
        );
        assert!(err.offset() <= input.len(), "{input:?}: {err}");
    }
}

// --- arbitrary values -------------------------------------------------------------------------

/// Arbitrary text, weighted towards the characters that matter: markup, entities, quotes, the
/// CDATA end `]]>` (literal in text, as the vectors pin it), CR, tab and newline (raw in
/// attributes), forbidden characters (replaced by U+FFFD when rendering).
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(
            prop_oneof![
                Just("<"),
                Just(">"),
                Just("&"),
                Just("&amp;"),
                Just("\""),
                Just("'"),
                Just("]]>"),
                Just("<![CDATA["),
                Just("</message>"),
                Just("\u{0}"),
                Just("\r\n"),
                Just("\r"),
                Just("\t"),
                Just("\n"),
                Just(" "),
                Just(","),
                Just("\u{FFFE}"),
                Just("\u{FFFF}"),
                Just("é"),
                Just("🚫"),
                Just("a"),
            ],
            0..24
        )
        .prop_map(|parts| parts.concat()),
    ]
}

/// Whether `s` holds a character XML 1.0 forbids (rendering writes it as U+FFFD).
fn has_forbidden(s: &str) -> bool {
    s.chars().any(|c| {
        matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
    })
}

fn any_delta_class() -> impl Strategy<Value = DeltaClass> {
    prop_oneof![
        Just(DeltaClass::Breaking),
        Just(DeltaClass::Risky),
        Just(DeltaClass::Safe),
        Just(DeltaClass::Cosmetic)
    ]
}

fn any_severity() -> impl Strategy<Value = Severity> {
    prop_oneof![
        Just(Severity::Warning),
        Just(Severity::Error),
        Just(Severity::Critical)
    ]
}

fn any_code() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(
            ErrorCode::CANONICAL
                .iter()
                .map(|c| c.as_str().to_owned())
                .collect::<Vec<_>>()
        ),
        any_text(),
    ]
}

prop_compose! {
    fn any_tool_error()(
        code in any_code(),
        message in any_text(),
        recovery in any_text(),
        actions in proptest::collection::vec(any_text(), 0..4),
        details in proptest::collection::vec((any_text(), any_text()), 0..4),
        retry in prop_oneof![Just(0u64), 1u64..100_000, Just(u64::MAX)],
        severity in any_severity(),
    ) -> ToolError {
        ToolError::new(code, message)
            .suggest(recovery)
            .actions(actions)
            .with_details(details)
            .retry_after(retry)
            .severity(severity)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// SPEC section 8: `parse_envelope(&e.to_xml())` re-renders to the same bytes.
    #[test]
    fn parsing_is_the_inverse_of_rendering(e in any_tool_error(), before in any_text(), after in any_text()) {
        let xml = e.to_xml();
        let parsed = match parse_envelope(&xml) {
            Ok(Envelope::ToolError(p)) => p,
            other => return Err(TestCaseError::fail(format!("{other:?}\n{xml}"))),
        };
        prop_assert_eq!(parsed.to_xml(), xml.clone());
        // Code and severity read back, so the derived flags are the original's (the code as
        // rendered: forbidden characters became U+FFFD, which no canonical code has).
        let (got, want) = (Flags::from(&parsed), Flags::from(&e));
        prop_assert_eq!(got.code.as_str(), parsed.code().as_str());
        prop_assert_eq!(
            (got.is_error, got.category, got.retryable, got.retry_after_secs, got.severity),
            (want.is_error, want.category, want.retryable, want.retry_after_secs, want.severity)
        );
        prop_assert_eq!(Flags::from_value(&e.flags()), Some(Flags::from(&e)));

        // Surrounded by other text (that holds no envelope of its own), the same.
        prop_assume!(!before.contains("<tool_error") && !before.contains("<validation_error"));
        let surrounded = format!("{before}{xml}{after}");
        match parse_envelope(&surrounded) {
            Ok(Envelope::ToolError(p)) => prop_assert_eq!(p.to_xml(), xml),
            other => return Err(TestCaseError::fail(format!("{other:?}\n{surrounded}"))),
        }
    }

    /// `parse_envelope(&v.to_xml())` re-renders to the same bytes for every `ValidationError`
    /// `v`, and (without characters XML 1.0 forbids, which rendering replaces) reads back `v`.
    #[test]
    fn validation_envelopes_round_trip(
        action in any_text(),
        fields in proptest::collection::vec((any_text(), any_text()), 0..4),
        deltas in proptest::collection::vec((any_delta_class(), any_text(), any_text()), 0..3),
    ) {
        let clean = !has_forbidden(&action)
            && fields.iter().all(|(p, l)| !has_forbidden(p) && !has_forbidden(l))
            && deltas.iter().all(|(_, s, t)| !has_forbidden(s) && !has_forbidden(t));
        let mut sent = ValidationError::new(action);
        for (path, line) in fields {
            sent.push(path, line);
        }
        let sent = sent.with_contract_awareness(
            deltas
                .into_iter()
                .map(|(class, scope, text)| ScopedDelta { class, scope, text })
                .collect(),
        );
        let xml = sent.to_xml();
        let parsed = match parse_envelope(&xml) {
            Ok(Envelope::Validation(v)) => v,
            other => return Err(TestCaseError::fail(format!("{other:?}\n{xml}"))),
        };
        prop_assert_eq!(parsed.to_xml(), xml.clone());
        if clean {
            prop_assert_eq!(parsed, sent);
        }
    }

    /// Arbitrary input and every prefix of a real envelope: an answer, never a panic.
    #[test]
    fn garbage_never_panics(input in any_text(), e in any_tool_error(), cut in any::<prop::sample::Index>()) {
        let _ = parse_envelope(&input);
        let _ = parse_envelope(&format!("<tool_error code=\"X\">{input}</tool_error>"));
        let _ = parse_envelope(&format!("<validation_error action=\"a\">{input}</validation_error>"));
        let xml = e.to_xml();
        let boundaries: Vec<usize> = (0..=xml.len()).filter(|&i| xml.is_char_boundary(i)).collect();
        let end = boundaries[cut.index(boundaries.len())];
        match parse_envelope(&xml[..end]) {
            Ok(_) => prop_assert_eq!(end, xml.len(), "a cut envelope parsed"),
            Err(err) => prop_assert!(err.offset() <= end, "{}", err),
        }
    }

    /// The `parse_envelope` fuzz target's property (`fuzz/fuzz_targets/parse_envelope.rs`) on
    /// generated input that is not fusion's own rendering: arbitrary text, arbitrary content
    /// inside both roots, and real envelopes with arbitrary text spliced in. Whatever parses
    /// re-renders to a well-formed envelope (`]]>` aside, SPEC section 1 rule 4) that parses
    /// again, re-renders to the same bytes, and (without forbidden characters or character
    /// references in the input) parses to the same value.
    #[test]
    fn whatever_parses_re_renders_to_a_well_formed_fixed_point(
        input in any_text(),
        e in any_tool_error(),
        at in any::<prop::sample::Index>(),
    ) {
        let xml = e.to_xml();
        let validation = ValidationError::new("billing.charge")
            .with_problem("amount_cents", "Number too small. You sent: 0. Expected a number >= 1.")
            .to_xml();
        let splice = |xml: &str| {
            let boundaries: Vec<usize> = (0..=xml.len()).filter(|&i| xml.is_char_boundary(i)).collect();
            let i = boundaries[at.index(boundaries.len())];
            format!("{}{input}{}", &xml[..i], &xml[i..])
        };
        let candidates = [
            input.clone(),
            format!("<tool_error code=\"X\">{input}</tool_error>"),
            format!("<validation_error action=\"a\">{input}</validation_error>"),
            splice(&xml),
            splice(&validation),
        ];
        for candidate in candidates {
            let Ok(first) = parse_envelope(&candidate) else { continue };
            let rendered = first.to_xml();
            roxmltree::Document::parse(&rendered.replace("]]>", "]]&gt;")).map_err(|err| {
                TestCaseError::fail(format!("not well-formed: {err}\ninput: {candidate:?}\nrendered: {rendered:?}"))
            })?;
            let second = parse_envelope(&rendered).map_err(|err| {
                TestCaseError::fail(format!("the re-rendered envelope does not parse: {err}\n{rendered:?}"))
            })?;
            prop_assert_eq!(second.to_xml(), rendered.clone(), "not a fixed point: {:?}", candidate);
            if !has_forbidden(&candidate) && !candidate.contains("&#") {
                prop_assert_eq!(&second, &first, "re-parsed differs: {:?}", candidate);
            }
        }
    }
}

#[test]
fn flags_of_parsed_errors_follow_the_code() {
    let e = parse_tool_error(
        "<tool_error code=\"HANDOFF_CONNECTING\"><message>m</message></tool_error>",
    );
    let flags = Flags::from(&e);
    assert_eq!(flags.category, ErrorCategory::Transient);
    assert!(flags.retryable);
    let custom = parse_tool_error(
        "<tool_error code=\"ALREADY_PAID\" severity=\"warning\"><message>m</message></tool_error>",
    );
    let flags = Flags::from(&custom);
    assert_eq!(flags.category, ErrorCategory::Unknown);
    assert!(!flags.is_error);
}

#[test]
fn declared_entities_are_never_expanded() {
    let bomb = "<!DOCTYPE t [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>\
                <tool_error code=\"X\"><message>&b;</message></tool_error>";
    let err = parse_envelope(bomb).unwrap_err();
    assert!(err.to_string().contains("unknown entity `&b;`"), "{err}");
}

#[test]
fn flags_objects_are_read_strictly_where_it_matters() {
    let full = ToolError::rate_limited("m", 12)
        .explanation("tenant acme")
        .flags();
    let flags = Flags::from_value(&full).unwrap();
    assert_eq!(flags.to_value(), full, "to_value is the inverse");
    assert_eq!(flags.explanation.as_deref(), Some("tenant acme"));

    // A category this client does not know is `unknown`: never retried.
    let mut other = full.clone();
    other["errorCategory"] = "quota".into();
    assert_eq!(
        Flags::from_value(&other).unwrap().category,
        ErrorCategory::Unknown
    );
    // A zero delay is no delay.
    let mut zero = full.clone();
    zero["retryAfterSeconds"] = 0.into();
    assert_eq!(Flags::from_value(&zero).unwrap().retry_after_secs, None);
    // Missing or mistyped required keys, or an unknown severity: not flags at all (the client
    // then derives them from the envelope).
    for key in [
        "isError",
        "errorCategory",
        "isRetryable",
        "code",
        "severity",
    ] {
        let mut missing = full.clone();
        missing.as_object_mut().unwrap().remove(key);
        assert_eq!(Flags::from_value(&missing), None, "without {key}");
        let mut mistyped = full.clone();
        mistyped[key] = Value::from(12.5);
        assert_eq!(Flags::from_value(&mistyped), None, "{key} mistyped");
    }
    let mut fatal = full;
    fatal["severity"] = "fatal".into();
    assert_eq!(Flags::from_value(&fatal), None);
    assert_eq!(Flags::from_value(&Value::Null), None);
}

/// Found by the `parse_envelope` fuzz target (`fuzz/`): an envelope from another server holding
/// characters XML 1.0 forbids (here NUL in the code) is read as sent, and re-rendering writes
/// them as U+FFFD (SPEC section 1, rule 5), as for any value. The re-rendered envelope is then
/// a fixed point: it parses back to the same value and the same bytes.
#[test]
fn forbidden_characters_read_from_an_envelope_are_replaced_when_rendered_again() {
    let input = "<tool_error code=\"RATE_LIM\\\0\0\0\" sevezity=\"error\">\n<message>Slow down</message>\n</tool_error>";
    let first = parse_tool_error(input);
    assert_eq!(first.code().as_str(), "RATE_LIM\\\0\0\0");
    let rendered = first.to_xml();
    assert_eq!(
        rendered,
        "<tool_error code=\"RATE_LIM\\\u{FFFD}\u{FFFD}\u{FFFD}\" severity=\"error\">\n<message>Slow down</message>\n</tool_error>"
    );
    let second = parse_tool_error(&rendered);
    assert_eq!(second.code().as_str(), "RATE_LIM\\\u{FFFD}\u{FFFD}\u{FFFD}");
    assert_eq!(second.to_xml(), rendered);
    assert_eq!(parse_tool_error(&second.to_xml()), second);
}

/// Found by the same fuzz target: a character reference to a forbidden character (`&#024;`,
/// U+0018) is decoded as sent, and written as U+FFFD when rendered again.
#[test]
fn forbidden_character_references_are_replaced_when_rendered_again() {
    let input = "<validation_error action=\"billing.charge\">\n<contract_awareness>\n  <delta severity=\"BREAKING\" scope=\"billing.charge\">a&#024;b</delta>\n</contract_awareness>\n</validation_error>";
    let first = parse_validation(input);
    assert_eq!(first.contract_awareness()[0].text, "a\u{18}b");
    let rendered = first.to_xml();
    assert!(rendered.contains(">a\u{FFFD}b</delta>"), "{rendered}");
    let second = parse_validation(&rendered);
    assert_eq!(second.contract_awareness()[0].text, "a\u{FFFD}b");
    assert_eq!(second.to_xml(), rendered);
}
