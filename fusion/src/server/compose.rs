//! Composition: fusion tools served next to an rmcp [`ServerHandler`] of your own (prompts,
//! resources, completions, logging), behind one `initialize`. [`Server::handler`] takes the
//! handler; [`Delegate`] erases its type, so `Server` stays one type whatever handler it holds.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CustomRequest, CustomResult, ErrorData, InitializeRequestParams, InitializeResult,
    ProtocolVersion, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};

/// The context of a client's request, and of its notification, in the delegated methods (the
/// names the table of `for_each_delegated` uses; `handler.rs` imports them too).
pub(super) type Ctx = RmcpContext<RoleServer>;
pub(super) type Note = rmcp::service::NotificationContext<RoleServer>;

use super::Server;
use crate::model::context::BoxFuture;

/// Lists the `ServerHandler` methods a composed server asks the user's handler, as
/// `composed|delegated sync|async fn name(arguments) -> output;`, and passes the list to
/// `$callback`: once to declare [`Delegate`] and implement it, once (in `handler.rs`) to
/// forward `Server`'s `delegated` methods unchanged. fusion answers the `composed` ones from
/// the handler's answer (capabilities merged, malformed standard requests explained), and
/// `tools/list` and `tools/call` alone.
macro_rules! for_each_delegated {
    ($callback:ident) => {
        $callback! {
            composed sync fn get_info() -> ServerConfig;
            composed async fn initialize(request: InitializeRequestParams, context: Ctx)
                -> Result<InitializeResult, ErrorData>;
            composed async fn on_custom_request(request: CustomRequest, context: Ctx)
                -> Result<CustomResult, ErrorData>;
            delegated sync fn supported_protocol_versions() -> Cow<'static, [ProtocolVersion]>;
            composed sync fn accepted_subscription_filter(requested: &SubscriptionFilter)
                -> Option<SubscriptionFilter>;
            delegated async fn ping(context: Ctx) -> Result<(), ErrorData>;
            delegated async fn complete(request: rmcp::model::CompleteRequestParams, context: Ctx)
                -> Result<rmcp::model::CompleteResult, ErrorData>;
            composed async fn set_level(request: rmcp::model::SetLevelRequestParams, context: Ctx)
                -> Result<(), ErrorData>;
            delegated async fn get_prompt(request: rmcp::model::GetPromptRequestParams, context: Ctx)
                -> Result<rmcp::model::GetPromptResponse, ErrorData>;
            delegated async fn list_prompts(
                request: Option<rmcp::model::PaginatedRequestParams>,
                context: Ctx
            ) -> Result<rmcp::model::ListPromptsResult, ErrorData>;
            delegated async fn list_resources(
                request: Option<rmcp::model::PaginatedRequestParams>,
                context: Ctx
            ) -> Result<rmcp::model::ListResourcesResult, ErrorData>;
            delegated async fn list_resource_templates(
                request: Option<rmcp::model::PaginatedRequestParams>,
                context: Ctx
            ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData>;
            delegated async fn read_resource(
                request: rmcp::model::ReadResourceRequestParams,
                context: Ctx
            ) -> Result<rmcp::model::ReadResourceResponse, ErrorData>;
            composed async fn listen(context: rmcp::service::SubscriptionContext)
                -> Result<(), ErrorData>;
            delegated async fn subscribe(request: rmcp::model::SubscribeRequestParams, context: Ctx)
                -> Result<(), ErrorData>;
            delegated async fn unsubscribe(
                request: rmcp::model::UnsubscribeRequestParams,
                context: Ctx
            ) -> Result<(), ErrorData>;
            composed async fn get_task(request: rmcp::model::GetTaskParams, context: Ctx)
                -> Result<rmcp::model::GetTaskResult, ErrorData>;
            composed async fn update_task(request: rmcp::model::UpdateTaskParams, context: Ctx)
                -> Result<(), ErrorData>;
            composed async fn cancel_task(request: rmcp::model::CancelTaskParams, context: Ctx)
                -> Result<(), ErrorData>;
            delegated async fn list_skills(
                request: Option<rmcp::model::PaginatedRequestParams>,
                context: Ctx
            ) -> Result<rmcp::model::ListSkillsResult, ErrorData>;
            delegated async fn get_skill(request: rmcp::model::GetSkillRequestParams, context: Ctx)
                -> Result<rmcp::model::GetSkillResult, ErrorData>;
            delegated async fn read_resource_directory(
                request: rmcp::model::ReadResourceDirectoryRequestParams,
                context: Ctx
            ) -> Result<rmcp::model::ReadResourceDirectoryResult, ErrorData>;
            delegated async fn on_cancelled(
                notification: rmcp::model::CancelledNotificationParam,
                context: Note
            ) -> ();
            delegated async fn on_progress(
                notification: rmcp::model::ProgressNotificationParam,
                context: Note
            ) -> ();
            delegated async fn on_initialized(context: Note) -> ();
            delegated async fn on_roots_list_changed(context: Note) -> ();
            delegated async fn on_custom_notification(
                notification: rmcp::model::CustomNotification,
                context: Note
            ) -> ();
        }
    };
}
pub(super) use for_each_delegated;

/// One method of the table of `for_each_delegated`: its declaration in [`Delegate`]
/// (`decl`: an `async` one returns a boxed future), its implementation for every
/// `ServerHandler` (`impl`), or `Server`'s forwarding of a `delegated` one (`forward`).
macro_rules! delegate_method {
    (decl async fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(&self, $($arg: $ty),*) -> BoxFuture<'_, $out>;
    };
    (decl sync fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(&self, $($arg: $ty),*) -> $out;
    };
    (impl async fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(&self, $($arg: $ty),*) -> BoxFuture<'_, $out> {
            Box::pin(ServerHandler::$name(self, $($arg),*))
        }
    };
    (impl sync fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(&self, $($arg: $ty),*) -> $out {
            ServerHandler::$name(self, $($arg),*)
        }
    };
    (forward composed $($method:tt)*) => {};
    (forward delegated async fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        #[allow(deprecated, reason = "the handler may serve deprecated MCP methods")]
        async fn $name(&self, $($arg: $ty),*) -> $out {
            self.delegate().$name($($arg),*).await
        }
    };
    (forward delegated sync fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty) => {
        fn $name(&self, $($arg: $ty),*) -> $out {
            self.delegate().$name($($arg),*)
        }
    };
}
pub(super) use delegate_method;

