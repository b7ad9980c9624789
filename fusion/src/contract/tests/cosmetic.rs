//! COSMETIC: text only.

use super::*;

#[test]
fn cosmetic_descriptions_and_titles() {
    reports(&[
        (
            |def| {
                def.description = "Invoices.".into();
                def.actions[0].description = "Charges.".into();
                props(def, "charge")["invoice_id"]["description"] = json!("The invoice ID.");
            },
            "COSMETIC billing: Tool description changed (before: 'The billing tool.'; now: 'Invoices.').\n\
             COSMETIC billing.charge: Action description changed (before: 'The charge action.'; now: 'Charges.').\n\
             COSMETIC billing.charge: Description of field 'invoice_id' changed (before: 'The invoice.'; now: 'The invoice ID.').",
        ),
        (
            |def| {
                def.title = Some("Billing".into());
                def.actions[0].title = Some("Charge an invoice".into());
            },
            "COSMETIC billing: Tool title changed (before: none; now: 'Billing').\n\
             COSMETIC billing.charge: Action title changed (before: none; now: 'Charge an invoice').",
        ),
    ]);
}

#[test]
fn cosmetic_text_elsewhere_in_the_schema() {
    let change = |def: &mut ToolDefinition| {
        schema_of(def, "charge")["$defs"]["Currency"]["description"] = json!("ISO 4217");
    };
    let (before, after) = (billing(|_| {}), billing(change));
    let charge = |c: &Contract| c.tools["billing"].actions["charge"].clone();
    // Descriptions are no structure.
    assert_eq!(
        charge(&before).input_structure_digest,
        charge(&after).input_structure_digest
    );
    let text = format!(
        "COSMETIC billing.charge: Input schema text changed (descriptions or titles) (before: {}; now: {}).",
        short(&charge(&before).input_schema_digest),
        short(&charge(&after).input_schema_digest)
    );
    reports(&[(change, &text)]);
}

#[test]
fn a_contract_without_titles_reads_as_before() {
    // Lockfiles written before titles existed have no `title` keys, and still parse.
    let contract = billing(|_| {});
    let text = contract.to_lockfile();
    assert!(!text.contains("\"title\""), "{text}");
    let titled = billing(|def| def.title = Some("Billing".into()));
    let text = titled.to_lockfile();
    assert!(text.contains("\"title\": \"Billing\""), "{text}");
    assert_eq!(Lockfile::parse(&text).unwrap().contract(), &titled);
}
