//! SPF, DKIM and DMARC as published in DNS for a sending domain, read
//! through the core's resolver (`AppState::dns`). The checks look at what
//! is published, not at a message: they cannot tell whether the SMTP
//! server actually signs, only whether a key is there to verify against.
//!
//! - **SPF**: the TXT records at the domain that start with `v=spf1`. One
//!   record passes unless it ends in `+all`/`all` (anyone may send) or has
//!   more than 10 DNS-querying terms at its top level (RFC 7208 §4.6.4
//!   counts includes' own terms too, so this is a lower bound). Several
//!   records fail (a permanent error for receivers, RFC 7208 §4.5).
//! - **DMARC**: the TXT record at `_dmarc.<domain>` starting with
//!   `v=DMARC1`; when absent, parent domains are tried down to two labels
//!   (receivers use the organisational domain; without the public suffix
//!   list, two labels is our approximation). It passes with a valid `p=`
//!   (none, quarantine, reject); `policy` is that value.
//! - **DKIM**: there is no way to list a domain's selectors, so the common
//!   ones in [`DKIM_SELECTORS`] are probed at `<selector>._domainkey.<domain>`
//!   at once. A record with a non-empty `p=` passes; `p=` empty is a revoked
//!   key. Not finding one does not prove there is none.

use futures::future::join_all;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use outreach_core::platform::dns::{Dns, LookupError};

/// Selectors probed for DKIM keys: Google Workspace (`google`), Microsoft
/// 365 (`selector1`, `selector2`), generic defaults (`default`, `dkim`,
/// `mail`, `smtp`, `key1`, `key2`), Mailchimp/Mandrill (`k1`, `k2`, `k3`,
/// `mandrill`), SendGrid (`s1`, `s2`, `smtpapi`), Fastmail (`fm1`, `fm2`,
/// `fm3`), Zoho (`zoho`, `zmail`), Amazon SES custom (`amazonses`), Proton
/// (`protonmail`), Mailgun (`mg`, `mta`, `pic`), Postmark (`pm`), cPanel
/// hosts (`x`).
pub const DKIM_SELECTORS: [&str; 30] = [
    "google",
    "selector1",
    "selector2",
    "default",
    "dkim",
    "mail",
    "smtp",
    "key1",
    "key2",
    "k1",
    "k2",
    "k3",
    "mandrill",
    "s1",
    "s2",
    "smtpapi",
    "fm1",
    "fm2",
    "fm3",
    "zoho",
    "zmail",
    "amazonses",
    "protonmail",
    "protonmail2",
    "protonmail3",
    "mg",
    "mta",
    "pic",
    "pm",
    "x",
];

/// One of the three checks.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AuthCheck {
    /// SPF, DKIM or DMARC.
    #[serde(rename = "type")]
    pub kind: String,
    /// A record of this kind is published.
    pub present: bool,
    /// It is present and sound (rules in the module docs).
    pub passed: bool,
    /// What was found, in a sentence.
    pub details: String,
    /// The record as published (the first one when there are several).
    pub record: Option<String>,
    /// DKIM: the selector the key was found under.
    pub selector: Option<String>,
    /// DMARC: the `p=` policy.
    pub policy: Option<String>,
}

/// The three checks for one domain, with what to fix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthReport {
    pub spf: AuthCheck,
    pub dkim: AuthCheck,
    pub dmarc: AuthCheck,
    /// Every published `v=spf1` record (more than one is an error to merge).
    pub spf_records: Vec<String>,
    /// Every probed selector that has a key, in probing order.
    pub dkim_selectors_found: Vec<String>,
    /// One sentence per problem, most important first.
    pub advice: Vec<String>,
}

fn check(kind: &str) -> AuthCheck {
    AuthCheck {
        kind: kind.into(),
        present: false,
        passed: false,
        details: String::new(),
        record: None,
        selector: None,
        policy: None,
    }
}

/// The `tag=value` pairs of a DKIM or DMARC record, tags lower case.
pub fn tags(record: &str) -> Vec<(String, String)> {
    record
        .split(';')
        .filter_map(|part| {
            let (k, v) = part.split_once('=')?;
            Some((k.trim().to_lowercase(), v.trim().to_string()))
        })
        .collect()
}