/// Declares [`Delegate`] with the methods of the table, and implements it for every
/// `ServerHandler`.
macro_rules! declare_delegate {
    ($($how:ident $mode:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty;)*) => {
        /// An rmcp [`ServerHandler`] with its type erased: `ServerHandler`'s methods return
        /// `impl Future`, so it cannot be a trait object; these return boxed futures.
        #[allow(deprecated, reason = "`set_level` takes rmcp's deprecated logging params")]
        pub(super) trait Delegate: Send + Sync + 'static {
            $(delegate_method!(decl $mode fn $name($($arg: $ty),*) -> $out);)*
        }

        #[allow(
            deprecated,
            reason = "MCP logging and `resources/subscribe` are deprecated in rmcp; a handler may \
                      still serve them"
        )]
        impl<H: ServerHandler> Delegate for H {
            $(delegate_method!(impl $mode fn $name($($arg: $ty),*) -> $out);)*
        }
    };
}
for_each_delegated!(declare_delegate);

/// Implements `Server`'s `delegated` `ServerHandler` methods (inside its `impl ServerHandler`):
/// each calls the user's handler's method of the same name.
macro_rules! forward_delegated {
    ($($how:ident $mode:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $out:ty;)*) => {
        $($crate::server::compose::delegate_method!(forward $how $mode fn $name($($arg: $ty),*) -> $out);)*
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
    /// | `subscriptions/listen` (MCP 2026-07-28) | fusion's list changes ([`Server::list_changes`]), alongside `handler`'s `listen` |
    /// | a method MCP 2026-07-28 removed (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) asked in a request of that revision | fusion: `-32601` |
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
        if ServerHandler::get_info(&handler)
            .capabilities
            .tools
            .is_some()
        {
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
}
