//! A multi-action tool: dispatch, the request context, routing errors and argument validation.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use fusion::{RequestContext, Tool, ToolError, ToolExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{call, envelope, object, payload};

// --- a multi-action tool ---------------------------------------------------------------------

#[derive(Default)]
pub(super) struct Billing {
    calls: AtomicUsize,
    created: Mutex<Vec<String>>,
}

#[derive(Deserialize, JsonSchema)]
struct ListInvoices {
    /// Only invoices with this status.
    status: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(super) struct GetInvoice {
    /// The invoice ID (`inv_…`).
    pub(super) id: String,
}

#[derive(Deserialize, JsonSchema)]
struct CreateInvoice {
    customer: String,
    amount: u64,
}

#[derive(Serialize)]
struct Invoice {
    id: String,
    amount: u64,
}

/// Invoices of the billing system.
///
/// Amounts are in cents.
#[fusion::tool]
impl Billing {
    /// Lists invoices, newest first.
    #[action(read_only)]
    fn list_invoices(&self, args: ListInvoices) -> Vec<String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut invoices = self.created.lock().unwrap().clone();
        invoices.reverse();
        match args.status {
            Some(status) => invoices
                .into_iter()
                .map(|i| format!("{i}:{status}"))
                .collect(),
            None => invoices,
        }
    }

    /// Fetches one invoice.
    #[action(read_only, idempotent)]
    async fn get_invoice(&self, GetInvoice { id }: GetInvoice) -> Result<Invoice, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        if self.created.lock().unwrap().contains(&id) {
            Ok(Invoice { id, amount: 1200 })
        } else {
            Err(ToolError::not_found("No invoice with that ID")
                .suggest("List invoices first, then retry with a real ID")
                .actions([Billing::__fusion_action_list_invoices.qualified()])
                .detail("requestedId", id))
        }
    }

    /// Creates an invoice.
    #[action(destructive = false)]
    fn create_invoice(&self, args: CreateInvoice) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let id = format!("inv_{}_{}", args.customer, args.amount);
        self.created.lock().unwrap().push(id.clone());
        id
    }

    /// How many calls this tool value served.
    #[action(name = "count")]
    fn call_count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The calling client and a metadata key, read from the request context.
    #[action]
    async fn whoami(&self, ctx: RequestContext) -> String {
        let trace = ctx
            .meta()
            .get("trace")
            .and_then(Value::as_str)
            .unwrap_or("-");
        format!("{} {trace}", ctx.client().unwrap_or("anonymous"))
    }

    /// The same, with the context borrowed and no receiver.
    #[action]
    fn whoami_ref(ctx: &RequestContext) -> String {
        ctx.client().unwrap_or("anonymous").to_owned()
    }

    /// An ordinary method: not an action.
    fn total(&self) -> usize {
        self.created.lock().unwrap().len()
    }
}

