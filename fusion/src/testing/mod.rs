//! Testing your tools' contracts in a plain `cargo test`, without a transport.
//!
//! [`Tester`] calls a tool's actions in-process, the way a [`Server`](crate::server::Server)
//! does: the name picks the tool and action (`billing.get_invoice`, the flat
//! `billing_get_invoice`, or `billing` with the discriminator in the arguments), the
//! discriminator is injected, and the tool's own routing, validation, guards and handler run,
//! with panics caught. The [`Outcome`] carries chainable assertions that read like the
//! contract, and [`Outcome::snapshot`] renders a stable text for snapshot tests (`insta`).
//!
//! A failing assertion says which part differed (`expected code NOT_FOUND, got
//! UNKNOWN_ACTION`), then prints the whole result: every text block and the flags.
//!
//! Action names follow the name the call used, at the value level: a call by a flat name
//! (`billing_get_invoice`) gets every `tool.action` of a registered tool of several actions
//! renamed to its flat name (`billing_list_invoices`) in the available actions and in the
//! `action` of a validation envelope, as a server in flat exposition sends them; a call by
//! `tool.action` or `tool` keeps the dotted names (grouped exposition).
//!
//! Cancellation works as on a server: when the context's
//! [`cancellation`](crate::RequestContext::cancellation) token is cancelled before or while the
//! action runs, the action's future is dropped and the [`Outcome`] records a cancelled call
//! ([`Outcome::assert_cancelled`]); a server would send no response.
//!
//! Calls go through the same guards as on a server ([`crate::guard`]): the
//! argument limits, and the rate limits, concurrency limits and timeouts the tools declare or
//! [`Tester::guard`] / [`Tester::guards`] configure, with the server's defaults.

mod lockfile;
mod outcome;
mod portable;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::guard::{GuardSpec, Guards};
use crate::internal::ERROR_ID_KEY;
use crate::model::context::RequestContext;
use crate::model::definition::ToolDefinition;
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;
use crate::runtime::registry::{Refusal, Registry, Route};
use crate::runtime::tool::Tool;

pub use lockfile::{LOCK_ENV, LockCheckError, LockStatus, assert_lockfile, check_lockfile};
pub use outcome::Outcome;
pub use portable::assert_portable;

/// Calls registered tools in-process, through the path a server uses.
///
/// ```
/// # pub struct Echo;
/// # /// Echoes.
/// # #[fusion::tool]
/// # impl Echo {
/// #     /// Says hi.
/// #     #[action(read_only)]
/// #     pub fn hi(&self) -> u32 { 42 }
/// #     /// Says bye.
/// #     #[action(read_only)]
/// #     pub fn bye(&self) -> u32 { 0 }
/// # }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let tester = fusion::testing::Tester::new().tool(Echo);
/// tester.call("echo.hi", serde_json::json!({})).await.assert_json_eq(42);
/// tester.call("echo_hi", serde_json::json!({})).await.assert_success();
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Tester {
    /// The tools, their gates, the limits and the baseline, as a server keeps them.
    registry: Registry,
}

impl Tester {
    /// A tester with no tools yet.
    pub fn new() -> Tester {
        Tester::default()
    }

    /// Registers a tool (several may be registered).
    ///
    /// # Panics
    /// On a tool set a server would refuse, so a contract suite never passes on tools that
    /// cannot be served: a definition [`crate::schema::check_definition`] rejects or whose
    /// input schemas do not compile, two tools with one name, or a flat name (`tool_action`)
    /// that two tools or actions claim.
    #[track_caller]
    pub fn tool(mut self, tool: impl Tool) -> Tester {
        match self.registry.register(Arc::new(tool)) {
            Ok(()) => {}
            Err(Refusal::Definition(tool, err)) => {
                panic!("fusion::testing: a server would refuse tool `{tool}`: {err}")
            }
            Err(Refusal::Settings(message)) => panic!("fusion::testing: {message}"),
        }
        // Every earlier tool's names were checked: a name seen twice is the new tool's.
        let mut claimed = HashSet::new();
        if let Some((name, route)) = self
            .routes()
            .find(|(name, _)| !claimed.insert(name.clone()))
        {
            panic!(
                "fusion::testing: the name `{name}` of tool `{}` is already taken by a \
                 registered tool; a server would refuse both",
                self.registry.tools()[route.tool].definition.name
            );
        }
        self
    }

