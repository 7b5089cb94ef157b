//! Company profiles on social networks, as canonical URLs. Share, intent
//! and login links, personal LinkedIn profiles and single posts are not
//! profiles and are ignored.

use super::url::Url;
use super::{SocialLink, SocialNetwork};

/// Profiles kept per page.
pub(crate) const MAX_SOCIAL: usize = 50;

/// The canonical profile URL `href` points to, if it is one.
pub(crate) fn profile(href: &str) -> Option<(SocialNetwork, String)> {
    let url = Url::parse(href)?;
    let host = url.host.trim_start_matches("www.").trim_start_matches("m.");
    let segments: Vec<String> = url.segments().collect();
    let first = segments.first().map(String::as_str).unwrap_or_default();
    let handle_ok = |h: &str| {
        !h.is_empty()
            && h.len() <= 100
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    };
    match host {
        "linkedin.com" | "de.linkedin.com" | "uk.linkedin.com" | "fr.linkedin.com" => {
            let kind = first;
            let slug = segments.get(1)?;
            let is_company = matches!(kind, "company" | "school" | "showcase");
            (is_company && handle_ok(slug)).then(|| {
                (
                    SocialNetwork::Linkedin,
                    format!("https://www.linkedin.com/{kind}/{slug}"),
                )
            })
        }
        "twitter.com" | "x.com" => {
            const NOT_PROFILES: &[&str] = &[
                "intent",
                "share",
                "home",
                "hashtag",
                "search",
                "i",
                "explore",
                "login",
                "signup",
                "privacy",
                "tos",
                "settings",
                "messages",
                "notifications",
            ];
            let handle = first.trim_start_matches('@');
            (segments.len() == 1 && handle_ok(handle) && !NOT_PROFILES.contains(&handle))
                .then(|| (SocialNetwork::Twitter, format!("https://x.com/{handle}")))
        }
        "facebook.com" | "fb.com" | "fb.me" => {
            const NOT_PROFILES: &[&str] = &[
                "sharer",
                "sharer.php",
                "share",
                "share.php",
                "dialog",
                "plugins",
                "tr",
                "login",
                "login.php",
                "events",
                "groups",
                "watch",
                "photo",
                "photo.php",
                "story.php",
                "permalink.php",
                "hashtag",
                "help",
                "policies",
                "privacy",
                "legal",
            ];
            if first == "pages" {
                let rest = segments.get(1..)?.join("/");
                return handle_ok(segments.get(1)?).then(|| {
                    (
                        SocialNetwork::Facebook,
                        format!("https://www.facebook.com/pages/{rest}"),
                    )
                });
            }
            if first == "profile.php" {
                let id = url.query.split('&').find_map(|p| p.strip_prefix("id="))?;
                return id.bytes().all(|b| b.is_ascii_digit()).then(|| {
                    (
                        SocialNetwork::Facebook,
                        format!("https://www.facebook.com/profile.php?id={id}"),
                    )
                });
            }
            (handle_ok(first) && !NOT_PROFILES.contains(&first)).then(|| {
                (
                    SocialNetwork::Facebook,
                    format!("https://www.facebook.com/{first}"),
                )
            })
        }
        "instagram.com" => {
            const NOT_PROFILES: &[&str] =
                &["p", "reel", "reels", "explore", "accounts", "stories", "tv"];
            (handle_ok(first) && !NOT_PROFILES.contains(&first)).then(|| {
                (
                    SocialNetwork::Instagram,
                    format!("https://www.instagram.com/{first}"),
                )
            })
        }
        "youtube.com" => {
            // Channel ids are case-sensitive; take them from the original.
            let original: Vec<&str> = url.path.split('/').filter(|s| !s.is_empty()).collect();
            let path = match first {
                handle if handle.starts_with('@') && handle_ok(&handle[1..]) => {
                    original.first()?.to_string()
                }
                "channel" | "c" | "user" => {
                    let name = original.get(1)?;
                    if !handle_ok(name) {
                        return None;
                    }
                    format!("{first}/{name}")
                }
                _ => return None,
            };
            Some((
                SocialNetwork::Youtube,
                format!("https://www.youtube.com/{path}"),
            ))
        }
        "github.com" => {
            const NOT_PROFILES: &[&str] = &[
                "sponsors",
                "features",
                "about",
                "login",
                "join",
                "marketplace",
                "pricing",
                "topics",
                "explore",
                "trending",
                "collections",
                "orgs",
                "settings",
                "site",
                "security",
                "enterprise",
            ];
            (handle_ok(first) && !NOT_PROFILES.contains(&first))
                .then(|| (SocialNetwork::Github, format!("https://github.com/{first}")))
        }
        "tiktok.com" => {
            let handle = first.strip_prefix('@')?;
            handle_ok(handle).then(|| {
                (
                    SocialNetwork::Tiktok,
                    format!("https://www.tiktok.com/@{handle}"),
                )
            })
        }
        _ => None,
    }
}

