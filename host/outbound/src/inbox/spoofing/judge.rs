//! Judging: the verdicts read or checked, and the mismatch between the
//! From domain and the connecting server.

use super::*;

/// SPF, DKIM and DMARC words, and whether a DKIM pass is aligned with the
/// From domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Verdicts {
    pub(super) spf: String,
    pub(super) dkim: String,
    pub(super) dmarc: String,
    pub(super) aligned_dkim_pass: bool,
}

impl Verdicts {
    pub(super) fn from_results(results: &AuthResults, from_domain: Option<&str>) -> Verdicts {
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
    pub(super) fn failed(&self) -> Result<bool, String> {
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

    pub(super) fn failure(&self) -> String {
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

pub(super) fn judge(
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
pub(super) fn mismatch(from_domain: &str, hop: &Hop) -> Option<bool> {
    let names: Vec<&str> = [hop.helo.as_deref(), hop.rdns.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if names.is_empty() {
        // A server known only by its address matches no domain.
        return hop.ip.map(|_| true);
    }
    let org = organizational_domain(from_domain);
    Some(!names.iter().any(|name| is_suffix(name, &org)))
}

/// `name` is `suffix` or a subdomain of it.
pub(super) fn is_suffix(name: &str, suffix: &str) -> bool {
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

/// The organisational domain (RFC 7489 §3.2): the registrable domain by
/// the public suffix list, lower case; a name that is itself a public
/// suffix, or has a single label, is its own.
pub(super) fn organizational_domain(domain: &str) -> String {
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    match psl::domain_str(&domain) {
        Some(registrable) => registrable.to_owned(),
        None => domain,
    }
}

/// A DKIM signing domain in the From domain's organisational domain (any
/// domain when the From domain is unknown).
pub(super) fn aligned(signing_domain: &str, from_domain: Option<&str>) -> bool {
    match from_domain {
        Some(from) => organizational_domain(signing_domain) == organizational_domain(from),
        None => true,
    }
}

pub(super) fn spf_word(result: SpfResult) -> &'static str {
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
pub(super) fn dkim_word(outputs: &[DkimOutput<'_>]) -> &'static str {
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

pub(super) fn dmarc_word(result: &DmarcResult) -> &'static str {
    match result {
        DmarcResult::Pass => "pass",
        DmarcResult::Fail(_) => "fail",
        DmarcResult::TempError(_) => "temperror",
        DmarcResult::PermError(_) => "permerror",
        DmarcResult::None => "none",
    }
}
