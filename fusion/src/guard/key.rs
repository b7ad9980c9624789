//! Whose rate-limit bucket a call spends: the authenticated subject, else the transport
//! session, else (a stateless HTTP request) the client's address, read from `Forwarded` or
//! `X-Forwarded-For` only when the peer is a proxy the guards trust.

use std::fmt;
use std::net::IpAddr;

use crate::context::RequestContext;

/// The networks of the reverse proxies (load balancers, ingress) in front of the server,
/// whose `Forwarded` (RFC 7239) and `X-Forwarded-For` headers the rate limits believe.
///
/// A stateless HTTP request (no principal, no session) is keyed by the client's address. When
/// the TCP peer ([`ClientAddr`](crate::auth::ClientAddr)) is not in this list, that peer is
/// the client and the headers are ignored: any client can write them. When it is, the
/// forwarded addresses are read right to left (each proxy appends the address it received the
/// request from), skipping the trusted ones; the first untrusted address is the client. Empty
/// by default: no header is believed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    nets: Vec<(IpAddr, u8)>,
}

impl TrustedProxies {
    /// No trusted proxy.
    pub fn new() -> TrustedProxies {
        TrustedProxies::default()
    }

    /// The networks in `list`, each an address (`10.0.0.7`, `::1`) or a network in CIDR
    /// notation (`10.0.0.0/8`, `fd00::/8`).
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
        f.debug_list()
            .entries(self.nets.iter().map(|(ip, p)| format!("{ip}/{p}")))
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
/// source so that a subject never shares a bucket with a session or an address: `sub:` and the
/// principal's issuer and subject, else `session:` and the transport session, else `addr:` and
/// the client's IP address (stateless HTTP), else the empty key (one bucket shared by every
/// unidentified call).
pub(super) fn caller_key(context: &RequestContext, proxies: &TrustedProxies) -> String {
    if let Some(principal) = context.principal() {
        // `sub` is unique per issuer (RFC 7519 section 4.1.2), so the issuer is part of it.
        let issuer = principal
            .claims()
            .get("iss")
            .and_then(|iss| iss.as_str())
            .unwrap_or_default();
        return format!("sub:{issuer} {}", principal.subject());
    }
    if let Some(session) = context.caller() {
        return format!("session:{session}");
    }
    match client_ip(context, proxies) {
        Some(ip) => format!("addr:{ip}"),
        None => String::new(),
    }
}

/// The client's IP address: the peer, or what trusted proxies forwarded.
fn client_ip(context: &RequestContext, proxies: &TrustedProxies) -> Option<IpAddr> {
    let peer = context.client_addr()?.ip();
    #[cfg(feature = "http")]
    if proxies.contains(peer)
        && let Some(headers) = context.headers()
    {
        return Some(proxies.client(peer, &forwarded(headers)));
    }
    Some(proxies.client(peer, &[]))
}

/// The forwarded addresses of a request, oldest first: the `for=` of each `Forwarded` element
/// (RFC 7239 section 4), or, without that header, each `X-Forwarded-For` entry.
#[cfg(feature = "http")]
fn forwarded(headers: &http::HeaderMap) -> Vec<Option<IpAddr>> {
    let lines = |name| {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap_or("\u{0}"))
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .collect::<Vec<_>>()
    };
    let elements = lines(http::header::FORWARDED);
    if !elements.is_empty() {
        return elements
            .into_iter()
            .map(|element| {
                let node = element.split(';').find_map(|pair| {
                    let (key, value) = pair.trim().split_once('=')?;
                    key.trim().eq_ignore_ascii_case("for").then_some(value)
                });
                node.and_then(node_ip)
            })
            .collect();
    }
    lines(http::header::HeaderName::from_static("x-forwarded-for"))
        .into_iter()
        .map(node_ip)
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
    fn forwarded_headers_parse() {
        let mut headers = http::HeaderMap::new();
        headers.append("x-forwarded-for", "1.1.1.1, 2.2.2.2".parse().unwrap());
        headers.append("x-forwarded-for", "[2001:db8::1]:80".parse().unwrap());
        assert_eq!(
            forwarded(&headers),
            [
                Some(ip("1.1.1.1")),
                Some(ip("2.2.2.2")),
                Some(ip("2001:db8::1"))
            ]
        );
        headers.insert(
            http::header::FORWARDED,
            "for=192.0.2.60;proto=http, For=\"[2001:db8:cafe::17]:4711\", for=unknown, for=\"198.51.100.1:8080\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            forwarded(&headers),
            [
                Some(ip("192.0.2.60")),
                Some(ip("2001:db8:cafe::17")),
                None,
                Some(ip("198.51.100.1"))
            ]
        );
    }

    #[test]
    fn the_subject_comes_first_then_the_session() {
        let proxies = TrustedProxies::new();
        let both = RequestContext::new()
            .with_caller("s1")
            .with_principal(Principal::new("alice"));
        assert_eq!(caller_key(&both, &proxies), "sub: alice");
        assert_eq!(
            caller_key(&RequestContext::new().with_caller("s1"), &proxies),
            "session:s1"
        );
        assert_eq!(caller_key(&RequestContext::new(), &proxies), "");
    }
}
