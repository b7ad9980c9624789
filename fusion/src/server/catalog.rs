//! The catalog: the MCP tool definitions a server advertises, made from each registered tool
//! once (again when the exposition changes), and where a call of each goes.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{MetaObject, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::model::definition::{ActionDefinition, Annotations, ToolDefinition};
use crate::portability::{self, Provider};
use crate::runtime::registry::{Registered, Route};
use crate::schema::{InputSchemas, check_headers, input_schema};

use super::{Exposition, output_schema};

/// The `_meta` key of an MCP tool definition under which its error contract travels.
pub const ERRORS_META_KEY: &str = "fusion/errors";

/// The `_meta` key of an MCP tool definition under which the OAuth scopes its actions require
/// travel: `{"charge": ["invoices:write"]}`, by action name, only actions that require some;
/// absent when none does.
pub const SCOPES_META_KEY: &str = "fusion/scopes";

/// The `_meta` key of an MCP tool definition listing the actions that may run as tasks
/// (`#[action(task)]`; MCP Tasks extension): `{"fusion/tasks": ["export_invoices"]}`.
pub const TASKS_META_KEY: &str = "fusion/tasks";

/// The `_meta` key of an MCP tool definition listing the actions that run only as tasks
/// (`#[action(task = required)]`; the MCP tool `execution.taskSupport: "required"`, which
/// rmcp's tool definition has no field for): `{"fusion/tasks_required": ["export_ledger"]}`.
/// They are listed under [`TASKS_META_KEY`] too.
pub const TASKS_REQUIRED_META_KEY: &str = "fusion/tasks_required";

/// One MCP tool: its definition, and where a call of it goes.
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) definition: rmcp::model::Tool,
    pub(super) route: Route,
    /// How its input schema is published.
    pub(super) schemas: InputSchemas,
}

/// Every MCP tool of a server, in registration (then declaration) order.
#[derive(Clone, Default)]
pub(super) struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    /// For the clash message: which tool (and action) claimed each name first.
    owners: HashMap<String, String>,
}

