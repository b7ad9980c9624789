//! Self-healing contract deltas: the BREAKING and RISKY
//! changes since a known-good lockfile, per action, for the `<contract_awareness>` section of
//! a validation error.

use std::collections::HashMap;
use std::sync::Arc;

use crate::envelope::validation_error::{DeltaClass, ScopedDelta};
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;

use super::diff::{ContractDiff, diff};
use super::lockfile::Lockfile;
use super::model::Contract;

/// The default of [`ContractBaseline::max_deltas`]: five deltas per validation error.
pub const DEFAULT_MAX_DELTAS: usize = 5;

/// A known-good contract a server (or [`Tester`](crate::testing::Tester)) compares itself
/// against, so that validation errors tell a model calibrated on it what changed.
///
/// ```
/// use fusion::contract::{ContractBaseline, Lockfile};
///
/// # fn demo(text: &str) -> Result<(), fusion::contract::LockfileError> {
/// let baseline = ContractBaseline::new(Lockfile::parse(text)?).max_deltas(3);
/// let server = fusion::server::Server::new("billing", "1.0.0").contract_baseline(baseline);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractBaseline {
    lockfile: Lockfile,
    max_deltas: usize,
}

impl ContractBaseline {
    /// A baseline from a verified lockfile, listing at most [`DEFAULT_MAX_DELTAS`] deltas per
    /// validation error.
    pub fn new(lockfile: Lockfile) -> ContractBaseline {
        ContractBaseline {
            lockfile,
            max_deltas: DEFAULT_MAX_DELTAS,
        }
    }

    /// Lists at most `max` deltas per validation error (the highest classes first); `0`
    /// turns the section off.
    pub fn max_deltas(mut self, max: usize) -> ContractBaseline {
        self.max_deltas = max;
        self
    }

    /// The lockfile.
    pub fn lockfile(&self) -> &Lockfile {
        &self.lockfile
    }

    /// Compares `current` with the baseline: the deltas each action's validation errors
    /// carry. `flat` names action scopes as flat exposition does (`billing_charge` instead of
    /// `billing.charge`).
    pub fn awareness(&self, current: &Contract, flat: bool) -> Awareness {
        self.awareness_in(current, Exposition::from_flat_flag(flat))
    }

    /// [`ContractBaseline::awareness`], action scopes named as `exposition` names them.
    pub(crate) fn awareness_in(&self, current: &Contract, exposition: Exposition) -> Awareness {
        let diff = diff(self.lockfile.contract(), current);
        let mut by_action: HashMap<String, Arc<Vec<ScopedDelta>>> = HashMap::new();
        for (tool_name, tool) in &current.tools {
            let discriminated = tool.discriminator.is_some();
            for action in tool.actions.keys() {
                let named = discriminated.then_some(action.as_str());
                let key = Exposition::Grouped.action_name(tool_name, named);
                // Deltas are sorted by class already; the cap keeps the highest.
                let relevant: Vec<ScopedDelta> = diff
                    .deltas()
                    .iter()
                    .filter(|d| matches!(d.class, DeltaClass::Breaking | DeltaClass::Risky))
                    .filter(|d| {
                        d.tool == *tool_name
                            && d.action.as_deref().is_none_or(|a| a == action.as_str())
                    })
                    .take(self.max_deltas)
                    .map(|d| ScopedDelta {
                        class: d.class,
                        scope: exposition
                            .action_name(tool_name, d.action.as_deref().filter(|_| discriminated)),
                        text: d.text.clone(),
                    })
                    .collect();
                if !relevant.is_empty() {
                    by_action.insert(key, Arc::new(relevant));
                }
            }
        }
        Awareness { diff, by_action }
    }
}

/// The result of comparing a contract with a baseline: the full diff, and the deltas each
/// action's validation errors carry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Awareness {
    diff: ContractDiff,
    by_action: HashMap<String, Arc<Vec<ScopedDelta>>>,
}

impl Awareness {
    /// The full diff from the baseline to the current contract.
    pub fn diff(&self) -> &ContractDiff {
        &self.diff
    }

    /// The deltas a validation error of `action` carries: `action` is the error's `action`
    /// attribute (`tool.action`, or `tool` for a single-function tool), matched exactly.
    pub fn for_action(&self, action: &str) -> &[ScopedDelta] {
        self.by_action.get(action).map_or(&[], |d| d.as_slice())
    }

    /// `response` with the deltas of its validation error's action attached; any other
    /// response is returned as is.
    pub fn apply(&self, response: ToolResponse) -> ToolResponse {
        let deltas = response
            .validation_error()
            .and_then(|error| self.by_action.get(error.action()));
        match deltas {
            Some(deltas) => {
                let deltas = Arc::clone(deltas);
                response.map_validation(|error| error.with_shared_awareness(deltas))
            }
            None => response,
        }
    }
}
