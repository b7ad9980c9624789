//! The guards at run time: per tool, the gates (scopes, rate counters, semaphores, timeouts,
//! layer stacks) built from the configuration, and the run of one call through them.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::model::context::RequestContext;
use crate::model::definition::ActionDefinition;
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;

use super::concurrency::{Concurrency, Slots};
use super::key::TrustedProxies;
use super::layer::{self, ActionCall, ActionService, Layers};
use super::rate::Rate;
use super::scopes;
use super::{GuardSpec, Store};

/// The runtime guards of one tool, with their state: the tool-wide gate, and one per guarded
/// action. Its registry entry holds them, shared by every call.
pub(crate) struct Gates {
    /// Whether the tool has a discriminator (several actions): its actions are named
    /// `tool.action` (grouped) or `tool_action` (flat) in messages, else like the tool.
    pub(super) discriminated: bool,
    pub(super) tool: Gate,
    pub(super) actions: HashMap<String, Gate>,
    /// The actions a model may call again after a `TIMEOUT` (see [`retry_safe`]).
    pub(super) retry_safe: HashSet<String>,
    /// The tool's name, shared by the [`ActionCall`]s of its layer stacks.
    pub(super) tool_name: Arc<str>,
    /// The layer stacks, built once: the tool's layers around an action's own, per action
    /// with a gate of its own, and the tool's alone for the others.
    pub(super) stacks: HashMap<String, ActionService>,
    pub(super) tool_stack: Option<ActionService>,
}

/// The guards of one target, with their state (semaphores, rate counters).
pub(super) struct Gate {
    /// `billing` or `billing.charge`, for messages.
    pub(super) name: String,
    pub(super) concurrency: Option<Concurrency>,
    pub(super) rate: Option<Rate>,
    pub(super) timeout: Option<Duration>,
    pub(super) layers: Layers,
    /// The OAuth scopes a caller must hold ([`super::scopes`]).
    pub(super) scopes: Vec<String>,
}

impl Gate {
    pub(super) fn new(
        name: String,
        spec: &GuardSpec,
        store: &Store,
        proxies: &Arc<TrustedProxies>,
    ) -> Result<Gate, String> {
        if let Some(limit) = spec.concurrency
            && limit.max_active > tokio::sync::Semaphore::MAX_PERMITS
        {
            return Err(format!(
                "the concurrency limit of `{name}` allows {} calls at once, more than the {} \
                 a limit can count; leave the limit out for no limit",
                limit.max_active,
                tokio::sync::Semaphore::MAX_PERMITS
            ));
        }
        if spec.timeout.is_some_and(|t| t.is_zero()) {
            return Err(format!(
                "the timeout of `{name}` is zero, so every call would time out; use a positive \
                 duration"
            ));
        }
        let rate = match &spec.rate_limit {
            Some(limit) => Some(Rate::new(&name, limit.clone(), store, proxies)?),
            None => None,
        };
        Ok(Gate {
            concurrency: spec
                .concurrency
                .map(|limit| Concurrency::new(limit, proxies)),
            rate,
            timeout: spec.timeout,
            layers: spec.layers.clone(),
            scopes: spec.scopes.clone().unwrap_or_default(),
            name,
        })
    }

    pub(super) fn is_empty(&self) -> bool {
        self.concurrency.is_none()
            && self.rate.is_none()
            && self.timeout.is_none()
            && self.layers.is_empty()
            && self.scopes.is_empty()
    }
}

/// What a rate-limit key function may know about a call: the tool, the action and the request
/// context (principal, `_meta`, the HTTP request's parts).
#[derive(Debug)]
pub struct GuardRequest<'a> {
    /// The tool (`billing`).
    pub tool: &'a str,
    /// The action (`charge`; a single-function tool's action is named like the tool).
    pub action: &'a str,
    /// The request's context.
    pub context: &'a RequestContext,
}

impl Gates {
    /// Builds the layer stacks once the tool's and the actions' gates are in place.
    pub(super) fn build_stacks(&mut self) {
        self.tool_stack = Layers::stack(&self.tool.layers, &Layers::default());
        self.stacks = (self.actions.iter())
            .filter_map(|(action, gate)| {
                Layers::stack(&self.tool.layers, &gate.layers).map(|s| (action.clone(), s))
            })
            .collect();
    }

