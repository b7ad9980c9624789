//! Field paths: building `items[0].sku` from JSON pointers, serde and `validator` paths, and
//! matching them against the paths marked secret. Their order is the envelope's
//! (`crate::envelope::validation_error`).

use serde_json::Value;

pub(crate) use crate::envelope::validation_error::{Part, Parts, ROOT};
use crate::schema::unescape_pointer_token;

/// One step from a JSON value into a child.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Segment {
    /// A property of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// A field path as segments, rendered as `items[0].sku` (or `(root)` when empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The path of the arguments object itself.
    pub(crate) fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub(crate) fn push_key(&mut self, key: impl Into<String>) {
        self.0.push(Segment::Key(key.into()));
    }

    pub(crate) fn push_index(&mut self, index: usize) {
        self.0.push(Segment::Index(index));
    }

    pub(crate) fn child_key(&self, key: impl Into<String>) -> FieldPath {
        let mut child = self.clone();
        child.push_key(key);
        child
    }

    pub(crate) fn child_index(&self, index: usize) -> FieldPath {
        let mut child = self.clone();
        child.push_index(index);
        child
    }

    /// The path one step up (the root for the root).
    pub(crate) fn parent(&self) -> FieldPath {
        let mut parent = self.clone();
        parent.0.pop();
        parent
    }

    /// Shortens this path to the steps it shares with the start of `steps`: the deepest path
    /// at or above both.
    pub(crate) fn keep_common(&mut self, steps: &[Segment]) {
        let shared = self.0.iter().zip(steps).take_while(|(a, b)| a == b).count();
        self.0.truncate(shared);
    }

    /// The last segment when it is a key.
    pub(crate) fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Segment::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// Converts a JSON pointer (`/items/0/sku`, as `jsonschema` reports instance locations) into
    /// a field path. `instance` disambiguates numeric tokens: `0` is an index only where the
    /// value at that point is an array (an object may have a property named `0`).
    pub(crate) fn from_pointer(pointer: &str, instance: &Value) -> FieldPath {
        let mut path = FieldPath::root();
        let mut current = Some(instance);
        for token in pointer.split('/').skip(1) {
            let key = unescape_pointer_token(token);
            let index = key.parse::<usize>().ok();
            match (current, index) {
                (Some(Value::Array(items)), Some(i)) => {
                    current = items.get(i);
                    path.push_index(i);
                }
                (Some(Value::Object(map)), _) => {
                    current = map.get(key.as_str());
                    path.push_key(key);
                }
                (None, Some(i)) => path.push_index(i),
                _ => {
                    current = None;
                    path.push_key(key);
                }
            }
        }
        path
    }

    /// The value at this path inside `root`, if there is one.
    pub(crate) fn lookup<'v>(&self, root: &'v Value) -> Option<&'v Value> {
        self.0
            .iter()
            .try_fold(root, |value, segment| match segment {
                Segment::Key(k) => value.as_object()?.get(k),
                Segment::Index(i) => value.as_array()?.get(*i),
            })
    }

    /// The rendered path: `name`, `address.zip`, `items[0].sku`, or `(root)`. A key longer than
    /// 50 characters (a name the model made up, a map key) is cut as sent strings are: its
    /// first 47 characters plus `...`.
    pub(crate) fn render(&self) -> String {
        if self.0.is_empty() {
            return ROOT.to_owned();
        }
        let mut out = String::new();
        for (n, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(k) => {
                    if n > 0 {
                        out.push('.');
                    }
                    super::cut::push_cut(&mut out, k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

/// A path marked secret, with `[]` or `[*]` standing for any index (`None` here): `password`,
/// `cards[].cvv`. It covers everything below it too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SecretPath(Vec<Option<Segment>>);

impl SecretPath {
    pub(crate) fn parse(path: &str) -> SecretPath {
        // `[]` and `[*]` are not indices to `Parts`, so turn them into a marker first.
        let normalized = path.replace("[*]", "[]");
        let mut parts = Vec::new();
        for (n, piece) in normalized.split("[]").enumerate() {
            if n > 0 {
                parts.push(None);
            }
            parts.extend(Parts::new(piece).map(|p| match p {
                Part::Index(i) => Some(Segment::Index(i)),
                Part::Key(k) => Some(Segment::Key(k.to_owned())),
            }));
        }
        SecretPath(parts)
    }

    /// Whether `path` is this secret path or lies below it.
    pub(crate) fn covers(&self, path: &FieldPath) -> bool {
        self.0.len() <= path.0.len()
            && (self.0.iter().zip(&path.0)).all(|(want, have)| match want {
                Some(want) => want == have,
                None => matches!(have, Segment::Index(_)),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_become_dotted_paths() {
        let args = json!({"items": [{"sku": 1}], "map": {"0": {"a/b": 1}}});
        assert_eq!(
            FieldPath::from_pointer("/items/0/sku", &args).render(),
            "items[0].sku"
        );
        assert_eq!(
            FieldPath::from_pointer("/map/0/a~1b", &args).render(),
            "map.0.a/b"
        );
        assert_eq!(FieldPath::from_pointer("", &args).render(), "(root)");
    }

    #[test]
    fn secret_paths_cover_their_subtree() {
        let secret = SecretPath::parse("cards[].cvv");
        let mut path = FieldPath::root();
        path.push_key("cards");
        path.push_index(3);
        assert!(!secret.covers(&path));
        path.push_key("cvv");
        assert!(secret.covers(&path));
        assert!(secret.covers(&path.child_key("x")));
        assert!(
            !SecretPath::parse("cards[0].cvv").covers(&FieldPath::from_pointer(
                "/cards/1/cvv",
                &json!({"cards": [{}, {}]})
            ))
        );
    }
}
