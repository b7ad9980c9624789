//! Whose rate-limit bucket a call spends: the authenticated subject, else (a caller without a
//! token over HTTP) the client's address, read from the header the trusted proxies write only
//! when the peer is one of them, an IPv6 address by its /64; else the transport session (stdio,
//! in-process).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use crate::model::context::RequestContext;

/// The networks of the reverse proxies (load balancers, ingress) in front of the server, and
/// the header they write the client's address in, which the rate limits believe.
///
/// A call without a principal that came over HTTP is keyed by the client's address. When the
/// TCP peer ([`ClientAddr`](crate::auth::ClientAddr)) is not in these networks, that peer is
/// the client and no header is read: any client can write them. When it is, the addresses in
/// the one configured header ([`TrustedProxies::header`]; `X-Forwarded-For` by default) are
/// read right to left, since each proxy appends the address it received the request from,
/// skipping the trusted ones; the first untrusted address is the client. Every line of that
/// header counts, in order (RFC 9110 section 5.3: lines of one name are one comma-separated
/// list). The other header is never read: a proxy passes a header it does not write through
/// untouched, so its content is the client's claim. Empty by default: no header is believed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Vec<(IpAddr, u8)>,
    header: ForwardedHeader,
}

/// The header in which the trusted proxies append the address each received a request from
/// ([`TrustedProxies::header`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`: what HAProxy (`option forwardfor`), nginx
    /// (`$proxy_add_x_forwarded_for`) and most cloud load balancers append. The default.
    #[default]
    XForwardedFor,
    /// `Forwarded: for=client, for=proxy1` (RFC 7239): the `for` parameter of each element
    /// (section 5.2), a node as in section 6 (`192.0.2.43`, `"[2001:db8::1]:4711"`).
    Forwarded,
}

impl ForwardedHeader {
    #[cfg(feature = "http")]
    fn name(self) -> http::HeaderName {
        match self {
            ForwardedHeader::XForwardedFor => http::HeaderName::from_static("x-forwarded-for"),
            ForwardedHeader::Forwarded => http::header::FORWARDED,
        }
    }
}

impl TrustedProxies {
    /// No trusted proxy.
    pub fn new() -> TrustedProxies {
        TrustedProxies::default()
    }

    /// The networks in `list`, each an address (`10.0.0.7`, `::1`) or a network in CIDR
    /// notation (`10.0.0.0/8`, `fd00::/8`), writing `X-Forwarded-For`.
    ///
    /// # Errors
    /// The first entry that is neither, with the reason.
    pub fn parse<S: AsRef<str>>(
        list: impl IntoIterator<Item = S>,
    ) -> Result<TrustedProxies, String> {
        let mut proxies = TrustedProxies::new();
        for entry in list {
            let entry = entry.as_ref().trim();
            let (addr, prefix) = match entry.split_once('/') {
                Some((addr, prefix)) => (addr, Some(prefix)),
                None => (entry, None),
            };
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| format!("`{entry}` is not an IP address or a CIDR network"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix = match prefix {
                None => max,
                Some(p) => p
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= max)
                    .ok_or_else(|| format!("`{entry}` has a prefix length over {max}"))?,
            };
            proxies.nets.push((addr.to_canonical(), prefix));
        }
        Ok(proxies)
    }

    /// Reads the client's address from `header` only (default
    /// [`ForwardedHeader::XForwardedFor`]): the one the proxies write. Pick the header every
    /// trusted proxy appends to; the other one is ignored, whatever it says.
    pub fn header(mut self, header: ForwardedHeader) -> TrustedProxies {
        self.header = header;
        self
    }

    /// Whether `ip` is in one of the networks.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.nets
            .iter()
            .any(|&(net, prefix)| in_net(ip, net, prefix))
    }

    /// The client of a request that came from `peer`, given the forwarded addresses (oldest
    /// first, `None` for a hop that is `unknown`, obfuscated or unreadable).
    fn client(&self, peer: IpAddr, forwarded: &[Option<IpAddr>]) -> IpAddr {
        let mut client = peer.to_canonical();
        for hop in forwarded.iter().rev() {
            if !self.contains(client) {
                break;
            }
            match hop {
                Some(ip) => client = ip.to_canonical(),
                // A trusted proxy could not say who sent it the request: it is the client.
                None => break,
            }
        }
        client
    }
}

