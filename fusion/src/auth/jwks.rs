//! Keys from the authorization server: its JSON Web Key Set (RFC 7517 section 5) fetched from
//! its `jwks_uri`, found through its metadata (OpenID Connect Discovery 1.0 section 4, RFC 8414
//! section 3), kept in memory and refreshed as the server rotates them.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::fetch::{Discovery, FetchError, client, discover, get_json, lifetime};

/// How soon a failed scheduled refresh is tried again.
const RETRY: Duration = Duration::from_secs(30);
/// The most keys read from one set; a larger set is refused.
const MAX_KEYS: usize = 100;

/// Every asymmetric algorithm a key of a set may verify, RSA ones first: what a layer built on
/// a key set accepts by default (each key verifies only those of its type).
pub(super) const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The algorithms an RSA key verifies.
const RSA: &[Algorithm] = ASYMMETRIC.split_at(6).0;

/// An authorization server's signing keys, fetched from its JWKS URI and kept up to date, for
/// [`BearerAuth::from_jwks`](super::BearerAuth::from_jwks).
///
/// - Fetched once by [`Jwks::fetch`] (or [`Jwks::discover`]), which fails if the set cannot
///   be read: a server does not start without keys.
/// - Refreshed in the background when the response's lifetime ends: `Cache-Control: max-age`,
///   bounded to 5 minutes..24 hours, 1 hour without one.
/// - Refreshed when a token names a `kid` the set lacks (the server added a key), at most once
///   per [`unknown_key_interval`](JwksBuilder::unknown_key_interval) (other fetches do not
///   count: a key added just after one is found at once); requests arriving while that fetch
///   runs wait for it, later ones within the interval are refused at once, so made-up `kid`s
///   cannot make the server hammer the authorization server.
/// - A refresh that fails (server down, timeout, a malformed, oversized or keyless answer)
///   keeps the last good keys and logs a warning (`tracing`, target `fusion::auth::jwks`).
///
/// Only `https` URIs are fetched (plain `http` to loopback addresses, for tests). A key set is
/// read key by key: a key fusion cannot verify with (an encryption key, `use: enc`; a
/// symmetric `oct` key, which a published set must not hold; an unsupported curve; an `alg`
/// that does not suit the key type) is skipped with a warning. Each key verifies only the
/// algorithms of its type (RSA: `RS*`, `PS*`; P-256: `ES256`; P-384: `ES384`; Ed25519:
/// `EdDSA`), or its `alg` when it names one, so a token signed with `HS256` or `none` never
/// verifies against a public key.
///
/// Cloning is cheap: clones share the keys and the background refresh, which ends when the
/// last clone is dropped. Fetching needs a Tokio runtime.
#[derive(Clone)]
pub struct Jwks {
    shared: Arc<Shared>,
}

/// The limits of a [`Jwks`]: timeouts, sizes and the unknown-`kid` refresh interval.
#[derive(Clone, Debug)]
pub struct JwksBuilder {
    timeout: Duration,
    max_bytes: usize,
    unknown_key_interval: Duration,
}

/// One verification key of a set. `serial` names the key itself: a key kept across a refresh
/// keeps it, a changed one gets a new one.
pub(super) struct Key {
    pub(super) id: Option<String>,
    pub(super) key: DecodingKey,
    pub(super) algorithms: Vec<Algorithm>,
    pub(super) serial: u64,
    source: Value,
}

/// The keys at one moment; `generation` changes whenever the keys do.
#[derive(Default)]
pub(super) struct KeySet {
    pub(super) keys: Vec<Key>,
    pub(super) generation: u64,
}

impl KeySet {
    /// Whether the key of `serial` is still in the set.
    pub(super) fn holds(&self, serial: u64) -> bool {
        self.keys.iter().any(|key| key.serial == serial)
    }

    /// A set of keys with these serials (each an HMAC key, never used to verify).
    #[cfg(test)]
    pub(super) fn of_serials(serials: &[u64], generation: u64) -> KeySet {
        let keys = serials.iter().map(|&serial| Key {
            id: Some(serial.to_string()),
            key: DecodingKey::from_secret(b"unused").unwrap(),
            algorithms: Vec::new(),
            serial,
            source: Value::Null,
        });
        KeySet {
            keys: keys.collect(),
            generation,
        }
    }
}

struct Shared {
    uri: String,
    client: reqwest::Client,
    limits: JwksBuilder,
    keys: RwLock<Arc<KeySet>>,
    /// When a token's unknown `kid` last caused a fetch (fetches at start, on the set's
    /// lifetime or asked for do not count: they cannot be caused by made-up `kid`s); held
    /// during every fetch, so callers after an unknown `kid` wait for the fetch under way
    /// rather than start another.
    unknown_key_fetch: tokio::sync::Mutex<Option<Instant>>,
    serials: AtomicU64,
}

impl Default for JwksBuilder {
    fn default() -> JwksBuilder {
        JwksBuilder {
            timeout: Duration::from_secs(10),
            max_bytes: 1024 * 1024,
            unknown_key_interval: Duration::from_secs(30),
        }
    }
}

