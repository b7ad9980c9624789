//! Arguments with more problems than a model can act on in one turn: the envelope lists the
//! first 50 by path and one more line counts the rest; up to 50 the envelope is unchanged.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use fusion::validation::ArgumentValidator;

use crate::fixtures::{Currency, assert_line_shapes, lines, validator_for};

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code, reason = "fields are only read by the deserializer")]
struct Prices {
    currencies: Vec<Currency>,
}

fn tags_validator() -> ArgumentValidator {
    let schema = json!({"properties": {"tags": {"type": "array", "items": {"type": "string"}}}});
    ArgumentValidator::new("notes.tag", &schema).unwrap()
}

/// `{"tags": [7, 7, ...]}` with `n` items, none of them a string.
fn wrong_tags(n: usize) -> Value {
    json!({"tags": vec![json!(7); n]})
}

#[test]
fn a_hundred_thousand_wrong_items_list_fifty_problems_and_count_the_rest() {
    let err = tags_validator().check(&wrong_tags(100_000));
    let found = lines(&err);
    assert_eq!(
        found.len(),
        51,
        "50 problems and the line counting the rest"
    );
    assert_eq!(
        found[0],
        (
            "tags",
            "... and 99950 more problems, not listed. You sent: 100000 problems. Expected every \
             problem fixed (fix the ones listed and any like them; the next call lists what is \
             left)."
        )
    );
    assert_eq!(
        found[1],
        ("tags[0]", "Wrong type. You sent: 7. Expected a string.")
    );
    assert_eq!(found[50].0, "tags[49]");
    assert!(err.to_xml().len() < 6_000, "{} bytes", err.to_xml().len());
    assert_line_shapes(&err);
}

#[test]
fn a_hundred_thousand_items_outside_an_enum_are_capped_through_parse_too() {
    let args = json!({"currencies": vec![json!(7); 100_000]});
    let err = validator_for::<Prices>("shop.price")
        .parse::<Prices>(&args)
        .unwrap_err();
    let found = lines(&err);
    assert_eq!(found.len(), 51);
    assert_eq!(found[0].0, "currencies");
    assert!(
        found[0]
            .1
            .starts_with("... and 99950 more problems, not listed.")
    );
    for (n, (path, line)) in found[1..].iter().enumerate() {
        assert_eq!(*path, format!("currencies[{n}]"));
        // The enum's line, never the type line it makes redundant.
        assert_eq!(
            *line,
            "Value not allowed. You sent: 7. Expected one of: 'EUR', 'USD'."
        );
    }
}

#[test]
fn fifty_problems_are_all_listed_and_the_fifty_first_is_counted() {
    let err = tags_validator().check(&wrong_tags(50));
    assert_eq!(err.len(), 50);
    assert!(!err.to_xml().contains("not listed"));
    assert_eq!(err.problems()[49].path(), "tags[49]");

    let err = tags_validator().check(&wrong_tags(51));
    let found = lines(&err);
    assert_eq!(found.len(), 51);
    assert_eq!(
        found[0],
        (
            "tags",
            "... and 1 more problem, not listed. You sent: 51 problems. Expected every problem \
             fixed (fix the ones listed and any like them; the next call lists what is left)."
        )
    );
    assert_eq!(found[50].0, "tags[49]");
}

#[test]
fn the_count_is_at_the_deepest_path_holding_every_problem_not_listed() {
    let schema = json!({"properties": {
        "a": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        "b": {"type": "array", "items": {"type": "integer"}}
    }});
    let validator = ArgumentValidator::new("t", &schema).unwrap();
    let items = |n: usize| vec![json!({"n": "x"}); n];

    // `a[50].n` to `a[99].n`: their deepest common path is `a`.
    let err = validator.check(&json!({"a": items(100)}));
    let found = lines(&err);
    assert_eq!(found.len(), 51);
    assert_eq!(found[0].0, "a");
    assert!(found[0].1.starts_with("... and 50 more problems"), "{err}");
    assert_eq!(found[50].0, "a[49].n");

    // Problems left out of `a` and of `b`: counted at the root.
    let err = validator.check(&json!({"a": items(60), "b": vec![json!("x"); 60]}));
    let found = lines(&err);
    assert_eq!(found.len(), 51);
    assert_eq!(found[0].0, "(root)");
    assert!(
        found[0]
            .1
            .starts_with("... and 70 more problems, not listed. You sent: 120 problems."),
        "{err}"
    );
}

#[test]
fn capped_unknown_fields_keep_their_own_count_next_to_the_cap() {
    let schema = json!({"properties": {"tags": {"type": "array", "items": {"type": "string"}}}});
    let mut args: serde_json::Map<String, Value> =
        (0..1000).map(|n| (format!("x{n:04}"), json!(n))).collect();
    args.insert("tags".into(), Value::Array(vec![json!(7); 100]));
    let err = ArgumentValidator::new("t", &schema)
        .unwrap()
        .check(&Value::Object(args));
    let found = lines(&err);
    // 50 problems (the first by path: `tags[0]`.. `tags[49]` sort before `x0000`), the line
    // counting the unknown fields left out and the line counting the rest.
    assert_eq!(found.len(), 52, "{err}");
    assert_eq!(found[0].0, "(root)");
    assert!(found[0].1.starts_with("... and 990 more unknown fields"));
    assert_eq!(found[1].0, "(root)");
    assert!(
        found[1]
            .1
            .starts_with("... and 60 more problems, not listed. You sent: 1100 problems."),
        "{err}"
    );
    assert_eq!(found[2].0, "tags[0]");
    assert_eq!(found[51].0, "tags[49]");
}
