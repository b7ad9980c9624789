//! Rendering what the model sent: quoted and cut strings, numbers as written, `array(N)`,
//! compact JSON objects, and the `(missing)` / `(redacted)` markers (SPEC section 2).

use serde_json::Value;

/// Shown for a field that was not sent at all.
pub(crate) const MISSING: &str = "(missing)";

/// Shown instead of the value of a field marked secret.
pub(crate) const REDACTED: &str = "(redacted)";

/// Longest text shown whole, in characters; longer text keeps [`KEEP`] characters plus `...`.
const LIMIT: usize = 50;
const KEEP: usize = 47;

/// `s` cut to [`KEEP`] characters plus `...` when it is longer than [`LIMIT`] characters
/// (characters, not bytes: multibyte text is never split inside a character).
pub(crate) fn push_cut(out: &mut String, s: &str) {
    if s.char_indices().nth(LIMIT).is_none() {
        out.push_str(s);
        return;
    }
    let end = s.char_indices().nth(KEEP).map_or(s.len(), |(i, _)| i);
    out.push_str(&s[..end]);
    out.push_str("...");
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
    match value {
        Value::String(s) => {
            out.push('\'');
            push_cut(out, s);
            out.push('\'');
        }
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        Value::Array(items) => {
            out.push_str("array(");
            out.push_str(&items.len().to_string());
            out.push(')');
        }
        Value::Object(_) => push_cut(out, &value.to_string()),
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
}
