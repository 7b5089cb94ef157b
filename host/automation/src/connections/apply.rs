//! A saved connection in an `http_request` run: its base URL and headers
//! merge under the action's own. The action's URL, when relative or empty,
//! joins the base URL; an absolute one (http:// or https://) is used as it
//! is and must have the connection's origin, so the connection's headers
//! reach no other host. The action's headers win over the connection's
//! (names compared without case). The SSRF guard then checks the merged
//! URL like any other, when the request is sent.
//!
//! A connection deleted since the workflow was saved leaves an action with
//! an absolute URL running on it without the connection's headers; an
//! action that has only the connection fails with "Connection N no longer
//! exists".

use std::collections::BTreeMap;

use outreach_ssrf::Url;

use super::service::{self, Opened};
use crate::workflows::engine::{Failure, RunEnv};
use crate::workflows::http_action::{HttpRequestConfig, MergedConnection};

/// Whether an action's URL stands on its own rather than relative to a
/// connection's base URL. Only http(s) counts: `Url::parse` would read
/// "contacts:list" or "localhost:8080/x" as absolute URLs of odd schemes.
pub fn is_absolute(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// `base` and a relative `path` as one URL: always with one slash between
/// them (or none before a query), so no path can change the host.
pub fn join(base: &str, path: &str) -> String {
    let path = path.trim();
    if path.is_empty() {
        base.to_owned()
    } else if path.starts_with('?') {
        format!("{base}{path}")
    } else {
        format!(
            "{}/{}",
            base.trim_end_matches('/'),
            path.trim_start_matches(['/', '\\'])
        )
    }
}

/// The request with `conn` merged in, or why it cannot be.
pub fn merge(mut request: HttpRequestConfig, conn: &Opened) -> Result<HttpRequestConfig, String> {
    let base = Url::parse(&conn.base_url)
        .map_err(|e| format!("Connection {}'s base_url is unusable: {e}", conn.id))?;
    let origin = base.origin().ascii_serialization();
    let url = if is_absolute(&request.url) {
        request.url.trim().to_owned()
    } else {
        join(&conn.base_url, &request.url)
    };
    // A URL that does not parse fails when sent, with its own message.
    if let Ok(merged) = Url::parse(&url)
        && merged.origin().ascii_serialization() != origin
    {
        return Err(format!(
            "config.url {url} is outside connection {}'s origin {origin}; its headers are sent \
             only there (use a relative url, or another connection)",
            conn.id
        ));
    }
    let mut headers: BTreeMap<String, String> = conn
        .headers
        .iter()
        .filter(|(name, _)| {
            !request
                .headers
                .keys()
                .any(|own| own.eq_ignore_ascii_case(name))
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let sealed_headers = headers.keys().map(|n| n.to_ascii_lowercase()).collect();
    headers.extend(std::mem::take(&mut request.headers));
    request.url = url;
    request.headers = headers;
    request.connection = Some(MergedConnection {
        sealed_headers,
        origin,
    });
    Ok(request)
}

/// The connection an action names, opened at most once per action (a
/// `per_domain` action sends once per item).
#[derive(Default)]
pub struct ConnectionCache {
    opened: Option<Option<Opened>>,
}

impl ConnectionCache {
    /// `request` ready to send: unchanged without a `connection_id`, else
    /// with the connection merged in (see the module's rules).
    pub async fn apply(
        &mut self,
        env: &RunEnv<'_>,
        request: HttpRequestConfig,
    ) -> Result<HttpRequestConfig, Failure> {
        let Some(id) = request.connection_id else {
            return Ok(request);
        };
        if self.opened.is_none() {
            let opened = service::open(env.state, env.actor.account_id, id)
                .await
                .map_err(|e| {
                    tracing::warn!(connection_id = id, "opening a saved connection: {e:#}");
                    Failure::fatal(format!(
                        "Connection {id} cannot be opened (was the encryption key changed?)"
                    ))
                })?;
            self.opened = Some(opened);
        }
        match self.opened.as_ref().and_then(Option::as_ref) {
            Some(conn) => merge(request, conn).map_err(Failure::fatal),
            None if is_absolute(&request.url) => Ok(request),
            None => Err(Failure::fatal(format!(
                "Connection {id} no longer exists, and the action has no absolute url of its own"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opened(base: &str) -> Opened {
        Opened {
            id: 7,
            base_url: base.to_owned(),
            headers: [
                ("Authorization".to_owned(), "Bearer sk-conn".to_owned()),
                ("X-Tenant".to_owned(), "acme".to_owned()),
            ]
            .into(),
        }
    }

    fn request(config: serde_json::Value) -> HttpRequestConfig {
        HttpRequestConfig::from_config(&config).unwrap()
    }

    #[test]
    fn relative_urls_join_the_base_and_cannot_leave_its_host() {
        let base = "https://api.example.com/v2";
        for (path, want) in [
            ("", "https://api.example.com/v2"),
            ("contacts", "https://api.example.com/v2/contacts"),
            ("/contacts?x=1", "https://api.example.com/v2/contacts?x=1"),
            ("?x=1", "https://api.example.com/v2?x=1"),
            ("//10.0.0.1/x", "https://api.example.com/v2/10.0.0.1/x"),
            ("@10.0.0.1/x", "https://api.example.com/v2/@10.0.0.1/x"),
            (
                "\\\\evil.example/x",
                "https://api.example.com/v2/evil.example/x",
            ),
        ] {
            assert_eq!(join(base, path), want, "{path}");
            let host = Url::parse(&join(base, path)).unwrap();
            assert_eq!(host.host_str(), Some("api.example.com"), "{path}");
        }
        assert_eq!(
            join("https://api.example.com/", "a"),
            "https://api.example.com/a"
        );
    }

    #[test]
    fn the_actions_headers_win_and_the_connections_are_sealed() {
        let r = request(json!({"connection_id": 7, "url": "/people",
            "headers": {"x-tenant": "mine", "Accept": "application/json"}}));
        let merged = merge(r, &opened("https://api.example.com")).unwrap();
        assert_eq!(merged.url, "https://api.example.com/people");
        assert_eq!(merged.headers.len(), 3);
        assert_eq!(merged.headers["x-tenant"], "mine");
        assert!(!merged.headers.contains_key("X-Tenant"));
        let c = merged.connection.clone().unwrap();
        assert_eq!(c.origin, "https://api.example.com");
        assert_eq!(
            c.sealed_headers.into_iter().collect::<Vec<_>>(),
            ["authorization"]
        );
        let recorded = merged.recorded_headers();
        assert_eq!(recorded["Authorization"], "[redacted]");
        assert_eq!(recorded["x-tenant"], "mine");
        assert_eq!(
            merged.scrub("echo: Bearer sk-conn"),
            "echo: [redacted]",
            "a receiver's echo of the secret is scrubbed"
        );
    }

    #[test]
    fn a_connection_header_is_redacted_whatever_its_name() {
        let r = request(json!({"connection_id": 7}));
        let merged = merge(r, &opened("https://api.example.com")).unwrap();
        let text = format!("{merged:?} {:?}", merged.recorded_headers());
        assert!(
            !text.contains("acme") && !text.contains("sk-conn"),
            "{text}"
        );
    }

    #[test]
    fn an_absolute_url_must_keep_the_connections_origin() {
        let conn = opened("https://api.example.com/v2");
        let same = request(json!({"connection_id": 7, "url": "https://api.example.com/other"}));
        assert_eq!(
            merge(same, &conn).unwrap().url,
            "https://api.example.com/other"
        );
        for url in [
            "https://evil.example/x",
            "http://api.example.com/x",
            "https://api.example.com:8443/x",
        ] {
            let r = request(json!({"connection_id": 7, "url": url}));
            let e = merge(r, &conn).unwrap_err();
            assert!(e.contains("outside connection 7's origin"), "{url}: {e}");
        }
    }

    #[test]
    fn absolute_means_http_or_https() {
        assert!(is_absolute("HTTPS://x.example") && is_absolute(" http://x"));
        assert!(!is_absolute("localhost:8080/x") && !is_absolute("contacts:list"));
        assert!(!is_absolute("/a") && !is_absolute(""));
    }
}
