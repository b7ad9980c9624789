//! Deserialization problems: the handler's argument type read from the arguments by
//! serde_json's `&Value` deserializer, the first failure located by `serde_path_to_error` and
//! reworded from serde's standard messages.
//!
//! Every read goes through `serde_path_to_error`, successful ones included, although it copies
//! each map key it passes into a `String`. Reading first without it and again under it only
//! on failure took in-process dispatch of a two-field action from 2.2x a hand-written
//! `jsonschema` + `serde_json::from_value` tool to 1.85x (about 80 ns a call), but compiles
//! the arguments type's deserializer twice: the crate rebuild of 50 tools x 5 actions went
//! from 0.97x rmcp's to 1.04x (`benches/compile-time.sh`). Build times are what users feel;
//! 80 ns is not, in a call that costs about 50 µs of server CPU over HTTP.
//!
//! No deserializer closes the rest of that gap. Reading the arguments by value with
//! `serde_json::from_value`, with no path tracked at all (the most any hand-written
//! deserializer could save: no key copies, no string copies), gives 1.7x–1.9x against
//! 2.3x–2.5x in the same runs (`benches/perf.rs`, `dispatch`): the remainder is
//! the call path around the read (the prepared call's boxed handler, the panic boundary, the
//! nesting check, the response), not the read.

use super::locate::{locate, without_position};
use super::path::FieldPath;
use super::report::{Check, Report, Source, line};

/// Why deserializing failed (serde_json's message) and where (`serde_path_to_error`'s path).
pub(crate) type Failure = serde_path_to_error::Error<serde_json::Error>;

/// Adds the problem for a deserialization `failure` of the report's arguments.
pub(crate) fn add(report: &mut Report<'_>, failure: &Failure) {
    let message = failure.inner().to_string();
    let (path, at_key) = locate(report.args(), failure.path(), &message);
    let (path, text, check) = reword(report, path, &message, at_key);
    report.push(path, text, Source::Serde, check);
}

/// serde's standard messages (`serde::de::Error`'s provided constructors), in plain words, and
/// what they check ([`Check::Custom`] for a message that is not one of them: the type's own).
/// `at_key`: the failure is the last key of `path` itself, not its value.
fn reword(
    report: &Report<'_>,
    path: FieldPath,
    message: &str,
    at_key: bool,
) -> (FieldPath, String, Check) {
    let message = without_position(message);
    let ticked = backticked(message);
    if let Some(rest) = message.strip_prefix("missing field ") {
        let path = with_field(path, ticked.first().copied().unwrap_or(rest));
        let text = report.missing_line(&path);
        return (path, text, Check::Other);
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let path = with_field(path, ticked.first().copied().unwrap_or(rest));
        let known: Vec<&str> = ticked.iter().skip(1).copied().collect();
        let text = report.unknown_field_line(&path, &known);
        return (path, text, Check::Unknown);
    }
    if at_key {
        // A map keyed by numbers, sent a key that is not one (or out of the type's range).
        let expected = match after_expected(message, "invalid value: ")
            .or_else(|| after_expected(message, "invalid type: "))
        {
            Some(expected) => format!("a key that is {}", plain_expectation(expected)),
            None if message.ends_with("expected key to be a number in quotes") => {
                "a key that is a number, such as '1'".to_owned()
            }
            None => "a key this object accepts".to_owned(),
        };
        let text = report.invalid_key_line(&path, &expected);
        return (path, text, Check::Other);
    }
    let sent = report.sent(&path);
    let mut check = Check::Other;
    let text = if message.starts_with("unknown variant ") {
        report.not_allowed_line(&path, || {
            let options: Vec<String> = ticked.iter().skip(1).map(|v| format!("'{v}'")).collect();
            match options.as_slice() {
                [] => "no value here".to_owned(),
                [one] => format!("exactly {one}"),
                many => format!("one of: {}", many.join(", ")),
            }
        })
    } else if let Some(expected) = after_expected(message, "invalid type: ") {
        line("Wrong type", &sent, &plain_expectation(expected))
    } else if let Some(expected) = after_expected(message, "invalid value: ") {
        line("Invalid value", &sent, &plain_expectation(expected))
    } else if let Some(expected) = after_expected(message, "invalid length ") {
        line("Wrong number of items", &sent, expected)
    } else if message.starts_with("data did not match any variant of untagged enum ")
        || message.starts_with("no variant of enum ")
    {
        // serde's own words for an untagged or flattened enum (sent as custom errors).
        line(
            "Does not match any allowed shape",
            &sent,
            &report.expectation(&path, "one of the allowed shapes"),
        )
    } else if report.is_secret(&path) || report.is_secret_text(message) {
        // A custom message may quote the value: keep it out.
        check = Check::Custom;
        line("Invalid value", &sent, "a value this field accepts")
    } else {
        check = Check::Custom;
        line(
            &format!("Invalid value: {message}"),
            &sent,
            "a value this field accepts",
        )
    };
    (path, text, check)
}

/// `path` extended by `name`, unless serde already put `name` last.
fn with_field(path: FieldPath, name: &str) -> FieldPath {
    if path.last_key() == Some(name) {
        path
    } else {
        path.child_key(name)
    }
}

/// The text after `, expected ` in a message starting with `prefix`.
fn after_expected<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?;
    rest.rfind(", expected ")
        .map(|at| &rest[at + ", expected ".len()..])
}

/// The names between backticks: `unknown field `amt`, expected `amount` or `currency``
/// gives `amt`, `amount`, `currency`.
fn backticked(message: &str) -> Vec<&str> {
    message.split('`').skip(1).step_by(2).collect()
}

/// serde's expectation (`u32`, `a sequence`, `struct Address`) in the words a model knows.
fn plain_expectation(expected: &str) -> String {
    let words = match expected {
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" => "an integer from 0 to 4294967295",
        "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" => "an integer from -128 to 127",
        "i16" => "an integer from -32768 to 32767",
        "i32" => "an integer from -2147483648 to 2147483647",
        "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "a string or bytes" => "a string",
        "a character" => "a single character",
        "a boolean" => "a boolean (true or false)",
        "a sequence" | "a tuple" => "an array",
        "a map" => "an object",
        "unit" => "null",
        e if e.starts_with("struct ") || e.starts_with("a map") => "an object",
        e if e.starts_with("tuple struct ") || e.starts_with("a tuple of size ") => "an array",
        e if e.starts_with("enum ") => "one of the allowed values",
        other => return other.to_owned(),
    };
    words.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backticks_are_split_out() {
        assert_eq!(
            backticked("unknown field `amt`, expected one of `amount`, `currency`"),
            ["amt", "amount", "currency"]
        );
        assert_eq!(
            after_expected(
                "invalid type: string \"a, expected b\", expected u32",
                "invalid type: "
            ),
            Some("u32")
        );
    }
}
