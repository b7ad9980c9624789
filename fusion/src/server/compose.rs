//! Composition: fusion tools served next to an rmcp [`ServerHandler`] of your own (prompts,
//! resources, completions, logging), behind one `initialize`. [`Server::handler`] takes the
//! handler; [`Delegate`] erases its type, so `Server` stays one type whatever handler it holds.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CustomRequest, CustomResult, ErrorCode as RpcCode, ErrorData, InitializeRequestParams,
    InitializeResult, ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};

/// The context of a client's request, and of its notification, in the delegated methods (the
/// names the table of `for_each_delegated` uses; `handler.rs` imports them too).
pub(super) type Ctx = RmcpContext<RoleServer>;
pub(super) type Note = rmcp::service::NotificationContext<RoleServer>;

use super::Server;
use crate::model::context::BoxFuture;

/// Lists the `ServerHandler` methods a composed server hands to the user's handler unchanged,
/// as `fn name(arguments) -> output;`, and passes the list to `$callback`: once to declare
/// [`Delegate`] and implement it, once (in `handler.rs`) to forward `Server`'s methods. fusion
/// answers the rest itself: `tools/list`, `tools/call`, `initialize` (capabilities merged),
/// `server/discover` (from the merged capabilities) and requests of unknown methods (after
/// checking they are not malformed standard requests).
macro_rules! for_each_delegated {
    ($callback:ident) => {
        $callback! {
            fn ping(context: Ctx) -> Result<(), ErrorData>;
            fn complete(request: rmcp::model::CompleteRequestParams, context: Ctx)
                -> Result<rmcp::model::CompleteResult, ErrorData>;
            fn set_level(request: rmcp::model::SetLevelRequestParams, context: Ctx)
                -> Result<(), ErrorData>;
            fn get_prompt(request: rmcp::model::GetPromptRequestParams, context: Ctx)
                -> Result<rmcp::model::GetPromptResponse, ErrorData>;
            fn list_prompts(request: Option<rmcp::model::PaginatedRequestParams>, context: Ctx)
                -> Result<rmcp::model::ListPromptsResult, ErrorData>;
            fn list_resources(request: Option<rmcp::model::PaginatedRequestParams>, context: Ctx)
                -> Result<rmcp::model::ListResourcesResult, ErrorData>;
            fn list_resource_templates(
                request: Option<rmcp::model::PaginatedRequestParams>,
                context: Ctx
            ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData>;
            fn read_resource(request: rmcp::model::ReadResourceRequestParams, context: Ctx)
                -> Result<rmcp::model::ReadResourceResponse, ErrorData>;
            fn listen(context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData>;
            fn subscribe(request: rmcp::model::SubscribeRequestParams, context: Ctx)
                -> Result<(), ErrorData>;
            fn unsubscribe(request: rmcp::model::UnsubscribeRequestParams, context: Ctx)
                -> Result<(), ErrorData>;
            fn get_task(request: rmcp::model::GetTaskParams, context: Ctx)
                -> Result<rmcp::model::GetTaskResult, ErrorData>;
            fn update_task(request: rmcp::model::UpdateTaskParams, context: Ctx)
                -> Result<(), ErrorData>;
            fn cancel_task(request: rmcp::model::CancelTaskParams, context: Ctx)
                -> Result<(), ErrorData>;
            fn list_skills(request: Option<rmcp::model::PaginatedRequestParams>, context: Ctx)
                -> Result<rmcp::model::ListSkillsResult, ErrorData>;
            fn get_skill(request: rmcp::model::GetSkillRequestParams, context: Ctx)
                -> Result<rmcp::model::GetSkillResult, ErrorData>;
            fn read_resource_directory(
                request: rmcp::model::ReadResourceDirectoryRequestParams,
                context: Ctx
            ) -> Result<rmcp::model::ReadResourceDirectoryResult, ErrorData>;
            fn on_cancelled(notification: rmcp::model::CancelledNotificationParam, context: Note)
                -> ();
            fn on_progress(notification: rmcp::model::ProgressNotificationParam, context: Note)
                -> ();
            fn on_initialized(context: Note) -> ();
            fn on_roots_list_changed(context: Note) -> ();
            fn on_custom_notification(notification: rmcp::model::CustomNotification, context: Note)
                -> ();
        }
    };
}
pub(super) use for_each_delegated;

/// Declares [`Delegate`] with one boxed-future method per delegated `ServerHandler` method, and
/// implements it for every `ServerHandler`.
macro_rules! declare_delegate {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty;)*) => {
        /// An rmcp [`ServerHandler`] with its type erased: `ServerHandler`'s methods return
        /// `impl Future`, so it cannot be a trait object; these return boxed futures.
        #[allow(deprecated, reason = "`set_level` takes rmcp's deprecated logging params")]
        pub(super) trait Delegate: Send + Sync + 'static {
            /// The handler's `get_info`.
            fn info(&self) -> ServerConfig;
            /// The handler's `supported_protocol_versions`.
            fn protocol_versions(&self) -> Cow<'static, [ProtocolVersion]>;
            /// The handler's `accepted_subscription_filter`.
            fn subscription_filter(
                &self,
                requested: &SubscriptionFilter,
            ) -> Option<SubscriptionFilter>;
            /// The handler's `initialize`.
            fn initialize(
                &self,
                request: InitializeRequestParams,
                context: RmcpContext<RoleServer>,
            ) -> BoxFuture<'_, Result<InitializeResult, ErrorData>>;
            /// The handler's `on_custom_request`.
            fn custom_request(
                &self,
                request: CustomRequest,
                context: RmcpContext<RoleServer>,
            ) -> BoxFuture<'_, Result<CustomResult, ErrorData>>;
            $(
                /// The handler's method of the same name.
                fn $name(&self, $($arg: $ty),*) -> BoxFuture<'_, $out>;
            )*
        }

        #[allow(
            deprecated,
            reason = "MCP logging and `resources/subscribe` are deprecated in rmcp; a handler may \
                      still serve them"
        )]
        impl<H: ServerHandler> Delegate for H {
            fn info(&self) -> ServerConfig {
                ServerHandler::get_info(self)
            }
            fn protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
                ServerHandler::supported_protocol_versions(self)
            }
            fn subscription_filter(
                &self,
                requested: &SubscriptionFilter,
            ) -> Option<SubscriptionFilter> {
                ServerHandler::accepted_subscription_filter(self, requested)
            }
            fn initialize(
                &self,
                request: InitializeRequestParams,
                context: RmcpContext<RoleServer>,
            ) -> BoxFuture<'_, Result<InitializeResult, ErrorData>> {
                Box::pin(ServerHandler::initialize(self, request, context))
            }
            fn custom_request(
                &self,
                request: CustomRequest,
                context: RmcpContext<RoleServer>,
            ) -> BoxFuture<'_, Result<CustomResult, ErrorData>> {
                Box::pin(ServerHandler::on_custom_request(self, request, context))
            }
            $(
                fn $name(&self, $($arg: $ty),*) -> BoxFuture<'_, $out> {
                    Box::pin(ServerHandler::$name(self, $($arg),*))
                }
            )*
        }
    };
}
for_each_delegated!(declare_delegate);

