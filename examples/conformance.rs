//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`, its
//! server scenarios) tests: the suite's tools written with `#[fusion::tool]`, and its prompts,
//! resources, resource template, subscriptions, completions and logging level in an rmcp
//! handler beside them (`Server::handler`), served over Streamable HTTP.
//!
//! ```text
//! cargo run -p examples --bin fusion-conformance -- --http 127.0.0.1:3001
//! clients/conformance/run.sh      # installs the suite, starts this server, runs every scenario
//! ```
//!
//! Each tool answers what the suite's scenario of the same name expects; the texts are the
//! suite's, not fusion's style.

use std::time::Duration;

use fusion::elicit::Unsampled;
use fusion::server::Server;
use fusion::{LogLevel, RequestContext, ToolErrors, ToolResponse};
use rmcp::model::{AudioContent, ContentBlock, ResourceContents};
#[allow(
    deprecated,
    reason = "the 2025 revisions' sampling, which the suite tests"
)]
use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The suite's prompts and resources: an rmcp handler.
#[path = "conformance/library.rs"]
mod library;

// The tool with an `x-mcp-header` argument (SEP-2243).
#[path = "conformance/headers.rs"]
mod headers;

// The suite's multi round-trip request fixtures (SEP-2322).
#[path = "conformance/input_required.rs"]
mod input_required;

use library::Library;

// The `server-stateless` scenario's tools (MCP 2026-07-28).
#[path = "conformance/stateless.rs"]
mod stateless;

// The tools of the Tasks-extension scenarios.
#[path = "conformance/tasks.rs"]
mod tasks;

/// A silent WAV, base64.
const AUDIO_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// A 1x1 red PNG, base64.
const IMAGE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

/// The error `test_error_handling` always answers.
#[derive(Debug, thiserror::Error, ToolErrors)]
enum TestError {
    #[error("This tool intentionally returns an error for testing")]
    #[tool_error(INTERNAL_ERROR)]
    Intentional,
}

#[derive(Deserialize, JsonSchema)]
struct Message {
    /// The message to show the user.
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send
    prompt: String,
}

/// The form `test_elicitation` asks the user to fill in.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// A form whose every field has a default.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Defaults {
    /// User's name
    #[serde(default = "default_name")]
    name: String,
    /// User's age
    #[serde(default = "default_age")]
    age: i64,
    /// User's score
    #[serde(default = "default_score")]
    score: f64,
    /// User's status
    #[serde(default)]
    status: Status,
    /// Whether user is verified
    #[serde(default = "default_verified")]
    verified: bool,
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    #[default]
    Active,
    Inactive,
    Pending,
}

fn default_name() -> String {
    "John Doe".to_owned()
}
fn default_age() -> i64 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_verified() -> bool {
    true
}

/// A form with every kind of enum field MCP elicitation defines (2025-11-25, "Elicitation":
/// single and multiple choice, with and without titles, and the legacy `enumNames`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Choices {
    #[schemars(schema_with = "untitled_single")]
    untitled_single: Option<String>,
    #[schemars(schema_with = "titled_single")]
    titled_single: Option<String>,
    #[schemars(schema_with = "legacy_enum")]
    legacy_enum: Option<String>,
    #[schemars(schema_with = "untitled_multi")]
    untitled_multi: Option<Vec<String>>,
    #[schemars(schema_with = "titled_multi")]
    titled_multi: Option<Vec<String>>,
}

fn untitled_single(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["option1", "option2", "option3"]})
}

fn titled_single(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "oneOf": [
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"},
    ]})
}

fn legacy_enum(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["opt1", "opt2", "opt3"],
        "enumNames": ["Option One", "Option Two", "Option Three"],
    })
}

fn untitled_multi(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
    })
}

fn titled_multi(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items": {"anyOf": [
        {"const": "value1", "title": "First Choice"},
        {"const": "value2", "title": "Second Choice"},
        {"const": "value3", "title": "Third Choice"},
    ]}})
}

