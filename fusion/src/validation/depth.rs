//! The nesting depth of arguments: a bounded check made on every call and a full count for the
//! envelope, both safe on arguments nested far deeper than the stack could recurse.

use serde_json::Value;

/// Whether `value` is nested at most `limit` levels deep ([`nesting_depth`] `<= limit`), the
/// check every call makes: it stops descending at the limit and allocates nothing, so flat and
/// shallow arguments cost one look at each value. It recurses, once per level and never deeper
/// than the limit; a limit above [`RECURSION_LIMIT`] levels takes [`nesting_depth`]'s
/// heap-allocated walk instead, so a large configured limit cannot overflow the stack here.
pub(crate) fn within_depth(value: &Value, limit: usize) -> bool {
    fn walk(value: &Value, budget: usize) -> bool {
        match value {
            Value::Object(map) => budget > 0 && map.values().all(|v| walk(v, budget - 1)),
            Value::Array(items) => budget > 0 && items.iter().all(|v| walk(v, budget - 1)),
            _ => true,
        }
    }
    if limit > RECURSION_LIMIT {
        return nesting_depth(value) <= limit;
    }
    walk(value, limit)
}

/// The deepest limit [`within_depth`] checks by recursion.
const RECURSION_LIMIT: usize = 128;

/// The nesting depth of `value`: 0 for a scalar, 1 for an object or array holding only
/// scalars (or nothing), one more for each level of objects and arrays inside. Without
/// recursion: the stack holds one iterator per open level.
pub(crate) fn nesting_depth(value: &Value) -> usize {
    enum Level<'v> {
        Object(serde_json::map::Values<'v>),
        Array(std::slice::Iter<'v, Value>),
    }
    fn open(value: &Value) -> Option<Level<'_>> {
        match value {
            Value::Object(map) => Some(Level::Object(map.values())),
            Value::Array(items) => Some(Level::Array(items.iter())),
            _ => None,
        }
    }
    let Some(root) = open(value) else {
        return 0;
    };
    let mut stack = vec![root];
    let mut deepest = 1;
    while let Some(level) = stack.last_mut() {
        let next = match level {
            Level::Object(values) => values.next(),
            Level::Array(items) => items.next(),
        };
        match next {
            Some(child) => {
                if let Some(inner) = open(child) {
                    stack.push(inner);
                    deepest = deepest.max(stack.len());
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `levels` nested objects or arrays around a scalar.
    fn nested(levels: usize, array: bool) -> Value {
        (0..levels).fold(json!(1), |inner, _| {
            if array {
                json!([0, inner, "x"])
            } else {
                json!({"a": 0, "b": inner})
            }
        })
    }

    #[test]
    fn the_bounded_check_agrees_with_the_full_count() {
        let mut values = vec![json!(1), json!({}), json!([]), json!({"a": {"b": []}})];
        for levels in [1, 2, 63, 64, 65, 128, 129, 300] {
            values.push(nested(levels, false));
            values.push(nested(levels, true));
        }
        for value in &values {
            let depth = nesting_depth(value);
            for limit in [0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 1_000] {
                assert_eq!(
                    within_depth(value, limit),
                    depth <= limit,
                    "depth {depth}, limit {limit}"
                );
            }
        }
    }
}
