//! How fusion tools map to MCP tools, and the one rule that names an action in each
//! exposition: `billing.charge` grouped, `billing_charge` flat, `billing` alone for a
//! single-function tool in either.

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

#[cfg(test)]
mod tests {
    use super::Exposition;

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
}
