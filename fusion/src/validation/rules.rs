//! `validator` rule failures turned into field paths and lines: each built-in rule worded on
//! its own (email, url, length, range, regex, contains, must_match, ...), custom rules by
//! their message and params. `ValidationErrors` is a tree of hash maps: it is walked in
//! sorted key order so the envelope is deterministic.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;
use validator::{ValidationError as RuleFailure, ValidationErrors, ValidationErrorsKind};

use super::path::FieldPath;
use super::report::{Check, Report, Source, line};
use super::schema::{count, format_words};
use super::sent::{self, REDACTED};

/// The key `validator` uses for struct-level (`#[validate(schema(..))]`) failures.
const STRUCT_LEVEL: &str = "__all__";
/// The key `validator` wraps list failures in when a collection is validated directly.
const LIST_WRAPPER: &str = "_tmp_validator";

/// The words for the built-in rules whose line does not depend on the rule's params.
const RULE_WORDS: &[(&str, &str, &str)] = &[
    (
        "credit_card",
        "Invalid credit card number",
        "a valid credit card number",
    ),
    (
        "non_control_character",
        "Contains control characters",
        "text without control characters",
    ),
    ("ip", "Invalid IP address", "a valid IPv4 or IPv6 address"),
];

/// Adds a problem for every rule failure in `errors`, the failures of the value at `base`.
pub(crate) fn collect(report: &mut Report<'_>, errors: &ValidationErrors, base: &FieldPath) {
    let mut entries: Vec<_> = errors.errors().iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (name, kind) in entries {
        let struct_level = name == STRUCT_LEVEL;
        let path = if struct_level || name == LIST_WRAPPER {
            base.clone()
        } else {
            base.child_key(json_name(report, base, name))
        };
        match kind {
            ValidationErrorsKind::Field(failures) => {
                for failure in failures {
                    let (text, check) = rule_line(report, &path, failure, struct_level);
                    report.push(path.clone(), text, Source::Rule, check);
                }
            }
            ValidationErrorsKind::Struct(inner) => collect(report, inner, &path),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    collect(report, inner, &path.child_index(*index));
                }
            }
        }
    }
}

/// The JSON name of Rust field `rust` under `base`: the name itself when the arguments or the
/// schema know it, else its camelCase, PascalCase or kebab-case form when one of those is
/// known (`#[serde(rename_all = ..)]`), else the Rust name.
fn json_name(report: &Report<'_>, base: &FieldPath, rust: &str) -> String {
    let sent = base.lookup(report.args()).and_then(Value::as_object);
    let declared = (report.schema_at(base))
        .map(|(shape, node)| shape.keys(node, "properties"))
        .unwrap_or_default();
    let known = |name: &str| sent.is_some_and(|m| m.contains_key(name)) || declared.contains(&name);
    if known(rust) {
        return rust.to_owned();
    }
    let camel = camel_case(rust);
    let mut pascal = camel.clone();
    if let Some(first) = pascal.get(..1) {
        let upper = first.to_ascii_uppercase();
        pascal.replace_range(..1, &upper);
    }
    let kebab = rust.replace('_', "-");
    [camel, pascal, kebab]
        .into_iter()
        .find(|c| known(c))
        .unwrap_or_else(|| rust.to_owned())
}

fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The line for one rule failure at `path`, and what it checks. A struct-level rule's echo of
/// the object is cut between members, not inside a value.
fn rule_line(
    report: &Report<'_>,
    path: &FieldPath,
    failure: &RuleFailure,
    struct_level: bool,
) -> (String, Check) {
    let params = &failure.params;
    // What the model wrote wins over the Rust value `validator` recorded.
    let value = path
        .lookup(report.args())
        .or_else(|| params.get("value").filter(|v| !v.is_null()));
    let mut sent = match value {
        Some(value) if struct_level => report.sent_members(path, value),
        _ => report.sent_value(path, value),
    };
    let (problem, expected, check): (Cow<'static, str>, String, Check) = match failure.code.as_ref()
    {
        code @ ("email" | "url") => {
            let (problem, expected, check) = format_words(code);
            (problem.into(), expected, check)
        }
        "length" => {
            let (problem, expected) = length_words(params, value);
            (problem.into(), expected, Check::Length)
        }
        "range" => {
            let (problem, expected) = range_words(params, value);
            (problem.into(), expected, Check::Range)
        }
        "regex" => {
            let expected = (report.schema_at(path))
                .and_then(|(shape, node)| shape.pattern(node))
                .map_or_else(
                    || "text in the required format".to_owned(),
                    |p| format!("text matching the pattern '{p}'"),
                );
            (
                "Does not match the required pattern".into(),
                expected,
                Check::Pattern,
            )
        }
        "contains" => (
            "Missing required text".into(),
            format!("text containing {}", needle(report, params)),
            Check::Pattern,
        ),
        "does_not_contain" => (
            "Contains forbidden text".into(),
            format!("text without {}", needle(report, params)),
            Check::Other,
        ),
        "must_match" => {
            let other_value = params.get("other");
            let other = matching_field(report, path, other_value);
            if other.as_ref().is_some_and(|o| report.is_secret(o))
                || other_value.is_some_and(|v| sent::hidden(v, None, report))
            {
                // The confirmation of a secret: a near copy of it is as good as the secret.
                sent = REDACTED.to_owned();
            }
            let expected = match other.as_ref().and_then(FieldPath::last_key) {
                Some(name) => format!("the same value as '{name}'"),
                None => "the same value as the field it must match".to_owned(),
            };
            (
                "Does not match the other field".into(),
                expected,
                Check::Other,
            )
        }
        "required" => (
            "Missing required field".into(),
            report.required_expectation(path),
            Check::Required,
        ),
        code => match RULE_WORDS.iter().find(|(rule, ..)| *rule == code) {
            Some((_, problem, expected)) => ((*problem).into(), (*expected).into(), Check::Other),
            None => {
                let mut expected = format!("a value the '{code}' rule accepts");
                if !report.is_secret(path) {
                    push_params(report, &mut expected, params);
                }
                (
                    format!("Rejected by the '{code}' rule").into(),
                    expected,
                    Check::Other,
                )
            }
        },
    };
    // A custom message that quotes a secret value gives way to the built-in words: they are
    // never rewritten, and a message is not a value that can be redacted in place.
    let problem = failure
        .message
        .as_deref()
        .filter(|m| !report.is_secret_text(m))
        .unwrap_or(&problem);
    (line(problem, &sent, &expected), check)
}

/// `'needle'` from a `contains`/`does_not_contain` failure.
fn needle(report: &Report<'_>, params: &HashMap<Cow<'static, str>, Value>) -> String {
    let mut out = String::new();
    match params.get("needle") {
        Some(needle) => report.push_echoed(&mut out, needle),
        None => out.push_str("the required text"),
    }
    out
}

/// The sibling of `path` holding `other` (`must_match` records the other field's value, not
/// its name): among the other siblings whose value equals it, a secret one first (the field a
/// confirmation confirms is the password, not a hint that happens to hold the same text), then
/// the first in the schema's property order, then the first by name.
fn matching_field(
    report: &Report<'_>,
    path: &FieldPath,
    other: Option<&Value>,
) -> Option<FieldPath> {
    let other = other.filter(|v| !v.is_null())?;
    let parent = path.parent();
    let own = path.last_key();
    let siblings = parent.lookup(report.args())?.as_object()?;
    let declared = (report.schema_at(&parent))
        .map(|(shape, node)| shape.keys(node, "properties"))
        .unwrap_or_default();
    siblings
        .iter()
        .filter(|(k, v)| *v == other && Some(k.as_str()) != own)
        .map(|(k, _)| {
            let field = parent.child_key(k.as_str());
            let rank = (
                !report.is_secret(&field),
                declared
                    .iter()
                    .position(|d| *d == k.as_str())
                    .unwrap_or(usize::MAX),
                k.as_str(),
            );
            (rank, field)
        })
        .min_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, field)| field)
}

