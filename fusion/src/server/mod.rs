//! Serving fusion tools over MCP: [`Server`], an rmcp `ServerHandler` that
//! advertises each tool with its flat input schema, annotations and error contract, and
//! answers every call with an envelope-carrying result.
//!
//! ```no_run
//! use fusion::server::{Exposition, Server};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! pub struct AddArgs {
//!     pub a: f64,
//!     pub b: f64,
//! }
//!
//! /// Adds two numbers.
//! #[fusion::tool]
//! #[action(read_only, idempotent)]
//! pub fn add(args: AddArgs) -> f64 {
//!     args.a + args.b
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Name and version come from *your* Cargo.toml.
//!     Server::with_info(fusion::server_info!())
//!         .tool(Add)
//!         .exposition(Exposition::Grouped)
//!         .serve_stdio()
//!         .await?;
//!     Ok(())
//! }
//! ```
//!
//! # What a client sees
//!
//! - `initialize`: the server's own name and version (from [`server_info!`](crate::server_info)
//!   or [`Server::new`]), the `tools` capability (with `listChanged`: see
//!   [`Server::list_changes`]), and the instructions if set.
//! - `tools/list`: one MCP tool per fusion tool ([`Exposition::Grouped`], the default) or per
//!   action ([`Exposition::Flat`]). Each carries its title when it has one (the tool's in
//!   grouped exposition, the action's in flat), its description, a single flat object input
//!   schema (never a top-level `oneOf`/`anyOf`/`allOf`; unless published as written, see
//!   [`Server::input_schemas`]), all four MCP annotation hints (see
//!   [titles and hints](macro@crate::tool#titles-and-hints)), and its error
//!   contract in `_meta["fusion/errors"]` ([`ERRORS_META_KEY`]):
//!   `[{"action": "get_invoice", "code": "NOT_FOUND", "severity": "error", "category":
//!   "not_found", "retryable": false}, …]`.
//!   An action declared with `#[action(output_schema)]` adds its `outputSchema` to its flat
//!   tool, and to its grouped tool when that tool has no other action (a single-function tool).
//!   A grouped tool of several actions advertises one when every action declares one: their
//!   merge, which every action's success conforms to (none when two actions define a `$defs`
//!   type of one name differently; the server logs a warning). Flat exposition advertises every
//!   action's own. A schema
//!   that is not an object schema (MCP requires `type: object`) is never advertised; the server
//!   logs a warning when the tool is registered.
//! - `tools/call`: the [`ToolResponse`](crate::ToolResponse) of the tool as an MCP result: the
//!   payload or the envelope as the first text block, warnings as further blocks, `isError` by
//!   severity, the typed flags in `_meta["fusion/error"]`. A success of an action with an output
//!   schema also carries the value as `structuredContent`. An error result never carries
//!   `structuredContent` (some clients check it against the output schema even then), unless
//!   [`Server::flags_in_structured_content`] puts the flags there.
//!
//! # The request context
//!
//! Each call's [`RequestContext`](crate::RequestContext) carries:
//!
//! - `meta()`: the request's `_meta` object as sent (rmcp clients put a `progressToken` in
//!   every request);
//! - `cancellation()`: cancelled when the client sends `notifications/cancelled` for the
//!   request or the connection shuts down. The server also drops the action's future then, so
//!   an action need not watch it; it is for work spawned outside the future;
//! - `report_progress(..)`: when the request carried a progress token, each report becomes a
//!   `notifications/progress` to the client, in order, all sent before the result;
//! - `log(..)`: a `notifications/message` to the client (see the
//!   [composition guide](composition#log-messages));
//! - `client()`: the name the client reported in `clientInfo` at `initialize` (or, in the
//!   2026-07-28 lifecycle without `initialize`, in the request's `_meta`). It is
//!   self-reported, not authenticated: a fair key for rate limits among cooperating clients,
//!   never an identity to authorize by.
//!
//! # Failure modes
//!
//! | the client sends | it receives |
//! |---|---|
//! | a call naming no tool | JSON-RPC `-32602` `Unknown tool: 'x'` (MCP specification, tools, "Error Handling"); with [`Server::unknown_tool_as_envelope`], a `VALIDATION_ERROR` envelope listing the tools with a "did you mean" |
//! | no `arguments` | the call proceeds with an empty object |
//! | arguments over [`Server::max_argument_bytes`] (4 MiB by default) or nested deeper than [`Server::max_argument_depth`] (when set) | a `VALIDATION_ERROR` envelope naming the limit; the tool is not called |
//! | arguments nested deeper than 64 levels | the tool's `<validation_error>` saying so (`#[fusion::tool]` tools) |
//! | a call over a rate limit, beyond a concurrency limit or past a timeout ([`Server::guard`]) | `RATE_LIMITED`, `SERVER_BUSY` or `TIMEOUT` (see [`crate::guard`]) |
//! | arguments the tool rejects | the tool's `<validation_error>` or routing envelope |
//! | a call whose action panics | `INTERNAL_ERROR` with an error id; the connection keeps serving |
//! | `notifications/cancelled` for a running call | no answer (MCP); the action's future is dropped |
//! | `tools/call` params that do not fit (no `name`, `arguments` not an object) | JSON-RPC `-32602` saying what is wrong |
//!
//! Over [`Server::serve_io`] and [`Server::serve_stdio`] lines the JSON-RPC parser rejects are
//! answered too, with the request's id when a shallow scan finds it: `-32700` for text that is
//! not JSON, `-32600` for JSON nested deeper than 128 levels or a line over 16 MiB (dropped
//! unread). A `tools/call` whose JSON the grammar allows but the parser refuses (arguments
//! deeper than [`MAX_READABLE_ARGUMENT_DEPTH`] levels, numbers beyond `f64`, unpaired surrogate
//! escapes) gets a `VALIDATION_ERROR` envelope instead, so a [`Server::max_argument_depth`]
//! above that depth acts as it. Notifications and responses are never answered (JSON-RPC 2.0).
//! Over HTTP the same messages get the same answers (module `http`, feature `http`).

