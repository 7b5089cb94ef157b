//! The sender-authentication check of a reply (spec/1 "Inbox": replies
//! that fail sender authentication and whose apparent sender domain does
//! not match the connecting mail server are suspected spoofing; their
//! classification is deferred).
//!
//! [`SpoofCheck::check`] reads a raw message and answers an
//! [`Authentication`], stored as JSON on the reply row:
//!
//! 1. **Verdicts.** The topmost `Authentication-Results` header whose
//!    authserv-id is in `inbox_trusted_authserv_ids` gives SPF, DKIM and
//!    DMARC (`source` "authentication-results"): RFC 8601 §5 has the
//!    receiving server add its header above the ones the message arrived
//!    with, so a forged header with the same id sits below it. A header
//!    with another id, or none (Microsoft 365 writes none), is ignored; a
//!    trusted header that reports none of the three methods falls back to
//!    the own check. Otherwise we check ourselves with `mail-auth`
//!    (`source` "own-check"): DKIM over the message, SPF `check_host` for
//!    the connecting IP with the `Return-Path` address as MAIL FROM (the
//!    `From` address when there is no usable `Return-Path`; the HELO
//!    identity for the null sender `<>`), and DMARC (mail-auth's DMARCbis
//!    tree walk) when the From domain has a record. At most five DKIM
//!    signatures are verified (each costs a lookup), and the whole check
//!    is bounded by [`CHECK_TIMEOUT`].
//! 2. **The connecting server** comes from the `Received` chain: the
//!    topmost header (the one the mailbox's server added, "from HELO (rdns
//!    [IP]) by ...") that names a public IP address, skipping hops inside
//!    the receiving provider: a private, loopback or link-local address,
//!    or a name (the rDNS one, else the HELO) in the same organisational
//!    domain as the `by` host, such as an LMTP hand-over or an
//!    Exchange-internal relay. A message between two mailboxes of one
//!    provider (Gmail to Gmail) thus has no connecting server of its own;
//!    the provider's trusted header judges those. Postfix, Sendmail, Exim
//!    (`helo=`), qmail (`HELO x`), Gmail and Microsoft formats are read,
//!    IPv4 and IPv6 (`[IPv6:...]`, bare). Only the top eight headers are
//!    looked at: lower ones are written by the sender and prove nothing.
//! 3. **Failed** means DMARC fail, or, without a DMARC verdict (no record,
//!    permerror), neither an SPF pass nor a DKIM pass whose `d=` is in the
//!    From domain's organisational domain. A temperror (DNS trouble) where
//!    a pass could have been proves nothing: not failed.
//! 4. **Mismatch** means the From domain's organisational domain is not a
//!    suffix of the connecting server's HELO nor of its rDNS name (a server
//!    known only by its address matches no domain).
//! 5. `suspected = failed && mismatch`.
//!
//! We cannot judge, and answer not suspected with a `reason`, when there is
//! no trusted header and no `Received` header naming a public address
//! (`source` "none": a message that never crossed the Internet, or whose
//! chain we cannot read), when the From domain is unknown, and when the
//! check panics or times out. Hostile input never errors or panics out of
//! `check`: it is best effort, never suspected unless proven.
//!
//! The organisational domain is approximated without the public suffix
//! list: the last two labels, three under a country code's common
//! second-level labels (`co.uk`, `com.au`...). A wrong guess errs towards
//! a match, i.e. towards not suspecting.
//!
//! Limits: the HELO name is chosen by the sender, so a spoofer that greets
//! with the spoofed domain's name "matches" (the spec's rule); the rDNS
//! name is the receiving server's finding and harder to fake.

use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use mail_auth::hickory_resolver::TokioResolver;
use mail_auth::hickory_resolver::config::{NameServerConfig, ResolveHosts, ResolverConfig};
use mail_auth::hickory_resolver::net::runtime::TokioRuntimeProvider;
use mail_auth::spf::verify::SpfParameters;
use mail_auth::{
    AuthenticatedMessage, DkimOutput, DkimResult, DmarcResult, MessageAuthenticator, SpfOutput,
    SpfResult, dmarc::verify::DmarcParameters,
};
use serde::Serialize;

use outreach_core::config::Config;

/// How long one DNS query may take, and how often it is tried (as the
/// core's shared resolver).
const DNS_TIMEOUT: Duration = Duration::from_secs(3);
const DNS_ATTEMPTS: usize = 2;

/// The longest a whole check may take; past it the reply is not suspected.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// DKIM signatures verified per message (each costs a DNS lookup).
const MAX_DKIM_SIGNATURES: usize = 5;

