//! The authenticated caller ([`Principal`]) and the client's network address ([`ClientAddr`]),
//! as HTTP request extensions an auth layer or the server's accept loop inserts.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The authenticated caller of a request: a subject, the scopes its credentials grant and the
/// rest of its claims.
///
/// An auth layer puts it on the HTTP request as an extension
/// (`request.extensions_mut().insert(principal)`); the server copies it into the
/// [`RequestContext`](crate::RequestContext) of every call that request carries
/// ([`RequestContext::principal`](crate::RequestContext::principal)). [`BearerAuth`] builds
/// one from a validated JWT ([`Principal::from_claims`]); any layer of your own that inserts a
/// `Principal` works the same way. Tests and in-process callers set it with
/// [`RequestContext::with_principal`](crate::RequestContext::with_principal).
///
/// Cloning is cheap (one reference count). `Debug` shows the subject, the scopes and the
/// claims' names, never their values.
///
/// [`BearerAuth`]: crate::auth#bearer-tokens
#[derive(Clone, PartialEq)]
pub struct Principal(Arc<Inner>);

#[derive(Clone, PartialEq)]
struct Inner {
    subject: String,
    scopes: Vec<String>,
    claims: Map<String, Value>,
}

impl Principal {
    /// A principal for `subject` (the `sub` claim of a token: a user or client id), with no
    /// scopes and no other claims.
    pub fn new(subject: impl Into<String>) -> Principal {
        Principal(Arc::new(Inner {
            subject: subject.into(),
            scopes: Vec::new(),
            claims: Map::new(),
        }))
    }

