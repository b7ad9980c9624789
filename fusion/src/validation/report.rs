//! The accumulator the three sources (schema, serde, `validator`) write into: secrecy, sent
//! values, shared line shapes, and the merge that drops duplicates before the envelope.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::ValidationError;
use super::path::{FieldPath, SecretPath};
use super::sent::{self, MISSING, REDACTED};
use super::shape::Shape;

/// Secret strings shorter than this are not scrubbed from free text: they collide with
/// ordinary words. Their own field still shows `(redacted)`.
const MIN_SCRUBBED_CHARS: usize = 4;

/// Which source found a problem; decides what a duplicate gives way to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Schema,
    Serde,
    Rule,
}

/// What a problem checks, so the schema keyword schemars derived from a `validator` rule and
/// the rule itself are reported once (the rule's wording wins: it carries custom messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    Required,
    Length,
    Range,
    Pattern,
    Email,
    Url,
    Other,
}

struct Found {
    path: FieldPath,
    line: String,
    source: Source,
    check: Check,
}

/// Problems found so far for one call, with what is needed to word them.
pub(crate) struct Report<'a> {
    args: &'a Value,
    shape: Option<&'a Shape>,
    secrets: &'a [SecretPath],
    /// Whether the schema has any `writeOnly` at all (skips schema walks when it has none).
    write_only: bool,
    found: Vec<Found>,
}

impl<'a> Report<'a> {
    pub(crate) fn new(
        args: &'a Value,
        shape: Option<&'a Shape>,
        secrets: &'a [SecretPath],
        write_only: bool,
    ) -> Report<'a> {
        Report {
            args,
            shape,
            secrets,
            write_only,
            found: Vec::new(),
        }
    }

    pub(crate) fn args(&self) -> &'a Value {
        self.args
    }

    pub(crate) fn shape(&self) -> Option<&'a Shape> {
        self.shape
    }

    /// The schema node at `path`, if there is a schema and it describes `path`.
    pub(crate) fn node(&self, path: &FieldPath) -> Option<&'a Value> {
        self.shape?.at(path)
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
            || (self.write_only && self.shape.is_some_and(|s| s.is_write_only(path)))
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
        if self.is_secret(path) {
            return REDACTED.to_owned();
        }
        match value {
            Value::Object(_) if self.has_any_secret() => sent::render(&self.redacted(path, value)),
            _ => sent::render(value),
        }
    }

    fn has_any_secret(&self) -> bool {
        !self.secrets.is_empty() || self.write_only
    }

    /// `value` (found at `path`) with every secret below it replaced by `"(redacted)"`.
    fn redacted<'v>(&self, path: &FieldPath, value: &'v Value) -> Cow<'v, Value> {
        if self.is_secret(path) {
            return Cow::Owned(Value::String(REDACTED.to_owned()));
        }
        match value {
            Value::Object(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    out.insert(
                        k.clone(),
                        self.redacted(&path.child_key(k.as_str()), v).into_owned(),
                    );
                }
                Cow::Owned(Value::Object(out))
            }
            Value::Array(items) => Cow::Owned(Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.redacted(&path.child_index(i), v).into_owned())
                    .collect(),
            )),
            _ => Cow::Borrowed(value),
        }
    }

    /// What the schema expects at `path`, in words (`a string`), or `fallback`.
    pub(crate) fn expectation(&self, path: &FieldPath, fallback: &str) -> String {
        self.node(path)
            .and_then(|n| self.shape?.describe(n))
            .unwrap_or_else(|| fallback.to_owned())
    }

    /// The line for a field that was required and not sent.
    pub(crate) fn missing_line(&self, path: &FieldPath) -> String {
        let expected = self.expectation(path, "a value");
        let expected = expected.strip_suffix(" or null").unwrap_or(&expected);
        line("Missing required field", &self.sent(path), expected)
    }

    /// The line for a property the object does not know, with a "did you mean" when one of
    /// `known` is close. A field close to a secret field is redacted like it: it is most
    /// likely the secret under a misspelt name.
    pub(crate) fn unknown_field_line(&self, path: &FieldPath, known: &[&str]) -> String {
        let name = path.last_key().unwrap_or_default();
        let suggestion = did_you_mean(name, known);
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
            expected.push_str("; did you mean '");
            expected.push_str(s);
            expected.push_str("'?");
        }
        line("Unknown field", &sent, &expected)
    }

    /// Merges what was found into `error`: drops a schema problem that a `validator` rule
    /// reports too (same path, same check), a serde problem at or below a path the schema
    /// already reported, and exact repeats; then scrubs secret strings out of every line.
    pub(crate) fn finish_into(self, error: &mut ValidationError) {
        let scrub = self.secret_strings();
        let found = &self.found;
        let mut kept: Vec<&Found> = Vec::with_capacity(found.len());
        for f in found {
            let covered = match f.source {
                Source::Schema => {
                    f.check != Check::Other
                        && found.iter().any(|o| {
                            o.source == Source::Rule && o.check == f.check && o.path == f.path
                        })
                }
                // The schema's words are richer, and a problem at an ancestor (the whole
                // object has the wrong type) explains whatever serde tripped over below it.
                Source::Serde => found
                    .iter()
                    .any(|o| o.source == Source::Schema && f.path.starts_with(&o.path)),
                Source::Rule => false,
            };
            let repeat = kept.iter().any(|o| o.path == f.path && o.line == f.line);
            if covered || repeat {
                continue;
            }
            kept.push(f);
            let mut text = f.line.clone();
            for secret in &scrub {
                if text.contains(secret.as_str()) {
                    text = text.replace(secret.as_str(), REDACTED);
                }
            }
            error.push(f.path.render(), text);
        }
    }

    /// Every secret string in the arguments long enough to scrub, longest first.
    fn secret_strings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.has_any_secret() {
            self.collect_secrets(&FieldPath::root(), self.args, false, &mut out);
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.len()));
        out.dedup();
        out
    }

    fn collect_secrets(
        &self,
        path: &FieldPath,
        value: &Value,
        inherited: bool,
        out: &mut Vec<String>,
    ) {
        let secret = inherited || self.is_secret(path);
        match value {
            Value::String(s) if secret && s.chars().count() >= MIN_SCRUBBED_CHARS => {
                out.push(s.clone());
            }
            Value::Object(map) => {
                for (k, v) in map {
                    self.collect_secrets(&path.child_key(k.as_str()), v, secret, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.collect_secrets(&path.child_index(i), v, secret, out);
                }
            }
            _ => {}
        }
    }
}

