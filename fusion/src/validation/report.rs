//! The accumulator the three sources (schema, serde, `validator`) write into: secrecy, sent
//! values, shared line shapes, and the merge that drops duplicates before the envelope.

use std::collections::HashSet;

use aho_corasick::{AhoCorasick, BuildError};
use serde_json::Value;

use crate::envelope::suggest::did_you_mean;

use super::path::{FieldPath, SecretPath, Segment};
use super::sent::{self, MISSING, REDACTED, Redact};
use super::shape::Shape;

/// Secret values shorter than this (in characters) are only hidden where a value equals them,
/// not where a longer value contains them: they collide with ordinary text.
const MIN_CONTAINED_CHARS: usize = 4;

/// Which source found a problem; decides what a duplicate gives way to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Schema,
    Serde,
    Rule,
}

/// What a problem checks, so the schema keyword schemars derived from a `validator` rule and
/// the rule itself are reported once (the rule's wording wins: it carries custom messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Check {
    Required,
    Length,
    Range,
    Pattern,
    Email,
    Url,
    Other,
    /// A field the object does not know: at most
    /// [`MAX_UNKNOWN_FIELD_LINES`](super::cap::MAX_UNKNOWN_FIELD_LINES) are listed.
    Unknown,
    /// A check of the type's own (a custom serde error: `try_from`, `deserialize_with`), which
    /// the schema cannot express.
    Custom,
}

/// One problem found: where, its line, and what found it.
pub(crate) struct Found {
    pub(crate) path: FieldPath,
    pub(crate) line: String,
    pub(crate) source: Source,
    pub(crate) check: Check,
}

/// Problems found so far for one call, with what is needed to word them.
pub(crate) struct Report<'a> {
    args: &'a Value,
    shape: Option<&'a Shape>,
    secrets: &'a [SecretPath],
    /// The values sent at secret paths (strings, and numbers as written), sorted, so that a
    /// copy of one anywhere else in an echoed value is hidden too.
    secret_values: Vec<String>,
    /// The search for the secret values of at least [`MIN_CONTAINED_CHARS`] characters inside a
    /// text. One automaton finds any of them in one pass over the text: a hundred thousand
    /// secret values (an array of cards, each with its own) and as many lines to check them
    /// against would otherwise be ten billion substring searches. When it cannot be built (more
    /// states than it can number, far beyond what a request holds), every text counts as
    /// holding a secret, so none is ever shown. `None` when no secret value is that long: no
    /// automaton is built for the common report, which has none.
    contained: Option<Result<AhoCorasick, BuildError>>,
    found: Vec<Found>,
}

