//! The report: sorted highest class first, one line per delta, long descriptions cut to
//! show where they differ.

use super::*;

#[test]
fn report_is_sorted_highest_class_first() {
    let d = diff(
        &billing(|_| {}),
        &billing(|def| {
            def.description = "Invoices.".into();
            def.actions
                .push(action("refund", json!({"type": "object"})));
            def.actions[0].annotations.idempotent = Some(true);
            def.actions.retain(|a| a.name != "list");
        }),
    );
    let classes: Vec<DeltaClass> = d.deltas().iter().map(|d| d.class).collect();
    assert_eq!(
        classes,
        [
            DeltaClass::Breaking,
            DeltaClass::Risky,
            DeltaClass::Safe,
            DeltaClass::Cosmetic
        ]
    );
    assert_eq!(d.highest(), Some(DeltaClass::Breaking));
    assert!(d.has_breaking());
    assert_eq!(d.report().lines().count(), 4);
    assert!(diff(&billing(|_| {}), &billing(|_| {})).is_empty());
}

/// A newline in an enum value (or a field name) cannot split a delta into two report lines,
/// nor forge one: control characters are written escaped.
#[test]
fn report_keeps_one_line_per_delta_whatever_the_names() {
    let d = diff(
        &billing(|_| {}),
        &billing(|def| {
            schema_of(def, "charge")["$defs"]["Currency"]["enum"] =
                json!(["EUR", "USD", "X\nSAFE billing.charge: forged\r\t"]);
        }),
    );
    assert_eq!(
        d.report(),
        "SAFE billing.charge: Field 'currency' also accepts 'X\\nSAFE billing.charge: forged\\r\\t' \
         (before: 'EUR', 'USD'; now: 'EUR', 'USD', 'X\\nSAFE billing.charge: forged\\r\\t').\n"
    );
    // The delta itself keeps the value as it is (the XML envelope escapes it its own way).
    assert!(d.deltas()[0].text.contains("'X\nSAFE"));
}

/// Two long descriptions that differ after the first 60 characters do not read the same in the
/// report: the window moves to the difference. A reflowed doc comment says it is whitespace.
#[test]
fn long_descriptions_show_where_they_differ() {
    let long = "Charges an open invoice; charging its whole balance marks it paid and";
    let changed = |description: &'static str| {
        move |def: &mut ToolDefinition| def.actions[0].description = description.to_owned()
    };
    let base = |def: &mut ToolDefinition| {
        def.actions[0].description = format!("{long} sends a receipt.");
    };
    let d = diff(
        &billing(base),
        &billing(changed(
            "Charges an open invoice; charging its whole balance marks it paid and sends no receipt.",
        )),
    );
    assert_eq!(
        d.report(),
        "COSMETIC billing.charge: Action description changed (before: '...s it paid and sends a receipt.'; now: '...s it paid and sends no receipt.').\n"
    );
    // A difference early on keeps the start, cut at 57 characters as before.
    let d = diff(
        &billing(base),
        &billing(changed(
            "Charges a paid invoice; charging its whole balance marks it paid and sends a receipt.",
        )),
    );
    assert_eq!(
        d.report(),
        "COSMETIC billing.charge: Action description changed (before: 'Charges an open invoice; charging its whole balance marks...'; now: 'Charges a paid invoice; charging its whole balance marks ...').\n"
    );
    let d = diff(
        &billing(|def| def.actions[0].description = "Charges\none invoice.".to_owned()),
        &billing(changed("Charges one invoice.")),
    );
    assert_eq!(
        d.report(),
        "COSMETIC billing.charge: Action description changed in whitespace only (before: 'Charges one invoice.'; now: 'Charges one invoice.').\n"
    );
}
