//! Structural problems: `jsonschema` errors turned into field paths and lines, one line per
//! problem (a missing field, a wrong type, each unknown field, a value outside an enum, ...).

use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
use jsonschema::{JsonType, ValidationError as SchemaFailure};
use serde_json::Value;

use super::path::FieldPath;
use super::redundant::worth_reporting;
use super::report::{Check, Report, Source, line};
use super::sent;
use super::shape::{join_or, type_phrase};
use crate::schema::escape_pointer;

/// Adds a problem for every error `validator` finds in the arguments of `report`.
pub(crate) fn collect(report: &mut Report<'_>, validator: &jsonschema::Validator) {
    let errors: Vec<SchemaFailure<'_>> = validator.iter_errors(report.args()).collect();
    let keywords: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.instance_path().as_str(), e.kind().keyword()))
        .collect();
    for (error, reported) in errors.iter().zip(worth_reporting(&keywords)) {
        if reported {
            convert(report, error);
        }
    }
}

/// What the keys of an object with key `patterns` (and the `known` fields, if any) must be,
/// in words: schemars' patterns for maps keyed by numbers are named, others quoted.
fn key_expectation(known: &[&str], patterns: &[&str]) -> String {
    let keys: Vec<String> = patterns
        .iter()
        .map(|pattern| match *pattern {
            r"^\d+$" => "a key that is a non-negative integer, such as '1'".to_owned(),
            r"^-?\d+$" => "a key that is an integer, such as '-1' or '1'".to_owned(),
            other => format!("a key matching the pattern {other}"),
        })
        .collect();
    let keys = join_or(keys.iter().map(String::as_str));
    if known.is_empty() {
        keys
    } else {
        format!("one of the known fields ({}) or {keys}", known.join(", "))
    }
}

/// The words for the keywords whose line does not depend on the keyword's value (`oneOf` here
/// is a value matching several branches: matching none is worded apart).
const FIXED: &[(&str, &str, &str)] = &[
    (
        "unevaluatedItems",
        "Too many items",
        "fewer items (remove the extra ones)",
    ),
    ("uniqueItems", "Duplicate items", "every item to be unique"),
    (
        "contains",
        "No matching item",
        "at least one item of the required kind",
    ),
    (
        "oneOf",
        "Ambiguous value",
        "a value that matches exactly one of the allowed shapes",
    ),
    ("not", "Value not allowed", "a different value"),
    (
        "falseSchema",
        "Value not allowed here",
        "no value at this position",
    ),
    (
        "propertyNames",
        "Invalid field name",
        "field names the schema allows",
    ),
];

/// The problem and expectation for a number outside a bound: `a number >= 10`.
fn bound(problem: &'static str, op: &str, limit: &Value) -> (&'static str, String, Check) {
    (problem, format!("a number {op} {limit}"), Check::Range)
}