/// ` (max: 3, min: 1)`: a custom failure's params other than `value`, sorted by name, each
/// with copies of secret values redacted.
fn push_params(report: &Report<'_>, out: &mut String, params: &HashMap<Cow<'static, str>, Value>) {
    let mut named: Vec<_> = params.iter().filter(|(k, _)| *k != "value").collect();
    if named.is_empty() {
        return;
    }
    named.sort_by(|a, b| a.0.cmp(b.0));
    out.push_str(" (");
    for (n, (key, value)) in named.into_iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(key);
        out.push_str(": ");
        report.push_echoed(out, value);
    }
    out.push(')');
}

/// The problem and expectation for a `length` failure: characters for text (counted as
/// `validator` counts them, in chars), items for lists.
fn length_words(
    params: &HashMap<Cow<'static, str>, Value>,
    value: Option<&Value>,
) -> (&'static str, String) {
    let (unit, actual) = match value {
        Some(Value::Array(items)) => ("item", Some(items.len() as u64)),
        Some(Value::Object(map)) => ("field", Some(map.len() as u64)),
        Some(Value::String(s)) => ("character", Some(s.chars().count() as u64)),
        _ => ("character", None),
    };
    let (short, long) = match unit {
        "item" => ("Too few items", "Too many items"),
        "field" => ("Too few fields", "Too many fields"),
        _ => ("Too short", "Too long"),
    };
    let min = params.get("min").and_then(Value::as_u64);
    let max = params.get("max").and_then(Value::as_u64);
    if let Some(equal) = params.get("equal").and_then(Value::as_u64) {
        return ("Wrong length", format!("exactly {}", count(equal, unit)));
    }
    let expected = match (min, max) {
        (Some(min), Some(max)) => format!("between {min} and {max} {unit}s"),
        (Some(min), None) => format!("at least {}", count(min, unit)),
        (None, Some(max)) => format!("at most {}", count(max, unit)),
        (None, None) => "a different length".to_owned(),
    };
    let problem = match actual {
        Some(n) if min.is_some_and(|m| n < m) => short,
        Some(n) if max.is_some_and(|m| n > m) => long,
        _ => "Wrong length",
    };
    (problem, expected)
}

/// The problem and expectation for a `range` failure.
fn range_words(
    params: &HashMap<Cow<'static, str>, Value>,
    value: Option<&Value>,
) -> (&'static str, String) {
    let get = |name: &str| params.get(name).filter(|v| v.is_number());
    let (min, max) = (get("min"), get("max"));
    let (exclusive_min, exclusive_max) = (get("exclusive_min"), get("exclusive_max"));
    // Whether the value and `limit` are both numbers and `outside` says the value is past it.
    let past = |limit: Option<&Value>, outside: fn(f64, f64) -> bool| {
        let (v, l) = (value.and_then(Value::as_f64), limit.and_then(Value::as_f64));
        v.zip(l).is_some_and(|(v, l)| outside(v, l))
    };
    let problem = if past(min, |v, l| v < l) || past(exclusive_min, |v, l| v <= l) {
        "Number too small"
    } else if past(max, |v, l| v > l) || past(exclusive_max, |v, l| v >= l) {
        "Number too large"
    } else {
        "Out of range"
    };
    let expected = match (min, max, exclusive_min, exclusive_max) {
        (Some(min), Some(max), None, None) => format!("a number from {min} to {max}"),
        (None, None, None, None) => "a number in the allowed range".to_owned(),
        _ => {
            let conditions: Vec<String> = [
                (">=", min),
                (">", exclusive_min),
                ("<=", max),
                ("<", exclusive_max),
            ]
            .into_iter()
            .filter_map(|(op, limit)| limit.map(|l| format!("{op} {l}")))
            .collect();
            format!("a number {}", conditions.join(" and "))
        }
    };
    (problem, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_becomes_camel_case() {
        assert_eq!(camel_case("customer_id"), "customerId");
        assert_eq!(camel_case("a_b_c"), "aBC");
        assert_eq!(camel_case("plain"), "plain");
    }
}
