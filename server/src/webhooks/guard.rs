//! The SSRF guard: webhook URLs are chosen by tenants, so without it any tenant
//! admin could make Rapport POST to its own loopback, the private network or a cloud
//! metadata service. Addresses are checked after DNS resolution, by the resolver the
//! HTTP client connects with, so a name that resolves to a private address (or
//! changes between check and use) is refused too. URLs with a literal IP skip DNS
//! and are checked before the request.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    str::FromStr,
    sync::Arc,
};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Which non-public addresses outgoing requests (webhooks, the co-browsing
/// browser) may reach anyway: `RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS`, which
/// takes `false` (none, the default), `true` (all: the guard is off) or a
/// comma-separated list of networks (`127.0.0.0/8,::1`), so that a test can let
/// its own loopback site through and still see private and metadata addresses
/// refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowedNetworks {
    /// Only public addresses.
    #[default]
    None,
    /// Every address: the guard is off.
    All,
    /// Public addresses and these networks.
    Only(Vec<ipnet::IpNet>),
}

impl AllowedNetworks {
    /// Whether a request may connect to `ip`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        is_public(ip)
            || match self {
                AllowedNetworks::None => false,
                AllowedNetworks::All => true,
                AllowedNetworks::Only(nets) => nets.iter().any(|n| n.contains(&ip)),
            }
    }
}

impl FromStr for AllowedNetworks {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "false" | "no" | "0" => Ok(AllowedNetworks::None),
            "true" | "yes" | "1" => Ok(AllowedNetworks::All),
            list => list
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| {
                    n.parse::<ipnet::IpNet>()
                        .or_else(|_| n.parse::<IpAddr>().map(ipnet::IpNet::from))
                        .map_err(|_| format!("{n} is neither true, false nor a network such as 127.0.0.0/8"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(AllowedNetworks::Only),
        }
    }
}

/// Whether `ip` is a public unicast address that a webhook may reach.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16, including the cloud metadata address
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local, including fd00:ec2::254 (metadata)
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (segments[0] == 0x2001 && segments[1] == 0x0db8)) // documentation
}

/// Longest wait for a name's addresses.
const LOOKUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A resolver that drops non-public addresses (unless allowed) and fails when none
/// is left.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    allowed: AllowedNetworks,
}

impl GuardedResolver {
    /// A resolver for the client that also lets `allowed` through.
    pub fn new(allowed: AllowedNetworks) -> Arc<Self> {
        Arc::new(GuardedResolver { allowed })
    }
}

/// Looks `host` up and keeps the addresses `allowed` lets through; `Ok(empty)`
/// when there were some but none is allowed.
pub async fn resolve_allowed(host: &str, port: u16, allowed: &AllowedNetworks) -> Result<Vec<SocketAddr>, String> {
    // The system resolver can wait far longer than a request may take; a name
    // that does not answer in time is a failure like any other.
    let found: Vec<SocketAddr> = tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((host, port)))
        .await
        .map_err(|_| format!("looking up {host} took longer than {} s", LOOKUP_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot look up {host}: {e}"))?
        .collect();
    Ok(found.into_iter().filter(|a| allowed.allows(a.ip())).collect())
}

/// The error a refused address gives; its text ends up in the delivery log.
#[derive(Debug, thiserror::Error)]
#[error("refused: {0} resolves only to non-public addresses (set RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS to allow)")]
pub struct Refused(pub String);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let networks = self.allowed.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let allowed = resolve_allowed(&host, 0, &networks).await?;
            if allowed.is_empty() {
                return Err(Box::new(Refused(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{is_public, AllowedNetworks};

    #[test]
    fn a_list_of_networks_allows_only_those() {
        let allowed: AllowedNetworks = "127.0.0.0/8, ::1".parse().unwrap();
        assert!(allowed.allows("127.0.0.1".parse().unwrap()));
        assert!(allowed.allows("::1".parse().unwrap()));
        assert!(allowed.allows("93.184.216.34".parse().unwrap()));
        assert!(!allowed.allows("10.0.0.1".parse().unwrap()));
        assert!(!allowed.allows("169.254.169.254".parse().unwrap()));
        assert_eq!("true".parse::<AllowedNetworks>().unwrap(), AllowedNetworks::All);
        assert_eq!("false".parse::<AllowedNetworks>().unwrap(), AllowedNetworks::None);
        assert!("private".parse::<AllowedNetworks>().is_err());
        assert!(AllowedNetworks::All.allows("169.254.169.254".parse().unwrap()));
        assert!(!AllowedNetworks::None.allows("127.0.0.1".parse().unwrap()));
    }

    #[test]
    fn refuses_every_internal_range() {
        for refused in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(refused.parse().unwrap()), "{refused} must be refused");
        }
        for allowed in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "64:ff9b::5db8:d822"] {
            assert!(is_public(allowed.parse().unwrap()), "{allowed} must be allowed");
        }
    }
}