/// `Received` headers looked at from the top for the connecting server.
const MAX_RECEIVED_EXAMINED: usize = 8;

/// `Authentication-Results` headers looked at from the top.
const MAX_AUTH_RESULTS_EXAMINED: usize = 50;

/// Bytes of one header value that are read (longer values are cut).
const MAX_HEADER_VALUE: usize = 8 * 1024;

/// Second-level labels under which country-code domains register names
/// (`example.co.uk`): the organisational domain then has three labels.
const CC_SECOND_LEVELS: [&str; 16] = [
    "ac", "co", "com", "edu", "gen", "go", "gob", "gov", "ltd", "mil", "ne", "net", "nic", "or",
    "org", "sch",
];

/// What the check found; stored as JSON on the reply row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Authentication {
    /// Failed authentication and a From domain that does not match the
    /// connecting server: the reply's classification is deferred.
    pub suspected: bool,
    /// Where the verdicts come from: "authentication-results" (a trusted
    /// receiving server's header), "own-check" (DKIM, SPF and DMARC checked
    /// here) or "none" (nothing to judge by).
    pub source: &'static str,
    /// pass, fail, softfail, neutral, none, temperror, permerror (a trusted
    /// header's word as written, lower case).
    pub spf: String,
    /// The best DKIM result: pass when any signature passed.
    pub dkim: String,
    pub dmarc: String,
    /// The RFC 5322 From domain, lower case.
    pub from_domain: Option<String>,
    /// The connecting server's name: its rDNS name as the receiving server
    /// recorded it, else its HELO name.
    pub connecting_host: Option<String>,
    /// The name the connecting server greeted with (HELO/EHLO).
    pub helo: Option<String>,
    pub connecting_ip: Option<IpAddr>,
    /// Why the reply is suspected, or why it could not be judged; none when
    /// it passed.
    pub reason: Option<String>,
}

impl Authentication {
    fn undetermined(source: &'static str, reason: &str) -> Authentication {
        Authentication {
            suspected: false,
            source,
            spf: "none".into(),
            dkim: "none".into(),
            dmarc: "none".into(),
            from_domain: None,
            connecting_host: None,
            helo: None,
            connecting_ip: None,
            reason: Some(reason.to_string()),
        }
    }
}

/// The checker: a resolver on the service's nameservers and the trusted
/// authserv-ids. Cloning shares the resolver.
#[derive(Clone)]
pub struct SpoofCheck {
    authenticator: MessageAuthenticator,
    trusted_authserv_ids: Vec<String>,
}

impl std::fmt::Debug for SpoofCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpoofCheck")
            .field("trusted_authserv_ids", &self.trusted_authserv_ids)
            .finish_non_exhaustive()
    }
}

impl SpoofCheck {
    /// A checker whose every DNS lookup goes to `nameservers` (UDP, TCP for
    /// truncated answers), or to the system's resolver configuration when
    /// the list is empty, like the core's shared resolver. Authserv-ids
    /// compare without case and trailing dot.
    pub fn new(
        nameservers: &[SocketAddr],
        trusted_authserv_ids: Vec<String>,
    ) -> anyhow::Result<SpoofCheck> {
        let mut builder = if nameservers.is_empty() {
            match TokioResolver::builder_tokio() {
                Ok(builder) => builder,
                Err(e) => {
                    tracing::warn!(error = %e, "no system DNS configuration; the inbox's spoofing check cannot look up SPF, DKIM or DMARC until dns_nameservers is set");
                    TokioResolver::builder_with_config(
                        ResolverConfig::from_name_servers(Vec::new()),
                        TokioRuntimeProvider::default(),
                    )
                }
            }
        } else {
            TokioResolver::builder_with_config(
                ResolverConfig::from_name_servers(nameservers.iter().map(name_server).collect()),
                TokioRuntimeProvider::default(),
            )
        };
        let opts = builder.options_mut();
        opts.timeout = DNS_TIMEOUT;
        opts.attempts = DNS_ATTEMPTS;
        opts.use_hosts_file = ResolveHosts::Never;
        let resolver = builder
            .build()
            .map_err(|e| anyhow::anyhow!("building the spoofing check's DNS resolver: {e}"))?;
        let trusted_authserv_ids = trusted_authserv_ids
            .iter()
            .map(|id| normalize_id(id))
            .filter(|id| !id.is_empty())
            .collect();
        Ok(SpoofCheck {
            authenticator: MessageAuthenticator(resolver),
            trusted_authserv_ids,
        })
    }

    /// The checker `config` asks for: `dns_nameservers` and
    /// `inbox_trusted_authserv_ids`.
    pub fn from_config(config: &Config) -> anyhow::Result<SpoofCheck> {
        SpoofCheck::new(
            &config.dns_nameserver_addrs()?,
            config.inbox_trusted_authserv_ids.clone(),
        )
    }

