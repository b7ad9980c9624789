//! Cutting long text the model sent (values, and keys in field paths) to what a line shows.

/// Longest text shown whole, in characters; longer text keeps [`KEEP`] characters plus `...`.
pub(crate) const LIMIT: usize = 50;
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
