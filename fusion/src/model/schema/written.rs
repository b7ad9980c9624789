//! Input schemas published as written (MCP 2026-07-28, SEP-2106: a server keeps a tool's input
//! schema as written), the choice against the portable rewrite.

use serde_json::{Map, Value};

use super::flat_schema;
use crate::model::definition::ToolDefinition;

/// How a tool's input schema is published in `tools/list`: set for a whole server with
/// [`Server::input_schemas`](crate::server::Server::input_schemas), for one tool with
/// `#[fusion::tool(input_schema = "as_written")]` (or `"portable"`), which wins.
///
/// Every client gets the same schema, whatever MCP revision it speaks: what decides is the LLM
/// API the client hands the schema to (which an MCP revision does not say), and one list for
/// every client keeps a cached `tools/list`, the lockfile and
/// [`Server::tool_definitions`](crate::server::Server::tool_definitions) one answer. Arguments
/// are validated against each action's own schema either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputSchemas {
    /// Rewritten into the part of JSON Schema the LLM APIs of
    /// [`Provider::DEFAULT`](crate::portability::Provider::DEFAULT) accept
    /// ([`flat_input_schema`](super::flat_input_schema): definitions inlined, no root
    /// `allOf`/`oneOf`, only the Gemini API's keywords), and checked against the providers of
    /// [`Server::portable_to`](crate::server::Server::portable_to) at registration. The default.
    #[default]
    Portable,
    /// As the arguments type's `JsonSchema` writes it: `$schema`, `$defs` and the `$ref`s to
    /// them, `$anchor`, `additionalProperties`, `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`,
    /// `title`, every keyword kept (a root without `type` gets `"type": "object"`, which MCP
    /// requires). A tool of several actions in grouped exposition publishes the union of its
    /// actions' fields (each field as written, `$defs` kept, `$schema` when every action
    /// declares the same); the keywords at the root of an action's own schema hold for that
    /// action's calls but are not published (expose the tool flat to publish each action's
    /// schema whole). Several LLM APIs refuse such schemas (Gemini takes no `$defs`, `$ref`
    /// or `additionalProperties`; Anthropic and OpenAI no root `allOf`); a server logs which
    /// providers of [`Server::portable_to`](crate::server::Server::portable_to) would, instead
    /// of refusing the tool.
    AsWritten,
}

impl InputSchemas {
    /// The form's name in messages and attributes: `portable`, `as_written`.
    pub fn name(self) -> &'static str {
        match self {
            InputSchemas::Portable => "portable",
            InputSchemas::AsWritten => "as_written",
        }
    }
}

/// The input schema of `definition`'s MCP tool (grouped; a flat tool is the definition of one
/// action) in `form`.
pub fn input_schema(definition: &ToolDefinition, form: InputSchemas) -> Map<String, Value> {
    match form {
        InputSchemas::Portable => super::flat_input_schema(definition),
        InputSchemas::AsWritten => as_written(definition),
    }
}

/// See [`InputSchemas::AsWritten`].
fn as_written(definition: &ToolDefinition) -> Map<String, Value> {
    if definition.discriminator.is_none() {
        let mut schema = (definition.actions.first())
            .map(|action| action.input_schema.clone())
            .unwrap_or_default();
        schema.entry("type").or_insert_with(|| "object".into());
        return schema;
    }
    let mut schema = flat_schema(definition);
    let mut dialects = (definition.actions.iter()).map(|a| a.input_schema.get("$schema"));
    if let Some(Some(first)) = dialects.next()
        && dialects.all(|dialect| dialect == Some(first))
    {
        schema.insert("$schema".into(), first.clone());
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::schema::fixtures::{action, billing};

    const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

    fn written() -> Value {
        json!({
            "$schema": DIALECT,
            "title": "Person",
            "type": "object",
            "properties": {"address": {"$ref": "#/$defs/address"}, "phone": {"type": "string"}},
            "$defs": {"address": {"$anchor": "addressDef", "type": "object"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"required": ["phone"]}, "then": {}, "else": {},
            "additionalProperties": false
        })
    }

    #[test]
    fn a_single_action_tool_publishes_its_schema_unchanged() {
        let single = ToolDefinition {
            discriminator: None,
            actions: vec![action("person", written())],
            ..billing()
        };
        let schema = input_schema(&single, InputSchemas::AsWritten);
        assert_eq!(Value::Object(schema), written());
        let portable = input_schema(&single, InputSchemas::Portable);
        for gone in ["$schema", "$defs", "allOf", "if", "additionalProperties"] {
            assert!(!portable.contains_key(gone), "{gone}");
        }

        // A root without a type is said to be an object, as MCP requires.
        let untyped = ToolDefinition {
            actions: vec![action("any", json!({"oneOf": [{"type": "object"}]}))],
            ..single
        };
        let schema = input_schema(&untyped, InputSchemas::AsWritten);
        assert_eq!(
            Value::Object(schema),
            json!({"oneOf": [{"type": "object"}], "type": "object"})
        );
    }

    #[test]
    fn a_grouped_tool_publishes_the_union_with_definitions_and_dialect() {
        let mut tool = billing();
        for action in &mut tool.actions {
            action.input_schema.insert("$schema".into(), DIALECT.into());
        }
        tool.actions.push(action("ship", written()));
        let schema = input_schema(&tool, InputSchemas::AsWritten);
        assert_eq!(schema["$schema"], DIALECT);
        assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
        assert_eq!(
            schema["properties"]["address"]["$ref"],
            json!("#/$defs/address")
        );
        assert_eq!(schema["required"], json!(["action"]));

        // Actions of different dialects: none is claimed for the union.
        tool.actions[0].input_schema.remove("$schema");
        assert!(!input_schema(&tool, InputSchemas::AsWritten).contains_key("$schema"));
    }
}
