//! Arbitrary values: parsing inverts rendering, a cut envelope never parses, whatever parses
//! re-renders to a fixed point.

use fusion::client::{Envelope, Flags, parse_envelope};
use fusion::contract::{DeltaClass, ScopedDelta};
use fusion::{ErrorCode, Severity, ToolError, ValidationError};
use proptest::prelude::*;

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

    /// Parsing inverts rendering: `parse_envelope(&e.to_xml())` re-renders to the same bytes.
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
    /// re-renders to a well-formed envelope (`]]>` aside: the renderer writes it raw in text) that parses
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
            roxmltree::Document::parse(&rendered).map_err(|err| {
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
