//! Fetching the authorization server's documents: JSON over HTTPS (plain HTTP to loopback
//! only), within a timeout and a size limit, and how long an answer may be kept.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, CACHE_CONTROL, HeaderMap};
use serde_json::Value;

/// Why a document of the authorization server could not be fetched or read: its metadata
/// (discovery), its key set, or an introspection answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL is not `https` (plain `http` is accepted for loopback addresses only), or not a
    /// URL.
    #[error("{0} is not an https URL (plain http is accepted for loopback addresses only)")]
    Insecure(String),
    /// No complete answer within the timeout.
    #[error("{0} did not answer within the timeout")]
    Timeout(String),
    /// The request failed: connection refused, TLS, DNS, too many redirects.
    #[error("fetching {url} failed: {reason}")]
    Fetch {
        /// The URL fetched.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The answer's status was not a success.
    #[error("{url} answered HTTP status {status}")]
    Status {
        /// The URL fetched.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The answer is longer than the size limit.
    #[error("{url} answered more than {limit} bytes")]
    TooLarge {
        /// The URL fetched.
        url: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The answer is not the JSON document expected.
    #[error("{url} did not answer a valid document: {reason}")]
    Malformed {
        /// The URL fetched.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The key set holds no key that can verify tokens.
    #[error("the key set at {0} holds no signing key fusion can verify tokens with")]
    NoKeys(String),
    /// The discovery document names another issuer (RFC 8414 section 3.3).
    #[error("the metadata at {url} names the issuer {found}, not {expected}")]
    IssuerMismatch {
        /// The metadata URL.
        url: String,
        /// The issuer asked for.
        expected: String,
        /// The issuer the document names.
        found: String,
    },
}

/// How long a fetched document is kept when the response names no `max-age`.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// The bounds of the lifetime a response's `Cache-Control: max-age` may set.
const MIN_LIFETIME: Duration = Duration::from_secs(5 * 60);
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// How long an answer may be kept: its `Cache-Control: max-age`, bounded.
pub(super) fn lifetime(headers: &HeaderMap) -> Duration {
    let max_age = headers
        .get_all(CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|directive| {
            let (name, value) = directive.trim().split_once('=')?;
            name.eq_ignore_ascii_case("max-age")
                .then(|| value.trim_matches('"').parse::<u64>().ok())?
        });
    max_age.map_or(DEFAULT_LIFETIME, |seconds| {
        Duration::from_secs(seconds).clamp(MIN_LIFETIME, MAX_LIFETIME)
    })
}

/// How many idle connections the client keeps per host, and for how long.
const IDLE_PER_HOST: usize = 16;
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The HTTP client for documents: the timeout over the whole exchange, at most 3 redirects,
/// each to an allowed URL.
pub(super) fn client(timeout: Duration) -> Result<reqwest::Client, FetchError> {
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= 3 {
            attempt.error("too many redirects")
        } else if is_allowed(attempt.url()) {
            attempt.follow()
        } else {
            attempt.error("a redirect to a URL that is not https")
        }
    });
    build(timeout, redirects)
}

/// The HTTP client for requests carrying credentials: as [`client`], but following no
/// redirect (a `3xx` answer is returned as it came), so that a client secret or a token is
/// never resent to another URL.
pub(super) fn client_without_redirects(timeout: Duration) -> Result<reqwest::Client, FetchError> {
    build(timeout, reqwest::redirect::Policy::none())
}

/// A client with the timeout, `redirects` and a bounded pool of idle connections.
fn build(
    timeout: Duration,
    redirects: reqwest::redirect::Policy,
) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(redirects)
        .pool_max_idle_per_host(IDLE_PER_HOST)
        .pool_idle_timeout(IDLE_TIMEOUT)
        .build()
        .map_err(|error| FetchError::Fetch {
            url: String::new(),
            reason: error.to_string(),
        })
}

/// `https`, or `http` to a loopback address.
pub(super) fn is_allowed(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => url.host_str().is_some_and(|host| {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }),
        _ => false,
    }
}

/// GETs `url` as JSON, reading at most `max_bytes`.
pub(super) async fn get_json(
    client: &reqwest::Client,
    url: &str,
    max_bytes: usize,
) -> Result<(Value, HeaderMap), FetchError> {
    let parsed = Url::parse(url).map_err(|_| FetchError::Insecure(url.to_owned()))?;
    if !is_allowed(&parsed) {
        return Err(FetchError::Insecure(url.to_owned()));
    }
    let request = client.get(parsed).header(ACCEPT, "application/json");
    send_json(request, url, max_bytes).await
}

