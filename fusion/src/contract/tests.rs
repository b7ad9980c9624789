//! Unit tests of the contract model and the diff: one test per row of the classification
//! table (issue 6, SPEC section 6), the field walk, and the awareness scoping.

use serde_json::{Value, json};

use super::*;
use crate::code::{ErrorCategory, ErrorCode, Severity};
use crate::{ActionDefinition, Annotations, ErrorContract, ToolDefinition};

fn action(name: &str, schema: Value) -> ActionDefinition {
    ActionDefinition {
        name: name.to_owned(),
        description: format!("The {name} action."),
        input_schema: schema.as_object().expect("an object schema").clone(),
        annotations: Annotations::default(),
        errors: Vec::new(),
        secret_fields: Vec::new(),
        output_schema: None,
    }
}

fn tool(name: &str, actions: Vec<ActionDefinition>) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        discriminator: Some("action".to_owned()),
        actions,
    }
}

/// The charge schema of the billing example, in schemars' shape.
fn charge_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Charge",
        "type": "object",
        "properties": {
            "invoice_id": {"type": "string", "pattern": "^inv_[0-9]{4}$", "description": "The invoice."},
            "amount_cents": {"type": "integer", "format": "uint64", "minimum": 1},
            "currency": {"$ref": "#/$defs/Currency", "description": "The currency."},
            "note": {"type": ["string", "null"]},
        },
        "required": ["invoice_id", "amount_cents", "currency"],
        "additionalProperties": false,
        "$defs": {"Currency": {"type": "string", "enum": ["EUR", "USD"]}},
    })
}

fn billing(change: impl FnOnce(&mut ToolDefinition)) -> Contract {
    let mut def = tool(
        "billing",
        vec![
            action("charge", charge_schema()),
            action(
                "list",
                json!({"type": "object", "properties": {"status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]}}, "$defs": {"Status": {"type": "string", "enum": ["open", "paid"]}}}),
            ),
        ],
    );
    def.actions[0].annotations = Annotations {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(false),
        open_world: None,
    };
    def.actions[1].annotations.read_only = Some(true);
    def.actions[0].errors = vec![ErrorContract::new(
        ErrorCode::NotFound,
        Severity::Error,
        None,
        None,
    )];
    change(&mut def);
    Contract::from_definitions([&def])
}

fn schema_of<'d>(
    def: &'d mut ToolDefinition,
    action: &str,
) -> &'d mut serde_json::Map<String, Value> {
    &mut def
        .actions
        .iter_mut()
        .find(|a| a.name == action)
        .unwrap()
        .input_schema
}

fn props<'d>(def: &'d mut ToolDefinition, action: &str) -> &'d mut serde_json::Map<String, Value> {
    schema_of(def, action)["properties"]
        .as_object_mut()
        .unwrap()
}

/// The deltas from the unchanged billing contract to the changed one, as `(class, scope, text)`.
fn deltas(change: impl FnOnce(&mut ToolDefinition)) -> Vec<(DeltaClass, String, String)> {
    let d = diff(&billing(|_| {}), &billing(change));
    d.deltas()
        .iter()
        .map(|delta| (delta.class, d.scope(delta), delta.text.clone()))
        .collect()
}

/// Asserts exactly one delta, of `class` and `scope`, whose text contains `needle`.
#[track_caller]
fn only(change: impl FnOnce(&mut ToolDefinition), class: DeltaClass, scope: &str, text: &str) {
    let found = deltas(change);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].0, found[0].1.as_str()),
        (class, scope),
        "{found:#?}"
    );
    assert_eq!(found[0].2, text);
}

#[test]
fn model_reads_fields_types_enums_and_constraints() {
    let contract = billing(|_| {});
    let charge = &contract.tools["billing"].actions["charge"];
    assert_eq!(charge.required, ["amount_cents", "currency", "invoice_id"]);
    let currency = &charge.fields["currency"];
    assert!(currency.required);
    assert_eq!(currency.types, ["string"]);
    assert_eq!(
        currency.enum_values.as_deref(),
        Some(&["\"EUR\"".to_owned(), "\"USD\"".to_owned()][..])
    );
    assert_eq!(currency.description, "The currency.");
    assert_eq!(
        charge.fields["amount_cents"].constraints["minimum"],
        json!(1)
    );
    assert_eq!(charge.fields["note"].types, ["null", "string"]);
    assert!(!charge.fields["note"].required);
    let status = &contract.tools["billing"].actions["list"].fields["status"];
    assert_eq!(status.types, ["null", "string"]);
    assert_eq!(
        status.enum_values.as_deref(),
        Some(&["\"open\"".to_owned(), "\"paid\"".to_owned()][..])
    );
    assert_eq!(charge.errors[0].code, "NOT_FOUND");
    assert_eq!(charge.errors[0].category, "not_found");
}

