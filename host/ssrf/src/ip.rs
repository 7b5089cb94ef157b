//! Classification of IP addresses and URL hosts.
//!
//! The tables below are deny lists built from the IANA special-purpose address
//! registries plus the well-known cloud metadata endpoints. The first matching
//! entry wins, so narrow entries (metadata, broadcast) come before the ranges that
//! contain them; that only changes the reason in the error message, never the
//! verdict.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};
use url::{Host, Url};

use crate::{GuardError, GuardPolicy};

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

#[allow(clippy::too_many_arguments)]
const fn v6(a: u16, b: u16, c: u16, d: u16, e: u16, f: u16, g: u16, h: u16, len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), len)
}

const METADATA: &str = "a cloud metadata endpoint";

/// The only range the test-only `allow_loopback` flag opens on IPv4.
const V4_LOOPBACK: Ipv4Net = v4(127, 0, 0, 0, 8);

/// IPv4 ranges that outbound requests must never reach.
const V4_BLOCKED: &[(Ipv4Net, &str)] = &[
    // AWS, GCP, Azure, DigitalOcean and OpenStack use 169.254.169.254, Alibaba
    // uses 100.100.100.200 and older Oracle Cloud hosts use 192.0.0.192. They are
    // inside ranges blocked below anyway; listing them first gives a clearer reason.
    (v4(169, 254, 169, 254, 32), METADATA),
    (v4(100, 100, 100, 200, 32), METADATA),
    (v4(192, 0, 0, 192, 32), METADATA),
    (v4(255, 255, 255, 255, 32), "the broadcast address"),
    (v4(0, 0, 0, 0, 32), "unspecified"),
    // Linux connects 0.x.y.z to the local host, so the whole block is dangerous.
    (v4(0, 0, 0, 0, 8), "in \"this network\" 0.0.0.0/8"),
    (v4(10, 0, 0, 0, 8), "private (10.0.0.0/8)"),
    (
        v4(100, 64, 0, 0, 10),
        "shared address space (CGNAT 100.64.0.0/10)",
    ),
    (V4_LOOPBACK, "loopback"),
    (v4(169, 254, 0, 0, 16), "link-local"),
    (v4(172, 16, 0, 0, 12), "private (172.16.0.0/12)"),
    (
        v4(192, 0, 0, 0, 24),
        "an IETF protocol assignment (192.0.0.0/24)",
    ),
    (v4(192, 0, 2, 0, 24), "documentation (TEST-NET-1)"),
    (
        v4(192, 88, 99, 0, 24),
        "a deprecated 6to4 relay anycast address",
    ),
    (v4(192, 168, 0, 0, 16), "private (192.168.0.0/16)"),
    (v4(198, 18, 0, 0, 15), "benchmarking (198.18.0.0/15)"),
    (v4(198, 51, 100, 0, 24), "documentation (TEST-NET-2)"),
    (v4(203, 0, 113, 0, 24), "documentation (TEST-NET-3)"),
    (v4(224, 0, 0, 0, 4), "multicast"),
    (v4(240, 0, 0, 0, 4), "reserved (240.0.0.0/4)"),
];

/// `::ffff:a.b.c.d`: the kernel sends these to the embedded IPv4 address over
/// IPv4, so the embedded address is classified exactly like a plain IPv4 one.
const V6_MAPPED: Ipv6Net = v6(0, 0, 0, 0, 0, 0xffff, 0, 0, 96);

/// `64:ff9b::a.b.c.d`, the NAT64 well-known prefix (RFC 6052). On an IPv6-only
/// network with DNS64 this is how every IPv4 site is reached, so denying it
/// outright would break such deployments; instead the embedded IPv4 address is
/// classified, which is exactly the host a NAT64 gateway would forward to.
const V6_NAT64: Ipv6Net = v6(0x64, 0xff9b, 0, 0, 0, 0, 0, 0, 96);

