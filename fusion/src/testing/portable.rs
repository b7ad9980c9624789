//! The portability check for `cargo test`: [`assert_portable`] fails on any tool definition an
//! LLM provider's tool API would refuse, listing every rule broken.

use crate::portability::{Provider, check_tools, report};

/// Panics unless every provider of `providers` accepts every tool of `tools` (see
/// [`crate::portability`]), listing each rule broken: the provider, the tool, where (a JSON
/// Pointer into the definition) and what to change. Pass a server's
/// [`tool_definitions`](crate::server::Server::tool_definitions), in each exposition you serve.
///
/// ```
/// use fusion::portability::Provider;
/// use fusion::server::{Exposition, Server};
/// # /// Says hello.
/// # #[fusion::tool]
/// # #[action(read_only)]
/// # fn hello() -> String { "hello".to_owned() }
///
/// let server = Server::new("greeter", "1.0.0").tool(Hello);
/// fusion::testing::assert_portable(&server.tool_definitions(), &Provider::DEFAULT);
/// let flat = server.exposition(Exposition::Flat);
/// fusion::testing::assert_portable(&flat.tool_definitions(), &Provider::DEFAULT);
/// ```
///
/// # Panics
/// When some provider would refuse some tool.
#[track_caller]
pub fn assert_portable(tools: &[rmcp::model::Tool], providers: &[Provider]) {
    let issues = check_tools(tools, providers);
    if !issues.is_empty() {
        panic!("fusion::testing: {}", report(&issues));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    #[should_panic(expected = "Gemini: tool `ship` at /inputSchema/properties/zip/type")]
    fn a_provider_refusing_a_tool_fails_the_test() {
        let schema = json!({"type": "object", "properties": {"zip": {"type": ["string", "null"]}}});
        let tool = rmcp::model::Tool::new("ship", "Ships.", schema.as_object().unwrap().clone());
        assert_portable(std::slice::from_ref(&tool), &[Provider::Anthropic]);
        assert_portable(&[tool], &Provider::DEFAULT);
    }
}
