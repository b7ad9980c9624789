//! The envelope: what a model reads when a call fails, and the flags client code branches on.
//! The bottom layer, importing nothing else of the crate.

pub(crate) mod code;
pub(crate) mod error;
pub(crate) mod flags;
pub mod internal;
pub(crate) mod store;
pub(crate) mod suggest;
pub(crate) mod validation_error;
pub(crate) mod xml;

/// The items separated by commas, the last two by `last` (` and `, ` or `): `a`, `a and b`,
/// `a, b or c`, as the messages and recoveries a model reads list things.
pub(crate) fn join_last<S: AsRef<str>>(items: impl IntoIterator<Item = S>, last: &str) -> String {
    let items: Vec<S> = items.into_iter().collect();
    let mut out = String::new();
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            out.push_str(if n + 1 == items.len() { last } else { ", " });
        }
        out.push_str(item.as_ref());
    }
    out
}
