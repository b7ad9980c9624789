//! Rendering what the model sent: quoted and cut strings, numbers as written, `array(N)`,
//! compact JSON objects, and the `(missing)` / `(redacted)` markers.

use serde_json::Value;

use super::cut::LIMIT;
use super::cut::push_cut;
use super::path::FieldPath;

/// Shown for a field that was not sent at all.
pub(crate) const MISSING: &str = "(missing)";

/// Shown instead of the value of a field marked secret.
pub(crate) const REDACTED: &str = "(redacted)";

/// What must not be echoed, asked while a value is rendered: each part it hides shows as
/// `(redacted)` (`"(redacted)"` inside compact JSON). Only values are ever hidden, never the
/// words around them.
pub(crate) trait Redact {
    /// Whether the value at `path` (and everything below it) is secret.
    fn secret_path(&self, path: &FieldPath) -> bool;

    /// Whether a string, or a number written as `text`, is or contains a secret value.
    fn secret_text(&self, text: &str) -> bool;
}

/// Hides nothing.
pub(crate) struct Plain;

impl Redact for Plain {
    fn secret_path(&self, _: &FieldPath) -> bool {
        false
    }

    fn secret_text(&self, _: &str) -> bool {
        false
    }
}

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
        let mut member = String::new();
        if count > 0 {
            member.push(',');
        }
        member.push_str(&serde_json::to_string(key).unwrap_or_default());
        member.push(':');
        let path = at.map(|p| p.child_key(key.as_str()));
        member.push_str(&compact(child, path.as_ref(), redact));
        let member_chars = member.chars().count();
        if chars + member_chars > LIMIT {
            break;
        }
        shown.push_str(&member);
        chars += member_chars;
        count += 1;
    }
    let rest = map.len() - count;
    out.push_str(&shown);
    if count > 0 {
        out.push(',');
    }
    out.push_str("... ");
    out.push_str(&rest.to_string());
    out.push_str(if count > 0 { " more" } else { "" });
    out.push_str(if rest == 1 { " field}" } else { " fields}" });
}

/// A value as the `You sent:` part of a line: `'text'`, `12`, `true`, `null`, `array(3)`, or
/// compact JSON for objects. Strings and objects are cut with [`push_cut`].
pub(crate) fn render(value: &Value) -> String {
    let mut out = String::new();
    push_value(&mut out, value);
    out
}

/// Appends [`render`]'s output to `out`.
pub(crate) fn push_value(out: &mut String, value: &Value) {
    push_redacted(out, value, None, &Plain);
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
    if at.is_some_and(|p| redact.secret_path(p)) {
        out.push_str(REDACTED);
        return;
    }
    match value {
        Value::String(s) if redact.secret_text(s) => out.push_str(REDACTED),
        Value::String(s) => {
            out.push('\'');
            push_cut(out, s);
            out.push('\'');
        }
        Value::Number(n) => {
            let text = n.to_string();
            out.push_str(if redact.secret_text(&text) {
                REDACTED
            } else {
                &text
            });
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        Value::Array(items) => {
            out.push_str("array(");
            out.push_str(&items.len().to_string());
            out.push(')');
        }
        Value::Object(_) => push_cut(out, &compact(value, at, redact)),
    }
}

/// Several values as `'EUR', 'USD'` (used for enum options and allowed values).
pub(crate) fn render_list<'v>(values: impl IntoIterator<Item = &'v Value>) -> String {
    let mut out = String::new();
    for (n, value) in values.into_iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        push_value(&mut out, value);
    }
    out
}

/// One open container of [`compact`]: its remaining members, whether one was written yet,
/// and whether it added a segment to the tracked path.
struct Open<'v> {
    members: Members<'v>,
    written: bool,
    pushed: bool,
}

