//! Exhaustive checks of the two renderers: every tricky character at every position of
//! strings of 0 to 70 bytes, in every variable part of a `<tool_error>` and a
//! `<validation_error>`, plus very long strings and every C0 control. Each envelope must be
//! well-formed XML 1.0 (roxmltree) and read back to the text written (forbidden characters as
//! U+FFFD, line ends normalized).

use fusion::contract::{DeltaClass, ScopedDelta};
use fusion::{Severity, ToolError, ValidationError};

/// Characters that take every path of the escaper: the five XML specials, the C0 controls at the
/// edges of the saturating subtraction (NUL, 0x01, 0x1E, 0x1F) and the three allowed ones,
/// DEL, a C1 control, U+FFFE/U+FFFF and their neighbours with the same 0xEF lead byte, a BOM,
/// 2-, 3- and 4-byte UTF-8, the largest scalar value. (Every C0 control is checked below, in
/// one string.)
fn tricky() -> Vec<char> {
    vec![
        '\u{0}',
        '\u{1}',
        '\t',
        '\n',
        '\r',
        '\u{1E}',
        '\u{1F}',
        '&',
        '<',
        '>',
        '"',
        '\'',
        ']',
        '\u{7F}',
        '\u{85}',
        'é',
        '\u{EFFF}',
        '\u{F000}',
        '\u{FEFF}',
        '\u{FFFD}',
        '\u{FFFE}',
        '\u{FFFF}',
        '🚫',
        '\u{10FFFF}',
    ]
}

/// What an XML 1.0 parser reports for text we wrote: forbidden characters replaced, line ends
/// normalized.
fn expected_text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => '\u{FFFD}',
            _ => c,
        })
        .collect::<String>()
        .replace("\r\n", "\n")
        .replace('\r', "\n")
}

/// The same for an attribute value (tab and newline read as spaces).
fn expected_attr(s: &str) -> String {
    expected_text(s).replace(['\t', '\n'], " ")
}

/// Strings of `len` bytes of ASCII filler with `c` at byte `at` (the filler shortened so the
/// total stays `len` when `c` takes several bytes); all lengths and positions around the 4-,
/// 8-, 16-, 32-, 48- and 64-byte edges.
fn strings() -> Vec<String> {
    let mut out = vec![String::new()];
    for c in tricky() {
        let width = c.len_utf8();
        for len in width..=70 {
            for at in 0..=len - width {
                let mut s = "a".repeat(at);
                s.push(c);
                s.push_str(&"b".repeat(len - at - width));
                out.push(s);
            }
        }
    }
    out
}

/// `xml` (a `to_xml`), checked to equal what `write` (the same envelope's `write_xml`)
/// appends to a buffer holding something already.
fn rendered(xml: String, write: impl FnOnce(&mut String), part: &str, value: &str) -> String {
    let mut reused = String::from("prefix");
    write(&mut reused);
    assert_eq!(&reused[6..], xml, "write_xml differs: {part} {value:?}");
    xml
}