/// Adds the profile `href` points to, once per URL.
pub(crate) fn add(links: &mut Vec<SocialLink>, href: &str, from_json_ld: bool) {
    if links.len() >= MAX_SOCIAL {
        return;
    }
    let Some((network, url)) = profile(href) else {
        return;
    };
    if let Some(existing) = links.iter_mut().find(|l| l.url == url) {
        existing.from_json_ld |= from_json_ld;
        return;
    }
    links.push(SocialLink {
        network,
        url,
        from_json_ld,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_profiles() {
        let url = |href: &str| profile(href).map(|(_, url)| url);
        let cases = [
            (
                "https://www.linkedin.com/company/acme-inc/",
                Some("https://www.linkedin.com/company/acme-inc"),
            ),
            (
                "https://de.linkedin.com/company/Acme/about",
                Some("https://www.linkedin.com/company/acme"),
            ),
            ("https://www.linkedin.com/in/jane-doe", None),
            ("https://www.linkedin.com/shareArticle?url=x", None),
            ("https://twitter.com/AcmeHQ", Some("https://x.com/acmehq")),
            (
                "https://x.com/@acmehq?lang=en",
                Some("https://x.com/acmehq"),
            ),
            ("https://twitter.com/intent/tweet?text=hi", None),
            ("https://twitter.com/share?url=x", None),
            ("https://twitter.com/acmehq/status/123", None),
            (
                "https://www.facebook.com/acmeinc/",
                Some("https://www.facebook.com/acmeinc"),
            ),
            (
                "https://m.facebook.com/AcmeInc",
                Some("https://www.facebook.com/acmeinc"),
            ),
            ("https://www.facebook.com/sharer/sharer.php?u=x", None),
            (
                "https://www.facebook.com/profile.php?id=1234",
                Some("https://www.facebook.com/profile.php?id=1234"),
            ),
            (
                "https://instagram.com/acme.shop/",
                Some("https://www.instagram.com/acme.shop"),
            ),
            ("https://www.instagram.com/p/Cxyz/", None),
            (
                "https://www.youtube.com/@AcmeTV",
                Some("https://www.youtube.com/@AcmeTV"),
            ),
            (
                "https://www.youtube.com/channel/UCabcDEF123",
                Some("https://www.youtube.com/channel/UCabcDEF123"),
            ),
            ("https://www.youtube.com/watch?v=abc", None),
            (
                "https://github.com/acme/widgets",
                Some("https://github.com/acme"),
            ),
            ("https://github.com/features", None),
            (
                "https://www.tiktok.com/@acme",
                Some("https://www.tiktok.com/@acme"),
            ),
            ("https://www.tiktok.com/tag/x", None),
            ("https://example.com/acme", None),
        ];
        for (href, expected) in cases {
            assert_eq!(url(href).as_deref(), expected, "{href}");
        }
    }
}
