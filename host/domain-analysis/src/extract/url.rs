//! The little of URL handling extraction needs: parse an `http`/`https`
//! URL, resolve a link against its page, percent-decode. Not a full WHATWG
//! parser (the crate keeps its dependencies few); anything it does not
//! understand is dropped, which only loses a link.

/// An absolute `http` or `https` URL without its fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    pub scheme: &'static str,
    /// Lower case, without port or user-info.
    pub host: String,
    /// `:8080` or empty.
    pub port: String,
    /// Starts with `/`.
    pub path: String,
    /// Without the `?`; empty when absent.
    pub query: String,
}

impl Url {
    /// Parses an absolute `http`/`https` URL.
    pub fn parse(input: &str) -> Option<Url> {
        let cleaned = clean(input);
        let (scheme, rest) = cleaned.split_once(':')?;
        let scheme = if scheme.eq_ignore_ascii_case("https") {
            "https"
        } else if scheme.eq_ignore_ascii_case("http") {
            "http"
        } else {
            return None;
        };
        let rest = rest.trim_start_matches('/');
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        // IP literals in brackets are not company sites; dropping them keeps
        // the port split simple.
        if host_port.starts_with('[') {
            return None;
        }
        let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
        if !port.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if host.is_empty() {
            return None;
        }
        let (path, query) = split_path(&rest[authority_end..]);
        Some(Url {
            scheme,
            host: host.to_ascii_lowercase(),
            port: if port.is_empty() {
                String::new()
            } else {
                format!(":{port}")
            },
            path: if path.is_empty() {
                "/".to_owned()
            } else {
                remove_dot_segments(path)
            },
            query: query.to_owned(),
        })
    }

    /// Resolves `href` (as found in a page) against this URL. `None` for
    /// other schemes (`mailto:`, `javascript:`...) and unreadable links.
    pub fn join(&self, href: &str) -> Option<Url> {
        let href = clean(href);
        if href.is_empty() || href.starts_with('#') {
            return Some(self.clone());
        }
        if has_scheme(&href) {
            return Url::parse(&href);
        }
        if href.starts_with("//") {
            return Url::parse(&format!("{}:{href}", self.scheme));
        }
        let (path, query) = split_path(&href);
        let mut url = self.clone();
        url.query = query.to_owned();
        if path.is_empty() {
            if !href.starts_with('?') {
                url.query = self.query.clone();
            }
            return Some(url);
        }
        url.path = if path.starts_with('/') {
            remove_dot_segments(path)
        } else {
            let directory = &self.path[..self.path.rfind('/').map_or(0, |at| at + 1)];
            remove_dot_segments(&format!("{directory}{path}"))
        };
        Some(url)
    }

    /// Path segments, percent-decoded and in lower case, empty ones left
    /// out.
    pub fn segments(&self) -> impl Iterator<Item = String> + '_ {
        self.path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| percent_decode(s).to_lowercase())
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}://{}{}{}",
            self.scheme, self.host, self.port, self.path
        )?;
        if !self.query.is_empty() {
            write!(f, "?{}", self.query)?;
        }
        Ok(())
    }
}

/// Browsers drop leading and trailing spaces and every tab and newline in
/// a URL, and read `\` as `/`.
fn clean(input: &str) -> String {
    input
        .trim()
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .map(|c| if c == '\\' { '/' } else { c })
        .collect()
}

fn has_scheme(href: &str) -> bool {
    let Some((scheme, _)) = href.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// Splits `path?query#fragment` into path and query, dropping the
/// fragment.
fn split_path(s: &str) -> (&str, &str) {
    let s = s.split('#').next().unwrap_or(s);
    s.split_once('?').unwrap_or((s, ""))
}

/// RFC 3986 5.2.4, on whole segments.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (index, segment) in segments.iter().enumerate() {
        match *segment {
            "." | ".." if index == last => {
                if *segment == ".." {
                    out.pop();
                }
                out.push("");
            }
            "." => {}
            ".." => {
                out.pop();
            }
            "" if index == 0 => {}
            other => out.push(other),
        }
    }
    format!("/{}", out.join("/"))
}

/// Decodes `%XX` escapes; invalid escapes are kept as they are and invalid
/// UTF-8 is replaced.
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_joins() {
        let base = Url::parse("HTTPS://WWW.Acme.com:8443/en/products/index.html?x=1#top").unwrap();
        assert_eq!(base.host, "www.acme.com");
        assert_eq!(
            base.to_string(),
            "https://www.acme.com:8443/en/products/index.html?x=1"
        );
        let join = |href: &str| base.join(href).map(|u| u.to_string());
        assert_eq!(
            join("/contact").as_deref(),
            Some("https://www.acme.com:8443/contact")
        );
        assert_eq!(
            join("../about/").as_deref(),
            Some("https://www.acme.com:8443/en/about/")
        );
        assert_eq!(
            join("team.html").as_deref(),
            Some("https://www.acme.com:8443/en/products/team.html")
        );
        assert_eq!(
            join("//cdn.acme.com/a").as_deref(),
            Some("https://cdn.acme.com/a")
        );
        assert_eq!(
            join("?page=2").as_deref(),
            Some("https://www.acme.com:8443/en/products/index.html?page=2")
        );
        assert_eq!(
            join("#x").as_deref(),
            Some("https://www.acme.com:8443/en/products/index.html?x=1")
        );
        assert_eq!(
            join("http://other.org").as_deref(),
            Some("http://other.org/")
        );
        assert_eq!(join("mailto:info@acme.com"), None);
        assert_eq!(join("javascript:void(0)"), None);
        assert_eq!(
            join("/a/./b/../../c").as_deref(),
            Some("https://www.acme.com:8443/c")
        );
        assert_eq!(
            join(" /über\tuns ").as_deref(),
            Some("https://www.acme.com:8443/überuns")
        );
    }

    #[test]
    fn decodes_percent_escapes() {
        assert_eq!(percent_decode("%C3%BCber%20uns%zz%"), "über uns%zz%");
    }
}
