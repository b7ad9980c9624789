//! `--demo`: an rmcp client talks to the billing server over an in-process stream and prints
//! each request next to exactly what comes back: every text block verbatim (what the model
//! reads), `isError`, and the typed flags of `_meta["fusion/error"]` (what client code reads).

use fusion::auth::Principal;
use fusion::contract::{ContractBaseline, Lockfile};
use fusion::server::{ERRORS_META_KEY, Exposition, Server, TASKS_META_KEY};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use serde_json::{Map, Value, json};

#[path = "billing_confirm.rs"]
mod confirm;

#[path = "billing_demo_tasks.rs"]
mod tasks;

pub(crate) async fn run(server: Server, exposition: Exposition) -> anyhow::Result<()> {
    // The same tools, for the last steps: a caller without the `charge` scope, and an agent
    // that learned an older contract.
    let calibrated = server.clone();
    let unscoped = server.clone();
    let confirming = server.clone();
    let exporting = server.clone();
    println!(
        "{} {}, {} exposition, driven by an rmcp client over an in-process stream.\n",
        server.info().name,
        server.info().version,
        match exposition {
            Exposition::Flat => "flat",
            _ => "grouped",
        },
    );

    // The server on one end of a duplex pipe, the client on the other: the same JSON-RPC an
    // MCP client sends over stdio.
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        let running = server.serve_io(read, write).await?;
        anyhow::Ok(running.waiting().await?)
    });
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("fusion-billing-demo", env!("CARGO_PKG_VERSION"));
    let client = config.serve(client_end).await?;

    heading(1, "tools/list: what the model learns before calling");
    for tool in client.list_all_tools().await? {
        println!("tool: {}", tool.name);
        println!("description: {}", tool.description.as_deref().unwrap_or(""));
        println!("annotations: {}", json!(tool.annotations));
        let schema = Value::Object((*tool.input_schema).clone());
        println!("inputSchema:\n{}", serde_json::to_string_pretty(&schema)?);
        let meta = tool.meta.map(|meta| meta.0).unwrap_or_default();
        println!(
            "_meta[\"{ERRORS_META_KEY}\"] (per action, every code its error type declares and its guards can send):"
        );
        let contracts = meta.get(ERRORS_META_KEY).and_then(Value::as_array);
        match contracts {
            Some(contracts) if !contracts.is_empty() => {
                for contract in contracts {
                    println!("  {contract}");
                }
            }
            _ => println!("  (none declared)"),
        }
        if let Some(tasks) = meta.get(TASKS_META_KEY) {
            println!("_meta[\"{TASKS_META_KEY}\"] (actions that may run as a task): {tasks}");
        }
        println!();
    }

    let steps = [
        ("A good call", "get_invoice", json!({"id": "inv_0001"})),
        (
            "Not found: a domain error of the #[derive(ToolErrors)] enum",
            "get_invoice",
            json!({"id": "inv_2026"}),
        ),
        (
            "Invalid arguments: every problem in one envelope",
            "charge",
            json!({"invoice_id": "invoice-7", "amount_cents": 0, "currency": "eur"}),
        ),
        (
            "An unknown action, with a did-you-mean",
            "list_invoice",
            json!({}),
        ),
        ("No action at all", "", json!({"id": "inv_0001"})),
        (
            "A warning next to a successful result",
            "charge",
            json!({"invoice_id": "inv_0002", "amount_cents": 5000, "currency": "USD"}),
        ),
        (
            "An error without a contract: the model gets an errorId, the log gets the cause",
            "refund",
            json!({"invoice_id": "inv_0003", "amount_cents": 990}),
        ),
        (
            "A list over the action's result limit: the invoices that fit, and the next call",
            "list_invoices",
            json!({}),
        ),
        (
            "The model's next call, the arguments the warning gave: the last page, whole",
            "list_invoices",
            json!({"offset": 2}),
        ),
    ];
    let last = 2 + u32::try_from(steps.len())?;
    for (number, (title, action, arguments)) in (2..).zip(steps) {
        heading(number, title);
        let Some((tool, arguments)) = request(exposition, action, arguments) else {
            println!("(flat exposition has no discriminator to leave out)\n");
            continue;
        };
        println!(
            "request: tools/call {tool} {}",
            Value::Object(arguments.clone())
        );
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        match client.call_tool(params).await {
            Ok(result) => show(&result),
            // In flat exposition a misspelled action is a misspelled tool name: the MCP
            // specification answers that with a JSON-RPC error, not a tool result.
            Err(err) => println!("JSON-RPC error: {err}\n"),
        }
    }

    heading(
        last,
        "Rate limited: `charge` takes 5 calls a minute per client",
    );
    // The warning call above counted (the invalid one did not): valid charges of one cent until
    // the limit refuses one. Invalid calls never count, and the refusal never names the client.
    let (tool, arguments) = request(
        exposition,
        "charge",
        json!({"invoice_id": "inv_0001", "amount_cents": 1, "currency": "EUR"}),
    )
    .expect("charge has a request in both expositions");
    let mut refused = None;
    for attempt in 1..=10u32 {
        let params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments.clone());
        let result = client.call_tool(params).await?;
        if result.is_error == Some(true) {
            refused = Some((attempt, result));
            break;
        }
    }
    match refused {
        Some((attempt, result)) => {
            println!(
                "request: tools/call {tool} {} (call {attempt} of this step; the charge of step 7 counted too)",
                Value::Object(arguments.clone())
            );
            show(&result);
        }
        None => println!("(10 calls, none refused: the rate limit is off)\n"),
    }

    client.cancel().await?;
    serving.await??;
    caller_without_the_scope(unscoped, exposition, last + 1).await?;
    confirm::run(confirming, exposition, last + 2).await?;
    calibrated_agent(calibrated, exposition, last + 4).await?;
    tasks::run(exporting, exposition, last + 5).await
}

