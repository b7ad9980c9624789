//! Whether MCP tool definitions suit the tool APIs of the major LLM providers: the documented
//! rules each provider applies to a tool's name and input schema, checked one definition at a
//! time.
//!
//! An MCP client hands a server's tool definitions to its model's API, and one definition the
//! API refuses fails every request of the conversation, not only calls to that tool. fusion
//! writes input schemas every [`Provider::DEFAULT`] provider accepts
//! ([`flat_input_schema`](crate::schema::flat_input_schema)), and a
//! [`Server`](crate::server::Server) checks each tool against them when it is registered
//! ([`Server::portable_to`](crate::server::Server::portable_to)). Tests can check any list of
//! definitions with [`crate::testing::assert_portable`].
//!
//! ```
//! use fusion::portability::{Provider, Rule, check_tool};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"address": {"$ref": "#/$defs/Address"}},
//!     "$defs": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}}
//! });
//! let tool = rmcp::model::Tool::new("ship", "Ships.", schema.as_object().unwrap().clone());
//! assert!(check_tool(&tool, Provider::Anthropic).is_empty());
//! // Gemini resolves no references (fusion's own schemas have none).
//! let issues = check_tool(&tool, Provider::Gemini);
//! let paths: Vec<&str> = issues.iter().map(|issue| issue.path.as_str()).collect();
//! assert_eq!(paths, ["/inputSchema/$defs", "/inputSchema/properties/address/$ref"]);
//! assert!(issues.iter().all(|issue| issue.rule == Rule::Reference));
//! ```

mod rules;
#[cfg(test)]
mod tests;

use std::fmt;

pub use rules::Rule;

/// An LLM provider's tool API, whose rules [`check_tool`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// Anthropic's Messages API, tool use
    /// (<https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use>): names
    /// match `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` is a JSON Schema whose root is
    /// `type: "object"`, with no `oneOf`, `anyOf` or `allOf` at the root (the API answers
    /// `input_schema does not support oneOf, allOf, or anyOf at the top level`); every `$ref`
    /// resolves inside the schema.
    Anthropic,
    /// OpenAI function calling, without strict mode
    /// (<https://platform.openai.com/docs/guides/function-calling>): names match
    /// `^[a-zA-Z0-9_-]{1,64}$`; `parameters` is a JSON Schema whose root is `type: "object"` with
    /// `properties`, and no `oneOf`, `anyOf`, `allOf`, `enum` or `not` at the root (the API
    /// answers `invalid_function_parameters`); every `$ref` resolves inside the schema.
    OpenAi,
    /// OpenAI function calling with `strict: true`, whose schemas are those of Structured Outputs
    /// (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the
    /// [`Provider::OpenAi`] rules, plus `additionalProperties: false` on every object, every
    /// property listed in `required` (an optional field is `type: [T, "null"]`), only the
    /// supported keywords (`anyOf` but no `allOf`, `oneOf`, `not`, `if`, `default`,
    /// `minLength`, `nullable`, …) and `format`s, and at most 5000 object properties, 10 levels
    /// of nested objects, 1000 enum values and 120,000 characters of property names, definition
    /// names, enum and const values. Opt-in: fusion's schemas have optional fields.
    OpenAiStrict,
    /// The Gemini API's function declarations
    /// (<https://ai.google.dev/api/caching#FunctionDeclaration>), whose `parameters` are the
    /// API's `Schema` object, a subset of the OpenAPI 3.0 schema
    /// (<https://ai.google.dev/api/caching#Schema>): names start with a letter or `_` and hold
    /// at most 64 letters, digits, `_`, `.` and `-` (Vertex AI, which also serves Gemini, allows
    /// no colon and requires the first character:
    /// <https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration>);
    /// parameter names are at most 64 letters, digits and `_`, not starting with a digit; the
    /// root is `type: "object"`; no `$ref` or `$defs`; only the `Schema` object's fields (the
    /// API rejects any other: no `oneOf`, `allOf`, `const`, `additionalProperties`, …); one
    /// `type`, never an array of types or `"null"` (`nullable: true` says a value may be null);
    /// `format` only `float`/`double` for numbers, `int32`/`int64` for integers, and
    /// `enum`/`date-time` for strings; `enum` values are strings.
    Gemini,
}