#[test]
fn model_walks_nested_objects_and_arrays_and_survives_recursion() {
    let def = tool(
        "t",
        vec![action(
            "a",
            json!({
                "type": "object",
                "properties": {
                    "address": {"$ref": "#/$defs/Address"},
                    "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                    "tree": {"$ref": "#/$defs/Node"},
                },
                "required": ["address"],
                "$defs": {
                    "Address": {"type": "object", "properties": {"zip": {"type": "string", "minLength": 5}}, "required": ["zip"]},
                    "Item": {"type": "object", "properties": {"sku": {"type": "string"}}},
                    "Node": {"type": "object", "properties": {"child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}}},
                },
            }),
        )],
    );
    let contract = Contract::from_definitions([&def]);
    let fields = &contract.tools["t"].actions["a"].fields;
    let paths: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            "address",
            "address.zip",
            "items",
            "items[].sku",
            "tree",
            "tree.child"
        ]
    );
    assert!(fields["address.zip"].required);
    assert_eq!(fields["address.zip"].constraints["minLength"], json!(5));
}

// --- BREAKING ---------------------------------------------------------------------------------

#[test]
fn breaking_tool_removed() {
    let before = billing(|_| {});
    let after = Contract::default();
    let d = diff(&before, &after);
    assert_eq!(
        d.report(),
        "BREAKING billing: Tool removed (before: 'billing'; now: absent).\n"
    );
}

#[test]
fn breaking_tool_renamed() {
    let before = billing(|_| {});
    let after = billing(|def| def.name = "invoicing".into());
    assert_eq!(
        diff(&before, &after).report(),
        "BREAKING billing: Tool renamed (before: 'billing'; now: 'invoicing').\n"
    );
}

#[test]
fn breaking_action_removed() {
    only(
        |def| def.actions.retain(|a| a.name != "list"),
        DeltaClass::Breaking,
        "billing.list",
        "Action removed (before: 'list'; now: absent).",
    );
}

#[test]
fn breaking_action_renamed() {
    only(
        |def| def.actions[1].name = "list_invoices".into(),
        DeltaClass::Breaking,
        "billing.list",
        "Action renamed (before: 'list'; now: 'list_invoices').",
    );
}