mod arguments;
mod baseline;
mod catalog;
mod compose;
mod elicitor;
/// The composition guide: your rmcp handler's prompts and resources next to fusion's tools;
/// progress, cancellation and log messages from a tool.
#[doc = include_str!("../docs/composition.md")]
pub mod composition {}
mod handler;
#[cfg(feature = "http")]
pub mod http;
mod listen;
mod malformed;
mod output_schema;
mod redact;
mod results;
mod rounds;
mod stateless;
mod streams;
mod taken_states;
mod task_input;
mod tasks;
mod transport;
mod visible;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use catalog::{ERRORS_META_KEY, SCOPES_META_KEY, TASKS_META_KEY, TASKS_REQUIRED_META_KEY};
#[cfg(feature = "http")]
pub use http::{HttpServer, HttpService, StreamableHttpServerConfig};
pub use listen::ListChanges;
pub use malformed::MAX_READABLE_ARGUMENT_DEPTH;
pub use rmcp::model::{CacheScope, Implementation};
pub use rounds::{DEFAULT_REQUEST_STATE_TTL, REQUEST_STATE_INVALID};
#[cfg(feature = "stdio")]
pub use transport::ServeError;

use crate::auth::Principal;
use crate::guard::{GuardSpec, Guards};
use crate::portability::Provider;
use crate::runtime::registry::{Refusal, Registry};
use crate::runtime::tool::Tool;
use crate::schema::InputSchemas;
use catalog::Catalog;

/// Expands to the calling crate's [`Implementation`] (`serverInfo`): the `name` and `version`
/// of the `Cargo.toml` of the crate that writes it, read with `env!` in the caller's tokens.
///
/// ```
/// let info = fusion::server_info!();
/// assert_eq!(info.name, env!("CARGO_PKG_NAME"));
/// assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
/// let server = fusion::server::Server::with_info(info);
/// ```
#[macro_export]
macro_rules! server_info {
    () => {
        $crate::server::Implementation::new(
            ::core::env!("CARGO_PKG_NAME"),
            ::core::env!("CARGO_PKG_VERSION"),
        )
    };
}

