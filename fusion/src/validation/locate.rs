//! Where a deserialization failure is: `serde_path_to_error`'s path laid over the arguments,
//! with the map keys it could not record found in the arguments themselves.
//!
//! serde_json reads an object's keys as strings and `serde_path_to_error` records each one as
//! it was read. The keys of a map keyed by another type are recorded as the integer they were
//! read as (`1` for the key `"1 "`), or not at all ([`Segment::Unknown`]: enums, newtypes,
//! floats, and any key that failed before it was read). Such a key is found in the object by
//! what the failure's message quotes and by what follows it on the path.

use serde_json::{Map, Number, Value};
use serde_path_to_error::{Path, Segment};

use super::path::FieldPath;

/// serde_json's message for a map key that is not a number, or has more after its number.
const NOT_A_NUMBER: &str = "expected key to be a number in quotes";

/// The field path of a failure with `message` at `path` in `args`, and whether the failure is
/// the path's last key itself (a map key that could not be read as the map's key type, `"300"`
/// for a `u8` key) rather than the value under it. A key that cannot be found ends the path at
/// its object.
pub(crate) fn locate(args: &Value, path: &Path, message: &str) -> (FieldPath, bool) {
    let segments: Vec<&Segment> = path.iter().collect();
    let mut located = FieldPath::root();
    let mut here = Some(args);
    for (n, segment) in segments.iter().enumerate() {
        let recorded = match segment {
            Segment::Seq { index } => {
                located.push_index(*index);
                here = here.and_then(|value| value.get(*index));
                continue;
            }
            Segment::Map { key } | Segment::Enum { variant: key } => Some(key.as_str()),
            Segment::Unknown => None,
        };
        let Some(object) = here.and_then(Value::as_object) else {
            // An enum variant sent as a bare string (`"Circle"`) whose content is missing.
            let Some(key) = recorded else {
                return (located, false);
            };
            located.push_key(key);
            here = None;
            continue;
        };
        let Some((key, at_key)) = find_key(object, recorded, &segments[n + 1..], message) else {
            return (located, false);
        };
        located.push_key(key.as_str());
        if at_key {
            return (located, true);
        }
        here = object.get(key);
    }
    (located, false)
}

/// The key of `object` that the failure's path goes through, given the key `serde_path_to_error`
/// `recorded` for it and the `rest` of the path, and whether the failure is that key itself.
fn find_key<'o>(
    object: &'o Map<String, Value>,
    recorded: Option<&str>,
    rest: &[&Segment],
    message: &str,
) -> Option<(&'o String, bool)> {
    let last = rest.is_empty();
    // A key with more after its number was recorded as the number alone.
    let cut_short = last && message.ends_with(NOT_A_NUMBER);
    if let Some((key, value)) = recorded.and_then(|key| object.get_key_value(key))
        && !cut_short
    {
        // A string key is recorded whether or not it was read: a message quoting it is about
        // the key unless it is about a value that is the same string.
        let at_key = last
            && (has_position(message)
                || (quotes_key(message, key) && !names_value(message, value)));
        return Some((key, at_key));
    }
    if last {
        // A key is read before its value: a message quoting a key is about the key.
        if let Some(key) = object.keys().find(|key| quotes_key(message, key)) {
            return Some((key, true));
        }
        if has_position(message) || message.ends_with(NOT_A_NUMBER) {
            // The key went to serde_json's number parser and failed before it was recorded:
            // the key the message names as a number (`integer `300``), else the first that is
            // not a plain integer (each key before it was read as one).
            let named = |key: &&String| {
                serde_json::from_str::<Number>(key)
                    .is_ok_and(|n| names_value(message, &Value::Number(n)))
            };
            return object
                .keys()
                .find(named)
                .or_else(|| object.keys().find(|key| !is_integer(key)))
                .map(|key| (key, true));
        }
    }
    // The failure is in a value: the first whose shape fits the rest of the path, preferring
    // one the message names at the end. At the end of the path the message must name it.
    let mut fitting = None;
    for (key, value) in object {
        match fit(value, rest, message) {
            Some(true) => return Some((key, false)),
            Some(false) if !last && fitting.is_none() => fitting = Some(key),
            _ => {}
        }
    }
    fitting.map(|key| (key, false))
}