impl Provider {
    /// The providers fusion's schemas are written for, and a server checks by default:
    /// Anthropic, OpenAI (without strict mode) and Gemini.
    pub const DEFAULT: [Provider; 3] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini];

    /// The provider's name in messages: `Anthropic`, `OpenAI`, `OpenAI (strict)`, `Gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "Anthropic",
            Provider::OpenAi => "OpenAI",
            Provider::OpenAiStrict => "OpenAI (strict)",
            Provider::Gemini => "Gemini",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One rule of one provider that a tool definition breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PortabilityIssue {
    /// The MCP tool's name.
    pub tool: String,
    /// The provider whose rule is broken.
    pub provider: Provider,
    /// Where, as a JSON Pointer into the tool definition as `tools/list` sends it: `/name`, or
    /// `/inputSchema/properties/address/$ref`.
    pub path: String,
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong there and what to change, in a sentence.
    pub message: String,
}

impl fmt::Display for PortabilityIssue {
    /// `Gemini: tool `ship` at /inputSchema/properties/address/$ref: …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: tool `{}` at {}: {}",
            self.provider, self.tool, self.path, self.message
        )
    }
}

/// Every rule of `provider` that `tool` breaks (its name and its input schema), in the order
/// found: the name, the root, then each subschema depth first. Empty when the provider accepts
/// the definition.
pub fn check_tool(tool: &rmcp::model::Tool, provider: Provider) -> Vec<PortabilityIssue> {
    let mut found = Vec::new();
    if let Some(message) = rules::name(&tool.name, provider) {
        found.push((String::from("/name"), Rule::ToolName, message));
    }
    rules::schema(&tool.input_schema, provider, &mut found);
    found
        .into_iter()
        .map(|(path, rule, message)| PortabilityIssue {
            tool: tool.name.to_string(),
            provider,
            path,
            rule,
            message,
        })
        .collect()
}

/// [`check_tool`] for every tool and every provider, tool by tool.
pub fn check_tools<'a>(
    tools: impl IntoIterator<Item = &'a rmcp::model::Tool>,
    providers: &[Provider],
) -> Vec<PortabilityIssue> {
    tools
        .into_iter()
        .flat_map(|tool| {
            providers
                .iter()
                .flat_map(move |provider| check_tool(tool, *provider))
        })
        .collect()
}

/// The providers of `providers` that would refuse `tool`, in the order given: empty when all
/// accept it. For a schema published as written
/// ([`InputSchemas::AsWritten`](crate::schema::InputSchemas::AsWritten)), the price of keeping
/// it whole.
///
/// ```
/// use fusion::portability::{Provider, refusing};
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
/// let tool = rmcp::model::Tool::new("ship", "Ships.", schema.as_object().unwrap().clone());
/// assert_eq!(refusing(&tool, &Provider::DEFAULT), [Provider::Gemini]);
/// ```
pub fn refusing(tool: &rmcp::model::Tool, providers: &[Provider]) -> Vec<Provider> {
    (providers.iter().copied())
        .filter(|provider| !check_tool(tool, *provider).is_empty())
        .collect()
}

/// `Anthropic`, `Anthropic and Gemini`, `Anthropic, OpenAI and Gemini`.
pub(crate) fn names(providers: &[Provider]) -> String {
    crate::envelope::join_last(providers.iter().map(|p| p.name()), " and ")
}

/// `Err` with the [`report`] of every rule a provider of `providers` finds broken in `tools`.
pub(crate) fn require<'a>(
    tools: impl IntoIterator<Item = &'a rmcp::model::Tool>,
    providers: &[Provider],
) -> Result<(), String> {
    let issues = check_tools(tools, providers);
    if issues.is_empty() {
        Ok(())
    } else {
        let hint = "(leave a provider out with `Server::portable_to`, called before the `.tool(..)` \
                    calls: each registration is checked against the providers set so far)";
        Err(format!("{}\n{hint}", report(&issues)))
    }
}

/// `issues` as a report of one line each, under a line saying how many there are.
pub(crate) fn report(issues: &[PortabilityIssue]) -> String {
    let mut text = format!(
        "{} tool definition problem{} for LLM providers:",
        issues.len(),
        if issues.len() == 1 { "" } else { "s" }
    );
    for issue in issues {
        text.push_str("\n  - ");
        text.push_str(&issue.to_string());
    }
    // Then, tool by tool, who refuses it.
    let mut tools: Vec<(&str, Vec<Provider>)> = Vec::new();
    for issue in issues {
        match tools.iter_mut().find(|(tool, _)| *tool == issue.tool) {
            Some((_, providers)) if providers.contains(&issue.provider) => {}
            Some((_, providers)) => providers.push(issue.provider),
            None => tools.push((&issue.tool, vec![issue.provider])),
        }
    }
    for (tool, providers) in tools {
        text.push_str(&format!(
            "\n  tool `{tool}` would be refused by {}",
            names(&providers)
        ));
    }
    text
}