    /// Checks one raw message (headers and body as fetched). Never fails:
    /// what cannot be judged is not suspected, with a `reason`.
    pub async fn check(&self, raw: &[u8]) -> Authentication {
        let run = AssertUnwindSafe(self.check_inner(raw)).catch_unwind();
        match tokio::time::timeout(CHECK_TIMEOUT, run).await {
            Ok(Ok(found)) => found,
            Ok(Err(_)) => {
                tracing::warn!("the spoofing check panicked on a message; not suspected");
                Authentication::undetermined("none", "the check failed on this message")
            }
            Err(_) => Authentication::undetermined(
                "own-check",
                "the check timed out (DNS did not answer in time)",
            ),
        }
    }

    async fn check_inner(&self, raw: &[u8]) -> Authentication {
        let scan = scan_headers(raw);
        let mut message = AuthenticatedMessage::parse(raw);
        if let Some(message) = &mut message {
            message.dkim_headers.truncate(MAX_DKIM_SIGNATURES);
        }
        let from_domain = author_domain(message.as_ref(), scan.from);
        let hop = connecting_hop(&scan.received);

        if let Some(results) = self.trusted_results(&scan.auth_results) {
            let verdicts = Verdicts::from_results(&results, from_domain.as_deref());
            // The Received chain names the server; the trusted header's
            // smtp.helo when the chain does not.
            let hop = hop.unwrap_or_else(|| Hop {
                helo: results.property("spf", "smtp.helo").and_then(domain_name),
                ..Hop::default()
            });
            return judge("authentication-results", verdicts, from_domain, &hop);
        }

        let Some(hop) = hop else {
            let mut found = Authentication::undetermined(
                "none",
                "no trusted Authentication-Results and no Received header naming a public address",
            );
            found.from_domain = from_domain;
            return found;
        };
        let Some(ip) = hop.ip else {
            // connecting_hop only returns hops with an address.
            return Authentication::undetermined("none", "no connecting address");
        };

        // DKIM.
        let dkim_outputs: Vec<DkimOutput<'_>> = match &message {
            Some(message) => self.authenticator.verify_dkim(message).await,
            None => Vec::new(),
        };

        // SPF: MAIL FROM (Return-Path, else From), HELO for the null sender.
        let mail_from = scan
            .return_path
            .and_then(return_path)
            .or_else(|| from_address(message.as_ref(), scan.from));
        let helo = hop.helo.as_deref().unwrap_or("");
        let host_domain = hop.by.as_deref().unwrap_or("localhost");
        let spf_output = match mail_from.as_deref() {
            Some(sender) if !sender.is_empty() => {
                self.authenticator
                    .verify_spf(SpfParameters::verify_mail_from(
                        ip,
                        helo,
                        host_domain,
                        sender,
                    ))
                    .await
            }
            _ if !helo.is_empty() => {
                self.authenticator
                    .verify_spf(SpfParameters::verify_ehlo(ip, helo, host_domain))
                    .await
            }
            _ => SpfOutput::new(String::new()).with_result(SpfResult::None),
        };
        let mail_from_domain = match mail_from.as_deref() {
            Some(sender) if !sender.is_empty() => sender
                .rsplit_once('@')
                .map_or(sender, |(_, domain)| domain)
                .to_string(),
            _ => helo.to_string(),
        };

        // DMARC, when the From domain is known.
        let dmarc = match (&message, &from_domain) {
            (Some(message), Some(_)) => {
                let output = self
                    .authenticator
                    .verify_dmarc(DmarcParameters::new(
                        message,
                        &dkim_outputs,
                        &mail_from_domain,
                        &spf_output,
                    ))
                    .await;
                dmarc_word(&output.result())
            }
            _ => "none",
        };

        let verdicts = Verdicts {
            spf: spf_word(spf_output.result()).to_string(),
            dkim: dkim_word(&dkim_outputs).to_string(),
            dmarc: dmarc.to_string(),
            aligned_dkim_pass: dkim_outputs.iter().any(|output| {
                output.result() == &DkimResult::Pass
                    && output
                        .signature()
                        .is_some_and(|signature| aligned(&signature.d, from_domain.as_deref()))
            }),
        };
        judge("own-check", verdicts, from_domain, &hop)
    }

    /// The topmost `Authentication-Results` header a trusted server wrote
    /// that reports SPF, DKIM or DMARC.
    fn trusted_results(&self, headers: &[&[u8]]) -> Option<AuthResults> {
        if self.trusted_authserv_ids.is_empty() {
            return None;
        }
        let results = headers
            .iter()
            .map(|value| parse_auth_results(value))
            .find(|r| {
                r.authserv_id
                    .as_ref()
                    .is_some_and(|id| self.trusted_authserv_ids.contains(id))
            })?;
        let reports = results
            .results
            .iter()
            .any(|r| matches!(r.method.as_str(), "spf" | "dkim" | "dmarc"));
        reports.then_some(results)
    }
}

