//! The one normalisation of a domain name. The pool, list imports, API
//! parameters and the crawler all call [`normalise`], so `ACME.com`,
//! `https://www.acme.com/contact` and `acme.com.` are one record.
//!
//! The steps, in order:
//!
//! 1. Trim, then reduce a URL (any scheme, `//host`, user-info, port, path,
//!    query, fragment) to its host.
//! 2. Lowercase and convert to ASCII with IDNA (UTS #46, as browsers do), so
//!    `bücher.de` becomes `xn--bcher-kva.de`; drop one trailing dot.
//! 3. Check the syntax of a DNS host name: labels of `a-z`, `0-9` and `-`,
//!    no label starting or ending with `-`, labels up to 63 octets, the name
//!    up to 253.
//! 4. Refuse what is not a public company domain: IP addresses in every
//!    form a URL parser accepts (a name whose last label is a number, such
//!    as `2130706433` or `0x7f.1`, is an IPv4 address to a browser),
//!    `localhost`, single labels, internal and special-use names.
//! 5. Reduce to the registrable domain with the public suffix list (the
//!    `psl` crate, ICANN and private sections), so `www.blog.acme.co.uk`
//!    gives `acme.co.uk`, `foo.co.uk` stays whole and `acme.github.io` stays
//!    whole. A name that is itself a public suffix (`co.uk`, `github.io`) is
//!    refused, as is a top-level domain the list does not know.
//!
//! `.test` and `.example` (RFC 2606) are accepted although no public suffix
//! list holds them: the end-to-end tests point fake sites such as
//! `acme.test` at a local server by name, and nothing real can ever be
//! registered under them, so accepting them cannot pollute the pool with a
//! real company's data. They reduce like a one-label suffix
//! (`www.acme.test` gives `acme.test`). `.invalid` and `.localhost`, the other
//! two RFC 2606 names, are refused: they name nothing, even in tests.

use std::fmt;
use std::net::Ipv6Addr;

/// Why an input is not a usable company domain. `Display` is the short
/// reason the API answers with (400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainError {
    /// Nothing left after trimming, or a URL without a host.
    Empty,
    /// An IPv4 or IPv6 address, in any spelling a URL parser accepts.
    IpAddress,
    /// `localhost` or a name under `.localhost`.
    Localhost,
    /// A name of one label (`intranet`, `com`).
    SingleLabel,
    /// An internal or special-use name (`.local`, `.internal`, `.onion`...).
    SpecialUse,
    /// A name that is itself a public suffix (`co.uk`, `github.io`).
    PublicSuffix,
    /// A top-level domain the public suffix list does not know.
    UnknownTld,
    /// A label of more than 63 octets (after IDNA).
    LabelTooLong,
    /// A name of more than 253 octets (after IDNA).
    NameTooLong,
    /// Two dots in a row, or a leading dot.
    EmptyLabel,
    /// A character a host name cannot hold (underscore, space, `%`...), or a
    /// port that is not a number.
    InvalidCharacter,
    /// A label starting or ending with a hyphen.
    InvalidHyphen,
    /// A name IDNA refuses (bad punycode, disallowed code points).
    InvalidIdn,
}

impl fmt::Display for DomainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DomainError::Empty => "Domain is empty",
            DomainError::IpAddress => "IP addresses are not accepted, only domain names",
            DomainError::Localhost => "localhost is not a public domain",
            DomainError::SingleLabel => "Domain needs at least two labels, such as example.com",
            DomainError::SpecialUse => "Internal and special-use names are not public domains",
            DomainError::PublicSuffix => "Domain is a public suffix, not a registrable domain",
            DomainError::UnknownTld => "Unknown top-level domain",
            DomainError::LabelTooLong => "Domain label is longer than 63 characters",
            DomainError::NameTooLong => "Domain is longer than 253 characters",
            DomainError::EmptyLabel => "Domain has an empty label",
            DomainError::InvalidCharacter => "Domain contains characters not allowed in host names",
            DomainError::InvalidHyphen => "Domain label starts or ends with a hyphen",
            DomainError::InvalidIdn => "Invalid internationalised domain name",
        })
    }
}

impl std::error::Error for DomainError {}

/// Top-level names that never reach the public internet: RFC 6761/6762
/// special-use names, RFC 8375 `home.arpa` (under `.arpa`), the Tor
/// `.onion`, RFC 9476 `.alt`, ICANN's reserved `.internal`, and names
/// routers and intranets commonly use.
const SPECIAL_USE_TLDS: &[&str] = &[
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "arpa",
    "onion",
    "invalid",
    "alt",
];

/// RFC 2606 names accepted for tests (see the module documentation).
const TESTING_TLDS: &[&str] = &["test", "example"];

const MAX_NAME_OCTETS: usize = 253;
const MAX_LABEL_OCTETS: usize = 63;

/// Normalises a domain or URL to its registrable domain, in ASCII and lower
/// case. See the module documentation for the steps and refusals.
pub fn normalise(input: &str) -> Result<String, DomainError> {
    let host = host_of(input.trim())?;
    let lowered = host.to_lowercase();
    let ascii = idna::domain_to_ascii(&lowered).map_err(|_| DomainError::InvalidIdn)?;
    let name = ascii.strip_suffix('.').unwrap_or(&ascii);
    if name.is_empty() {
        return Err(DomainError::Empty);
    }
    check_syntax(name)?;
    check_public(name)?;
    registrable(name)
}

