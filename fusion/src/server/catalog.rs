//! The catalog: the MCP tool definitions a server advertises, built once from the registered
//! tools and the exposition, and the flat names available actions are renamed to.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, MetaObject, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::dispatch::flat_input_schema;
use crate::tool::{ActionDefinition, Annotations, Tool, ToolDefinition};

use super::Exposition;

/// The `_meta` key of an MCP tool definition under which its error contract travels.
pub const ERRORS_META_KEY: &str = "fusion/errors";

/// A tool as registered: the value and the definition it reported once.
#[derive(Clone)]
pub(super) struct Registered {
    pub(super) tool: Arc<dyn Tool>,
    pub(super) definition: ToolDefinition,
}

/// One MCP tool: its definition, the fusion tool serving it and, in flat exposition, the
/// discriminator value the server injects.
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) definition: rmcp::model::Tool,
    pub(super) tool: Arc<dyn Tool>,
    /// `(discriminator, action)` to insert into the arguments before `Tool::call`.
    pub(super) inject: Option<(String, String)>,
}

/// Every MCP tool of a server, in registration (then declaration) order.
#[derive(Clone, Default)]
pub(super) struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    /// `tool.action` → `tool_action`; empty in grouped exposition.
    flat_names: HashMap<String, String>,
}

impl Catalog {
    /// Builds the catalog.
    ///
    /// # Errors
    /// A message naming the clash when two MCP tools would share a name, or naming the
    /// offending name when it is not a valid tool name for LLM APIs.
    pub(super) fn build(tools: &[Registered], exposition: Exposition) -> Result<Catalog, String> {
        let mut catalog = Catalog::default();
        // For the clash message: which tool (and action) claimed each name first.
        let mut owners: HashMap<String, String> = HashMap::new();
        for registered in tools {
            let def = &registered.definition;
            let exposed: Vec<(Entry, String)> = match (exposition, &def.discriminator) {
                (Exposition::Flat, Some(discriminator)) => def
                    .actions
                    .iter()
                    .map(|action| {
                        let name = flat_name(&def.name, &action.name);
                        catalog
                            .flat_names
                            .insert(def.qualified_name(&action.name), name.clone());
                        let entry = Entry {
                            definition: flat_definition(def, action, name),
                            tool: registered.tool.clone(),
                            inject: Some((discriminator.clone(), action.name.clone())),
                        };
                        (
                            entry,
                            format!("action `{}` of tool `{}`", action.name, def.name),
                        )
                    })
                    .collect(),
                _ => vec![(
                    Entry {
                        definition: grouped_definition(def),
                        tool: registered.tool.clone(),
                        inject: None,
                    },
                    format!("tool `{}`", def.name),
                )],
            };
            for (entry, owner) in exposed {
                let name = entry.definition.name.to_string();
                check_name(&name, &owner)?;
                if let Some(first) = owners.get(&name) {
                    return Err(format!(
                        "two MCP tools are named `{name}`: {first} and {owner}; \
                         rename one with `#[fusion::tool(name = \"...\")]` or `#[action(name = \"...\")]`"
                    ));
                }
                owners.insert(name.clone(), owner);
                catalog.by_name.insert(name, catalog.entries.len());
                catalog.entries.push(entry);
            }
        }
        Ok(catalog)
    }

    /// The entry serving MCP tool `name`.
    pub(super) fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The MCP tool definitions, in order.
    pub(super) fn definitions(&self) -> impl Iterator<Item = &rmcp::model::Tool> {
        self.entries.iter().map(|e| &e.definition)
    }

    /// The MCP tool names, in order.
    pub(super) fn names(&self) -> Vec<String> {
        self.definitions().map(|d| d.name.to_string()).collect()
    }

    /// In flat exposition, renames every known `tool.action` in the available actions of the
    /// `<tool_error>` envelopes of `result` (the error and each warning) to its flat tool
    /// name. Unknown names stay as they are.
    ///
    /// The envelope is rewritten as text, line by line: its rendering is a byte-exact wire
    /// contract (SPEC section 1), so an `<action>` line can only be an available action (element
    /// text escapes `<`), and working on the rendered result keeps everything else of the
    /// response (structured content, flags) untouched.
    pub(super) fn rename_available_actions(&self, result: &mut CallToolResult) {
        if self.flat_names.is_empty() {
            return;
        }
        for block in &mut result.content {
            if let ContentBlock::Text(text) = block
                && text.text.starts_with("<tool_error ")
                && text.text.contains("\n<available_actions>\n")
            {
                text.text = rename_in_envelope(&text.text, &self.flat_names);
            }
        }
    }
}

fn rename_in_envelope(envelope: &str, names: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(envelope.len());
    let mut in_actions = false;
    for (i, line) in envelope.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line {
            "<available_actions>" => in_actions = true,
            "</available_actions>" => in_actions = false,
            _ if in_actions => {
                let renamed = line
                    .strip_prefix("  <action>")
                    .and_then(|rest| rest.strip_suffix("</action>"))
                    .and_then(|action| names.get(action));
                if let Some(flat) = renamed {
                    out.push_str("  <action>");
                    out.push_str(flat);
                    out.push_str("</action>");
                    continue;
                }
            }
            _ => {}
        }
        out.push_str(line);
    }
    out
}

