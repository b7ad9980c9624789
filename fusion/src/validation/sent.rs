//! Rendering what the model sent: quoted and cut strings, numbers as written, `array(N)`,
//! compact JSON objects, and the `(missing)` / `(redacted)` markers.

use std::io;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::cut::{LIMIT, push_cut};
use super::path::FieldPath;

/// Shown for a field that was not sent at all.
pub(crate) const MISSING: &str = "(missing)";

/// Shown instead of the value of a field marked secret.
pub(crate) const REDACTED: &str = "(redacted)";

/// What must not be echoed, asked while a value is rendered: each part it hides shows as
/// `(redacted)` (`"(redacted)"` inside compact JSON). Only values are ever hidden, never the
/// words around them. Hides nothing unless told.
pub(crate) trait Redact {
    /// Whether the value at `path` (and everything below it) is secret.
    fn secret_path(&self, _path: &FieldPath) -> bool {
        false
    }

    /// Whether a string, or a number written as `text`, is or contains a secret value.
    fn secret_text(&self, _text: &str) -> bool {
        false
    }
}

/// Hides nothing.
pub(crate) struct Plain;

impl Redact for Plain {}

/// An object echoed whole members at a time: compact JSON of its first members while the text
/// stays within [`LIMIT`] characters, then `... N more field(s)}` for the rest. A cut never
/// falls inside a member, so no value is shown partly (a struct-level rule's message reads
/// the fields it compared). An object that fits is written as [`push_redacted`] writes it.
pub(crate) fn push_members(
    out: &mut String,
    value: &Value,
    at: Option<&FieldPath>,
    redact: &dyn Redact,
) {
    let whole = compact(value, at, redact);
    let map = match value {
        Value::Object(map) if whole.chars().count() > LIMIT => map,
        _ => {
            out.push_str(&whole);
            return;
        }
    };
    let mut shown = String::from("{");
    let mut chars = 1;
    let mut count = 0;
    for (key, child) in map {
        let comma = if count > 0 { "," } else { "" };
        let name = serde_json::to_string(key).unwrap_or_default();
        let path = at.map(|p| p.child_key(key.as_str()));
        let member = format!("{comma}{name}:{}", compact(child, path.as_ref(), redact));
        let member_chars = member.chars().count();
        if chars + member_chars > LIMIT {
            break;
        }
        shown.push_str(&member);
        chars += member_chars;
        count += 1;
    }
    let rest = map.len() - count;
    let (comma, more) = if count > 0 { (",", " more") } else { ("", "") };
    let fields = if rest == 1 { "field" } else { "fields" };
    out.push_str(&format!("{shown}{comma}... {rest}{more} {fields}}}"));
}

/// A value as the `You sent:` part of a line: `'text'`, `12`, `true`, `null`, `array(3)`, or
/// compact JSON for objects. Strings and objects are cut with [`push_cut`].
pub(crate) fn render(value: &Value) -> String {
    let mut out = String::new();
    push_redacted(&mut out, value, None, &Plain);
    out
}

/// The values a field allows, as a line's expectation: `exactly 'EUR'`, or
/// `one of: 'EUR', 'USD'`.
pub(crate) fn allowed(values: &[&Value]) -> String {
    let rendered: Vec<String> = values.iter().map(|v| render(v)).collect();
    match rendered.as_slice() {
        [one] => format!("exactly {one}"),
        many => format!("one of: {}", many.join(", ")),
    }
}

/// Appends `value` as [`render`] does, with what `redact` hides shown as `(redacted)`: the
/// whole value when it sits at a secret path (`at`, when known) or is a string or number that
/// is or contains a secret, and inside a compact JSON object each such member, before the
/// object is cut (so a cut never keeps part of a secret).
pub(crate) fn push_redacted(
    out: &mut String,
    value: &Value,
    at: Option<&FieldPath>,
    redact: &dyn Redact,
) {
    if hidden(value, at, redact) {
        out.push_str(REDACTED);
        return;
    }
    match value {
        Value::String(s) => {
            out.push('\'');
            push_cut(out, s);
            out.push('\'');
        }
        Value::Array(items) => {
            out.push_str("array(");
            out.push_str(&items.len().to_string());
            out.push(')');
        }
        Value::Object(_) => push_cut(out, &compact(value, at, redact)),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Whether `value` (at `at`, when the secret paths apply to it) is shown as `(redacted)`: at
/// a secret path, or a string or number that is or contains a secret value.
pub(crate) fn hidden(value: &Value, at: Option<&FieldPath>, redact: &dyn Redact) -> bool {
    at.is_some_and(|p| redact.secret_path(p))
        || match value {
            Value::String(s) => redact.secret_text(s),
            Value::Number(n) => redact.secret_text(&n.to_string()),
            _ => false,
        }
}

/// Compact JSON text of `value` as `serde_json` writes it, with hidden members written as
/// `"(redacted)"`. It stops one character after [`LIMIT`] (the rest would be cut), which also
/// bounds how deep it recurses: every level opens with a character. `at` is the path of
/// `value`, when the secret paths apply to it.
fn compact(value: &Value, at: Option<&FieldPath>, redact: &dyn Redact) -> String {
    let mut out = Bounded::default();
    let echo = Echo {
        value,
        path: at.cloned(),
        redact,
    };
    // The only error is the writer refusing text past the limit.
    let _ = serde_json::to_writer(&mut out, &echo);
    String::from_utf8(out.bytes).unwrap_or_default()
}

/// A value serialized with what `redact` hides replaced by `"(redacted)"`.
struct Echo<'v> {
    value: &'v Value,
    path: Option<FieldPath>,
    redact: &'v dyn Redact,
}

impl Serialize for Echo<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if hidden(self.value, self.path.as_ref(), self.redact) {
            return serializer.serialize_str(REDACTED);
        }
        let child = |value, step: &dyn Fn(&FieldPath) -> FieldPath| Echo {
            value,
            path: self.path.as_ref().map(step),
            redact: self.redact,
        };
        match self.value {
            Value::Object(map) => serializer.collect_map(
                map.iter()
                    .map(|(k, v)| (k, child(v, &|p| p.child_key(k.as_str())))),
            ),
            Value::Array(items) => serializer.collect_seq(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| child(v, &|p| p.child_index(i))),
            ),
            scalar => scalar.serialize(serializer),
        }
    }
}