/// Whether `host` (an ASCII host name, as a parsed URL gives it) is the
/// registrable domain `registrable` or one of its subdomains. The crawler
/// uses it to stay on a site; case and a trailing dot are ignored.
pub fn is_same_site(registrable: &str, host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    let registrable = registrable.strip_suffix('.').unwrap_or(registrable);
    if registrable.is_empty() || host.len() < registrable.len() {
        return false;
    }
    let split = host.len() - registrable.len();
    let (Some(prefix), Some(tail)) = (host.get(..split), host.get(split..)) else {
        return false;
    };
    tail.eq_ignore_ascii_case(registrable) && (prefix.is_empty() || prefix.ends_with('.'))
}

/// Reduces a trimmed input (bare name or URL) to the host it names, before
/// any case or IDNA processing.
fn host_of(input: &str) -> Result<&str, DomainError> {
    if input.is_empty() {
        return Err(DomainError::Empty);
    }
    let rest = strip_scheme(input);
    let authority_end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    // User-info ends at the last `@`: a password may itself hold an `@`.
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    if host_port.starts_with('[') {
        // Only IP literals are bracketed in URLs.
        return Err(DomainError::IpAddress);
    }
    let host = match host_port.matches(':').count() {
        0 => host_port,
        1 => {
            let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
            if !port.bytes().all(|b| b.is_ascii_digit()) {
                return Err(DomainError::InvalidCharacter);
            }
            host
        }
        _ if host_port.parse::<Ipv6Addr>().is_ok() => return Err(DomainError::IpAddress),
        _ => return Err(DomainError::InvalidCharacter),
    };
    if host.is_empty() {
        return Err(DomainError::Empty);
    }
    Ok(host)
}

/// Drops `scheme://`, a bare `//`, or a `scheme:` prefix such as `mailto:`.
/// A prefix followed by digits is a port (`acme.com:8080`), not a scheme.
fn strip_scheme(input: &str) -> &str {
    if let Some((scheme, rest)) = input.split_once("://")
        && is_scheme(scheme)
    {
        return rest;
    }
    if let Some(rest) = input.strip_prefix("//") {
        return rest;
    }
    if let Some((scheme, rest)) = input.split_once(':')
        && is_scheme(scheme)
        && !scheme.contains('.')
        && !rest.starts_with(|c: char| c.is_ascii_digit())
        && !rest.is_empty()
    {
        return rest.trim_start_matches('/');
    }
    input
}

fn is_scheme(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// The syntax of an ASCII host name (after IDNA), and IP addresses.
fn check_syntax(name: &str) -> Result<(), DomainError> {
    if name.len() > MAX_NAME_OCTETS {
        return Err(DomainError::NameTooLong);
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err(DomainError::EmptyLabel);
        }
        if label.len() > MAX_LABEL_OCTETS {
            return Err(DomainError::LabelTooLong);
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(DomainError::InvalidCharacter);
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(DomainError::InvalidHyphen);
        }
    }
    // The WHATWG URL parser reads a host whose last label is a number
    // (decimal, or hexadecimal with `0x`; octal is decimal digits) as an
    // IPv4 address: `2130706433`, `0x7f.1` and `0177.0.0.1` are all
    // 127.0.0.1. No top-level domain is numeric, so refusing them all costs
    // nothing.
    let last = name.rsplit('.').next().unwrap_or(name);
    let is_number = last.bytes().all(|b| b.is_ascii_digit())
        || last
            .strip_prefix("0x")
            .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()));
    if is_number {
        return Err(DomainError::IpAddress);
    }
    Ok(())
}

/// Refuses names that cannot be a company's public domain.
fn check_public(name: &str) -> Result<(), DomainError> {
    if name == "localhost" || name.ends_with(".localhost") {
        return Err(DomainError::Localhost);
    }
    let Some((_, tld)) = name.rsplit_once('.') else {
        return Err(DomainError::SingleLabel);
    };
    if SPECIAL_USE_TLDS.contains(&tld) {
        return Err(DomainError::SpecialUse);
    }
    Ok(())
}

/// The registrable domain of a checked name of at least two labels.
fn registrable(name: &str) -> Result<String, DomainError> {
    let mut labels = name.rsplit('.');
    let tld = labels.next().unwrap_or(name);
    if TESTING_TLDS.contains(&tld) {
        let second = labels.next().unwrap_or(tld);
        return Ok(format!("{second}.{tld}"));
    }
    // psl answers every name with the list's implicit `*` rule; `typ` is
    // set only when the suffix is really listed.
    let known = psl::suffix(name.as_bytes()).is_some_and(|s| s.is_known());
    if !known {
        return Err(DomainError::UnknownTld);
    }
    let domain = psl::domain(name.as_bytes()).ok_or(DomainError::PublicSuffix)?;
    if !domain.suffix().is_known() {
        return Err(DomainError::UnknownTld);
    }
    std::str::from_utf8(domain.as_bytes())
        .map(str::to_owned)
        .map_err(|_| DomainError::InvalidCharacter)
}

#[cfg(test)]
mod tests;
