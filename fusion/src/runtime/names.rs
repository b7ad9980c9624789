//! The action names a model reads in a response, made right for the exposition the client
//! called through.

use std::collections::HashMap;

use crate::model::definition::ToolDefinition;
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;

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
    use super::ExposedNames;
    use crate::envelope::code::ErrorCode;
    use crate::envelope::error::ToolError;
    use crate::model::definition::{ActionDefinition, ToolDefinition};
    use crate::model::exposition::Exposition;
    use crate::model::response::ToolResponse;

    fn tool(name: &str, discriminator: Option<&str>, actions: &[&str]) -> ToolDefinition {
        let action = |name: &&str| ActionDefinition::named(name);
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
