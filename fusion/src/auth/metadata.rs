//! The OAuth 2.0 Protected Resource Metadata document (RFC 9728) of an MCP server, and a tower
//! service answering it at its well-known path.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Method, Request, Response, StatusCode, header};
use serde::Serialize;

/// The well-known URI suffix of protected resource metadata (RFC 9728 section 3).
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// What an MCP client learns about the server as an OAuth 2.0 protected resource (RFC 9728
/// section 2; MCP specification, Authorization, "Authorization Server Discovery"): which
/// authorization servers issue its tokens and which scopes it knows. A client that is answered
/// 401 follows the `resource_metadata` URL of the `WWW-Authenticate` header here, then signs
/// the user in at one of `authorization_servers` and asks for a token for `resource`.
///
/// Serialized as the JSON document of RFC 9728 (`resource`, `authorization_servers`,
/// `scopes_supported` when not empty, `bearer_methods_supported`, `resource_name` when set).
/// Serve it with [`ProtectedResourceMetadata::into_service`] at
/// [`ProtectedResourceMetadata::well_known_path`], outside the auth layer (it is public).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the MCP server's canonical URI (RFC 8707 section 2; RFC 9728
    /// section 2), `https://mcp.example.com/mcp`. Tokens must name it as their audience.
    pub resource: String,
    /// The issuer identifiers of the authorization servers whose tokens the server accepts
    /// (RFC 8414 issuer URLs).
    pub authorization_servers: Vec<String>,
    /// The scopes the server's actions use (left out of the document when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes_supported: Vec<String>,
    /// How tokens are sent: `["header"]` (the `Authorization: Bearer` header, RFC 6750 section
    /// 2.1; the MCP specification forbids tokens in the query string).
    pub bearer_methods_supported: Vec<String>,
    /// A human-readable name of the server (left out when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

impl ProtectedResourceMetadata {
    /// The metadata of `resource` (the MCP endpoint's URI, `https://mcp.example.com/mcp`),
    /// whose tokens `authorization_servers` issue; bearer tokens in the header only.
    pub fn new(
        resource: impl Into<String>,
        authorization_servers: impl IntoIterator<Item = impl Into<String>>,
    ) -> ProtectedResourceMetadata {
        ProtectedResourceMetadata {
            resource: resource.into(),
            authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
            scopes_supported: Vec::new(),
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: None,
        }
    }

    /// Lists the scopes the server's actions require (`scopes_supported`). Give the bearer
    /// layer the same list ([`BearerAuth::scopes`](super::BearerAuth::scopes)), for the
    /// `scope` of its 401 challenges.
    pub fn scopes(
        mut self,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> ProtectedResourceMetadata {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the human-readable `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> ProtectedResourceMetadata {
        self.resource_name = Some(name.into());
        self
    }

    /// The path to serve the document at: `/.well-known/oauth-protected-resource` followed by
    /// the resource's path (RFC 9728 section 3.1): `/.well-known/oauth-protected-resource/mcp`
    /// for `https://mcp.example.com/mcp`.
    pub fn well_known_path(&self) -> String {
        split_resource(&self.resource).1
    }

    /// The document's absolute URL (what `WWW-Authenticate`'s `resource_metadata` names):
    /// `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`.
    pub fn url(&self) -> String {
        metadata_url(&self.resource)
    }

    /// The document as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// A tower service answering `GET` (and `HEAD`) with the document (`200`,
    /// `application/json`, readable cross-origin: it is public), any other method with `405`.
    /// Mount it at [`ProtectedResourceMetadata::well_known_path`]; with axum,
    /// `Router::route_service(&metadata.well_known_path(), metadata.into_service())`.
    pub fn into_service(self) -> MetadataService {
        MetadataService {
            body: Arc::from(self.to_json()),
        }
    }
}

/// The metadata URL of `resource`: its origin, the well-known suffix, then its path (RFC 9728
/// section 3.1; a trailing `/` after the host dropped; query and fragment dropped).
pub(super) fn metadata_url(resource: &str) -> String {
    let (origin, path) = split_resource(resource);
    format!("{origin}{path}")
}

/// `(origin, well-known path)` of a resource URI.
fn split_resource(resource: &str) -> (String, String) {
    let resource = resource.split(['?', '#']).next().unwrap_or_default();
    let after_scheme = resource.find("://").map_or(0, |i| i + 3);
    let (origin, path) = match resource[after_scheme..].find('/') {
        Some(i) => resource.split_at(after_scheme + i),
        None => (resource, ""),
    };
    let path = path.trim_end_matches('/');
    (origin.to_owned(), format!("{WELL_KNOWN}{path}"))
}

/// The tower service of [`ProtectedResourceMetadata::into_service`]. Its response body is a
/// `String` (an `http_body::Body`), so axum and hyper take it as is.
#[derive(Clone, Debug)]
pub struct MetadataService {
    body: Arc<str>,
}

impl<B> tower_service::Service<Request<B>> for MetadataService {
    type Response = Response<String>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<String>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let response = match *request.method() {
            Method::GET | Method::HEAD => Response::builder()
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
                .body(if request.method() == Method::GET {
                    self.body.to_string()
                } else {
                    String::new()
                }),
            _ => Response::builder()
                .status(StatusCode::METHOD_NOT_ALLOWED)
                .header(header::ALLOW, "GET, HEAD")
                .body(String::new()),
        };
        std::future::ready(Ok(response.expect("static headers are valid")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_service::Service;

    #[test]
    fn the_well_known_url_puts_the_suffix_between_host_and_path() {
        let at = |resource: &str| ProtectedResourceMetadata::new(resource, ["https://a"]).url();
        assert_eq!(
            at("https://mcp.example.com/mcp"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            at("http://127.0.0.1:8080/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            at("https://h.example/a/b/?x=1"),
            "https://h.example/.well-known/oauth-protected-resource/a/b"
        );
        assert_eq!(
            ProtectedResourceMetadata::new("https://h.example/mcp", ["https://a"])
                .well_known_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn the_document_has_the_rfc_9728_fields() {
        let metadata =
            ProtectedResourceMetadata::new("https://h.example/mcp", ["https://id.example"])
                .scopes(["invoices:read", "charge"]);
        let json: serde_json::Value = serde_json::from_str(&metadata.to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "resource": "https://h.example/mcp",
                "authorization_servers": ["https://id.example"],
                "scopes_supported": ["invoices:read", "charge"],
                "bearer_methods_supported": ["header"],
            })
        );
        let mut service = metadata.into_service();
        let response = service
            .call(Request::get("/").body(()).unwrap())
            .into_inner()
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(response.body()).unwrap(),
            json
        );
        let refused = service
            .call(Request::post("/").body(()).unwrap())
            .into_inner()
            .unwrap();
        assert_eq!(refused.status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}
