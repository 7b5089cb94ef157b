//! RDAP (RFC 9082, 9083) and its IANA bootstrap (RFC 9224): which server
//! answers for a domain or an address, and what its answers say about
//! registration date and country. The fetching is the pipeline's.

use std::net::IpAddr;

use serde_json::Value;

use crate::extract::country_code;

/// One bootstrap file: entries (TLDs, or networks as `addr/len`) and the
/// base URLs that serve them.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    services: Vec<(Vec<String>, String)>,
}

impl Bootstrap {
    /// Parses `dns.json`, `ipv4.json` or `ipv6.json`. Each service keeps its
    /// first `https` URL (any URL when none is https).
    pub fn parse(json: &str) -> Result<Bootstrap, String> {
        let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Bootstrap::from_value(&value)
    }

    pub fn from_value(value: &Value) -> Result<Bootstrap, String> {
        let services = value["services"].as_array().ok_or("no services")?;
        let mut parsed = Vec::new();
        for service in services {
            let entries: Vec<String> = service[0]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| Some(e.as_str()?.to_ascii_lowercase()))
                .collect();
            let urls: Vec<&str> = service[1]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let url = urls
                .iter()
                .find(|u| u.starts_with("https://"))
                .or(urls.first());
            if let Some(url) = url {
                let base = if url.ends_with('/') {
                    url.to_string()
                } else {
                    format!("{url}/")
                };
                parsed.push((entries, base));
            }
        }
        Ok(Bootstrap { services: parsed })
    }

    /// The RDAP URL for `domain` (ASCII): the service of its longest
    /// matching suffix.
    pub fn domain_url(&self, domain: &str) -> Option<String> {
        let domain = domain.to_ascii_lowercase();
        let labels: Vec<&str> = domain.split('.').collect();
        (1..labels.len()).find_map(|start| {
            let suffix = labels[start..].join(".");
            self.services
                .iter()
                .find(|(entries, _)| entries.contains(&suffix))
                .map(|(_, base)| format!("{base}domain/{domain}"))
        })
    }

    /// The RDAP URL for `ip`: the service of its most specific network.
    pub fn ip_url(&self, ip: IpAddr) -> Option<String> {
        self.services
            .iter()
            .flat_map(|(entries, base)| entries.iter().map(move |e| (e, base)))
            .filter_map(|(entry, base)| Some((contains(entry, ip)?, base)))
            .max_by_key(|(length, _)| *length)
            .map(|(_, base)| format!("{base}ip/{ip}"))
    }
}

/// `Some(prefix length)` when the network `cidr` contains `ip`.
fn contains(cidr: &str, ip: IpAddr) -> Option<u32> {
    let (network, length) = cidr.split_once('/')?;
    let network: IpAddr = network.parse().ok()?;
    let length: u32 = length.parse().ok()?;
    let (a, b, bits) = match (network, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => (
            u128::from(u32::from(n)) << 96,
            u128::from(u32::from(i)) << 96,
            32,
        ),
        (IpAddr::V6(n), IpAddr::V6(i)) => (u128::from(n), u128::from(i), 128),
        _ => return None,
    };
    if length > bits {
        return None;
    }
    let mask = if length == 0 {
        0
    } else {
        u128::MAX << (128 - length)
    };
    (a & mask == b & mask).then_some(length)
}

/// What a domain's RDAP answer says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainFacts {
    /// The `registration` event's date, as the registry wrote it (RFC 3339).
    pub registered_at: Option<String>,
    /// ISO 3166-1 alpha-2 of the registrant's address, where published.
    pub registrant_country: Option<String>,
}

pub fn domain_facts(answer: &Value) -> DomainFacts {
    let registered_at = answer["events"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["eventAction"].as_str() == Some("registration"))
        .and_then(|e| e["eventDate"].as_str())
        .map(str::to_owned);
    let registrant_country = registrant(answer, 0);
    DomainFacts {
        registered_at,
        registrant_country,
    }
}

