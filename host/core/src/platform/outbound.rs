//! The common outbound policy: the one set of address rules every
//! user-directed connection follows (webhooks, send accounts' SMTP and IMAP,
//! the crawler, workflow HTTP, DNS over TCP, plugins' HTTP import).
//!
//! The rules live in `outreach-ssrf` (deny lists, the checked resolver,
//! [`outreach_ssrf::connect_checked`] for non-HTTP protocols); this module
//! builds the policy from the configuration once, at start-up.

use outreach_ssrf::{GuardError, GuardPolicy, Url, check_url};

use crate::config::Config;
use crate::error::{ApiError, ApiResult};

/// Longest receiver URL accepted.
pub const MAX_URL_LEN: usize = 2048;

/// The policy for this server: strict, plus the operator's CIDR allowlist,
/// plus loopback when a test-only setting asks for it.
pub fn policy(config: &Config) -> anyhow::Result<GuardPolicy> {
    let allow_nets = config.outbound_allow_nets()?;
    let allow_loopback = config.outbound_allows_loopback();
    if allow_loopback {
        tracing::warn!(
            "outbound connections may reach loopback addresses (unsafe_outbound_allow_loopback); tests only"
        );
    }
    Ok(GuardPolicy {
        allow_loopback,
        allow_nets,
        nameservers: config.dns_nameserver_addrs()?,
        ..GuardPolicy::strict()
    })
}

/// Checks the URL of a receiver the user names (a webhook, a Slack
/// incoming webhook): HTTPS (plain HTTP only to loopback, and only under
/// the test-only `unsafe_outbound_allow_loopback`), and an address the
/// policy admits, literal or after DNS; `what` names it in the 400. A name
/// that does not resolve yet is accepted; every call checks the address
/// again after DNS. Returns the URL as it will be stored.
pub async fn check_receiver_url(policy: &GuardPolicy, raw: &str, what: &str) -> ApiResult<String> {
    let raw = raw.trim();
    if raw.len() > MAX_URL_LEN {
        return Err(ApiError::bad_request(format!(
            "{what} must be at most {MAX_URL_LEN} characters"
        )));
    }
    let url = Url::parse(raw).map_err(|e| ApiError::bad_request(format!("Invalid url: {e}")))?;
    let loopback_host = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if policy.allow_loopback && loopback_host => {}
        _ => return Err(ApiError::bad_request(format!("{what} must use HTTPS"))),
    }
    let blocked = |e: GuardError| match e {
        GuardError::Blocked(_) => Err(ApiError::bad_request(e.to_string())),
        _ => Ok(()),
    };
    if let Err(e) = check_url(&url, policy) {
        blocked(e)?;
        return Err(ApiError::bad_request("Invalid url"));
    }
    if let Some(url::Host::Domain(host)) = url.host()
        && let Err(e) = outreach_ssrf::resolve_checked(policy, host, 0).await
    {
        blocked(e)?;
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_refuses_loopback_private_and_metadata() {
        let p = policy(&Config::default()).unwrap();
        for a in ["127.0.0.1", "10.0.0.1", "169.254.169.254"] {
            assert!(outreach_ssrf::check_ip(ip(a), &p).is_err(), "{a}");
        }
        assert!(outreach_ssrf::check_ip(ip("93.184.215.14"), &p).is_ok());
    }

    #[test]
    fn either_loopback_setting_opens_loopback_and_nothing_else() {
        for alias in [false, true] {
            let mut config = Config::default();
            if alias {
                config.unsafe_plugins_allow_loopback = true;
            } else {
                config.unsafe_outbound_allow_loopback = true;
            }
            let p = policy(&config).unwrap();
            assert!(outreach_ssrf::check_ip(ip("127.0.0.1"), &p).is_ok());
            assert!(outreach_ssrf::check_ip(ip("10.0.0.1"), &p).is_err());
            assert!(outreach_ssrf::check_ip(ip("169.254.169.254"), &p).is_err());
        }
    }

    #[test]
    fn the_allowlist_comes_from_configuration_and_environment() {
        let mut config = Config::default();
        config
            .apply_env(|k| match k {
                "OUTREACH_OUTBOUND_ALLOW_CIDRS" => Some("10.0.5.0/24, 192.168.7.9".into()),
                "OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK" => Some("true".into()),
                _ => None,
            })
            .unwrap();
        let p = policy(&config).unwrap();
        assert!(p.allow_loopback);
        assert!(outreach_ssrf::check_ip(ip("10.0.5.20"), &p).is_ok());
        assert!(outreach_ssrf::check_ip(ip("192.168.7.9"), &p).is_ok());
        assert!(outreach_ssrf::check_ip(ip("10.0.6.1"), &p).is_err());

        let mut bad = Config::default();
        let e = bad
            .apply_env(|k| (k == "OUTREACH_OUTBOUND_ALLOW_CIDRS").then(|| "10.0.0.0/99".into()))
            .unwrap_err();
        assert!(format!("{e:#}").contains("outbound_allow_cidrs"), "{e:#}");
    }
}
