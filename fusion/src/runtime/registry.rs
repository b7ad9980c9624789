//! The front half of every call, shared by a [`Server`](crate::server::Server) and a
//! [`Tester`](crate::testing::Tester): the registered tools, each read and checked once when
//! it is registered (its definition, its compiled schemas, its gates); the argument limits;
//! the contract awareness; and the call of a tool by the name a client used, its response
//! naming actions as that exposition does.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::auth::Principal;
use crate::contract::{Awareness, Contract, ContractBaseline};
use crate::guard::{Gates, Guards, ToolGuards};
use crate::internal::Redactor;
use crate::model::context::RequestContext;
use crate::model::definition::{ActionDefinition, ToolDefinition};
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;
use crate::model::result_fit::ResultLimit;
use crate::runtime::call::{self, Admission, Decoding, Target};
use crate::runtime::decoded::Told;
use crate::runtime::dispatch::ToolRuntime;
use crate::runtime::fit::{self, Fitting, Reading};
use crate::runtime::names::ExposedNames;
use crate::runtime::tool::Tool;
use crate::validation::SchemaError;

/// The registered tools and what every call of them goes through.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    tools: Vec<Registered>,
    guards: Guards,
    baseline: Option<ContractBaseline>,
    /// See [`Server::redact_internal_causes`](crate::server::Server::redact_internal_causes).
    pub(crate) redact: Option<Redactor>,
    /// A server's [`Server::flags_in_structured_content`](crate::server::Server::flags_in_structured_content)
    /// option; `None` (a tester) leaves each response's own.
    pub(crate) flags_in_structured_content: Option<bool>,
    /// See [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments):
    /// `true` when it is off.
    pub(crate) strict_json: bool,
    /// See [`Server::max_result`](crate::server::Server::max_result): the result limit of
    /// every action that declares none.
    pub(crate) max_result: Option<ResultLimit>,
    /// The fields each session was told it sent as stringified JSON.
    told: Arc<Told>,
    /// What the tools are called in each exposition, and the contract deltas named so: worked
    /// out at the first call that needs them, forgotten when the tools or the baseline change.
    grouped: Derived,
    flat: Derived,
}

#[derive(Clone, Default)]
struct Derived {
    names: OnceLock<ExposedNames>,
    awareness: OnceLock<Arc<Awareness>>,
}

/// A tool as registered: the value, the definition it reported once, the guards it declares
/// and its gates (the guards configured for it, with their state).
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) definition: ToolDefinition,
    /// Its compiled schemas and routing, built from the definition it reported here: what
    /// decoding stringified JSON arguments reads.
    runtime: Arc<ToolRuntime>,
    declared: ToolGuards,
    gates: Option<Arc<Gates>>,
}

/// Where a name a client called leads: the tool (its index), the discriminator and action to
/// inject when the name carries the action, and the exposition the name belongs to.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    pub(crate) tool: usize,
    pub(crate) inject: Option<(String, String)>,
    pub(crate) exposition: Exposition,
}

/// Why a tool cannot be registered.
pub(crate) enum Refusal {
    /// Its definition is refused or an input schema does not compile.
    Definition(String, SchemaError),
    /// Its guards cannot be built (a zero timeout, a rate limit allowing no call), or its
    /// paging names an argument an action does not take.
    Settings(String),
}

impl Registry {
    /// Registers `tool`: reads its definition and guards, compiles its schemas (a generated
    /// tool's calls use this runtime, see [`ToolRuntime::registered`]) and builds its gates.
    pub(crate) fn register(
        &mut self,
        tool: Arc<dyn Tool>,
        kind: std::any::TypeId,
    ) -> Result<(), Refusal> {
        let definition = tool.definition();
        let runtime = ToolRuntime::new(&definition)
            .map_err(|error| Refusal::Definition(definition.name.clone(), error))?;
        fit::check_paging(&definition).map_err(Refusal::Settings)?;
        let runtime = Arc::new(runtime);
        ToolRuntime::register(kind, Arc::clone(&runtime));
        let declared = tool.guards();
        let gates = self
            .guards
            .gates(&definition, &declared)
            .map_err(Refusal::Settings)?;
        self.tools.push(Registered {
            tool,
            definition,
            runtime,
            declared,
            gates: gates.map(Arc::new),
        });
        self.forget_derived();
        Ok(())
    }

    /// The registered tools, in registration order.
    pub(crate) fn tools(&self) -> &[Registered] {
        &self.tools
    }

    /// The guard configuration.
    pub(crate) fn guards(&self) -> &Guards {
        &self.guards
    }

    /// Replaces the guard configuration and builds every tool's gates afresh.
    ///
    /// # Errors
    /// A message when a target names no registered tool or action, or a guard cannot be built.
    pub(crate) fn set_guards(&mut self, guards: Guards) -> Result<(), String> {
        guards.check_targets(self.tools.iter().map(|r| &r.definition))?;
        for registered in &mut self.tools {
            let gates = guards.gates(&registered.definition, &registered.declared)?;
            registered.gates = gates.map(Arc::new);
        }
        self.guards = guards;
        Ok(())
    }

    /// Changes the argument limits (which need no gates).
    pub(crate) fn set_limits(&mut self, change: impl FnOnce(Guards) -> Guards) {
        self.guards = change(std::mem::take(&mut self.guards));
    }