fn name_server(addr: &SocketAddr) -> NameServerConfig {
    let mut server = NameServerConfig::udp_and_tcp(addr.ip());
    for connection in &mut server.connections {
        connection.port = addr.port();
    }
    server
}

fn normalize_id(id: &str) -> String {
    id.trim().trim_end_matches('.').to_ascii_lowercase()
}

// ---------------------------------------------------------------------------
// Judging

/// SPF, DKIM and DMARC words, and whether a DKIM pass is aligned with the
/// From domain.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verdicts {
    spf: String,
    dkim: String,
    dmarc: String,
    aligned_dkim_pass: bool,
}

impl Verdicts {
    fn from_results(results: &AuthResults, from_domain: Option<&str>) -> Verdicts {
        let first = |method: &str| {
            results
                .results
                .iter()
                .find(|r| r.method == method)
                .map_or_else(|| "none".to_string(), |r| r.result.clone())
        };
        let dkim: Vec<&ResInfo> = results
            .results
            .iter()
            .filter(|r| r.method == "dkim")
            .collect();
        let dkim_word = if dkim.iter().any(|r| r.result == "pass") {
            "pass".to_string()
        } else {
            dkim.first()
                .map_or_else(|| "none".to_string(), |r| r.result.clone())
        };
        // A pass whose signing domain the header does not name is taken as
        // aligned: not suspected unless proven.
        let aligned_dkim_pass = dkim.iter().any(|r| {
            r.result == "pass"
                && match r.prop("header.d").or_else(|| {
                    r.prop("header.i")
                        .map(|i| i.rsplit_once('@').map_or(i, |(_, d)| d))
                }) {
                    Some(d) => aligned(d, from_domain),
                    None => true,
                }
        });
        Verdicts {
            spf: first("spf"),
            dkim: dkim_word,
            dmarc: first("dmarc"),
            aligned_dkim_pass,
        }
    }

    /// `Ok(true)`: authentication failed; `Ok(false)`: it passed;
    /// `Err(why)`: no conclusion.
    fn failed(&self) -> Result<bool, String> {
        match self.dmarc.as_str() {
            "fail" => return Ok(true),
            "pass" => return Ok(false),
            "temperror" => return Err("DMARC could not be evaluated (temperror)".into()),
            _ => {}
        }
        if self.spf == "pass" || self.aligned_dkim_pass {
            return Ok(false);
        }
        if self.spf == "temperror" || self.dkim == "temperror" {
            return Err(format!(
                "a DNS error left authentication undecided (spf={}, dkim={})",
                self.spf, self.dkim
            ));
        }
        Ok(true)
    }

    fn failure(&self) -> String {
        if self.dmarc == "fail" {
            format!("DMARC fail (spf={}, dkim={})", self.spf, self.dkim)
        } else {
            format!(
                "no SPF pass and no aligned DKIM pass (spf={}, dkim={}, dmarc={})",
                self.spf, self.dkim, self.dmarc
            )
        }
    }
}

fn judge(
    source: &'static str,
    verdicts: Verdicts,
    from_domain: Option<String>,
    hop: &Hop,
) -> Authentication {
    let failed = verdicts.failed();
    let host = hop.rdns.clone().or_else(|| hop.helo.clone());
    let server = match (&host, hop.ip) {
        (Some(host), Some(ip)) => format!("{host} ({ip})"),
        (Some(host), None) => host.clone(),
        (None, Some(ip)) => ip.to_string(),
        (None, None) => String::new(),
    };
    let (suspected, reason) = match (failed, from_domain.as_deref()) {
        (Ok(false), _) => (false, None),
        (Err(why), _) => (false, Some(why)),
        (Ok(true), None) => (
            false,
            Some(format!(
                "{}, but the From domain is unknown",
                verdicts.failure()
            )),
        ),
        (Ok(true), Some(from)) => match mismatch(from, hop) {
            None => (
                false,
                Some(format!(
                    "{}, but the connecting server is unknown",
                    verdicts.failure()
                )),
            ),
            Some(false) => (
                false,
                Some(format!(
                    "{}, but the From domain {from} matches the connecting server {server}",
                    verdicts.failure()
                )),
            ),
            Some(true) => (
                true,
                Some(format!(
                    "{}, and the From domain {from} does not match the connecting server {server}",
                    verdicts.failure()
                )),
            ),
        },
    };
    Authentication {
        suspected,
        source,
        spf: verdicts.spf,
        dkim: verdicts.dkim,
        dmarc: verdicts.dmarc,
        from_domain,
        connecting_host: host,
        helo: hop.helo.clone(),
        connecting_ip: hop.ip,
        reason,
    }
}

