//! The `You sent:` part of a line: strings cut after 50 characters (counted as characters,
//! not bytes), objects as compact JSON cut the same way.

use fusion::validation::ArgumentValidator;
use serde_json::{Value, json};

fn too_long_line(value: Value) -> String {
    let schema = json!({"properties": {"v": {"maxLength": 1, "minProperties": 99}}});
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&json!({"v": value}));
    err.problems()[0].line().to_owned()
}

#[test]
fn strings_are_cut_after_fifty_characters() {
    let fifty = "a".repeat(50);
    assert_eq!(
        too_long_line(json!(fifty)),
        format!("Too long. You sent: '{fifty}'. Expected at most 1 character.")
    );
    let fifty_one = "b".repeat(51);
    assert_eq!(
        too_long_line(json!(fifty_one)),
        format!(
            "Too long. You sent: '{}...'. Expected at most 1 character.",
            "b".repeat(47)
        )
    );
}

#[test]
fn cutting_counts_characters_not_bytes() {
    let fifty = "é".repeat(50);
    assert_eq!(
        too_long_line(json!(fifty)),
        format!("Too long. You sent: '{fifty}'. Expected at most 1 character.")
    );
    let fifty_one = "日".repeat(51);
    assert_eq!(
        too_long_line(json!(fifty_one)),
        format!(
            "Too long. You sent: '{}...'. Expected at most 1 character.",
            "日".repeat(47)
        )
    );
}

#[test]
fn objects_are_compact_json_cut_the_same_way() {
    // {"k":"…"} adds 8 characters around the value.
    let fifty = json!({"k": "x".repeat(42)});
    assert_eq!(
        too_long_line(fifty.clone()),
        format!("Too few fields. You sent: {fifty}. Expected at least 99 fields.")
    );
    let fifty_one = json!({"k": "x".repeat(43)});
    assert_eq!(
        too_long_line(fifty_one),
        format!(
            "Too few fields. You sent: {{\"k\":\"{}.... Expected at least 99 fields.",
            "x".repeat(41)
        )
    );
}
