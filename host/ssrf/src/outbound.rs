//! The outbound policy for connections that are not HTTP: SMTP and IMAP to
//! a customer's mail server, DNS over TCP, anything else a user names by host
//! and port.
//!
//! The rule is the one the HTTP client applies: resolve the name once, refuse
//! it if any address is denied, and connect only to the addresses checked, so
//! a rebinding DNS server gets no second lookup to answer differently.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;

use crate::resolver::lookup_checked;
use crate::{GuardError, GuardPolicy};

/// Resolves `host` (a name or an IP literal, IPv6 with or without brackets)
/// and checks every address under `policy`; returns them with `port`.
///
/// Literals go through the same system lookup as names, so forms that
/// `getaddrinfo` accepts and `std` does not (`0177.0.0.1`) are judged by the
/// address they really mean.
pub async fn resolve_checked(
    policy: &GuardPolicy,
    host: &str,
    port: u16,
) -> Result<Vec<SocketAddr>, GuardError> {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    if bare.is_empty() {
        return Err(GuardError::InvalidUrl("empty host".into()));
    }
    lookup_checked(bare, port, policy).await
}

/// Opens a TCP connection to `host:port` after [`resolve_checked`], trying
/// the checked addresses in order within `timeout` overall.
pub async fn connect_checked(
    policy: &GuardPolicy,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<TcpStream, GuardError> {
    let attempt = async {
        let addrs = resolve_checked(policy, host, port).await?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(format!("{addr}: {e}")),
            }
        }
        Err(GuardError::Connect(last.unwrap_or_default()))
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .map_err(|_| GuardError::Timeout)?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(loopback: bool, nets: &[&str]) -> GuardPolicy {
        GuardPolicy {
            allow_loopback: loopback,
            allow_nets: nets.iter().map(|n| n.parse().unwrap()).collect(),
            ..GuardPolicy::strict()
        }
    }

    #[tokio::test]
    async fn private_loopback_and_metadata_literals_are_refused_by_default() {
        let strict = policy(false, &[]);
        for host in [
            "127.0.0.1",
            "10.1.2.3",
            "169.254.169.254",
            "[::1]",
            "0177.0.0.1",
            "localhost",
        ] {
            let e = resolve_checked(&strict, host, 25).await.unwrap_err();
            assert!(e.is_blocked(), "{host}: {e}");
            assert!(e.to_string().starts_with("Blocked by SSRF guard"), "{e}");
        }
    }

    #[tokio::test]
    async fn the_loopback_allowance_opens_loopback_only() {
        let p = policy(true, &[]);
        assert!(resolve_checked(&p, "127.0.0.1", 25).await.is_ok());
        assert!(resolve_checked(&p, "::1", 25).await.is_ok());
        for host in [
            "10.1.2.3",
            "192.168.1.1",
            "169.254.169.254",
            "fd00:ec2::254",
        ] {
            assert!(
                resolve_checked(&p, host, 25)
                    .await
                    .unwrap_err()
                    .is_blocked(),
                "{host}"
            );
        }
    }

    #[tokio::test]
    async fn the_operator_allowlist_opens_listed_networks_but_never_metadata() {
        let p = policy(false, &["10.0.0.0/8", "169.254.0.0/16", "fd00::/8"]);
        assert_eq!(
            resolve_checked(&p, "10.20.30.40", 993).await.unwrap(),
            vec!["10.20.30.40:993".parse().unwrap()]
        );
        assert!(resolve_checked(&p, "::ffff:10.1.1.1", 993).await.is_ok());
        assert!(resolve_checked(&p, "169.254.1.1", 993).await.is_ok());
        for host in [
            "169.254.169.254",
            "fd00:ec2::254",
            "192.168.1.1",
            "127.0.0.1",
        ] {
            assert!(
                resolve_checked(&p, host, 993)
                    .await
                    .unwrap_err()
                    .is_blocked(),
                "{host}"
            );
        }
    }

    #[tokio::test]
    async fn connect_reaches_a_loopback_listener_only_when_allowed() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let t = Duration::from_secs(2);
        let refused = connect_checked(&policy(false, &[]), "127.0.0.1", port, t).await;
        assert!(refused.unwrap_err().is_blocked());
        let stream = connect_checked(&policy(true, &[]), "127.0.0.1", port, t)
            .await
            .unwrap();
        assert_eq!(stream.peer_addr().unwrap().port(), port);
    }
}
