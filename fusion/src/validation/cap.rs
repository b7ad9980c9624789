//! Keeping an envelope short: at most [`MAX_UNKNOWN_FIELD_LINES`] unknown fields and at most
//! [`MAX_PROBLEMS`] problems are listed, the first by path, and one more line counts what each
//! cap left out.

use std::collections::HashSet;

use crate::envelope::validation_error::compare_paths;

use super::path::FieldPath;
use super::report::{Check, Report, line};
use super::schema::count;
use super::{FieldProblem, ValidationError};

/// The most unknown-field lines an envelope lists (the first by path); one more line at the
/// objects' path (or `(root)`) counts the rest, so a thousand made-up keys stay a short
/// envelope.
pub(crate) const MAX_UNKNOWN_FIELD_LINES: usize = 10;

/// The most problems an envelope lists (the first by path); one more line, at the deepest
/// path that holds all the others, counts them.
///
/// Why 50: a line is 20 to 40 tokens, so 50 of them are a page a model reads and acts on in
/// one turn, and well above what a call written in good faith gets wrong. Past that the lines
/// are nearly always more of the same (the 51st wrong-typed item of an array reads like the
/// 50th), and the next call lists whatever the fixes missed. Without a cap, the 4 MiB of
/// arguments a server accepts could ask for millions of lines.
pub(crate) const MAX_PROBLEMS: usize = 50;

/// The envelope of `action` listing what `report` found (merged, in the order found), with the
/// lines counting what the caps left out. Every problem is listed when there are at most
/// [`MAX_PROBLEMS`] and at most [`MAX_UNKNOWN_FIELD_LINES`] unknown fields. Linear in the
/// number of problems on average: the first ones by path are selected, not sorted.
pub(crate) fn envelope(action: impl Into<String>, report: Report<'_>) -> ValidationError {
    let found = report.merged();
    let paths: Vec<String> = found.iter().map(|f| f.path.render()).collect();
    let unknown: Vec<usize> = (0..found.len())
        .filter(|&i| found[i].check == Check::Unknown)
        .collect();
    let unknown_dropped = after_the_first(&paths, unknown.iter().copied(), MAX_UNKNOWN_FIELD_LINES);
    let listed = (0..found.len()).filter(|i| !unknown_dropped.contains(i));
    let dropped = after_the_first(&paths, listed, MAX_PROBLEMS);
    let mut counts = Vec::new();
    if !unknown_dropped.is_empty() {
        // At the object they were sent in when it is one object, else at `(root)`.
        let mut parents = unknown_dropped.iter().map(|&i| found[i].path.parent());
        let first = parents.next().unwrap_or_else(FieldPath::root);
        let at = if parents.all(|p| p == first) {
            first
        } else {
            FieldPath::root()
        };
        let text = line(
            &format!(
                "... and {} more unknown fields, not listed",
                unknown_dropped.len()
            ),
            &format!("{} unknown fields", unknown.len()),
            "only the fields the object knows (remove every unknown one)",
        );
        counts.push(FieldProblem::new(at.render(), text));
    }
    if !dropped.is_empty() {
        let at = deepest_common_parent(dropped.iter().map(|&i| &found[i].path));
        let text = line(
            &format!(
                "... and {}, not listed",
                count(dropped.len() as u64, "more problem")
            ),
            &format!("{} problems", found.len()),
            "every problem fixed (fix the ones listed and any like them; the next call lists \
             what is left)",
        );
        counts.push(FieldProblem::new(at.render(), text));
    }
    let mut problems: Vec<FieldProblem> = found
        .into_iter()
        .zip(paths)
        .enumerate()
        .filter(|(i, _)| !unknown_dropped.contains(i) && !dropped.contains(i))
        .map(|(_, (f, path))| FieldProblem::new(path, f.line))
        .collect();
    problems.extend(counts);
    let mut error = ValidationError::new(action);
    error.push_all(problems);
    error
}

/// The indices among `indices` (into `paths`, the rendered paths) that come after the first
/// `keep` in the envelope's order (by path, then in the order found). Linear on average: a
/// selection around the `keep`th, not a sort.
fn after_the_first(
    paths: &[String],
    indices: impl Iterator<Item = usize>,
    keep: usize,
) -> HashSet<usize> {
    let mut order: Vec<usize> = indices.collect();
    if order.len() <= keep {
        return HashSet::new();
    }
    order.select_nth_unstable_by(keep, |&a, &b| {
        compare_paths(&paths[a], &paths[b]).then(a.cmp(&b))
    });
    order.split_off(keep).into_iter().collect()
}

/// The deepest path that holds every one of `paths` below it: the steps their parents share.
fn deepest_common_parent<'p>(paths: impl IntoIterator<Item = &'p FieldPath>) -> FieldPath {
    let mut paths = paths.into_iter();
    let Some(first) = paths.next() else {
        return FieldPath::root();
    };
    let mut at = first.parent();
    for path in paths {
        let steps = path.segments();
        at.keep_common(&steps[..steps.len().saturating_sub(1)]);
    }
    at
}
