//! `Server::handler`: an rmcp `ServerHandler` of the user's served next to fusion's tools, seen
//! by a real rmcp client over an in-process duplex transport.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fusion::server::Server;
use rmcp::model::{
    ClientRequest, CustomRequest, CustomResult, ErrorCode as RpcCode, InitializeRequestParams,
    InitializeResult, ServerCapabilities, ServerConfig, ServerResult,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceError};
use serde_json::json;

#[path = "support/within.rs"]
mod within;
use within::within;

/// Says hello.
#[fusion::tool]
#[action(read_only, idempotent)]
fn hello() -> String {
    "hello".to_owned()
}

/// A handler with completions, its own instructions, a custom method, and an `initialize` that
/// counts handshakes.
#[derive(Clone, Default)]
struct Extras {
    handshakes: Arc<AtomicUsize>,
}

impl ServerHandler for Extras {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_completions().build())
            .with_instructions("Extras: ask for completions.")
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.handshakes.fetch_add(1, Ordering::Relaxed);
        self.negotiate_initialize(&request)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Ok(CustomResult::new(json!({"echo": request.method})))
    }
}

#[tokio::test]
async fn initialize_runs_the_handlers_and_merges_capabilities_and_instructions() {
    let extras = Extras::default();
    let server = Server::new("composed", "1.0.0")
        .instructions("Say hello with the hello tool.")
        .tool(Hello)
        .handler(extras.clone());
    let client = within(server.serve_in_process(())).await.unwrap();
    assert_eq!(extras.handshakes.load(Ordering::Relaxed), 1);
    let info = client.peer_info().expect("the initialize result");
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(
        (server_info.name.as_str(), server_info.version.as_str()),
        ("composed", "1.0.0")
    );
    assert!(info.capabilities.tools.is_some());
    assert!(info.capabilities.completions.is_some());
    assert!(info.capabilities.prompts.is_none());
    assert_eq!(
        info.instructions.as_deref(),
        Some("Say hello with the hello tool.\n\nExtras: ask for completions.")
    );
    let tools = within(client.list_all_tools()).await.unwrap();
    assert_eq!(tools[0].name, "hello");
    client.cancel().await.unwrap();
}

#[test]
fn instructions_of_one_side_alone_are_kept_as_they_are() {
    let server = Server::new("composed", "1.0.0")
        .tool(Hello)
        .handler(Extras::default());
    let instructions = rmcp::ServerHandler::get_info(&server).instructions;
    assert_eq!(
        instructions.as_deref(),
        Some("Extras: ask for completions.")
    );
    let server = Server::new("plain", "1.0.0").tool(Hello);
    assert_eq!(rmcp::ServerHandler::get_info(&server).instructions, None);
}

#[tokio::test]
async fn what_the_handler_does_not_serve_is_method_not_found() {
    let server = Server::new("composed", "1.0.0")
        .tool(Hello)
        .handler(Extras::default());
    let client = within(server.serve_in_process(())).await.unwrap();
    let prompts = within(client.list_all_prompts()).await;
    let Err(ServiceError::McpError(error)) = prompts else {
        panic!("an error: {prompts:?}")
    };
    assert_eq!(error.code, RpcCode::METHOD_NOT_FOUND);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unknown_methods_go_to_the_handler_and_malformed_standard_ones_are_explained() {
    let server = Server::new("composed", "1.0.0")
        .tool(Hello)
        .handler(Extras::default());
    let client = within(server.serve_in_process(())).await.unwrap();
    let custom = ClientRequest::CustomRequest(CustomRequest::new("extras/echo", None));
    let answer = within(client.send_request(custom)).await.unwrap();
    let ServerResult::CustomResult(result) = answer else {
        panic!("a custom result: {answer:?}")
    };
    assert_eq!(result.0, json!({"echo": "extras/echo"}));

    // `tools/call` whose params do not fit: fusion's explanation, not the handler's echo.
    let malformed = ClientRequest::CustomRequest(CustomRequest::new(
        "tools/call",
        Some(json!({"name": "hello", "arguments": [1]})),
    ));
    let refused = within(client.send_request(malformed)).await;
    let Err(ServiceError::McpError(error)) = refused else {
        panic!("an error: {refused:?}")
    };
    assert_eq!(error.code, RpcCode::INVALID_PARAMS);
    client.cancel().await.unwrap();
}
