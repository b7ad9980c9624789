//! The server's contract, and the known-good baseline its validation errors are compared
//! against (the `<contract_awareness>` section of a `<validation_error>`).

use crate::contract::{Awareness, Contract, ContractBaseline};

use super::Server;

impl Server {
    /// Compares the server's contract with a known-good one (usually the `fusion.lock` the
    /// team reviewed): from then on, a validation error of an action embeds a
    /// `<contract_awareness>` section listing the BREAKING and RISKY changes of exactly that
    /// action, plus those of its tool as a whole, highest class first, at most
    /// [`ContractBaseline::max_deltas`] (five by default). A model that learned the old
    /// contract is told what changed in the same turn. Scopes follow the exposition:
    /// `billing.charge` grouped, `billing_charge` flat.
    ///
    /// The comparison is made once, when first needed (the first call, or when the server
    /// starts serving), and each BREAKING delta is logged (a `tracing` warning) when the server starts serving
    /// ([`Server::serve_io`], [`Server::serve_stdio`], per connection; the Streamable HTTP
    /// service, once when it is created). Without a baseline, or for an action without such changes, envelopes are
    /// unchanged.
    pub fn contract_baseline(self, baseline: ContractBaseline) -> Server {
        self.set(|inner| inner.registry.set_baseline(baseline))
    }

    /// The contract of the registered tools, as a lockfile records it.
    pub fn contract(&self) -> Contract {
        self.inner.registry.contract()
    }

    /// The comparison with the baseline set by [`Server::contract_baseline`], `None` without
    /// one.
    pub fn contract_awareness(&self) -> Option<&Awareness> {
        self.inner.registry.awareness(self.inner.exposition)
    }

    /// Logs the BREAKING deltas since the baseline, once per connection start.
    pub(super) fn log_breaking_deltas(&self) {
        let Some(awareness) = self.contract_awareness() else {
            return;
        };
        let diff = awareness.diff();
        for delta in diff
            .deltas()
            .iter()
            .filter(|d| d.class == crate::contract::DeltaClass::Breaking)
        {
            tracing::warn!(
                target: "fusion::contract",
                scope = diff.scope(delta).as_str(),
                "BREAKING change since the contract baseline: {}",
                delta.text
            );
        }
    }
}
