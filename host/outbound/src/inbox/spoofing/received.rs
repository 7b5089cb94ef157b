//! The `Received` chain: which hop is the connecting server.

use super::*;

/// One `Received` hop: where the message came from and who took it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hop {
    pub(super) ip: Option<IpAddr>,
    pub(super) helo: Option<String>,
    pub(super) rdns: Option<String>,
    pub(super) by: Option<String>,
}

/// The connecting server: the topmost examined hop with a public address
/// that is not internal to the receiving provider.
pub(super) fn connecting_hop(received: &[&[u8]]) -> Option<Hop> {
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
                (Some(name), Some(by)) => organizational_domain(name) == organizational_domain(by),
                _ => false,
            };
            !internal
        })
}

/// Not private, loopback, link-local, unspecified, shared (CGNAT) or
/// unique-local: an address a hop on the Internet could have. Documentation
/// ranges count as public (tests use them).
pub(super) fn is_public(ip: IpAddr) -> bool {
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
pub(super) enum Token {
    Word(String),
    Comment(String),
}

/// Reads "from NAME (TCP-info) by HOST ...; date". `None` when the header
/// has no from clause.
pub(super) fn parse_received(value: &[u8]) -> Option<Hop> {
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
pub(super) fn received_tokens(text: &str) -> Vec<Token> {
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
pub(super) fn ip_token(word: &str) -> Option<IpAddr> {
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