/// Which metadata document of an authorization server [`discover`] tries first.
#[derive(Clone, Copy)]
pub(super) enum Discovery {
    /// OpenID Connect Discovery 1.0 (`<issuer>/.well-known/openid-configuration`), then RFC 8414.
    OidcFirst,
    /// RFC 8414 (`/.well-known/oauth-authorization-server` inserted before the issuer's path),
    /// then OpenID Connect Discovery.
    OauthFirst,
}

/// The URL named by `member` in the metadata of `issuer`: the first of its two documents that
/// can be read (in `order`; the first one's error when neither can), which must name the same
/// `issuer`.
pub(super) async fn discover(
    client: &reqwest::Client,
    issuer: &str,
    order: Discovery,
    member: &str,
    max_bytes: usize,
) -> Result<String, FetchError> {
    let parsed = Url::parse(issuer).map_err(|_| FetchError::Insecure(issuer.to_owned()))?;
    let path = parsed.path().trim_end_matches('/');
    let oidc = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let mut oauth = parsed.clone();
    oauth.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let (first, second) = match order {
        Discovery::OidcFirst => (oidc, oauth.to_string()),
        Discovery::OauthFirst => (oauth.to_string(), oidc),
    };
    let (url, document) = match get_json(client, &first, max_bytes).await {
        Ok((document, _)) => (first, document),
        Err(error) => match get_json(client, &second, max_bytes).await {
            Ok((document, _)) => (second, document),
            Err(_) => return Err(error),
        },
    };
    let found = document.get("issuer").and_then(Value::as_str).unwrap_or("");
    if found != issuer {
        return Err(FetchError::IssuerMismatch {
            url,
            expected: issuer.to_owned(),
            found: found.to_owned(),
        });
    }
    match document.get(member).and_then(Value::as_str) {
        Some(value) => Ok(value.to_owned()),
        None => Err(FetchError::Malformed {
            url,
            reason: format!("no {member}"),
        }),
    }
}

/// Sends `request` (to `url`, allowed or not: the caller checks) and reads its answer as JSON,
/// at most `max_bytes`.
pub(super) async fn send_json(
    request: reqwest::RequestBuilder,
    url: &str,
    max_bytes: usize,
) -> Result<(Value, HeaderMap), FetchError> {
    let failed = |error: reqwest::Error| {
        if error.is_timeout() {
            FetchError::Timeout(url.to_owned())
        } else {
            FetchError::Fetch {
                url: url.to_owned(),
                reason: error.to_string(),
            }
        }
    };
    let mut response = request.send().await.map_err(failed)?;
    if !response.status().is_success() {
        return Err(FetchError::Status {
            url: url.to_owned(),
            status: response.status().as_u16(),
        });
    }
    let too_large = || FetchError::TooLarge {
        url: url.to_owned(),
        limit: max_bytes,
    };
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes as u64)
    {
        return Err(too_large());
    }
    let headers = response.headers().clone();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if body.len() + chunk.len() > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    let document = serde_json::from_slice(&body).map_err(|error| FetchError::Malformed {
        url: url.to_owned(),
        reason: error.to_string(),
    })?;
    Ok((document, headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lifetime_follows_max_age_within_bounds() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(CACHE_CONTROL, value.parse().unwrap());
            lifetime(&headers)
        };
        assert_eq!(lifetime(&HeaderMap::new()), DEFAULT_LIFETIME);
        assert_eq!(with("public, max-age=7200"), Duration::from_secs(7200));
        assert_eq!(with("max-age=0"), MIN_LIFETIME);
        assert_eq!(with("max-age=99999999"), MAX_LIFETIME);
        assert_eq!(with("no-store"), DEFAULT_LIFETIME);
    }

    #[test]
    fn only_https_or_loopback_http_is_fetched() {
        let allowed = |url: &str| is_allowed(&Url::parse(url).unwrap());
        assert!(allowed("https://id.example.com/jwks"));
        assert!(allowed("http://127.0.0.1:8080/jwks"));
        assert!(allowed("http://[::1]/jwks"));
        assert!(allowed("http://localhost/jwks"));
        assert!(!allowed("http://id.example.com/jwks"));
        assert!(!allowed("file:///etc/jwks.json"));
    }
}