/// Implements `Server`'s delegated `ServerHandler` methods (inside its `impl ServerHandler`):
/// each awaits the user's handler's method of the same name.
macro_rules! forward_delegated {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty;)*) => {
        $(
            #[allow(deprecated, reason = "the handler may serve deprecated MCP methods")]
            async fn $name(&self, $($arg: $ty),*) -> $out {
                self.delegate().$name($($arg),*).await
            }
        )*
    };
}
pub(super) use forward_delegated;

/// The handler of a server given none: rmcp's defaults, which advertise nothing and answer
/// every method it is asked `-32601` (method not found).
struct NoHandler;

impl ServerHandler for NoHandler {}

impl Server {
    /// Serves `handler`, an rmcp [`ServerHandler`] of yours, next to this server's tools: one
    /// MCP server whose tools are fusion's and whose prompts, resources, completions, logging
    /// and subscriptions are `handler`'s. Write `handler` as with rmcp alone (its
    /// `#[prompt_router]`/`#[prompt_handler]` macros, `list_resources`, `read_resource`, …);
    /// fusion delegates to it, you forward nothing by hand.
    ///
    /// | request | answered by |
    /// |---|---|
    /// | `tools/list`, `tools/call` | fusion: envelopes, validation, guards; `handler`'s tools are never served |
    /// | `initialize` | `handler`'s `initialize` (its side effects, its protocol version), with fusion's `serverInfo`, the capabilities of both and both instructions |
    /// | `server/discover` | fusion, from the same merged capabilities |
    /// | a request of an unknown method | `handler`'s `on_custom_request`, unless it is a standard method with malformed params (fusion says what is wrong) |
    /// | everything else: `prompts/*`, `resources/*`, `completion/complete`, `logging/setLevel`, `ping`, `tasks/*`, `skills/*`, notifications | `handler` |
    ///
    /// Capabilities: `handler`'s `get_info().capabilities`, with `tools` set to fusion's.
    /// Instructions: this server's ([`Server::instructions`]), then a blank line, then
    /// `handler`'s; either alone when the other has none. One `handler` value serves every
    /// connection and HTTP session (keep per-session state keyed by the request's peer). A
    /// second call replaces the first handler.
    ///
    /// ```
    /// use rmcp::model::{ListResourcesResult, PaginatedRequestParams, Resource};
    /// use rmcp::model::{ServerCapabilities, ServerConfig};
    /// use rmcp::service::{RequestContext, RoleServer};
    /// use rmcp::{ErrorData, ServerHandler};
    ///
    /// struct Docs;
    ///
    /// impl ServerHandler for Docs {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    ///     }
    ///
    ///     async fn list_resources(
    ///         &self,
    ///         _request: Option<PaginatedRequestParams>,
    ///         _context: RequestContext<RoleServer>,
    ///     ) -> Result<ListResourcesResult, ErrorData> {
    ///         let readme = Resource::new("docs://readme", "readme");
    ///         Ok(ListResourcesResult::with_all_items(vec![readme]))
    ///     }
    /// }
    ///
    /// let server = fusion::server::Server::new("billing", "1.0.0").handler(Docs);
    /// let capabilities = rmcp::ServerHandler::get_info(&server).capabilities;
    /// assert!(capabilities.tools.is_some() && capabilities.resources.is_some());
    /// ```
    pub fn handler(mut self, handler: impl ServerHandler) -> Server {
        if handler.get_info().capabilities.tools.is_some() {
            tracing::warn!(
                target: "fusion::server",
                "the handler given to `Server::handler` advertises tools; fusion answers \
                 `tools/list` and `tools/call` itself, so the handler's tools are not served \
                 (register them with `Server::tool`)"
            );
        }
        Arc::make_mut(&mut self.inner).handler = Some(Arc::new(handler));
        self
    }