    /// Turns reading stringified JSON arguments as JSON on (the default) or off, as
    /// [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments)
    /// does. A tester's calls have the session of their context's
    /// [`caller`](crate::RequestContext::with_caller), else none: each call that sends
    /// stringified JSON gets the warning.
    pub fn decode_stringified_arguments(mut self, enabled: bool) -> Tester {
        self.registry.decode_stringified(enabled);
        self
    }

    /// Limits every action's result as
    /// [`Server::max_result`](crate::server::Server::max_result) does: the tester's calls get
    /// the same cut lists and `RESULT_TRUNCATED` envelopes a client gets.
    pub fn max_result(mut self, limit: Option<crate::ResultLimit>) -> Tester {
        self.registry.set_max_result(limit);
        self
    }

    /// Adds runtime guards for `target` (`billing` or `billing.charge`), as
    /// [`Server::guard`](crate::server::Server::guard) does.
    ///
    /// # Panics
    /// As `Server::guard`: when `target` names no registered tool or action.
    #[track_caller]
    pub fn guard(self, target: impl Into<String>, spec: GuardSpec) -> Tester {
        let guards = self.registry.guards().clone().guard(target, spec);
        self.guards(guards)
    }

    /// Replaces the guard configuration, as [`Server::guards`](crate::server::Server::guards)
    /// does (the same [`Guards`] value configures both).
    ///
    /// # Panics
    /// As [`Tester::guard`].
    #[track_caller]
    pub fn guards(mut self, guards: Guards) -> Tester {
        if let Err(message) = self.registry.set_guards(guards) {
            panic!("fusion::testing: {message}");
        }
        self
    }

    /// Rewrites the cause of every internal error of the calls before it is logged, as
    /// [`Server::redact_internal_causes`](crate::server::Server::redact_internal_causes) does
    /// (by default the cause is logged verbatim), so a test can check what the log gets.
    pub fn redact_internal_causes(
        mut self,
        redact: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> Tester {
        self.registry.set_redactor(Arc::new(redact));
        self
    }

    /// Calls `name` with `arguments` (a JSON object) and a fresh [`RequestContext`].
    ///
    /// `name` is `tool.action`, a flat `tool_action`, or `tool` alone (a single-action tool,
    /// or a tool whose discriminator is in `arguments`). A single-action tool also answers to
    /// `tool.action`, its one action's qualified name.
    ///
    /// # Panics
    /// When no registered tool answers to `name` (the message lists the names that do), or
    /// when `arguments` is not a JSON object: both are bugs in the test, not model errors.
    #[track_caller]
    pub fn call(&self, name: &str, arguments: Value) -> impl Future<Output = Outcome> + Send {
        self.call_with(name, arguments, RequestContext::new())
    }

    /// [`Tester::call`] with a request context (client identity, cancellation, `_meta`,
    /// progress).
    ///
    /// If the context's cancellation token is cancelled before or while the action runs, the
    /// action's future is dropped, as a server does, and the outcome is cancelled
    /// ([`Outcome::assert_cancelled`]).
    ///
    /// # Panics
    /// As [`Tester::call`].
    #[track_caller]
    pub fn call_with(
        &self,
        name: &str,
        arguments: Value,
        context: RequestContext,
    ) -> impl Future<Output = Outcome> + Send {
        let Value::Object(arguments) = arguments else {
            panic!(
                "fusion::testing: the arguments of `{name}` must be a JSON object, got {arguments}"
            );
        };
        let resolved = (self.registry).resolve(&self.route(name), arguments, None);
        let cancellation = context.cancellation().clone();
        async move {
            tokio::select! {
                biased;
                // Dropping the call drops the action's future, as the server does.
                () = cancellation.cancelled() => Outcome::cancelled(),
                response = self.registry.call(resolved, context) => Outcome::new(response),
            }
        }
    }

    /// Every name [`Tester::call`] accepts, in registration and declaration order.
    pub fn names(&self) -> Vec<String> {
        self.routes().map(|(name, _)| name).collect()
    }

    /// Each name of [`Tester::names`], and where a call by it goes.
    fn routes(&self) -> impl Iterator<Item = (String, Route)> + '_ {
        (self.registry.tools().iter().enumerate())
            .flat_map(|(tool, registered)| Tester::routes_of(tool, &registered.definition))
    }

