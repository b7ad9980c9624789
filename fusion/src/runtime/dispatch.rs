//! Discriminated action dispatch: routing an arguments object to one of a tool's actions by
//! its discriminator field, the routing errors (`MISSING_DISCRIMINATOR`, `UNKNOWN_ACTION`),
//! and validating the routed action's arguments. `#[fusion::tool]`'s generated
//! `Tool::prepare` runs on it.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::suggest::did_you_mean;
use crate::model::definition::ToolDefinition;
use crate::model::response::ToolResponse;
use crate::schema::{check_definition, type_name};
use crate::validation::{ArgumentValidator, DecodedField, SchemaError};

/// Everything a tool needs per call, built once from its definition: what routes an
/// arguments object to an action, and one compiled argument validator per action. A
/// registered tool's is built when it is registered; a generated `Tool::prepare` keeps that
/// one in a `OnceLock` at its first call (or builds its own when the tool is called directly).
#[derive(Debug)]
pub struct ToolRuntime {
    tool: String,
    discriminator: Option<String>,
    actions: Vec<String>,
    /// The actions as routing errors list them: `tool.action`.
    available: Vec<String>,
    validators: Vec<ArgumentValidator>,
    /// Per action: whether its arguments are taken strictly as sent (`#[action(strict_json)]`):
    /// never decoded from stringified JSON.
    strict_json: Vec<bool>,
}

/// A call's arguments as [decoded](ToolRuntime::decode_stringified).
pub(crate) struct DecodedCall<'r> {
    /// The action called, qualified (`shop.order`).
    pub(crate) action: &'r str,
    /// The fields decoded, in the arguments' order.
    pub(crate) fields: Vec<DecodedField>,
    /// When a string held JSON nested deeper than the parser reads: how deep the arguments
    /// are nested counting it, and the action's refusal of that depth (what the same JSON
    /// sent as JSON gets). The string stays as sent.
    pub(crate) too_deep: Option<(usize, ToolResponse)>,
}

/// The runtimes built when tools were registered, by the tool's type.
static REGISTERED: LazyLock<Mutex<HashMap<TypeId, Arc<ToolRuntime>>>> =
    LazyLock::new(Mutex::default);

impl ToolRuntime {
    /// Compiles the validators of every action of `definition`.
    ///
    /// # Errors
    /// [`SchemaError`] when an action's input schema does not compile (a bug in the arguments
    /// type's `JsonSchema` impl, reported at the first call rather than on every call).
    pub fn new(definition: &ToolDefinition) -> Result<ToolRuntime, SchemaError> {
        check_definition(definition)?;
        let validators = definition
            .actions
            .iter()
            .map(|action| {
                let schema = Value::Object(action.input_schema.clone());
                let validator =
                    ArgumentValidator::new(definition.qualified_name(&action.name), &schema)?;
                Ok(action
                    .secret_fields
                    .iter()
                    .fold(validator, |v, path| v.secret(path.as_str())))
            })
            .collect::<Result<_, SchemaError>>()?;
        Ok(ToolRuntime {
            tool: definition.name.clone(),
            discriminator: definition.discriminator.clone(),
            actions: definition.actions.iter().map(|a| a.name.clone()).collect(),
            available: (definition.actions.iter())
                .map(|a| definition.qualified_name(&a.name))
                .collect(),
            validators,
            strict_json: definition.actions.iter().map(|a| a.strict_json).collect(),
        })
    }

    /// Keeps the runtime built for a tool of type `kind` at its registration, for
    /// [`ToolRuntime::registered`] (the first one, when several servers register the type).
    pub(crate) fn register(kind: TypeId, runtime: Arc<ToolRuntime>) {
        let mut registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
        registered.entry(kind).or_insert(runtime);
    }

    /// The runtime built when a tool of type `kind` was registered, if one was.
    pub(crate) fn registered(kind: TypeId) -> Option<Arc<ToolRuntime>> {
        let registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
        registered.get(&kind).cloned()
    }

    /// Routes `arguments` to an action index (see [`ToolRuntime::route_action`]); a routing
    /// error comes back as the response to send.
    pub fn route(&self, arguments: &mut Map<String, Value>) -> Result<usize, ToolResponse> {
        self.route_action(arguments).map_err(ToolResponse::error)
    }