/// Whether `value` fits the `rest` of a failure's path: `None` when the path cannot go through
/// it, `Some(true)` when the message names the value at the path's end.
fn fit(value: &Value, rest: &[&Segment], message: &str) -> Option<bool> {
    let Some((segment, rest)) = rest.split_first() else {
        return Some(names_value(message, value));
    };
    match (segment, value) {
        (Segment::Seq { index }, Value::Array(items)) => fit(items.get(*index)?, rest, message),
        (Segment::Map { key } | Segment::Enum { variant: key }, Value::Object(object)) => {
            match object.get(key) {
                Some(inner) => fit(inner, rest, message),
                // A recorded key that is not the sent one (see `find_key`).
                None => rest.is_empty().then_some(false),
            }
        }
        (Segment::Enum { variant }, Value::String(sent)) if sent == variant && rest.is_empty() => {
            Some(false)
        }
        (Segment::Unknown, Value::Object(object)) => object
            .values()
            .filter_map(|inner| fit(inner, rest, message))
            .max(),
        _ => None,
    }
}

/// Whether `message` is about `value` as serde_json words it: `invalid type: string "x", ...`,
/// `invalid value: integer `300`, ...`.
fn names_value(message: &str, value: &Value) -> bool {
    let unexpected = match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    };
    ["invalid type: ", "invalid value: "].iter().any(|prefix| {
        message
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix(unexpected.as_str()))
            .is_some_and(|rest| rest.starts_with(','))
    })
}

/// Whether `message` names `key` the way serde names a key read as a string or an enum
/// variant (`string "yes"`, `unknown variant `GBP``).
fn quotes_key(message: &str, key: &str) -> bool {
    message.contains(&format!("string {key:?}"))
        || message.starts_with(&format!("unknown variant `{key}`"))
}

/// Whether `message` carries the position serde_json's parser appends (` at line 1 column
/// 3`): the arguments are a `Value`, so the parser only ever reads a map's numeric keys.
pub(crate) fn has_position(message: &str) -> bool {
    without_position(message).len() < message.len()
}

/// `message` without the position serde_json's parser appends (see [`has_position`]): a
/// position inside a key means nothing to the model.
pub(crate) fn without_position(message: &str) -> &str {
    let Some(at) = message.rfind(" at line ") else {
        return message;
    };
    let position = &message[at + " at line ".len()..];
    let is_position = position
        .split_once(" column ")
        .is_some_and(|(line, column)| {
            [line, column]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    if is_position { &message[..at] } else { message }
}

/// Whether `key` is an integer as JSON writes one (`-?(0|[1-9][0-9]*)`, nothing around it) in
/// the range of `i64` or `u64`: a key every integer key type up to 64 bits reads or names.
fn is_integer(key: &str) -> bool {
    let digits = key.strip_prefix('-').unwrap_or(key);
    let syntax = matches!(digits.as_bytes(), [b'0'] | [b'1'..=b'9', ..])
        && digits.bytes().all(|b| b.is_ascii_digit());
    syntax && (key.parse::<i64>().is_ok() || key.parse::<u64>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_positions_are_dropped() {
        assert_eq!(
            without_position("invalid value: integer `300`, expected u8 at line 1 column 3"),
            "invalid value: integer `300`, expected u8"
        );
        for kept in [
            "expected u8",
            "meet at line 5",
            "at line 1 column",
            "at line x column 2",
            "at line 1 column 2 and more",
        ] {
            assert_eq!(without_position(kept), kept);
        }
    }

    #[test]
    fn integers_are_plain_json_integers_within_64_bits() {
        for yes in [
            "0",
            "-0",
            "1",
            "-1",
            "300",
            "18446744073709551615",
            "-9223372036854775808",
        ] {
            assert!(is_integer(yes), "{yes}");
        }
        for no in [
            "",
            "-",
            "01",
            "+1",
            "1 ",
            " 1",
            "1.0",
            "1e2",
            "abc",
            "18446744073709551616",
        ] {
            assert!(!is_integer(no), "{no}");
        }
    }

    #[test]
    fn values_are_named_in_serde_json_s_words() {
        let message = |v: &Value| {
            serde_json::from_value::<u8>(v.clone())
                .unwrap_err()
                .to_string()
        };
        for value in [
            serde_json::json!("x"),
            serde_json::json!(true),
            serde_json::json!(300),
            serde_json::json!(-1),
            serde_json::json!(1.5),
            serde_json::json!(null),
            serde_json::json!([1]),
            serde_json::json!({"a": 1}),
        ] {
            assert!(names_value(&message(&value), &value), "{value}");
        }
        assert!(!names_value(
            &message(&serde_json::json!(300)),
            &serde_json::json!(30)
        ));
    }
}
