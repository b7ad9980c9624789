//! Awareness: the deltas each action's validation errors carry.

use super::*;

fn baseline_of(contract: Contract) -> ContractBaseline {
    ContractBaseline::new(Lockfile::new(contract))
}

#[test]
fn awareness_lists_the_exact_action_and_tool_wide_deltas_only() {
    // `charge` and `charge_all`: a substring match would mix them up.
    let base = |def: &mut ToolDefinition| {
        let mut all = action("charge_all", json!({"type": "object", "properties": {}}));
        all.annotations.read_only = Some(true);
        def.actions.push(all);
    };
    let before = billing(base);
    let after = billing(|def| {
        base(def);
        def.discriminator = Some("op".into());
        def.actions[2].annotations.read_only = Some(false);
        props(def, "charge")["amount_cents"]["minimum"] = json!(5);
        props(def, "charge").insert("memo".into(), json!({"type": "string"}));
        def.actions[0].description = "Charges.".into();
    });
    let awareness = baseline_of(before).awareness(&after, false);
    let charge: Vec<(DeltaClass, &str)> = awareness
        .for_action("billing.charge")
        .iter()
        .map(|d| (d.class, d.scope.as_str()))
        .collect();
    // BREAKING tool-wide first, then the RISKY constraint; SAFE and COSMETIC are left out.
    assert_eq!(
        charge,
        [
            (DeltaClass::Breaking, "billing"),
            (DeltaClass::Risky, "billing.charge")
        ]
    );
    let all = awareness.for_action("billing.charge_all");
    assert!(all.iter().all(|d| d.scope != "billing.charge"), "{all:#?}");
    assert!(all.iter().any(|d| d.scope == "billing.charge_all"));
    assert!(awareness.for_action("billing.char").is_empty());
    assert!(awareness.for_action("charge").is_empty());

    // Flat exposition names action scopes as flat tools.
    let flat = baseline_of(billing(base)).awareness(&after, true);
    let scopes: Vec<&str> = flat
        .for_action("billing.charge")
        .iter()
        .map(|d| d.scope.as_str())
        .collect();
    assert_eq!(scopes, ["billing", "billing_charge"]);
}

#[test]
fn awareness_is_capped_highest_first() {
    let before = billing(|_| {});
    let after = billing(|def| {
        for name in ["a", "b", "c", "d", "e", "f"] {
            props(def, "charge").insert(name.into(), json!({"type": "string"}));
        }
        schema_of(def, "charge")["required"] = json!([
            "invoice_id",
            "amount_cents",
            "currency",
            "a",
            "b",
            "c",
            "d",
            "e",
            "f"
        ]);
        props(def, "charge")["amount_cents"]["minimum"] = json!(5);
    });
    let awareness = baseline_of(before.clone()).awareness(&after, false);
    let listed = awareness.for_action("billing.charge");
    assert_eq!(listed.len(), DEFAULT_MAX_DELTAS);
    assert!(listed.iter().all(|d| d.class == DeltaClass::Breaking));
    let three = baseline_of(before.clone())
        .max_deltas(3)
        .awareness(&after, false);
    assert_eq!(three.for_action("billing.charge").len(), 3);
    let none = baseline_of(before).max_deltas(0).awareness(&after, false);
    assert!(none.for_action("billing.charge").is_empty());
}

#[test]
fn single_function_tools_are_scoped_by_tool_name() {
    let mut def = tool(
        "add",
        vec![action(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "number"}}}),
        )],
    );
    def.discriminator = None;
    let before = Contract::from_definitions([&def]);
    props(&mut def, "add")["a"]["type"] = json!("string");
    let after = Contract::from_definitions([&def]);
    let awareness = baseline_of(before).awareness(&after, false);
    let listed = awareness.for_action("add");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].scope, "add");
}
