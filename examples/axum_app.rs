//! An existing axum application (a shop's JSON API) that also serves MCP: fusion's server
//! nested at `/mcp` with `Router::nest_service` (`HttpServer::into_service`, which keeps
//! fusion's session caps, session-to-caller binding, body limits and `Host`/`Origin` checks),
//! a bearer-token check on `/mcp` (`HttpServer::layer`), CORS and request ids on everything,
//! its tool working on the app's state.
//!
//! ```text
//! cargo run -p examples --example axum_app -- 127.0.0.1:3000
//! curl http://127.0.0.1:3000/api/orders                 # the app's own route
//! # MCP at http://127.0.0.1:3000/mcp, with the bearer token printed at start
//! ```
//!
//! Calling `/mcp` by hand, `initialize` comes first and every later request carries the
//! `Mcp-Session-Id` it returns (a request without one gets 400 "Session ID is required"): the
//! walkthrough is the HTTP guide's "Calling it by hand" (`fusion::server::http`).
//!
//! The development token it prints is an RFC 9068 access token (`typ: at+jwt`) signed with the
//! public DEVELOPMENT key pair of `examples/dev-keys/` (ES256); a real app validates its
//! authorization server's tokens with that server's public keys and never holds a signing key.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::serve::ListenerExt;
use fusion::auth::jsonwebtoken::{self, Algorithm, DecodingKey, EncodingKey, Header};
use fusion::auth::{BearerAuth, ProtectedResourceMetadata};
use fusion::server::Server;
use fusion::{Json, RequestContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tower_http::cors::CorsLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use validator::Validate;

/// The web page allowed to call the app (and its MCP endpoint) from a browser.
const WEB_ORIGIN: &str = "https://shop.example.com";
/// The scope `orders.place` requires.
pub(crate) const PLACE_SCOPE: &str = "orders:write";

/// The app's state, shared by its HTTP handlers and its MCP tool.
#[derive(Clone, Default)]
pub(crate) struct AppState {
    orders: Arc<Mutex<Vec<Order>>>,
}

#[derive(Clone, Serialize)]
pub(crate) struct Order {
    item: String,
    quantity: u32,
    /// Who placed it: the bearer token's subject.
    placed_by: String,
    /// The `x-request-id` of the HTTP request that placed it.
    request_id: String,
}

impl AppState {
    fn orders(&self) -> std::sync::MutexGuard<'_, Vec<Order>> {
        // A panic while holding the lock leaves the list itself intact.
        self.orders
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The MCP tool, over the app's state.
struct Orders {
    state: AppState,
}

#[derive(Deserialize, JsonSchema, Validate)]
struct PlaceOrder {
    /// What to order, like `teapot`.
    #[validate(length(min = 1, max = 60))]
    item: String,
    /// How many, 1 to 10.
    #[validate(range(min = 1, max = 10))]
    quantity: u32,
}

/// The shop's orders.
#[fusion::tool]
impl Orders {
    /// Lists every order, oldest first.
    #[action(read_only, idempotent)]
    fn list(&self) -> Vec<Order> {
        self.state.orders().clone()
    }

    /// Places an order as the caller; needs the `orders:write` scope.
    #[action(scopes("orders:write"))]
    fn place(&self, args: PlaceOrder, ctx: &RequestContext) -> Json<Order> {
        // The app's layers ran first: the bearer check put the caller on the request, the
        // request-id layer its `x-request-id`.
        let placed_by = ctx.principal().map_or("", |p| p.subject()).to_owned();
        let request_id = ctx
            .headers()
            .and_then(|headers| headers.get("x-request-id")?.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let order = Order {
            item: args.item,
            quantity: args.quantity,
            placed_by,
            request_id,
        };
        self.state.orders().push(order.clone());
        Json(order)
    }
}

/// The app's own JSON route.
async fn list_orders(State(state): State<AppState>) -> impl IntoResponse {
    let body = serde_json::to_string(&*state.orders()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body)
}

/// The whole application: its routes, fusion at `resource` (the `/mcp` URL) behind `auth`, the
/// RFC 9728 document the bearer layer's 401 points clients to (reachable without a token), and
/// the app's layers.
pub(crate) fn app(state: AppState, auth: BearerAuth, resource: &str) -> Router {
    let metadata = ProtectedResourceMetadata::new(resource, [DEV_ISSUER])
        .scopes([PLACE_SCOPE])
        .resource_name("shop");
    let mcp = Server::new("shop", env!("CARGO_PKG_VERSION"))
        .tool(Orders {
            state: state.clone(),
        })
        .http()
        // The names and the page the app is reached under (fusion refuses others: DNS
        // rebinding, cross-site calls from other pages).
        .allowed_hosts(["localhost", "127.0.0.1", "shop.example.com"])
        .allowed_origins([WEB_ORIGIN])
        // The bearer check guards `/mcp` only; the app's own routes keep their own auth.
        .layer(auth)
        .into_service();
    let mcp_session = HeaderName::from_static("mcp-session-id");
    let cors = CorsLayer::new()
        .allow_origin(HeaderValue::from_static(WEB_ORIGIN))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            mcp_session.clone(),
            HeaderName::from_static("mcp-protocol-version"),
        ])
        .expose_headers([mcp_session]);
    Router::new()
        .route("/api/orders", get(list_orders))
        .nest_service("/mcp", mcp)
        .route_service(&metadata.well_known_path(), metadata.into_service())
        .with_state(state)
        .layer(cors)
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
}

/// Serves `app` on `listener` with `TCP_NODELAY` on each accepted socket: Streamable HTTP
/// writes a response's head and its events separately, and without it each call waits about
/// 40 ms for the client's delayed ACK. (The header read timeout and the connection cap of
/// fusion's own server are not `axum::serve`'s: a reverse proxy in front bounds them.)
pub(crate) async fn serve(listener: tokio::net::TcpListener, app: Router) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            eprintln!("could not set TCP_NODELAY: {error}");
        }
    });
    axum::serve(listener, app).await
}