impl JwksBuilder {
    /// The longest a fetch may take, connection to last byte. Default: 10 seconds.
    pub fn timeout(mut self, timeout: Duration) -> JwksBuilder {
        self.timeout = timeout;
        self
    }

    /// The longest answer read, in bytes; a longer one is refused. Default: 1 MiB.
    pub fn max_bytes(mut self, max_bytes: usize) -> JwksBuilder {
        self.max_bytes = max_bytes;
        self
    }

    /// The least time between two fetches a token with an unknown `kid` may cause (fetches at
    /// start and on the set's lifetime do not count). Default: 30 seconds.
    pub fn unknown_key_interval(mut self, interval: Duration) -> JwksBuilder {
        self.unknown_key_interval = interval;
        self
    }

    /// Fetches the key set at `uri` (the authorization server's `jwks_uri`).
    ///
    /// # Errors
    /// [`FetchError`] when the set cannot be fetched or holds no usable key.
    pub async fn fetch(self, uri: impl Into<String>) -> Result<Jwks, FetchError> {
        let client = client(self.timeout)?;
        let uri = uri.into();
        let shared = Arc::new(Shared {
            uri,
            client,
            limits: self,
            keys: RwLock::default(),
            unknown_key_fetch: tokio::sync::Mutex::new(None),
            serials: AtomicU64::new(0),
        });
        let lifetime = shared.load().await?;
        tokio::spawn(refresh_on_lifetime(Arc::downgrade(&shared), lifetime));
        Ok(Jwks { shared })
    }

    /// Finds the key set of `issuer` (an RFC 8414 issuer identifier, `https://id.example.com`
    /// or `https://id.example.com/realms/main`) through its metadata: OpenID Connect Discovery
    /// (`<issuer>/.well-known/openid-configuration`), else RFC 8414
    /// (`/.well-known/oauth-authorization-server` inserted before the issuer's path). The
    /// document must name the same `issuer` and a `jwks_uri`.
    ///
    /// # Errors
    /// [`FetchError`] when neither document can be read, names another issuer or no
    /// `jwks_uri`, or the key set cannot be fetched.
    pub async fn discover(self, issuer: impl Into<String>) -> Result<Jwks, FetchError> {
        let issuer = issuer.into();
        let client = client(self.timeout)?;
        let jwks_uri = discover(
            &client,
            &issuer,
            Discovery::OidcFirst,
            "jwks_uri",
            self.max_bytes,
        )
        .await?;
        self.fetch(jwks_uri).await
    }
}

impl Jwks {
    /// [`JwksBuilder::fetch`] with the default limits.
    ///
    /// # Errors
    /// [`FetchError`] when the set cannot be fetched or holds no usable key.
    pub async fn fetch(uri: impl Into<String>) -> Result<Jwks, FetchError> {
        JwksBuilder::default().fetch(uri).await
    }

    /// [`JwksBuilder::discover`] with the default limits.
    ///
    /// # Errors
    /// [`FetchError`] when the metadata or the key set cannot be read.
    pub async fn discover(issuer: impl Into<String>) -> Result<Jwks, FetchError> {
        JwksBuilder::default().discover(issuer).await
    }

    /// Limits other than the defaults: `Jwks::builder().timeout(..).fetch(uri)`.
    pub fn builder() -> JwksBuilder {
        JwksBuilder::default()
    }

    /// The URI the keys are fetched from.
    pub fn uri(&self) -> &str {
        &self.shared.uri
    }

    /// The key ids (`kid`) of the keys held now, in the set's order; keys without one are left
    /// out.
    pub fn key_ids(&self) -> Vec<String> {
        self.current()
            .keys
            .iter()
            .filter_map(|key| key.id.clone())
            .collect()
    }

    /// Fetches the set now. On failure the keys held stay.
    ///
    /// # Errors
    /// [`FetchError`] saying why the fetch failed.
    pub async fn refresh(&self) -> Result<(), FetchError> {
        let _fetching = self.shared.unknown_key_fetch.lock().await;
        self.shared.load().await.map(drop)
    }