/// IPv6 ranges that outbound requests must never reach.
///
/// The IPv6 forms that embed IPv4 in some other way than the two above are
/// denied as whole ranges rather than classified: they are deprecated or
/// operator-defined (the local-use NAT64 prefix length is chosen per network),
/// so a legitimate public endpoint never needs them and we cannot know for sure
/// which IPv4 address a relay would actually reach.
const V6_BLOCKED: &[(Ipv6Net, &str)] = &[
    (v6(0, 0, 0, 0, 0, 0, 0, 0, 128), "unspecified"),
    (v6(0, 0, 0, 0, 0, 0, 0, 1, 128), "loopback"),
    // The AWS metadata service over IPv6 (Nitro instances).
    (v6(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254, 128), METADATA),
    (
        v6(0, 0, 0, 0, 0, 0, 0, 0, 96),
        "IPv4-compatible (deprecated ::/96)",
    ),
    (
        v6(0, 0, 0, 0, 0xffff, 0, 0, 0, 96),
        "IPv4-translated (::ffff:0:0:0/96)",
    ),
    (
        v6(0x64, 0xff9b, 1, 0, 0, 0, 0, 0, 48),
        "local-use NAT64 (64:ff9b:1::/48)",
    ),
    (
        v6(0x100, 0, 0, 0, 0, 0, 0, 0, 64),
        "discard-only (100::/64)",
    ),
    (v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 32), "Teredo (2001::/32)"),
    (
        v6(0x2001, 2, 0, 0, 0, 0, 0, 0, 48),
        "benchmarking (2001:2::/48)",
    ),
    (
        v6(0x2001, 0x10, 0, 0, 0, 0, 0, 0, 28),
        "ORCHID (2001:10::/28)",
    ),
    (
        v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0, 32),
        "documentation (2001:db8::/32)",
    ),
    (v6(0x2002, 0, 0, 0, 0, 0, 0, 0, 16), "6to4 (2002::/16)"),
    (
        v6(0x3fff, 0, 0, 0, 0, 0, 0, 0, 20),
        "documentation (3fff::/20)",
    ),
    (
        v6(0xfc00, 0, 0, 0, 0, 0, 0, 0, 7),
        "unique-local (fc00::/7)",
    ),
    (
        v6(0xfe80, 0, 0, 0, 0, 0, 0, 0, 10),
        "link-local (fe80::/10)",
    ),
    (
        v6(0xfec0, 0, 0, 0, 0, 0, 0, 0, 10),
        "site-local (deprecated fec0::/10)",
    ),
    (v6(0xff00, 0, 0, 0, 0, 0, 0, 0, 8), "multicast"),
];

/// Everything routable on the public IPv6 internet lies in 2000::/3; anything
/// outside it that the table above does not name is unallocated or special, so
/// it is denied too (a deny list alone would miss future special ranges).
const V6_GLOBAL_UNICAST: Ipv6Net = v6(0x2000, 0, 0, 0, 0, 0, 0, 0, 3);

/// Returns why `ip` is blocked, as a phrase completing "<ip> is ...", or `None`
/// when it is a public address. `allow_loopback` opens 127.0.0.0/8 only.
fn classify_v4(ip: Ipv4Addr, allow_loopback: bool) -> Option<&'static str> {
    if allow_loopback && V4_LOOPBACK.contains(&ip) {
        return None;
    }
    V4_BLOCKED
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map(|(_, what)| *what)
}

/// Returns the full reason `ip` is blocked under `policy`, or `None` if allowed.
/// The operator's allowlist opens any denied address but a metadata endpoint.
pub(crate) fn blocked_reason(ip: IpAddr, policy: &GuardPolicy) -> Option<String> {
    let reason = denied_reason(ip, policy)?;
    let canonical = ip.to_canonical();
    let listed = policy
        .allow_nets
        .iter()
        .any(|net| net.contains(&ip) || net.contains(&canonical));
    if listed && !is_metadata(canonical) {
        return None;
    }
    Some(reason)
}

/// Whether `ip` is one of the cloud metadata endpoints of the deny lists.
fn is_metadata(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => V4_BLOCKED
            .iter()
            .any(|(net, what)| *what == METADATA && net.contains(&v4)),
        IpAddr::V6(v6) => V6_BLOCKED
            .iter()
            .any(|(net, what)| *what == METADATA && net.contains(&v6)),
    }
}

/// The deny lists alone, before the operator's allowlist.
fn denied_reason(ip: IpAddr, policy: &GuardPolicy) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => {
            classify_v4(v4, policy.allow_loopback).map(|what| format!("{ip} is {what}"))
        }
        IpAddr::V6(v6) => {
            if policy.allow_loopback && v6 == Ipv6Addr::LOCALHOST {
                return None;
            }
            if V6_MAPPED.contains(&v6) {
                // A mapped loopback address really is the local loopback, so the
                // test-only allowance applies to it as well.
                let embedded = Ipv4Addr::from_bits(v6.to_bits() as u32);
                return classify_v4(embedded, policy.allow_loopback)
                    .map(|what| format!("{ip} is IPv4-mapped {embedded}, which is {what}"));
            }
            if V6_NAT64.contains(&v6) {
                // Through a NAT64 gateway "127.0.0.1" is the gateway's own loopback,
                // never ours, so the test-only allowance must not apply here.
                let embedded = Ipv4Addr::from_bits(v6.to_bits() as u32);
                return classify_v4(embedded, false)
                    .map(|what| format!("{ip} is NAT64 for {embedded}, which is {what}"));
            }
            if let Some((_, what)) = V6_BLOCKED.iter().find(|(net, _)| net.contains(&v6)) {
                return Some(format!("{ip} is {what}"));
            }
            if !V6_GLOBAL_UNICAST.contains(&v6) {
                return Some(format!("{ip} is outside global unicast 2000::/3"));
            }
            None
        }
    }
}

