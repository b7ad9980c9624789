//! `Server` as an rmcp `ServerHandler`: server info, `tools/list`, and `tools/call`: the
//! request context, progress forwarding and cancellation around the call path.

use std::borrow::Cow;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CustomRequest, CustomResult, ErrorCode as RpcCode, ErrorData, GetTaskParams, GetTaskResult,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig,
    SubscriptionFilter, TASKS_EXTENSION_ID, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext as RmcpContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::auth::Principal;
use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::suggest::did_you_mean;
use crate::model::context::{LogLevel, LogSink, ProgressReporter, RequestContext};
use crate::model::exposition::Exposition;
use crate::model::response::ToolResponse;

use super::catalog::Catalog;
use super::compose::{self, Ctx, Note, forward_delegated};
use super::rounds::Stopped;
use super::{Server, elicitor, malformed, stateless};

impl rmcp::ServerHandler for Server {
    /// The handler's, with this server's `serverInfo`, the `tools` capability and the
    /// instructions of both (also the `server/discover` information).
    fn get_info(&self) -> ServerConfig {
        let mut config = self.delegate().get_info();
        // `listChanged`: `Server::list_changes` tells clients.
        config.capabilities.tools = (ServerCapabilities::builder().enable_tools())
            .enable_tool_list_changed()
            .build()
            .tools;
        if self.runs_tasks() {
            (config.capabilities.extensions.get_or_insert_default())
                .insert(TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        config.server_info = self.inner.info.clone();
        config.instructions = match (&self.inner.instructions, config.instructions.take()) {
            (Some(ours), Some(theirs)) => Some(format!("{ours}\n\n{theirs}")),
            (Some(ours), None) => Some(ours.clone()),
            (None, theirs) => theirs,
        };
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RmcpContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let view = self.view_of(&context);
        let catalog = view.as_ref().map_or(&self.inner.catalog, |v| &v.catalog);
        // One page: a server has tens of tools, not thousands.
        let mut list = ListToolsResult::with_all_items(catalog.definitions().cloned().collect());
        if let Some((ttl, scope)) = self.inner.list_cache {
            list.ttl_ms = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
            // The lists differ per caller: no shared cache may hand one caller's to another.
            list.cache_scope = Some(match self.inner.visible.enabled() {
                true => CacheScope::Private,
                false => scope,
            });
        }
        Ok(list)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.inner.catalog.get(name).map(|e| e.definition.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RmcpContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: rmcp holds this future inline in the task it spawns per request, and copied
        // fusion's larger one there whole.
        Box::pin(self.call(request, context)).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RmcpContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        // Remember that this value now serves a session.
        self.handshake.store(true, Ordering::Relaxed);
        // A handler that overrides `initialize` may not record the client's info; fusion's
        // request context reads it (`RequestContext::client`).
        context.peer.set_peer_info(request.clone());
        self.inner.changes.add_session(context.peer.clone());
        // The handler's (its side effects and protocol version), with the merged capabilities,
        // `serverInfo` and instructions.
        let mut result = self.delegate().initialize(request, context).await?;
        let merged = self.get_info();
        result.capabilities = merged.capabilities;
        result.server_info = merged.server_info;
        result.instructions = merged.instructions;
        Ok(result)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RmcpContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // rmcp parses requests as an untagged union: a standard request whose params do not
        // fit lands here as a "custom" request. Say what is wrong with the params instead of
        // claiming the method does not exist; a method of the handler's own goes to it
        // (`-32601` without a handler). A method MCP 2026-07-28 removed, asked in a request of
        // that revision, does not exist.
        if let Some(removed) = stateless::removed(&request.method, &context) {
            return Err(removed);
        }
        let explained = malformed::explain_custom_request(&request.method, request.params.as_ref());
        match &self.inner.handler {
            Some(handler) if explained.code == RpcCode::METHOD_NOT_FOUND => {
                handler.on_custom_request(request, context).await
            }
            _ => Err(explained),
        }
    }

    #[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(removed) = stateless::removed("logging/setLevel", &context) {
            return Err(removed);
        }
        let level = stateless::set_level(&request);
        // The level holds once the handler (which advertises logging) accepted it.
        self.delegate().set_level(request, context).await?;
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(level);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.listen_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_stream(context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        mut context: RmcpContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        match self.runs_tasks() {
            true => self.get_task_of(&request.task_id, &mut context).await,
            false => self.delegate().get_task(request, context).await,
        }
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        mut context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match self.runs_tasks() {
            true => {
                let responses = request.input_responses;
                (self.update_task_of(&request.task_id, responses, &mut context)).await
            }
            false => self.delegate().update_task(request, context).await,
        }
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        mut context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match self.runs_tasks() {
            true => self.cancel_task_of(&request.task_id, &mut context).await,
            false => self.delegate().cancel_task(request, context).await,
        }
    }

    // Prompts, resources, completions, logging, subscriptions, skills and notifications:
    // the handler's (`Server::handler`), or rmcp's defaults without one.
    compose::for_each_delegated!(forward_delegated);
}

impl Server {
    /// `tools/call`: the call resolved once, then run directly, as a task, or as a round of
    /// the stateless revision's questions.
    async fn call(
        &self,
        mut request: CallToolRequestParams,
        mut context: RmcpContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "http")]
        if Server::challenged(&context) {
            return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                "The access token lacks a scope this call requires.",
            )])
            .into());
        }
        let inner = &self.inner;
        let view = self.view_of(&context);
        let catalog = view.as_ref().map_or(&inner.catalog, |v| &v.catalog);
        let Some(entry) = catalog.get(&request.name) else {
            return self.unknown_tool(&request.name, catalog);
        };
        // Resolved once: every step below takes this value.
        let arguments = request.arguments.take().unwrap_or_default();
        let shown = view.as_ref().map(|view| view.allowed(entry.route.tool));
        let resolved = inner.registry.resolve(&entry.route, arguments, shown);
        // A hidden action is answered as one the tool does not have, before anything else
        // reads the arguments.
        if view.is_some()
            && let Err(error) = resolved.action
        {
            return Ok(self.refusal(error, resolved.exposition));
        }
        if self.is_task_call(&resolved, &context)? {
            return self.start_task(resolved, &request, context).await;
        }
        let stateless = stateless::is_stateless_request(&context);
        let log_level = self.log_level();
        let (mut ctx, reports) =
            request_context(&mut context, self.session(), stateless, log_level);
        if let Some(principal) = self.local_caller() {
            ctx = ctx.with_principal(principal.clone());
        }
        let round = match inner
            .rounds
            .round_for(
                stateless,
                &request,
                &context,
                ctx.principal(),
                &resolved.arguments,
            )
            .await
        {
            Ok(round) => round,
            Err(Stopped::Protocol(error)) => return Err(error),
            Err(Stopped::Envelope(error)) => return Ok(self.refusal(error, resolved.exposition)),
        };
        if let Some(inputs) = round.inputs() {
            ctx = ctx.with_inputs(inputs);
        }
        let call = inner.registry.call(resolved, ctx);
        let response = tokio::select! {
            biased;
            // Dropping `call` here drops the action's future: the client cancelled
            // (`notifications/cancelled`) or the connection is shutting down. rmcp has already
            // forgotten the request and drops whatever this returns (MCP: a cancelled request
            // gets no response). It logs an `Err` at WARN ("response error") before dropping
            // it, and an `Ok` at DEBUG only: a normal cancellation is no warning, so answer a
            // result that is never sent.
            () = context.ct.cancelled() => {
                tracing::debug!(target: "fusion::server", tool = %request.name, "call cancelled");
                return Ok(cancelled());
            }
            // The action asked questions this call carries no answer to (or one the client
            // cannot be asked): its future is dropped, and the client gets the questions and
            // the state to send them back with (or the error).
            () = round.asked() => return round.input_required(&inner.rounds).await,
            response = forward_progress(call, reports, &context.peer) => response,
        };
        round.give_back(&inner.rounds).await;
        Ok(CallToolResult::from(response).into())
    }

    /// The transport session this value serves, once the client has shaken hands
    /// (`initialize`). `None` for a value serving a request of the stateless lifecycle (MCP
    /// 2026-07-28, or a Streamable HTTP server without sessions): each such request gets a
    /// fresh value, so its session id would be a new rate-limit bucket per request.
    pub(super) fn session(&self) -> Option<&Arc<str>> {
        self.handshake
            .load(Ordering::Relaxed)
            .then_some(&self.session)
    }

    /// The level the session's client set with `logging/setLevel`, if it did.
    fn log_level(&self) -> Option<LogLevel> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The caller of this value's calls when it serves a [`Server::serve_io`] connection.
    pub(super) fn local_caller(&self) -> Option<&Principal> {
        self.inner.local_principal.as_ref().filter(|_| self.local)
    }

    /// The answer to a call naming no tool: JSON-RPC `-32602` (MCP specification, tools,
    /// "Error Handling"), or a `VALIDATION_ERROR` envelope when the server opted in.
    /// `catalog` is what the caller sees: the names listed are its.
    fn unknown_tool(&self, name: &str, catalog: &Catalog) -> Result<CallToolResponse, ErrorData> {
        let sent = crate::validation::sent_value(&Value::String(name.to_owned()));
        if !self.inner.unknown_tool_as_envelope {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {sent}"),
                None,
            ));
        }
        let names = catalog.names();
        let recovery = match did_you_mean(name, names.iter().map(String::as_str)) {
            Some(near) => format!("Did you mean '{near}'? Call one of the available tools."),
            None => "Call one of the available tools.".to_owned(),
        };
        let error = ToolError::new(ErrorCode::ValidationError, format!("No tool named {sent}."))
            .suggest(recovery)
            .actions(names);
        Ok(self.refusal(error, self.inner.exposition))
    }

    /// The answer refusing a call with `error`, as the model reads it in `exposition`.
    pub(super) fn refusal(&self, error: ToolError, exposition: Exposition) -> CallToolResponse {
        let response = (self.inner.registry).answer(ToolResponse::error(error), exposition);
        CallToolResult::from(response).into()
    }
}