/// The flat tool name of an action: `tool_action` (LLM APIs reject dots in tool names).
pub(super) fn flat_name(tool: &str, action: &str) -> String {
    format!("{tool}_{action}")
}

/// MCP tool names fusion serves: ASCII letters, digits, `_` and `-`, 1 to 128 characters (the
/// MCP tool-name rule minus the dot, which several LLM APIs reject).
fn check_name(name: &str, owner: &str) -> Result<(), String> {
    let valid = (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{name}` ({owner}) is not a valid MCP tool name: use 1 to 128 ASCII letters, \
             digits, `_` and `-` (LLM APIs reject other tool names)"
        ))
    }
}

/// The definition of a tool in grouped exposition: the flat input schema of all its actions,
/// the conservatively combined annotations and every action's error contract.
fn grouped_definition(def: &ToolDefinition) -> rmcp::model::Tool {
    let annotations = combine(def.actions.iter().map(|a| a.annotations));
    let mut tool = rmcp::model::Tool::new(
        def.name.clone(),
        def.description.clone(),
        flat_input_schema(def),
    )
    .with_meta(errors_meta(&def.actions));
    if let Some(annotations) = to_rmcp(annotations) {
        tool = tool.with_annotations(annotations);
    }
    tool
}

/// The definition of one action exposed as its own tool: the action's schema (`$schema` and
/// `title` stripped, a top-level `oneOf`/`anyOf`/`allOf` advertised as one object), its
/// annotations and its error contract.
fn flat_definition(
    def: &ToolDefinition,
    action: &ActionDefinition,
    name: String,
) -> rmcp::model::Tool {
    let single = ToolDefinition {
        name: name.clone(),
        description: String::new(),
        discriminator: None,
        actions: vec![action.clone()],
    };
    let description = if action.description.is_empty() {
        def.description.clone()
    } else {
        action.description.clone()
    };
    let mut tool = rmcp::model::Tool::new(name, description, flat_input_schema(&single))
        .with_meta(errors_meta(std::slice::from_ref(action)));
    if let Some(annotations) = to_rmcp(action.annotations) {
        tool = tool.with_annotations(annotations);
    }
    tool
}

/// `{"fusion/errors": [{"action", "code", "severity", "category", "retryable"}, …]}`, in
/// action then declaration order.
fn errors_meta(actions: &[ActionDefinition]) -> MetaObject {
    let errors: Vec<Value> = actions
        .iter()
        .flat_map(|action| {
            action.errors.iter().map(|e| {
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
    MetaObject(meta)
}

/// Combines the annotations of a tool's actions conservatively: read-only and idempotent only
/// if every action says so, destructive and open-world if any action may be. A hint no action
/// sets stays unset.
pub(super) fn combine(actions: impl IntoIterator<Item = Annotations>) -> Annotations {
    let all: Vec<Annotations> = actions.into_iter().collect();
    if let [single] = all.as_slice() {
        return *single;
    }
    // `claim` is the value that promises more to the client (read-only: true); a tool makes
    // the claim only when every action does.
    let every = |hint: fn(&Annotations) -> Option<bool>, claim: bool| -> Option<bool> {
        if all.iter().all(|a| hint(a).is_none()) {
            None
        } else {
            Some(if all.iter().all(|a| hint(a) == Some(claim)) {
                claim
            } else {
                !claim
            })
        }
    };
    Annotations {
        read_only: every(|a| a.read_only, true),
        destructive: every(|a| a.destructive, false),
        idempotent: every(|a| a.idempotent, true),
        open_world: every(|a| a.open_world, false),
    }
}

fn to_rmcp(a: Annotations) -> Option<ToolAnnotations> {
    if a == Annotations::default() {
        return None;
    }
    Some(ToolAnnotations::from_raw(
        None,
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    ))
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
        // A hint one action leaves unset cannot be claimed for the tool.
        let silent = Annotations::default();
        assert_eq!(
            combine([reader, silent]),
            hints(Some(false), Some(true), Some(false), Some(true))
        );
        assert_eq!(combine([silent, silent]), silent);
    }

    #[test]
    fn available_actions_are_renamed_line_by_line() {
        let names = HashMap::from([("billing.refund".to_owned(), "billing_refund".to_owned())]);
        let envelope = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
             <message>  <action>billing.refund</action></message>\n\
             <available_actions>\n  <action>billing.refund</action>\n  <action>other.x</action>\n</available_actions>\n\
             </tool_error>";
        assert_eq!(
            rename_in_envelope(envelope, &names),
            "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
             <message>  <action>billing.refund</action></message>\n\
             <available_actions>\n  <action>billing_refund</action>\n  <action>other.x</action>\n</available_actions>\n\
             </tool_error>"
        );
    }

    #[test]
    fn names_must_suit_llm_apis() {
        assert!(check_name("billing_list-2", "t").is_ok());
        assert!(check_name("billing.list", "t").is_err());
        assert!(check_name("", "t").is_err());
        assert!(check_name(&"a".repeat(129), "t").is_err());
    }
}