impl fmt::Debug for TrustedProxies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nets: Vec<_> = self
            .nets
            .iter()
            .map(|(ip, p)| format!("{ip}/{p}"))
            .collect();
        f.debug_struct("TrustedProxies")
            .field("nets", &nets)
            .field("header", &self.header)
            .finish()
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// The default bucket of a call ([`RateKey::Caller`](super::RateKey::Caller)), prefixed by its
/// source so that a subject never shares a bucket with an address or a session: `sub:` and the
/// principal's issuer and subject; else `addr:` and the client's address (any call over HTTP
/// whose accept loop recorded the peer, with a session or without: a client opens a new
/// session with each `initialize`, so a session key would hand it a fresh bucket at will);
/// else `session:` and the transport session (stdio, in-process: one connection, one client);
/// else the empty key (one bucket shared by every unidentified call).
pub(super) fn caller_key(context: &RequestContext, proxies: &TrustedProxies) -> String {
    if let Some(principal) = context.principal() {
        return format!("sub:{}", principal.identity_key());
    }
    if let Some(ip) = client_ip(context, proxies) {
        return format!("addr:{}", address_key(ip));
    }
    #[cfg(feature = "http")]
    if context.http_parts().is_some() {
        warn_no_client_addr();
    }
    if let Some(session) = context.caller() {
        return format!("session:{session}");
    }
    String::new()
}

/// Says once that HTTP requests arrive without a [`ClientAddr`](crate::auth::ClientAddr):
/// their callers without a token fall back to the session key, which a client renews with
/// each `initialize`, or without a session to one bucket they all share.
#[cfg(feature = "http")]
fn warn_no_client_addr() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing::warn!(
            target: "fusion::guard",
            "an HTTP request without a ClientAddr extension: rate limits key callers without \
             a token by their session, which a client renews with each initialize, or put \
             them all in one bucket; insert fusion::auth::ClientAddr where connections are \
             accepted"
        );
    });
}

/// The part of an address one client is assumed to hold: an IPv4 address whole (/32); the
/// /64 network of an IPv6 address (RFC 4291 section 2.5.1: the low 64 bits are the interface
/// identifier, which a host picks itself, RFC 8981 temporary addresses for one, so a client
/// holding a /64 has 2^64 addresses). An IPv4-mapped IPv6 address is its IPv4 address.
fn address_key(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let network = Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64));
            format!("{network}/64")
        }
    }
}

/// The client's IP address: the peer, or what trusted proxies forwarded.
fn client_ip(context: &RequestContext, proxies: &TrustedProxies) -> Option<IpAddr> {
    let peer = context.client_addr()?.ip();
    #[cfg(feature = "http")]
    if proxies.contains(peer)
        && let Some(headers) = context.headers()
    {
        return Some(proxies.client(peer, &forwarded(headers, proxies.header)));
    }
    Some(proxies.client(peer, &[]))
}

/// The forwarded addresses of a request, oldest first, from `header` alone: each entry of
/// every line of it, in order (RFC 9110 section 5.3); for `Forwarded`, the `for=` of each
/// element (RFC 7239 section 4). An entry that is not UTF-8 is unreadable (`None`) without
/// spoiling the entries after it, the ones the proxies appended.
#[cfg(feature = "http")]
fn forwarded(headers: &http::HeaderMap, header: ForwardedHeader) -> Vec<Option<IpAddr>> {
    headers
        .get_all(header.name())
        .iter()
        .flat_map(|line| line.as_bytes().split(|b| *b == b','))
        .map(|entry| {
            let entry = std::str::from_utf8(entry).ok()?;
            match header {
                ForwardedHeader::XForwardedFor => node_ip(entry),
                ForwardedHeader::Forwarded => entry.split(';').find_map(|pair| {
                    let (key, value) = pair.trim().split_once('=')?;
                    key.trim()
                        .eq_ignore_ascii_case("for")
                        .then(|| node_ip(value))?
                }),
            }
        })
        .collect()
}

