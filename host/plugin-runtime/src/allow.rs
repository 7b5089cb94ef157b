//! Allowed-host rules of `plugin.toml`: `scheme://host[:port]`.
//!
//! `host` is an exact name or `*.suffix` (any subdomain of `suffix`, not
//! `suffix` itself). Without a port only the scheme's default port matches;
//! `:*` matches any port (useful for local stubs on ephemeral ports). Rules
//! constrain names only: the SSRF guard still refuses private, loopback and
//! metadata addresses after DNS, whatever the rule says.

use serde::{Serialize, Serializer};
use std::fmt;
use url::Url;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Port {
    Default,
    Any,
    Exact(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    scheme: String,
    /// Lower-case host, or the suffix (with leading dot) for wildcards.
    host: String,
    wildcard: bool,
    port: Port,
    text: String,
}

impl Serialize for HostRule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl HostRule {
    pub fn parse(text: &str) -> Result<HostRule, String> {
        let (scheme, rest) = text
            .split_once("://")
            .ok_or("expected scheme://host[:port]")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("scheme {scheme:?} is not http or https"));
        }
        if rest.contains('/') || rest.contains('@') || rest.contains('?') || rest.contains('#') {
            return Err(
                "a rule names a scheme, host and port only (no path, user or query)".into(),
            );
        }
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, "*")) => (h, Port::Any),
            Some((h, p)) => (
                h,
                Port::Exact(p.parse().map_err(|_| format!("bad port {p:?}"))?),
            ),
            None => (rest, Port::Default),
        };
        let host = host.to_ascii_lowercase();
        let (wildcard, host) = match host.strip_prefix("*.") {
            Some(suffix) => (true, format!(".{suffix}")),
            None => (false, host),
        };
        let bare = host.trim_start_matches('.');
        if bare.is_empty() || bare.contains('*') || !bare.split('.').all(|l| !l.is_empty()) {
            return Err(format!(
                "bad host pattern {:?} (use a name or *.suffix)",
                rest
            ));
        }
        Ok(HostRule {
            scheme,
            host,
            wildcard,
            port,
            text: text.to_string(),
        })
    }

    /// A rule allowing exactly the origin of `url` (used for the host's
    /// base-URL override).
    pub fn for_origin(url: &Url) -> Option<HostRule> {
        let host = url.host_str()?.to_ascii_lowercase();
        let port = url.port().map(Port::Exact).unwrap_or(Port::Default);
        Some(HostRule {
            scheme: url.scheme().to_string(),
            host,
            wildcard: false,
            port,
            text: format!("{} (base-url override)", url.origin().ascii_serialization()),
        })
    }

    pub fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        let host_ok = if self.wildcard {
            host.ends_with(&self.host) && host.len() > self.host.len()
        } else {
            host == self.host
        };
        let port_ok = match self.port {
            Port::Any => true,
            Port::Default => url.port().is_none(),
            Port::Exact(p) => url.port_or_known_default() == Some(p),
        };
        url.scheme() == self.scheme && host_ok && port_ok
    }
}

/// Checks `url` against `rules`, naming the refusing rule set on failure.
pub fn check(plugin: &str, rules: &[HostRule], url: &Url) -> Result<(), String> {
    if rules.iter().any(|r| r.matches(url)) {
        return Ok(());
    }
    let origin = url.origin().ascii_serialization();
    if rules.is_empty() {
        return Err(format!(
            "allowed_hosts of plugin {plugin}: {origin} refused, the plugin declares no allowed hosts"
        ));
    }
    let list: Vec<&str> = rules.iter().map(|r| r.text.as_str()).collect();
    Err(format!(
        "allowed_hosts of plugin {plugin}: {origin} matches none of [{}]",
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rule: &str, url: &str) -> bool {
        HostRule::parse(rule)
            .unwrap()
            .matches(&Url::parse(url).unwrap())
    }

    #[test]
    fn matching() {
        assert!(m("https://api.acme.com", "https://API.acme.com/v1?x=1"));
        assert!(!m("https://api.acme.com", "http://api.acme.com/"));
        assert!(!m("https://api.acme.com", "https://api.acme.com:8443/"));
        assert!(m("https://api.acme.com:8443", "https://api.acme.com:8443/"));
        assert!(m("https://*.acme.com", "https://eu.api.acme.com/"));
        assert!(!m("https://*.acme.com", "https://acme.com/"));
        assert!(!m("https://*.acme.com", "https://evilacme.com/"));
        assert!(m("http://localhost:*", "http://localhost:41234/"));
        assert!(HostRule::parse("ftp://x.com").is_err());
        assert!(HostRule::parse("https://x.com/path").is_err());
        assert!(HostRule::parse("https://*").is_err());
    }

    #[test]
    fn denial_names_the_rules() {
        let rules = vec![HostRule::parse("https://api.acme.com").unwrap()];
        let e = check("p", &rules, &Url::parse("https://evil.com/").unwrap()).unwrap_err();
        assert_eq!(
            e,
            "allowed_hosts of plugin p: https://evil.com matches none of [https://api.acme.com]"
        );
    }
}