#[tokio::test]
async fn dispatches_to_each_action_sharing_the_tool_state() {
    let billing = std::sync::Arc::new(Billing::default());
    let created = call(
        &billing,
        json!({"action": "create_invoice", "customer": "acme", "amount": 1200}),
    )
    .await;
    assert_eq!(payload(&created), "inv_acme_1200");
    call(
        &billing,
        json!({"action": "create_invoice", "customer": "zeta", "amount": 5}),
    )
    .await;

    let listed = call(&billing, json!({"action": "list_invoices"})).await;
    assert_eq!(payload(&listed), r#"["inv_zeta_5","inv_acme_1200"]"#);
    let filtered = call(
        &billing,
        json!({"action": "list_invoices", "status": "open"}),
    )
    .await;
    assert_eq!(
        payload(&filtered),
        r#"["inv_zeta_5:open","inv_acme_1200:open"]"#
    );

    // async action, arguments destructured in the parameter pattern
    let got = call(
        &billing,
        json!({"action": "get_invoice", "id": "inv_acme_1200"}),
    )
    .await;
    assert_eq!(payload(&got), r#"{"id":"inv_acme_1200","amount":1200}"#);

    // renamed action, reached by its new name; the state is the tool value's
    let count = call(&billing, json!({"action": "count"})).await;
    assert_eq!(payload(&count), "5");
    assert_eq!(billing.total(), 2);
}

#[tokio::test]
async fn the_context_parameter_reads_client_and_meta() {
    let context = RequestContext::new()
        .with_client("client-7")
        .with_meta(object(json!({"trace": "t-42"})));
    let by_value = Billing::default()
        .call(object(json!({"action": "whoami"})), context.clone())
        .await;
    assert_eq!(payload(&by_value), "client-7 t-42");
    let by_ref = Billing::default()
        .call(object(json!({"action": "whoami_ref"})), context)
        .await;
    assert_eq!(payload(&by_ref), "client-7");
    let anonymous = call(Billing::default(), json!({"action": "whoami"})).await;
    assert_eq!(payload(&anonymous), "anonymous -");
}

// --- routing errors, byte-exact ---------------------------------------------------------------

const AVAILABLE: &str = "<available_actions>
  <action>billing.list_invoices</action>
  <action>billing.get_invoice</action>
  <action>billing.create_invoice</action>
  <action>billing.count</action>
  <action>billing.whoami</action>
  <action>billing.whoami_ref</action>
</available_actions>";

fn missing_discriminator() -> String {
    format!(
        "<tool_error code=\"MISSING_DISCRIMINATOR\" severity=\"error\">
<message>The tool 'billing' needs the argument 'action' naming the action to run.</message>
<recovery>Call 'billing' again with 'action' set to one of the available actions.</recovery>
{AVAILABLE}
</tool_error>"
    )
}

#[tokio::test]
async fn a_missing_discriminator_lists_the_actions() {
    let response = call(Billing::default(), json!({"id": "inv_1"})).await;
    assert_eq!(envelope(&response), missing_discriminator());
    let flags = response.flags().unwrap();
    assert_eq!(flags["code"], "MISSING_DISCRIMINATOR");
    assert_eq!(flags["errorCategory"], "validation");
}

#[tokio::test]
async fn a_null_or_empty_discriminator_is_missing() {
    let null = call(Billing::default(), json!({"action": null})).await;
    assert_eq!(envelope(&null), missing_discriminator());
    let empty = call(Billing::default(), json!({"action": ""})).await;
    assert_eq!(envelope(&empty), missing_discriminator());
}

#[tokio::test]
async fn an_unknown_action_suggests_the_closest() {
    let response = call(Billing::default(), json!({"action": "list_invoice"})).await;
    assert_eq!(
        envelope(&response),
        format!(
            "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">
<message>The tool 'billing' has no action 'list_invoice'.</message>
<recovery>Did you mean 'list_invoices'? Call 'billing' again with 'action' set to one of the available actions.</recovery>
{AVAILABLE}
</tool_error>"
        )
    );
}

#[tokio::test]
async fn a_discriminator_that_is_not_a_string_names_its_type() {
    let number = call(Billing::default(), json!({"action": 42})).await;
    assert_eq!(
        envelope(&number),
        format!(
            "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">
<message>The argument 'action' must be a string naming an action; you sent a number (42).</message>
<recovery>Call 'billing' again with 'action' set to one of the available actions.</recovery>
{AVAILABLE}
</tool_error>"
        )
    );
    let object = call(Billing::default(), json!({"action": {"name": "count"}})).await;
    assert_eq!(
        envelope(&object),
        format!(
            "<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">
<message>The argument 'action' must be a string naming an action; you sent an object ({{\"name\":\"count\"}}).</message>
<recovery>Call 'billing' again with 'action' set to one of the available actions.</recovery>
{AVAILABLE}
</tool_error>"
        )
    );
}

// --- argument validation ----------------------------------------------------------------------

#[tokio::test]
async fn every_argument_problem_comes_back_in_one_envelope() {
    let response = call(
        Billing::default(),
        json!({"action": "create_invoice", "amount": "twelve", "customr": "acme"}),
    )
    .await;
    assert_eq!(
        envelope(&response),
        "<validation_error action=\"billing.create_invoice\">
<field name=\"amount\">Wrong type. You sent: 'twelve'. Expected an integer.</field>
<field name=\"customer\">Missing required field. You sent: (missing). Expected a string.</field>
<field name=\"customr\">Unknown field. You sent: 'acme'. Expected one of the known fields: amount, customer (did you mean 'customer'?).</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"
    );
}

#[tokio::test]
async fn an_action_without_parameters_rejects_arguments() {
    let response = call(
        Billing::default(),
        json!({"action": "count", "verbose": true}),
    )
    .await;
    let xml = envelope(&response);
    assert!(
        xml.starts_with("<validation_error action=\"billing.count\">\n<field name=\"verbose\">"),
        "{xml}"
    );
}

/// Ranges checked by `validator`, and the same field unchecked.
struct Pager;

#[derive(Deserialize, JsonSchema, validator::Validate)]
struct Checked {
    #[validate(range(min = 1, max = 100))]
    page_size: u32,
    #[validate(email)]
    contact: String,
}

#[derive(Deserialize, JsonSchema)]
struct Unchecked {
    page_size: u32,
}

#[fusion::tool]
impl Pager {
    /// Validated.
    #[action]
    fn checked(&self, args: Checked) -> String {
        format!("{} {}", args.page_size, args.contact)
    }

    /// Not validated.
    #[action]
    fn unchecked(&self, args: Unchecked) -> u32 {
        args.page_size
    }
}

#[tokio::test]
async fn validator_rules_run_when_the_arguments_derive_validate() {
    let response = call(
        Pager,
        json!({"action": "checked", "page_size": 500, "contact": "not-an-email"}),
    )
    .await;
    assert_eq!(
        envelope(&response),
        "<validation_error action=\"pager.checked\">
<field name=\"contact\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>
<field name=\"page_size\">Number too large. You sent: 500. Expected a number from 1 to 100.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"
    );
    let fine = call(
        Pager,
        json!({"action": "checked", "page_size": 5, "contact": "a@b.io"}),
    )
    .await;
    assert_eq!(payload(&fine), "5 a@b.io");
}

#[tokio::test]
async fn validator_rules_are_skipped_when_the_arguments_do_not_derive_validate() {
    let response = call(Pager, json!({"action": "unchecked", "page_size": 500})).await;
    assert_eq!(payload(&response), "500");
}

// --- arguments that are no JSON object ---------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct InvoiceId(String);

struct NewtypeArguments;

#[fusion::tool(discriminator = "action")]
impl NewtypeArguments {
    #[action]
    fn get(&self, id: InvoiceId) -> String {
        id.0
    }
}

// A `Vec`, a `String` or a number as the arguments type is a compile error
// (`tests/ui/tool/fail/arguments-not-an-object.rs`); a newtype of one is only known at run time.

#[tokio::test]
async fn arguments_that_are_no_json_object_are_refused_at_the_first_call() {
    let message = "the arguments type must be a struct with named fields (a JSON object)";
    let error = fusion::schema::check_definition(&NewtypeArguments.definition()).unwrap_err();
    assert_eq!(error.action(), "newtype_arguments.get");
    assert!(error.message().contains(message), "{error}");
    let response = call(NewtypeArguments, json!({"action": "get"})).await;
    let envelope = envelope(&response);
    assert!(envelope.contains(r#"code="INTERNAL_ERROR""#), "{envelope}");
    assert!(fusion::schema::check_definition(&Billing::default().definition()).is_ok());
}

#[test]
fn a_server_refuses_arguments_that_are_no_json_object_at_registration() {
    let Err(panic) = std::panic::catch_unwind(|| {
        fusion::server::Server::new("test", "0.1.0").tool(NewtypeArguments)
    }) else {
        panic!("registration panics");
    };
    let message = panic.downcast_ref::<String>().expect("a formatted message");
    assert!(
        message.contains("`newtype_arguments.get`")
            && message
                .contains("the arguments type must be a struct with named fields (a JSON object)"),
        "{message}"
    );
}

// --- `#[cfg]` and `#[deprecated]` actions ------------------------------------------------------

struct Configured;

#[fusion::tool]
impl Configured {
    #[action]
    fn first(&self) -> &'static str {
        "first"
    }

    #[cfg(any())]
    #[action]
    fn gone(&self) -> &'static str {
        "gone"
    }

    #[cfg(test)]
    #[action]
    fn kept(&self) -> &'static str {
        "kept"
    }

    #[action]
    fn last(&self, args: GetInvoice) -> String {
        args.id
    }

    #[deprecated = "use `first`"]
    #[action]
    fn old(&self) -> &'static str {
        "old"
    }
}

#[tokio::test]
async fn cfg_removes_an_action_and_the_others_still_route() {
    let names: Vec<String> = Configured
        .definition()
        .actions
        .into_iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(names, ["first", "kept", "last", "old"]);
    assert_eq!(
        payload(&call(Configured, json!({"action": "first"})).await),
        "first"
    );
    assert_eq!(
        payload(&call(Configured, json!({"action": "kept"})).await),
        "kept"
    );
    assert_eq!(
        payload(&call(Configured, json!({"action": "last", "id": "inv_1"})).await),
        "inv_1"
    );
    assert_eq!(
        payload(&call(Configured, json!({"action": "old"})).await),
        "old"
    );
    let unknown = envelope(&call(Configured, json!({"action": "gone"})).await);
    assert!(unknown.contains("UNKNOWN_ACTION"), "{unknown}");
    assert_eq!(Configured::__fusion_action_kept.action, "kept");
}

// --- an impl block with one action -----------------------------------------------------------

struct Metrics;

/// Counters of the service.
#[fusion::tool]
impl Metrics {
    /// The number of calls served.
    #[action(read_only)]
    fn stats(&self) -> u64 {
        42
    }
}

#[tokio::test]
async fn an_impl_block_with_one_action_takes_its_arguments_without_a_discriminator() {
    let definition = Metrics.definition();
    assert_eq!(definition.discriminator, None);
    assert_eq!(definition.actions[0].name, "stats");
    assert_eq!(payload(&call(Metrics, json!({})).await), "42");
    // Naming the action is an unknown field, as for a function tool.
    let response = call(Metrics, json!({"action": "stats"})).await;
    let envelope = envelope(&response);
    assert!(
        envelope.contains("<validation_error action=\"metrics\">"),
        "{envelope}"
    );
    assert!(
        envelope.contains("<field name=\"action\">Unknown field."),
        "{envelope}"
    );
}
