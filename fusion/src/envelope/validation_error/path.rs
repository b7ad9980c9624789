//! Field paths as the envelope orders them: `(root)` first, then step by step, array indices
//! compared as numbers (`items[2]` before `items[10]`).

use std::cmp::Ordering;

/// The path of problems that concern the whole arguments object.
pub(crate) const ROOT: &str = "(root)";

/// One step of a rendered path, borrowed from the string; the variant order is the sort order
/// between an index and a key at the same depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Part<'a> {
    Index(usize),
    Key(&'a str),
}

/// The steps of a rendered path, parsed lazily (no allocation): `items[10].sku` yields
/// `Key("items")`, `Index(10)`, `Key("sku")`; `(root)` yields nothing. A `[` not followed by
/// digits and `]` is part of a key.
pub(crate) struct Parts<'a> {
    rest: &'a str,
}

impl<'a> Parts<'a> {
    pub(crate) fn new(path: &'a str) -> Parts<'a> {
        Parts {
            rest: if path == ROOT { "" } else { path },
        }
    }
}

/// `[digits]` at the start of `s`: the index and the length of the bracket group.
fn bracket_index(s: &str) -> Option<(usize, usize)> {
    let inner = s.strip_prefix('[')?;
    let end = inner.find(']')?;
    let digits = &inner[..end];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, end + 2))
}

impl<'a> Iterator for Parts<'a> {
    type Item = Part<'a>;

    fn next(&mut self) -> Option<Part<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        if let Some((index, len)) = bracket_index(self.rest) {
            self.rest = &self.rest[len..];
            return Some(Part::Index(index));
        }
        let s = self.rest.strip_prefix('.').unwrap_or(self.rest);
        // The key ends at the next `.`, or at the next `[` that opens an index.
        let end = (s.match_indices(['.', '[']))
            .find(|&(i, found)| found == "." || bracket_index(&s[i..]).is_some())
            .map_or(s.len(), |(i, _)| i);
        self.rest = &s[end..];
        Some(Part::Key(&s[..end]))
    }
}

/// Orders rendered paths: `(root)` first, then segment by segment, keys by bytes and array
/// indices numerically (`items[2]` before `items[10]`), a path before its children.
pub(crate) fn compare(a: &str, b: &str) -> Ordering {
    Parts::new(a).cmp(Parts::new(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> Vec<Part<'_>> {
        Parts::new(s).collect()
    }

    #[test]
    fn rendered_paths_parse_back() {
        assert_eq!(
            parts("items[10].sku"),
            [Part::Key("items"), Part::Index(10), Part::Key("sku")]
        );
        assert_eq!(parts("(root)"), []);
        assert_eq!(parts("[0].a"), [Part::Index(0), Part::Key("a")]);
        assert_eq!(parts("a[x].b"), [Part::Key("a[x]"), Part::Key("b")]);
    }

    #[test]
    fn indices_compare_numerically() {
        let mut paths = vec![
            "items[10].sku",
            "name",
            "(root)",
            "items[2].sku",
            "items",
            "address.zip",
        ];
        paths.sort_by(|a, b| compare(a, b));
        assert_eq!(
            paths,
            [
                "(root)",
                "address.zip",
                "items",
                "items[2].sku",
                "items[10].sku",
                "name"
            ]
        );
    }
}