fn convert(report: &mut Report<'_>, error: &SchemaFailure<'_>) {
    let path = FieldPath::from_pointer(error.instance_path().as_str(), report.args());
    // The arms that write a whole line push it themselves; the others give the problem and
    // the expectation, with what was sent at `path` between them.
    let (problem, expected, check) = match error.kind() {
        Kind::Required { property } => {
            let field = path.child_key(property.as_str().unwrap_or_default());
            let text = report.missing_line(&field);
            report.push(field, text, Source::Schema, Check::Required);
            return;
        }
        Kind::AdditionalProperties { unexpected } | Kind::UnevaluatedProperties { unexpected } => {
            let (known, patterns) = match report.schema_at(&path) {
                Some((shape, node)) => (
                    shape.known_properties(node),
                    shape.keys(node, "patternProperties"),
                ),
                _ => (Vec::new(), Vec::new()),
            };
            // An object whose keys follow patterns (a map keyed by numbers) has no unknown
            // fields, only keys that do not fit: the key is what is wrong, and what it must
            // look like is what the model needs.
            let keys = (!patterns.is_empty()).then(|| key_expectation(&known, &patterns));
            let mut names: Vec<&String> = unexpected.iter().collect();
            names.sort();
            for name in names {
                let field = path.child_key(name.as_str());
                let (text, check) = match &keys {
                    Some(expected) => (report.invalid_key_line(&field, expected), Check::Other),
                    None => (report.unknown_field_line(&field, &known), Check::Unknown),
                };
                report.push(field, text, Source::Schema, check);
            }
            return;
        }
        Kind::AnyOf { context } | Kind::OneOfNotValid { context } => {
            let at = error.instance_path().as_str();
            if let Some(branch) = only_applicable_branch(at, context) {
                for inner in branch {
                    convert(report, inner);
                }
                return;
            }
            let (field, text) = tag_line(report, &path, at, context).unwrap_or_else(|| {
                let wrong_type = every_branch(context, |kind, path| {
                    matches!(kind, Kind::Type { .. }) && path == at
                });
                let text = no_branch_line(report, &path, wrong_type);
                (path, text)
            });
            report.push(field, text, Source::Schema, Check::Other);
            return;
        }
        Kind::Enum { options } => {
            let options: Vec<&Value> = options.as_array().into_iter().flatten().collect();
            let text = report.not_allowed_line(&path, || sent::allowed(&options));
            report.push(path, text, Source::Schema, Check::Other);
            return;
        }
        Kind::Constant { expected_value } => {
            let text = report.not_allowed_line(&path, || sent::allowed(&[expected_value.as_ref()]));
            report.push(path, text, Source::Schema, Check::Other);
            return;
        }
        Kind::Type { kind } => ("Wrong type", type_expectation(kind), Check::Other),
        Kind::Minimum { limit } => bound("Number too small", ">=", limit),
        Kind::ExclusiveMinimum { limit } => bound("Number too small", ">", limit),
        Kind::Maximum { limit } => bound("Number too large", "<=", limit),
        Kind::ExclusiveMaximum { limit } => bound("Number too large", "<", limit),
        Kind::MultipleOf { multiple_of } => (
            "Number not allowed",
            format!("a multiple of {multiple_of}"),
            Check::Other,
        ),
        Kind::MinLength { limit } => ("Too short", at_least(*limit, "character"), Check::Length),
        Kind::MaxLength { limit } => ("Too long", at_most(*limit, "character"), Check::Length),
        Kind::MinItems { limit } => ("Too few items", at_least(*limit, "item"), Check::Length),
        Kind::MaxItems { limit } => ("Too many items", at_most(*limit, "item"), Check::Length),
        Kind::AdditionalItems { limit } => (
            "Too many items",
            at_most(*limit as u64, "item"),
            Check::Other,
        ),
        Kind::MinProperties { limit } => {
            ("Too few fields", at_least(*limit, "field"), Check::Other)
        }
        Kind::MaxProperties { limit } => {
            ("Too many fields", at_most(*limit, "field"), Check::Other)
        }
        Kind::Pattern { pattern } => (
            "Does not match the required pattern",
            format!("text matching the pattern '{pattern}'"),
            Check::Pattern,
        ),
        Kind::Format { format } => {
            let (problem, expected, check) = format_words(format);
            let text = line(&problem, &report.sent(&path), &expected);
            report.push(path, text, Source::Schema, check);
            return;
        }
        other => match FIXED
            .iter()
            .find(|(keyword, ..)| *keyword == other.keyword())
        {
            Some((_, problem, expected)) => (*problem, (*expected).to_owned(), Check::Other),
            None => (
                "Invalid value",
                format!("a value valid for the '{}' rule", other.keyword()),
                Check::Other,
            ),
        },
    };
    let text = line(problem, &report.sent(&path), &expected);
    report.push(path, text, Source::Schema, check);
}

