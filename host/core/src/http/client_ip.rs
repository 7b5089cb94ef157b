//! The caller's IP address as allowlists and per-IP limits must see it.
//!
//! The socket peer is the truth. `X-Forwarded-For` is read only when the peer
//! is a configured trusted proxy, and then the right-most address that is not
//! itself a trusted proxy is taken, since everything left of it was written by
//! the client. A dual-stack listener reports IPv4 peers as `::ffff:a.b.c.d`;
//! addresses are canonicalised so they match IPv4 ranges.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::Request;
use ipnet::IpNet;

/// Parses `10.0.0.0/8`, `192.168.1.7` or `2001:db8::/32` into a network; a
/// bare address is a single-host network.
pub fn parse_net(text: &str) -> Result<IpNet, String> {
    let text = text.trim();
    if let Ok(net) = text.parse::<IpNet>() {
        return Ok(canonical_net(net));
    }
    text.parse::<IpAddr>()
        .map(|ip| IpNet::from(ip.to_canonical()))
        .map_err(|_| format!("not an IP address or CIDR range: {text}"))
}

fn canonical_net(net: IpNet) -> IpNet {
    match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96).unwrap_or(net),
            None => net,
        },
        other => other.trunc(),
    }
}

pub fn contains(nets: &[IpNet], ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    nets.iter().any(|n| n.contains(&ip))
}

/// The client address of a request, honouring trusted proxies only.
pub fn client_ip<B>(req: &Request<B>, trusted: &[IpNet]) -> IpAddr {
    // In-process calls (tests through `oneshot`) carry no socket; they count
    // as loopback.
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_canonical())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if trusted.is_empty() || !contains(trusted, peer) {
        return peer;
    }
    let forwarded = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect::<Vec<_>>();
    for hop in forwarded.iter().rev() {
        match hop.parse::<IpAddr>() {
            Ok(ip) if contains(trusted, ip) => continue,
            Ok(ip) => return ip.to_canonical(),
            // A malformed hop means the chain cannot be trusted past here.
            Err(_) => return peer,
        }
    }
    peer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(peer: &str, xff: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().uri("/");
        if let Some(x) = xff {
            builder = builder.header("x-forwarded-for", x);
        }
        let mut r = builder.body(()).unwrap();
        r.extensions_mut()
            .insert(ConnectInfo(peer.parse::<SocketAddr>().unwrap()));
        r
    }

    #[test]
    fn ipv4_peers_on_a_dual_stack_listener_match_ipv4_ranges() {
        let nets = vec![parse_net("203.0.113.0/24").unwrap()];
        let ip = client_ip(&req("[::ffff:203.0.113.9]:5000", None), &[]);
        assert_eq!(ip.to_string(), "203.0.113.9");
        assert!(contains(&nets, ip));
        assert!(contains(&nets, "::ffff:203.0.113.200".parse().unwrap()));
        assert!(!contains(&nets, "203.0.114.1".parse().unwrap()));
        // A mapped range in the allowlist is an IPv4 range too.
        let mapped = parse_net("::ffff:198.51.100.0/120").unwrap();
        assert_eq!(mapped.to_string(), "198.51.100.0/24");
    }

    #[test]
    fn forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy() {
        let trusted = vec![parse_net("10.0.0.0/8").unwrap()];
        // Untrusted peer: header ignored.
        let ip = client_ip(&req("198.51.100.1:1", Some("1.2.3.4")), &trusted);
        assert_eq!(ip.to_string(), "198.51.100.1");
        // Trusted peer: right-most untrusted hop.
        let ip = client_ip(
            &req("10.0.0.5:1", Some("6.6.6.6, 1.2.3.4, 10.0.0.9")),
            &trusted,
        );
        assert_eq!(ip.to_string(), "1.2.3.4");
        // No trust configured at all: header ignored.
        let ip = client_ip(&req("10.0.0.5:1", Some("1.2.3.4")), &[]);
        assert_eq!(ip.to_string(), "10.0.0.5");
    }
}