/// The fusion request context of an rmcp request: its `_meta` (progress token included), its
/// cancellation token, a progress reporter when the client sent a progress token (with the
/// receiving end of the reports), the client's self-reported name (`clientInfo.name` of
/// `initialize`, or of the request's `_meta` in the 2026-07-28 lifecycle; informational only),
/// the caller: the session this server instance serves (`None` in the stateless lifecycle,
/// whose requests carry no session); and, over Streamable HTTP, the HTTP request (with the
/// `Principal` an auth layer put on it).
fn request_context(
    context: &mut RmcpContext<RoleServer>,
    session: Option<&Arc<str>>,
    stateless: bool,
    log_level: Option<LogLevel>,
) -> (RequestContext, Option<mpsc::UnboundedReceiver<Report>>) {
    let mut ctx = base_context(context, session);
    let threshold = stateless::log_threshold(context, stateless, log_level);
    let token = context.meta.get_progress_token();
    // Nothing the action sends can reach the client: no queue to forward (most calls).
    if threshold.is_none() && token.is_none() {
        return (with_client_requests(ctx, &context.peer), None);
    }
    // Progress reports and log messages share one queue, so the client gets them in the order
    // the action sent them, all before the result.
    let (tx, rx) = mpsc::unbounded_channel();
    if let Some(least) = threshold {
        let log_tx = tx.clone();
        let log: LogSink = Arc::new(move |level, logger, data| {
            // The receiver lives as long as the call; a message after that is moot.
            if level >= least {
                let _ = log_tx.send(Report::Log(level, logger, data));
            }
        });
        ctx = ctx.with_log(log);
    }
    ctx = with_client_requests(ctx, &context.peer);
    let Some(token) = token else {
        return (ctx, Some(rx));
    };
    let reporter: ProgressReporter = Arc::new(move |progress, total, message| {
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        let _ = tx.send(Report::Progress(param));
    });
    (ctx.with_progress(reporter), Some(rx))
}

