//! What the schema finds in a schemars-derived argument type, one line each: missing fields,
//! wrong types, values outside an enum, arguments that are not an object.

use serde_json::json;

use crate::fixtures::{Invoice, lines, valid_invoice, validator_for};

#[test]
fn arguments_that_are_not_an_object() {
    let err = validator_for::<Invoice>("b")
        .parse::<Invoice>(&json!([1, 2]))
        .unwrap_err();
    // serde would read a struct from a sequence and complain about `[0]`; the schema's word
    // about the whole object covers it.
    assert_eq!(
        lines(&err),
        [(
            "(root)",
            "Wrong type. You sent: array(2). Expected an object."
        )]
    );
}

#[test]
fn missing_required_field() {
    let mut args = valid_invoice();
    args.as_object_mut().unwrap().remove("email");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "email",
            "Missing required field. You sent: (missing). Expected a string."
        )]
    );
}

#[test]
fn wrong_type() {
    let mut args = valid_invoice();
    args["amount"] = json!("abc");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "amount",
            "Wrong type. You sent: 'abc'. Expected an integer."
        )]
    );
}

#[test]
fn value_outside_an_enum() {
    let mut args = valid_invoice();
    args["currency"] = json!("eur");
    let err = validator_for::<Invoice>("b").check(&args);
    assert_eq!(
        lines(&err),
        [(
            "currency",
            "Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'."
        )]
    );
}

/// `null` for an enum field fails both the type and the enum check; the model gets one line,
/// the one that lists the allowed values.
#[test]
fn a_value_outside_an_enum_gets_one_line_not_two() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"currency": {"type": "string", "enum": ["EUR", "USD"]}},
        "required": ["currency"],
    });
    let validator = fusion::validation::ArgumentValidator::new("billing.charge", &schema).unwrap();
    assert_eq!(
        validator
            .check(&serde_json::json!({"currency": null}))
            .to_xml(),
        "<validation_error action=\"billing.charge\">\n\
         <field name=\"currency\">Value not allowed. You sent: null. Expected one of: 'EUR', 'USD'.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    );
}