/// One line: `{problem}. You sent: {sent}. Expected {expected}.` A problem or expectation that
/// already ends in `.`, `?` or `!` gets no extra period.
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
    if !expected.ends_with(['.', '?', '!']) {
        out.push('.');
    }
    out
}

/// The known name closest to `name`, when it is close enough to be a typo: the same name up
/// to case, `_` and `-` (`customerId` for `customer_id`), one edit away (a letter added,
/// dropped, changed or two swapped: `zp` for `zip`), or a Jaro-Winkler similarity of at least
/// 0.8 (the threshold darling uses for its "did you mean"). Ties go to the first in `known`.
pub(crate) fn did_you_mean<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let folded = fold(name);
    let mut best: Option<(&'k str, f64)> = None;
    for &candidate in known {
        let other = fold(candidate);
        let score = if other == folded {
            3.0
        } else if strsim::damerau_levenshtein(&folded, &other) <= 1
            && folded.len().min(other.len()) >= 2
        {
            2.0
        } else {
            strsim::jaro_winkler(&folded, &other)
        };
        if score >= 0.8 && best.is_none_or(|(_, b)| score > b) {
            best = Some((candidate, score));
        }
    }
    best.map(|(c, _)| c)
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
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
        assert_eq!(line("Bad.", "1", "x?"), "Bad. You sent: 1. Expected x?");
    }

    #[test]
    fn did_you_mean_finds_typos_and_case_variants() {
        let known = ["amount", "currency", "customer_id"];
        assert_eq!(did_you_mean("amout", &known), Some("amount"));
        assert_eq!(did_you_mean("customerId", &known), Some("customer_id"));
        assert_eq!(did_you_mean("zzz", &known), None);
        assert_eq!(did_you_mean("zp", &["city", "zip"]), Some("zip"));
        assert_eq!(did_you_mean("x", &["y"]), None);
    }
}
