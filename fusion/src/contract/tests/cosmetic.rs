//! COSMETIC: text only.

use super::*;

#[test]
fn cosmetic_descriptions() {
    let found = deltas(|def| {
        def.description = "Invoices.".into();
        def.actions[0].description = "Charges.".into();
        props(def, "charge")["invoice_id"]["description"] = json!("The invoice ID.");
    });
    assert_eq!(
        found,
        [
            (
                DeltaClass::Cosmetic,
                "billing".to_owned(),
                "Tool description changed (before: 'The billing tool.'; now: 'Invoices.')."
                    .to_owned()
            ),
            (
                DeltaClass::Cosmetic,
                "billing.charge".to_owned(),
                "Action description changed (before: 'The charge action.'; now: 'Charges.')."
                    .to_owned()
            ),
            (
                DeltaClass::Cosmetic,
                "billing.charge".to_owned(),
                "Description of field 'invoice_id' changed (before: 'The invoice.'; now: 'The invoice ID.')."
                    .to_owned()
            ),
        ]
    );
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
    only(
        change,
        DeltaClass::Cosmetic,
        "billing.charge",
        &format!(
            "Input schema text changed (descriptions or titles) (before: {}; now: {}).",
            short(&charge(&before).input_schema_digest),
            short(&charge(&after).input_schema_digest)
        ),
    );
}

#[test]
fn cosmetic_titles() {
    let found = deltas(|def| {
        def.title = Some("Billing".into());
        def.actions[0].title = Some("Charge an invoice".into());
    });
    assert_eq!(
        found,
        [
            (
                DeltaClass::Cosmetic,
                "billing".to_owned(),
                "Tool title changed (before: none; now: 'Billing').".to_owned()
            ),
            (
                DeltaClass::Cosmetic,
                "billing.charge".to_owned(),
                "Action title changed (before: none; now: 'Charge an invoice').".to_owned()
            ),
        ]
    );
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
