//! Runtime guards: scope checks, concurrency limits, rate limits and timeouts around action
//! calls, and the argument size and nesting limits checked before a tool sees its arguments.
//!
//! See the [reference](crate::guard#reference) below for every option, its unit and the
//! envelope it answers with.
//!
//! # Where guards run
//!
//! A call goes through, in order:
//!
//! 1. the argument limits ([`Guards::max_argument_bytes`], [`Guards::max_argument_depth`]),
//!    before the tool is called;
//! 2. the tool's own routing and validation (a malformed call is answered here, and never
//!    takes a rate-limit slot or a concurrency slot);
//! 3. the scope check: the caller's [`Principal`](crate::auth::Principal) must hold every
//!    scope the action and the tool require (`FORBIDDEN`, or `UNAUTHORIZED` without a
//!    principal; see [`crate::auth`]);
//! 4. the rate limits (the action's, then the tool's);
//! 5. the concurrency limits (the tool's, then the action's): a call waits in the bounded
//!    queue or is refused;
//! 6. the handler, under the timeout (the action's, else the tool's).
//!
//! Steps 3 to 6 wrap the tool from outside: a [`Server`](crate::server::Server) (or a
//! [`Tester`](crate::testing::Tester)) runs them around the [`PreparedCall`](crate::PreparedCall)
//! that [`Tool::prepare`](crate::Tool::prepare) returns, so a hand-written [`Tool`](crate::Tool)
//! gets exactly the guards configured for it, and a tool called directly (with
//! [`ToolExt::call`](crate::ToolExt::call)) runs unguarded.
//!
//! # Configuring
//!
//! In the attribute, per tool and per action (durations are strings with a unit: `ms`, `s`,
//! `m`, `h`):
//!
//! ```
//! # use fusion::ToolError;
//! pub struct Billing;
//!
//! /// Invoices.
//! #[fusion::tool(concurrency(max_active = 8, max_queued = 64), timeout = "10s")]
//! impl Billing {
//!     /// Charges an invoice.
//!     #[action(rate_limit(calls = 5, per = "1m"), timeout = "2s")]
//!     pub async fn charge(&self) -> Result<(), ToolError> {
//!         Ok(())
//!     }
//! }
//! ```
//!
//! On the server builder, for a tool (`billing`) or one action (`billing.charge`); a builder
//! option replaces the attribute's option of the same kind for that target:
//!
//! ```
//! # pub struct Billing;
//! # /// Invoices.
//! # #[fusion::tool]
//! # impl Billing {
//! #     /// Charges.
//! #     #[action]
//! #     pub fn charge(&self) {}
//! # }
//! use std::time::Duration;
//! use fusion::guard::{ConcurrencyLimit, GuardSpec, RateLimit};
//! use fusion::server::Server;
//!
//! let server = Server::new("billing", "1.0.0")
//!     .tool(Billing)
//!     .guard("billing", GuardSpec::new().concurrency(ConcurrencyLimit::new(8, 64)))
//!     .guard(
//!         "billing.charge",
//!         GuardSpec::new()
//!             .rate_limit(RateLimit::per_caller(5, Duration::from_secs(60)))
//!             .timeout(Duration::from_secs(2)),
//!     );
//! ```
//!
//! A [`Tester`](crate::testing::Tester) takes the same options (`Tester::guard`,
//! `Tester::guards`), so contract tests see the refusals a server sends.
//!
//! # Reference
#![doc = include_str!("../docs/guards.md")]

mod concurrency;
mod gates;
mod key;
mod layer;
mod limits;
mod rate;
#[cfg(feature = "redis")]
pub(crate) mod redis;
mod scopes;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::envelope::code::{ErrorCode, Severity};
use crate::model::definition::{ActionDefinition, ErrorContract, ToolDefinition};
use crate::model::exposition::Exposition;

use gates::Gate;
pub use gates::GuardRequest;
use gates::count;
pub(crate) use gates::{Gates, Pass};
pub(crate) use gates::{retry_safe, seconds, whole_seconds};
pub use key::{ForwardedHeader, TrustedProxies};
pub use layer::{ActionCall, ActionService, BoxError, FromFn, FromFnLayer, Next, from_fn};
pub use limits::{ArgumentLimits, DEFAULT_MAX_ARGUMENT_BYTES};
pub use rate::{RateKey, RateLimit};
#[cfg(feature = "redis")]
pub use redis::RedisStore;

use layer::Layers;