pub use crate::guard::DEFAULT_MAX_ARGUMENT_BYTES;
pub use crate::model::exposition::Exposition;

/// An MCP server of fusion tools: a builder, then an [`rmcp::ServerHandler`].
///
/// Build it once at startup; it is cheap to clone (one `Arc`), and every clone serves the same
/// tools. Builder methods consume and return the server.
///
/// ```
/// use fusion::server::{Exposition, Server};
/// # pub struct Billing;
/// # #[fusion::tool]
/// # impl Billing {
/// #     /// Lists invoices.
/// #     #[action(read_only)]
/// #     pub fn list_invoices(&self) -> Vec<String> { Vec::new() }
/// #     /// Refunds one.
/// #     #[action(destructive)]
/// #     pub fn refund(&self) {}
/// # }
///
/// let server = Server::new("billing-server", "1.2.0")
///     .tool(Billing)
///     .exposition(Exposition::Flat);
/// let names: Vec<_> = server.tool_definitions().into_iter().map(|t| t.name).collect();
/// assert_eq!(names, ["billing_list_invoices", "billing_refund"]);
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
    /// The transport session this value serves: drawn at random for each connection
    /// (`serve_io`) and each Streamable HTTP session, and the rate limits' default key.
    session: Arc<str>,
    /// Set when this value answers `initialize`: only then does it serve a session (a
    /// stateless request is served by a fresh value that never sees a handshake, and must not
    /// get a bucket of its own per request).
    handshake: Arc<std::sync::atomic::AtomicBool>,
    /// The least severe log level the session's client asked for with `logging/setLevel`
    /// (2025 revisions); `None` until it does.
    log_level: Arc<std::sync::Mutex<Option<crate::model::context::LogLevel>>>,
    /// Set on the value serving a connection of [`Server::serve_io`] (stdio, a pipe, in
    /// process): only its calls get [`Server::local_principal`], never a Streamable HTTP
    /// session's.
    local: bool,
}

#[derive(Clone)]
struct Inner {
    info: Implementation,
    instructions: Option<String>,
    /// The tools, their gates, the limits and the baseline: the front half of every call.
    registry: Registry,
    exposition: Exposition,
    catalog: Catalog,
    unknown_tool_as_envelope: bool,
    /// The caller of every call over [`Server::serve_io`]; see [`Server::local_principal`].
    local_principal: Option<Principal>,
    /// The LLM providers every tool definition must suit; see [`Server::portable_to`].
    portable_to: Vec<Provider>,
    /// How input schemas are published, unless a tool says; see [`Server::input_schemas`].
    input_schemas: InputSchemas,
    /// The rmcp handler answering everything but tools; see [`Server::handler`].
    handler: Option<Arc<dyn compose::Delegate>>,
    /// How long, and by whom, a `tools/list` result may be cached; see [`Server::list_cache`].
    list_cache: Option<(Duration, CacheScope)>,
    /// Whether callers see only what they may call; see [`Server::hide_unauthorized_actions`].
    visible: visible::Visibility,
    /// See [`Server::insufficient_scope_challenge`]: the `resource_metadata` URL, when on.
    #[cfg(feature = "http")]
    step_up: Option<Arc<str>>,
    /// The key and lifetime of request states (MCP 2026-07-28 `input_required`).
    rounds: Arc<rounds::Rounds>,
    /// Where tasks are kept, and the ones this process runs; see [`Server::tasks`].
    tasks: Arc<tasks::TaskHost>,
    /// The clients told of list changes; see [`Server::list_changes`].
    changes: ListChanges,
}

