//! The suite's multi round-trip request fixtures (MCP 2026-07-28, SEP-2322): tools that ask the
//! client through `input_required` answers, written with fusion's questions (`ctx.elicit`,
//! `ctx.sample`, `ctx.list_roots`, each under the input request key the scenario names with
//! `ctx.input(key)`), and `test_missing_capability`, which needs the `sampling` capability.
#![allow(
    deprecated,
    reason = "the 2026-07-28 revision deprecates sampling and roots, which the suite tests"
)]

use fusion::RequestContext;
use fusion::ToolError;
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, Root, SamplingMessage};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Color {
    color: String,
}

#[derive(Deserialize, JsonSchema)]
struct Confirmation {
    ok: bool,
}

/// A one-message sampling request.
fn ask_model(text: &str, max_tokens: u32) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

/// The text of the model's message.
fn text(answer: &CreateMessageResult) -> &str {
    let text = answer.message.content.first().and_then(|c| c.as_text());
    text.map_or("", |t| t.text.as_str())
}

/// The roots, listed.
fn listed(roots: &[Root]) -> String {
    let roots = roots.iter().map(|root| match &root.name {
        Some(name) => format!("{} ({name})", root.uri),
        None => root.uri.clone(),
    });
    roots.collect::<Vec<_>>().join(", ")
}

/// Asks the user's name (input request `user_name`)
#[fusion::tool]
async fn test_input_required_result_elicitation(ctx: RequestContext) -> Result<String, ToolError> {
    let name: Name = ctx.input("user_name").elicit("What is your name?").await?;
    Ok(format!("Hello, {}!", name.name))
}

/// Asks the client's model (input request `capital_question`)
#[fusion::tool]
async fn test_input_required_result_sampling(ctx: RequestContext) -> Result<String, ToolError> {
    let asked = ask_model("What is the capital of France?", 100);
    let answer = ctx.input("capital_question").sample(asked).await?;
    Ok(format!("The model said: {}", text(&answer)))
}

/// Asks the client's roots (input request `client_roots`)
#[fusion::tool]
async fn test_input_required_result_list_roots(ctx: RequestContext) -> Result<String, ToolError> {
    let roots = ctx.input("client_roots").list_roots().await?;
    Ok(format!("The client's roots: {}", listed(&roots)))
}

/// Asks for a name, a greeting and the roots in one round
#[fusion::tool]
async fn test_input_required_result_multiple_inputs(
    ctx: RequestContext,
) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.input("user_name").elicit::<Name>("What is your name?"),
        ctx.input("greeting")
            .sample(ask_model("Generate a greeting", 50)),
        ctx.input("client_roots").list_roots(),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} {}! Your roots: {}",
        text(&greeting),
        name.name,
        listed(&roots)
    ))
}

/// Asks a name, then a color, in two rounds
#[fusion::tool]
async fn test_input_required_result_multi_round(ctx: RequestContext) -> Result<String, ToolError> {
    let name: Name = ctx
        .input("step1")
        .elicit("Step 1: What is your name?")
        .await?;
    let color: Color = (ctx.input("step2"))
        .elicit("Step 2: What is your favorite color?")
        .await?;
    Ok(format!(
        "Hello, {}! Your favorite color is {}.",
        name.name, color.color
    ))
}

/// Asks for a confirmation carried by a sealed requestState
#[fusion::tool]
async fn test_input_required_result_request_state(
    ctx: RequestContext,
) -> Result<String, ToolError> {
    let confirmation: Confirmation = ctx.input("confirm").elicit("Please confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirmation.ok))
}

/// Asks for a confirmation; a tampered requestState is refused
#[fusion::tool]
async fn test_input_required_result_tampered_state(
    ctx: RequestContext,
) -> Result<String, ToolError> {
    let confirmation: Confirmation = ctx.input("confirm").elicit("Please confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirmation.ok))
}

/// Asks for a name and a model's answer: only what the client declared goes out
#[fusion::tool]
async fn test_input_required_result_capabilities(ctx: RequestContext) -> Result<String, ToolError> {
    let (name, answer) = tokio::join!(
        ctx.input("user_name").elicit::<Name>("What is your name?"),
        (ctx.input("capital_question")).sample(ask_model("What is the capital of France?", 100)),
    );
    let name = name.map_or_else(|_| "(not asked)".to_owned(), |name| name.name);
    Ok(format!("Name: {name}; the model said: {}", text(&answer?)))
}

/// Needs the client's sampling capability
#[fusion::tool]
async fn test_missing_capability(ctx: RequestContext) -> Result<String, ToolError> {
    let answer = ctx.sample(ask_model("Say hello", 20)).await?;
    Ok(format!("The model said: {}", text(&answer)))
}

/// Registers the fixtures on `server`.
pub(crate) fn tools(server: fusion::server::Server) -> fusion::server::Server {
    server
        .tool(TestInputRequiredResultElicitation)
        .tool(TestInputRequiredResultSampling)
        .tool(TestInputRequiredResultListRoots)
        .tool(TestInputRequiredResultMultipleInputs)
        .tool(TestInputRequiredResultMultiRound)
        .tool(TestInputRequiredResultRequestState)
        .tool(TestInputRequiredResultTamperedState)
        .tool(TestInputRequiredResultCapabilities)
        .tool(TestMissingCapability)
}