/// The address of a node (RFC 7239 section 6): `192.0.2.43`, `"192.0.2.43:4711"`,
/// `"[2001:db8::1]:4711"`, `2001:db8::1`; `None` for `unknown`, an obfuscated name (`_hidden`)
/// or anything unreadable.
#[cfg(feature = "http")]
fn node_ip(node: &str) -> Option<IpAddr> {
    let node = node.trim().trim_matches('"');
    if let Ok(ip) = node.parse() {
        return Some(ip);
    }
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    let (host, port) = node.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Principal;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_match_by_prefix() {
        let proxies = TrustedProxies::parse(["10.0.0.0/8", "192.168.1.7", "fd00::/8"]).unwrap();
        assert!(proxies.contains(ip("10.200.3.4")));
        assert!(!proxies.contains(ip("11.0.0.1")));
        assert!(proxies.contains(ip("192.168.1.7")));
        assert!(!proxies.contains(ip("192.168.1.8")));
        assert!(proxies.contains(ip("fd12::1")));
        assert!(proxies.contains(ip("::ffff:10.0.0.1")));
        assert!(TrustedProxies::parse(["10.0.0.0/33"]).is_err());
        assert!(TrustedProxies::parse(["proxy.local"]).is_err());
        assert!(
            TrustedProxies::parse(["0.0.0.0/0"])
                .unwrap()
                .contains(ip("8.8.8.8"))
        );
    }

    #[test]
    fn forwarded_addresses_count_only_behind_trusted_proxies() {
        let proxies = TrustedProxies::parse(["10.0.0.0/8"]).unwrap();
        let chain = [
            Some(ip("1.1.1.1")),
            Some(ip("2.2.2.2")),
            Some(ip("10.0.0.9")),
        ];
        // The peer is a trusted proxy: skip trusted hops from the right.
        assert_eq!(proxies.client(ip("10.0.0.1"), &chain), ip("2.2.2.2"));
        // An untrusted peer is the client, whatever it claims.
        assert_eq!(proxies.client(ip("3.3.3.3"), &chain), ip("3.3.3.3"));
        // A hop the proxy could not name stops the walk at that proxy.
        assert_eq!(proxies.client(ip("10.0.0.1"), &[None]), ip("10.0.0.1"));
        // Nothing trusted: no header counts.
        assert_eq!(
            TrustedProxies::new().client(ip("10.0.0.1"), &chain),
            ip("10.0.0.1")
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn only_the_configured_header_is_read_every_line_in_order() {
        let mut headers = http::HeaderMap::new();
        headers.append("x-forwarded-for", "1.1.1.1, 2.2.2.2".parse().unwrap());
        headers.append("x-forwarded-for", "[2001:db8::1]:80".parse().unwrap());
        headers.append(
            http::header::FORWARDED,
            "for=192.0.2.60;proto=http, For=\"[2001:db8:cafe::17]:4711\", for=unknown, for=\"198.51.100.1:8080\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            forwarded(&headers, ForwardedHeader::XForwardedFor),
            [
                Some(ip("1.1.1.1")),
                Some(ip("2.2.2.2")),
                Some(ip("2001:db8::1"))
            ]
        );
        assert_eq!(
            forwarded(&headers, ForwardedHeader::Forwarded),
            [
                Some(ip("192.0.2.60")),
                Some(ip("2001:db8:cafe::17")),
                None,
                Some(ip("198.51.100.1"))
            ]
        );
        // A client's bytes that are not UTF-8 spoil only their own entry, not the address the
        // proxy appended to the same line.
        let mut headers = http::HeaderMap::new();
        let line = http::HeaderValue::from_bytes(b"\xff\xfe, 203.0.113.9").unwrap();
        headers.append("x-forwarded-for", line);
        assert_eq!(
            forwarded(&headers, ForwardedHeader::XForwardedFor),
            [None, Some(ip("203.0.113.9"))]
        );
    }

    #[test]
    fn ipv6_addresses_are_keyed_by_their_64_ipv4_by_the_address() {
        assert_eq!(address_key(ip("203.0.113.7")), "203.0.113.7");
        assert_eq!(address_key(ip("::ffff:203.0.113.7")), "203.0.113.7");
        assert_eq!(address_key(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
        assert_eq!(address_key(ip("2001:db8:1:2::ffff")), "2001:db8:1:2::/64");
        assert_eq!(address_key(ip("::1")), "::/64");
    }

    #[cfg(feature = "http")]
    #[test]
    fn over_http_a_caller_without_a_principal_is_keyed_by_its_address_session_or_not() {
        let proxies = TrustedProxies::new();
        let mut parts = http::Request::new(()).into_parts().0;
        parts.extensions.insert(crate::auth::ClientAddr(
            "198.51.100.4:5000".parse().unwrap(),
        ));
        let http = RequestContext::new().with_http_parts(std::sync::Arc::new(parts));
        assert_eq!(caller_key(&http, &proxies), "addr:198.51.100.4");
        let in_session = http.clone().with_caller("s1");
        assert_eq!(caller_key(&in_session, &proxies), "addr:198.51.100.4");
        let with_token = in_session.with_principal(Principal::new("alice"));
        assert_eq!(caller_key(&with_token, &proxies), r#"sub:[null,"alice"]"#);
    }

    #[test]
    fn without_an_address_the_session_then_one_shared_bucket() {
        // Over stdio or in-process (a `Tester`): no address; one connection is one client.
        let proxies = TrustedProxies::new();
        let both = RequestContext::new()
            .with_caller("s1")
            .with_principal(Principal::new("alice"));
        assert_eq!(caller_key(&both, &proxies), r#"sub:[null,"alice"]"#);
        assert_eq!(
            caller_key(&RequestContext::new().with_caller("s1"), &proxies),
            "session:s1"
        );
        assert_eq!(caller_key(&RequestContext::new(), &proxies), "");
    }

    #[test]
    fn subjects_of_issuers_never_share_a_bucket() {
        let proxies = TrustedProxies::new();
        let caller = |iss: &str, sub: &str| {
            let claims = serde_json::json!({"iss": iss, "sub": sub});
            let principal = Principal::from_claims(claims.as_object().unwrap().clone()).unwrap();
            caller_key(&RequestContext::new().with_principal(principal), &proxies)
        };
        assert_ne!(caller("a b", "c"), caller("a", "b c"));
        assert_eq!(caller("a", "b"), caller("a", "b"));
    }
}
