//! The one way the server builds a DNS resolver: the operator's
//! `dns_nameservers` (UDP, with TCP for truncated answers), or the system's
//! configuration when the list is empty. The core's shared resolver, the
//! inbox's spoofing check and the guarded client's lookups all use it, so
//! every lookup follows the same setting.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;

/// How long one query may take, and how often it is tried, unless a caller
/// needs otherwise.
pub const TIMEOUT: Duration = Duration::from_secs(3);
pub const ATTEMPTS: usize = 2;

/// A resolver on `servers` (the system's configuration when empty). A
/// machine without a readable system configuration gets a resolver with no
/// servers, whose every lookup fails, and a warning naming `purpose`:
/// DNS serves checks, not the server's start-up. The hosts file is never
/// read: the names asked about are on the Internet.
pub fn resolver(
    servers: &[SocketAddr],
    timeout: Duration,
    attempts: usize,
    purpose: &str,
) -> Result<TokioResolver, String> {
    let mut builder = if servers.is_empty() {
        match TokioResolver::builder_tokio() {
            Ok(builder) => builder,
            Err(e) => {
                tracing::warn!(error = %e, "no system DNS configuration; {purpose} lookups will fail until dns_nameservers is set");
                TokioResolver::builder_with_config(
                    ResolverConfig::from_name_servers(Vec::new()),
                    TokioRuntimeProvider::default(),
                )
            }
        }
    } else {
        TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(servers.iter().map(name_server).collect()),
            TokioRuntimeProvider::default(),
        )
    };
    let opts = builder.options_mut();
    opts.timeout = timeout;
    opts.attempts = attempts;
    opts.use_hosts_file = ResolveHosts::Never;
    builder
        .build()
        .map_err(|e| format!("building the {purpose} DNS resolver: {e}"))
}

fn name_server(addr: &SocketAddr) -> NameServerConfig {
    let mut server = NameServerConfig::udp_and_tcp(addr.ip());
    for connection in &mut server.connections {
        connection.port = addr.port();
    }
    server
}

/// The guarded client's resolver for `servers`, built once per list and
/// shared (a resolver keeps its answer cache and connections).
pub(crate) fn shared(servers: &[SocketAddr]) -> Result<TokioResolver, String> {
    static RESOLVERS: OnceLock<Mutex<HashMap<Vec<SocketAddr>, TokioResolver>>> = OnceLock::new();
    let mut map = RESOLVERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(r) = map.get(servers) {
        return Ok(r.clone());
    }
    let r = resolver(servers, TIMEOUT, ATTEMPTS, "outbound")?;
    map.insert(servers.to_vec(), r.clone());
    Ok(r)
}
