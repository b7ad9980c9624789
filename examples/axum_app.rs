//! An existing axum application (a shop's JSON API) that also serves MCP: fusion's server
//! nested at `/mcp` with `Router::nest_service`, behind the app's own layers (a bearer-token
//! check on `/mcp`, CORS and request ids on everything), its tool working on the app's state.
//!
//! ```text
//! cargo run -p examples --example axum_app -- 127.0.0.1:3000
//! curl http://127.0.0.1:3000/api/orders                 # the app's own route
//! # MCP at http://127.0.0.1:3000/mcp, with the bearer token printed at start
//! ```
//!
//! The development token it prints is signed with a public development secret (HS256); a real
//! app validates its authorization server's tokens with that server's keys.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::IntoResponse;
use axum::routing::get;
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
    let metadata = ProtectedResourceMetadata::new(resource, [AUTHORIZATION_SERVER])
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
        .route_service(&metadata.well_known_path(), metadata.into_service())
        // The bearer check guards `/mcp` only; the app's own routes keep their own auth.
        .nest_service("/mcp", mcp.layer(auth))
        .with_state(state)
        .layer(cors)
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
}

/// The bearer check for tokens naming `resource` (the MCP endpoint's URL), issued by
/// [`AUTHORIZATION_SERVER`] and signed with `secret` (HS256); its 401 asks for the scope the
/// tool uses.
pub(crate) fn bearer(resource: &str, secret: &[u8]) -> BearerAuth {
    BearerAuth::new(
        resource,
        AUTHORIZATION_SERVER,
        DecodingKey::from_secret(secret).expect("a secret is a key"),
        Algorithm::HS256,
    )
    .scopes([PLACE_SCOPE])
}

/// An access token for `resource` (an RFC 9068 JWT: `typ: at+jwt`, issued by
/// [`AUTHORIZATION_SERVER`]): subject `subject`, the space-separated `scope`, valid for an
/// hour.
pub(crate) fn token(resource: &str, secret: &[u8], subject: &str, scope: &str) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": AUTHORIZATION_SERVER, "sub": subject, "aud": resource, "scope": scope,
        "exp": now + 3600,
    });
    let mut header = Header::new(Algorithm::HS256);
    header.typ = Some("at+jwt".to_owned());
    jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_secret(secret).expect("a secret is a key"),
    )
    .expect("an HS256 token encodes")
}

/// The authorization server that issues the app's tokens, as the RFC 9728 document names it
/// (a placeholder: this example signs its development token itself).
pub(crate) const AUTHORIZATION_SERVER: &str = "https://auth.shop.example.com";

/// DEVELOPMENT ONLY: the secret the printed token is signed with. It is public (it is in this
/// file): a real app validates the tokens of its authorization server with that server's keys.
const DEV_SECRET: &[u8] = b"axum_app development secret: public, never use it";

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
        "DEVELOPMENT token (scope orders:write), valid 1 hour:\nexport APP_TOKEN={}",
        token(&resource, DEV_SECRET, "dev-user", PLACE_SCOPE)
    );
    let app = app(
        AppState::default(),
        bearer(&resource, DEV_SECRET),
        &resource,
    );
    axum::serve(listener, app).await?;
    Ok(())
}
