//! What may be suppressed: an address, checked by an RFC 5322 parser
//! (`email_address`) and lowercased, or a whole domain written `@domain`.

use std::str::FromStr;

use email_address::EmailAddress;

/// A checked suppression target: the stored `email` text and its domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The lowercased address, or `@domain` for a whole domain.
    pub email: String,
    pub domain: String,
}

/// Parses an address or `@domain`; `None` when malformed. Domains must be
/// names with a dot (no IP literals, no bare hosts), since mail to anything
/// else is not what a suppression list is for.
pub fn parse(raw: &str) -> Option<Target> {
    let text = raw.trim().to_lowercase();
    if let Some(domain) = text.strip_prefix('@') {
        // A domain is valid when an address at it would be.
        parse(&format!("x@{domain}"))?;
        return Some(Target {
            email: text.clone(),
            domain: domain.to_owned(),
        });
    }
    let address = EmailAddress::from_str(&text).ok()?;
    let domain = address.domain();
    let plain_name = domain.contains('.')
        && !domain.starts_with('[')
        && domain
            .split('.')
            .all(|label| !label.is_empty() && !label.starts_with('-') && !label.ends_with('-'));
    if !plain_name || text.len() > 254 {
        return None;
    }
    Some(Target {
        domain: domain.to_owned(),
        email: text,
    })
}

/// Like [`parse`], for a mailbox address only (no `@domain` entries):
/// send accounts, enrollment and sample contacts.
pub fn parse_address(raw: &str) -> Option<Target> {
    parse(raw).filter(|t| !t.email.starts_with('@'))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn addresses_and_domains_are_checked_and_lowercased() {
        let t = parse("  Jane.Doe+x@Example.COM ").unwrap();
        assert_eq!(
            (t.email.as_str(), t.domain.as_str()),
            ("jane.doe+x@example.com", "example.com")
        );
        let t = parse("@Example.com").unwrap();
        assert_eq!(
            (t.email.as_str(), t.domain.as_str()),
            ("@example.com", "example.com")
        );
        for bad in [
            "",
            "jane",
            "jane@",
            "@",
            "jane@localhost",
            "a@b@c.com",
            "jane@[10.0.0.1]",
            "jane @x.com",
            "@-x.com",
            "x@a..com",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
