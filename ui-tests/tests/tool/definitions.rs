//! The generated definitions and action constants.

use fusion::{
    Annotations, ErrorCategory, ErrorCode, ErrorContract, Severity, Tool, ToolError, ToolErrors,
};
use serde_json::json;

use super::dispatch::{Billing, GetInvoice};
use super::functions::{Calculator, Fixed, Inventory, Weather};
use super::outcomes::Kinds;
use super::{call, envelope, object, payload};

// --- definitions ------------------------------------------------------------------------------

#[derive(Debug)]
enum LedgerError {
    AlreadyPaid,
    Locked,
}

impl From<LedgerError> for ToolError {
    fn from(error: LedgerError) -> ToolError {
        match error {
            LedgerError::AlreadyPaid => ToolError::new("ALREADY_PAID", "The invoice is paid."),
            LedgerError::Locked => ToolError::new(ErrorCode::Conflict, "The ledger is locked."),
        }
    }
}

impl ToolErrors for LedgerError {
    fn error_contracts() -> Vec<ErrorContract> {
        vec![
            ErrorContract::new(
                "ALREADY_PAID".into(),
                Severity::Error,
                Some(ErrorCategory::Validation),
                None,
            ),
            ErrorContract::new(ErrorCode::Conflict, Severity::Error, None, Some(true)),
        ]
    }
}

/// Ledger operations.
struct InvoiceLedger;

#[fusion::tool(discriminator = "op", description = "Pays and voids invoices.")]
impl InvoiceLedger {
    /// Pays an invoice.
    ///
    /// Irreversible.
    #[action(destructive, idempotent = false, open_world)]
    fn pay(&self, args: GetInvoice) -> Result<String, LedgerError> {
        match args.id.as_str() {
            "inv_paid" => Err(LedgerError::AlreadyPaid),
            "inv_locked" => Err(LedgerError::Locked),
            id => Ok(format!("paid {id}")),
        }
    }

    /// Not used: the option wins.
    #[action(name = "void_invoice", description = "Voids an invoice.")]
    fn void(&self, args: GetInvoice) -> Result<String, ToolError> {
        Ok(format!("voided {}", args.id))
    }
}

#[test]
fn the_definition_names_and_describes_the_tool_and_its_actions() {
    let definition = Billing::default().definition();
    assert_eq!(definition.name, "billing");
    assert_eq!(
        definition.description,
        "Invoices of the billing system.\n\nAmounts are in cents."
    );
    assert_eq!(definition.discriminator.as_deref(), Some("action"));
    let names: Vec<&str> = definition.actions.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "list_invoices",
            "get_invoice",
            "create_invoice",
            "count",
            "whoami",
            "whoami_ref"
        ]
    );
    let get = definition.action("get_invoice").unwrap();
    assert_eq!(get.description, "Fetches one invoice.");
    assert_eq!(get.input_schema["required"], json!(["id"]));
    assert_eq!(
        get.input_schema["properties"]["id"]["description"],
        "The invoice ID (`inv_…`)."
    );
    assert_eq!(
        get.annotations,
        Annotations {
            read_only: Some(true),
            idempotent: Some(true),
            ..Annotations::default()
        }
    );
    let count = definition.action("count").unwrap();
    assert_eq!(count.description, "How many calls this tool value served.");
    assert_eq!(
        count.input_schema,
        object(json!({"type": "object", "properties": {}}))
    );
    assert!(count.errors.is_empty());
    assert!(count.secret_fields.is_empty());
}

#[test]
fn options_override_names_descriptions_and_the_discriminator() {
    let definition = InvoiceLedger.definition();
    assert_eq!(definition.name, "invoice_ledger");
    assert_eq!(definition.description, "Pays and voids invoices.");
    assert_eq!(definition.discriminator.as_deref(), Some("op"));
    let pay = &definition.actions[0];
    assert_eq!(pay.description, "Pays an invoice.\n\nIrreversible.");
    assert_eq!(
        pay.annotations,
        Annotations {
            read_only: None,
            destructive: Some(true),
            idempotent: Some(false),
            open_world: Some(true),
        }
    );
    let void = &definition.actions[1];
    assert_eq!(void.name, "void_invoice");
    assert_eq!(void.description, "Voids an invoice.");
    assert_eq!(void.annotations, Annotations::default());
}

#[test]
fn contracts_come_from_the_error_type() {
    let definition = InvoiceLedger.definition();
    assert_eq!(definition.actions[0].errors, LedgerError::error_contracts());
    assert!(definition.actions[0].errors[1].retryable);
    // `ToolError`, `anyhow::Error` and errors with an empty `ToolErrors` impl declare no
    // contract.
    assert!(definition.actions[1].errors.is_empty());
    let kinds = Kinds.definition();
    assert!(kinds.actions.iter().all(|a| a.errors.is_empty()));
}

#[tokio::test]
async fn a_custom_discriminator_routes_and_is_named_in_errors() {
    let paid = call(InvoiceLedger, json!({"op": "pay", "id": "inv_1"})).await;
    assert_eq!(payload(&paid), "paid inv_1");
    let void = call(InvoiceLedger, json!({"op": "void_invoice", "id": "inv_1"})).await;
    assert_eq!(payload(&void), "voided inv_1");
    let domain = call(InvoiceLedger, json!({"op": "pay", "id": "inv_paid"})).await;
    assert_eq!(domain.tool_error().unwrap().code().as_str(), "ALREADY_PAID");
    let missing = call(InvoiceLedger, json!({"action": "pay", "id": "inv_1"})).await;
    assert_eq!(
        envelope(&missing),
        "<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">
<message>The tool 'invoice_ledger' needs the argument 'op' naming the action to run.</message>
<recovery>Call 'invoice_ledger' again with 'op' set to one of the available actions.</recovery>
<available_actions>
  <action>invoice_ledger.pay</action>
  <action>invoice_ledger.void_invoice</action>
</available_actions>
</tool_error>"
    );
}