enum Members<'v> {
    Object(serde_json::map::Iter<'v>),
    Array(std::iter::Enumerate<std::slice::Iter<'v, Value>>),
}

/// Compact JSON text of `value` as `serde_json` writes it, with hidden members written as
/// `"(redacted)"`. Without recursion (nesting never overflows the stack), and it stops soon
/// after [`LIMIT`] characters: the rest would be cut. `at` is the path of `value`, when the
/// secret paths apply to it.
fn compact(value: &Value, at: Option<&FieldPath>, redact: &dyn Redact) -> String {
    const HIDDEN: &str = "\"(redacted)\"";
    let mut out = Writer::default();
    let mut path = at.cloned();
    let mut stack: Vec<Open<'_>> = Vec::new();
    // The value to write next, and whether writing it pushed a segment onto `path`.
    let mut next = Some((value, false));
    while !out.full() {
        if let Some((value, pushed)) = next.take() {
            let members = match value {
                _ if path.as_ref().is_some_and(|p| redact.secret_path(p)) => {
                    out.push(HIDDEN);
                    None
                }
                Value::Object(map) => {
                    out.push("{");
                    Some(Members::Object(map.iter()))
                }
                Value::Array(items) => {
                    out.push("[");
                    Some(Members::Array(items.iter().enumerate()))
                }
                Value::String(s) if redact.secret_text(s) => {
                    out.push(HIDDEN);
                    None
                }
                Value::String(s) => {
                    out.push_json_string(s);
                    None
                }
                Value::Number(n) => {
                    let text = n.to_string();
                    if redact.secret_text(&text) {
                        out.push(HIDDEN);
                    } else {
                        out.push(&serde_json::to_string(n).unwrap_or(text));
                    }
                    None
                }
                Value::Bool(b) => {
                    out.push(if *b { "true" } else { "false" });
                    None
                }
                Value::Null => {
                    out.push("null");
                    None
                }
            };
            match members {
                Some(members) => stack.push(Open {
                    members,
                    written: false,
                    pushed,
                }),
                None => {
                    if pushed && let Some(p) = path.as_mut() {
                        p.pop();
                    }
                }
            }
            continue;
        }
        let Some(open) = stack.last_mut() else { break };
        let member = match &mut open.members {
            Members::Object(members) => members.next().map(|(k, v)| (Some(k), 0, v)),
            Members::Array(items) => items.next().map(|(i, v)| (None, i, v)),
        };
        let Some((key, index, child)) = member else {
            let closed = stack.pop();
            out.push(match closed.as_ref().map(|o| &o.members) {
                Some(Members::Object(_)) => "}",
                _ => "]",
            });
            if closed.is_some_and(|o| o.pushed)
                && let Some(p) = path.as_mut()
            {
                p.pop();
            }
            continue;
        };
        if open.written {
            out.push(",");
        }
        open.written = true;
        if let Some(key) = key {
            out.push_json_string(key);
            out.push(":");
        }
        if let Some(p) = path.as_mut() {
            match key {
                Some(key) => p.push_key(key.as_str()),
                None => p.push_index(index),
            }
        }
        next = Some((child, path.is_some()));
    }
    out.text
}

/// The text of [`compact`] and its length in characters, kept up to date.
#[derive(Default)]
struct Writer {
    text: String,
    chars: usize,
}

impl Writer {
    /// Whether more text could not change what is shown (it is cut already).
    fn full(&self) -> bool {
        self.chars > LIMIT
    }

    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.chars += s.chars().count();
    }

    /// `s` as a JSON string literal; only its first [`LIMIT`] characters when it is longer
    /// (the literal is then left unterminated, and the text is past the cut anyway).
    fn push_json_string(&mut self, s: &str) {
        let shown = s.char_indices().nth(LIMIT).map_or(s, |(end, _)| &s[..end]);
        let literal = serde_json::to_string(shown).unwrap_or_default();
        if shown.len() < s.len() {
            self.push(&literal[..literal.len() - 1]);
        } else {
            self.push(&literal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_render_as_written() {
        assert_eq!(render(&json!("abc")), "'abc'");
        assert_eq!(render(&json!(12)), "12");
        assert_eq!(render(&json!(-1.5)), "-1.5");
        assert_eq!(render(&json!(true)), "true");
        assert_eq!(render(&Value::Null), "null");
        assert_eq!(render(&json!([1, 2, 3])), "array(3)");
        assert_eq!(render(&json!({"a": 1})), r#"{"a":1}"#);
    }

    #[test]
    fn strings_are_cut_after_fifty_characters() {
        let fifty = "x".repeat(50);
        assert_eq!(render(&json!(fifty)), format!("'{fifty}'"));
        let fifty_one = "y".repeat(51);
        assert_eq!(
            render(&json!(fifty_one)),
            format!("'{}...'", "y".repeat(47))
        );
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
    fn cutting_counts_characters_not_bytes() {
        let fifty = "é".repeat(50);
        assert_eq!(render(&json!(fifty)), format!("'{fifty}'"));
        let fifty_one = "🚫".repeat(51);
        assert_eq!(
            render(&json!(fifty_one)),
            format!("'{}...'", "🚫".repeat(47))
        );
    }

    #[test]
    fn objects_are_cut_like_strings() {
        // {"k":"…"} is 8 characters around the value.
        let exactly = json!({"k": "v".repeat(42)});
        assert_eq!(exactly.to_string().chars().count(), 50);
        assert_eq!(render(&exactly), exactly.to_string());
        let longer = json!({"k": "v".repeat(43)});
        assert_eq!(render(&longer), format!("{{\"k\":\"{}...", "v".repeat(41)));
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
