//! `Client`: calls tools by `tool.action` over any rmcp client transport, turns error results
//! into typed errors, and applies the retry policy.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, InputRequests, InputResponses, RequestMetaObject, Task, Tool};
use rmcp::service::{Peer, RoleClient};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::envelope::error::ToolError;
use crate::envelope::flags::Flags;
use crate::model::exposition::Exposition;

use super::envelope::Envelope;
use super::error::{CallError, ToolFailure, texts};
use super::parse::{is_envelope, parse_envelope};
use super::retry::{Decision, RetryEvent, RetryPolicy};

/// The application's answerer of `input_required` questions (see [`Client::with_input_handler`]).
pub(super) type InputHandler =
    Arc<dyn Fn(InputRequests) -> BoxFuture<'static, Option<InputResponses>> + Send + Sync>;

type TaskHook = Arc<dyn Fn(&Task) + Send + Sync>;

/// How a client declares and follows tasks.
#[derive(Clone, Default)]
pub(super) struct TaskOptions {
    /// The request `_meta` declaring the extension, when the client declares it itself.
    pub(super) meta: Option<RequestMetaObject>,
    pub(super) hook: Option<TaskHook>,
}

impl fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskOptions")
            .field("declared", &self.meta.is_some())
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

/// How names given to [`Client::call`] map to MCP tools.
#[derive(Clone, Debug)]
enum Naming {
    /// As configured: flat tool names (`tool_action`) or grouped tools.
    Fixed(Exposition),
    /// From the tool names of `tools/list`.
    Listed(HashSet<String>),
}

/// A client for fusion tools (or any MCP tools) over an rmcp client [`Peer`], on any rmcp
/// transport (stdio, Streamable HTTP, in-process duplex). Requires the `client` feature (on
/// by default).
///
/// - [`Client::call`] takes a `tool.action` name and returns `Ok` with the payload and any
///   warnings, or `Err` with the parsed envelope, the typed flags and the raw result.
/// - Failures are retried by the [`RetryPolicy`] from flags alone.
/// - [`Client::call_batch`] sends several calls at once; every call gets its own result.
/// - Questions of `input_required` go to the application ([`Client::with_input_handler`]); a
///   call the server runs as a task is followed to its end ([`Client::with_tasks`]).
///
/// Cheap to clone (one `Arc`); clones share the peer and the policy.
///
/// ```no_run
/// # async fn demo(peer: rmcp::Peer<rmcp::RoleClient>) -> Result<(), Box<dyn std::error::Error>> {
/// use fusion::client::{CallError, Client, RetryPolicy};
/// use serde_json::json;
///
/// // Reads tools/list to learn whether `billing.get_invoice` is the `billing` tool with an
/// // `action` argument or the `billing_get_invoice` tool.
/// let client = Client::discover(peer).await?.with_retry_policy(
///     RetryPolicy::new().on_decision(|event| eprintln!("{}: {}", event.flags.code, event.decision)),
/// );
/// match client.call("billing.get_invoice", json!({"id": "inv_0001"})).await {
///     Ok(output) => println!("{}", output.text().unwrap_or_default()),
///     Err(CallError::Tool(failure)) if failure.is_escalation() => { /* ask the user to sign in */ }
///     Err(err) => return Err(err.into()),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Clone)]
pub(super) struct Inner {
    pub(super) peer: Peer<RoleClient>,
    pub(super) policy: RetryPolicy,
    naming: Naming,
    /// The tools `tools/list` listed, for a client made by `discover`.
    tools: Arc<[Tool]>,
    discriminator: String,
    /// Answers `input_required` (see `rounds.rs`); none: the call ends with the question.
    pub(super) input: Option<InputHandler>,
    /// Declaring and following tasks (see `task.rs`).
    pub(super) tasks: TaskOptions,
}

impl Client {
    /// A client over `peer` (a `RunningService<RoleClient, _>` derefs to one: pass
    /// `running.peer().clone()`), assuming grouped exposition, the `action` discriminator and
    /// the default [`RetryPolicy`].
    pub fn new(peer: Peer<RoleClient>) -> Client {
        Client {
            inner: Arc::new(Inner {
                peer,
                policy: RetryPolicy::new(),
                naming: Naming::Fixed(Exposition::Grouped),
                tools: Arc::new([]),
                discriminator: "action".to_owned(),
                input: None,
                tasks: TaskOptions::default(),
            }),
        }
    }