#[test]
fn a_function_tool_is_defined_by_its_function() {
    let definition = Calculator.definition();
    assert_eq!(definition.name, "calculator");
    assert_eq!(
        definition.description,
        "Evaluates one arithmetic operation."
    );
    assert_eq!(definition.discriminator, None);
    assert_eq!(definition.actions.len(), 1);
    let action = &definition.actions[0];
    assert_eq!(action.name, "calculator");
    assert_eq!(action.description, "Evaluates one arithmetic operation.");
    assert_eq!(action.input_schema["required"], json!(["a", "b", "op"]));
    assert_eq!(
        action.annotations,
        Annotations {
            read_only: Some(true),
            idempotent: Some(true),
            open_world: Some(false),
            destructive: None,
        }
    );
    let weather = Weather.definition();
    assert_eq!(weather.name, "get_weather");
    assert_eq!(weather.actions[0].name, "get_weather");
}

// --- action constants -------------------------------------------------------------------------

#[test]
fn action_constants_name_each_action_as_models_call_it() {
    assert_eq!(
        Billing::__fusion_action_list_invoices.qualified(),
        "billing.list_invoices"
    );
    // Named after the method, valued with the action name.
    assert_eq!(
        Billing::__fusion_action_call_count.qualified(),
        "billing.count"
    );
    assert_eq!(
        InvoiceLedger::__fusion_action_void.qualified(),
        "invoice_ledger.void_invoice"
    );
    assert_eq!(
        Calculator::__fusion_action_calculator.qualified(),
        "calculator"
    );
    assert_eq!(
        Calculator::__fusion_action_calculator,
        fusion::__private::ActionRef {
            tool: "calculator",
            action: "calculator",
            single: true,
        }
    );
    assert_eq!(Weather::__fusion_action_weather.qualified(), "get_weather");
    assert_eq!(
        Inventory::<Fixed>::__fusion_action_stock,
        fusion::__private::ActionRef {
            tool: "inventory",
            action: "stock",
            single: false
        }
    );
}

// --- `Result` aliases -------------------------------------------------------------------------

/// An alias of `Result`: what it is called does not matter, only the type it stands for.
type LedgerResult<T> = Result<T, LedgerError>;
type Payment<T> = Result<T, LedgerError>;

struct AliasedLedger;

#[fusion::tool]
impl AliasedLedger {
    #[action]
    fn pay(&self) -> LedgerResult<String> {
        Err(LedgerError::AlreadyPaid)
    }

    #[action]
    fn refund(&self) -> Payment<String> {
        Err(LedgerError::Locked)
    }

    #[action]
    fn read(&self) -> std::io::Result<String> {
        Err(std::io::Error::other("disk at /dev/sda1 failed"))
    }
}

#[tokio::test]
async fn a_result_behind_an_alias_is_fallible_and_keeps_its_contracts() {
    let definition = AliasedLedger.definition();
    assert_eq!(definition.actions[0].errors, LedgerError::error_contracts());
    assert_eq!(definition.actions[1].errors, LedgerError::error_contracts());
    let paid = envelope(&call(AliasedLedger, json!({"action": "pay"})).await);
    assert!(paid.contains(r#"code="ALREADY_PAID""#), "{paid}");
    assert!(!paid.contains("\"Err\""), "{paid}");
    let refunded = envelope(&call(AliasedLedger, json!({"action": "refund"})).await);
    assert!(refunded.contains(r#"code="CONFLICT""#), "{refunded}");
    let read = envelope(&call(AliasedLedger, json!({"action": "read"})).await);
    assert!(read.contains(r#"code="INTERNAL_ERROR""#), "{read}");
    assert!(!read.contains("sda1"), "{read}");
}

// --- titles and tool-wide hints -------------------------------------------------------------------

struct Archive;

/// Archived invoices.
///
/// Read-only unless stated.
#[fusion::tool(read_only, open_world = false)]
impl Archive {
    /// Finds archived invoices by customer
    /// and year.
    #[action]
    fn find(&self) {}

    #[action(title = "Purge the archive", read_only = false, destructive)]
    fn purge(&self) {}

    #[action(description = "Counts them.")]
    fn count(&self) {}
}

/// Gets the weather.
#[fusion::tool(title = "Weather", read_only)]
#[action(idempotent)]
fn forecast() {}

#[test]
fn titles_default_to_the_doc_summary_and_tool_hints_fill_the_actions() {
    let def = Archive.definition();
    assert_eq!(def.title.as_deref(), Some("Archived invoices"));
    let titles: Vec<Option<&str>> = def.actions.iter().map(|a| a.title.as_deref()).collect();
    assert_eq!(
        titles,
        [
            Some("Finds archived invoices by customer and year"),
            Some("Purge the archive"),
            None,
        ]
    );
    let hints = |read_only, destructive| Annotations {
        read_only: Some(read_only),
        destructive,
        idempotent: None,
        open_world: Some(false),
    };
    assert_eq!(def.actions[0].annotations, hints(true, None));
    assert_eq!(def.actions[1].annotations, hints(false, Some(true)));
    assert_eq!(def.actions[2].annotations, hints(true, None));

    let def = Forecast.definition();
    assert_eq!(def.title.as_deref(), Some("Weather"));
    assert_eq!(def.actions[0].title.as_deref(), Some("Weather"));
    assert_eq!(
        def.actions[0].annotations,
        Annotations {
            read_only: Some(true),
            idempotent: Some(true),
            ..Annotations::default()
        }
    );
}
