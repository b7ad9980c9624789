//! The front half of every call, shared by a [`Server`](crate::server::Server) and a
//! [`Tester`](crate::testing::Tester): the registered tools, each read and checked once when
//! it is registered (its definition, its compiled schemas, its gates); the argument limits;
//! the contract awareness; the resolution of a call by the name a client used into one
//! [`Resolved`] value; and its response naming actions as that exposition does.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::auth::Principal;
use crate::contract::{Awareness, Contract, ContractBaseline};
use crate::envelope::error::ToolError;
use crate::guard::{Gates, Guards, ToolGuards};
use crate::internal::Redactor;
use crate::model::definition::{ActionDefinition, ToolDefinition};
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;
use crate::model::result_fit::ResultLimit;
use crate::runtime::compiled::CompiledTool;
use crate::runtime::decoded::Told;
use crate::runtime::fit;
use crate::runtime::names::ExposedNames;
use crate::runtime::tool::Tool;
use crate::validation::SchemaError;

/// The registered tools and what every call of them goes through.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    tools: Vec<Arc<Registered>>,
    guards: Guards,
    baseline: Option<ContractBaseline>,
    /// See [`Server::redact_internal_causes`](crate::server::Server::redact_internal_causes).
    pub(super) redact: Option<Redactor>,
    /// A server's [`Server::flags_in_structured_content`](crate::server::Server::flags_in_structured_content)
    /// option; `None` (a tester) leaves each response's own.
    flags_in_structured_content: Option<bool>,
    /// See [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments):
    /// `true` when it is off.
    pub(super) strict_json: bool,
    /// See [`Server::max_result`](crate::server::Server::max_result): the result limit of
    /// every action that declares none.
    max_result: Option<ResultLimit>,
    /// The fields each session was told it sent as stringified JSON.
    pub(super) told: Arc<Told>,
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

/// A tool as registered: the value, the definition it reported once, its compiled schemas,
/// the guards it declares and its gates (the guards configured for it, with their state).
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) definition: ToolDefinition,
    /// Its routing and argument validators, built from the definition it reported here.
    pub(crate) compiled: Arc<CompiledTool>,
    declared: ToolGuards,
    pub(crate) gates: Option<Arc<Gates>>,
}

/// Where a name a client called leads: the tool (its index), the action when the name
/// carries it (a flat `billing_charge`, a tester's `billing.charge`), and the exposition the
/// name belongs to.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    pub(crate) tool: usize,
    pub(crate) action: Option<String>,
    pub(crate) exposition: Exposition,
}

/// One `tools/call` resolved once, the value every later step of the call takes: the tool,
/// the action called (or why none is: the routing error to answer), the arguments, and the
/// exposition the client called in. Visibility, tasks, step-up, stringified-JSON decoding,
/// result fitting, the guards, the tool's `prepare` and the answer's names all read it; none
/// looks the action up again.
pub(crate) struct Resolved {
    pub(crate) tool: Arc<Registered>,
    pub(crate) action: Result<usize, ToolError>,
    /// Whether the name called carried the action (so the arguments need not).
    pub(crate) named: bool,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) exposition: Exposition,
}