/// The most calls of one tool (or action) that run at once, how many more may wait for a
/// slot, and how many of them one caller may have. Beyond these, a call is answered
/// `SERVER_BUSY` at once (load shedding: the queue never grows past `max_queued`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConcurrencyLimit {
    /// Calls running at once (at least 1).
    pub max_active: usize,
    /// Calls waiting for a running call to finish, in arrival order (0: none wait).
    pub max_queued: usize,
    /// Calls one caller may have running or waiting at once (at least 1), so that one caller
    /// cannot take every slot and queue place, as a client whose calls wait on a user who
    /// never answers would. It applies to calls over HTTP, where several clients share the
    /// limit, with the caller keyed as [`RateKey::Caller`] keys it. Default: half of
    /// `max_active`, rounded up.
    pub max_per_caller: usize,
}

impl ConcurrencyLimit {
    /// `max_active` calls at once (raised to 1 if 0), `max_queued` more waiting, and at most
    /// half of `max_active` (rounded up) from one caller.
    pub fn new(max_active: usize, max_queued: usize) -> ConcurrencyLimit {
        let max_active = max_active.max(1);
        ConcurrencyLimit {
            max_active,
            max_queued,
            max_per_caller: max_active.div_ceil(2),
        }
    }

    /// At most `calls` (raised to 1 if 0) from one caller, running or waiting. Give
    /// `max_active + max_queued` to let one caller use the whole limit.
    pub fn per_caller(mut self, calls: usize) -> ConcurrencyLimit {
        self.max_per_caller = calls.max(1);
        self
    }
}

/// The guards a tool declares for itself: what [`Tool::guards`](crate::Tool::guards) returns,
/// written by `#[fusion::tool(...)]` and `#[action(...)]` options. A server's builder options
/// override them option by option.
#[derive(Clone, Debug, Default)]
pub struct ToolGuards {
    /// The guards of the whole tool (each action of it).
    pub tool: GuardSpec,
    /// The guards of single actions, by action name.
    pub actions: Vec<(String, GuardSpec)>,
}

impl ToolGuards {
    /// The refusals the guards of `action` can answer with, as error contract entries, in the
    /// order the guards run, all severity `error`: for required scopes `FORBIDDEN` and
    /// `UNAUTHORIZED` (auth, not retryable), for a rate limit
    /// `RATE_LIMITED` (rate_limit, retryable), for a concurrency limit `SERVER_BUSY`
    /// (transient, retryable), for a timeout `TIMEOUT` (transient; retryable only when the
    /// action is annotated read-only or idempotent, since any other action may have taken
    /// effect before it was stopped). The tool's guards apply to each action.
    pub fn error_contracts(&self, action: &ActionDefinition) -> Vec<ErrorContract> {
        let specs: Vec<&GuardSpec> = self.specs(&action.name).collect();
        let scoped = specs
            .iter()
            .any(|s| s.scopes.as_ref().is_some_and(|s| !s.is_empty()));
        let kinds = [
            (ErrorCode::Forbidden, scoped),
            (ErrorCode::Unauthorized, scoped),
            (
                ErrorCode::RateLimited,
                specs.iter().any(|s| s.rate_limit.is_some()),
            ),
            (
                ErrorCode::ServerBusy,
                specs.iter().any(|s| s.concurrency.is_some()),
            ),
            (
                ErrorCode::Timeout,
                specs.iter().any(|s| s.timeout.is_some()),
            ),
        ];
        let retryable = |code: &ErrorCode| {
            (*code == ErrorCode::Timeout && !retry_safe(action)).then_some(false)
        };
        kinds
            .into_iter()
            .filter(|(_, guarded)| *guarded)
            .map(|(code, _)| {
                let retryable = retryable(&code);
                ErrorContract::new(code, Severity::Error, None, retryable)
            })
            .collect()
    }