impl<'a> Report<'a> {
    pub(crate) fn new(
        args: &'a Value,
        shape: Option<&'a Shape>,
        secrets: &'a [SecretPath],
    ) -> Report<'a> {
        let mut report = Report {
            args,
            shape,
            secrets,
            secret_values: Vec::new(),
            contained: None,
            found: Vec::new(),
        };
        report.secret_values = report.collect_secret_values();
        let long: Vec<&String> = (report.secret_values.iter())
            .filter(|secret| secret.chars().nth(MIN_CONTAINED_CHARS - 1).is_some())
            .collect();
        report.contained = (!long.is_empty()).then(|| AhoCorasick::new(long));
        report
    }

    pub(crate) fn args(&self) -> &'a Value {
        self.args
    }

    /// The schema and its node at `path`, if there is a schema and it describes `path`.
    pub(crate) fn schema_at(&self, path: &FieldPath) -> Option<(&'a Shape, &'a Value)> {
        let shape = self.shape?;
        Some((shape, shape.at(path)?))
    }

    pub(crate) fn push(&mut self, path: FieldPath, line: String, source: Source, check: Check) {
        self.found.push(Found {
            path,
            line,
            source,
            check,
        });
    }

    /// Whether `path` is secret: marked explicitly, or `writeOnly` in the schema.
    pub(crate) fn is_secret(&self, path: &FieldPath) -> bool {
        self.secrets.iter().any(|s| s.covers(path))
            || self.shape.is_some_and(|s| s.is_write_only(path))
    }

    /// Whether `text` (a string sent, or a number as written) is a secret value or contains
    /// one (of at least [`MIN_CONTAINED_CHARS`] characters). One pass over `text`, however
    /// many secret values were sent.
    pub(crate) fn is_secret_text(&self, text: &str) -> bool {
        self.secret_values
            .binary_search_by(|secret| secret.as_str().cmp(text))
            .is_ok()
            || (self.contained.as_ref())
                .is_some_and(|contained| contained.as_ref().map_or(true, |a| a.is_match(text)))
    }

    /// The `You sent:` text for `path`: the value in the arguments, `(missing)`, or
    /// `(redacted)` for a secret. Secrets nested in a sent object are redacted inside it.
    pub(crate) fn sent(&self, path: &FieldPath) -> String {
        self.sent_value(path, path.lookup(self.args))
    }

    /// Like [`Report::sent`] for a value found elsewhere (a `validator` param).
    pub(crate) fn sent_value(&self, path: &FieldPath, value: Option<&Value>) -> String {
        let Some(value) = value else {
            return MISSING.to_owned();
        };
        let mut out = String::new();
        sent::push_redacted(&mut out, value, Some(path), self);
        out
    }

    /// [`Report::sent`] for a struct-level rule at `path`: an object is cut between whole
    /// members, never inside a value (see [`sent::push_members`]).
    pub(crate) fn sent_members(&self, path: &FieldPath, value: &Value) -> String {
        if !value.is_object() || self.is_secret(path) {
            return self.sent_value(path, Some(value));
        }
        let mut out = String::new();
        sent::push_members(&mut out, value, Some(path), self);
        out
    }

    /// Appends `value`, which is not at a field path (a rule's param), with every copy of a
    /// secret value in it redacted.
    pub(crate) fn push_echoed(&self, out: &mut String, value: &Value) {
        sent::push_redacted(out, value, None, self);
    }

    fn has_any_secret(&self) -> bool {
        !self.secrets.is_empty() || self.shape.is_some_and(|s| s.write_only)
    }

    /// What the schema expects at `path`, in words (`a string`), or `fallback`.
    pub(crate) fn expectation(&self, path: &FieldPath, fallback: &str) -> String {
        (self.schema_at(path))
            .and_then(|(shape, node)| shape.describe(node))
            .unwrap_or_else(|| fallback.to_owned())
    }

    /// What a required field that was not sent expects: its schema's words, without ` or null`.
    pub(crate) fn required_expectation(&self, path: &FieldPath) -> String {
        let mut expected = self.expectation(path, "a value");
        expected.truncate(expected.strip_suffix(" or null").unwrap_or(&expected).len());
        expected
    }

    /// The line for a field that was required and not sent.
    pub(crate) fn missing_line(&self, path: &FieldPath) -> String {
        let expected = self.required_expectation(path);
        line("Missing required field", &self.sent(path), &expected)
    }

    /// The line for a property the object does not know, with a "did you mean" when one of
    /// `known` is close. A field close to a secret field is redacted like it: it is most
    /// likely the secret under a misspelt name.
    pub(crate) fn unknown_field_line(&self, path: &FieldPath, known: &[&str]) -> String {
        let name = path.last_key().unwrap_or_default();
        let suggestion = did_you_mean(name, known.iter().copied());
        let parent = path.parent();
        let sent = match suggestion {
            Some(s) if self.is_secret(&parent.child_key(s)) => REDACTED.to_owned(),
            _ => self.sent(path),
        };
        let mut expected = if known.is_empty() {
            "no fields in this object".to_owned()
        } else {
            format!("one of the known fields: {}", known.join(", "))
        };
        if let Some(s) = suggestion {
            expected.push_str(&format!(" (did you mean '{s}'?)"));
        }
        line("Unknown field", &sent, &expected)
    }

    /// The line for a value outside the values a field allows (`allowed`, in words). They are
    /// not listed for a secret field: a near miss there would put most of the secret into the
    /// envelope.
    pub(crate) fn not_allowed_line(
        &self,
        path: &FieldPath,
        allowed: impl FnOnce() -> String,
    ) -> String {
        let expected = if self.is_secret(path) {
            "one of the allowed values (not listed for a secret field)".to_owned()
        } else {
            allowed()
        };
        line("Value not allowed", &self.sent(path), &expected)
    }

    /// The line for a key the object cannot have: what was sent is the key itself (the last
    /// step of `path`), as a string; `expected` says what keys it takes.
    pub(crate) fn invalid_key_line(&self, path: &FieldPath, expected: &str) -> String {
        let key = Value::String(path.last_key().unwrap_or_default().to_owned());
        line("Invalid key", &self.sent_value(path, Some(&key)), expected)
    }

    /// What was found, merged: drops a schema problem that a `validator` rule reports too (same
    /// path, same check), a serde problem at or below a path the schema already reported, and
    /// exact repeats. Linear in the number of problems (hash sets keyed by path), in the order
    /// found; the lines are kept as worded. [`super::cap::envelope`] makes them an envelope.
    pub(crate) fn merged(self) -> Vec<Found> {
        let found = self.found;
        let keep: Vec<bool> = {
            let ruled: HashSet<(&FieldPath, Check)> = found
                .iter()
                .filter(|o| o.source == Source::Rule)
                .map(|o| (&o.path, o.check))
                .collect();
            let schema_paths: HashSet<&[Segment]> = found
                .iter()
                .filter(|o| o.source == Source::Schema)
                .map(|o| o.path.segments())
                .collect();
            // Every path at or above a schema problem.
            let above_schema: HashSet<&[Segment]> = schema_paths
                .iter()
                .flat_map(|segments| (0..=segments.len()).map(|n| &segments[..n]))
                .collect();
            let mut seen: HashSet<(&FieldPath, &str)> = HashSet::with_capacity(found.len());
            found
                .iter()
                .map(|f| {
                    let covered = match f.source {
                        Source::Schema => {
                            f.check != Check::Other && ruled.contains(&(&f.path, f.check))
                        }
                        // The schema's words are richer, and a problem at an ancestor (the
                        // whole object has the wrong type) explains whatever serde tripped
                        // over below it. A schema problem below serde's path is the same
                        // problem seen closer: serde loses the path inside tagged enums and
                        // `flatten` (it reads them from a buffer), so it reports `shape`
                        // where the schema found `shape.r`.
                        // A custom check of the type's own is not the schema's problem seen
                        // from outside: it stays unless the schema found a problem at or
                        // above it.
                        Source::Serde => {
                            let segments = f.path.segments();
                            (f.check != Check::Custom && above_schema.contains(segments))
                                || (0..=segments.len())
                                    .any(|n| schema_paths.contains(&segments[..n]))
                        }
                        Source::Rule => false,
                    };
                    !covered && seen.insert((&f.path, f.line.as_str()))
                })
                .collect()
        };
        found
            .into_iter()
            .zip(keep)
            .filter(|(_, keep)| *keep)
            .map(|(f, _)| f)
            .collect()
    }

    /// Every value sent at a secret path (strings and numbers, as written), sorted and
    /// deduplicated. Walks the arguments without recursion.
    fn collect_secret_values(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.has_any_secret() {
            return out;
        }
        // (path, value): the path is `None` at and below a secret, where it is not needed.
        let mut stack: Vec<(Option<FieldPath>, &Value)> =
            vec![(Some(FieldPath::root()), self.args)];
        while let Some((path, value)) = stack.pop() {
            let path = path.filter(|p| !self.is_secret(p));
            let secret = path.is_none();
            match value {
                Value::String(s) if secret && !s.is_empty() => out.push(s.clone()),
                Value::Number(n) if secret => out.push(n.to_string()),
                Value::Object(map) => stack.extend(
                    map.iter()
                        .map(|(k, v)| (path.as_ref().map(|p| p.child_key(k.as_str())), v)),
                ),
                Value::Array(items) => stack.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (path.as_ref().map(|p| p.child_index(i)), v)),
                ),
                _ => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Redact for Report<'_> {
    fn secret_path(&self, path: &FieldPath) -> bool {
        self.is_secret(path)
    }

    fn secret_text(&self, text: &str) -> bool {
        self.is_secret_text(text)
    }
}