impl Server {
    /// A server advertising `name` and `version` as its `serverInfo`, with no tools yet.
    /// Prefer [`Server::with_info`]`(fusion::server_info!())`, which reads both from your
    /// `Cargo.toml`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server::with_info(Implementation::new(name, version))
    }

    /// A server advertising `info` (name, version, and optionally title, description, icons,
    /// website) as its `serverInfo`.
    pub fn with_info(info: Implementation) -> Server {
        let mut registry = Registry::default();
        registry.set_flags_in_structured_content(false);
        Server {
            inner: Arc::new(Inner {
                info,
                instructions: None,
                registry,
                exposition: Exposition::Grouped,
                catalog: Catalog::default(),
                unknown_tool_as_envelope: false,
                local_principal: None,
                portable_to: Provider::DEFAULT.to_vec(),
                input_schemas: InputSchemas::default(),
                handler: None,
                list_cache: None,
                visible: visible::Visibility::default(),
                #[cfg(feature = "http")]
                step_up: None,
                rounds: Arc::default(),
                tasks: Arc::default(),
                changes: ListChanges::new(),
            }),
            session: new_session(),
            handshake: Arc::default(),
            log_level: Arc::default(),
            local: false,
        }
    }

    /// This server for a new transport session: same tools and guards, a session id of its
    /// own.
    fn for_new_session(&self) -> Server {
        Server {
            inner: Arc::clone(&self.inner),
            session: new_session(),
            handshake: Arc::default(),
            log_level: Arc::default(),
            local: false,
        }
    }

    /// Registers a tool. Its definition is read, its schemas compiled, its guards built and
    /// its MCP tools named and checked once, now. An action whose declared output
    /// schema is not an object schema is logged (a `tracing` warning) and advertised without
    /// one.
    ///
    /// # Panics
    /// When an MCP tool name would be served twice (two tools named `billing`; in flat
    /// exposition, tool `billing` action `list_invoices` and tool `billing_list` action
    /// `invoices`), or is not a valid tool name for LLM APIs (1 to 64 ASCII letters, digits,
    /// `_`, `-`: `^[a-zA-Z0-9_-]{1,64}$`, the Anthropic and OpenAI rule; MCP itself allows
    /// dots and 128 characters). Like axum's `Router::route` on overlapping routes: a startup bug, reported
    /// before the server serves anything. The message names both claimants. Also when an
    /// action's arguments are not a JSON object or declare a field named like the
    /// discriminator ([`crate::schema::check_definition`]), or an input schema does not compile
    /// (a `$ref` that designates nothing inside it), or a portable one breaks a rule of a
    /// provider of [`Server::portable_to`] (the message lists every rule broken and what to
    /// change; one published as written is logged instead, see [`Server::input_schemas`]), or
    /// an `x-mcp-header` annotation breaks a rule MCP clients apply (SEP-2243: an HTTP token,
    /// unique ignoring case, on a `string`, `integer` or `boolean` property reached through
    /// `properties` alone).
    #[track_caller]
    pub fn tool(self, tool: impl Tool) -> Server {
        self.register(Arc::new(tool))
    }

    /// [`Server::tool`], not generic: the definition read, its schemas compiled, its gates
    /// built, its MCP tools named and checked, once.
    #[track_caller]
    fn register(self, tool: Arc<dyn Tool>) -> Server {
        self.update(|inner| {
            inner
                .registry
                .register(tool)
                .map_err(|refusal| match refusal {
                    Refusal::Definition(tool, error) => format!("tool `{tool}`: {error}"),
                    Refusal::Settings(message) => message,
                })?;
            let index = inner.registry.tools().len() - 1;
            let registered = &inner.registry.tools()[index];
            output_schema::warn(&registered.definition);
            let schemas = registered.tool.input_schemas();
            let schemas = schemas.unwrap_or(inner.input_schemas);
            let added =
                (inner.catalog).add(index, &registered.definition, inner.exposition, schemas)?;
            catalog::check_portable(added, &inner.portable_to)
        })
    }

    /// Chooses grouped (the default) or flat exposition; see [`Exposition`].
    ///
    /// # Panics
    /// When flat names clash or are invalid, as for [`Server::tool`].
    #[track_caller]
    pub fn exposition(self, exposition: Exposition) -> Server {
        self.update(|inner| {
            inner.exposition = exposition;
            inner.catalog =
                Catalog::build(inner.registry.tools(), exposition, inner.input_schemas)?;
            catalog::check_portable(inner.catalog.entries(), &inner.portable_to)
        })
    }

    /// How the input schemas of the tools that do not say
    /// (`#[fusion::tool(input_schema = "…")]`) are published: [`InputSchemas::Portable`], the
    /// default, rewritten for the LLM APIs of [`Server::portable_to`]; or
    /// [`InputSchemas::AsWritten`], as the arguments types write them (MCP 2026-07-28,
    /// SEP-2106), which several LLM APIs refuse: the server logs which, at registration. The
    /// same schema goes to every client, whatever its MCP revision (see [`InputSchemas`]).
    ///
    /// # Panics
    /// As [`Server::tool`], for the schemas of the tools registered so far: an `x-mcp-header`
    /// annotation that breaks a rule in the new form (an `Option` field's, as written), or a
    /// portable schema a provider of [`Server::portable_to`] refuses.
    #[track_caller]
    pub fn input_schemas(self, schemas: InputSchemas) -> Server {
        self.update(|inner| {
            inner.input_schemas = schemas;
            inner.catalog = Catalog::build(inner.registry.tools(), inner.exposition, schemas)?;
            catalog::check_portable(inner.catalog.entries(), &inner.portable_to)
        })
    }

    /// The LLM providers whose tool APIs every tool definition must suit, checked at each
    /// registration ([`crate::portability`]). Default: [`Provider::DEFAULT`] (Anthropic, OpenAI,
    /// Gemini). Leave one out when no client of yours uses it (a recursive arguments type fails
    /// only Gemini), add [`Provider::OpenAiStrict`], or pass none to check nothing. Call it
    /// before [`Server::tool`]: a registration is checked against the providers set so far,
    /// so a tool that only the defaults refuse panics at its `.tool(..)` if this comes after.
    ///
    /// # Panics
    /// As [`Server::tool`], when a registered tool breaks a rule of one of `providers`.
    #[track_caller]
    pub fn portable_to(self, providers: impl IntoIterator<Item = Provider>) -> Server {
        let providers = providers.into_iter().collect();
        self.update(|inner| {
            inner.portable_to = providers;
            catalog::check_portable(inner.catalog.entries(), &inner.portable_to)
        })
    }

    /// Sets the `instructions` of the `initialize` result: how to use this server, for the
    /// model.
    pub fn instructions(self, instructions: impl Into<String>) -> Server {
        let instructions = instructions.into();
        self.set(|inner| inner.instructions = Some(instructions))
    }

    /// How long a `tools/list` result may be treated as fresh (`ttlMs`) and who may cache it
    /// (`cacheScope`: [`CacheScope::Public`], any client or intermediary for any user;
    /// [`CacheScope::Private`], the requesting user's client only), so that clients stop listing
    /// the tools before every use (MCP 2026-07-28, SEP-2549). A server whose tools do not change
    /// while it runs, and that every caller sees whole, can say public for a deployment's life
    /// (with [`Server::hide_unauthorized_actions`] on, public is answered private).
    /// Default: rmcp's, nothing cacheable. The list keeps registration order on every call and
    /// replica.
    pub fn list_cache(self, ttl: Duration, scope: CacheScope) -> Server {
        self.set(|inner| inner.list_cache = Some((ttl, scope)))
    }

    /// Answers a call naming no tool with a `VALIDATION_ERROR` envelope (message
    /// `No tool named 'x'.`, a "did you mean" recovery, the tool names as available actions)
    /// instead of the JSON-RPC `-32602` error the MCP specification prescribes. For clients
    /// that show protocol errors to the model as an opaque failure.
    pub fn unknown_tool_as_envelope(self, enabled: bool) -> Server {
        self.set(|inner| inner.unknown_tool_as_envelope = enabled)
    }

    /// Copies the typed flags into `structuredContent` on error results, next to
    /// `_meta["fusion/error"]`. Off by default: some clients validate
    /// `structuredContent` against a tool's `outputSchema` even on errors.
    pub fn flags_in_structured_content(self, enabled: bool) -> Server {
        self.set(|inner| inner.registry.set_flags_in_structured_content(enabled))
    }

    /// Adds runtime guards for `target`: a tool (`billing`, each of its actions) or one action
    /// (`billing.charge`); see [`crate::guard`]. Each option set replaces the same option the
    /// tool's attributes set for that target.
    ///
    /// # Panics
    /// When `target` names no registered tool or action (register tools first), or a rate
    /// limit allows no call: startup bugs, reported before the server serves anything.
    #[track_caller]
    pub fn guard(self, target: impl Into<String>, spec: GuardSpec) -> Server {
        let guards = self.inner.registry.guards().clone().guard(target, spec);
        self.guards(guards)
    }

    /// Replaces the whole guard configuration (per-target guards, argument limits, the
    /// rate-limit store); see [`crate::guard::Guards`].
    ///
    /// # Panics
    /// As [`Server::guard`].
    #[track_caller]
    pub fn guards(self, guards: Guards) -> Server {
        self.update(|inner| inner.registry.set_guards(guards))
    }

    /// Sets the caller of every call this server answers over a connection it serves itself:
    /// [`Server::serve_stdio`], [`Server::serve_io`], [`Server::serve_in_process`]. Those
    /// transports authenticate nobody; a local MCP client launches the server as the user who
    /// runs it, so that user is the caller, and the scope checks and rate limits see this
    /// principal ([`RequestContext::principal`](crate::RequestContext::principal)). Without it
    /// a call to an action with scopes is answered `UNAUTHORIZED` there.
    ///
    /// Calls over Streamable HTTP never get it, with or without an auth layer: there only the
    /// HTTP request's [`Principal`] (an auth layer's) counts. Default: none.
    ///
    /// ```
    /// use fusion::auth::Principal;
    /// # let server = fusion::server::Server::new("billing", "1.0.0");
    /// let user = std::env::var("USER").unwrap_or_else(|_| "local-user".to_owned());
    /// let server = server.local_principal(Principal::new(user).with_scopes(["charge"]));
    /// ```
    pub fn local_principal(self, principal: Principal) -> Server {
        self.set(|inner| inner.local_principal = Some(principal))
    }

    /// The `serverInfo` advertised.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The MCP tool definitions `tools/list` returns, in registration order (then action
    /// declaration order in flat exposition).
    pub fn tool_definitions(&self) -> Vec<rmcp::model::Tool> {
        self.inner.catalog.definitions().cloned().collect()
    }

    /// Applies a builder change that cannot fail.
    fn set(mut self, change: impl FnOnce(&mut Inner)) -> Server {
        let inner = Arc::make_mut(&mut self.inner);
        change(inner);
        inner.visible.forget();
        self
    }

    /// Applies a builder change that can refuse the configuration: a startup bug, reported
    /// as a panic.
    #[track_caller]
    fn update(mut self, change: impl FnOnce(&mut Inner) -> Result<(), String>) -> Server {
        let inner = Arc::make_mut(&mut self.inner);
        if let Err(message) = change(inner) {
            panic!("fusion::server::Server: {message}");
        }
        inner.visible.forget();
        self
    }
}

/// A transport session id: 128 random bits, hex. Random rather than counted, so the sessions
/// of server replicas sharing a rate-limit store never collide.
fn new_session() -> Arc<str> {
    Arc::from(format!("{:032x}", fastrand::u128(..)))
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("Server")
            .field("name", &inner.info.name)
            .field("version", &inner.info.version)
            .field("exposition", &inner.exposition)
            .field("tools", &inner.catalog.names())
            .field("unknown_tool_as_envelope", &inner.unknown_tool_as_envelope)
            .field(
                "flags_in_structured_content",
                &(inner.registry.flags_in_structured_content() == Some(true)),
            )
            .field("guards", inner.registry.guards())
            .field("local_principal", &inner.local_principal)
            .finish_non_exhaustive()
    }
}
