//! Arguments nested deeper than the limit (64 levels by default) are refused with one `(root)`
//! line by every entry point, without recursion, even 100 000 levels deep on a small stack.

use fusion::validation::ArgumentValidator;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use validator::Validate;

use crate::fixtures::{lines, validator_for};

/// `leaf` wrapped `levels` times by `wrap`, built without recursion.
fn chain(leaf: Value, levels: usize, wrap: impl Fn(Value) -> Value) -> Value {
    (0..levels).fold(leaf, |inner, _| wrap(inner))
}

fn in_object(inner: Value) -> Value {
    let mut map = Map::new();
    map.insert("a".to_owned(), inner);
    Value::Object(map)
}

fn in_array(inner: Value) -> Value {
    Value::Array(vec![inner])
}

/// Drops `value` without recursion (serde_json's own drop recurses once per level).
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema, Validate)]
#[allow(
    dead_code,
    reason = "fields are only read by the deserializer and the rules"
)]
struct Blob {
    data: Value,
    #[validate(length(min = 1))]
    name: String,
}

#[test]
fn arguments_nested_100_000_levels_deep_are_refused_on_a_small_stack() {
    const LEVELS: usize = 100_000;
    let blobs = validator_for::<Blob>("store.put").secret("name");
    let arrays = chain(json!([]), LEVELS - 1, in_array);
    let objects = chain(json!({}), LEVELS - 1, in_object);
    let refused = |what: &str| {
        format!(
            "Arguments nested too deeply. You sent: {what} nested 100000 levels deep. Expected at most 64 levels of nesting."
        )
    };
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn_scoped(scope, || {
                for (args, what) in [(&arrays, "an array"), (&objects, "an object")] {
                    let want = refused(what);
                    let want = [("(root)", want.as_str())];
                    assert!(!blobs.is_valid(args));
                    assert_eq!(lines(&blobs.check(args)), want);
                    assert_eq!(lines(&blobs.parse::<Blob>(args).unwrap_err()), want);
                    assert_eq!(
                        lines(&blobs.parse_validated::<Blob>(args).unwrap_err()),
                        want
                    );
                    let err = blobs
                        .parse_with::<Blob, _>(args, |b| b.validate().err())
                        .unwrap_err();
                    assert_eq!(lines(&err), want);
                    let err = blobs.rule_errors(&validator::ValidationErrors::new(), args);
                    assert_eq!(lines(&err), want);
                }
            })
            .unwrap();
        assert!(worker.join().is_ok(), "the worker panicked");
    });
    dismantle(arrays);
    dismantle(objects);
}

#[test]
fn nesting_limit_is_64_by_default_and_configurable() {
    let loose = ArgumentValidator::new("t", &json!({})).unwrap();
    let at_limit = chain(json!({}), 63, in_object);
    assert!(loose.check(&at_limit).is_empty());
    assert!(loose.parse::<Value>(&at_limit).is_ok());
    let over = chain(json!({}), 64, in_object);
    assert_eq!(
        lines(&loose.check(&over)),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an object nested 65 levels deep. Expected at most 64 levels of nesting."
        )]
    );

    let shallow = ArgumentValidator::new("t", &json!({}))
        .unwrap()
        .max_depth(2);
    assert!(
        shallow
            .check(&json!({"a": {"b": 1}, "c": [1, 2]}))
            .is_empty()
    );
    assert_eq!(
        lines(&shallow.check(&json!({"a": {"b": [1]}}))),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an object nested 3 levels deep. Expected at most 2 levels of nesting."
        )]
    );
    let flat = ArgumentValidator::new("t", &json!({}))
        .unwrap()
        .max_depth(1);
    assert_eq!(
        lines(&flat.check(&json!([[]]))),
        [(
            "(root)",
            "Arguments nested too deeply. You sent: an array nested 2 levels deep. Expected at most 1 level of nesting."
        )]
    );
}