    /// A client over `peer` that learns the tool names from `tools/list` (all pages), so that
    /// `billing.get_invoice` goes to the `billing_get_invoice` tool of a server in flat
    /// exposition and to the `billing` tool otherwise.
    ///
    /// # Errors
    /// [`CallError::Protocol`] when `tools/list` fails.
    pub async fn discover(peer: Peer<RoleClient>) -> Result<Client, CallError> {
        let tools = peer.list_all_tools().await.map_err(CallError::Protocol)?;
        let names = tools.iter().map(|tool| tool.name.to_string()).collect();
        let mut client = Client::new(peer);
        client.inner_mut().naming = Naming::Listed(names);
        client.inner_mut().tools = tools.into();
        Ok(client)
    }

    /// The tools `tools/list` listed when [`Client::discover`] made this client (all pages);
    /// empty for [`Client::new`]. Input schemas are the server's JSON, every keyword kept and
    /// no `$ref` resolved (nothing fetched from a network URI, SEP-2106). Over Streamable HTTP
    /// at 2026-07-28, rmcp's transport leaves out tools with invalid `x-mcp-header`
    /// annotations and sends the others' `Mcp-Param-*` headers (SEP-2243).
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Maps names for a server without asking it (replaces what [`Client::discover`]
    /// learned): `true` for a server in flat exposition (`billing.get_invoice` calls the
    /// `billing_get_invoice` tool), `false` for grouped exposition, the default (it calls the
    /// `billing` tool with `"action": "get_invoice"`).
    pub fn with_flat_names(mut self, flat: bool) -> Client {
        self.inner_mut().naming = Naming::Fixed(Exposition::from_flat_flag(flat));
        self
    }

    /// Replaces the retry policy.
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Client {
        self.inner_mut().policy = policy;
        self
    }

    /// The discriminator field of grouped tools (default `action`).
    pub fn with_discriminator(mut self, name: impl Into<String>) -> Client {
        self.inner_mut().discriminator = name.into();
        self
    }

    /// The peer, for requests this client does not wrap.
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.inner.peer
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.policy
    }

    pub(super) fn inner(&self) -> &Inner {
        &self.inner
    }

    pub(super) fn inner_mut(&mut self) -> &mut Inner {
        Arc::make_mut(&mut self.inner)
    }

    /// The MCP tool and arguments a call of `name` sends. `tool.action` is split at the first
    /// dot: in grouped exposition it calls tool `tool` with the discriminator set to `action`
    /// (overriding one in `arguments`), in flat exposition tool `tool_action`. A name without
    /// a dot is a tool name, sent as is. With names from [`Client::discover`], a name the
    /// server lists as a tool (MCP allows dots in tool names: `github.search`) is sent as is,
    /// and otherwise the exposition is chosen per call: the flat tool when the server lists
    /// `tool_action`, else the grouped tool.
    pub fn route(
        &self,
        name: &str,
        mut arguments: Map<String, Value>,
    ) -> (String, Map<String, Value>) {
        let listed = |name: &str| match &self.inner.naming {
            Naming::Listed(names) => names.contains(name),
            Naming::Fixed(_) => false,
        };
        // MCP allows dots in tool names: a tool the server lists under `name` is that tool.
        let split = name.split_once('.').filter(|_| !listed(name));
        let Some((tool, action)) = split else {
            return (name.to_owned(), arguments);
        };
        let flat = Exposition::Flat.action_name(tool, Some(action));
        let exposition = match &self.inner.naming {
            Naming::Fixed(exposition) => *exposition,
            Naming::Listed(names) if names.contains(&flat) => Exposition::Flat,
            Naming::Listed(_) => Exposition::Grouped,
        };
        match exposition {
            Exposition::Grouped => {
                arguments.insert(
                    self.inner.discriminator.clone(),
                    Value::String(action.to_owned()),
                );
                (tool.to_owned(), arguments)
            }
            Exposition::Flat => (flat, arguments),
        }
    }