/// Whether the From domain fails to match the connecting server: its
/// organisational domain is a suffix of neither the HELO nor the rDNS
/// name. `None` when nothing is known about the server.
fn mismatch(from_domain: &str, hop: &Hop) -> Option<bool> {
    let names: Vec<&str> = [hop.helo.as_deref(), hop.rdns.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if names.is_empty() {
        // A server known only by its address matches no domain.
        return hop.ip.map(|_| true);
    }
    let org = organizational_domain(from_domain);
    Some(!names.iter().any(|name| is_suffix(name, org)))
}

/// `name` is `suffix` or a subdomain of it.
fn is_suffix(name: &str, suffix: &str) -> bool {
    let name = name.trim_end_matches('.');
    let suffix = suffix.trim_end_matches('.');
    if suffix.is_empty() {
        return false;
    }
    name.eq_ignore_ascii_case(suffix)
        || (name.len() > suffix.len()
            && name.is_char_boundary(name.len() - suffix.len() - 1)
            && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix))
}

/// The organisational domain, approximated: the last two labels, three
/// under a country code's common second-level label.
fn organizational_domain(domain: &str) -> &str {
    let domain = domain.trim_end_matches('.');
    let labels: Vec<&str> = domain.rsplit('.').collect();
    let keep = match labels.as_slice() {
        [tld, second, _, ..]
            if tld.len() == 2
                && CC_SECOND_LEVELS
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(second)) =>
        {
            3
        }
        _ => 2,
    };
    if labels.len() <= keep {
        return domain;
    }
    let cut: usize = labels[..keep].iter().map(|l| l.len() + 1).sum();
    &domain[domain.len() + 1 - cut..]
}

/// A DKIM signing domain in the From domain's organisational domain (any
/// domain when the From domain is unknown).
fn aligned(signing_domain: &str, from_domain: Option<&str>) -> bool {
    match from_domain {
        Some(from) => {
            organizational_domain(signing_domain).eq_ignore_ascii_case(organizational_domain(from))
        }
        None => true,
    }
}

fn spf_word(result: SpfResult) -> &'static str {
    match result {
        SpfResult::Pass => "pass",
        SpfResult::Fail => "fail",
        SpfResult::SoftFail => "softfail",
        SpfResult::Neutral => "neutral",
        SpfResult::TempError => "temperror",
        SpfResult::PermError => "permerror",
        SpfResult::None => "none",
    }
}

/// The best DKIM result over the signatures: pass, temperror, fail,
/// permerror, neutral, none.
fn dkim_word(outputs: &[DkimOutput<'_>]) -> &'static str {
    let rank = |result: &DkimResult| match result {
        DkimResult::Pass => (0, "pass"),
        DkimResult::TempError(_) => (1, "temperror"),
        DkimResult::Fail(_) => (2, "fail"),
        DkimResult::PermError(_) => (3, "permerror"),
        DkimResult::Neutral(_) => (4, "neutral"),
        DkimResult::None => (5, "none"),
    };
    outputs
        .iter()
        .map(|output| rank(output.result()))
        .min_by_key(|(rank, _)| *rank)
        .map_or("none", |(_, word)| word)
}

fn dmarc_word(result: &DmarcResult) -> &'static str {
    match result {
        DmarcResult::Pass => "pass",
        DmarcResult::Fail(_) => "fail",
        DmarcResult::TempError(_) => "temperror",
        DmarcResult::PermError(_) => "permerror",
        DmarcResult::None => "none",
    }
}

// ---------------------------------------------------------------------------
// Headers

/// The header fields the check reads, in message order (topmost first).
#[derive(Debug, Default)]
struct Scan<'a> {
    received: Vec<&'a [u8]>,
    auth_results: Vec<&'a [u8]>,
    return_path: Option<&'a [u8]>,
    from: Option<&'a [u8]>,
}