/// One line: `{problem}. You sent: {sent}. Expected {expected}.` A problem that already ends in
/// `.`, `?` or `!` (a custom message) gets no extra period; the line always ends with the
/// period after the expectation, even when the expectation ends with one (a quoted pattern).
pub(crate) fn line(problem: &str, sent: &str, expected: &str) -> String {
    let problem = problem.trim_end();
    let expected = expected.trim_end();
    let mut out = String::with_capacity(problem.len() + sent.len() + expected.len() + 24);
    out.push_str(problem);
    if !problem.ends_with(['.', '?', '!']) {
        out.push('.');
    }
    out.push_str(" You sent: ");
    out.push_str(sent);
    out.push_str(". Expected ");
    out.push_str(expected);
    out.push('.');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_get_exactly_one_period() {
        assert_eq!(
            line("Wrong type", "'abc'", "a number"),
            "Wrong type. You sent: 'abc'. Expected a number."
        );
        assert_eq!(line("Bad.", "1", "x?"), "Bad. You sent: 1. Expected x?.");
        assert_eq!(
            line(
                "No match",
                "'v1'",
                "text matching the pattern '^v[0-9]+\\.'"
            ),
            "No match. You sent: 'v1'. Expected text matching the pattern '^v[0-9]+\\.'."
        );
    }
}