    /// The keys held now.
    pub(super) fn current(&self) -> Arc<KeySet> {
        Arc::clone(
            &self
                .shared
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Fetches the set after a token named a `kid` it lacks, unless an unknown `kid` caused a
    /// fetch less than the unknown-key interval ago (a fetch under way is waited for).
    pub(super) async fn refresh_for_unknown_key(&self) {
        let mut last = self.shared.unknown_key_fetch.lock().await;
        if last.is_some_and(|last| last.elapsed() < self.shared.limits.unknown_key_interval) {
            return;
        }
        *last = Some(Instant::now());
        let _ = self.shared.load().await;
    }
}

impl fmt::Debug for Jwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Jwks")
            .field("uri", &self.shared.uri)
            .field("key_ids", &self.key_ids())
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Fetches the set and, if it holds usable keys, replaces the keys held; returns how long
    /// the answer may be kept. A failure is logged and leaves the keys as they were.
    async fn load(&self) -> Result<Duration, FetchError> {
        let (keys, lifetime) = async {
            let (document, headers) =
                get_json(&self.client, &self.uri, self.limits.max_bytes).await?;
            Ok((self.read_keys(&document)?, lifetime(&headers)))
        }
        .await
        .inspect_err(|error: &FetchError| {
            tracing::warn!(
                target: "fusion::auth::jwks",
                uri = %self.uri,
                %error,
                "could not refresh the authorization server's keys; keeping the last good ones",
            );
        })?;
        let mut held = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        let same = held.keys.len() == keys.len() && keys.iter().all(|key| held.holds(key.serial));
        if !same {
            let generation = held.generation + 1;
            *held = Arc::new(KeySet { keys, generation });
        }
        Ok(lifetime)
    }

    /// The usable keys of a set document; a key already held keeps its serial.
    fn read_keys(&self, document: &Value) -> Result<Vec<Key>, FetchError> {
        let malformed = |reason: &str| FetchError::Malformed {
            url: self.uri.clone(),
            reason: reason.to_owned(),
        };
        let entries = document
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed("no keys array"))?;
        if entries.len() > MAX_KEYS {
            return Err(malformed("more than 100 keys"));
        }
        let held = Arc::clone(&self.keys.read().unwrap_or_else(PoisonError::into_inner));
        let mut keys = Vec::new();
        for entry in entries {
            match read_key(entry) {
                Ok((id, key, algorithms)) => {
                    let serial = held
                        .keys
                        .iter()
                        .find(|old| old.source == *entry)
                        .map_or_else(
                            || self.serials.fetch_add(1, Ordering::Relaxed),
                            |old| old.serial,
                        );
                    keys.push(Key {
                        id,
                        key,
                        algorithms,
                        serial,
                        source: entry.clone(),
                    });
                }
                Err(why) => {
                    let kid = entry.get("kid").and_then(|kid| kid.as_str()).unwrap_or("");
                    tracing::warn!(
                        target: "fusion::auth::jwks",
                        uri = %self.uri,
                        kid,
                        "skipped a key of the set: {why}",
                    );
                }
            }
        }
        if keys.is_empty() {
            return Err(FetchError::NoKeys(self.uri.clone()));
        }
        Ok(keys)
    }
}

/// A key's id, its decoding key and the algorithms it verifies, or why it cannot be used.
fn read_key(entry: &Value) -> Result<(Option<String>, DecodingKey, Vec<Algorithm>), &'static str> {
    let jwk: Jwk = serde_json::from_value(entry.clone())
        .map_err(|_| "not a JSON Web Key of a supported type")?;
    if jwk.common.public_key_use == Some(PublicKeyUse::Encryption) {
        return Err("an encryption key (use: enc)");
    }
    let suits: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => RSA,
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return Err("an elliptic curve that cannot be verified"),
        },
        AlgorithmParameters::OctetKeyPair(params) if params.curve == EllipticCurve::Ed25519 => {
            &[Algorithm::EdDSA]
        }
        AlgorithmParameters::OctetKey(_) => {
            return Err("a symmetric key (kty oct); a published key set holds public keys only");
        }
        _ => return Err("an unsupported key type"),
    };
    let algorithms = match jwk.common.key_algorithm {
        None => suits.to_vec(),
        Some(named) => match Algorithm::from_str(&named.to_string()) {
            Ok(algorithm) if suits.contains(&algorithm) => vec![algorithm],
            _ => return Err("its alg does not suit its key type"),
        },
    };
    let key = DecodingKey::from_jwk(&jwk).map_err(|_| "unreadable key parameters")?;
    Ok((jwk.common.key_id, key, algorithms))
}

/// The background refresh: fetches again when the last answer's lifetime ends (sooner after a
/// failure); ends with the last [`Jwks`].
async fn refresh_on_lifetime(shared: Weak<Shared>, mut wait: Duration) {
    loop {
        tokio::time::sleep(wait).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let _fetching = shared.unknown_key_fetch.lock().await;
        wait = shared.load().await.unwrap_or(RETRY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_verify_only_the_algorithms_of_their_type() {
        let ec = serde_json::json!({
            "kty": "EC", "crv": "P-256", "kid": "a",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
        });
        let (id, _, algorithms) = read_key(&ec).unwrap();
        assert_eq!(
            (id.as_deref(), algorithms),
            (Some("a"), vec![Algorithm::ES256])
        );
        let mut rs = ec.clone();
        rs["alg"] = "RS256".into();
        assert!(read_key(&rs).is_err());
        let mut enc = ec.clone();
        enc["use"] = "enc".into();
        assert!(read_key(&enc).is_err());
        let oct = serde_json::json!({"kty": "oct", "k": "c2VjcmV0c2VjcmV0c2VjcmV0"});
        assert!(read_key(&oct).is_err());
        assert!(read_key(&serde_json::json!({"kty": "XYZ"})).is_err());
    }
}