    /// Adds `scopes` (OAuth 2.0 scope tokens, RFC 6749 section 3.3: `invoices:write`) to the
    /// ones granted, in order, each once.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Principal {
        let inner = Arc::make_mut(&mut self.0);
        for scope in scopes {
            let scope = scope.into();
            if !scope.is_empty() && !inner.scopes.contains(&scope) {
                inner.scopes.push(scope);
            }
        }
        self
    }

    /// Adds the scopes found at `paths` in the claims: each a claim name or a dotted path into
    /// nested objects (`realm_access.roles`) to a space-separated string or an array of strings.
    /// Names may hold dots themselves (`https://example.com/roles`): see [`claim_at`].
    #[cfg(feature = "auth")]
    pub(crate) fn with_scopes_at(self, paths: &[String]) -> Principal {
        let found: Vec<String> = (paths.iter())
            .flat_map(|path| scope_list(claim_at(&self.0.claims, path)))
            .collect();
        self.with_scopes(found)
    }

    /// Sets the claims (the token's payload, or whatever the auth layer knows about the caller).
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Principal {
        Arc::make_mut(&mut self.0).claims = claims;
        self
    }

    /// The principal of a token's claims: the subject from `sub` (a non-empty string; `None`
    /// without one, since an empty subject would make every such token one caller), the
    /// scopes from `scope` (one space-separated string: RFC 8693 section 4.2, RFC 9068 section
    /// 2.2.3) and from `scp` (an array of strings, or one space-separated string, as some
    /// identity providers write it; `scope` may be an array too), and every claim kept as it
    /// came.
    pub fn from_claims(claims: Map<String, Value>) -> Option<Principal> {
        let subject = claims
            .get("sub")?
            .as_str()
            .filter(|sub| !sub.is_empty())?
            .to_owned();
        let scopes: Vec<String> = (["scope", "scp"].into_iter())
            .flat_map(|name| scope_list(claims.get(name)))
            .collect();
        Some(
            Principal::new(subject)
                .with_scopes(scopes)
                .with_claims(claims),
        )
    }

    /// Who the caller is: the token's `sub` claim.
    pub fn subject(&self) -> &str {
        &self.0.subject
    }

    /// The scopes the caller's credentials grant, in the order first seen.
    pub fn scopes(&self) -> &[String] {
        &self.0.scopes
    }

    /// Whether the credentials grant `scope` (exact, case-sensitive comparison: RFC 6749
    /// section 3.3).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.0.scopes.iter().any(|s| s == scope)
    }

    /// Every claim (for a JWT: its payload, `sub`, `iss`, `aud`, `exp`, `scope` included).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.0.claims
    }

    /// Who this is, as one string: the issuer and the subject as the JSON array `[iss, sub]`
    /// (`null` without an issuer; `sub` is unique per issuer, RFC 7519 section 4.1.2). JSON
    /// quotes and escapes each, so no two pairs share a key, as joining them with a separator
    /// would let `("a b", "c")` and `("a", "b c")` do. Sessions are bound to it and rate
    /// limits count by it.
    pub(crate) fn identity_key(&self) -> String {
        let issuer = self.claims().get("iss").and_then(|iss| iss.as_str());
        serde_json::json!([issuer, self.subject()]).to_string()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.0.subject)
            .field("scopes", &self.0.scopes)
            .field("claims", &self.0.claims.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The scope tokens of a claim: a space-separated string or an array of strings; none for
/// anything else.
fn scope_list(claim: Option<&Value>) -> Vec<String> {
    match claim {
        Some(Value::String(list)) => list.split(' ').map(str::to_owned).collect(),
        Some(Value::Array(items)) => (items.iter())
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The value at `path` in `object`: the member named `path` when there is one (a namespaced
/// claim such as `https://example.com/roles`), else the value at the rest of the path in the
/// member named by the part before a dot, trying the shortest such part first
/// (`resource_access.my.app.roles` finds the roles of the client `my.app`).
#[cfg(feature = "auth")]
fn claim_at<'a>(object: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    if let Some(value) = object.get(path) {
        return Some(value);
    }
    path.match_indices('.').find_map(|(dot, _)| {
        let Some(Value::Object(inner)) = object.get(&path[..dot]) else {
            return None;
        };
        claim_at(inner, &path[dot + 1..])
    })
}

/// The network address of the client an HTTP request came from, as the server's accept loop
/// saw it: the peer of the TCP connection (a proxy's address when the server sits behind
/// one).
///
/// Insert it as a request extension where connections are accepted; with axum, copy
/// `ConnectInfo<SocketAddr>` into it:
///
/// ```ignore
/// let app = router.layer(axum::middleware::map_request(
///     |ConnectInfo(addr): ConnectInfo<SocketAddr>, mut request: Request| async move {
///         request.extensions_mut().insert(fusion::auth::ClientAddr(addr));
///         request
///     },
/// ));
/// axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
/// ```
///
/// The rate limits key callers without a principal by it (in a session or not; an IPv6 address
/// by its /64), reading the forwarded header only when it is one of the proxies the guards
/// trust ([`Guards::trusted_proxies`](crate::guard::Guards::trusted_proxies)). Without it,
/// such callers are keyed by their session, which a client renews with each `initialize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub SocketAddr);

/// Whether `scope` is a scope token as RFC 6749 section 3.3 writes it (one or more of `!`,
/// `#` to `[`, `]` to `~`: no space, quote or backslash), so that it can stand in a challenge's
/// quoted `scope` unescaped (RFC 6750 section 3).
#[cfg(feature = "http")]
pub(crate) fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// `value` as a quoted-string of an auth-param (RFC 9110 section 5.6.4): in double quotes,
/// with `"` and `\\` escaped by a backslash.
#[cfg(feature = "http")]
pub(crate) fn quoted(value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[cfg(feature = "auth")]
    #[test]
    fn scopes_are_read_at_the_paths_named() {
        let principal = Principal::from_claims(claims(json!({
            "sub": "alice", "scope": "a",
            "permissions": ["b", "a"],
            "realm_access": {"roles": ["c"]},
            "resource_access": {"app": {"roles": "d e"}},
            "other": 7,
        })))
        .unwrap();
        let paths = [
            "permissions",
            "realm_access.roles",
            "resource_access.app.roles",
            "other",
            "none.x",
        ];
        let paths: Vec<String> = paths.into_iter().map(str::to_owned).collect();
        let principal = principal.with_scopes_at(&paths);
        assert_eq!(principal.scopes(), ["a", "b", "c", "d", "e"]);
    }

    #[cfg(feature = "auth")]
    #[test]
    fn claim_names_may_hold_dots() {
        let principal = Principal::from_claims(claims(json!({
            "sub": "alice",
            "https://example.com/roles": ["admin"],
            "resource_access": {"my.app": {"roles": ["billing"]}},
            "a.b": "literal",
            "a": {"b": "nested"},
        })))
        .unwrap();
        let paths = [
            "https://example.com/roles",
            "resource_access.my.app.roles",
            "a.b",
        ];
        let paths: Vec<String> = paths.into_iter().map(str::to_owned).collect();
        let principal = principal.with_scopes_at(&paths);
        assert_eq!(principal.scopes(), ["admin", "billing", "literal"]);
    }

    #[test]
    fn scopes_come_from_scope_and_scp() {
        let p = Principal::from_claims(claims(json!({
            "sub": "alice", "scope": "invoices:read invoices:write", "scp": ["admin", "invoices:read"],
        })))
        .unwrap();
        assert_eq!(p.subject(), "alice");
        assert_eq!(p.scopes(), ["invoices:read", "invoices:write", "admin"]);
        assert!(p.has_scope("admin") && !p.has_scope("Admin"));
        assert_eq!(p.claims()["sub"], "alice");
        let p = Principal::from_claims(claims(json!({"sub": "bob", "scp": "a  b"}))).unwrap();
        assert_eq!(p.scopes(), ["a", "b"]);
    }

    #[test]
    fn identities_differ_whenever_issuer_or_subject_differ() {
        let caller = |iss: &str, sub: &str| {
            Principal::from_claims(claims(json!({"iss": iss, "sub": sub}))).unwrap()
        };
        let key = |p: Principal| p.identity_key();
        assert_ne!(key(caller("a b", "c")), key(caller("a", "b c")));
        assert_ne!(key(caller("a", "\"b")), key(caller("a\"", "b")));
        assert_ne!(key(caller("", "a")), key(Principal::new("a")));
        assert_eq!(key(caller("a", "b")), key(caller("a", "b")));
    }

    #[test]
    fn no_subject_no_principal() {
        assert!(Principal::from_claims(claims(json!({"scope": "a"}))).is_none());
        assert!(Principal::from_claims(claims(json!({"sub": 7}))).is_none());
        assert!(Principal::from_claims(claims(json!({"sub": ""}))).is_none());
    }

    #[test]
    fn debug_shows_claim_names_not_values() {
        let p = Principal::new("alice").with_claims(claims(json!({"email": "alice@example.com"})));
        let shown = format!("{p:?}");
        assert!(
            shown.contains("email") && !shown.contains("example.com"),
            "{shown}"
        );
    }
}
