//! Signed tracking tokens: what a tracking URL says about its message, and
//! the proof that we wrote it.
//!
//! Layout before base64url (no padding):
//!
//! | bytes | meaning |
//! |---|---|
//! | 1 | `version << 4 \| kind` (version 1; kind 1 open, 2 click, 3 unsubscribe) |
//! | 1-10 | the `sequence_messages` row id, unsigned LEB128 |
//! | 1-5 | clicks only: the link's index in the message's `links`, LEB128 |
//! | 16 | HMAC-SHA256 of the bytes above, truncated to 128 bits |
//!
//! A token of message 1,000,000 is 27 characters (28 for a click). The key
//! is derived from the master key for the purpose `tracking`, so it is
//! never the key that seals secrets. Truncating to 128 bits keeps a forgery
//! at 2^-128 per guess; verification compares in constant time
//! (`Mac::verify_truncated_left`). Ids and indexes are not secret (the MAC
//! makes them unforgeable, and a recipient only ever sees their own), so
//! the payload is not encrypted. Varints must be minimal and nothing may
//! follow the tag, so each payload has exactly one valid token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use outreach_core::platform::secrets::Secrets;

/// Bytes of the truncated MAC (128 bits).
const TAG_LEN: usize = 16;
const VERSION: u8 = 1;

/// The key tracking tokens are signed with. Cloning copies a keyed HMAC
/// state (a few hundred bytes), so signing never re-derives the key.
#[derive(Clone)]
pub struct TrackingKey {
    mac: Hmac<Sha256>,
}

impl std::fmt::Debug for TrackingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TrackingKey")
    }
}

/// What a token points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token {
    /// The open pixel of a message.
    Open { message: i64 },
    /// Link `link` (0-based, in `links` order) of a message.
    Click { message: i64, link: u32 },
    /// The unsubscribe link of a message.
    Unsubscribe { message: i64 },
}

impl Token {
    pub fn message(self) -> i64 {
        match self {
            Token::Open { message }
            | Token::Click { message, .. }
            | Token::Unsubscribe { message } => message,
        }
    }

    fn kind(self) -> u8 {
        match self {
            Token::Open { .. } => 1,
            Token::Click { .. } => 2,
            Token::Unsubscribe { .. } => 3,
        }
    }
}

impl TrackingKey {
    pub fn new(secrets: &Secrets) -> TrackingKey {
        TrackingKey::from_bytes(&secrets.derive("tracking"))
    }

    /// A key from raw bytes (tests and benchmarks).
    pub fn from_bytes(key: &[u8; 32]) -> TrackingKey {
        TrackingKey {
            mac: <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length"),
        }
    }

    /// The URL-safe text of `token`.
    pub fn sign(&self, token: Token) -> String {
        let mut bytes = Vec::with_capacity(1 + 10 + 5 + TAG_LEN);
        bytes.push(VERSION << 4 | token.kind());
        put_varint(&mut bytes, token.message() as u64);
        if let Token::Click { link, .. } = token {
            put_varint(&mut bytes, u64::from(link));
        }
        let mut mac = self.mac.clone();
        mac.update(&bytes);
        bytes.extend_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
        B64.encode(bytes)
    }

    /// The token `text` carries, or None when it is malformed or its MAC
    /// does not match (tampered, or signed with another key).
    pub fn verify(&self, text: &str) -> Option<Token> {
        // The longest token is 1 + 10 + 5 + 16 bytes: 43 characters.
        if text.len() > 43 {
            return None;
        }
        let bytes = B64.decode(text).ok()?;
        let split = bytes.len().checked_sub(TAG_LEN)?;
        let (payload, tag) = bytes.split_at(split);
        let mut mac = self.mac.clone();
        mac.update(payload);
        mac.verify_truncated_left(tag).ok()?;
        parse(payload)
    }
}

/// Reads a payload whose MAC has been checked.
fn parse(payload: &[u8]) -> Option<Token> {
    let (&head, mut rest) = payload.split_first()?;
    if head >> 4 != VERSION {
        return None;
    }
    let message = i64::try_from(take_varint(&mut rest)?).ok()?;
    let token = match head & 0x0f {
        1 => Token::Open { message },
        2 => Token::Click {
            message,
            link: u32::try_from(take_varint(&mut rest)?).ok()?,
        },
        3 => Token::Unsubscribe { message },
        _ => return None,
    };
    rest.is_empty().then_some(token)
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads one minimal LEB128 number (at most 10 bytes, no trailing zero
/// groups) from the front of `bytes`.
fn take_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut n: u64 = 0;
    for i in 0..10 {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        let part = u64::from(b & 0x7f);
        if i == 9 && part > 1 {
            return None;
        }
        n |= part << (7 * i);
        if b & 0x80 == 0 {
            // A last byte of zero after others would be a second spelling.
            return (i == 0 || b != 0).then_some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TrackingKey {
        TrackingKey::from_bytes(&[7; 32])
    }

    #[test]
    fn tokens_round_trip_and_stay_compact() {
        let k = key();
        for t in [
            Token::Open { message: 1 },
            Token::Open { message: 1_000_000 },
            Token::Click {
                message: 42,
                link: 0,
            },
            Token::Click {
                message: i64::MAX,
                link: u32::MAX,
            },
            Token::Unsubscribe { message: 300 },
        ] {
            let text = k.sign(t);
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{text}"
            );
            assert_eq!(k.verify(&text), Some(t), "{text}");
        }
        assert_eq!(k.sign(Token::Open { message: 1_000_000 }).len(), 27);
        assert_eq!(
            k.sign(Token::Click {
                message: 1_000_000,
                link: 3
            })
            .len(),
            28
        );
    }

    #[test]
    fn tampered_foreign_and_malformed_tokens_fail() {
        let k = key();
        let text = k.sign(Token::Click {
            message: 42,
            link: 1,
        });
        // Every single-character change is refused.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for i in 0..text.len() {
            for &c in alphabet {
                let mut bytes = text.clone().into_bytes();
                if bytes[i] == c {
                    continue;
                }
                bytes[i] = c;
                let changed = String::from_utf8(bytes).unwrap();
                assert_eq!(k.verify(&changed), None, "{changed}");
            }
        }
        // Another server's key, truncation, extension, junk.
        assert_eq!(TrackingKey::from_bytes(&[8; 32]).verify(&text), None);
        assert_eq!(k.verify(&text[..text.len() - 1]), None);
        assert_eq!(k.verify(&format!("{text}A")), None);
        for junk in ["", "{token}", "AAAA", "!!!!", &"A".repeat(500)] {
            assert_eq!(k.verify(junk), None, "{junk}");
        }
        // A correctly signed payload of an unknown kind or version.
        for head in [0x14u8, 0x24] {
            let mut payload = vec![head, 5];
            let mut mac = k.mac.clone();
            mac.update(&payload);
            payload.extend_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
            assert_eq!(k.verify(&B64.encode(payload)), None);
        }
    }

    #[test]
    fn varints_are_minimal() {
        let mut bytes: &[u8] = &[0x85, 0x00];
        assert_eq!(take_varint(&mut bytes), None);
        let mut bytes: &[u8] = &[0x00];
        assert_eq!(take_varint(&mut bytes), Some(0));
        let mut bytes: &[u8] = &[0xff; 11];
        assert_eq!(take_varint(&mut bytes), None);
        let mut out = Vec::new();
        put_varint(&mut out, u64::MAX);
        let mut bytes: &[u8] = &out;
        assert_eq!(take_varint(&mut bytes), Some(u64::MAX));
    }
}