    /// The names tool `tool` (its index) answers to, and where a call by each goes: `tool`,
    /// and `tool.action` and `tool_action` per action (a single-action tool: `tool` and
    /// `tool.action`).
    fn routes_of(tool: usize, def: &ToolDefinition) -> Vec<(String, Route)> {
        let route = |action, exposition| Route {
            tool,
            action,
            exposition,
        };
        let mut routes = vec![(def.name.clone(), route(None, Exposition::Grouped))];
        if def.discriminator.is_some() {
            for action in &def.actions {
                for exposition in [Exposition::Grouped, Exposition::Flat] {
                    let name = def.action_name(exposition, &action.name);
                    routes.push((name, route(Some(action.name.clone()), exposition)));
                }
            }
        } else if let [action] = def.actions.as_slice()
            && action.name != def.name
        {
            // Named as if the tool had a discriminator.
            let name = Exposition::Grouped.action_name(&def.name, Some(&action.name));
            routes.push((name, route(None, Exposition::Grouped)));
        }
        routes
    }

    /// Where `name` leads: one of [`Tester::names`] (no two tools share one), else
    /// `tool.action` naming an action the tool does not list (it still reaches the tool, which
    /// answers `UNKNOWN_ACTION` as it would to a model) or the one action of a single-function
    /// tool.
    #[track_caller]
    fn route(&self, name: &str) -> Route {
        if let Some((_, route)) = self.routes().find(|(n, _)| n == name) {
            return route;
        }
        let tools = self.registry.tools();
        if let Some((tool_name, action)) = name.split_once('.')
            && let Some(tool) = tools.iter().position(|r| r.definition.name == tool_name)
        {
            let def = &tools[tool].definition;
            if def.discriminator.is_some() || def.action(action).is_some() {
                return Route {
                    tool,
                    action: def.discriminator.is_some().then(|| action.to_owned()),
                    exposition: Exposition::Grouped,
                };
            }
        }
        panic!(
            "fusion::testing: no tool answers to `{name}`; available: {}",
            self.names().join(", ")
        );
    }
}

/// The keys of the flags, in the order of the flags table in the crate docs.
const FLAG_ORDER: [&str; 7] = [
    "isError",
    "errorCategory",
    "isRetryable",
    "retryAfterSeconds",
    "code",
    "severity",
    "explanation",
];

const ERROR_ID_PLACEHOLDER: &str = "[error id]";

/// Renders a response: every text block verbatim (blank line between blocks), then
/// `flags: {…}` with keys in the flags table's order, error ids replaced by `[error id]`.
pub(crate) fn render(response: &ToolResponse) -> String {
    let mut out = response
        .content_texts()
        .iter()
        .map(|text| redact_error_id(text))
        .collect::<Vec<_>>()
        .join("\n\n");
    if let Some(structured) = response.structured_content() {
        out.push_str("\n\nstructuredContent: ");
        out.push_str(&serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    out.push_str("\n\nflags: ");
    match response.flags() {
        Some(Value::Object(flags)) => out.push_str(&render_flags(&flags)),
        Some(other) => out.push_str(&other.to_string()),
        None => out.push_str("none"),
    }
    out
}

fn render_flags(flags: &Map<String, Value>) -> String {
    let known = FLAG_ORDER.iter().filter_map(|k| flags.get_key_value(*k));
    let others = flags
        .iter()
        .filter(|(k, _)| !FLAG_ORDER.contains(&k.as_str()));
    let lines: Vec<String> = known
        .chain(others)
        .map(|(k, v)| {
            let value = match (k.as_str(), v) {
                (ERROR_ID_KEY, Value::String(_)) => Value::from(ERROR_ID_PLACEHOLDER),
                _ => v.clone(),
            };
            format!("  {}: {}", Value::from(k.as_str()), value)
        })
        .collect();
    if lines.is_empty() {
        return "{}".to_owned();
    }
    format!("{{\n{}\n}}", lines.join(",\n"))
}

/// Replaces the value of every `errorId` detail with `[error id]`.
fn redact_error_id(text: &str) -> String {
    let open = format!("<detail key=\"{ERROR_ID_KEY}\">");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let value_start = start + open.len();
        out.push_str(&rest[..value_start]);
        match rest[value_start..].find("</detail>") {
            Some(end) => {
                out.push_str(ERROR_ID_PLACEHOLDER);
                rest = &rest[value_start + end..];
            }
            None => rest = &rest[value_start..],
        }
    }
    out.push_str(rest);
    out
}
