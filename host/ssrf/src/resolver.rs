//! The DNS resolver reqwest uses for every connection to a domain name.
//!
//! Checking a name's addresses in one lookup and then letting the HTTP client
//! look the name up again would let a rebinding DNS server answer "public" the
//! first time and "127.0.0.1" the second. Doing the lookup inside reqwest's
//! resolver removes the second lookup: the addresses we check are the only
//! addresses the connector ever sees.

use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::GuardError;
use crate::GuardPolicy;
use crate::ip::blocked_reason;

/// A reqwest [`Resolve`] implementation that refuses names resolving to any
/// blocked address.
///
/// [`GuardedClient`](crate::GuardedClient) installs it itself; it is public so
/// that other clients (for example an SMTP relay connector) can reuse the same
/// check through [`GuardedResolver::resolve_checked`].
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    policy: Arc<GuardPolicy>,
}

impl GuardedResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: GuardPolicy) -> Self {
        Self::from_shared(Arc::new(policy))
    }

    pub(crate) fn from_shared(policy: Arc<GuardPolicy>) -> Self {
        Self { policy }
    }

    /// Resolves `host` with the policy's nameservers, else the system
    /// resolver (which honours /etc/hosts, so
    /// `localhost` is caught too) and returns its addresses with port 0, or
    /// [`GuardError::Blocked`] if any address is blocked.
    ///
    /// One blocked address refuses the whole name rather than being filtered
    /// out: a name that mixes public and internal addresses is either
    /// misconfigured or an attack, and silently connecting to the remainder
    /// would hide that.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<SocketAddr>, GuardError> {
        lookup_checked(host, 0, &self.policy).await
    }
}

/// Resolves `host` (with the policy's nameservers, else the system resolver)
/// and applies the policy to every address; the addresses come back with
/// `port`. Shared by the HTTP
/// resolver and the non-HTTP connections of `outbound.rs`.
pub(crate) async fn lookup_checked(
    host: &str,
    port: u16,
    policy: &GuardPolicy,
) -> Result<Vec<SocketAddr>, GuardError> {
    let literal = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>();
    let addrs: Vec<SocketAddr> = if let Ok(ip) = literal {
        vec![SocketAddr::new(ip, port)]
    } else if policy.nameservers.is_empty() {
        tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| GuardError::Connect(format!("DNS lookup of {host} failed: {e}")))?
            .collect()
    } else {
        // The operator's nameservers answer every lookup the server makes.
        let resolver = crate::dns::shared(&policy.nameservers).map_err(GuardError::Connect)?;
        let fqdn = format!("{}.", host.trim_end_matches('.'));
        resolver
            .lookup_ip(fqdn)
            .await
            .map_err(|e| GuardError::Connect(format!("DNS lookup of {host} failed: {e}")))?
            .iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect()
    };
    check_resolved(host, addrs, policy)
}

/// Applies the policy to a lookup result; split out so tests can feed it
/// addresses no real DNS server would return on this machine.
fn check_resolved(
    host: &str,
    addrs: Vec<SocketAddr>,
    policy: &GuardPolicy,
) -> Result<Vec<SocketAddr>, GuardError> {
    if addrs.is_empty() {
        return Err(GuardError::Connect(format!("{host} has no addresses")));
    }
    for addr in &addrs {
        if let Some(reason) = blocked_reason(addr.ip(), policy) {
            tracing::warn!(host, %reason, "SSRF guard refused a resolved address");
            // An address given as itself (a non-HTTP connection to a
            // literal) was not resolved from anything.
            if addr.ip().to_string() == host {
                return Err(GuardError::Blocked(reason));
            }
            return Err(GuardError::Blocked(format!(
                "{reason} (resolved from {host})"
            )));
        }
    }
    Ok(addrs)
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // The GuardError is boxed as the error source so the client can find
            // it again in reqwest's error chain and report it as Blocked rather
            // than as a generic connect failure.
            let addrs = resolver.resolve_checked(&host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        SocketAddr::new(s.parse().unwrap(), 0)
    }

    #[test]
    fn one_blocked_address_refuses_the_name() {
        let p = GuardPolicy::strict();
        let err =
            check_resolved("mixed.example", vec![sa("8.8.8.8"), sa("10.0.0.1")], &p).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Blocked by SSRF guard: 10.0.0.1 is private (10.0.0.0/8) (resolved from mixed.example)"
        );
        let err = check_resolved(
            "v6.example",
            vec![sa("2606:4700::1111"), sa("::ffff:169.254.169.254")],
            &p,
        )
        .unwrap_err();
        assert!(err.is_blocked());
    }

    #[test]
    fn public_addresses_pass_and_empty_is_an_error() {
        let p = GuardPolicy::strict();
        let ok =
            check_resolved("ok.example", vec![sa("8.8.8.8"), sa("2606:4700::1111")], &p).unwrap();
        assert_eq!(ok.len(), 2);
        let err = check_resolved("none.example", vec![], &p).unwrap_err();
        assert!(matches!(err, GuardError::Connect(_)));
    }

    #[tokio::test]
    async fn localhost_is_refused_under_strict() {
        let r = GuardedResolver::new(GuardPolicy::strict());
        let err = r.resolve_checked("localhost").await.unwrap_err();
        assert!(
            err.to_string().starts_with("Blocked by SSRF guard: "),
            "{err}"
        );
    }

    #[tokio::test]
    async fn localhost_is_allowed_for_tests() {
        let r = GuardedResolver::new(GuardPolicy::allow_loopback_for_tests());
        let addrs = r.resolve_checked("localhost").await.unwrap();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()));
    }

    #[tokio::test]
    async fn reqwest_trait_path_refuses_too() {
        let r = GuardedResolver::new(GuardPolicy::strict());
        let err = match Resolve::resolve(&r, "localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost resolved under strict"),
            Err(e) => e,
        };
        assert!(
            err.downcast_ref::<GuardError>()
                .is_some_and(GuardError::is_blocked)
        );
    }
}