    /// Compares the tools with `baseline` from now on.
    pub(crate) fn set_baseline(&mut self, baseline: ContractBaseline) {
        self.baseline = Some(baseline);
        self.forget_derived();
    }

    /// The contract of the registered tools, as a lockfile records it.
    pub(crate) fn contract(&self) -> Contract {
        Contract::from_definitions(self.tools.iter().map(|r| &r.definition))
    }

    /// The comparison with the baseline, action scopes named as `exposition` names them;
    /// `None` without a baseline. Made once, at the first need.
    pub(crate) fn awareness(&self, exposition: Exposition) -> Option<&Awareness> {
        let baseline = self.baseline.as_ref()?;
        let derived = self.derived(exposition);
        let awareness = derived
            .awareness
            .get_or_init(|| Arc::new(baseline.awareness_in(&self.contract(), exposition)));
        Some(awareness)
    }

    /// The scopes a call of action `action` of tool `tool` (its index) needs, each once: the
    /// action's and the tool's, the ones the tool declares and the ones the server's guards add.
    pub(crate) fn required_scopes(&self, tool: usize, action: &str) -> Vec<&str> {
        let mut scopes: Vec<&str> = Vec::new();
        if let Some(gates) = self.tools[tool].gates.as_deref() {
            for scope in gates.scopes(action) {
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
        }
        scopes
    }

    /// Whether `caller` passes the scope check of action `action` of tool `tool` (its index).
    /// A call without a principal passes only where no scope is required.
    pub(crate) fn allows(&self, tool: usize, action: &str, caller: Option<&Principal>) -> bool {
        let required = self.required_scopes(tool, action);
        match caller {
            _ if required.is_empty() => true,
            None => false,
            Some(principal) => required.iter().all(|scope| principal.has_scope(scope)),
        }
    }

    /// The routing runtime of tool `tool` (its index).
    pub(crate) fn runtime(&self, tool: usize) -> &ToolRuntime {
        &self.tools[tool].runtime
    }

    /// Runs one call along `route`: the argument limits, the tool, its gates (see
    /// [`call::run`]); then the response as the model reads it in the route's exposition:
    /// the contract deltas of a validation error, every `tool.action` named as the exposition
    /// names it, and the flags in `structuredContent` when the server asks for them.
    pub(crate) async fn call(
        &self,
        route: &Route,
        arguments: Map<String, Value>,
        context: RequestContext,
        admission: Option<Admission>,
    ) -> ToolResponse {
        let registered = &self.tools[route.tool];
        let target = Target {
            tool: &registered.tool,
            name: Some(&registered.definition.name),
            gates: registered.gates.as_deref(),
            inject: (route.inject.as_ref()).map(|(d, a)| (d.as_str(), a.as_str())),
            exposition: route.exposition,
            redact: self.redact.as_ref(),
            admission,
            decoding: (!self.strict_json).then(|| Decoding {
                runtime: &registered.runtime,
                told: &self.told,
            }),
        };
        let limits = self.guards.argument_limits();
        let fitting = self.fitting(registered, route, &arguments);
        let response = call::run(target, &limits, arguments, context).await;
        let response = match fitting {
            Some(fitting) => fit::fit(response, &fitting),
            None => response,
        };
        self.answer(response, route.exposition)
    }

    /// What fitting the result of a call of `registered` with `arguments` needs, when a
    /// result limit is in force for the action called; the arguments are kept only for an
    /// action that pages, with how the action read them (stringified JSON decoded, unless the
    /// server is strict) for the next call of a cut list.
    fn fitting<'r>(
        &self,
        registered: &'r Registered,
        route: &'r Route,
        arguments: &Map<String, Value>,
    ) -> Option<Fitting<'r>> {
        let definition = &registered.definition;
        let limited = |action: &ActionDefinition| action.result.max_result.is_some();
        if self.max_result.is_none() && !definition.actions.iter().any(limited) {
            return None;
        }
        let discriminator = definition.discriminator.as_deref();
        let injected = route.inject.as_ref().map(|(_, action)| action.as_str());
        let index = registered.runtime.action_index(arguments, injected)?;
        let action = definition.actions.get(index)?;
        let limit = action.result.max_result.or(self.max_result)?;
        Some(Fitting {
            limit,
            action,
            discriminator: discriminator.filter(|_| route.inject.is_none()),
            arguments: action.result.page.is_some().then(|| arguments.clone()),
            reading: (!self.strict_json).then(|| Reading {
                runtime: &registered.runtime,
                action: injected,
                max_bytes: self.guards.argument_limits().max_bytes,
            }),
        })
    }

    /// `response` (a tool's, or the server's own) as the model reads it in `exposition`.
    pub(crate) fn answer(&self, response: ToolResponse, exposition: Exposition) -> ToolResponse {
        let response = match self.awareness(exposition) {
            Some(awareness) => awareness.apply(response),
            None => response,
        };
        let names = (self.derived(exposition).names).get_or_init(|| {
            ExposedNames::new(self.tools.iter().map(|r| &r.definition), exposition)
        });
        let response = names.apply(response);
        match self.flags_in_structured_content {
            Some(enabled) => response.flags_in_structured_content(enabled),
            None => response,
        }
    }

    fn derived(&self, exposition: Exposition) -> &Derived {
        match exposition {
            Exposition::Grouped => &self.grouped,
            Exposition::Flat => &self.flat,
        }
    }

    fn forget_derived(&mut self) {
        self.grouped = Derived::default();
        self.flat = Derived::default();
    }
}
