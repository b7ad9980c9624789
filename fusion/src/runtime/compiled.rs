//! A tool's definition compiled once, when it is registered: routing an arguments object to
//! one of its actions by the discriminator field, the routing errors
//! (`MISSING_DISCRIMINATOR`, `UNKNOWN_ACTION`), and one argument validator per action, which
//! a [`ToolCall`](crate::runtime::tool::ToolCall) validates with.

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
/// registered tool's is built when it is registered; a tool called directly
/// ([`ToolExt::call`](crate::ToolExt::call)) builds one for the call.
#[derive(Debug)]
pub(crate) struct CompiledTool {
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

/// A call's arguments as [decoded](CompiledTool::decode_stringified).
pub(crate) struct DecodedCall {
    /// The fields decoded, in the arguments' order.
    pub(crate) fields: Vec<DecodedField>,
    /// When a string held JSON nested deeper than the parser reads: how deep the arguments
    /// are nested counting it, and the action's refusal of that depth (what the same JSON
    /// sent as JSON gets). The string stays as sent.
    pub(crate) too_deep: Option<(usize, ToolResponse)>,
}

impl CompiledTool {
    /// Compiles the validators of every action of `definition`.
    ///
    /// # Errors
    /// [`SchemaError`] when an action's input schema does not compile (a bug in the arguments
    /// type's `JsonSchema` impl, reported at the first call rather than on every call).
    pub(crate) fn new(definition: &ToolDefinition) -> Result<CompiledTool, SchemaError> {
        check_definition(definition)?;
        let mut validators = definition
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
            .collect::<Result<Vec<_>, SchemaError>>()?;
        // A hand-written tool may define no action: its calls are routed to index 0 and
        // validated against the input schema it publishes, any object.
        if validators.is_empty() {
            let any_object = serde_json::json!({"type": "object"});
            validators.push(ArgumentValidator::new(
                definition.name.clone(),
                &any_object,
            )?);
        }
        Ok(CompiledTool {
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

    /// Validates the arguments of action `index` and deserializes them into `T`, running
    /// `rules` (the `validator` rules, when `T` has them) on the result. Every problem of all
    /// three kinds comes back in one `<validation_error>` response.
    pub(crate) fn parse<T, F>(
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
    pub(crate) fn parse_none(
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

    /// Reads the arguments of a call of action `index` that sent stringified JSON where the
    /// action's schema wants JSON (an array, an object, a number, an integer or a boolean, at
    /// any depth) as the values those strings hold; strings longer than `max_bytes` are left
    /// alone. The action's qualified name and the fields decoded; `None` when nothing was
    /// decoded, or the action is `strict_json`.
    pub(crate) fn decode_stringified(
        &self,
        index: usize,
        arguments: &mut Map<String, Value>,
        max_bytes: Option<usize>,
    ) -> Option<DecodedCall> {
        // A hand-written tool may define no action at all: nothing to decode for.
        if *self.strict_json.get(index)? {
            return None;
        }
        let validator = self.validators.get(index)?;
        let decoded = validator.decode_stringified(arguments, max_bytes);
        (!decoded.fields.is_empty()).then(|| DecodedCall {
            fields: decoded.fields,
            too_deep: (decoded.too_deep).map(|levels| {
                (
                    levels,
                    ToolResponse::validation(validator.depth_refusal(levels)),
                )
            }),
        })
    }

    /// The discriminator field, for a tool of several actions.
    pub(crate) fn discriminator(&self) -> Option<&str> {
        self.discriminator.as_deref()
    }

    /// The name of action `index` (a single-function tool's is the tool's name); the tool's
    /// name for a hand-written tool whose definition lists no action.
    pub(crate) fn action(&self, index: usize) -> &str {
        self.actions.get(index).unwrap_or(&self.tool)
    }

    /// The qualified name of action `index` (`shop.order`), as the routing errors and the
    /// validation envelope name it.
    pub(crate) fn qualified(&self, index: usize) -> &str {
        self.available.get(index).unwrap_or(&self.tool)
    }

    /// The action a call goes to, among the ones `shown` keeps (by index): `named` when the
    /// call names it outside its arguments (a flat tool name `billing_charge`, a tester's
    /// `billing.charge`), else the discriminator's value in `arguments`. A tool without a
    /// discriminator has a single action, index 0. A hidden action is answered exactly as one
    /// the tool does not have, and the routing errors list only the shown actions (with a
    /// "did you mean" among them).
    ///
    /// # Errors
    /// `MISSING_DISCRIMINATOR` when the field is absent, `null` or empty; `UNKNOWN_ACTION`
    /// (with a "did you mean" when a name is close) for any other value that names no shown
    /// action, non-strings included. Both list the available actions.
    pub(crate) fn route(
        &self,
        arguments: &Map<String, Value>,
        named: Option<&str>,
        shown: impl Fn(usize) -> bool,
    ) -> Result<usize, ToolError> {
        let Some(field) = &self.discriminator else {
            return Ok(0);
        };
        let Some(value) = (match named {
            Some(name) => return self.pick_name(field, name, &shown),
            None => arguments.get(field),
        }) else {
            return Err(self.missing(field, &shown));
        };
        match value {
            Value::String(name) => self.pick_name(field, name, &shown),
            Value::Null => Err(self.missing(field, &shown)),
            other => Err(self.unknown(
                field,
                &format!(
                    "{} {} ({})",
                    article(type_name(other)),
                    type_name(other),
                    crate::validation::sent_value(other)
                ),
                None,
                &shown,
            )),
        }
    }

    /// The shown action named `name`.
    fn pick_name(
        &self,
        field: &str,
        name: &str,
        shown: &impl Fn(usize) -> bool,
    ) -> Result<usize, ToolError> {
        if name.is_empty() {
            return Err(self.missing(field, shown));
        }
        match (self.actions.iter().position(|a| a == name)).filter(|&i| shown(i)) {
            Some(index) => Ok(index),
            None => {
                // The sent value is cut like every echoed value.
                let sent = crate::validation::sent_value(&Value::from(name));
                Err(self.unknown(field, &sent, Some(name), shown))
            }
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
    fn routes_by_the_discriminator_or_the_name_called() {
        let router = CompiledTool::new(&billing()).unwrap();
        let args = json!({"action": "get_invoice", "id": "inv_1"})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(router.route(&args, None, all).unwrap(), 1);
        assert_eq!(router.route(&args, Some("list_invoices"), all).unwrap(), 0);
    }

    fn all(_: usize) -> bool {
        true
    }

    fn route(router: &CompiledTool, sent: &Value) -> Result<usize, ToolError> {
        router.route(sent.as_object().unwrap(), None, all)
    }

    #[test]
    fn decoding_leaves_calls_to_no_action_alone() {
        let mut args = json!({"action": "nope", "id": "[1]"})
            .as_object()
            .unwrap()
            .clone();
        // A hand-written tool may define no action at all.
        let mut empty = billing();
        (empty.discriminator, empty.actions) = (None, Vec::new());
        let runtime = CompiledTool::new(&empty).unwrap();
        assert!(runtime.decode_stringified(0, &mut args, None).is_none());
    }

    #[test]
    fn routing_errors_list_available_actions() {
        let router = CompiledTool::new(&billing()).unwrap();
        for sent in [json!({}), json!({"action": null}), json!({"action": ""})] {
            let err = route(&router, &sent).unwrap_err();
            assert_eq!(*err.code(), ErrorCode::MissingDiscriminator, "{sent}");
            assert_eq!(
                err.available_actions(),
                ["billing.list_invoices", "billing.get_invoice"]
            );
        }
        let err = route(&router, &json!({"action": "list_invoice"})).unwrap_err();
        assert_eq!(*err.code(), ErrorCode::UnknownAction);
        assert!(
            err.recovery()
                .unwrap()
                .starts_with("Did you mean 'list_invoices'?")
        );
        let err = route(&router, &json!({"action": 42})).unwrap_err();
        assert_eq!(*err.code(), ErrorCode::UnknownAction);
        assert_eq!(
            err.message(),
            "The argument 'action' must be a string naming an action; you sent a number (42)."
        );
        let err = route(&router, &json!({"action": [1]})).unwrap_err();
        assert!(
            err.message().ends_with("you sent an array (array(1))."),
            "{}",
            err.message()
        );
        let long = "x".repeat(5_000);
        let err = route(&router, &json!({"action": long})).unwrap_err();
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
        let err = CompiledTool::new(&clash).unwrap_err();
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
        let router = CompiledTool::new(&billing()).unwrap();
        let mut without_get = billing();
        without_get.actions.truncate(1);
        let smaller = CompiledTool::new(&without_get).unwrap();
        let visible = [true, false];
        for sent in [
            json!({"action": "get_invoice", "id": "inv_1"}),
            json!({"action": "get_invoce"}),
            json!({"action": 3}),
            json!({}),
        ] {
            let shown = |index: usize| visible[index];
            let hidden = (router.route(sent.as_object().unwrap(), None, shown)).unwrap_err();
            let absent = route(&smaller, &sent).unwrap_err();
            assert_eq!(hidden.to_xml(), absent.to_xml(), "{sent:?}");
        }
        let listed = json!({"action": "list_invoices"})
            .as_object()
            .unwrap()
            .clone();
        assert!(router.route(&listed, None, |index| visible[index]).is_ok());
    }
}