impl Resolved {
    /// The declaration of the action called, when the call names one.
    pub(crate) fn declaration(&self) -> Option<&ActionDefinition> {
        let index = *self.action.as_ref().ok()?;
        self.tool.definition.actions.get(index)
    }
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
    /// Registers `tool`: reads its definition and guards, compiles its schemas and builds its
    /// gates.
    pub(crate) fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), Refusal> {
        let definition = tool.definition();
        let compiled = CompiledTool::new(&definition)
            .map_err(|error| Refusal::Definition(definition.name.clone(), error))?;
        fit::check_paging(&definition).map_err(Refusal::Settings)?;
        let declared = tool.guards();
        let gates = self
            .guards
            .gates(&definition, &declared)
            .map_err(Refusal::Settings)?;
        self.tools.push(Arc::new(Registered {
            tool,
            definition,
            compiled: Arc::new(compiled),
            declared,
            gates: gates.map(Arc::new),
        }));
        self.forget_derived();
        Ok(())
    }

    /// The registered tools, in registration order.
    pub(crate) fn tools(&self) -> &[Arc<Registered>] {
        &self.tools
    }

    /// The action a call of `route` with `arguments` goes to, among the ones `shown` marks
    /// (see [`Registry::resolve`]).
    pub(crate) fn route(
        &self,
        route: &Route,
        arguments: &Map<String, Value>,
        shown: Option<&[bool]>,
    ) -> Result<usize, ToolError> {
        let compiled = &self.tools[route.tool].compiled;
        compiled.route(arguments, route.action.as_deref(), |index| {
            shown.is_none_or(|shown| shown.get(index).copied().unwrap_or(false))
        })
    }

    /// The call of `route` with `arguments`, resolved: routed once to an action among the
    /// ones `shown` marks (by index; all without it): a hidden action is answered as one the
    /// tool does not have (see [`CompiledTool::route`]).
    pub(crate) fn resolve(
        &self,
        route: &Route,
        arguments: Map<String, Value>,
        shown: Option<&[bool]>,
    ) -> Resolved {
        Resolved {
            tool: Arc::clone(&self.tools[route.tool]),
            action: self.route(route, &arguments, shown),
            named: route.action.is_some(),
            arguments,
            exposition: route.exposition,
        }
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
            Arc::make_mut(registered).gates = gates.map(Arc::new);
        }
        self.guards = guards;
        Ok(())
    }

    /// Reads stringified JSON arguments as JSON (the default), or takes arguments strictly as
    /// sent.
    pub(crate) fn decode_stringified(&mut self, enabled: bool) {
        self.strict_json = !enabled;
    }

    /// The result limit of every action that declares none.
    pub(crate) fn set_max_result(&mut self, limit: Option<ResultLimit>) {
        self.max_result = limit;
    }

    /// What is done to the causes of internal errors before they are logged.
    pub(crate) fn set_redactor(&mut self, redact: Redactor) {
        self.redact = Some(redact);
    }

    /// Whether every answer carries its flags in `structuredContent` too.
    pub(crate) fn set_flags_in_structured_content(&mut self, enabled: bool) {
        self.flags_in_structured_content = Some(enabled);
    }

    /// See [`Registry::set_flags_in_structured_content`]; `None` leaves each response's own.
    pub(crate) fn flags_in_structured_content(&self) -> Option<bool> {
        self.flags_in_structured_content
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

    /// The result limit in force for `action`: its own, else the server's.
    pub(super) fn result_limit(&self, action: &ActionDefinition) -> Option<ResultLimit> {
        action.result.max_result.or(self.max_result)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::context::RequestContext;
    use crate::runtime::tool::{PreparedCall, ToolCall};

    /// Takes `{"n": …}` up to its own maximum: two values of this one type have two
    /// definitions.
    struct AtMost(u64);

    impl Tool for AtMost {
        fn definition(&self) -> ToolDefinition {
            let schema = json!({
                "type": "object",
                "properties": {"n": {"type": "integer", "maximum": self.0}},
                "required": ["n"],
            });
            let mut definition = crate::schema::fixtures::billing();
            definition.discriminator = None;
            definition.actions.truncate(1);
            definition.actions[0].input_schema = schema.as_object().unwrap().clone();
            definition
        }

        fn prepare(self: Arc<Self>, call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
            let n = call.parse::<Value>()?["n"].clone();
            Ok(PreparedCall::sync(move |_| n.to_string()))
        }
    }

    async fn call(registry: &Registry, n: u64) -> ToolResponse {
        let route = Route {
            tool: 0,
            action: None,
            exposition: Exposition::Grouped,
        };
        let arguments = json!({"n": n}).as_object().unwrap().clone();
        let resolved = registry.resolve(&route, arguments, None);
        registry.call(resolved, RequestContext::new()).await
    }

    #[tokio::test]
    async fn two_registrations_of_one_tool_type_each_validate_by_their_own_definition() {
        let (mut small, mut large) = (Registry::default(), Registry::default());
        assert!(small.register(Arc::new(AtMost(5))).is_ok());
        assert!(large.register(Arc::new(AtMost(50))).is_ok());
        for _ in 0..2 {
            let refused = call(&small, 20).await;
            assert!(refused.is_error());
            assert!(
                (refused.content_texts().concat()).contains("<validation_error"),
                "{:?}",
                refused.content_texts()
            );
            let taken = call(&large, 20).await;
            assert!(!taken.is_error());
            assert_eq!(taken.payload(), Some("20"));
        }
    }

    #[tokio::test]
    async fn an_admitted_call_dropped_before_it_runs_gives_its_slot_back() {
        let mut registry = Registry::default();
        assert!(registry.register(Arc::new(AtMost(5))).is_ok());
        let one = crate::guard::ConcurrencyLimit::new(1, 0);
        let spec = crate::guard::GuardSpec::new().concurrency(one);
        assert!(
            registry
                .set_guards(Guards::new().guard("billing", spec))
                .is_ok()
        );
        let route = Route {
            tool: 0,
            action: None,
            exposition: Exposition::Grouped,
        };
        let admit = || {
            let arguments = json!({"n": 1}).as_object().unwrap().clone();
            let resolved = registry.resolve(&route, arguments, None);
            registry.admit(resolved, RequestContext::new())
        };
        let Ok(admitted) = admit().await else {
            panic!("the first call is admitted")
        };
        let Err(busy) = admit().await else {
            panic!("the slot is taken")
        };
        assert_eq!(busy.tool_error().unwrap().code().as_str(), "SERVER_BUSY");
        // A task's call refused by the store after its admission: never run.
        drop(admitted);
        let Ok(admitted) = admit().await else {
            panic!("the slot is back")
        };
        assert_eq!(registry.run(admitted).await.payload(), Some("1"));
    }
}