/// Checks one IP address against the deny lists.
///
/// This is what the resolver applies to every address a name resolves to, and
/// what [`check_url`] applies to IP-literal hosts.
pub fn check_ip(ip: IpAddr, policy: &GuardPolicy) -> Result<(), GuardError> {
    match blocked_reason(ip, policy) {
        Some(reason) => Err(GuardError::Blocked(reason)),
        None => Ok(()),
    }
}

/// Checks the parts of a URL that can be judged without DNS: the scheme against
/// the allowlist, and the host when it is an IP literal.
///
/// Domain names pass here; they are checked by the client's resolver at connect
/// time, on the very addresses the connection then uses. The host is taken from
/// `url::Url::host`, i.e. after WHATWG parsing, which is what reqwest connects to:
/// `http://0177.0.0.1/`, `http://2130706433/` and `http://0x7f.1/` all arrive
/// here as `Host::Ipv4(127.0.0.1)`.
pub fn check_url(url: &Url, policy: &GuardPolicy) -> Result<(), GuardError> {
    let scheme = url.scheme();
    if !policy
        .allowed_schemes
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(scheme))
    {
        return Err(GuardError::SchemeNotAllowed(scheme.to_owned()));
    }
    match url.host() {
        None => Err(GuardError::InvalidUrl(format!("{url} has no host"))),
        Some(Host::Ipv4(ip)) => check_ip(IpAddr::V4(ip), policy),
        Some(Host::Ipv6(ip)) => check_ip(IpAddr::V6(ip), policy),
        Some(Host::Domain(domain)) => {
            // For http and https the url crate never leaves an address in a
            // `Domain`, but for a non-special scheme someone added to the
            // allowlist it would, and hyper's connector parses such a host as an
            // address and connects without asking our resolver. Checking it here
            // closes that path; it is an extra check, not the primary parse.
            let bare = domain.trim_start_matches('[').trim_end_matches(']');
            match bare.parse::<IpAddr>() {
                Ok(ip) => check_ip(ip, policy),
                Err(_) => Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> GuardPolicy {
        GuardPolicy::strict()
    }

    fn blocked(s: &str) -> bool {
        check_ip(s.parse().unwrap(), &strict()).is_err()
    }

    #[test]
    fn ipv4_ranges_are_blocked() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "100.100.100.200",
            "192.0.0.192",
            "192.0.0.170",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
            "192.88.99.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.254",
            "255.255.255.255",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
    }

    #[test]
    fn public_ipv4_is_allowed() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert!(!blocked(ip), "{ip} should be allowed");
        }
    }

    #[test]
    fn ipv6_ranges_are_blocked() {
        for ip in [
            "::",
            "::1",
            "fe80::1",
            "febf:ffff::1",
            "fc00::1",
            "fd12:3456::1",
            "fd00:ec2::254",
            "ff02::1",
            "ff0e::1",
            "fec0::1",
            "2001:db8::1",
            "3fff::1",
            "2001:2::1",
            "2001:10::1",
            "100::1",
            // Not allocated for global unicast.
            "4000::1",
            "1::1",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
    }

    #[test]
    fn public_ipv6_is_allowed() {
        for ip in [
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:4860::8888",
        ] {
            assert!(!blocked(ip), "{ip} should be allowed");
        }
    }

    #[test]
    fn ipv4_mapped_is_classified_by_embedded_address() {
        assert!(blocked("::ffff:127.0.0.1"));
        assert!(blocked("::ffff:7f00:1"));
        assert!(blocked("::ffff:169.254.169.254"));
        assert!(blocked("::ffff:10.0.0.1"));
        assert!(blocked("::ffff:0.0.0.0"));
        assert!(!blocked("::ffff:8.8.8.8"));
        let err = check_ip("::ffff:127.0.0.1".parse().unwrap(), &strict()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Blocked by SSRF guard: ::ffff:127.0.0.1 is IPv4-mapped 127.0.0.1, which is loopback"
        );
    }

    #[test]
    fn ipv4_compatible_and_translated_are_denied_whole() {
        assert!(blocked("::127.0.0.1"));
        assert!(blocked("::8.8.8.8"));
        assert!(blocked("::ffff:0:127.0.0.1"));
        assert!(blocked("::ffff:0:8.8.8.8"));
    }

    #[test]
    fn nat64_is_classified_by_embedded_address() {
        assert!(blocked("64:ff9b::127.0.0.1"));
        assert!(blocked("64:ff9b::7f00:1"));
        assert!(blocked("64:ff9b::169.254.169.254"));
        assert!(blocked("64:ff9b::10.0.0.1"));
        assert!(!blocked("64:ff9b::8.8.8.8"));
        // The local-use prefix is denied whole, public embedded address or not.
        assert!(blocked("64:ff9b:1::8.8.8.8"));
        assert!(blocked("64:ff9b:1:ffff::1"));
    }

    #[test]
    fn sixtofour_and_teredo_are_denied_whole() {
        // 2002:7f00:0001:: embeds 127.0.0.1; 2002:0808:0808:: embeds 8.8.8.8.
        assert!(blocked("2002:7f00:1::1"));
        assert!(blocked("2002:a9fe:a9fe::1"));
        assert!(blocked("2002:808:808::1"));
        assert!(blocked("2001::1"));
        assert!(blocked("2001:0:4136:e378:8000:63bf:3fff:fdd2"));
    }

    #[test]
    fn blocked_message_format() {
        let err = check_ip("127.0.0.1".parse().unwrap(), &strict()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Blocked by SSRF guard: 127.0.0.1 is loopback"
        );
        let err = check_ip("169.254.169.254".parse().unwrap(), &strict()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Blocked by SSRF guard: 169.254.169.254 is a cloud metadata endpoint"
        );
    }

    #[test]
    fn loopback_allowance_opens_loopback_only() {
        let p = GuardPolicy::allow_loopback_for_tests();
        for ip in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(
                check_ip(ip.parse().unwrap(), &p).is_ok(),
                "{ip} should be allowed"
            );
        }
        for ip in [
            "10.0.0.1",
            "192.168.0.1",
            "172.16.0.1",
            "169.254.169.254",
            "100.100.100.200",
            "fd00:ec2::254",
            "0.0.0.0",
            "::",
            "fe80::1",
            "::127.0.0.1",
            "64:ff9b::127.0.0.1",
            "2002:7f00:1::1",
        ] {
            assert!(
                check_ip(ip.parse().unwrap(), &p).is_err(),
                "{ip} should stay blocked"
            );
        }
    }

    fn url_blocked(s: &str) -> bool {
        let url = Url::parse(s).unwrap();
        matches!(check_url(&url, &strict()), Err(GuardError::Blocked(_)))
    }

    #[test]
    fn whatwg_forms_of_loopback_are_blocked() {
        for s in [
            "http://127.0.0.1/",
            "http://0177.0.0.1/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://017700000001/",
            "http://①②⑦.0.0.1/",
            "http://１２７.０.０.１/",
            "http://127.0.0.1./",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[0:0:0:0:0:ffff:7f00:1]/",
            "https://169.254.169.254/latest/meta-data/",
            "http://0xa9fea9fe/",
            "http://0/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
        ] {
            assert!(url_blocked(s), "{s} should be blocked");
        }
    }

    #[test]
    fn whatwg_parse_is_what_is_classified() {
        // Guards the assumption the module relies on: the url crate turns these
        // into IPv4 hosts, while std would refuse to parse them at all.
        for s in ["0177.0.0.1", "2130706433", "0x7f.1", "①②⑦.0.0.1"] {
            let url = Url::parse(&format!("http://{s}/")).unwrap();
            assert_eq!(url.host(), Some(Host::Ipv4(Ipv4Addr::LOCALHOST)), "{s}");
            assert!(s.parse::<Ipv4Addr>().is_err());
        }
    }

    #[test]
    fn domains_and_public_literals_pass_check_url() {
        for s in [
            "https://example.com/",
            "http://localhost:8080/",
            "http://8.8.8.8/",
            "http://[2606:4700::1111]/",
        ] {
            assert!(check_url(&Url::parse(s).unwrap(), &strict()).is_ok(), "{s}");
        }
    }

    #[test]
    fn schemes_outside_the_allowlist_are_refused() {
        for s in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "gopher://example.com/",
            "ws://example.com/",
        ] {
            let err = check_url(&Url::parse(s).unwrap(), &strict()).unwrap_err();
            assert!(matches!(err, GuardError::SchemeNotAllowed(_)), "{s}: {err}");
        }
        let mut p = strict();
        p.allowed_schemes = vec!["https".into()];
        let err = check_url(&Url::parse("http://example.com/").unwrap(), &p).unwrap_err();
        assert!(matches!(err, GuardError::SchemeNotAllowed(_)));
    }

    #[test]
    fn literal_address_in_non_special_scheme_domain_is_checked() {
        let mut p = strict();
        p.allowed_schemes.push("custom".into());
        let url = Url::parse("custom://127.0.0.1/").unwrap();
        assert!(matches!(url.host(), Some(Host::Domain(_))));
        assert!(matches!(check_url(&url, &p), Err(GuardError::Blocked(_))));
        let url = Url::parse("custom://[::1]/").unwrap();
        assert!(matches!(check_url(&url, &p), Err(GuardError::Blocked(_))));
    }
}