/// One pass over the header section: a field starts on a line that does
/// not begin with white space and has a colon, continues over the lines
/// that do, and the section ends at the first empty line. Lines that are
/// neither are skipped. Linear in the header size.
fn scan_headers(raw: &[u8]) -> Scan<'_> {
    let mut scan = Scan::default();
    let mut fields: Vec<(&[u8], usize, usize)> = Vec::new();
    let mut pos = 0;
    let mut current: Option<(&[u8], usize, usize)> = None;
    while pos < raw.len() {
        let end = raw[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(raw.len(), |i| pos + i + 1);
        let line = &raw[pos..end];
        let content = line
            .strip_suffix(b"\n")
            .map_or(line, |l| l.strip_suffix(b"\r").unwrap_or(l));
        if content.is_empty() {
            break;
        }
        if matches!(content[0], b' ' | b'\t') {
            if let Some(field) = &mut current {
                field.2 = end;
            }
        } else {
            if let Some(field) = current.take() {
                fields.push(field);
            }
            if let Some(colon) = content.iter().position(|&b| b == b':') {
                current = Some((content[..colon].trim_ascii(), pos + colon + 1, end));
            }
        }
        pos = end;
    }
    if let Some(field) = current.take() {
        fields.push(field);
    }
    for (name, start, end) in fields {
        let value = &raw[start..end.min(start + MAX_HEADER_VALUE)];
        if name.eq_ignore_ascii_case(b"Received") {
            if scan.received.len() < MAX_RECEIVED_EXAMINED {
                scan.received.push(value);
            }
        } else if name.eq_ignore_ascii_case(b"Authentication-Results") {
            if scan.auth_results.len() < MAX_AUTH_RESULTS_EXAMINED {
                scan.auth_results.push(value);
            }
        } else if name.eq_ignore_ascii_case(b"Return-Path") {
            scan.return_path.get_or_insert(value);
        } else if name.eq_ignore_ascii_case(b"From") {
            scan.from.get_or_insert(value);
        }
    }
    scan
}

/// The From domain: mail-auth's parse of the From header (its first
/// address), else the text after the last `@` of the raw header.
fn author_domain(
    message: Option<&AuthenticatedMessage<'_>>,
    raw_from: Option<&[u8]>,
) -> Option<String> {
    from_address(message, raw_from)
        .and_then(|address| address.rsplit_once('@').and_then(|(_, d)| mail_domain(d)))
}

fn from_address(
    message: Option<&AuthenticatedMessage<'_>>,
    raw_from: Option<&[u8]>,
) -> Option<String> {
    if let Some(first) = message.and_then(|m| m.from.first()) {
        return Some(first.clone());
    }
    let text = String::from_utf8_lossy(raw_from?);
    let address = match (text.rfind('<'), text.rfind('>')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].trim().to_string(),
        _ => text.trim().to_string(),
    };
    address.contains('@').then(|| address.to_lowercase())
}

/// The Return-Path address: empty for the null sender `<>`, `None` when
/// the header holds no address.
fn return_path(value: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(value);
    let text = text.trim();
    let inner = match (text.find('<'), text.rfind('>')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].trim(),
        _ => text,
    };
    if inner.is_empty() {
        return Some(String::new());
    }
    let (local, domain) = inner.rsplit_once('@')?;
    let domain = mail_domain(domain)?;
    // A source route (@a,@b:user@domain) keeps only the mailbox.
    let local = local.rsplit_once(':').map_or(local, |(_, l)| l);
    Some(format!("{local}@{domain}"))
}

/// A mail domain as written in an address, lower case, without a trailing
/// dot; `None` when it cannot be one.
fn mail_domain(text: &str) -> Option<String> {
    let domain = text
        .trim()
        .trim_matches(|c| c == '>' || c == '"' || c == '\'')
        .trim_end_matches('.')
        .to_lowercase();
    let valid = !domain.is_empty()
        && domain.len() <= 253
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.contains("..")
        && !domain
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "@[]()<>,;:\\\"".contains(c));
    valid.then_some(domain)
}

/// A host name as found in a `Received` header: ASCII labels of letters,
/// digits, `-` and `_`, at least two, the last alphabetic (or an IDNA
/// label); lower case, no trailing dot.
fn domain_name(text: &str) -> Option<String> {
    let name = text
        .trim_matches(|c: char| "()[]<>,;:\"'".contains(c))
        .trim_end_matches('.')
        .to_ascii_lowercase();
    if name.len() < 3 || name.len() > 253 || !name.is_ascii() || name == "unknown" {
        return None;
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2 {
        return None;
    }
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let tld = labels[labels.len() - 1];
    let tld_ok =
        (tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic())) || tld.starts_with("xn--");
    (labels.iter().all(label_ok) && tld_ok).then_some(name)
}

// ---------------------------------------------------------------------------
// Received

/// One `Received` hop: where the message came from and who took it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Hop {
    ip: Option<IpAddr>,
    helo: Option<String>,
    rdns: Option<String>,
    by: Option<String>,
}