    /// Records the scopes each action of `definition` requires ([`ToolGuards::scopes`]) in its
    /// [`ActionDefinition::scopes`], and adds
    /// [`error_contracts`](ToolGuards::error_contracts) to each action
    /// whose errors do not declare the same entry (code and flags) already, so the advertised
    /// contract (`_meta["fusion/errors"]`, the lockfile) lists the refusals the tool's own
    /// guards can send, with the flags they are sent with, and the `RESULT_TRUNCATED` warning
    /// and error of an action with a result limit of its own ([`crate::ResultFit::max_result`]). A code the action's error type
    /// declares with other flags (its own `TIMEOUT`, retryable, on an action whose guard
    /// `TIMEOUT` is not) is listed once per set of flags. `#[fusion::tool]` does this in
    /// `Tool::definition`; a hand-written [`Tool`](crate::Tool) with guards can call it from
    /// its own. Guards added on a server builder
    /// ([`Server::guard`](crate::server::Server::guard)) are deployment settings and are not
    /// part of the tool's contract.
    pub fn declare_errors(&self, definition: &mut ToolDefinition) {
        for action in &mut definition.actions {
            for scope in self.scopes(&action.name) {
                if !action.scopes.contains(&scope) {
                    action.scopes.push(scope);
                }
            }
            let mut contracts = self.error_contracts(action);
            // Not a guard, but declared with the guards' options: an action with a result
            // limit of its own can answer `RESULT_TRUNCATED`, a warning next to a cut list or
            // an error for a result that cannot be cut.
            if action.result.max_result.is_some() {
                for severity in [Severity::Warning, Severity::Error] {
                    let code = ErrorCode::ResultTruncated;
                    contracts.push(ErrorContract::new(code, severity, None, None));
                }
            }
            for contract in contracts {
                if !action.errors.contains(&contract) {
                    action.errors.push(contract);
                }
            }
        }
    }

    /// The scopes a call of `action` needs: the action's own, then the tool's, each once.
    pub fn scopes(&self, action: &str) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        for spec in self.specs(action) {
            for scope in spec.scopes.iter().flatten() {
                if !scopes.contains(scope) {
                    scopes.push(scope.clone());
                }
            }
        }
        scopes
    }

    /// The specs that apply to `action`: its own, then the tool's.
    fn specs<'a>(&'a self, action: &'a str) -> impl Iterator<Item = &'a GuardSpec> {
        let own = self.actions.iter().filter(move |(name, _)| name == action);
        own.map(|(_, spec)| spec).chain([&self.tool])
    }
}

/// The guards of one target: a tool (every action of it) or one action.
///
/// Each option left unset is not applied (or, for a builder option, leaves the attribute's
/// option in place).
#[derive(Clone, Debug, Default)]
pub struct GuardSpec {
    /// The concurrency limit.
    pub concurrency: Option<ConcurrencyLimit>,
    /// The rate limit.
    pub rate_limit: Option<RateLimit>,
    /// The longest a handler may run (a wall-clock duration; rounded up to whole seconds in
    /// the `TIMEOUT` message).
    pub timeout: Option<Duration>,
    /// The OAuth scopes (RFC 6749 section 3.3 scope tokens: `invoices:write`) the caller's
    /// [`Principal`](crate::auth::Principal) must all hold; see [`GuardSpec::scopes`].
    pub scopes: Option<Vec<String>>,
    /// Tower layers of your own, outermost first ([`GuardSpec::layer`]).
    layers: Layers,
}

impl GuardSpec {
    /// No guards.
    pub fn new() -> GuardSpec {
        GuardSpec::default()
    }

    /// Sets the concurrency limit.
    pub fn concurrency(mut self, limit: ConcurrencyLimit) -> GuardSpec {
        self.concurrency = Some(limit);
        self
    }