/// The arguments of `json_schema_2020_12_tool`, its schema published as written (SEP-2106):
/// `$schema` and `additionalProperties: false` from schemars, a `$defs` entry `address` with an
/// `$anchor`, a phone or an email required (`allOf` of an `anyOf`), and the one the contact
/// method names (`if`/`then`/`else`), which fusion validates too.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
struct Person {
    #[serde(default)]
    #[schemars(with = "String")]
    name: Option<String>,
    #[serde(default)]
    address: Option<Address>,
    #[serde(default, rename = "contactMethod")]
    #[schemars(schema_with = "contact_method")]
    contact_method: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    phone: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    email: Option<String>,
}

fn contact_method(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["phone", "email"]})
}

#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
struct Address {
    #[serde(default)]
    #[schemars(with = "String")]
    street: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    city: Option<String>,
}

/// Returns simple text content
#[fusion::tool]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns image content
#[fusion::tool]
fn test_image_content() -> ToolResponse {
    ToolResponse::text("A 1x1 red PNG.").with_content(ContentBlock::image(IMAGE_PNG, "image/png"))
}

/// Returns audio content
#[fusion::tool]
fn test_audio_content() -> ToolResponse {
    let audio = ContentBlock::Audio(AudioContent::new(AUDIO_WAV, "audio/wav"));
    ToolResponse::text("A silent WAV.").with_content(audio)
}

/// Returns embedded resource content
#[fusion::tool]
fn test_embedded_resource() -> ToolResponse {
    let resource = ResourceContents::TextResourceContents {
        uri: "test://embedded-resource".into(),
        mime_type: Some("text/plain".into()),
        text: "This is an embedded resource content.".into(),
        meta: None,
    };
    ToolResponse::text("An embedded resource.").with_content(ContentBlock::resource(resource))
}

/// Returns multiple content types
#[fusion::tool]
fn test_multiple_content_types() -> ToolResponse {
    let resource = ResourceContents::TextResourceContents {
        uri: "test://mixed-content-resource".into(),
        mime_type: Some("application/json".into()),
        text: r#"{"test":"data","value":123}"#.into(),
        meta: None,
    };
    ToolResponse::text("Multiple content types test:")
        .with_content(ContentBlock::image(IMAGE_PNG, "image/png"))
        .with_content(ContentBlock::resource(resource))
}

/// Always returns an error
#[fusion::tool]
#[action(errors(TestError::Intentional))]
fn test_error_handling() -> Result<String, TestError> {
    Err(TestError::Intentional)
}

/// Sends logging notifications during execution
#[fusion::tool]
async fn test_tool_with_logging(ctx: RequestContext) -> &'static str {
    for message in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        ctx.log_as(Some("conformance-server"), LogLevel::Info, message);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Logging test completed"
}

/// Reports progress notifications
#[fusion::tool]
async fn test_tool_with_progress(ctx: RequestContext) -> &'static str {
    for (progress, message) in [(0.0, "Starting"), (50.0, "Halfway"), (100.0, "Complete")] {
        ctx.report_progress(progress, Some(100.0), Some(message));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress test completed"
}

/// Requests user input from client
#[fusion::tool]
async fn test_elicitation(args: Message, ctx: RequestContext) -> String {
    match ctx.elicit::<Contact>(args.message).await {
        Ok(contact) => format!("User response: action=accept, content={contact:?}"),
        Err(unanswered) => format!("User response: {unanswered}"),
    }
}

/// Tests elicitation with default values (SEP-1034)
#[fusion::tool]
async fn test_elicitation_sep1034_defaults(ctx: RequestContext) -> String {
    let asked = ctx.elicit::<Defaults>("Please provide values (all have defaults)");
    match asked.await {
        Ok(values) => format!("Elicitation completed: action=accept, content={values:?}"),
        Err(unanswered) => format!("Elicitation completed: {unanswered}"),
    }
}

