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
//! The organisational domain is the registrable domain by the public
//! suffix list (the `psl` crate, which compiles the list in), so
//! `mail.example.co.uk` and `example.co.uk` are one organisation and
//! `a.github.io` and `b.github.io` are two.
//!
//! Limits: the HELO name is chosen by the sender, so a spoofer that greets
//! with the spoofed domain's name "matches" (the spec's rule); the rDNS
//! name is the receiving server's finding and harder to fake.

use std::net::{IpAddr, SocketAddr};
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use mail_auth::spf::verify::SpfParameters;
use mail_auth::{
    AuthenticatedMessage, DkimOutput, DkimResult, DmarcResult, MessageAuthenticator, SpfOutput,
    SpfResult, dmarc::verify::DmarcParameters,
};
use serde::Serialize;

use outreach_core::config::Config;

mod auth_results;
mod headers;
mod judge;
mod received;

use auth_results::*;
use headers::*;
use judge::*;
use received::*;

// How long one DNS query may take, and how often it is tried: as the
// core's shared resolver.
use outreach_ssrf::dns::{ATTEMPTS as DNS_ATTEMPTS, TIMEOUT as DNS_TIMEOUT};

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
        let resolver = outreach_ssrf::dns::resolver(
            nameservers,
            DNS_TIMEOUT,
            DNS_ATTEMPTS,
            "the inbox's spoofing check",
        )
        .map_err(anyhow::Error::msg)?;
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

fn normalize_id(id: &str) -> String {
    id.trim().trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests;
