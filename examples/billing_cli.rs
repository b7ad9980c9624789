//! The billing example's command line: its modes, the contract options and the options of a
//! replica behind a load balancer, and `--lock-check`.

use fusion::guard::{Guards, RedisStore};
use fusion::server::{Exposition, Server};
use fusion::tasks::RedisTaskStore;

pub(crate) const USAGE: &str = "usage: billing [--flat] [--baseline PATH] [--redis URL] [--public-url URL] [--request-state-key-file PATH] [--hide-unauthorized-actions] [--issuer URL [--introspection-client ID:SECRET]] [--http ADDR | --demo | --lock-check [--lockfile PATH]]
  (no flags)       serve MCP over stdio
  --http ADDR      serve MCP Streamable HTTP at http://ADDR/mcp (ADDR like 127.0.0.1:8080),
                   bearer tokens required; prints development tokens to stderr
  --demo           run a client session in-process and print what the model receives
  --flat           one MCP tool per action (billing_get_invoice, ...) instead of one tool
  --lock-check     compare the contract with the lockfile, print every change, exit 1 on a BREAKING one
  --lockfile PATH  the lockfile --lock-check reads (default: examples/fusion.lock)
  --baseline PATH  a known-good lockfile: validation errors list what changed since
  --redis URL      keep rate limits and tasks in Redis (redis://127.0.0.1:6379), shared by every
                   replica using it; while Redis is away, rate-limited calls and new tasks get
                   SERVER_BUSY
  --public-url URL the URL clients reach --http at (a load balancer's, for replicas): the
                   audience tokens must name; default http://ADDR/mcp
  --request-state-key-file PATH
                   the key sealing the requestState of a confirmation's input_required round
                   (the file's bytes, at least 32; replicas share one, so that the answer may
                   reach any of them); default: a random key per process
  --hide-unauthorized-actions
                   each caller lists only the actions its token's scopes allow; a hidden action
                   is answered as one that does not exist
  --issuer URL     with --http: accept the access tokens this authorization server issues for
                   the MCP endpoint (JWTs, its keys found by OpenID or RFC 8414 discovery and
                   followed as it rotates them) instead of printing development tokens
  --introspection-client ID:SECRET
                   with --issuer: also accept its opaque tokens, asking its introspection
                   endpoint (RFC 7662) as this client";

/// The lockfile the example ships: its reviewed contract.
pub(crate) const LOCKFILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fusion.lock");

pub(crate) enum Mode {
    Stdio,
    Http(String),
    Demo,
    LockCheck,
}

/// The contract options of the command line.
#[derive(Default)]
pub(crate) struct ContractArgs {
    pub(crate) lockfile: Option<String>,
    pub(crate) baseline: Option<String>,
}

/// The options of a replica behind a load balancer: where the shared rate limits and tasks
/// live, the URL clients reach the replicas at, and the key every replica seals request
/// states with; and whether callers see only the actions their scopes allow
/// (`--hide-unauthorized-actions`), which every replica must agree on.
#[derive(Default)]
pub(crate) struct ReplicaArgs {
    redis: Option<String>,
    pub(crate) public_url: Option<String>,
    request_state_key_file: Option<String>,
    hide_unauthorized_actions: bool,
    /// The authorization server whose tokens `--http` accepts, and the client introspecting
    /// its opaque tokens; `None`: development tokens.
    pub(crate) issuer: Option<String>,
    pub(crate) introspection_client: Option<String>,
}

impl ReplicaArgs {
    /// The server hiding what a caller may not call with `--hide-unauthorized-actions`; with its
    /// rate limits, tasks and taken request states in Redis, when `--redis` is given, and with
    /// the request-state key of `--request-state-key-file`. Every HTTP request carries a bearer
    /// token, so the limits are per subject and a task belongs to its subject, the same on
    /// every replica.
    pub(crate) fn apply(&self, mut server: Server) -> anyhow::Result<Server> {
        server = server.hide_unauthorized_actions(self.hide_unauthorized_actions);
        if let Some(path) = &self.request_state_key_file {
            let key = std::fs::read(path)
                .map_err(|err| anyhow::anyhow!("--request-state-key-file {path}: {err}"))?;
            anyhow::ensure!(
                key.len() >= 32,
                "--request-state-key-file {path}: {} bytes, a key needs at least 32",
                key.len()
            );
            server = server.request_state_key(key);
        }
        let Some(url) = &self.redis else {
            return Ok(server);
        };
        // Fails closed: while Redis is away, rate-limited calls get SERVER_BUSY.
        let server = server.guards(Guards::new().redis(RedisStore::new(url)?));
        // A task started on one replica is polled, fetched and cancelled on any; a request
        // state taken on one is refused on every other.
        let server = server.request_states_in_redis(url);
        Ok(server.tasks(super::task_settings(RedisTaskStore::new(url)?)))
    }
}

pub(crate) fn parse_args() -> Result<(Mode, Exposition, ContractArgs, ReplicaArgs), String> {
    let mut mode = Mode::Stdio;
    let mut exposition = Exposition::Grouped;
    let mut contract = ContractArgs::default();
    let mut replica = ReplicaArgs::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--flat" => exposition = Exposition::Flat,
            "--demo" => mode = Mode::Demo,
            "--lock-check" => mode = Mode::LockCheck,
            "--lockfile" => contract.lockfile = Some(args.next().ok_or("--lockfile needs a path")?),
            "--baseline" => contract.baseline = Some(args.next().ok_or("--baseline needs a path")?),
            "--http" => mode = Mode::Http(args.next().ok_or("--http needs an address")?),
            "--redis" => replica.redis = Some(args.next().ok_or("--redis needs a URL")?),
            "--public-url" => {
                replica.public_url = Some(args.next().ok_or("--public-url needs a URL")?);
            }
            "--request-state-key-file" => {
                let path = args.next().ok_or("--request-state-key-file needs a path")?;
                replica.request_state_key_file = Some(path);
            }
            "--hide-unauthorized-actions" => replica.hide_unauthorized_actions = true,
            "--issuer" => replica.issuer = Some(args.next().ok_or("--issuer needs a URL")?),
            "--introspection-client" => {
                let client = args
                    .next()
                    .ok_or("--introspection-client needs ID:SECRET")?;
                replica.introspection_client = Some(client);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if replica.introspection_client.is_some() && replica.issuer.is_none() {
        return Err("--introspection-client needs --issuer".to_owned());
    }
    Ok((mode, exposition, contract, replica))
}

/// `--lock-check`: the changes since the lockfile at `path`, one line each. The exit status is
/// 0 when nothing BREAKING changed, 1 on a BREAKING change, 2 when the lockfile is unreadable,
/// malformed or tampered with.
pub(crate) fn lock_check(server: &Server, path: &str) -> i32 {
    let lockfile = match fusion::contract::Lockfile::load(path) {
        Ok(lockfile) => lockfile,
        Err(err) => {
            eprintln!("billing: {err}");
            return 2;
        }
    };
    let changes = fusion::contract::diff(lockfile.contract(), &server.contract());
    if changes.is_empty() {
        println!("{path} is up to date ({})", lockfile.digest());
        return 0;
    }
    print!("{}", changes.report());
    if changes.has_breaking() {
        eprintln!("billing: BREAKING changes since {path}");
        1
    } else {
        eprintln!(
            "billing: {path} is out of date (nothing BREAKING); rewrite it with \
             FUSION_LOCK=overwrite cargo test -p examples"
        );
        0
    }
}