/// Tests enum schema improvements (SEP-1330)
#[fusion::tool]
async fn test_elicitation_sep1330_enums(ctx: RequestContext) -> String {
    match ctx.elicit::<Choices>("Test enum schema improvements").await {
        Ok(choices) => format!("Enum elicitation completed: action=accept, content={choices:?}"),
        Err(unanswered) => format!("Enum elicitation completed: {unanswered}"),
    }
}

/// Tool with JSON Schema 2020-12 features
#[fusion::tool(input_schema = "as_written")]
fn json_schema_2020_12_tool(args: Person) -> String {
    let name = args.name.as_deref().unwrap_or("world");
    // The schema has the phone when the contact method is `phone`, else the email.
    let reach = match args.contact_method.as_deref() {
        Some("phone") => args.phone,
        _ => args.email.or(args.phone),
    };
    let name = match reach {
        Some(reach) => format!("{name} ({reach})"),
        None => name.to_owned(),
    };
    let address = args
        .address
        .map(|a| [a.street, a.city].into_iter().flatten().collect::<Vec<_>>());
    match address {
        Some(lines) if !lines.is_empty() => format!("Hello, {name} of {}!", lines.join(", ")),
        _ => format!("Hello, {name}!"),
    }
}

/// Requests LLM sampling from client
#[fusion::tool]
#[allow(
    deprecated,
    reason = "the 2025 revisions' sampling, which the suite tests"
)]
async fn test_sampling(args: SamplingArgs, ctx: RequestContext) -> Result<String, Unsampled> {
    let ask = SamplingMessage::user_text(args.prompt);
    let answer = ctx
        .sample(CreateMessageRequestParams::new(vec![ask], 100))
        .await?;
    let text = answer.message.content.first().and_then(|c| c.as_text());
    let text = text.map_or("No text response", |t| t.text.as_str());
    Ok(format!("LLM response: {text}"))
}

/// Tests SSE reconnection behavior
#[fusion::tool]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed"
}

const USAGE: &str = "usage: fusion-conformance --http ADDR
  --http ADDR  serve MCP Streamable HTTP at http://ADDR/mcp (ADDR like 127.0.0.1:3001)";

// `pub(crate)`: the `fusion-conformance` binary runs this file as a module.
#[tokio::main]
pub(crate) async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [flag, addr] = args.as_slice() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    if flag != "--http" {
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .without_time()
        .init();
    let server = Server::new("fusion-conformance", env!("CARGO_PKG_VERSION"))
        .tool(TestSimpleText)
        .tool(TestImageContent)
        .tool(TestAudioContent)
        .tool(TestEmbeddedResource)
        .tool(TestMultipleContentTypes)
        .tool(TestErrorHandling)
        .tool(TestToolWithLogging)
        .tool(TestToolWithProgress)
        .tool(TestElicitation)
        .tool(TestElicitationSep1034Defaults)
        .tool(TestElicitationSep1330Enums)
        .tool(JsonSchema202012Tool)
        .tool(TestSampling)
        .tool(TestReconnection)
        .tool(stateless::TestLoggingTool)
        .tool(stateless::TestStreamingElicitation)
        .tool(stateless::TestTriggerToolChange)
        .tool(stateless::TestTriggerPromptChange)
        .tool(headers::TestHeaderParam)
        .tool(tasks::Greet)
        .tool(tasks::SlowCompute)
        .tool(tasks::FailingJob)
        .tool(tasks::ProtocolErrorJob)
        .tool(tasks::ConfirmDelete)
        .tool(tasks::MultiInput)
        .tool(tasks::TestToolWithTask)
        .tasks(fusion::tasks::Tasks::default().poll_interval(Duration::from_millis(200)))
        .handler(Library::default());
    stateless::tell(server.list_changes());
    let server = input_required::tools(server);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    server.serve_http_on(listener).await?;
    Ok(())
}
