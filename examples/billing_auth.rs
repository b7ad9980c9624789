//! Who calls the billing example: bearer tokens over HTTP, the launching user over stdio.
//!
//! `--http` puts `fusion::auth::BearerAuth` in front of `/mcp` and serves the RFC 9728 resource
//! metadata next to it. With `--issuer URL`, it accepts the tokens of that authorization server:
//! JWTs checked with the keys its discovery document names (`Jwks::discover`), and with
//! `--introspection-client ID:SECRET` opaque tokens too (`Introspection::discover`). Without, no
//! authorization server runs: the example signs two tokens itself with the DEVELOPMENT key pair
//! in `examples/dev-keys/` and prints them at start. That private key is public; a real server
//! validates tokens its authorization server issues and never holds a signing key.
//!
//! stdio and `--demo` authenticate nobody: a local MCP client launches the server as the user
//! who runs it, so that user is the caller (`Server::local_principal`), with the `charge` and
//! `refund` scopes.

use fusion::auth::jsonwebtoken::{self, Algorithm, DecodingKey, EncodingKey, Header};
use fusion::auth::{BearerAuth, Introspection, Jwks, Principal, ProtectedResourceMetadata};
use serde_json::json;

/// The scope `billing.charge` requires.
pub(crate) const CHARGE_SCOPE: &str = "charge";
/// The scope `billing.refund` requires.
pub(crate) const REFUND_SCOPE: &str = "refund";

/// DEVELOPMENT ONLY: the key pair of `examples/dev-keys/` (see its README). Anyone can sign
/// tokens with this private key.
const DEV_PUBLIC_KEY: &[u8] = include_bytes!("dev-keys/es256-public.pem");
const DEV_PRIVATE_KEY: &[u8] = include_bytes!("dev-keys/es256-private.pem");

/// The issuer the development tokens name. `.invalid` (RFC 2606): no authorization server
/// answers there, so a client that runs OAuth discovery learns that it must be given a token.
pub(crate) const DEV_ISSUER: &str = "https://dev-issuer.fusion-billing.invalid";

/// How long the printed tokens are valid.
const TOKEN_LIFETIME_SECS: u64 = 3600;

/// The caller over stdio and in-process: the user who launched the server (`$USER`, else
/// `local-user`), allowed to charge and refund.
pub(crate) fn local_user() -> Principal {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "local-user".to_owned());
    Principal::new(user).with_scopes([CHARGE_SCOPE, REFUND_SCOPE])
}

/// The bearer layer for `resource` (the MCP endpoint's URL, the audience tokens must name) and
/// the routes serving its RFC 9728 metadata document: for the development tokens, or for the
/// tokens of `issuer` (with `introspection_client`, `ID:SECRET`, its opaque ones too).
pub(crate) async fn bearer(
    resource: &str,
    issuer: Option<&str>,
    introspection_client: Option<&str>,
) -> anyhow::Result<(BearerAuth, axum::Router)> {
    let auth = match issuer {
        None => {
            let key = DecodingKey::from_ec_pem(DEV_PUBLIC_KEY)?;
            BearerAuth::new(resource, DEV_ISSUER, key, Algorithm::ES256)
        }
        Some(issuer) => {
            let jwks = Jwks::discover(issuer).await?;
            let auth = BearerAuth::from_jwks(resource, issuer, jwks);
            match introspection_client {
                None => auth,
                Some(client) => {
                    let (id, secret) = client
                        .split_once(':')
                        .ok_or_else(|| anyhow::anyhow!("--introspection-client: ID:SECRET"))?;
                    auth.introspection(Introspection::discover(issuer, id, secret).await?)
                }
            }
        }
    };
    // The scopes the actions use: the 401 challenge asks for them, the metadata lists them.
    let auth = auth.scopes([CHARGE_SCOPE, REFUND_SCOPE]);
    let metadata = ProtectedResourceMetadata::new(resource, [issuer.unwrap_or(DEV_ISSUER)])
        .scopes([CHARGE_SCOPE, REFUND_SCOPE])
        .resource_name("fusion billing example");
    let routes =
        axum::Router::new().route_service(&metadata.well_known_path(), metadata.into_service());
    Ok((auth, routes))
}

/// A development access token for `resource` (an RFC 9068 JWT: `typ: at+jwt`): subject
/// `subject`, the space-separated `scope`, valid for an hour, signed with the development key.
pub(crate) fn dev_token(resource: &str, subject: &str, scope: &str) -> anyhow::Result<String> {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({
        "iss": DEV_ISSUER, "sub": subject, "aud": resource, "scope": scope,
        "iat": now, "exp": now + TOKEN_LIFETIME_SECS,
    });
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some("at+jwt".to_owned());
    let key = EncodingKey::from_ec_pem(DEV_PRIVATE_KEY)?;
    Ok(jsonwebtoken::encode(&header, &claims, &key)?)
}

/// Prints (stderr) a token with the `charge` and `refund` scopes, one with neither, and a curl
/// call. The token
/// lines are `export NAME=TOKEN`, ready to paste into a shell (tests read them the same way).
pub(crate) fn print_dev_tokens(resource: &str, metadata_url: &str) -> anyhow::Result<()> {
    let payer = dev_token(
        resource,
        "dev-payer",
        &format!("{CHARGE_SCOPE} {REFUND_SCOPE}"),
    )?;
    let viewer = dev_token(resource, "dev-viewer", "")?;
    eprintln!(
        "bearer tokens required; resource metadata at {metadata_url}
DEVELOPMENT tokens, signed with the public key pair of examples/dev-keys/ (never use it for
anything real), valid for 1 hour. Paste into a shell:
export BILLING_TOKEN={payer}
export BILLING_TOKEN_READ_ONLY={viewer}
(the first has the `{CHARGE_SCOPE}` and `{REFUND_SCOPE}` scopes; with the second, `charge` and
`refund` answer FORBIDDEN)"
    );
    print_try(resource);
    Ok(())
}

/// Prints (stderr) a curl call of `list_invoices` with the token in `$BILLING_TOKEN`.
pub(crate) fn print_try(resource: &str) {
    eprintln!(
        "try (MCP 2026-07-28: one request, no session to open):
curl -s {resource} -H \"Authorization: Bearer $BILLING_TOKEN\" \\
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\
  -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: billing' \\
  -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"billing\",\"arguments\":{{\"action\":\"list_invoices\"}},\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"curl\",\"version\":\"1\"}},\"io.modelcontextprotocol/clientCapabilities\":{{}}}}}}}}'"
    );
}