    /// The timeout a call of `action` runs under: the action's, else the tool's.
    fn timeout(&self, action: &str) -> Option<Duration> {
        let gate = self.actions.get(action);
        gate.and_then(|g| g.timeout).or(self.tool.timeout)
    }

    /// The scopes a call of `action` needs, as the scope check reads them: the action's gate's,
    /// then the tool's (a scope may appear in both).
    pub(crate) fn scopes(&self, action: &str) -> impl Iterator<Item = &str> {
        let gate = self.actions.get(action);
        [gate, Some(&self.tool)]
            .into_iter()
            .flatten()
            .flat_map(|g| g.scopes.iter().map(String::as_str))
    }

    /// Admits a call of `action`, the first of a call's two steps through the guards: the
    /// scope check (the action's scopes and the tool's), the rate limits (the action's, then
    /// the tool's), the concurrency limits (the tool's, then the action's; waiting in the
    /// queue when full). A refusal is the envelope to answer; the call never runs. Dropping
    /// the returned future (client cancellation) frees the call's queue place. Messages name
    /// the action as `exposition` does (`billing_charge` for a call through a flat tool name).
    /// `None` when nothing guards the action: the call runs as it would without guards.
    pub(crate) async fn admit(
        &self,
        action: &str,
        exposition: Exposition,
        context: &RequestContext,
    ) -> Result<Option<Pass>, ToolError> {
        let gate = self.actions.get(action);
        if self.tool.is_empty() && gate.is_none_or(Gate::is_empty) {
            return Ok(None);
        }
        // An action's limit is named as the client called the action; the tool's limit,
        // shared by its actions, by the tool's name.
        let called = self.called(action, exposition);
        let name_of = |g: &Gate| -> String {
            if gate.is_some_and(|a| std::ptr::eq(a, g)) {
                called.clone()
            } else {
                g.name.clone()
            }
        };

        let scopes = [gate, Some(&self.tool)].into_iter().flatten();
        scopes::check(&called, scopes.flat_map(|g| &g.scopes), context)?;

        let request = GuardRequest {
            tool: &self.tool.name,
            action,
            context,
        };
        for g in [gate, Some(&self.tool)].into_iter().flatten() {
            if let Some(rate) = &g.rate {
                rate.check(&name_of(g), &rate.key(&request)).await?;
            }
        }

        // The tool's slot first: a call holding an action slot never waits for a tool slot
        // held by calls of the same action, so the two queues cannot deadlock.
        let mut permits = Vec::new();
        for g in [Some(&self.tool), gate].into_iter().flatten() {
            if let Some(concurrency) = &g.concurrency {
                permits.push(concurrency.acquire(&name_of(g), context).await?);
            }
        }
        Ok(Some(Pass {
            exposition,
            slots: Slots::new(permits),
            timeout: self.timeout(action),
        }))
    }

    /// `action` named as the client called it in `exposition`.
    fn called(&self, action: &str, exposition: Exposition) -> String {
        exposition.action_name(&self.tool.name, self.discriminated.then_some(action))
    }

    /// Runs an admitted call of `action`, the second step: `handler` under the timeout and
    /// inside the layers (the tool's outside the action's). On timeout the handler's future
    /// is dropped. `handler` gets the call's concurrency slots and keeps them as long as it
    /// runs: one is given back only once the handler it admitted is gone (on completion,
    /// timeout and cancellation alike), and a blocking handler that outlives its call keeps
    /// its slots until its thread returns (see
    /// [`PreparedCall::blocking`](crate::PreparedCall::blocking)), so a limit also bounds the
    /// threads timed-out calls still occupy.
    pub(crate) async fn proceed<H, F>(
        &self,
        action: &str,
        pass: Pass,
        context: RequestContext,
        handler: H,
    ) -> ToolResponse
    where
        H: FnOnce(RequestContext, Slots) -> F + Send + 'static,
        F: Future<Output = ToolResponse> + Send + 'static,
    {
        let Pass {
            exposition,
            slots,
            timeout,
        } = pass;
        let called = || self.called(action, exposition);
        let gate = self.actions.get(action);
        let retry_safe = self.retry_safe.contains(action);
        let stack = match gate {
            Some(_) => self.stacks.get(action),
            None => self.tool_stack.as_ref(),
        };
        match stack {
            None => within(timeout, called, retry_safe, handler(context, slots)).await,
            Some(stack) => {
                let tool = Arc::clone(&self.tool_name);
                let action = Cow::Owned(action.to_owned());
                let call = ActionCall::new(tool, action, context, move |context| {
                    Box::pin(handler(context, slots))
                });
                within(timeout, called, retry_safe, layer::run(stack, call)).await
            }
        }
    }