#[test]
fn breaking_required_field_added() {
    only(
        |def| {
            props(def, "charge").insert("customer".into(), json!({"type": "string"}));
            schema_of(def, "charge")["required"]
                .as_array_mut()
                .unwrap()
                .push(json!("customer"));
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Required field 'customer' added (before: absent; now: string).",
    );
}

#[test]
fn breaking_field_became_required() {
    only(
        |def| {
            schema_of(def, "charge")["required"]
                .as_array_mut()
                .unwrap()
                .push(json!("note"));
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'note' became required (before: optional; now: required).",
    );
}

#[test]
fn breaking_field_removed() {
    only(
        |def| {
            props(def, "charge").remove("note");
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'note' removed; it is now rejected as unknown (before: null or string; now: absent).",
    );
}

#[test]
fn breaking_field_type_changed() {
    only(
        |def| {
            props(def, "charge")["amount_cents"]["type"] = json!("string");
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Type of field 'amount_cents' changed (before: integer; now: string).",
    );
}

#[test]
fn breaking_enum_value_removed() {
    only(
        |def| {
            schema_of(def, "charge")["$defs"]["Currency"]["enum"] = json!(["EUR"]);
        },
        DeltaClass::Breaking,
        "billing.charge",
        "Field 'currency' no longer accepts 'USD' (before: 'EUR', 'USD'; now: 'EUR').",
    );
}

#[test]
fn breaking_action_became_destructive() {
    only(
        |def| def.actions[0].annotations.destructive = Some(true),
        DeltaClass::Breaking,
        "billing.charge",
        "Action became destructive (before: false; now: true).",
    );
}

#[test]
fn breaking_action_lost_read_only() {
    let found = deltas(|def| def.actions[1].annotations.read_only = None);
    // Losing read-only also makes the action destructive by the MCP default.
    assert_eq!(
        found,
        [
            (
                DeltaClass::Breaking,
                "billing.list".to_owned(),
                "Action became destructive (before: false (read-only); now: true (MCP default))."
                    .to_owned()
            ),
            (
                DeltaClass::Breaking,
                "billing.list".to_owned(),
                "Action is no longer read-only (before: true; now: false (MCP default))."
                    .to_owned()
            ),
        ]
    );
}

// --- RISKY ------------------------------------------------------------------------------------

#[test]
fn risky_idempotent_changed() {
    only(
        |def| def.actions[0].annotations.idempotent = Some(true),
        DeltaClass::Risky,
        "billing.charge",
        "Hint idempotent changed (before: false; now: true).",
    );
}

#[test]
fn risky_error_code_added() {
    only(
        |def| {
            def.actions[0].errors.push(ErrorContract::new(
                ErrorCode::Custom("ALREADY_PAID".into()),
                Severity::Warning,
                Some(ErrorCategory::Validation),
                None,
            ))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code ALREADY_PAID added (before: absent; now: warning validation, not retryable).",
    );
}

#[test]
fn risky_constraint_tightened() {
    only(
        |def| {
            props(def, "charge")["amount_cents"]["minimum"] = json!(100);
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint minimum of field 'amount_cents' tightened (before: 1; now: 100).",
    );
}

/// The digest a report line shows: `sha256:` and 12 hex digits.
fn short(digest: &str) -> &str {
    &digest[..7 + 12]
}

#[test]
fn risky_other_schema_change() {
    let change = |def: &mut ToolDefinition| {
        schema_of(def, "charge").insert("additionalProperties".into(), json!(true));
    };
    let (before, after) = (billing(|_| {}), billing(change));
    let digest = |c: &Contract| {
        c.tools["billing"].actions["charge"]
            .input_structure_digest
            .clone()
    };
    assert_ne!(digest(&before), digest(&after));
    only(
        change,
        DeltaClass::Risky,
        "billing.charge",
        &format!(
            "Input schema changed beyond its fields (before: {}; now: {}).",
            short(&digest(&before)),
            short(&digest(&after))
        ),
    );
}

// --- SAFE -------------------------------------------------------------------------------------

#[test]
fn safe_tool_added() {
    let before = billing(|_| {});
    let mut after = before.clone();
    after.tools.extend(
        Contract::from_definitions([&tool("ledger", vec![action("balance", json!({}))])]).tools,
    );
    assert_eq!(
        diff(&before, &after).report(),
        "SAFE ledger: Tool added (before: absent; now: 'ledger').\n"
    );
}

#[test]
fn safe_action_added() {
    only(
        |def| {
            def.actions
                .push(action("refund", json!({"type": "object"})))
        },
        DeltaClass::Safe,
        "billing.refund",
        "Action added (before: absent; now: 'refund').",
    );
}

#[test]
fn safe_optional_field_added() {
    only(
        |def| {
            props(def, "charge").insert("memo".into(), json!({"type": "string"}));
        },
        DeltaClass::Safe,
        "billing.charge",
        "Optional field 'memo' added (before: absent; now: string).",
    );
}

#[test]
fn safe_required_field_became_optional() {
    only(
        |def| {
            schema_of(def, "charge")["required"] = json!(["invoice_id", "amount_cents"]);
        },
        DeltaClass::Safe,
        "billing.charge",
        "Field 'currency' became optional (before: required; now: optional).",
    );
}

#[test]
fn safe_enum_value_added() {
    only(
        |def| {
            schema_of(def, "charge")["$defs"]["Currency"]["enum"] = json!(["EUR", "GBP", "USD"]);
        },
        DeltaClass::Safe,
        "billing.charge",
        "Field 'currency' also accepts 'GBP' (before: 'EUR', 'USD'; now: 'EUR', 'GBP', 'USD').",
    );
}

#[test]
fn safe_error_code_removed() {
    only(
        |def| def.actions[0].errors.clear(),
        DeltaClass::Safe,
        "billing.charge",
        "Error code NOT_FOUND removed (before: error not_found, not retryable; now: absent).",
    );
}

// --- COSMETIC ---------------------------------------------------------------------------------

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

// --- awareness --------------------------------------------------------------------------------

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

// --- changes the table does not name ---------------------------------------------------

#[test]
fn changes_outside_the_table_are_classified() {
    only(
        |def| def.actions[0].annotations.open_world = Some(false),
        DeltaClass::Risky,
        "billing.charge",
        "Hint open-world changed (before: true (MCP default); now: false).",
    );
    only(
        |def| def.actions[0].annotations.read_only = Some(true),
        DeltaClass::Safe,
        "billing.charge",
        "Action became read-only (before: false; now: true).",
    );
    only(
        |def| def.actions[1].annotations.destructive = Some(false),
        DeltaClass::Safe,
        "billing.list",
        "Hint destructive restated with the same effect (before: false (read-only); now: false (read-only)).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, Some(true))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND became retryable (before: error not_found, not retryable; now: error not_found, retryable).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, None)
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, not retryable).",
    );
    only(
        |def| {
            def.actions[0].errors[0] =
                ErrorContract::new(ErrorCode::NotFound, Severity::Warning, None, Some(true))
        },
        DeltaClass::Risky,
        "billing.charge",
        "Error code NOT_FOUND changed (before: error not_found, not retryable; now: warning not_found, retryable).",
    );
    only(
        |def| {
            props(def, "charge")["amount_cents"]["type"] = json!("number");
        },
        DeltaClass::Risky,
        "billing.charge",
        "Type of field 'amount_cents' widened (before: integer; now: number).",
    );
    only(
        |def| {
            props(def, "charge")["amount_cents"]["minimum"] = json!(0);
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint minimum of field 'amount_cents' loosened (before: 1; now: 0).",
    );
    only(
        |def| {
            props(def, "charge")["invoice_id"]["pattern"] = json!("^inv_");
        },
        DeltaClass::Risky,
        "billing.charge",
        "Constraint pattern of field 'invoice_id' changed (before: \"^inv_[0-9]{4}$\"; now: \"^inv_\").",
    );
    only(
        |def| {
            def.actions[0].output_schema =
                Some(json!({"type": "object"}).as_object().unwrap().clone())
        },
        DeltaClass::Safe,
        "billing.charge",
        "Output schema declared (before: none; now: declared).",
    );
    only(
        |def| def.discriminator = Some("op".into()),
        DeltaClass::Breaking,
        "billing",
        "Discriminator changed (before: 'action'; now: 'op').",
    );
}

/// `currency: String` becoming `currency: Option<String>`: schemars drops it from `required`
/// and adds `null` to its types. That is one SAFE change (the issue's row "a required field
/// becoming optional"), not also a RISKY "type widened".
#[test]
fn safe_required_field_became_option() {
    only(
        |def| {
            schema_of(def, "charge")["required"] = json!(["invoice_id", "amount_cents"]);
            props(def, "charge")["currency"] = json!({"anyOf": [{"$ref": "#/$defs/Currency"}, {"type": "null"}], "description": "The currency."});
        },
        DeltaClass::Safe,
        "billing.charge",
        "Field 'currency' became optional (before: required; now: optional).",
    );
    only(
        |def| {
            schema_of(def, "charge")["required"] = json!(["invoice_id", "currency"]);
            props(def, "charge")["amount_cents"] =
                json!({"type": ["integer", "null"], "format": "uint64", "minimum": 1});
        },
        DeltaClass::Safe,
        "billing.charge",
        "Field 'amount_cents' became optional (before: required; now: optional).",
    );
    // Accepting `null` on a field that stays required is still a widening.
    only(
        |def| {
            props(def, "charge")["amount_cents"] =
                json!({"type": ["integer", "null"], "format": "uint64", "minimum": 1});
        },
        DeltaClass::Risky,
        "billing.charge",
        "Type of field 'amount_cents' widened (before: integer; now: integer or null).",
    );
    // A field of any type narrowed to `null` while becoming optional is no widening.
    let found = deltas(|def| {
        schema_of(def, "charge")["required"] = json!(["invoice_id", "currency"]);
        props(def, "charge")["amount_cents"] = json!({"type": "null"});
    });
    assert!(
        found
            .iter()
            .any(|(class, _, text)| *class == DeltaClass::Breaking
                && text.starts_with("Type of field 'amount_cents' changed")),
        "{found:#?}"
    );
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

/// A recursive untagged type (`enum Json { Num(f64), List(Vec<Json>), Boxed(Box<Json>) }`)
/// has a `$ref` to itself among its own `anyOf` branches. Reading its fields used to recurse
/// until the stack overflowed (an abort, at server start with a baseline).
#[test]
fn model_survives_a_type_listing_itself_among_its_alternatives() {
    let schema = json!({
        "type": "object",
        "properties": {"j": {"anyOf": [{"$ref": "#/$defs/Json"}, {"type": "null"}]}},
        "$defs": {"Json": {"anyOf": [
            {"type": "number"},
            {"type": "array", "items": {"$ref": "#/$defs/Json"}},
            {"$ref": "#/$defs/Json"},
        ]}},
    });
    let contract = Contract::from_definitions([&tool("t", vec![action("a", schema)])]);
    let j = &contract.tools["t"].actions["a"].fields["j"];
    assert_eq!(j.types, ["array", "null", "number"]);
    assert!(!j.required);
}