/// `ctx` able to ask the client what it declared it answers (elicitation, sampling, roots)
/// with server-to-client requests.
fn with_client_requests(mut ctx: RequestContext, peer: &Peer<RoleServer>) -> RequestContext {
    if let Some(elicitor) = elicitor::for_peer(peer) {
        ctx = ctx.with_elicitor(elicitor);
    }
    if let Some(sampler) = elicitor::sampler_for_peer(peer) {
        ctx = ctx.with_sampler(sampler);
    }
    if let Some(lister) = elicitor::roots_for_peer(peer) {
        ctx = ctx.with_roots_lister(lister);
    }
    ctx
}

/// The part of a request context that says who asks and with what `_meta`: no progress, log
/// messages or questions.
pub(super) fn base_context(
    context: &mut RmcpContext<RoleServer>,
    session: Option<&Arc<str>>,
) -> RequestContext {
    let mut ctx = RequestContext::new()
        .with_meta(context.meta.0.0.clone())
        .with_cancellation(context.ct.clone());
    if let Some(client) = context.client_info() {
        ctx = ctx.with_client(client.name);
    }
    if let Some(session) = session {
        ctx = ctx.with_caller(Arc::clone(session));
    }
    // Over Streamable HTTP, rmcp hands over the request's parts: headers, and the extensions
    // an auth layer (the `Principal`) or the accept loop (the `ClientAddr`) set.
    // Taken, not cloned: nothing after this reads them from rmcp's context.
    #[cfg(feature = "http")]
    if let Some(parts) = context.extensions.remove::<http::request::Parts>() {
        ctx = ctx.with_http_parts(Arc::new(parts));
    }
    ctx
}