impl Catalog {
    /// The catalog of `tools` in `exposition`, input schemas published as each tool says, else
    /// as `schemas` says.
    ///
    /// # Errors
    /// As [`Catalog::add`].
    pub(super) fn build(
        tools: &[Arc<Registered>],
        exposition: Exposition,
        schemas: InputSchemas,
    ) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        for (index, registered) in tools.iter().enumerate() {
            let schemas = registered.tool.input_schemas().unwrap_or(schemas);
            catalog.add(index, &registered.definition, exposition, schemas)?;
        }
        Ok(catalog)
    }

    /// The catalog of `tools` in `exposition` as a caller who may call only the actions
    /// `allowed` marks (per tool, per action, in declaration order) sees it: each tool with
    /// only those actions (its discriminator's `enum`, its fields and its `_meta` entries
    /// shrink with them), a tool with none left out.
    pub(super) fn visible(
        tools: &[Arc<Registered>],
        exposition: Exposition,
        schemas: InputSchemas,
        allowed: &[Vec<bool>],
    ) -> Catalog {
        let mut catalog = Catalog::default();
        for (index, (registered, allowed)) in tools.iter().zip(allowed).enumerate() {
            let def = &registered.definition;
            // A hand-written tool may define no action: nothing to hide.
            if !allowed.is_empty() && !allowed.contains(&true) {
                continue;
            }
            let actions = (def.actions.iter().zip(allowed))
                .filter(|(_, shown)| **shown)
                .map(|(action, _)| action.clone());
            let shrunk = ToolDefinition {
                actions: actions.collect(),
                ..def.clone()
            };
            // The names are a subset of the full catalog's, which were checked at registration.
            let schemas = registered.tool.input_schemas().unwrap_or(schemas);
            if let Err(message) = catalog.add(index, &shrunk, exposition, schemas) {
                unreachable!("a visible subset of a built catalog: {message}");
            }
        }
        catalog
    }

    /// Adds the MCP tools of registered tool `index` (its definition `def`) in `exposition`,
    /// their input schemas published as `schemas` says, returning their entries.
    ///
    /// # Errors
    /// A message naming the clash when two MCP tools would share a name, naming the offending
    /// name when it is not a valid tool name for LLM APIs, or saying which `x-mcp-header`
    /// annotation of an input schema breaks a rule ([`check_headers`]).
    pub(super) fn add(
        &mut self,
        index: usize,
        def: &ToolDefinition,
        exposition: Exposition,
        schemas: InputSchemas,
    ) -> Result<&[Entry], String> {
        let route = |action| Route {
            tool: index,
            action,
            exposition,
        };
        let exposed: Vec<(Entry, String)> = match (exposition, &def.discriminator) {
            (Exposition::Flat, Some(_)) => (def.actions.iter())
                .map(|action| {
                    let name = def.action_name(exposition, &action.name);
                    let entry = Entry {
                        definition: flat_definition(def, action, name, schemas),
                        route: route(Some(action.name.clone())),
                        schemas,
                    };
                    let owner = format!("action `{}` of tool `{}`", action.name, def.name);
                    (entry, owner)
                })
                .collect(),
            _ => vec![(
                Entry {
                    definition: grouped_definition(def, schemas),
                    route: route(None),
                    schemas,
                },
                format!("tool `{}`", def.name),
            )],
        };
        let first = self.entries.len();
        for (entry, owner) in exposed {
            let name = entry.definition.name.to_string();
            check_name(&name, &owner)?;
            check_headers(&entry.definition.input_schema)
                .map_err(|error| format!("the input schema of `{name}` ({owner}): {error}"))?;
            if let Some(first) = self.owners.get(&name) {
                return Err(format!(
                    "two MCP tools are named `{name}`: {first} and {owner}; \
                     rename one with `#[fusion::tool(name = \"...\")]` or `#[action(name = \"...\")]`"
                ));
            }
            self.owners.insert(name.clone(), owner);
            self.by_name.insert(name, self.entries.len());
            self.entries.push(entry);
        }
        Ok(&self.entries[first..])
    }

    /// The entry serving MCP tool `name`.
    pub(super) fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The MCP tool definitions, in order.
    pub(super) fn definitions(&self) -> impl Iterator<Item = &rmcp::model::Tool> {
        self.entries.iter().map(|e| &e.definition)
    }

    /// The entries, in order.
    pub(super) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The MCP tool names, in order.
    pub(super) fn names(&self) -> Vec<String> {
        self.definitions().map(|d| d.name.to_string()).collect()
    }
}

/// The tool-name rule ([`check_tool_name`](crate::model::definition::check_tool_name)): a
/// hand-written `Tool` or a flat name the macro could not see may still break it.
fn check_name(name: &str, owner: &str) -> Result<(), String> {
    crate::model::definition::check_tool_name(name).map_err(|error| {
        format!(
            "`{}` ({owner}) is not a valid tool name: {error}; tool names must match \
             `^[a-zA-Z0-9_-]{{1,64}}$` (LLM APIs refuse the whole tool list otherwise); \
             rename it with `#[fusion::tool(name = \"...\")]` or `#[action(name = \"...\")]`",
            name.escape_debug()
        )
    })
}

/// The definition of a tool in grouped exposition: the tool's title, the input schema of all
/// its actions (published as `schemas` says), the conservatively combined annotations, every
/// action's error contract and the output schema all its actions' successes conform to, when
/// there is one (see [`output_schema`](super::output_schema)).
fn grouped_definition(def: &ToolDefinition, schemas: InputSchemas) -> rmcp::model::Tool {
    let annotations = combine(def.actions.iter().map(|a| a.annotations));
    let mut tool = rmcp::model::Tool::new(
        def.name.clone(),
        def.description.clone(),
        input_schema(def, schemas),
    )
    .with_meta(errors_meta(&def.actions))
    .with_annotations(to_rmcp(annotations, def.title.as_deref()));
    tool.title.clone_from(&def.title);
    if let Some(schema) = output_schema::of_tool(&def.actions) {
        tool = tool.with_raw_output_schema(schema);
    }
    tool
}

/// The definition of one action exposed as its own tool `name`: the grouped definition of a
/// tool of that action alone, with the action's title and description (the tool's when the
/// action has none).
fn flat_definition(
    def: &ToolDefinition,
    action: &ActionDefinition,
    name: String,
    schemas: InputSchemas,
) -> rmcp::model::Tool {
    let description = if action.description.is_empty() {
        &def.description
    } else {
        &action.description
    };
    grouped_definition(
        &ToolDefinition {
            name,
            description: description.clone(),
            title: action.title.clone(),
            discriminator: None,
            actions: vec![action.clone()],
        },
        schemas,
    )
}

