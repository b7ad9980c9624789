//! The whole envelope: every problem of a call in one `<validation_error>`, from the schema,
//! serde and the rules together, with the typed flags.

use serde_json::json;

use crate::fixtures::{Invoice, Signup, lines, valid_invoice, valid_signup, validator_for};

#[test]
fn valid_arguments_parse() {
    let invoice: Invoice = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated(&valid_invoice())
        .unwrap();
    assert_eq!(invoice.amount, 1200);
    assert!(
        validator_for::<Signup>("s")
            .parse_validated::<Signup>(&valid_signup())
            .is_ok()
    );
    assert!(
        validator_for::<Invoice>("b")
            .check(&valid_invoice())
            .is_empty()
    );
}

#[test]
fn every_problem_in_one_envelope_in_path_order() {
    let args = json!({
        "email": "not-an-email",
        "amount": 0,
        "currency": "EUR",
        "address": {"zip": "1", "city": "Berlin"},
        "items": [{"sku": "", "quantity": 0}],
        "callback": "notaurl",
        "billing": {"zip": "123", "city": "Paris"},
        "amout": 5
    });
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        err.to_xml(),
        "<validation_error action=\"billing.create_invoice\">\n\
         <field name=\"address.zip\">Too short. You sent: '1'. Expected between 5 and 10 characters.</field>\n\
         <field name=\"amount\">Number too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"amout\">Unknown field. You sent: 5. Expected one of the known fields: address, amount, billing, callback, currency, email, items (did you mean 'amount'?).</field>\n\
         <field name=\"billing.zip\">Too short. You sent: '123'. Expected between 5 and 10 characters.</field>\n\
         <field name=\"callback\">Invalid URL format. You sent: 'notaurl'. Expected a valid URL such as 'https://example.com/path'.</field>\n\
         <field name=\"email\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>\n\
         <field name=\"items[0].quantity\">Number too small. You sent: 0. Expected a number >= 1.</field>\n\
         <field name=\"items[0].sku\">Too short. You sent: ''. Expected at least 1 character.</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    );
    assert_eq!(
        err.flags(),
        json!({"isError": true, "errorCategory": "validation", "isRetryable": false,
               "code": "VALIDATION_ERROR", "severity": "error"})
    );
}

#[test]
fn structural_and_rule_problems_merge_when_deserialization_fails() {
    // `amount` has the wrong type, so serde fails and the rules cannot run: the schema still
    // reports everything it sees, and serde's own complaint about `amount` is dropped.
    let args = json!({
        "email": "nope",
        "amount": "abc",
        "address": {"zip": "1"},
        "items": [{"sku": "", "quantity": 0}]
    });
    let err = validator_for::<Invoice>("billing.create_invoice")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "address.city",
                "Missing required field. You sent: (missing). Expected a string."
            ),
            (
                "address.zip",
                "Too short. You sent: '1'. Expected at least 5 characters."
            ),
            (
                "amount",
                "Wrong type. You sent: 'abc'. Expected an integer."
            ),
            (
                "currency",
                "Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'."
            ),
            (
                "email",
                "Invalid email format. You sent: 'nope'. Expected a valid email address."
            ),
            (
                "items[0].quantity",
                "Number too small. You sent: 0. Expected a number >= 1."
            ),
            (
                "items[0].sku",
                "Too short. You sent: ''. Expected at least 1 character."
            ),
        ]
    );
}

#[test]
fn nested_option_reports_the_inner_path() {
    let mut args = valid_invoice();
    args["billing"] = json!({"zip": 5});
    let err = validator_for::<Invoice>("b")
        .parse_validated::<Invoice>(&args)
        .unwrap_err();
    assert_eq!(
        lines(&err),
        [
            (
                "billing.city",
                "Missing required field. You sent: (missing). Expected a string."
            ),
            ("billing.zip", "Wrong type. You sent: 5. Expected a string."),
        ]
    );
}