    /// Validates the arguments of action `index` and deserializes them into `T`, running
    /// `rules` (the `validator` rules, when `T` has them) on the result. Every problem of all
    /// three kinds comes back in one `<validation_error>` response.
    pub fn parse<T, F>(
        &self,
        index: usize,
        arguments: Map<String, Value>,
        rules: F,
    ) -> Result<T, ToolResponse>
    where
        T: DeserializeOwned,
        F: FnOnce(&T) -> Option<validator::ValidationErrors>,
    {
        self.validators[index]
            .parse_with(&Value::Object(arguments), rules)
            .map_err(ToolResponse::validation)
    }

    /// Checks that an action without an arguments parameter received no arguments (beyond
    /// the discriminator).
    pub fn parse_none(
        &self,
        index: usize,
        arguments: Map<String, Value>,
    ) -> Result<(), ToolResponse> {
        if arguments.is_empty() {
            return Ok(());
        }
        let problems = self.validators[index].check(&Value::Object(arguments));
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolResponse::validation(problems))
        }
    }

    /// Reads the arguments of a call that sent stringified JSON where its action's schema
    /// wants JSON (an array, an object, a number, an integer or a boolean, at any depth) as
    /// the values those strings hold, before routing; strings longer than `max_bytes` are
    /// left alone. `action` is the action the call names outside its arguments (a flat tool
    /// name), else the discriminator names it. The action's qualified name and the fields
    /// decoded; `None` when nothing was decoded, the call names no action, or the action is
    /// `strict_json`.
    pub(crate) fn decode_stringified(
        &self,
        arguments: &mut Map<String, Value>,
        action: Option<&str>,
        max_bytes: Option<usize>,
    ) -> Option<DecodedCall<'_>> {
        let index = self.action_index(arguments, action)?;
        // A hand-written tool may define no action at all: nothing to decode for.
        if *self.strict_json.get(index)? {
            return None;
        }
        let validator = self.validators.get(index)?;
        let decoded = validator.decode_stringified(arguments, max_bytes);
        (!decoded.fields.is_empty()).then(|| DecodedCall {
            action: self.available[index].as_str(),
            fields: decoded.fields,
            too_deep: (decoded.too_deep).map(|levels| {
                (
                    levels,
                    ToolResponse::validation(validator.depth_refusal(levels)),
                )
            }),
        })
    }

    /// The index of the action a call names: `action` when the call names it outside its
    /// arguments (a flat tool name), else the discriminator's value; a tool without one has a
    /// single action. `None` when the call names no action of the tool.
    pub(crate) fn action_index(
        &self,
        arguments: &Map<String, Value>,
        action: Option<&str>,
    ) -> Option<usize> {
        match &self.discriminator {
            None => Some(0),
            Some(field) => {
                let name = action.or_else(|| arguments.get(field)?.as_str())?;
                self.actions.iter().position(|a| a == name)
            }
        }
    }

    /// The name of action `index`.
    #[cfg(feature = "http")]
    pub(crate) fn action(&self, index: usize) -> Option<&str> {
        self.actions.get(index).map(String::as_str)
    }

    /// Picks the action named by the discriminator and removes the discriminator from
    /// `arguments`, so the rest can be validated as the action's own arguments. A
    /// single-function tool always routes to its only action.
    ///
    /// # Errors
    /// `MISSING_DISCRIMINATOR` when the field is absent, `null` or empty; `UNKNOWN_ACTION`
    /// (with a "did you mean" when a name is close) for any other value that names no action,
    /// non-strings included. Both list the available actions.
    pub(crate) fn route_action(
        &self,
        arguments: &mut Map<String, Value>,
    ) -> Result<usize, ToolError> {
        let Some(field) = &self.discriminator else {
            return Ok(0);
        };
        self.pick(field, arguments.remove(field), |_| true)
    }

    /// The routing error a call with `arguments` gets from a caller who may call only the
    /// actions `visible` (by index) marks: a hidden action is answered exactly as an action
    /// the tool does not have, and the routing errors list only the visible actions (with a
    /// "did you mean" among them). `Ok` when the call names a visible action, or the tool has
    /// no discriminator.
    pub(crate) fn check_visible(
        &self,
        arguments: &Map<String, Value>,
        visible: &[bool],
    ) -> Result<(), ToolError> {
        let Some(field) = &self.discriminator else {
            return Ok(());
        };
        let shown = |index: usize| visible.get(index).copied().unwrap_or(false);
        self.pick(field, arguments.get(field).cloned(), shown)
            .map(drop)
    }

    /// The action `value` (the discriminator's) names among the ones `shown` keeps.
    fn pick(
        &self,
        field: &str,
        value: Option<Value>,
        shown: impl Fn(usize) -> bool,
    ) -> Result<usize, ToolError> {
        let Some(value) = value else {
            return Err(self.missing(field, &shown));
        };
        match value {
            Value::String(name) if !name.is_empty() => {
                match (self.actions.iter().position(|a| *a == name)).filter(|&i| shown(i)) {
                    Some(index) => Ok(index),
                    None => {
                        let value = Value::String(name);
                        // The sent value is cut like every echoed value.
                        let sent = crate::validation::sent_value(&value);
                        Err(self.unknown(field, &sent, value.as_str(), &shown))
                    }
                }
            }
            Value::Null | Value::String(_) => Err(self.missing(field, &shown)),
            other => Err(self.unknown(
                field,
                &format!(
                    "{} {} ({})",
                    article(type_name(&other)),
                    type_name(&other),
                    crate::validation::sent_value(&other)
                ),
                None,
                &shown,
            )),
        }
    }

    /// The available actions of a routing error: the ones `shown` keeps, as `tool.action`.
    fn listed(&self, shown: &impl Fn(usize) -> bool) -> impl Iterator<Item = String> {
        (self.available.iter().enumerate())
            .filter(|(i, _)| shown(*i))
            .map(|(_, name)| name.clone())
    }

    fn missing(&self, field: &str, shown: &impl Fn(usize) -> bool) -> ToolError {
        ToolError::new(
            ErrorCode::MissingDiscriminator,
            format!(
                "The tool '{}' needs the argument '{field}' naming the action to run.",
                self.tool
            ),
        )
        .suggest(format!(
            "Call '{}' again with '{field}' set to one of the available actions.",
            self.tool
        ))
        .actions(self.listed(shown))
    }

    fn unknown(
        &self,
        field: &str,
        sent: &str,
        name: Option<&str>,
        shown: &impl Fn(usize) -> bool,
    ) -> ToolError {
        let actions = (self.actions.iter().enumerate())
            .filter(|(i, _)| shown(*i))
            .map(|(_, a)| a.as_str());
        let closest = name.and_then(|n| did_you_mean(n, actions));
        let message = match name {
            Some(_) => format!("The tool '{}' has no action {sent}.", self.tool),
            None => format!(
                "The argument '{field}' must be a string naming an action; you sent {sent}."
            ),
        };
        let recovery = match closest {
            Some(near) => format!(
                "Did you mean '{near}'? Call '{}' again with '{field}' set to one of the available actions.",
                self.tool
            ),
            None => format!(
                "Call '{}' again with '{field}' set to one of the available actions.",
                self.tool
            ),
        };
        ToolError::new(ErrorCode::UnknownAction, message)
            .suggest(recovery)
            .actions(self.listed(shown))
    }
}