    /// Calls `name` (`tool.action`, or a tool name) with `arguments` (a JSON object, or
    /// `null` for none), retrying failures as the [`RetryPolicy`] decides. The policy's hook
    /// sees every decision; the waits run on Tokio's clock.
    ///
    /// # Errors
    /// - [`CallError::Tool`]: the result is an error (`isError: true`) the policy did not
    ///   retry, or still failed on the last attempt. Warnings never end up here.
    /// - [`CallError::Protocol`]: a JSON-RPC error (unknown tool, `-32602`) or a transport
    ///   failure; not retried (no flags to decide from), but for a refusal of the call's
    ///   headers (`-32020`, SEP-2243): sent once more after listing the tools.
    /// - [`CallError::Arguments`]: `arguments` is neither an object nor `null`; nothing is sent.
    /// - [`CallError::InputRequired`]: the server asks questions no input handler answered.
    ///
    /// A retry starts the call over from its first round: a `requestState` is never replayed.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallOutput, CallError> {
        let arguments = object(arguments)?;
        let (tool, arguments) = self.route(name, arguments);
        let policy = &self.inner.policy;
        let mut waited = Duration::ZERO;
        for attempt in 1.. {
            let mut failure = match self.send(&tool, arguments.clone()).await {
                Ok(mut output) => {
                    output.attempts = attempt;
                    return Ok(output);
                }
                Err(CallError::Tool(failure)) => failure,
                Err(other) => return Err(other),
            };
            let decision = policy.decide(&failure.flags, attempt, waited);
            policy.observe(&RetryEvent {
                name,
                attempt,
                flags: &failure.flags,
                decision: &decision,
                waited,
            });
            match decision {
                Decision::Retry { wait } => {
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
                decision => {
                    failure.attempts = attempt;
                    failure.decision = decision;
                    return Err(CallError::Tool(failure));
                }
            }
        }
        unreachable!("`1..` ends only at u32::MAX attempts; max_attempts stops before")
    }

    /// Calls `name` once, without the retry policy. The error's decision is what the policy
    /// would have decided.
    ///
    /// # Errors
    /// As [`Client::call`].
    pub async fn call_once(&self, name: &str, arguments: Value) -> Result<CallOutput, CallError> {
        let (tool, arguments) = self.route(name, object(arguments)?);
        first_attempt(self.send(&tool, arguments).await, &self.inner.policy)
    }

    /// Sends every call at once (each with its own retries) and returns one result per call,
    /// in the order given. A failing call never loses its siblings' results.
    pub async fn call_batch<I, N>(&self, calls: I) -> Vec<Result<CallOutput, CallError>>
    where
        I: IntoIterator<Item = (N, Value)>,
        N: AsRef<str>,
    {
        let calls = calls.into_iter();
        futures::future::join_all(
            calls.map(|(name, arguments)| async move { self.call(name.as_ref(), arguments).await }),
        )
        .await
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("naming", &self.inner.naming)
            .field("tools", &self.inner.tools.len())
            .field("discriminator", &self.inner.discriminator)
            .field("policy", &self.inner.policy)
            .field("input_handler", &self.inner.input.is_some())
            .field("tasks", &self.inner.tasks)
            .finish_non_exhaustive()
    }
}

fn object(arguments: Value) -> Result<Map<String, Value>, CallError> {
    match arguments {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::Bool(_) => Err(CallError::Arguments("a boolean")),
        Value::Number(_) => Err(CallError::Arguments("a number")),
        Value::String(_) => Err(CallError::Arguments("a string")),
        Value::Array(_) => Err(CallError::Arguments("an array")),
    }
}

/// Reads a `tools/call` result the way [`Client::call`] does, for results obtained some other
/// way (rmcp's own `call_tool`, a recorded session): `Ok` with the payload and the warnings
/// when `isError` is not `true`, else `Err(CallError::Tool(..))` with the envelope of the first
/// text block holding one, the flags (`_meta["fusion/error"]`, else derived from the envelope, else
/// [`Flags::uncontracted`]) and the result. The failure's decision is the default
/// [`RetryPolicy`]'s for a first attempt.
///
/// ```
/// use fusion::client::{CallError, read_result};
/// use fusion::{ErrorCategory, ToolError, ToolResponse};
/// use rmcp::model::CallToolResult;
///
/// let result = CallToolResult::from(ToolResponse::error(ToolError::timeout("Ledger took too long")));
/// let Err(CallError::Tool(failure)) = read_result(result) else { panic!() };
/// assert_eq!(failure.flags().category, ErrorCategory::Transient);
/// assert_eq!(failure.tool_error().unwrap().message(), "Ledger took too long");
/// ```
///
/// # Errors
/// [`CallError::Tool`] for an error result; never another variant.
pub fn read_result(result: CallToolResult) -> Result<CallOutput, CallError> {
    first_attempt(classify(result, None), &RetryPolicy::new())
}