fn check_tool_error(e: &ToolError, code: &str, message: &str, part: &str, value: &str) {
    let xml = rendered(e.to_xml(), |out| e.write_xml(out), part, value);
    let doc = roxmltree::Document::parse(&xml)
        .unwrap_or_else(|err| panic!("not well-formed ({part} {value:?}): {err}\n{xml:?}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "tool_error");
    assert_eq!(
        root.attribute("code").map(expected_attr),
        Some(expected_attr(code))
    );
    let section = |name: &str| {
        root.children()
            .find(|n| n.has_tag_name(name))
            .unwrap_or_else(|| panic!("no <{name}> ({part} {value:?})\n{xml}"))
    };
    assert_eq!(
        expected_text(section("message").text().unwrap_or("")),
        expected_text(message),
        "{part} {value:?}"
    );
    let detail = section("details")
        .children()
        .find(|n| n.is_element())
        .unwrap();
    let action = section("available_actions")
        .children()
        .find(|n| n.is_element())
        .unwrap();
    match part {
        "recovery" => assert_eq!(
            expected_text(section("recovery").text().unwrap_or("")),
            expected_text(value)
        ),
        "action" => assert_eq!(
            expected_text(action.text().unwrap_or("")),
            expected_text(value)
        ),
        "detail key" => assert_eq!(
            detail.attribute("key").map(expected_attr),
            Some(expected_attr(value))
        ),
        "detail value" => assert_eq!(
            expected_text(detail.text().unwrap_or("")),
            expected_text(value)
        ),
        _ => {}
    }
}

#[test]
fn tool_error_is_well_formed_for_every_tricky_character_at_every_position() {
    for s in strings() {
        let base = |code: &str, message: &str| {
            ToolError::new(code, message)
                .severity(Severity::Warning)
                .retry_after(u64::MAX)
        };
        let plain = "plain";
        let cases = [
            (
                "code",
                base(&s, plain)
                    .suggest(plain)
                    .actions([plain])
                    .detail(plain, plain),
                s.as_str(),
                plain,
            ),
            (
                "message",
                base("X", &s)
                    .suggest(plain)
                    .actions([plain])
                    .detail(plain, plain),
                "X",
                s.as_str(),
            ),
            (
                "recovery",
                base("X", plain)
                    .suggest(s.as_str())
                    .actions([plain])
                    .detail(plain, plain),
                "X",
                plain,
            ),
            (
                "action",
                base("X", plain)
                    .suggest(plain)
                    .actions([s.as_str(), plain])
                    .detail(plain, plain),
                "X",
                plain,
            ),
            (
                "detail key",
                base("X", plain)
                    .suggest(plain)
                    .actions([plain])
                    .detail(s.as_str(), plain),
                "X",
                plain,
            ),
            (
                "detail value",
                base("X", plain)
                    .suggest(plain)
                    .actions([plain])
                    .detail(plain, s.as_str()),
                "X",
                plain,
            ),
        ];
        for (part, e, code, message) in cases {
            // An empty recovery drops the section; the check needs it.
            if part == "recovery" && s.is_empty() {
                continue;
            }
            check_tool_error(&e, code, message, part, &s);
        }
    }
}

fn check_validation(e: &ValidationError, part: &str, value: &str) {
    let xml = rendered(e.to_xml(), |out| e.write_xml(out), part, value);
    let doc = roxmltree::Document::parse(&xml)
        .unwrap_or_else(|err| panic!("not well-formed ({part} {value:?}): {err}\n{xml:?}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "validation_error");
    // Problems are sorted by path: the one under test is the one not named `z`.
    let field = root
        .children()
        .find(|n| n.has_tag_name("field") && n.attribute("name") != Some("z"))
        .unwrap();
    let delta = root
        .children()
        .find(|n| n.has_tag_name("contract_awareness"))
        .unwrap()
        .children()
        .find(|n| n.is_element())
        .unwrap();
    let (got, want) = match part {
        "action" => (
            root.attribute("action").map(expected_attr),
            expected_attr(value),
        ),
        "path" => (
            field.attribute("name").map(expected_attr),
            expected_attr(value),
        ),
        "line" => (field.text().map(expected_text), expected_text(value)),
        "scope" => (
            delta.attribute("scope").map(expected_attr),
            expected_attr(value),
        ),
        _ => (delta.text().map(expected_text), expected_text(value)),
    };
    assert_eq!(got.unwrap_or_default(), want, "{part} {value:?}\n{xml}");
}

#[test]
fn validation_error_is_well_formed_for_every_tricky_character_at_every_position() {
    let build = |action: &str, path: &str, line: &str, scope: &str, text: &str| {
        ValidationError::new(action)
            .with_problem(path, line)
            .with_problem("z", "plain")
            .with_contract_awareness(vec![ScopedDelta {
                class: DeltaClass::Breaking,
                scope: scope.to_owned(),
                text: text.to_owned(),
            }])
    };
    let p = "plain";
    for s in strings() {
        let s = s.as_str();
        check_validation(&build(s, p, p, p, p), "action", s);
        check_validation(&build(p, s, p, p, p), "path", s);
        check_validation(&build(p, p, s, p, p), "line", s);
        check_validation(&build(p, p, p, s, p), "scope", s);
        check_validation(&build(p, p, p, p, s), "text", s);
    }
}

#[test]
fn every_c0_control_and_huge_strings_render_well_formed() {
    let controls: String = (0u32..0x20).map(|c| char::from_u32(c).unwrap()).collect();
    let mixed = format!("{controls}<&>\"'\u{FFFE}\u{FFFF}🚫é").repeat(4_000);
    let plain = "x".repeat(1 << 18);
    for s in [controls.as_str(), mixed.as_str(), plain.as_str()] {
        let e = ToolError::new(s, s)
            .suggest(s)
            .actions([s, s])
            .detail(s, s)
            .retry_after(u64::MAX);
        check_tool_error(&e, s, s, "detail value", s);
        let v = ValidationError::new(s).with_problem(s, s);
        let xml = v.to_xml();
        roxmltree::Document::parse(&xml).expect("well-formed");
    }
}