/// DEVELOPMENT ONLY: the key pair of `examples/dev-keys/` (see its README). Anyone can sign
/// tokens with this private key.
const DEV_PUBLIC_KEY: &[u8] = include_bytes!("dev-keys/es256-public.pem");
const DEV_PRIVATE_KEY: &[u8] = include_bytes!("dev-keys/es256-private.pem");

/// The issuer the development tokens name, and the authorization server the RFC 9728 document
/// lists. `.invalid` (RFC 2606): no authorization server answers there, so a client that runs
/// OAuth discovery learns that it must be given a token.
pub(crate) const DEV_ISSUER: &str = "https://dev-issuer.shop.invalid";

/// The bearer check for tokens naming `resource` (the MCP endpoint's URL), issued by
/// [`DEV_ISSUER`] and signed with the development key (ES256); its 401 asks for the scope the
/// tool uses.
pub(crate) fn bearer(resource: &str) -> anyhow::Result<BearerAuth> {
    let key = DecodingKey::from_ec_pem(DEV_PUBLIC_KEY)?;
    Ok(BearerAuth::new(resource, DEV_ISSUER, key, Algorithm::ES256).scopes([PLACE_SCOPE]))
}

/// A development access token for `resource`, what `bearer` accepts: header `alg: ES256`,
/// `typ: at+jwt` (RFC 9068); claims `iss` [`DEV_ISSUER`], `aud` `resource`, `sub` `subject`,
/// the space-separated `scope`, `exp` an hour from now.
pub(crate) fn dev_token(resource: &str, subject: &str, scope: &str) -> anyhow::Result<String> {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": DEV_ISSUER, "aud": resource, "sub": subject, "scope": scope,
        "iat": now, "exp": now + 3600,
    });
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    let key = EncodingKey::from_ec_pem(DEV_PRIVATE_KEY)?;
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

#[tokio::main]
#[allow(
    dead_code,
    reason = "`tests/axum_app.rs` includes this file without its `main`"
)]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let resource = format!("http://{}/mcp", listener.local_addr()?);
    eprintln!("listening; MCP at {resource}");
    eprintln!(
        "DEVELOPMENT token (scope orders:write), signed with the public key pair of \
         examples/dev-keys/, valid 1 hour:\nexport APP_TOKEN={}",
        dev_token(&resource, "dev-user", PLACE_SCOPE)?
    );
    let app = app(AppState::default(), bearer(&resource)?, &resource);
    serve(listener, app).await?;
    Ok(())
}