/// `charge` requires the scope `charge`. The calls above came from the user who launched the
/// demo, who has it (`Server::local_principal`); here a caller whose credentials lack it (over
/// HTTP: the printed token without the scope) is refused before the action runs.
async fn caller_without_the_scope(
    server: Server,
    exposition: Exposition,
    number: u32,
) -> anyhow::Result<()> {
    heading(
        number,
        "Forbidden: a caller without the `charge` scope, told which scope is missing",
    );
    let server = server.local_principal(Principal::new("demo-viewer"));
    let client = server.serve_in_process(()).await?;
    let arguments = json!({"invoice_id": "inv_0001", "amount_cents": 100, "currency": "EUR"});
    let (tool, arguments) =
        request(exposition, "charge", arguments).expect("charge has a request in both expositions");
    let note = "caller: signed in, scopes granted: none\n";
    call_and_show(&client, note, &tool, arguments).await?;
    client.cancel().await?;
    Ok(())
}

/// The contract an agent learned at the previous release, when `charge` took no currency (the
/// invoice's was used). `tests/billing_lockfile.rs` keeps the file in step with the code.
const OLD_LOCKFILE: &str = include_str!("fusion.old.lock");

/// The server started with the old lockfile as its baseline: the agent, calling `charge` the
/// way it learned, gets its validation error together with what changed since.
async fn calibrated_agent(
    server: Server,
    exposition: Exposition,
    number: u32,
) -> anyhow::Result<()> {
    heading(
        number,
        "An agent calibrated on an older contract: the change rides with its validation error",
    );
    let baseline = ContractBaseline::new(Lockfile::parse(OLD_LOCKFILE)?);
    let server = server.contract_baseline(baseline);
    if let Some(awareness) = server.contract_awareness() {
        println!(
            "server baseline: examples/fusion.old.lock; changes since (`--lock-check --lockfile examples/fusion.old.lock` prints the same):"
        );
        print!("{}", awareness.diff().report());
    }
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        let running = server.serve_io(read, write).await?;
        anyhow::Ok(running.waiting().await?)
    });
    let client = ClientConfig::default().serve(client_end).await?;
    let arguments = json!({"invoice_id": "inv_0001", "amount_cents": 100});
    if let Some((tool, arguments)) = request(exposition, "charge", arguments) {
        call_and_show(&client, "", &tool, arguments).await?;
    }
    client.cancel().await?;
    serving.await??;
    Ok(())
}

fn heading(number: u32, title: &str) {
    println!("== {number}. {title}");
}

/// The tool name and arguments for `action`: the `billing` tool with the `action` discriminator
/// (grouped), or the action's own tool (flat). `None` when there is nothing to send.
fn request(
    exposition: Exposition,
    action: &str,
    arguments: Value,
) -> Option<(String, Map<String, Value>)> {
    let Value::Object(mut arguments) = arguments else {
        unreachable!("the demo's arguments are objects")
    };
    match exposition {
        Exposition::Flat if action.is_empty() => None,
        Exposition::Flat => Some((format!("billing_{action}"), arguments)),
        _ => {
            if !action.is_empty() {
                arguments.insert("action".to_owned(), json!(action));
            }
            Some(("billing".to_owned(), arguments))
        }
    }
}

/// Prints the request (after `note`, which ends in a space or a newline when set), calls it and
/// prints its result.
async fn call_and_show(
    client: &rmcp::service::Peer<rmcp::RoleClient>,
    note: &str,
    tool: &str,
    arguments: Map<String, Value>,
) -> anyhow::Result<()> {
    println!(
        "{note}request: tools/call {tool} {}",
        Value::Object(arguments.clone())
    );
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    show(&client.call_tool(params).await?);
    Ok(())
}

/// Prints a result the way it arrived: `isError`, the flags, then every text block verbatim.
fn show(result: &CallToolResult) {
    println!("isError: {}", result.is_error.unwrap_or(false));
    let meta = result.meta.as_ref().map(|meta| &meta.0);
    if let Some(flags) = meta.and_then(|meta| meta.get(fusion::FLAGS_META_KEY)) {
        println!(
            "_meta[\"{}\"]: {}",
            fusion::FLAGS_META_KEY,
            in_spec_order(flags)
        );
    }
    let count = result.content.len();
    for (i, block) in result.content.iter().enumerate() {
        let text = block
            .as_text()
            .map_or("(not a text block)", |t| t.text.as_str());
        println!("text {} of {count}:\n{text}", i + 1);
    }
    println!();
}

/// The flags object with its keys in the order the flags table of the crate docs lists them (serde_json sorts).
fn in_spec_order(flags: &Value) -> String {
    const ORDER: [&str; 7] = [
        "isError",
        "errorCategory",
        "isRetryable",
        "retryAfterSeconds",
        "code",
        "severity",
        "explanation",
    ];
    let Some(object) = flags.as_object() else {
        return flags.to_string();
    };
    let known = ORDER
        .iter()
        .filter_map(|&key| Some((key, object.get(key)?)));
    let others = object
        .iter()
        .filter(|(key, _)| !ORDER.contains(&key.as_str()))
        .map(|(key, value)| (key.as_str(), value));
    let fields: Vec<String> = known
        .chain(others)
        .map(|(key, value)| format!("{}:{value}", json!(key)))
        .collect();
    format!("{{{}}}", fields.join(","))
}