    /// The handler every delegated method goes to: the user's, or rmcp's defaults.
    pub(super) fn delegate(&self) -> &dyn Delegate {
        match &self.inner.handler {
            Some(handler) => &**handler,
            None => &NoHandler,
        }
    }

    /// The `initialize` result and `server/discover` information: the handler's, with this
    /// server's `serverInfo`, the `tools` capability and the instructions of both.
    pub(super) fn composed_info(&self) -> ServerConfig {
        let mut config = self.delegate().info();
        config.capabilities.tools = ServerCapabilities::builder().enable_tools().build().tools;
        config.server_info = self.inner.info.clone();
        config.instructions = match (&self.inner.instructions, config.instructions.take()) {
            (Some(ours), Some(theirs)) => Some(format!("{ours}\n\n{theirs}")),
            (Some(ours), None) => Some(ours.clone()),
            (None, theirs) => theirs,
        };
        config
    }

    /// `initialize`: the handler's (its side effects and protocol version), answered with the
    /// merged capabilities, `serverInfo` and instructions.
    pub(super) async fn composed_initialize(
        &self,
        request: InitializeRequestParams,
        context: RmcpContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // A handler that overrides `initialize` may not record the client's info; fusion's
        // request context reads it (`RequestContext::client`).
        context.peer.set_peer_info(request.clone());
        let mut result = self.delegate().initialize(request, context).await?;
        let merged = self.composed_info();
        result.capabilities = merged.capabilities;
        result.server_info = merged.server_info;
        result.instructions = merged.instructions;
        Ok(result)
    }

    /// A request rmcp could not match to a standard method: explained when it is a standard
    /// method whose params do not fit, else the handler's (`-32601` without one).
    pub(super) async fn composed_custom_request(
        &self,
        request: CustomRequest,
        context: RmcpContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let explained =
            super::malformed::explain_custom_request(&request.method, request.params.as_ref());
        match &self.inner.handler {
            Some(handler) if explained.code == RpcCode::METHOD_NOT_FOUND => {
                handler.custom_request(request, context).await
            }
            _ => Err(explained),
        }
    }

    /// The handler's protocol versions (rmcp's default: every version it knows).
    pub(super) fn composed_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.delegate().protocol_versions()
    }

    /// The handler's answer to `subscriptions/listen` filters.
    pub(super) fn composed_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.delegate().subscription_filter(requested)
    }
}
