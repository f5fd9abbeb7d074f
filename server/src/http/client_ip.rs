//! Who the client is, behind trusted reverse proxies.
//!
//! Behind a proxy, every request comes from the proxy's address: rate limits
//! would then count all users as one, and the audit log would name the proxy.
//! An operator names the proxies' networks (`RAPPORT_TRUSTED_PROXIES`). A
//! request whose TCP peer lies in them is from the address those proxies
//! forwarded (`Forwarded: for=…`, else `X-Forwarded-For`), read from the
//! right: the first address that is not itself a trusted proxy. Anyone else's
//! headers are ignored, since a client can write any header it likes.
//! [`resolve`] does this once per request; handlers take [`ClientIp`].

use std::{
    net::{IpAddr, SocketAddr},
    str::FromStr,
    sync::Arc,
};

use axum::{
    extract::{ConnectInfo, FromRequestParts, Request, State},
    http::{request::Parts, HeaderMap},
    middleware::Next,
    response::Response,
};

/// The networks of trusted reverse proxies (empty: the TCP peer is the client).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<ipnet::IpNet>);

impl FromStr for TrustedProxies {
    type Err = String;

    /// A comma-separated list of networks or addresses (`10.0.0.0/8, ::1`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                n.parse::<ipnet::IpNet>()
                    .or_else(|_| n.parse::<IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| format!("{n:?} is not a network (10.0.0.0/8) or an address"))
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }
}

impl TrustedProxies {
    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client of a request from `peer` with these headers.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for hop in forwarded_for(headers).into_iter().rev() {
            match hop {
                Some(ip) if self.trusts(ip) => client = ip,
                Some(ip) => return ip,
                // A hop the proxies did not write legibly: stop at the last
                // address they vouch for.
                None => return client,
            }
        }
        client
    }
}

/// The forwarded-for chain, first hop first: the `for=` of `Forwarded` when a
/// proxy sent it (RFC 7239), else `X-Forwarded-For`. `None` marks a hop that is
/// not an address (`unknown`, an obfuscated name, garbage).
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().map(str::to_string).unwrap_or_default())
            .collect()
    };
    let forwarded = values("forwarded");
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|v| v.split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.split_once('='))
                    .find(|(key, _)| key.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, node)| node_ip(node.trim().trim_matches('"')))
            })
            .collect();
    }
    values("x-forwarded-for")
        .iter()
        .flat_map(|v| v.split(','))
        .map(|hop| node_ip(hop.trim()))
        .collect()
}

/// The address of a node: `192.0.2.7`, `192.0.2.7:4711`, `[2001:db8::1]:4711`
/// or `2001:db8::1`.
fn node_ip(node: &str) -> Option<IpAddr> {
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            node.strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
                .and_then(|(ip, _)| ip.parse().ok())
        })
}

/// The request's client address, as [`resolve`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

/// Finds the request's client once ([`TrustedProxies::client_of`]) for every
/// handler, limit and audit entry after it. Its state is the server's
/// trusted proxies alone.
pub async fn resolve(State(proxies): State<Arc<TrustedProxies>>, mut req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ci| ci.0.ip())
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let ip = proxies.client_of(peer, req.headers());
    req.extensions_mut().insert(ClientIp(ip));
    next.run(req).await
}

impl ClientIp {
    /// The client of a request that [`resolve`] saw (else its TCP peer).
    pub fn of(parts: &Parts) -> IpAddr {
        parts
            .extensions
            .get::<ClientIp>()
            .map(|c| c.0)
            .or_else(|| parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ci| ci.0.ip()))
            .unwrap_or(IpAddr::from([127, 0, 0, 1]))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp(ClientIp::of(parts)))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_proxy_names_the_client() {
        let proxies: TrustedProxies = "10.0.0.0/8, 127.0.0.1".parse().unwrap();
        let forwarded = headers(&[("x-forwarded-for", "203.0.113.9, 10.1.1.1")]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &forwarded), ip("203.0.113.9"));
        assert_eq!(
            proxies.client_of(ip("198.51.100.4"), &forwarded),
            ip("198.51.100.4"),
            "anyone else's header is theirs to write"
        );
        assert_eq!(
            TrustedProxies::default().client_of(ip("10.0.0.2"), &forwarded),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn the_chain_is_read_from_the_right() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client wrote a first hop itself: the proxy appended the real one.
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9")]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &spoofed), ip("203.0.113.9"));
        let split = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "203.0.113.9, 10.0.0.7"),
        ]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &split), ip("203.0.113.9"));
        let garbage = headers(&[("x-forwarded-for", "203.0.113.9, nonsense, 10.0.0.7")]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &garbage), ip("10.0.0.7"));
        let all_proxies = headers(&[("x-forwarded-for", "10.0.0.9")]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &all_proxies), ip("10.0.0.9"));
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let forwarded = headers(&[
            ("forwarded", r#"for="[2001:db8::1]:4711";proto=https, for=10.0.0.5"#),
            ("x-forwarded-for", "198.51.100.1"),
        ]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &forwarded), ip("2001:db8::1"));
        let with_port = headers(&[("forwarded", "for=203.0.113.9:1234;by=10.0.0.2")]);
        assert_eq!(proxies.client_of(ip("10.0.0.2"), &with_port), ip("203.0.113.9"));
    }

    #[test]
    fn a_bad_list_names_the_entry() {
        assert_eq!(
            "10.0.0.0/8, proxy".parse::<TrustedProxies>().unwrap_err(),
            r#""proxy" is not a network (10.0.0.0/8) or an address"#
        );
        assert_eq!("".parse::<TrustedProxies>().unwrap(), TrustedProxies::default());
    }
}
