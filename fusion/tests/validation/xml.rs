//! The envelope is well-formed XML whatever the action, paths and lines hold: attribute values
//! and text are escaped.

use fusion::ValidationError;
use fusion::validation::ArgumentValidator;
use proptest::prelude::*;
use serde_json::json;

use crate::fixtures::{Invoice, validator_for};

const CLOSE: &str = "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";

#[test]
fn hostile_action_and_field_names_are_escaped() {
    let schema = json!({"properties": {"a": {}}});
    let err = ArgumentValidator::new("evil\"<tool>&'x", &schema)
        .unwrap()
        .check(&json!({"<b>&\"q\"": "x < y & z > \"w\""}));
    assert_eq!(
        err.to_xml(),
        format!(
            "<validation_error action=\"evil&quot;&lt;tool&gt;&amp;&apos;x\">\n\
             <field name=\"&lt;b&gt;&amp;&quot;q&quot;\">Unknown field. You sent: 'x &lt; y &amp; z > \"w\"'. Expected one of the known fields: a.</field>\n\
             {CLOSE}"
        )
    );
    let xml = err.to_xml();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(
        doc.root_element().attribute("action"),
        Some("evil\"<tool>&'x")
    );
}

#[test]
fn failing_validation_is_well_formed_xml() {
    let args = json!({"email": "a\u{1}b", "amount": -1, "items": [{"sku": "<&>", "quantity": 0}], "x&y": 1});
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    let xml = err.to_xml();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "validation_error");
    assert_eq!(root.attribute("action"), Some("billing.create_invoice"));
    let fields: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("field"))
        .collect();
    assert_eq!(fields.len(), err.problems().len());
    for (node, problem) in fields.iter().zip(err.problems()) {
        assert_eq!(node.attribute("name"), Some(problem.path()));
        assert_eq!(
            node.text(),
            Some(problem.line().replace('\u{1}', "\u{FFFD}").as_str())
        );
    }
    let recovery = root
        .children()
        .find(|n| n.has_tag_name("recovery"))
        .unwrap();
    assert_eq!(recovery.text(), Some(fusion::validation::RECOVERY));
}

proptest! {
    #[test]
    fn any_text_renders_well_formed(action in "\\PC*", path in "\\PC*", line in "\\PC*") {
        let err = ValidationError::new(action.as_str()).with_problem(path.as_str(), line.as_str());
        let xml = err.to_xml();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        prop_assert_eq!(root.attribute("action"), Some(action.as_str()));
        let field = root.children().find(|n| n.has_tag_name("field")).unwrap();
        prop_assert_eq!(field.attribute("name"), Some(path.as_str()));
        prop_assert_eq!(field.text().unwrap_or(""), line.as_str());
    }
}