/// The connecting server: the topmost examined hop with a public address
/// that is not internal to the receiving provider.
fn connecting_hop(received: &[&[u8]]) -> Option<Hop> {
    received
        .iter()
        .filter_map(|value| parse_received(value))
        .find(|hop| {
            let Some(ip) = hop.ip else { return false };
            if !is_public(ip) {
                return false;
            }
            // The rDNS name when the receiving server recorded one, else
            // the HELO (Exchange-internal hops carry only a HELO name).
            let name = hop.rdns.as_ref().or(hop.helo.as_ref());
            let internal = match (name, &hop.by) {
                (Some(name), Some(by)) => {
                    organizational_domain(name).eq_ignore_ascii_case(organizational_domain(by))
                }
                _ => false,
            };
            !internal
        })
}

/// Not private, loopback, link-local, unspecified, shared (CGNAT) or
/// unique-local: an address a hop on the Internet could have. Documentation
/// ranges count as public (tests use them).
fn is_public(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || a == 0
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Comment(String),
}

/// Reads "from NAME (TCP-info) by HOST ...; date". `None` when the header
/// has no from clause.
fn parse_received(value: &[u8]) -> Option<Hop> {
    let text = String::from_utf8_lossy(&value[..value.len().min(MAX_HEADER_VALUE)]);
    let tokens = received_tokens(&text);
    let mut iter = tokens.iter();
    match iter.next() {
        Some(Token::Word(w)) if w.eq_ignore_ascii_case("from") => {}
        _ => return None,
    }
    let mut lead: Option<&str> = None;
    let mut comments: Vec<&str> = Vec::new();
    let mut by = None;
    while let Some(token) = iter.next() {
        match token {
            Token::Word(w) if w.eq_ignore_ascii_case("by") => {
                by = iter.find_map(|t| match t {
                    Token::Word(w) => Some(w.as_str()),
                    Token::Comment(_) => None,
                });
                break;
            }
            Token::Word(w)
                if ["with", "id", "for", "via"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k)) =>
            {
                break;
            }
            Token::Word(w) => {
                lead.get_or_insert(w.as_str());
            }
            Token::Comment(c) => comments.push(c),
        }
    }

    let mut ip = None;
    let mut helo_named = None;
    let mut rdns_in_comment = None;
    for comment in &comments {
        let words: Vec<&str> = comment.split_whitespace().collect();
        let mut saw_ip_here = false;
        let mut name_here = None;
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            let lower = word.to_ascii_lowercase();
            if let Some(name) = lower
                .strip_prefix("helo=")
                .or_else(|| lower.strip_prefix("ehlo="))
            {
                helo_named.get_or_insert_with(|| name.to_string());
            } else if lower == "helo" || lower == "ehlo" {
                if let Some(name) = words.get(i + 1) {
                    helo_named.get_or_insert_with(|| name.to_string());
                }
                i += 1;
            } else if let Some(addr) = ip_token(word) {
                if ip.is_none() {
                    ip = Some(addr);
                    saw_ip_here = true;
                }
            } else if name_here.is_none() {
                name_here = domain_name(word);
            }
            i += 1;
        }
        // The rDNS name is the one beside the address (Postfix, Sendmail,
        // Gmail, Microsoft: "(rdns [ip])").
        if saw_ip_here && rdns_in_comment.is_none() {
            rdns_in_comment = name_here;
        }
    }
    if ip.is_none() {
        ip = lead.and_then(ip_token);
    }
    let lead_name = lead.and_then(domain_name);
    let (helo, rdns) = match helo_named {
        // Exim ("from rdns ([ip] helo=name)") and qmail ("from rdns (HELO
        // name) (ip)"): the leading name is the rDNS name.
        Some(named) => (domain_name(&named), lead_name.or(rdns_in_comment)),
        None => (lead_name, rdns_in_comment),
    };
    Some(Hop {
        ip,
        helo,
        rdns,
        by: by.and_then(domain_name),
    })
}

/// Words and parenthesised comments (nested ones flattened) up to the
/// first top-level `;` (the date follows it).
fn received_tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut comment = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        if depth > 0 {
            match c {
                '(' => {
                    depth += 1;
                    comment.push(' ');
                }
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        tokens.push(Token::Comment(std::mem::take(&mut comment)));
                    } else {
                        comment.push(' ');
                    }
                }
                c if c.is_whitespace() => comment.push(' '),
                c => comment.push(c),
            }
            continue;
        }
        match c {
            '(' | ';' => {
                if !word.is_empty() {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                }
                if c == ';' {
                    return tokens;
                }
                depth = 1;
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        tokens.push(Token::Word(word));
    }
    if !comment.is_empty() {
        tokens.push(Token::Comment(comment));
    }
    tokens
}