/// The indefinite article for a JSON type name: "an array", "an object", "a number".
fn article(type_name: &str) -> &'static str {
    if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::fixtures::{action, billing};
    use serde_json::json;

    #[test]
    fn routes_and_strips_the_discriminator() {
        let router = ToolRuntime::new(&billing()).unwrap();
        let mut args = json!({"action": "get_invoice", "id": "inv_1"})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(router.route_action(&mut args).unwrap(), 1);
        assert_eq!(Value::Object(args), json!({"id": "inv_1"}));
    }

    #[test]
    fn decoding_leaves_calls_to_no_action_alone() {
        let runtime = ToolRuntime::new(&billing()).unwrap();
        let mut args = json!({"action": "nope", "id": "[1]"})
            .as_object()
            .unwrap()
            .clone();
        assert!(runtime.decode_stringified(&mut args, None, None).is_none());
        assert!(
            runtime
                .decode_stringified(&mut args, Some("nope"), None)
                .is_none()
        );
        // A hand-written tool may define no action at all.
        let mut empty = billing();
        (empty.discriminator, empty.actions) = (None, Vec::new());
        let runtime = ToolRuntime::new(&empty).unwrap();
        assert!(runtime.decode_stringified(&mut args, None, None).is_none());
    }

    #[test]
    fn routing_errors_list_available_actions() {
        let router = ToolRuntime::new(&billing()).unwrap();
        for sent in [json!({}), json!({"action": null}), json!({"action": ""})] {
            let err = router
                .route_action(&mut sent.as_object().unwrap().clone())
                .unwrap_err();
            assert_eq!(*err.code(), ErrorCode::MissingDiscriminator, "{sent}");
            assert_eq!(
                err.available_actions(),
                ["billing.list_invoices", "billing.get_invoice"]
            );
        }
        let err = router
            .route_action(
                &mut json!({"action": "list_invoice"})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
            .unwrap_err();
        assert_eq!(*err.code(), ErrorCode::UnknownAction);
        assert!(
            err.recovery()
                .unwrap()
                .starts_with("Did you mean 'list_invoices'?")
        );
        let err = router
            .route_action(&mut json!({"action": 42}).as_object().unwrap().clone())
            .unwrap_err();
        assert_eq!(*err.code(), ErrorCode::UnknownAction);
        assert_eq!(
            err.message(),
            "The argument 'action' must be a string naming an action; you sent a number (42)."
        );
        let err = router
            .route_action(&mut json!({"action": [1]}).as_object().unwrap().clone())
            .unwrap_err();
        assert!(
            err.message().ends_with("you sent an array (array(1))."),
            "{}",
            err.message()
        );
        let long = "x".repeat(5_000);
        let err = router
            .route_action(&mut json!({"action": long}).as_object().unwrap().clone())
            .unwrap_err();
        assert!(
            err.message().len() < 120,
            "echoed whole: {}",
            err.message().len()
        );
    }

    #[test]
    fn a_field_named_like_the_discriminator_is_refused_and_never_clobbers_it() {
        let mut clash = billing();
        clash.actions.push(action(
            "withaction",
            json!({"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}),
        ));
        assert_eq!(
            crate::schema::discriminator_clash(&clash).unwrap().name,
            "withaction"
        );
        assert!(crate::schema::discriminator_clash(&billing()).is_none());
        let err = ToolRuntime::new(&clash).unwrap_err();
        assert_eq!(err.action(), "billing.withaction");
        assert!(
            err.message().contains("field named `action`"),
            "{}",
            err.message()
        );
        let flat = crate::schema::flat_input_schema(&clash);
        assert_eq!(
            flat["properties"]["action"]["enum"],
            json!(["list_invoices", "get_invoice", "withaction"])
        );
    }

    #[test]
    fn a_hidden_action_routes_as_one_the_tool_does_not_have() {
        let router = ToolRuntime::new(&billing()).unwrap();
        let mut without_get = billing();
        without_get.actions.truncate(1);
        let smaller = ToolRuntime::new(&without_get).unwrap();
        let visible = [true, false];
        for sent in [
            json!({"action": "get_invoice", "id": "inv_1"}),
            json!({"action": "get_invoce"}),
            json!({"action": 3}),
            json!({}),
        ] {
            let sent = sent.as_object().unwrap().clone();
            let hidden = router.check_visible(&sent, &visible).unwrap_err();
            let absent = smaller.route_action(&mut sent.clone()).unwrap_err();
            assert_eq!(hidden.to_xml(), absent.to_xml(), "{sent:?}");
        }
        let listed = json!({"action": "list_invoices"})
            .as_object()
            .unwrap()
            .clone();
        assert!(router.check_visible(&listed, &visible).is_ok());
        // The discriminator stays for the call path to route.
        assert!(listed.contains_key("action"));
    }
}
