//! The tool-name rule at compile time: `^[a-zA-Z0-9_-]{1,64}$` for tool names, action names
//! and the flat names `tool_action`. A copy of the runtime's rule (`check_tool_name` in
//! `fusion/src/model/definition.rs`: a proc-macro crate cannot call its runtime), tested against the
//! same cases.

use super::ast::Name;
use crate::errors::Errors;

/// The longest name the Anthropic and OpenAI APIs accept, in characters.
const MAX_LEN: usize = 64;

/// The rule, as messages quote it.
const RULE: &str = "`^[a-zA-Z0-9_-]{1,64}$`";

/// Whose name it is: what messages call it and how to rename it.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Tool,
    Action,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Tool => "tool name",
            Kind::Action => "action name",
        }
    }

    fn rename(self) -> &'static str {
        match self {
            Kind::Tool => "`#[fusion::tool(name = \"...\")]`",
            Kind::Action => "`#[action(name = \"...\")]`",
        }
    }
}

/// How a name breaks the rule.
#[derive(Debug, PartialEq, Eq)]
enum Problem {
    Empty,
    Character(char),
    /// The length in characters.
    TooLong(usize),
}

fn problem(name: &str) -> Option<Problem> {
    if name.is_empty() {
        return Some(Problem::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Some(Problem::Character(bad));
    }
    // Only ASCII is left: bytes are characters.
    (name.len() > MAX_LEN).then_some(Problem::TooLong(name.len()))
}

/// Checks a tool or action name: MCP allows 1 to 128 characters of `[A-Za-z0-9_.-]` (MCP
/// specification 2025-06-18, "Tools", "Tool names"), but the Anthropic and OpenAI APIs accept
/// only 1 to 64 of `[A-Za-z0-9_-]` and refuse the whole tool list over one bad name. Whether
/// it passes.
pub(crate) fn check(name: &Name, kind: Kind, errors: &mut Errors) -> bool {
    let Some(problem) = problem(&name.value) else {
        return true;
    };
    let (what, value, rename) = (kind.what(), name.value.escape_debug(), kind.rename());
    let message = match problem {
        Problem::Empty => format!("the {what} cannot be empty"),
        Problem::Character('.') => format!(
            "the {what} `{value}` contains `.`: MCP allows dots, but LLM APIs (Anthropic, OpenAI) accept tool names matching {RULE} only; write `_` or `-` instead"
        ),
        Problem::Character(bad) => format!(
            "the {what} `{value}` contains `{}`: LLM APIs (Anthropic, OpenAI) accept tool names matching {RULE} only; rename it with {rename}",
            bad.escape_debug()
        ),
        Problem::TooLong(len) => format!(
            "the {what} `{value}` is {len} characters long: LLM APIs (Anthropic, OpenAI) accept tool names of at most {MAX_LEN} ({RULE}); shorten it with {rename}"
        ),
    };
    errors.at_span(name.span, message);
    false
}

/// Checks what Gemini's function declarations add for a tool name: its first character is a
/// letter or `_` ([Gemini API, `FunctionDeclaration.name`](https://ai.google.dev/api/caching#FunctionDeclaration)).
/// A tool name starts every name a model calls (`tool`, `tool_action`), so action names need
/// no such check. Whether it passes.
pub(crate) fn check_start(name: &Name, errors: &mut Errors) -> bool {
    match name.value.chars().next() {
        Some(first) if !(first.is_ascii_alphabetic() || first == '_') => {
            errors.at_span(
                name.span,
                format_args!(
                    "the tool name `{}` starts with `{first}`: the Gemini API accepts tool names that start with a letter or `_`; rename it with `#[fusion::tool(name = \"...\")]`",
                    name.value.escape_debug()
                ),
            );
            false
        }
        _ => true,
    }
}

/// Checks the flat name `tool_action` that flat exposition serves an action under, when both
/// names pass on their own; the error points at the action name.
pub(crate) fn check_flat(tool: &Name, action: &Name, errors: &mut Errors) {
    let flat = format!("{}_{}", tool.value, action.value);
    if flat.len() > MAX_LEN {
        errors.at_span(
            action.span,
            format_args!(
                "the flat tool name `{flat}` is {} characters long: flat exposition serves this action as `<tool>_<action>`, and LLM APIs (Anthropic, OpenAI) accept tool names of at most {MAX_LEN}; shorten the action name with `#[action(name = \"...\")]` or the tool name",
                flat.len()
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{Problem, problem};

    /// The runtime's cases (`fusion/src/model/definition.rs`, `tool_names_suit_mcp_and_llm_apis`).
    #[test]
    fn the_rule_matches_the_runtimes() {
        for good in ["billing", "billing_list-2", "A9", "x", &"a".repeat(64)] {
            assert_eq!(problem(good), None, "{good}");
        }
        for (bad, expected) in [
            ("", Problem::Empty),
            ("billing.list", Problem::Character('.')),
            ("list invoices", Problem::Character(' ')),
            ("café", Problem::Character('é')),
            ("a/b", Problem::Character('/')),
            (&"a".repeat(65), Problem::TooLong(65)),
            (&"a".repeat(129), Problem::TooLong(129)),
        ] {
            assert_eq!(problem(bad), Some(expected), "{bad}");
        }
    }
}