/// The registrant's country, searching nested entities (a few levels).
fn registrant(node: &Value, depth: usize) -> Option<String> {
    if depth > 3 {
        return None;
    }
    for entity in node["entities"].as_array().into_iter().flatten() {
        let roles = entity["roles"].as_array().into_iter().flatten();
        if roles.filter_map(Value::as_str).any(|r| r == "registrant")
            && let Some(country) = vcard_country(&entity["vcardArray"])
        {
            return Some(country);
        }
        if let Some(country) = registrant(entity, depth + 1) {
            return Some(country);
        }
    }
    None
}

/// The country of a jCard's `adr`: its `cc` parameter (RFC 8605), else the
/// country name, the last address component.
fn vcard_country(vcard: &Value) -> Option<String> {
    let properties = vcard.get(1)?.as_array()?;
    let adr = properties.iter().find(|p| p[0].as_str() == Some("adr"))?;
    if let Some(code) = adr[1]["cc"].as_str().and_then(country_code) {
        return Some(code);
    }
    let name = match &adr[3] {
        Value::Array(parts) => parts.last()?.as_str()?.to_owned(),
        _ => adr[1]["label"].as_str()?.lines().last()?.to_owned(),
    };
    country_code(&name)
}

/// The country of an IP network's RDAP answer.
pub fn ip_country(answer: &Value) -> Option<String> {
    answer["country"].as_str().and_then(country_code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DNS: &str = r#"{"version":"1.0","services":[
        [["com","net"],["http://rdap.example/com/","https://rdap.verisign.com/com/v1/"]],
        [["uk","co.uk"],["https://rdap.nominet.uk/uk"]]]}"#;
    const IPV4: &str = r#"{"version":"1.0","services":[
        [["8.0.0.0/8"],["https://rdap.arin.net/registry/"]],
        [["8.8.0.0/16"],["https://rdap.more-specific.example/"]],
        [["193.0.0.0/8"],["https://rdap.db.ripe.net/"]]]}"#;

    #[test]
    fn the_bootstrap_names_the_server() {
        let dns = Bootstrap::parse(DNS).unwrap();
        assert_eq!(
            dns.domain_url("Acme.com").unwrap(),
            "https://rdap.verisign.com/com/v1/domain/acme.com"
        );
        assert_eq!(
            dns.domain_url("acme.co.uk").unwrap(),
            "https://rdap.nominet.uk/uk/domain/acme.co.uk"
        );
        assert_eq!(dns.domain_url("acme.de"), None);
        let ip = Bootstrap::parse(IPV4).unwrap();
        assert_eq!(
            ip.ip_url("8.8.8.8".parse().unwrap()).unwrap(),
            "https://rdap.more-specific.example/ip/8.8.8.8"
        );
        assert_eq!(
            ip.ip_url("8.1.1.1".parse().unwrap()).unwrap(),
            "https://rdap.arin.net/registry/ip/8.1.1.1"
        );
        assert_eq!(ip.ip_url("9.9.9.9".parse().unwrap()), None);
        assert!(Bootstrap::parse("[]").is_err());
    }

    #[test]
    fn answers_give_dates_and_countries() {
        let answer = json!({
            "objectClassName": "domain",
            "events": [
                {"eventAction": "last changed", "eventDate": "2024-01-01T00:00:00Z"},
                {"eventAction": "registration", "eventDate": "2019-05-01T10:00:00Z"}
            ],
            "entities": [
                {"roles": ["registrar"], "entities": [
                    {"roles": ["registrant"], "vcardArray": ["vcard", [
                        ["version", {}, "text", "4.0"],
                        ["adr", {}, "text", ["", "", "1 Main St", "Leeds", "", "LS1", "United Kingdom"]]
                    ]]}
                ]}
            ]
        });
        let facts = domain_facts(&answer);
        assert_eq!(facts.registered_at.as_deref(), Some("2019-05-01T10:00:00Z"));
        assert_eq!(facts.registrant_country.as_deref(), Some("GB"));

        let with_cc = json!({"entities": [{"roles": ["registrant"], "vcardArray": ["vcard", [
            ["adr", {"cc": "de"}, "text", ["", "", "", "", "", "", ""]]]]}]});
        assert_eq!(
            domain_facts(&with_cc).registrant_country.as_deref(),
            Some("DE")
        );
        assert_eq!(
            domain_facts(&json!({"redacted": true})),
            DomainFacts::default()
        );
        assert_eq!(ip_country(&json!({"country": "NL"})).as_deref(), Some("NL"));
    }
}
