//! The DNS stage: addresses, mail exchangers (and the provider behind
//! them), SPF and DMARC, every lookup on `dns_nameservers`.

use std::net::Ipv4Addr;

use outreach_core::platform::dns::{Dns, LookupError};

/// What DNS says about a domain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DnsFacts {
    pub ipv4: Vec<Ipv4Addr>,
    /// Exchanges, most preferred first.
    pub mx: Vec<String>,
    pub mx_provider: Option<String>,
    pub has_spf: bool,
    pub has_dmarc: bool,
    /// The domain's TXT records (technology fingerprints read them).
    pub txt: Vec<String>,
}

/// Why the stage failed: a domain that does not exist is final, a lookup
/// that failed is worth another try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DnsFailure {
    NoSuchDomain,
    Lookup(String),
}

/// Mail exchanger suffixes and the provider they belong to.
const MX_PROVIDERS: &[(&str, &str)] = &[
    ("google.com", "Google Workspace"),
    ("googlemail.com", "Google Workspace"),
    ("outlook.com", "Microsoft 365"),
    ("protection.outlook.com", "Microsoft 365"),
    ("pphosted.com", "Proofpoint"),
    ("mimecast.com", "Mimecast"),
    ("zoho.com", "Zoho Mail"),
    ("zoho.eu", "Zoho Mail"),
    ("messagingengine.com", "Fastmail"),
    ("protonmail.ch", "Proton Mail"),
    ("yandex.net", "Yandex 360"),
    ("mail.ru", "VK WorkMail"),
    ("secureserver.net", "GoDaddy"),
    ("emailsrvr.com", "Rackspace"),
    ("ovh.net", "OVHcloud"),
    ("ionos.de", "IONOS"),
    ("ionos.com", "IONOS"),
    ("1and1.com", "IONOS"),
    ("kundenserver.de", "IONOS"),
    ("amazonaws.com", "Amazon SES / WorkMail"),
    ("barracudanetworks.com", "Barracuda"),
    ("icloud.com", "iCloud Mail"),
    ("qq.com", "Tencent Exmail"),
];

/// The provider behind the most preferred exchange that has a known one.
pub fn mx_provider(exchanges: &[String]) -> Option<String> {
    exchanges.iter().find_map(|mx| {
        MX_PROVIDERS
            .iter()
            .find(|(suffix, _)| mx == suffix || mx.ends_with(&format!(".{suffix}")))
            .map(|(_, provider)| (*provider).to_string())
    })
}

fn absent_or<T>(result: Result<Vec<T>, LookupError>) -> Result<Vec<T>, String> {
    match result {
        Ok(found) => Ok(found),
        Err(LookupError::NotFound) => Ok(Vec::new()),
        Err(LookupError::Failed(e)) => Err(e),
    }
}

/// Looks the domain up. No A record and no MX record means the domain does
/// not exist for our purposes (NXDOMAIN reads as no record).
pub async fn lookup(dns: &Dns, domain: &str) -> Result<DnsFacts, DnsFailure> {
    let dmarc_name = format!("_dmarc.{domain}");
    let (a, mx, txt, dmarc) = tokio::join!(
        dns.ipv4(domain),
        dns.mx(domain),
        dns.txt(domain),
        dns.txt(&dmarc_name),
    );
    let ipv4 = absent_or(a).map_err(DnsFailure::Lookup)?;
    let mx: Vec<String> = absent_or(mx)
        .map_err(DnsFailure::Lookup)?
        .into_iter()
        .map(|m| m.exchange)
        .collect();
    if ipv4.is_empty() && mx.is_empty() {
        return Err(DnsFailure::NoSuchDomain);
    }
    // TXT and DMARC failures leave those facts unknown rather than failing
    // the stage: the addresses are what the crawl needs.
    let txt = absent_or(txt).unwrap_or_default();
    let dmarc = absent_or(dmarc).unwrap_or_default();
    Ok(DnsFacts {
        mx_provider: mx_provider(&mx),
        has_spf: txt
            .iter()
            .any(|t| t.trim_start().to_ascii_lowercase().starts_with("v=spf1")),
        has_dmarc: dmarc
            .iter()
            .any(|t| t.trim_start().to_ascii_lowercase().starts_with("v=dmarc1")),
        ipv4,
        mx,
        txt,
    })
}