fn tag<'a>(tags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn starts_with_ci(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// SPF terms that cost a DNS query (besides bare `a`, `mx` and `ptr`).
const SPF_QUERYING: [&str; 8] = [
    "include:",
    "exists:",
    "redirect=",
    "a:",
    "a/",
    "mx:",
    "mx/",
    "ptr:",
];

fn is_spf(txt: &str) -> bool {
    let t = txt.trim();
    starts_with_ci(t, "v=spf1") && t[6..].chars().next().is_none_or(|c| c == ' ')
}

fn failed(e: &LookupError) -> Option<String> {
    match e {
        LookupError::NotFound => None,
        LookupError::Failed(why) => Some(why.clone()),
    }
}

/// The SPF check and every `v=spf1` record published.
pub async fn spf(dns: &Dns, domain: &str) -> (AuthCheck, Vec<String>) {
    let mut c = check("SPF");
    let records: Vec<String> = match dns.txt(domain).await {
        Ok(txt) => txt.into_iter().filter(|t| is_spf(t)).collect(),
        Err(e) => {
            c.details = match failed(&e) {
                Some(why) => format!("The SPF lookup for {domain} failed: {why}"),
                None => format!("No SPF record (TXT v=spf1) at {domain}"),
            };
            return (c, Vec::new());
        }
    };
    let Some(first) = records.first() else {
        c.details = format!("No SPF record (TXT v=spf1) at {domain}");
        return (c, records);
    };
    c.present = true;
    c.record = Some(first.clone());
    if records.len() > 1 {
        c.details = format!(
            "{} SPF records at {domain}: receivers treat more than one as a permanent error",
            records.len()
        );
        return (c, records);
    }
    let terms: Vec<String> = first
        .split_whitespace()
        .skip(1)
        .map(str::to_lowercase)
        .collect();
    let lookups = terms
        .iter()
        .map(|t| t.trim_start_matches(['+', '-', '~', '?']))
        .filter(|t| {
            matches!(*t, "a" | "mx" | "ptr") || SPF_QUERYING.iter().any(|p| t.starts_with(p))
        })
        .count();
    let all = terms
        .iter()
        .find(|t| t.trim_start_matches(['+', '-', '~', '?']) == "all");
    if lookups > 10 {
        c.details = format!(
            "The SPF record has {lookups} DNS-querying terms; receivers stop at 10 and fail it"
        );
    } else if matches!(all.map(String::as_str), Some("all" | "+all")) {
        c.details = "The SPF record ends in +all, which lets any server send as this domain".into();
    } else {
        c.passed = true;
        c.details = match all.map(String::as_str) {
            Some("-all") => "SPF record found; other servers fail (-all)".into(),
            Some("~all") => "SPF record found; other servers soft-fail (~all)".into(),
            Some(_) => "SPF record found, ending in ?all (neutral): ~all or -all protects the domain better".into(),
            None if terms.iter().any(|t| t.starts_with("redirect=")) => {
                "SPF record found; it redirects to another domain's policy".into()
            }
            None => "SPF record found without an all term: other servers get a neutral result".into(),
        };
    }
    (c, records)
}