/// The one branch of an `anyOf`/`oneOf` that the value at `at` is meant for, when there is
/// exactly one: reporting its errors gives precise paths (`address.zip` for an
/// `Option<Address>`, which schemars writes as `anyOf: [{$ref}, {type: null}]`; `shape.h` for
/// a `{"kind": "rect"}` missing its `h`) instead of "matches no shape".
///
/// A branch is not meant for the value when it refuses the value as a whole (a wrong type, or
/// a value outside its `enum`/`const`: the unit variants of an enum) or refuses the value of
/// one of its fields by `const`, which is how schemars writes a tag: `kind` of an internally
/// tagged enum, `t` of an adjacently tagged one. The branches of an externally tagged enum
/// (`{"Move": {..}}`) are told apart by their type, then by the one key each requires.
fn only_applicable_branch<'e>(
    at: &str,
    context: &'e [Vec<SchemaFailure<'static>>],
) -> Option<&'e [SchemaFailure<'static>]> {
    let refuses = |branch: &[SchemaFailure<'static>]| {
        branch.iter().any(|e| {
            let path = e.instance_path().as_str();
            match e.kind() {
                Kind::Type { .. } | Kind::Enum { .. } | Kind::Constant { .. } => path == at,
                _ => false,
            }
        }) || branch.iter().any(|e| {
            matches!(e.kind(), Kind::Constant { .. }) && child_of(e.instance_path().as_str(), at)
        })
    };
    let mut fitting = context
        .iter()
        .filter(|branch| !branch.is_empty() && !refuses(branch));
    let first = fitting.next()?;
    let Some(second) = fitting.next() else {
        return Some(first);
    };
    // Several objects fit: keep the ones whose required key the value has (externally tagged
    // variants each require their own key, and refuse others with `additionalProperties`).
    let misses_key = |branch: &[SchemaFailure<'static>]| {
        branch
            .iter()
            .any(|e| matches!(e.kind(), Kind::Required { .. }) && e.instance_path().as_str() == at)
    };
    let mut keyed = [first, second]
        .into_iter()
        .chain(fitting)
        .filter(|branch| !misses_key(branch));
    match (keyed.next(), keyed.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// Whether JSON pointer `path` names a direct child of `parent`.
fn child_of(path: &str, parent: &str) -> bool {
    path.strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| !name.contains('/'))
}

/// The problem with the tag of a tagged union (a field every branch fixes with `const`, such
/// as `kind`), when no branch is meant for the value: the tag is missing from every branch's
/// point of view, or has a value none of them takes. The line is the tag's, listing the
/// values the tag takes, so the model fixes the tag before anything else.
fn tag_line(
    report: &Report<'_>,
    path: &FieldPath,
    at: &str,
    context: &[Vec<SchemaFailure<'static>>],
) -> Option<(FieldPath, String)> {
    let (shape, node) = report.schema_at(path)?;
    let (tag, values) = shape.tag(node)?;
    let field = path.child_key(tag);
    let pointer = format!("{at}/{}", escape_pointer(tag));
    let wrong_value = every_branch(context, |kind, path| {
        matches!(kind, Kind::Constant { .. }) && path == pointer
    });
    let missing = every_branch(context, |kind, path| {
        matches!(kind, Kind::Required { property } if property.as_str() == Some(tag)) && path == at
    });
    let expected = sent::allowed(&values);
    let line = if missing {
        line("Missing required field", &report.sent(&field), &expected)
    } else if wrong_value {
        line("Value not allowed", &report.sent(&field), &expected)
    } else {
        return None;
    };
    Some((field, line))
}

/// Whether every branch in `context` has an error that `is` (its kind, its instance path).
fn every_branch(context: &[Vec<SchemaFailure<'static>>], is: impl Fn(&Kind, &str) -> bool) -> bool {
    (context.iter()).all(|branch| {
        branch
            .iter()
            .any(|e| is(e.kind(), e.instance_path().as_str()))
    })
}

/// The line for a value that matches none of several alternatives; `wrong_type` when every
/// alternative refuses its type.
fn no_branch_line(report: &Report<'_>, path: &FieldPath, wrong_type: bool) -> String {
    let schema = report.schema_at(path);
    if let Some(literals) = schema.and_then(|(shape, node)| shape.literals(node, 0)) {
        return report.not_allowed_line(path, || sent::allowed(&literals));
    }
    // Objects told apart by the fields they require (an untagged enum): name those fields,
    // where "an object" would be no help for a value that is one.
    let outlines =
        (schema.filter(|_| !wrong_type)).and_then(|(shape, node)| shape.required_outlines(node));
    let expected = match outlines {
        Some(outlines) => format!("one of: {}", outlines.join("; ")),
        None => report.expectation(path, "a value matching one of the allowed shapes"),
    };
    let problem = if wrong_type {
        "Wrong type"
    } else {
        "Does not match any allowed shape"
    };
    line(problem, &report.sent(path), &expected)
}

fn type_expectation(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => type_phrase(t.as_str()).to_owned(),
        // A fixed order, `null` last: "a string or null" reads better than the set's bit order.
        TypeKind::Multiple(set) => join_or(
            [
                JsonType::String,
                JsonType::Integer,
                JsonType::Number,
                JsonType::Boolean,
                JsonType::Array,
                JsonType::Object,
                JsonType::Null,
            ]
            .into_iter()
            .filter(|t| set.contains(*t))
            .map(|t| type_phrase(t.as_str())),
        ),
    }
}

/// `at least 3 characters`.
fn at_least(n: u64, unit: &str) -> String {
    format!("at least {}", count(n, unit))
}

/// `at most 1 item`.
fn at_most(n: u64, unit: &str) -> String {
    format!("at most {}", count(n, unit))
}

/// `1 character`, `3 characters`.
pub(crate) fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// The words for the `format`s with their own: the problem and an expectation with an example.
const FORMATS: &[(&str, &str, &str)] = &[
    ("email", "Invalid email format", "a valid email address"),
    (
        "uri",
        "Invalid URL format",
        "a valid URL such as 'https://example.com/path'",
    ),
    (
        "uri-reference",
        "Invalid URI reference",
        "a valid URI or relative reference",
    ),
    (
        "date-time",
        "Invalid date-time format",
        "an RFC 3339 date-time such as '2026-01-31T09:30:00Z'",
    ),
    ("date", "Invalid date format", "a date such as '2026-01-31'"),
    ("time", "Invalid time format", "a time such as '09:30:00Z'"),
    (
        "duration",
        "Invalid duration format",
        "an ISO 8601 duration such as 'P3DT4H'",
    ),
    (
        "uuid",
        "Invalid UUID format",
        "a UUID such as '123e4567-e89b-12d3-a456-426614174000'",
    ),
    (
        "ipv4",
        "Invalid IPv4 address",
        "an IPv4 address such as '192.0.2.1'",
    ),
    (
        "ipv6",
        "Invalid IPv6 address",
        "an IPv6 address such as '2001:db8::1'",
    ),
    (
        "hostname",
        "Invalid hostname",
        "a valid hostname such as 'example.com'",
    ),
    (
        "regex",
        "Invalid regular expression",
        "a valid regular expression",
    ),
];

/// The problem and expectation for a string that fails a `format`, and what it checks.
pub(crate) fn format_words(format: &str) -> (String, String, Check) {
    let format = match format {
        "idn-email" => "email",
        "iri" | "url" => "uri",
        "iri-reference" => "uri-reference",
        "idn-hostname" => "hostname",
        other => other,
    };
    let check = match format {
        "email" => Check::Email,
        "uri" | "uri-reference" => Check::Url,
        _ => Check::Other,
    };
    match FORMATS.iter().find(|(name, ..)| *name == format) {
        Some((_, problem, expected)) => ((*problem).to_owned(), (*expected).to_owned(), check),
        None => (
            format!("Invalid {format} format"),
            format!("a valid {format} value"),
            check,
        ),
    }
}
