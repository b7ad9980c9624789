//! Per-action error contracts: `#[action(errors(..))]` narrows what an action advertises (the
//! tool's `_meta["fusion/errors"]`, the lockfile contract), and a variant returned outside the
//! declaration still reaches the client and is logged once. In a test binary of its own, for
//! the reason `server_warnings.rs` gives (`tracing`'s per-callsite interest cache).

use fusion::server::Server;
use fusion::{RequestContext, ToolExt};
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum NoteError {
    #[error("No note {id}")]
    #[tool_error(NOT_FOUND, recovery = "List notes first.")]
    NotFound { id: String },
    #[error("The note changed since it was read")]
    #[tool_error(CONFLICT, category = "validation")]
    Changed,
    #[error("The notebook is full")]
    #[tool_error(code = "QUOTA_EXCEEDED", category = "rate_limit")]
    QuotaExceeded,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Id {
    id: String,
}

struct Notes;

/// A notebook.
#[fusion::tool]
impl Notes {
    /// Reads a note. Declares that it can only be missing, but answers `Changed` for the id
    /// `stale`: a variant outside its declaration.
    #[action(read_only, errors(NoteError::NotFound))]
    fn get(&self, args: Id) -> Result<String, NoteError> {
        match args.id.as_str() {
            "n_1" => Ok("hello".to_owned()),
            "stale" => Err(NoteError::Changed),
            _ => Err(NoteError::NotFound { id: args.id }),
        }
    }

    /// Creates a note.
    #[action(errors(NoteError::QuotaExceeded))]
    async fn create(&self, _args: Id) -> Result<String, NoteError> {
        Err(NoteError::QuotaExceeded)
    }

    /// Rewrites a note; declares nothing, so every variant of its error type.
    #[action]
    fn update(&self, args: Id) -> Result<String, NoteError> {
        Err(NoteError::NotFound { id: args.id })
    }
}

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

fn codes(contract: &fusion::contract::Contract, action: &str) -> Vec<String> {
    contract.tools["notes"].actions[action]
        .errors
        .iter()
        .map(|e| e.code.clone())
        .collect()
}

#[test]
fn each_action_advertises_only_the_variants_it_declares() {
    let server = Server::new("notes", "1.0.0").tool(Notes);
    let contract = server.contract();
    assert_eq!(codes(&contract, "get"), ["NOT_FOUND"]);
    assert_eq!(codes(&contract, "create"), ["QUOTA_EXCEEDED"]);
    let mut all = codes(&contract, "update");
    all.sort();
    assert_eq!(all, ["CONFLICT", "NOT_FOUND", "QUOTA_EXCEEDED"]);

    let tools = server.tool_definitions();
    let meta = serde_json::to_value(&tools[0]).unwrap()["_meta"]["fusion/errors"].clone();
    let advertised: Vec<(String, String)> = meta
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap().to_owned();
            (field("action"), field("code"))
        })
        .collect();
    let of = |action: &str| -> Vec<&str> {
        advertised
            .iter()
            .filter(|(a, _)| a == action)
            .map(|(_, c)| c.as_str())
            .collect()
    };
    assert_eq!(of("get"), ["NOT_FOUND"]);
    assert_eq!(of("create"), ["QUOTA_EXCEEDED"]);
    assert_eq!(of("update").len(), 3, "{meta}");
}

#[tokio::test]
async fn an_undeclared_variant_reaches_the_client_and_is_logged_once() {
    let (log, _guard) = Captured::install();

    let arguments = |id: &str| match json!({"action": "get", "id": id}) {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    for _ in 0..2 {
        let response = Notes.call(arguments("stale"), RequestContext::new()).await;
        let error = response.tool_error().expect("an error");
        assert_eq!(error.code().as_str(), "CONFLICT");
    }
    // A declared variant and a success log nothing.
    let missing = Notes.call(arguments("n_9"), RequestContext::new()).await;
    assert_eq!(missing.tool_error().unwrap().code().as_str(), "NOT_FOUND");
    let found = Notes.call(arguments("n_1"), RequestContext::new()).await;
    assert_eq!(found.payload(), Some("hello"));

    let log = log.text();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 1, "{log}");
    for expected in [
        "WARN",
        "fusion::contract",
        "tool=\"notes\"",
        "action=\"get\"",
        "variant=\"Changed\"",
        "code=\"CONFLICT\"",
    ] {
        assert!(lines[0].contains(expected), "{expected}: {log}");
    }
}
