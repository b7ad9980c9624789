//! The tools of the suite's Tasks-extension scenarios (`tasks-*`, MCP Tasks extension
//! `io.modelcontextprotocol/tasks`, SEP-2663): a direct tool, and actions that run as tasks
//! (`#[action(task)]`) or only as tasks (`#[action(task = required)]`), some of which ask
//! the user while they run, and one that asks before its task starts
//! (`#[action(task(required, deferred))]`).

use std::time::Duration;

use fusion::elicit::{Unanswered, Unconfirmed};
use fusion::{RequestContext, ToolErrors};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Name {
    /// Who to greet.
    name: String,
}

/// Greets someone (answered directly, never as a task)
#[fusion::tool]
pub(crate) fn greet(args: Name) -> String {
    format!("Hello, {}!", args.name)
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Compute {
    /// How long to compute, in seconds.
    seconds: f64,
    /// A label echoed in the result.
    label: Option<String>,
}

/// Computes for `seconds` seconds, then answers (runs as a task)
#[fusion::tool]
#[action(task)]
pub(crate) async fn slow_compute(args: Compute) -> String {
    let seconds = args.seconds.clamp(0.0, 3600.0);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let label = args.label.as_deref().unwrap_or("unlabelled");
    format!("Computed {label} in {seconds} seconds.")
}

/// The error `failing_job` always answers.
#[derive(Debug, thiserror::Error, ToolErrors)]
pub(crate) enum JobError {
    #[error("The job failed, as it always does.")]
    #[tool_error(INTERNAL_ERROR)]
    Failed,
}

/// Fails after a second with a tool error (runs only as a task)
#[fusion::tool]
#[action(task = required)]
pub(crate) async fn failing_job() -> Result<String, JobError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(JobError::Failed)
}

/// Panics: a protocol-level failure of its task (runs as a task)
#[fusion::tool]
#[action(task)]
pub(crate) async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job panics, as it always does")
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct File {
    /// The file to delete.
    filename: String,
}

/// Deletes a file once the user confirms (runs as a task, which asks)
#[fusion::tool]
#[action(task)]
pub(crate) async fn confirm_delete(args: File, ctx: RequestContext) -> Result<String, Unconfirmed> {
    ctx.confirm(format!("Delete {}?", args.filename)).await?;
    Ok(format!("Deleted {}.", args.filename))
}

/// The form `multi_input` and `test_tool_with_task` ask for.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct UserName {
    /// Your name.
    name: String,
}

/// Asks two questions at once (runs as a task, which asks both)
#[fusion::tool]
#[action(task)]
pub(crate) async fn multi_input(ctx: RequestContext) -> Result<String, Unanswered> {
    let (name, confirmed) = tokio::join!(
        ctx.elicit::<UserName>("What is your name?"),
        ctx.confirm("Go ahead?"),
    );
    let name = name?.name;
    Ok(match confirmed {
        Ok(()) => format!("{name} confirmed."),
        Err(refused) => format!("{name} did not confirm: {refused}"),
    })
}

/// Asks for the user's name, then greets them as a task (runs only as a task, started once
/// the name is known)
#[fusion::tool]
#[action(task(required, deferred))]
pub(crate) async fn test_tool_with_task(ctx: RequestContext) -> Result<String, Unanswered> {
    let user = ctx.elicit::<UserName>("What is your user_name?").await?;
    ctx.start_task().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(format!("Hello, {}!", user.name))
}
