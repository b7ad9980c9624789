//! The servers `http_load` starts itself as (`--serve KIND`): fusion plain, under a recording
//! subscriber and with the full stack, rmcp, and the mixed check's ledger.

use super::*;

#[derive(Deserialize, JsonSchema)]
struct GetArgs {
    /// The entry's id; only `e1` exists.
    id: String,
}

/// The mixed check's tool: one entry, `e1`.
struct Ledger;

/// A ledger with one entry.
#[fusion::tool]
impl Ledger {
    /// Reads an entry.
    #[action(read_only)]
    async fn get(&self, args: GetArgs) -> Result<String, ToolError> {
        tokio::time::sleep(HOLD).await;
        if args.id == "e1" {
            Ok("entry e1".to_owned())
        } else {
            Err(ToolError::not_found("No entry with that id").suggest("Read entry e1"))
        }
    }

    /// Counts the entries.
    #[action(read_only)]
    fn count(&self) -> u64 {
        1
    }
}

/// The server of `kind`: prints its address (and for `full` and `auth*`, a bearer token),
/// serves forever.
pub(super) async fn serve(kind: &str) -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    println!("{addr}");
    match kind {
        "fusion" => {
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::Add)
                .serve_http_on(listener)
                .await?;
        }
        "fusion-sync" => {
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::plain::Add)
                .serve_http_on(listener)
                .await?;
        }
        "fusion-blocking" => {
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::blocking::Add)
                .serve_http_on(listener)
                .await?;
        }
        "fusion-in-place" => {
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::in_place::Add)
                .serve_http_on(listener)
                .await?;
        }
        "rmcp" => {
            use axum::serve::ListenerExt;
            use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
            use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
            let mcp = StreamableHttpService::new(
                || Ok(fixtures::RmcpAdd::new()),
                Arc::new(LocalSessionManager::default()),
                StreamableHttpServerConfig::default(),
            );
            let app = axum::Router::new().nest_service("/mcp", mcp);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
        "traced" => {
            record_spans(false)?;
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::Add)
                .http()
                .routes(spans_route())
                .serve_on(listener)
                .await?;
        }
        "full" => {
            record_spans(true)?;
            let resource = format!("http://{addr}/mcp");
            let claims = json!({
                "iss": ISSUER, "sub": "load", "aud": resource,
                "exp": jsonwebtoken::get_current_timestamp() + 24 * 3600,
            });
            let mut header = Header::new(Algorithm::HS256);
            header.typ = Some("at+jwt".to_owned());
            let token = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(SECRET)?)?;
            println!("{token}");
            let auth = BearerAuth::new(
                resource,
                ISSUER,
                DecodingKey::from_secret(SECRET)?,
                Algorithm::HS256,
            );
            let guards = GuardSpec::new()
                .rate_limit(RateLimit::per_caller(1_000_000, Duration::from_secs(1)))
                // The bench's one client is the whole load: it may use the whole limit.
                .concurrency(ConcurrencyLimit::new(64, 1024).per_caller(64 + 1024));
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::Add)
                .guard("add", guards)
                .http()
                .layer(auth)
                .routes(spans_route())
                .serve_on(listener)
                .await?;
        }
        // Bearer auth alone, with ES256 tokens (the development key pair), remembering verified
        // tokens or (`auth-uncached`) checking each signature.
        "auth" | "auth-uncached" => {
            let resource = format!("http://{addr}/mcp");
            let claims = json!({
                "iss": ISSUER, "sub": "load", "aud": resource,
                "exp": jsonwebtoken::get_current_timestamp() + 24 * 3600,
            });
            let mut header = Header::new(Algorithm::ES256);
            header.typ = Some("at+jwt".to_owned());
            let key = EncodingKey::from_ec_pem(DEV_PRIVATE)?;
            println!("{}", jsonwebtoken::encode(&header, &claims, &key)?);
            let key = DecodingKey::from_ec_pem(DEV_PUBLIC)?;
            let mut auth = BearerAuth::new(resource, ISSUER, key, Algorithm::ES256);
            if kind == "auth-uncached" {
                auth = auth.token_cache(0);
            }
            Server::new("bench-fusion", "0.0.0")
                .tool(fixtures::Add)
                .http()
                .layer(auth)
                .serve_on(listener)
                .await?;
        }
        "mixed" => {
            Server::new("ledger", "0.0.0")
                .tool(Ledger)
                .guard(
                    "ledger",
                    GuardSpec::new()
                        .concurrency(ConcurrencyLimit::new(MIXED_LIMIT, 0).per_caller(MIXED_LIMIT)),
                )
                .serve_http_on(listener)
                .await?;
        }
        other => anyhow::bail!("no server kind {other}"),
    }
    Ok(())
}

/// `GET /spans`: how many spans the subscriber saw close, for the report.
fn spans_route() -> axum::Router {
    axum::Router::new().route(
        "/spans",
        axum::routing::get(|| async { CLOSED.load(Ordering::Relaxed).to_string() }),
    )
}

/// Installs the [`Recording`] subscriber at `INFO`, with fusion's `tool_call` span (target
/// `fusion::call`) when `fusion_span`; rmcp's own spans either way.
fn record_spans(fusion_span: bool) -> anyhow::Result<()> {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    let fusion = if fusion_span {
        LevelFilter::INFO
    } else {
        LevelFilter::OFF
    };
    let filter = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("fusion::call", fusion);
    let subscriber = tracing_subscriber::registry().with(filter).with(Recording);
    tracing::subscriber::set_global_default(subscriber)?;
    Ok(())
}

/// A `tracing` layer doing the least a recording subscriber does: visit every field of every
/// span (at creation and when recorded later) and count the spans closed.
struct Recording;

static FIELDS: AtomicU64 = AtomicU64::new(0);
static CLOSED: AtomicU64 = AtomicU64::new(0);

/// Counts the fields it visits.
struct Visit(u64);

impl tracing::field::Visit for Visit {
    fn record_debug(&mut self, _field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        std::hint::black_box(value);
        self.0 += 1;
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recording {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _id: &tracing::span::Id,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut visit = Visit(0);
        attrs.record(&mut visit);
        FIELDS.fetch_add(visit.0, Ordering::Relaxed);
    }

    fn on_record(
        &self,
        _id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut visit = Visit(0);
        values.record(&mut visit);
        FIELDS.fetch_add(visit.0, Ordering::Relaxed);
    }

    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut visit = Visit(0);
        event.record(&mut visit);
        FIELDS.fetch_add(visit.0, Ordering::Relaxed);
    }

    fn on_close(&self, _id: tracing::span::Id, _ctx: tracing_subscriber::layer::Context<'_, S>) {
        CLOSED.fetch_add(1, Ordering::Relaxed);
    }
}