    /// Sets the rate limit.
    pub fn rate_limit(mut self, limit: RateLimit) -> GuardSpec {
        self.rate_limit = Some(limit);
        self
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> GuardSpec {
        self.timeout = Some(timeout);
        self
    }

    /// Requires every one of `scopes` of the caller: a call whose principal lacks one is
    /// answered `FORBIDDEN` naming the missing scopes, a call with no principal
    /// `UNAUTHORIZED` (both category `auth`, not retryable), before any rate-limit or
    /// concurrency slot is taken. On a tool, every action needs them; an action needs its own
    /// and its tool's. Set on a server builder, the list replaces the attribute's for that
    /// target (an empty list removes the requirement); like every builder option, it is a
    /// deployment setting and not part of the tool's contract.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> GuardSpec {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a tower `layer` around the target's calls, inside the layers added before it
    /// (`tower::ServiceBuilder` order: the first added is the outermost). Unlike the other
    /// options, layers accumulate: a builder's layers run inside those already set for the
    /// same target, and a tool's layers wrap its actions'.
    ///
    /// The layer wraps an [`ActionService`] (the rest of the stack, then the handler) whose
    /// requests are [`ActionCall`]s. It runs after routing, validation, the scope check, the
    /// rate limits and the concurrency limits, inside the timeout: it sees only well-formed,
    /// admitted calls. The stack is built once, when the tool is registered (again when the
    /// guards change); a call clones it. What the stack answers is the response; an error it returns is answered
    /// like a handler's: a [`ToolError`](crate::ToolError) (put into the `BoxError` as it is)
    /// reaches the model intact, any other error becomes `INTERNAL_ERROR` with an `errorId`,
    /// its cause logged and never shown. A panic is contained like a handler's.
    /// [`from_fn`] makes a layer from an async function.
    pub fn layer<L>(mut self, layer: L) -> GuardSpec
    where
        L: tower_layer::Layer<ActionService> + Send + Sync + 'static,
        L::Service: tower_service::Service<ActionCall, Response = crate::ToolResponse>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower_service::Service<ActionCall>>::Error: Into<BoxError>,
        <L::Service as tower_service::Service<ActionCall>>::Future: Send + 'static,
    {
        self.layers.push(layer);
        self
    }

    /// `self` with every option `over` sets replaced by `over`'s.
    fn overridden_by(self, over: &GuardSpec) -> GuardSpec {
        let mut layers = self.layers;
        layers.extend(&over.layers);
        GuardSpec {
            concurrency: over.concurrency.or(self.concurrency),
            rate_limit: over.rate_limit.clone().or(self.rate_limit),
            timeout: over.timeout.or(self.timeout),
            scopes: over.scopes.clone().or(self.scopes),
            layers,
        }
    }

    fn is_empty(&self) -> bool {
        self.concurrency.is_none()
            && self.rate_limit.is_none()
            && self.timeout.is_none()
            && self.layers.is_empty()
            && self.scopes.is_none()
    }
}

/// What a guard that depends on an outside store (Redis) does when the store fails (down,
/// unreachable, too slow).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StoreFallback {
    /// Let the call through unlimited; the failure is logged (`tracing` error).
    Allow,
    /// Refuse the call with `SERVER_BUSY` ("the rate limiter is unavailable"), retryable after
    /// 5 seconds; the failure is logged with an error id the envelope carries.
    #[default]
    Refuse,
}

/// The guard configuration of a [`Server`](crate::server::Server) or a
/// [`Tester`](crate::testing::Tester): per-target [`GuardSpec`]s, the argument limits and the
/// rate-limit store. Both take it whole (`.guards(..)`) or piece by piece (`.guard(..)`,
/// `.max_argument_bytes(..)`).
#[derive(Clone, Default)]
pub struct Guards {
    targets: Vec<(String, GuardSpec)>,
    limits: ArgumentLimits,
    store: Store,
    proxies: Arc<TrustedProxies>,
}

/// Where rate limits keep their counts.
#[derive(Clone, Default)]
enum Store {
    /// In this process (governor's keyed GCRA limiter).
    #[default]
    Memory,
    /// In Redis, shared by every server using the same store prefix.
    #[cfg(feature = "redis")]
    Redis(Arc<RedisStore>),
}

impl Guards {
    /// No guards, the default argument limits, in-memory rate limits.
    pub fn new() -> Guards {
        Guards::default()
    }

    /// Adds the guards of `target`: a tool name (`billing`: applies to each of its actions) or
    /// `tool.action` (`billing.charge`). Each option set here replaces the same option set by
    /// the attribute, or by an earlier call, for that target.
    pub fn guard(mut self, target: impl Into<String>, spec: GuardSpec) -> Guards {
        self.targets.push((target.into(), spec));
        self
    }

    /// Refuses arguments over `bytes` bytes of JSON with `VALIDATION_ERROR`; `None` removes the
    /// limit. Default: 4 MiB ([`DEFAULT_MAX_ARGUMENT_BYTES`]).
    pub fn max_argument_bytes(mut self, bytes: Option<usize>) -> Guards {
        self.limits.max_bytes = bytes;
        self
    }

    /// Refuses arguments nested deeper than `levels` levels of objects and arrays with
    /// `VALIDATION_ERROR` (the arguments object is level 1); `None` removes the limit.
    /// Default: none here; the validator of every `#[fusion::tool]` action refuses more than
    /// 64 levels ([`crate::validation::DEFAULT_MAX_DEPTH`]) with a `<validation_error>`.
    pub fn max_argument_depth(mut self, levels: Option<usize>) -> Guards {
        self.limits.max_depth = levels;
        self
    }

    /// Believes the header `proxies` write (`X-Forwarded-For` unless
    /// [`TrustedProxies::header`] says `Forwarded`) on requests whose TCP peer is one of them,
    /// when keying rate limits by the client's address (HTTP calls without a principal; see
    /// [`RateKey::Caller`]). Default: no proxy is trusted, and the TCP peer is the client.
    pub fn trusted_proxies(mut self, proxies: TrustedProxies) -> Guards {
        self.proxies = Arc::new(proxies);
        self
    }