    /// Both steps: [`Gates::admit`], then [`Gates::proceed`].
    #[cfg(test)]
    pub(crate) async fn run<H, F>(
        &self,
        action: &str,
        exposition: Exposition,
        context: RequestContext,
        handler: H,
    ) -> ToolResponse
    where
        H: FnOnce(RequestContext, Slots) -> F + Send + 'static,
        F: Future<Output = ToolResponse> + Send + 'static,
    {
        match self.admit(action, exposition, &context).await {
            Ok(Some(pass)) => self.proceed(action, pass, context, handler).await,
            Ok(None) => handler(context, Slots::default()).await,
            Err(error) => ToolResponse::error(error),
        }
    }
}

/// A call the guards admitted ([`Gates::admit`]): the exposition it was called in (its
/// timeout names the action so), the concurrency slots it holds until its handler is gone, and
/// the timeout it runs under.
pub(crate) struct Pass {
    exposition: Exposition,
    slots: Slots,
    timeout: Option<Duration>,
}

impl Pass {
    /// The timeout the call runs under: the action's, else the tool's. A synchronous handler
    /// needs to know it before it starts, to leave the task the timeout runs on (see
    /// [`PreparedCall::sync`](crate::PreparedCall::sync)).
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// `duration` in whole seconds, rounded up, never 0: the unit of `<retry_after>` and of the
/// guard messages (the envelope writes no delay under one second, so it is rounded up rather
/// than dropped).
pub(crate) fn whole_seconds(duration: Duration) -> u64 {
    let secs = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    secs.max(1)
}

/// "1 second", "5 seconds".
pub(crate) fn seconds(n: u64) -> String {
    count(n, "second")
}

/// `n` of `unit`: "1 call", "5 calls".
pub(super) fn count(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// `handler`'s response, or the `TIMEOUT` envelope of the action `name` gives once `limit` (if any) has passed,
/// the handler's future dropped. For a synchronous handler (on the blocking pool under a
/// timeout) that drops the wait for its thread, which cancels the handler's context and keeps
/// running to its end, its output discarded (see
/// [`PreparedCall::blocking`](crate::PreparedCall::blocking)). `retry_safe`: see
/// [`timed_out`].
async fn within(
    limit: Option<Duration>,
    name: impl FnOnce() -> String,
    retry_safe: bool,
    handler: impl Future<Output = ToolResponse>,
) -> ToolResponse {
    match limit {
        None => handler.await,
        Some(limit) => match tokio::time::timeout(limit, handler).await {
            Ok(response) => response,
            Err(_) => ToolResponse::error(timed_out(&name(), limit, retry_safe)),
        },
    }
}

/// Whether a model may call `action` again after it timed out: when it is annotated read-only
/// or idempotent (`readOnlyHint`, `idempotentHint`; MCP specification 2025-06-18, "Tools",
/// tool annotations). Any other action was stopped part-way and may already have taken
/// effect (a charge made, a message sent), so calling it again blindly could do it twice.
pub(crate) fn retry_safe(action: &ActionDefinition) -> bool {
    action.annotations.read_only == Some(true) || action.annotations.idempotent == Some(true)
}

/// The `TIMEOUT` envelope of `name` stopped after `limit`. Category transient either way;
/// retryable, with "retry once", only when the action is `retry_safe`. Otherwise not
/// retryable, and the recovery says to check whether the call took effect first.
pub(super) fn timed_out(name: &str, limit: Duration, retry_safe: bool) -> ToolError {
    let limit_text = if limit < Duration::from_secs(1) {
        format!("{} ms", limit.as_millis().max(1))
    } else {
        seconds(whole_seconds(limit))
    };
    let error = ToolError::new(
        ErrorCode::Timeout,
        format!("`{name}` did not finish within {limit_text} and was stopped."),
    );
    if retry_safe {
        error.suggest(
            "Retry once. If it times out again, ask for less in one call (a narrower filter, a \
             smaller page) or try again later.",
        )
    } else {
        error.retryable(false).suggest(
            "It was stopped part-way and may already have taken effect. Check whether it did \
             (read the state it changes) before calling it again; do not retry it blindly.",
        )
    }
}