pub async fn dmarc(dns: &Dns, domain: &str) -> AuthCheck {
    let mut c = check("DMARC");
    let labels: Vec<&str> = domain.split('.').collect();
    // The domain itself, then its parents down to two labels.
    for skip in 0..labels.len().saturating_sub(1).max(1) {
        let at = labels[skip..].join(".");
        let records: Vec<String> = match dns.txt(&format!("_dmarc.{at}")).await {
            Ok(txt) => txt
                .into_iter()
                .filter(|t| starts_with_ci(t.trim(), "v=DMARC1"))
                .collect(),
            Err(e) => {
                if let Some(why) = failed(&e) {
                    c.details = format!("The DMARC lookup for _dmarc.{at} failed: {why}");
                    return c;
                }
                continue;
            }
        };
        let Some(first) = records.first() else {
            continue;
        };
        let inherited = if skip > 0 {
            format!(" (inherited from {at})")
        } else {
            String::new()
        };
        c.present = true;
        c.record = Some(first.clone());
        if records.len() > 1 {
            c.details = format!(
                "Several DMARC records at _dmarc.{at}{inherited}: receivers ignore them all"
            );
            return c;
        }
        let t = tags(first);
        let policy = tag(&t, "p").map(str::to_lowercase);
        match policy.as_deref() {
            Some(p @ ("none" | "quarantine" | "reject")) => {
                c.passed = true;
                c.policy = Some(p.to_string());
                c.details = if p == "none" {
                    format!(
                        "DMARC record found{inherited}; p=none only monitors, failing mail is still delivered"
                    )
                } else {
                    format!("DMARC record found{inherited}; failing mail is handled with p={p}")
                };
            }
            _ => {
                c.details = format!(
                    "The DMARC record{inherited} has no valid p= policy (none, quarantine or reject)"
                );
            }
        }
        return c;
    }
    c.details = format!("No DMARC record at _dmarc.{domain}");
    c
}

/// Probes every selector at once; returns the check and the selectors found.
pub async fn dkim(dns: &Dns, domain: &str) -> (AuthCheck, Vec<String>) {
    let mut c = check("DKIM");
    let answers = join_all(
        DKIM_SELECTORS
            .iter()
            .map(|sel| async move { (sel, dns.txt(&format!("{sel}._domainkey.{domain}")).await) }),
    )
    .await;
    let mut found = Vec::new();
    let mut revoked: Option<(String, String)> = None;
    for (sel, answer) in answers {
        let Ok(txt) = answer else { continue };
        let Some(record) = txt.into_iter().find(|t| {
            let t = tags(t);
            tag(&t, "p").is_some() && tag(&t, "v").is_none_or(|v| v.eq_ignore_ascii_case("DKIM1"))
        }) else {
            continue;
        };
        let key = tag(&tags(&record), "p").unwrap_or_default().to_string();
        if key.is_empty() {
            revoked.get_or_insert((sel.to_string(), record));
        } else {
            if found.is_empty() {
                c.selector = Some(sel.to_string());
                c.record = Some(record);
            }
            found.push(sel.to_string());
        }
    }
    if !found.is_empty() {
        c.present = true;
        c.passed = true;
        c.details = format!("DKIM key published under selector {}", found.join(", "));
    } else if let Some((sel, record)) = revoked {
        c.present = true;
        c.details = format!("The DKIM key under selector {sel} is revoked (empty p=)");
        c.selector = Some(sel);
        c.record = Some(record);
    } else {
        c.details = format!(
            "No DKIM key under the {} common selectors checked; a key under another selector is not visible to this check",
            DKIM_SELECTORS.len()
        );
    }
    (c, found)
}

/// All three checks at once, with advice in order of importance.
pub async fn check_domain(dns: &Dns, domain: &str) -> AuthReport {
    let ((spf, spf_records), (dkim, found), dmarc) =
        tokio::join!(spf(dns, domain), dkim(dns, domain), dmarc(dns, domain));
    let mut advice = Vec::new();
    if !spf.passed {
        advice.push(if spf.present {
            format!("Fix the SPF record of {domain}: {}.", spf.details)
        } else {
            format!(
                "Publish an SPF record at {domain} that names your SMTP server (see dns-guide)."
            )
        });
    }
    if !dkim.passed {
        advice.push(format!(
            "Turn on DKIM signing at your mail provider and publish its key at <selector>._domainkey.{domain}; if you sign under a selector this check does not probe, you can ignore this."
        ));
    }
    if !dmarc.passed {
        advice.push(format!(
            "Publish a DMARC record at _dmarc.{domain}, starting with p=none and a rua= address for reports."
        ));
    } else if dmarc.policy.as_deref() == Some("none") {
        advice.push(
            "Move DMARC from p=none to p=quarantine once its reports show your mail passing."
                .into(),
        );
    }
    AuthReport {
        spf,
        dkim,
        dmarc,
        spf_records,
        dkim_selectors_found: found,
        advice,
    }
}
