//! The textual form of an API key.
//!
//! `<prefix>_<lookup:12><secret:32>` or `<prefix>_r_<client_id>_<lookup:12><secret:32>`,
//! base62. The lookup id finds the row; the SHA-256 of the whole key proves
//! possession. A fast hash is right here because the key carries 190 bits of
//! randomness: there is nothing for a slow hash to protect against.

use rand::Rng;
use sha2::{Digest, Sha256};

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LOOKUP_LEN: usize = 12;
const SECRET_LEN: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    pub lookup: &'a str,
    pub reseller_client_id: Option<i64>,
}

fn random_base62(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// A fresh key and its lookup id.
pub fn generate(prefix: &str, reseller_client_id: Option<i64>) -> (String, String) {
    let lookup = random_base62(LOOKUP_LEN);
    let secret = random_base62(SECRET_LEN);
    let key = match reseller_client_id {
        Some(client) => format!("{prefix}_r_{client}_{lookup}{secret}"),
        None => format!("{prefix}_{lookup}{secret}"),
    };
    (key, lookup)
}

/// Splits a presented key, refusing anything not of our shape before any
/// database or cache work is done.
pub fn parse<'a>(prefix: &str, key: &'a str) -> Option<ParsedKey<'a>> {
    let rest = key.strip_prefix(prefix)?.strip_prefix('_')?;
    let (client, body) = match rest.strip_prefix("r_") {
        Some(r) => {
            let (client, body) = r.split_once('_')?;
            let id: i64 = client.parse().ok().filter(|id| *id > 0)?;
            (Some(id), body)
        }
        None => (None, rest),
    };
    if body.len() != LOOKUP_LEN + SECRET_LEN || !body.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(ParsedKey {
        lookup: &body[..LOOKUP_LEN],
        reseller_client_id: client,
    })
}

pub fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// What a listing shows instead of the key: the prefix part and the last 4.
pub fn preview(key: &str) -> String {
    let tail = &key[key.len() - 4..];
    let head_len = key.len() - LOOKUP_LEN - SECRET_LEN;
    format!("{}...{tail}", &key[..head_len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_parse_back() {
        let (key, lookup) = generate("otr", None);
        assert!(key.starts_with("otr_"));
        assert_eq!(
            parse("otr", &key),
            Some(ParsedKey {
                lookup: &lookup,
                reseller_client_id: None
            })
        );
        let (rkey, rlookup) = generate("otr", Some(42));
        assert!(rkey.starts_with("otr_r_42_"));
        let parsed = parse("otr", &rkey).unwrap();
        assert_eq!(parsed.lookup, rlookup);
        assert_eq!(parsed.reseller_client_id, Some(42));
        assert_eq!(preview(&rkey).len(), "otr_r_42_...".len() + 4);
    }

    #[test]
    fn malformed_keys_are_refused() {
        let (key, _) = generate("otr", None);
        for bad in [
            "",
            "otr_",
            "xyz_abc",
            &key[..key.len() - 1],
            &format!("{key}x"),
            &key.replace("otr_", "otr-"),
            "otr_r_0_AAAAAAAAAAAABBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
            "otr_r_x_AAAAAAAAAAAABBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
            "otr_AAAAAAAAAAAABBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB!",
        ] {
            assert_eq!(parse("otr", bad), None, "{bad}");
        }
        assert_eq!(parse("other", &key), None);
    }
}
