//! How deltas word what changed: the sentence around the before and after values, lists,
//! descriptions cut to show where two differ, digests shortened.

use std::fmt::Display;

/// A delta's sentence: `{what} (before: {before}; now: {now}).`
pub(super) fn change(what: impl Display, before: impl Display, now: impl Display) -> String {
    format!("{what} (before: {before}; now: {now}).")
}

/// `(before: …; now: …)` for a changed description: each in single quotes on one line
/// (whitespace runs as one space), `none` when empty. A description longer than 60 characters
/// is cut to a window (`...` marks a cut) that starts early enough to show where the two
/// differ, so two long descriptions never read the same; a change of whitespace only says so.
pub(super) fn descriptions(old: &str, new: &str) -> String {
    const WIDTH: usize = 60;
    const LEAD: usize = 20;
    let one_line = |text: &str| -> Vec<char> {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect()
    };
    let (a, b) = (one_line(old), one_line(new));
    if a == b {
        let shown = quote(&a, 0, WIDTH);
        return format!("in whitespace only (before: {shown}; now: {shown})");
    }
    let first_difference = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    // Start at the beginning unless the difference would fall outside the window.
    let start = if first_difference + LEAD < WIDTH {
        0
    } else {
        first_difference - LEAD
    };
    format!(
        "(before: {}; now: {})",
        quote(&a, start, WIDTH),
        quote(&b, start, WIDTH)
    )
}

/// `(before: …; now: …)` for a changed title: as [`descriptions`], `none` for no title.
pub(super) fn titles(old: &Option<String>, new: &Option<String>) -> String {
    descriptions(old.as_deref().unwrap_or(""), new.as_deref().unwrap_or(""))
}

/// `chars[start..]` in single quotes, at most `width` characters of it (`...` included),
/// `...` marking a cut at either end; `none` when empty.
fn quote(chars: &[char], start: usize, width: usize) -> String {
    if chars.is_empty() {
        return "none".to_owned();
    }
    let start = start.min(chars.len());
    // The whole rest when it fits, else `width - 3` characters and `...`.
    let end = if chars.len() - start <= width {
        chars.len()
    } else {
        start + width - 3
    };
    let mut out = String::from("'");
    if start > 0 {
        out.push_str("...");
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push_str("...");
    }
    out.push('\'');
    out
}

/// A digest shortened for a report line: `sha256:` and 12 hex digits.
pub(super) fn short(digest: &str) -> String {
    digest.chars().take(7 + 12).collect()
}