/// UTF-8 text written up to one character past [`LIMIT`]: writing more fails, which ends the
/// serialization.
#[derive(Default)]
struct Bounded {
    bytes: Vec<u8>,
    chars: usize,
}

impl io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &byte in buf {
            // Every byte but a continuation byte starts a character.
            if byte & 0xC0 != 0x80 {
                if self.chars > LIMIT {
                    return Err(io::ErrorKind::WriteZero.into());
                }
                self.chars += 1;
            }
            self.bytes.push(byte);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_render_as_written_and_cut_after_fifty_characters() {
        // {"k":"…"} is 8 characters around the value.
        let exactly = json!({"k": "v".repeat(42)});
        assert_eq!(exactly.to_string().chars().count(), 50);
        let cases = [
            (json!("abc"), "'abc'".to_owned()),
            (json!(12), "12".to_owned()),
            (json!(-1.5), "-1.5".to_owned()),
            (json!(true), "true".to_owned()),
            (Value::Null, "null".to_owned()),
            (json!("x"), "'x'".to_owned()),
            (json!([1]), "array(1)".to_owned()),
            (json!([1, 2, 3]), "array(3)".to_owned()),
            (json!({"a": 1}), r#"{"a":1}"#.to_owned()),
            (json!("x".repeat(50)), format!("'{}'", "x".repeat(50))),
            (json!("y".repeat(51)), format!("'{}...'", "y".repeat(47))),
            // Characters, not bytes.
            (json!("é".repeat(50)), format!("'{}'", "é".repeat(50))),
            (json!("🚫".repeat(51)), format!("'{}...'", "🚫".repeat(47))),
            (exactly.clone(), exactly.to_string()),
            (
                json!({"k": "v".repeat(43)}),
                format!("{{\"k\":\"{}...", "v".repeat(41)),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(render(&value), want, "{value}");
            assert_eq!(crate::validation::sent_value(&value), want, "{value}");
        }
    }

    #[test]
    fn objects_echoed_by_members_are_cut_between_members() {
        let short = json!({"end": 1, "start": 2});
        let mut out = String::new();
        push_members(&mut out, &short, None, &Plain);
        assert_eq!(out, r#"{"end":1,"start":2}"#);

        let long = json!({"email": "a@b.example", "name": "n".repeat(40), "zip": 1});
        let mut out = String::new();
        push_members(&mut out, &long, None, &Plain);
        assert_eq!(out, r#"{"email":"a@b.example",... 2 more fields}"#);

        let first_too_long = json!({"note": "n".repeat(60)});
        let mut out = String::new();
        push_members(&mut out, &first_too_long, None, &Plain);
        assert_eq!(out, "{... 1 field}");
    }

    #[test]
    fn compact_json_is_what_serde_json_writes() {
        let values = [
            json!({}),
            json!({"a": []}),
            json!({"a": [1, -2, 3.5, 1e100, -0.0, true, false, null], "b": {}}),
            json!({"q\"uote": "back\\slash \u{1} \n \t \u{7f} é 🚫 </x>"}),
            json!({"nested": {"deeper": [{"x": [[], {}]}]}}),
            json!({"k": "v".repeat(200)}),
            json!({"long key ".repeat(20): 1}),
            json!({"a": 1, "b": "é".repeat(60)}),
        ];
        for value in values {
            let mut want = String::new();
            push_cut(&mut want, &value.to_string());
            assert_eq!(render(&value), want, "{value}");
        }
    }

    struct Secrets;

    impl Redact for Secrets {
        fn secret_path(&self, path: &FieldPath) -> bool {
            path.last_key() == Some("cvv")
        }

        fn secret_text(&self, text: &str) -> bool {
            text.contains("hunter2")
        }
    }

    #[test]
    fn redaction_happens_before_the_cut() {
        let secret = format!("hunter2{}", "x".repeat(60));
        let mut out = String::new();
        push_redacted(&mut out, &json!(secret), None, &Secrets);
        assert_eq!(out, REDACTED);
        let mut out = String::new();
        let card = json!({"cvv": "123", "note": secret, "n": 7});
        push_redacted(&mut out, &card, Some(&FieldPath::root()), &Secrets);
        assert_eq!(out, r#"{"cvv":"(redacted)","n":7,"note":"(redacted)"}"#);
        let mut out = String::new();
        push_redacted(&mut out, &json!({"a": {"cvv": 1}}), None, &Secrets);
        assert_eq!(
            out, r#"{"a":{"cvv":1}}"#,
            "no path, no path-based redaction"
        );
    }
}