/// An address as `Received` headers write it: `[192.0.2.1]`,
/// `[IPv6:2001:db8::1]`, `[192.0.2.1]:2525`, bare `2001:db8::1`.
fn ip_token(word: &str) -> Option<IpAddr> {
    let word = word.trim_matches(|c: char| "()<>,;\"'".contains(c));
    let inner = match word.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => word,
    };
    let inner = if inner.len() > 5 && inner[..5].eq_ignore_ascii_case("ipv6:") {
        &inner[5..]
    } else {
        inner
    };
    inner.parse::<IpAddr>().ok().map(|ip| ip.to_canonical())
}

// ---------------------------------------------------------------------------
// Authentication-Results (RFC 8601)

/// One result: `method=result` and its properties (`header.d=...`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResInfo {
    method: String,
    result: String,
    props: Vec<(String, String)>,
}

impl ResInfo {
    fn prop(&self, name: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct AuthResults {
    /// Lower case, no trailing dot; `None` when the header starts with a
    /// result instead (Microsoft 365).
    authserv_id: Option<String>,
    results: Vec<ResInfo>,
}

impl AuthResults {
    fn property(&self, method: &str, name: &str) -> Option<&str> {
        self.results
            .iter()
            .filter(|r| r.method == method)
            .find_map(|r| r.prop(name))
    }
}

/// Reads `authserv-id [version]; method=result [reason=...] [ptype.prop=value]...;
/// ...`, comments and quoting understood, white space around `=` allowed.
fn parse_auth_results(value: &[u8]) -> AuthResults {
    let text = String::from_utf8_lossy(&value[..value.len().min(MAX_HEADER_VALUE)]);
    let mut found = AuthResults::default();
    for (index, part) in auth_results_parts(&text).into_iter().enumerate() {
        let Some(first) = part.first() else { continue };
        if index == 0 && !first.contains('=') {
            found.authserv_id = Some(normalize_id(first));
            continue;
        }
        let Some((method, result)) = first.split_once('=') else {
            continue;
        };
        let method = method
            .split('/')
            .next()
            .unwrap_or(method)
            .to_ascii_lowercase();
        let props = part[1..]
            .iter()
            .filter_map(|token| token.split_once('='))
            .filter(|(key, _)| key.contains('.'))
            .map(|(key, value)| (key.to_ascii_lowercase(), value.to_string()))
            .collect();
        found.results.push(ResInfo {
            method,
            result: result_word(result),
            props,
        });
    }
    found
}

/// A result as written, lower case (`hardfail` read as `fail`); anything
/// that is not a short word is a syntax error: `permerror`.
fn result_word(text: &str) -> String {
    let word = text.to_ascii_lowercase();
    if word == "hardfail" {
        return "fail".into();
    }
    let clean = !word.is_empty()
        && word.len() <= 20
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if clean { word } else { "permerror".into() }
}

/// The header split at `;` into parts, each part into tokens: comments
/// dropped, quotes removed, `a = b` joined to `a=b`.
fn auth_results_parts(text: &str) -> Vec<Vec<String>> {
    let mut parts = Vec::new();
    let mut tokens: Vec<String> = Vec::new();
    let mut token = String::new();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut escaped = false;
    let mut joining = false;
    let flush = |token: &mut String, tokens: &mut Vec<String>, joining: &mut bool| {
        if token.is_empty() {
            return;
        }
        let open = token.ends_with('=');
        match tokens.last_mut() {
            Some(last) if *joining || token.starts_with('=') => {
                last.push_str(token);
                token.clear();
            }
            _ => tokens.push(std::mem::take(token)),
        }
        *joining = open;
    };
    for c in text.chars() {
        if escaped {
            escaped = false;
            if depth == 0 {
                token.push(c);
            }
            continue;
        }
        if c == '\\' && (quoted || depth > 0) {
            escaped = true;
            continue;
        }
        if quoted {
            if c == '"' {
                quoted = false;
            } else {
                token.push(c);
            }
            continue;
        }
        if depth > 0 {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' => depth = 1,
            ';' => {
                flush(&mut token, &mut tokens, &mut joining);
                parts.push(std::mem::take(&mut tokens));
                joining = false;
            }
            c if c.is_whitespace() => flush(&mut token, &mut tokens, &mut joining),
            c => token.push(c),
        }
    }
    flush(&mut token, &mut tokens, &mut joining);
    parts.push(tokens);
    parts
}

#[cfg(test)]
#[path = "spoofing_tests.rs"]
mod tests;
