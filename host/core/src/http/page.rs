//! Small self-contained HTML pages for the public links people open in a
//! browser (unsubscribe, workflow approvals): no scripts, no external
//! resources, and headers that keep them that way.

use std::sync::LazyLock;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use sha2::{Digest, Sha256};

/// The one style sheet every page carries inline.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;\
padding:0 1rem;color:#222;line-height:1.5}button{font-size:1rem;padding:.6rem 1.2rem;\
margin-right:.6rem}ul{padding-left:1.2rem}.muted{color:#666}";

/// The Content-Security-Policy: nothing may load or run; the inline style
/// is allowed by its hash rather than by `'unsafe-inline'`; forms post only
/// back to this origin; no framing (clickjacking a decision button).
static POLICY: LazyLock<String> = LazyLock::new(|| {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'"
    )
});

/// Escapes the five characters that matter in HTML text and in quoted
/// attribute values, so a value can neither open a tag nor leave an
/// attribute.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page with `title` (plain text, escaped here) and `content` (HTML the
/// caller built, with every value escaped). Not cached anywhere (the links
/// carry secrets), not sent as a referrer, never sniffed as another type.
pub fn html_page(status: StatusCode, title: &str, content: &str) -> Response {
    let title = escape_html(title);
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\"><title>{title}</title>\
         <style>{STYLE}</style></head><body><h1>{title}</h1>{content}</body></html>"
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CONTENT_SECURITY_POLICY, POLICY.as_str()),
        ],
        html,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape_html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_policy_allows_the_inline_style_by_its_hash_only() {
        let page = html_page(StatusCode::OK, "<T>", "<p>x</p>");
        let csp = page.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            csp.starts_with("default-src 'none'; style-src 'sha256-"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(page.headers()[header::CACHE_CONTROL], "no-store");
    }
}
