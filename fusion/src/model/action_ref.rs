//! Action references: how `#[derive(ToolErrors)]`'s `actions(Billing::list_invoices)` names
//! an action of a `#[fusion::tool]` in a way the compiler checks.

use crate::envelope::suggest::{bytes_eq, typo_distance};

/// A compile-time reference to an action, emitted by `#[fusion::tool]` for every action as
/// the hidden associated constant `__fusion_action_<method>`, and found by method name through
/// `__fusion_action_named`, so that `#[tool_error(actions(Billing::list_invoices))]` is checked
/// by the compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionRef {
    /// The tool's name (`billing`).
    pub tool: &'static str,
    /// The action's name (`list_invoices`); for a single-function tool, the tool's name.
    pub action: &'static str,
    /// Whether the tool is a single-function tool (no discriminator).
    pub single: bool,
}

impl ActionRef {
    /// The name models call it by in grouped exposition: `tool.action`, or `tool` alone.
    pub fn qualified(self) -> ::std::string::String {
        let action = (!self.single).then_some(self.action);
        crate::model::exposition::Exposition::Grouped.action_name(self.tool, action)
    }
}

/// What `Tool::__fusion_action_named(method)` answers at compile time: the action of that
/// method, or the message of the compile error `#[derive(ToolErrors)]` raises for
/// `actions(Tool::misspelt)`, with the closest action method as its "did you mean".
#[derive(Clone, Copy, Debug)]
pub enum ActionLookup {
    /// The method is an action of the tool.
    Found(ActionRef),
    /// No action method has that name: the message to fail compilation with.
    Missing(&'static str),
}

/// The search behind `__fusion_action_named`, offered each action method in turn by the code
/// `#[fusion::tool]` generates (one statement per action, so `#[cfg]` can remove one).
#[derive(Clone, Copy, Debug)]
pub struct ActionSearch<'m> {
    method: &'m str,
    found: Option<ActionRef>,
    /// The closest method so far: its edit distance and its "did you mean" message.
    closest: Option<(usize, &'static str)>,
}

impl<'m> ActionSearch<'m> {
    /// A search for the action method named `method`.
    pub const fn new(method: &'m str) -> ActionSearch<'m> {
        ActionSearch {
            method,
            found: None,
            closest: None,
        }
    }

    /// Offers the action method `name`: its action, and the message naming it as the
    /// "did you mean" when it is the closest.
    pub const fn offer(mut self, name: &str, action: ActionRef, hint: &'static str) -> Self {
        if bytes_eq(self.method.as_bytes(), name.as_bytes()) {
            self.found = Some(action);
        } else if let Some(distance) = typo_distance(self.method, name)
            && !matches!(self.closest, Some((best, _)) if best <= distance)
        {
            self.closest = Some((distance, hint));
        }
        self
    }

    /// The action found, else the closest method's message, else `missing`.
    pub const fn finish(self, missing: &'static str) -> ActionLookup {
        match (self.found, self.closest) {
            (Some(action), _) => ActionLookup::Found(action),
            (None, Some((_, hint))) => ActionLookup::Missing(hint),
            (None, None) => ActionLookup::Missing(missing),
        }
    }
}