/// `outcome` with a failure's decision set to `policy`'s for a first attempt.
pub(super) fn first_attempt(
    outcome: Result<CallOutput, CallError>,
    policy: &RetryPolicy,
) -> Result<CallOutput, CallError> {
    outcome.map_err(|err| match err {
        CallError::Tool(mut failure) => {
            failure.decision = policy.decide(&failure.flags, 1, Duration::ZERO);
            CallError::Tool(failure)
        }
        other => other,
    })
}

/// Sorts a result (of the task `task_id`, if any) into a success or a typed failure.
pub(super) fn classify(
    result: CallToolResult,
    task_id: Option<String>,
) -> Result<CallOutput, CallError> {
    if result.is_error != Some(true) {
        return Ok(CallOutput::new(result, task_id));
    }
    // The first text block holding an envelope (some servers put a prose summary first);
    // when none does, why the first one (or no text at all) is not one.
    let (envelope, parse_error) = match texts(&result).find_map(|text| parse_envelope(text).ok()) {
        Some(envelope) => (Some(envelope), None),
        None => (
            None,
            parse_envelope(texts(&result).next().unwrap_or_default()).err(),
        ),
    };
    let mut flags =
        Flags::of_result(&result, envelope.as_ref()).unwrap_or_else(Flags::uncontracted);
    // `_meta` flags without a readable `retryAfterSeconds` (absent, a string, negative): the
    // envelope's `<retry_after>` is the server's stated delay all the same.
    if flags.retry_after_secs.is_none() {
        flags.retry_after_secs = envelope
            .as_ref()
            .and_then(Envelope::tool_error)
            .and_then(ToolError::retry_after_secs);
    }
    let envelope = envelope.map(|envelope| match envelope {
        Envelope::ToolError(e) => Envelope::ToolError(flags.apply_to(e)),
        validation => validation,
    });
    Err(CallError::Tool(Box::new(ToolFailure {
        envelope,
        parse_error,
        flags,
        result,
        attempts: 1,
        task_id,
        // Replaced by the caller with the policy's decision.
        decision: Decision::Abort(super::retry::AbortReason::NotRetryable),
    })))
}

/// A successful call: the result, its payload and the warnings riding next to it.
#[derive(Clone, Debug)]
pub struct CallOutput {
    result: CallToolResult,
    warnings: Vec<ToolError>,
    attempts: u32,
    task_id: Option<String>,
}

impl CallOutput {
    fn new(result: CallToolResult, task_id: Option<String>) -> CallOutput {
        let mut warnings: Vec<ToolError> = texts(&result)
            .filter(|text| is_envelope(text))
            .filter_map(|text| match parse_envelope(text) {
                Ok(Envelope::ToolError(e)) => Some(e),
                _ => None,
            })
            .collect();
        // `_meta["fusion/error"]` carries the first warning's flags on a success.
        if let (Some(first), Some(flags)) = (warnings.first_mut(), Flags::of_result(&result, None))
            && &flags.code == first.code()
        {
            *first = flags.apply_to(first.clone());
        }
        CallOutput {
            result,
            warnings,
            attempts: 1,
            task_id,
        }
    }

    /// The payload: the first text block that is not an envelope. `None` when the tool
    /// answered with warnings only, or with no text.
    pub fn text(&self) -> Option<&str> {
        texts(&self.result).find(|text| !is_envelope(text))
    }

    /// The payload parsed as JSON into `T`.
    ///
    /// # Errors
    /// serde_json's error when the payload is not `T` in JSON (no payload reads as an empty
    /// string, which is an EOF error).
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.text().unwrap_or_default())
    }

    /// The `structuredContent`, when the action declares an output schema.
    pub fn structured(&self) -> Option<&Value> {
        self.result.structured_content.as_ref()
    }

    /// The warnings (severity `warning` envelopes) next to the payload, in order.
    pub fn warnings(&self) -> &[ToolError] {
        &self.warnings
    }

    /// How many attempts the call took (1 when it succeeded at once).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The raw result.
    pub fn result(&self) -> &CallToolResult {
        &self.result
    }

    /// The id of the task the call ran as (MCP Tasks extension), when the server made it one.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The raw result, owned.
    pub fn into_result(self) -> CallToolResult {
        self.result
    }
}
