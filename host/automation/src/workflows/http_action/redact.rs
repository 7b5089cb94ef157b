//! What run records may show of an `http_request`: header values that are
//! credentials (by name, or because a saved connection supplied them) are
//! replaced by [`REDACTED`].

use std::collections::{BTreeMap, BTreeSet};

use super::HttpRequestConfig;

/// The text that replaces a secret header's value in stored run records.
pub const REDACTED: &str = "[redacted]";

/// What a saved connection added to a request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergedConnection {
    /// Lower-case names of the headers whose values the connection supplied
    /// (the action's own did not replace them). They are secrets sealed at
    /// rest, so records redact them whatever their names.
    pub sealed_headers: BTreeSet<String>,
    /// The connection's origin (`https://api.example.com`): the only one
    /// its headers may reach, redirects included.
    pub origin: String,
}

impl HttpRequestConfig {
    /// The headers as a run record keeps them: credential-named ones and
    /// every one a saved connection supplied show `[redacted]`.
    pub fn recorded_headers(&self) -> BTreeMap<String, String> {
        redact_where(&self.headers, |name| {
            self.connection
                .as_ref()
                .is_some_and(|c| c.sealed_headers.contains(&name.to_ascii_lowercase()))
        })
    }

    /// `text` (an error for the run record) without the values of the
    /// connection's headers: a receiver may echo them in an error body.
    pub fn scrub(&self, text: &str) -> String {
        let Some(c) = &self.connection else {
            return text.to_owned();
        };
        let mut out = text.to_owned();
        for (name, value) in &self.headers {
            // Very short values would blank out ordinary words.
            if c.sealed_headers.contains(&name.to_ascii_lowercase()) && value.len() >= 4 {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }
}

/// Whether a header's value is a credential, judged by its name.
fn is_secret_header(name: &str) -> bool {
    const EXACT: [&str; 5] = [
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
    ];
    // Names vendors give their keys vary (X-Auth-Token, Api-Key,
    // X-Client-Secret, X-Session-Cookie); any of these words marks one.
    const WORDS: [&str; 8] = [
        "token",
        "secret",
        "key",
        "password",
        "passwd",
        "auth",
        "cookie",
        "credential",
    ];
    let name = name.to_ascii_lowercase();
    EXACT.contains(&name.as_str()) || WORDS.iter().any(|w| name.contains(w))
}

/// The headers to store in a run record: the values of credential headers
/// (Authorization, Proxy-Authorization, Cookie, X-Api-Key, and any name
/// containing token, secret, key, password, auth, cookie or credential,
/// case-insensitively) become `[redacted]`; names are kept.
pub fn redact_headers(headers: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    redact_where(headers, |_| false)
}

/// [`redact_headers`], also redacting the names `sealed` says.
fn redact_where(
    headers: &BTreeMap<String, String>,
    sealed: impl Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let value = if sealed(name) || is_secret_header(name) {
                REDACTED.to_owned()
            } else {
                value.clone()
            };
            (name.clone(), value)
        })
        .collect()
}