/// Checks `entries` against `providers` ([`crate::portability`]): a portable schema breaking a
/// rule refuses the configuration (fusion wrote it to suit them); one published as written is
/// the author's choice, served, with a warning naming the providers that would refuse it.
///
/// # Errors
/// The report of every rule the portable schemas break.
pub(super) fn check_portable(entries: &[Entry], providers: &[Provider]) -> Result<(), String> {
    let (written, portable): (Vec<&Entry>, Vec<&Entry>) =
        (entries.iter()).partition(|entry| entry.schemas == InputSchemas::AsWritten);
    for entry in written {
        let refusing = portability::refusing(&entry.definition, providers);
        if !refusing.is_empty() {
            let issues = portability::check_tools([&entry.definition], providers);
            tracing::warn!(
                target: "fusion::server",
                tool = %entry.definition.name,
                "the input schema is published as written, and {} would refuse it:\n{}",
                portability::names(&refusing),
                portability::report(&issues),
            );
        }
    }
    portability::require(
        portable.into_iter().map(|entry| &entry.definition),
        providers,
    )
}

/// `{"fusion/errors": [{"action", "code", "severity", "category", "retryable"}, …]}`, in
/// action then declaration order; two variants declaring the same contract appear once. Plus
/// `"fusion/scopes"` ([`SCOPES_META_KEY`]) when an action requires scopes, `"fusion/tasks"`
/// ([`TASKS_META_KEY`]) when an action may run as a task, and `"fusion/tasks_required"`
/// ([`TASKS_REQUIRED_META_KEY`]) when one runs only as a task.
fn errors_meta(actions: &[ActionDefinition]) -> MetaObject {
    let errors: Vec<Value> = actions
        .iter()
        .flat_map(|action| {
            let mut seen = std::collections::HashSet::new();
            action
                .errors
                .iter()
                .filter(move |e| seen.insert(*e))
                .map(|e| {
                    json!({
                        "action": action.name,
                        "code": e.code.as_str(),
                        "severity": e.severity.as_str(),
                        "category": e.category.as_str(),
                        "retryable": e.retryable,
                    })
                })
        })
        .collect();
    let mut meta = Map::with_capacity(1);
    meta.insert(ERRORS_META_KEY.to_owned(), Value::Array(errors));
    let scopes: Map<String, Value> = actions
        .iter()
        .filter(|action| !action.scopes.is_empty())
        .map(|action| (action.name.clone(), json!(action.scopes)))
        .collect();
    if !scopes.is_empty() {
        meta.insert(SCOPES_META_KEY.to_owned(), Value::Object(scopes));
    }
    let tasks: Vec<Value> = (actions.iter())
        .filter(|action| action.may_run_as_task())
        .map(|action| Value::from(action.name.as_str()))
        .collect();
    if !tasks.is_empty() {
        meta.insert(TASKS_META_KEY.to_owned(), Value::Array(tasks));
    }
    let required: Vec<Value> = (actions.iter())
        .filter(|action| action.task_required)
        .map(|action| Value::from(action.name.as_str()))
        .collect();
    if !required.is_empty() {
        meta.insert(TASKS_REQUIRED_META_KEY.to_owned(), Value::Array(required));
    }
    MetaObject(meta)
}

/// Combines the annotations of a tool's actions conservatively, each action's hints stated
/// first ([`Annotations::stated`]: an unset hint is the MCP default): read-only and idempotent
/// only if every action is, destructive and open-world if any action is. Every hint of the
/// result is set.
pub(super) fn combine(actions: impl IntoIterator<Item = Annotations>) -> Annotations {
    let all: Vec<Annotations> = actions.into_iter().map(Annotations::stated).collect();
    let is = |hint: fn(&Annotations) -> Option<bool>| move |a: &Annotations| hint(a) == Some(true);
    Annotations {
        read_only: Some(all.iter().all(is(|a| a.read_only))),
        destructive: Some(all.iter().any(is(|a| a.destructive))),
        idempotent: Some(all.iter().all(is(|a| a.idempotent))),
        open_world: Some(all.iter().any(is(|a| a.open_world))),
    }
}

