//! How fusion tools map to MCP tools, and the one rule that names an action in each
//! exposition: `billing.charge` grouped, `billing_charge` flat, `billing` alone for a
//! single-function tool in either.

use std::collections::HashMap;

use super::definition::ToolDefinition;
use super::response::ToolResponse;

/// How fusion tools map to MCP tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Exposition {
    /// One MCP tool per fusion tool (`billing`), its actions chosen by the discriminator; the
    /// input schema is [`flat_input_schema`](crate::schema::flat_input_schema). Available
    /// actions read `billing.list_invoices`.
    #[default]
    Grouped,
    /// One MCP tool per action, named `tool_action` (`billing_list_invoices`), its input schema
    /// the action's own. The server injects the discriminator, and every action name a model
    /// reads is the flat tool's: available actions in `<tool_error>` envelopes, the `action`
    /// of `<validation_error>` envelopes and guard messages (`billing_list_invoices`, not
    /// `billing.list_invoices`). A single-function tool keeps its name.
    Flat,
}

impl Exposition {
    /// The exposition a `flat` flag of the public API stands for.
    pub(crate) fn from_flat_flag(flat: bool) -> Exposition {
        if flat {
            Exposition::Flat
        } else {
            Exposition::Grouped
        }
    }

    /// The name a model calls an action by: `tool.action` grouped, `tool_action` flat (LLM
    /// APIs reject dots in tool names), and `tool` alone when `action` is `None`, the action
    /// of a single-function tool (no discriminator).
    pub(crate) fn action_name(self, tool: &str, action: Option<&str>) -> String {
        match (self, action) {
            (_, None) => tool.to_owned(),
            (Exposition::Grouped, Some(action)) => format!("{tool}.{action}"),
            (Exposition::Flat, Some(action)) => format!("{tool}_{action}"),
        }
    }
}

/// What every `tool.action` of some tools is called in one exposition, for the action names a
/// model reads in a response made with grouped names (by a tool's router and validators, by a
/// handler naming other actions): empty in grouped exposition, where nothing changes.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExposedNames(HashMap<String, String>);

impl ExposedNames {
    /// The names of the actions of `tools` in `exposition`.
    pub(crate) fn new<'a>(
        tools: impl IntoIterator<Item = &'a ToolDefinition>,
        exposition: Exposition,
    ) -> ExposedNames {
        let names = tools.into_iter().flat_map(|def| {
            def.actions.iter().map(move |action| {
                (
                    def.action_name(Exposition::Grouped, &action.name),
                    def.action_name(exposition, &action.name),
                )
            })
        });
        ExposedNames(
            names
                .filter(|(grouped, exposed)| grouped != exposed)
                .collect(),
        )
    }

    /// `response` with every known `tool.action` renamed: the available actions of the error
    /// and of each warning, and the action of a validation envelope. Unknown names stay.
    pub(crate) fn apply(&self, response: ToolResponse) -> ToolResponse {
        if self.0.is_empty() {
            return response;
        }
        response.map_action_names(|action| self.0.get(action).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::{ExposedNames, Exposition};
    use crate::envelope::code::ErrorCode;
    use crate::envelope::error::ToolError;
    use crate::model::definition::{ActionDefinition, Annotations, ToolDefinition};
    use crate::model::response::ToolResponse;

    fn tool(name: &str, discriminator: Option<&str>, actions: &[&str]) -> ToolDefinition {
        let action = |name: &&str| ActionDefinition {
            name: (*name).to_owned(),
            description: String::new(),
            title: None,
            input_schema: serde_json::Map::new(),
            annotations: Annotations::default(),
            errors: Vec::new(),
            secret_fields: Vec::new(),
            output_schema: None,
            scopes: Vec::new(),
        };
        ToolDefinition {
            name: name.to_owned(),
            description: String::new(),
            title: None,
            discriminator: discriminator.map(str::to_owned),
            actions: actions.iter().map(action).collect(),
        }
    }

    fn available_actions(names: &ExposedNames) -> Vec<String> {
        let error = ToolError::new(ErrorCode::NotFound, "No invoice.").actions([
            "billing.charge",
            "billing.refund",
            "add",
            "billing.unknown",
        ]);
        let response = names.apply(ToolResponse::error(error));
        response.tool_error().unwrap().available_actions().to_vec()
    }

    #[test]
    fn an_action_is_named_for_its_exposition() {
        let charge = Some("charge");
        assert_eq!(
            Exposition::Grouped.action_name("billing", charge),
            "billing.charge"
        );
        assert_eq!(
            Exposition::Flat.action_name("billing", charge),
            "billing_charge"
        );
        for exposition in [Exposition::Grouped, Exposition::Flat] {
            assert_eq!(exposition.action_name("add", None), "add");
        }
    }

    #[test]
    fn a_response_names_known_actions_as_the_exposition_does() {
        let tools = [
            tool("billing", Some("action"), &["charge", "refund"]),
            tool("add", None, &["add"]),
        ];
        let flat = ExposedNames::new(&tools, Exposition::Flat);
        assert_eq!(
            available_actions(&flat),
            ["billing_charge", "billing_refund", "add", "billing.unknown"]
        );
        let grouped = ExposedNames::new(&tools, Exposition::Grouped);
        assert!(grouped.0.is_empty());
        assert_eq!(
            available_actions(&grouped),
            ["billing.charge", "billing.refund", "add", "billing.unknown"]
        );
    }
}