/// What an action sends the client while it runs.
enum Report {
    /// A `notifications/progress`.
    Progress(ProgressNotificationParam),
    /// A `notifications/message`: level, logger, data.
    Log(LogLevel, Option<String>, Value),
}

/// What a cancelled call returns to rmcp, which does not send it: an error result saying so.
pub(super) fn cancelled() -> CallToolResponse {
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(
        "The request was cancelled.",
    )])
    .into()
}

/// Runs the call while forwarding its progress reports and log messages to the client
/// (`notifications/progress`, `notifications/message`), in order, all of them before the result.
async fn forward_progress<F>(
    call: F,
    reports: Option<mpsc::UnboundedReceiver<Report>>,
    peer: &Peer<RoleServer>,
) -> ToolResponse
where
    F: Future<Output = ToolResponse>,
{
    let Some(mut reports) = reports else {
        return call.await;
    };
    let mut call = pin!(call);
    loop {
        tokio::select! {
            biased;
            response = &mut call => {
                while let Ok(report) = reports.try_recv() {
                    notify(peer, report).await;
                }
                return response;
            }
            Some(report) = reports.recv() => notify(peer, report).await,
        }
    }
}

#[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
async fn notify(peer: &Peer<RoleServer>, report: Report) {
    let sent = match report {
        Report::Progress(param) => peer.notify_progress(param).await,
        Report::Log(level, logger, data) => {
            peer.notify_logging_message(log_message(level, logger, data))
                .await
        }
    };
    if let Err(err) = sent {
        tracing::debug!(target: "fusion::server", %err, "notification not sent");
    }
}

/// A log message as rmcp sends it.
#[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
fn log_message(
    level: LogLevel,
    logger: Option<String>,
    data: Value,
) -> rmcp::model::LoggingMessageNotificationParam {
    // Both spell the levels as MCP does (`debug` … `emergency`).
    let level = serde_json::from_value(Value::from(level.as_str())).expect("an MCP log level");
    let mut message = rmcp::model::LoggingMessageNotificationParam::new(level, data);
    message.logger = logger;
    message
}