/// The MCP annotations: all four hints, stated (see [`Annotations::stated`]), and the title
/// again for clients of MCP 2025-03-26, which know only `annotations.title`.
fn to_rmcp(a: Annotations, title: Option<&str>) -> ToolAnnotations {
    let a = a.stated();
    ToolAnnotations::from_raw(
        title.map(str::to_owned),
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
        open_world: Option<bool>,
    ) -> Annotations {
        Annotations {
            read_only,
            destructive,
            idempotent,
            open_world,
        }
    }

    #[test]
    fn annotations_combine_conservatively() {
        let reader = hints(Some(true), Some(false), Some(true), Some(false));
        let writer = hints(Some(false), Some(true), Some(false), Some(true));
        assert_eq!(combine([reader, reader]), reader);
        assert_eq!(combine([reader, writer]), writer);
        assert_eq!(combine([writer]), writer);
        // An unset hint is the MCP default: not read-only, destructive, not idempotent, open
        // world; so it claims nothing for the tool.
        let silent = Annotations::default();
        assert_eq!(combine([reader, silent]), writer);
        assert_eq!(combine([silent, silent]), writer);
        // A read-only action is never destructive, whatever its default says.
        let lister = hints(Some(true), None, None, Some(false));
        let adder = hints(None, Some(false), Some(true), Some(false));
        assert_eq!(
            combine([lister, adder]),
            hints(Some(false), Some(false), Some(false), Some(false))
        );
        assert_eq!(
            combine([lister]),
            hints(Some(true), Some(false), Some(false), Some(false))
        );
    }

    #[test]
    fn every_hint_is_stated_and_the_title_repeated() {
        let annotations = to_rmcp(Annotations::default(), Some("Billing"));
        assert_eq!(
            serde_json::to_value(annotations).unwrap(),
            json!({
                "title": "Billing",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": false,
                "openWorldHint": true,
            })
        );
        let annotations = to_rmcp(hints(Some(true), None, Some(true), Some(false)), None);
        assert_eq!(
            serde_json::to_value(annotations).unwrap(),
            json!({
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false,
            })
        );
    }

    #[test]
    fn identical_contracts_of_one_action_are_listed_once() {
        use crate::{ErrorCategory, ErrorCode, ErrorContract, Severity};
        let conflict = || {
            ErrorContract::new(
                ErrorCode::Conflict,
                Severity::Error,
                Some(ErrorCategory::Validation),
                None,
            )
        };
        let mut action = ActionDefinition::named("charge");
        action.errors = vec![
            conflict(),
            ErrorContract::new(ErrorCode::NotFound, Severity::Error, None, None),
            conflict(),
        ];
        let meta = errors_meta(&[
            action.clone(),
            ActionDefinition {
                name: "refund".into(),
                ..action
            },
        ]);
        let codes: Vec<(&str, &str)> = meta.0[ERRORS_META_KEY]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["action"].as_str().unwrap(), e["code"].as_str().unwrap()))
            .collect();
        assert_eq!(
            codes,
            [
                ("charge", "CONFLICT"),
                ("charge", "NOT_FOUND"),
                ("refund", "CONFLICT"),
                ("refund", "NOT_FOUND")
            ]
        );
    }

    #[test]
    fn names_must_suit_llm_apis() {
        assert!(check_name("billing_list-2", "t").is_ok());
        assert!(check_name(&"a".repeat(64), "t").is_ok());
        assert!(check_name("billing.list", "t").is_err());
        assert!(check_name("", "t").is_err());
        assert_eq!(
            check_name(&"a".repeat(65), "tool `x`").unwrap_err(),
            format!(
                "`{}` (tool `x`) is not a valid tool name: it is 65 characters long: the \
                 Anthropic and OpenAI APIs accept at most 64; tool names must match \
                 `^[a-zA-Z0-9_-]{{1,64}}$` (LLM APIs refuse the whole tool list otherwise); \
                 rename it with `#[fusion::tool(name = \"...\")]` or `#[action(name = \"...\")]`",
                "a".repeat(65)
            )
        );
    }
}