    /// The argument limits.
    pub fn argument_limits(&self) -> ArgumentLimits {
        self.limits
    }

    /// Keeps rate-limit counts in Redis, shared by every server replica pointing at the same
    /// Redis with the same key prefix (feature `redis`).
    #[cfg(feature = "redis")]
    pub fn redis(mut self, store: RedisStore) -> Guards {
        self.store = Store::Redis(Arc::new(store));
        self
    }

    /// Checks that every target names a tool of `definitions`, or an action of one.
    ///
    /// # Errors
    /// A message naming the target and what it could have named.
    pub(crate) fn check_targets<'a>(
        &self,
        definitions: impl IntoIterator<Item = &'a ToolDefinition> + Clone,
    ) -> Result<(), String> {
        for (target, _) in &self.targets {
            let (tool, action) = split_target(target);
            let Some(definition) = definitions.clone().into_iter().find(|d| d.name == tool) else {
                // A flat exposition name (`billing_charge`) for `billing.charge`.
                let flat = definitions.clone().into_iter().find_map(|d| {
                    d.discriminator.as_ref()?;
                    d.actions
                        .iter()
                        .find(|a| d.action_name(Exposition::Flat, &a.name) == *target)
                        .map(|a| d.qualified_name(&a.name))
                });
                if let Some(action) = flat {
                    return Err(format!(
                        "guard target `{target}` is a flat tool name; guards name the action \
                         `{action}` in either exposition"
                    ));
                }
                let mut known: Vec<_> = definitions.into_iter().map(|d| d.name.as_str()).collect();
                known.sort_unstable();
                return Err(format!(
                    "guard target `{target}` names no registered tool (register tools before \
                     their guards); tools: {}",
                    known.join(", ")
                ));
            };
            // A single-action tool's action is named too: its guards are the tool's.
            if let Some(action) = action
                && definition.action(action).is_none()
            {
                return Err(format!(
                    "guard target `{target}` names no action of tool `{tool}`; actions: {}",
                    definition
                        .actions
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The gates of the tool `definition`: the guards it declares, each option overridden by
    /// the targets naming the tool or one of its actions; `None` when it has no guard.
    ///
    /// # Errors
    /// A message when a rate limit is empty, a concurrency limit is too large to count, or a
    /// timeout is zero.
    pub(crate) fn gates(
        &self,
        definition: &ToolDefinition,
        declared: &ToolGuards,
    ) -> Result<Option<Gates>, String> {
        let mut tool_spec = declared.tool.clone();
        let mut action_specs: HashMap<String, GuardSpec> =
            declared.actions.iter().cloned().collect();
        for (target, spec) in &self.targets {
            let (tool, action) = split_target(target);
            if tool != definition.name {
                continue;
            }
            let entry = match action {
                None => &mut tool_spec,
                Some(action) => action_specs.entry(action.to_owned()).or_default(),
            };
            *entry = entry.clone().overridden_by(spec);
        }
        let name = &definition.name;
        let mut gates = Gates {
            discriminated: definition.discriminator.is_some(),
            tool: Gate::new(name.clone(), &tool_spec, &self.store, &self.proxies)?,
            actions: HashMap::new(),
            retry_safe: definition
                .actions
                .iter()
                .filter(|a| retry_safe(a))
                .map(|a| a.name.clone())
                .collect(),
            tool_name: Arc::from(name.as_str()),
            stacks: HashMap::new(),
            tool_stack: None,
        };
        for (action, spec) in action_specs {
            if spec.is_empty() {
                continue;
            }
            let name = definition.qualified_name(&action);
            let gate = Gate::new(name, &spec, &self.store, &self.proxies)?;
            gates.actions.insert(action, gate);
        }
        if gates.tool.is_empty() && gates.actions.is_empty() {
            return Ok(None);
        }
        gates.build_stacks();
        Ok(Some(gates))
    }
}

/// A guard target's tool and action: `billing.charge` is `("billing", Some("charge"))`.
fn split_target(target: &str) -> (&str, Option<&str>) {
    match target.split_once('.') {
        Some((tool, action)) => (tool, Some(action)),
        None => (target, None),
    }
}

impl fmt::Debug for Guards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let store = match &self.store {
            Store::Memory => "memory",
            #[cfg(feature = "redis")]
            Store::Redis(_) => "redis",
        };
        f.debug_struct("Guards")
            .field("targets", &self.targets)
            .field("limits", &self.limits)
            .field("store", &store)
            .field("trusted_proxies", &self.proxies)
            .finish()
    }
}

#[cfg(test)]
mod tests;
