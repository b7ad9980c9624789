//! One MCP server with all three kinds of capability: a fusion tool (`notes`: envelopes,
//! validation), an rmcp prompt (`summarize`, written with rmcp's `#[prompt_router]`) and
//! resources (each note as `note://TITLE`), served together with `Server::handler`.
//!
//! ```text
//! cargo run -p examples --example composed                          # MCP over stdio
//! cargo run -p examples --example composed -- --http 127.0.0.1:8080 # Streamable HTTP at /mcp
//! ```
//!
//! fusion answers `tools/list` and `tools/call`; the rmcp handler (`Library`) answers
//! `prompts/*` and `resources/*`; `initialize` advertises the capabilities of both. The tool
//! and the handler share the notes through an `Arc`. The same program is the
//! `fusion-composed` binary of this package (launched by the Python and TypeScript client
//! tests in `clients/`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use fusion::server::Server;
use fusion::{LogLevel, RequestContext};
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    GetPromptResult, ListResourcesResult, PaginatedRequestParams, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, prompt, prompt_handler, prompt_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use validator::Validate;

/// The notes, by title: what the tool writes and the resources read.
type Store = Arc<Mutex<BTreeMap<String, String>>>;

/// The fusion tool: writes and lists notes.
struct Notes {
    store: Store,
}

#[derive(Deserialize, JsonSchema, Validate)]
struct AddNote {
    /// The note's title, 1 to 40 characters: its resource is `note://TITLE`.
    #[validate(length(min = 1, max = 40))]
    title: String,
    /// The note's text.
    text: String,
}

/// Short notes, by title. Read one as the resource `note://TITLE`; ask for a summary with the
/// `summarize` prompt.
#[fusion::tool]
impl Notes {
    /// Adds a note, or replaces the note of the same title.
    #[action(idempotent)]
    fn add(&self, args: AddNote) -> String {
        let uri = format!("note://{}", args.title);
        lock(&self.store).insert(args.title, args.text);
        format!("Saved as {uri}.")
    }

    /// Lists the titles of the notes, in alphabetical order.
    #[action(read_only, idempotent)]
    fn list(&self) -> Vec<String> {
        lock(&self.store).keys().cloned().collect()
    }

    /// Counts the words of every note, reporting progress per note and logging the total.
    #[action(read_only, idempotent)]
    async fn count_words(&self, ctx: RequestContext) -> usize {
        let notes: Vec<String> = lock(&self.store).values().cloned().collect();
        let total_notes = notes.len() as f64;
        let mut words = 0;
        for (done, text) in notes.iter().enumerate() {
            words += text.split_whitespace().count();
            ctx.report_progress((done + 1) as f64, Some(total_notes), Some("counting"));
            tokio::task::yield_now().await;
        }
        ctx.log(
            LogLevel::Info,
            json!({"notes": notes.len(), "words": words}),
        );
        words
    }
}

/// The rmcp handler: the `summarize` prompt and the notes as resources.
#[derive(Clone)]
struct Library {
    store: Store,
    prompt_router: PromptRouter<Library>,
}

#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The title of the note to summarize.
    title: String,
}

#[prompt_router]
impl Library {
    fn new(store: Store) -> Library {
        Library {
            store,
            prompt_router: Library::prompt_router(),
        }
    }

    /// Asks the model for a one-sentence summary of a note.
    #[prompt(name = "summarize")]
    async fn summarize(
        &self,
        Parameters(args): Parameters<SummarizeArgs>,
    ) -> Result<GetPromptResult, ErrorData> {
        let Some(text) = lock(&self.store).get(&args.title).cloned() else {
            return Err(ErrorData::invalid_params(
                format!("No note titled '{}'.", args.title),
                None,
            ));
        };
        let ask = format!("Summarize this note in one sentence:\n\n{text}");
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            ask,
        )]))
    }
}

#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        // `notes.count_words` sends log messages (`ctx.log`): declare them (MCP 2025-06-18,
        // "Logging"; rmcp marks the capability for removal in a later revision).
        #[allow(
            deprecated,
            reason = "the 2025-06-18 logging capability clients check for"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_instructions("Each note is also a resource, note://TITLE.")
    }

    /// `logging/setLevel`: accepted. This example sends every level it logs; a server that
    /// logs a lot keeps the level and skips what is below it.
    #[allow(
        deprecated,
        reason = "MCP logging (2025-06-18) is what clients speak today; rmcp marks it for a later revision"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = lock(&self.store)
            .keys()
            .map(|title| {
                Resource::new(format!("note://{title}"), title.clone()).with_mime_type("text/plain")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = request
            .uri
            .strip_prefix("note://")
            .and_then(|title| lock(&self.store).get(title).cloned());
        match text {
            Some(text) => {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
            }
            None => Err(ErrorData::resource_not_found(
                format!("No resource {}.", request.uri),
                None,
            )),
        }
    }
}

fn lock(store: &Store) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
    // A panic while holding the lock leaves the map itself intact.
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The composed server: the `notes` tool and the `Library` handler over one store, holding a
/// first note.
fn server() -> Server {
    let store = Store::default();
    lock(&store).insert(
        "welcome".to_owned(),
        "fusion serves the tools, rmcp the prompts and resources.".to_owned(),
    );
    // Named like the binary that serves it (the example's package is `examples`).
    Server::new("fusion-composed", env!("CARGO_PKG_VERSION"))
        .instructions("Keep notes with the notes tool.")
        .tool(Notes {
            store: Arc::clone(&store),
        })
        .handler(Library::new(store))
}

const USAGE: &str = "usage: composed [--http ADDR]
  (no flags)   serve MCP over stdio
  --http ADDR  serve MCP Streamable HTTP at http://ADDR/mcp (ADDR like 127.0.0.1:8080)";

// `pub(crate)`: the `fusion-composed` binary (`bin/fusion-composed.rs`) runs this file as a
// module.
#[tokio::main]
pub(crate) async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = match args.as_slice() {
        [] => None,
        [flag, addr] if flag == "--http" => Some(addr.clone()),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .without_time()
        .init();
    match http {
        None => {
            server().serve_stdio().await?;
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            server().serve_http_on(listener).await?;
        }
    }
    Ok(())
}
