//! spec/2's two signal sets, the intent score with its level, and
//! `likely_buys` and `gaps`, from a domain's technologies (as the
//! fingerprints categorise them) and what its pages show. One documented
//! mapping (the tables below, summed up in docs/decisions/domain-pool.md,
//! "Signals and intent"):
//! alerts, audiences and search all read the signals it produces.

use std::collections::BTreeSet;

/// spec/2 "Alert signal values", in the spec's order.
pub const ALERT_SIGNALS: [&str; 14] = [
    "has_analytics",
    "has_crm",
    "has_ecommerce",
    "has_chat_widget",
    "has_email_marketing",
    "has_payments",
    "has_helpdesk",
    "has_cdn",
    "has_ssl",
    "has_forms",
    "has_ads",
    "has_seo_tools",
    "has_ab_testing",
    "has_api",
];

/// spec/2 "Audience signal values", in the spec's order.
pub const AUDIENCE_SIGNALS: [&str; 21] = [
    "has_analytics",
    "has_crm",
    "has_ecommerce",
    "has_marketing_automation",
    "has_live_chat",
    "has_helpdesk",
    "has_cdn",
    "has_ssl",
    "has_blog",
    "has_social_media",
    "has_payment",
    "has_advertising",
    "has_newsletter",
    "has_video",
    "has_podcast",
    "has_forum",
    "has_job_board",
    "has_login",
    "has_api",
    "has_mobile_app",
    "has_saas",
];

/// What the crawled pages show, beside the technologies: the extractor's
/// [`PageFeatures`], merged over a site's pages.
pub use crate::extract::PageFeatures as PageSignals;

/// A detected technology as the signals read it.
#[derive(Debug, Clone, Copy)]
pub struct Tech<'a> {
    pub name: &'a str,
    pub categories: &'a [String],
}

/// Help-desk products the fingerprints file under other categories (live
/// chat, issue trackers).
const HELPDESKS: &[&str] = &[
    "Zendesk",
    "Freshdesk",
    "Help Scout",
    "Gorgias",
    "Kustomer",
    "Gladly",
    "HappyFox",
    "Zoho Desk",
    "Front",
    "Freshservice",
    "Jira Service Management",
];

/// Capabilities: the fingerprint categories that give each one.
const CAPABILITIES: &[(&str, &[&str])] = &[
    ("analytics", &["Analytics", "RUM"]),
    ("crm", &["CRM"]),
    (
        "ecommerce",
        &["Ecommerce", "Ecommerce frontends", "Cart abandonment"],
    ),
    ("live_chat", &["Live chat"]),
    ("email_marketing", &["Email"]),
    (
        "marketing_automation",
        &["Marketing automation", "Customer data platform"],
    ),
    ("payments", &["Payment processors", "Buy now pay later"]),
    ("cdn", &["CDN"]),
    ("ssl", &["SSL/TLS certificate authorities"]),
    ("forms", &["Form builders", "Surveys"]),
    ("ads", &["Advertising", "Retargeting", "Affiliate programs"]),
    ("seo", &["SEO"]),
    (
        "ab_testing",
        &["A/B Testing", "Personalisation", "Feature management"],
    ),
    ("blog", &["Blogs"]),
    ("video", &["Video players", "Livestreaming"]),
    ("forum", &["Message boards"]),
    ("recruiting", &["Recruitment & staffing"]),
    ("authentication", &["Authentication"]),
    ("mobile", &["Mobile frameworks"]),
    ("reviews", &["Reviews"]),
    ("helpdesk", &["Issue trackers"]),
];

/// Everything the signals, score and gaps are computed from.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Capability names present (see [`CAPABILITIES`]).
    pub capabilities: BTreeSet<&'static str>,
    pub alert: Vec<&'static str>,
    pub audience: Vec<&'static str>,
}

/// The signals of a domain.
pub fn read(techs: &[Tech<'_>], page: &PageSignals) -> Reading {
    let mut caps: BTreeSet<&'static str> = BTreeSet::new();
    for t in techs {
        for (cap, cats) in CAPABILITIES {
            if t.categories.iter().any(|c| cats.contains(&c.as_str())) {
                caps.insert(cap);
            }
        }
        if HELPDESKS.iter().any(|h| h.eq_ignore_ascii_case(t.name)) {
            caps.insert("helpdesk");
        }
    }
    let has = |cap: &str| caps.contains(cap);
    let ssl = page.has_ssl || has("ssl");
    let forms = page.has_forms || has("forms");
    let blog = page.has_blog || has("blog");
    let video = page.has_video || has("video");
    let forum = page.has_forum || has("forum");
    let careers = page.has_job_board || has("recruiting");
    let login = page.has_login || has("authentication");
    let mobile = page.has_mobile_app || has("mobile");
    let newsletter = page.has_newsletter || has("email_marketing");
    // A software business: people sign in, and it sells plans (a pricing
    // page or a payment processor) rather than goods.
    let saas = login && (page.has_pricing || has("payments")) && !has("ecommerce");
    let alert_table: [(&'static str, bool); 14] = [
        ("has_analytics", has("analytics")),
        ("has_crm", has("crm")),
        ("has_ecommerce", has("ecommerce")),
        ("has_chat_widget", has("live_chat")),
        (
            "has_email_marketing",
            has("email_marketing") || has("marketing_automation"),
        ),
        ("has_payments", has("payments")),
        ("has_helpdesk", has("helpdesk")),
        ("has_cdn", has("cdn")),
        ("has_ssl", ssl),
        ("has_forms", forms),
        ("has_ads", has("ads")),
        ("has_seo_tools", has("seo")),
        ("has_ab_testing", has("ab_testing")),
        ("has_api", page.has_api),
    ];
    let audience_table: [(&'static str, bool); 21] = [
        ("has_analytics", has("analytics")),
        ("has_crm", has("crm")),
        ("has_ecommerce", has("ecommerce")),
        ("has_marketing_automation", has("marketing_automation")),
        ("has_live_chat", has("live_chat")),
        ("has_helpdesk", has("helpdesk")),
        ("has_cdn", has("cdn")),
        ("has_ssl", ssl),
        ("has_blog", blog),
        ("has_social_media", page.has_social_media),
        ("has_payment", has("payments")),
        ("has_advertising", has("ads")),
        ("has_newsletter", newsletter),
        ("has_video", video),
        ("has_podcast", page.has_podcast),
        ("has_forum", forum),
        ("has_job_board", careers),
        ("has_login", login),
        ("has_api", page.has_api),
        ("has_mobile_app", mobile),
        ("has_saas", saas),
    ];
    if careers {
        caps.insert("hiring");
    }
    Reading {
        capabilities: caps,
        alert: alert_table
            .iter()
            .filter(|(_, on)| *on)
            .map(|(s, _)| *s)
            .collect(),
        audience: audience_table
            .iter()
            .filter(|(_, on)| *on)
            .map(|(s, _)| *s)
            .collect(),
    }
}

/// The level of an intent score (spec/2's tier mapping).
pub fn level(score: i64) -> &'static str {
    match score {
        80.. => "hot",
        50..=79 => "warm",
        20..=49 => "neutral",
        _ => "cold",
    }
}

/// Points of the intent score: what suggests a company is buying now.
/// The sum is capped at 100.
pub const INTENT_POINTS: &[(&str, i64)] = &[
    ("hiring", 20),
    ("technology_changed", 15),
    ("registered_within_90_days", 20),
    ("registered_within_365_days", 10),
    ("ads", 15),
    ("analytics", 5),
    ("ecommerce", 10),
    ("marketing_automation", 10),
    ("crm", 5),
    ("payments", 5),
    ("live_chat", 5),
    ("ab_testing", 5),
];

/// The intent score: [`INTENT_POINTS`] of the reasons that apply.
/// `technology_changed` means technologies were added or removed since the
/// last enrichment; `registered_days_ago` is the domain's age when known.
pub fn intent(
    reading: &Reading,
    technology_changed: bool,
    registered_days_ago: Option<i64>,
) -> i64 {
    let applies = |reason: &str| match reason {
        "technology_changed" => technology_changed,
        "registered_within_90_days" => registered_days_ago.is_some_and(|d| d <= 90),
        "registered_within_365_days" => registered_days_ago.is_some_and(|d| d > 90 && d <= 365),
        cap => reading.capabilities.contains(cap),
    };
    INTENT_POINTS
        .iter()
        .filter(|(reason, _)| applies(reason))
        .map(|(_, points)| points)
        .sum::<i64>()
        .min(100)
}

/// The capabilities a business of each type usually has, most common
/// first. `likely_buys` and `gaps` are read against it.
pub fn expected(business_type: &str, ecommerce: bool) -> &'static [&'static str] {
    if ecommerce {
        return &[
            "analytics",
            "payments",
            "email_marketing",
            "ads",
            "reviews",
            "live_chat",
            "cdn",
        ];
    }
    match business_type {
        "B2B" => &[
            "analytics",
            "crm",
            "marketing_automation",
            "live_chat",
            "seo",
            "ab_testing",
        ],
        "B2C" => &[
            "analytics",
            "ads",
            "email_marketing",
            "payments",
            "live_chat",
            "reviews",
        ],
        "B2B2C" => &[
            "analytics",
            "crm",
            "ads",
            "email_marketing",
            "live_chat",
            "payments",
        ],
        "marketplace" => &[
            "analytics",
            "payments",
            "reviews",
            "live_chat",
            "ads",
            "helpdesk",
        ],
        "non-profit" => &["analytics", "email_marketing", "payments", "forms"],
        "government" => &["analytics", "forms", "cdn"],
        _ => &["analytics", "crm", "email_marketing", "live_chat"],
    }
}

/// `gaps`: the expected capabilities the domain lacks, in the expected
/// order. `likely_buys`: the first three of them, and recruiting software
/// first when the company is hiring without any.
pub fn gaps_and_buys(reading: &Reading, business_type: &str) -> (Vec<String>, Vec<String>) {
    let ecommerce = reading.capabilities.contains("ecommerce");
    let gaps: Vec<String> = expected(business_type, ecommerce)
        .iter()
        .filter(|cap| !reading.capabilities.contains(*cap))
        .map(|cap| (*cap).to_string())
        .collect();
    let mut buys = Vec::new();
    if reading.capabilities.contains("hiring") && !reading.capabilities.contains("recruiting") {
        buys.push("recruiting".to_string());
    }
    buys.extend(gaps.iter().take(3).cloned());
    (gaps, buys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn techs(list: &[(&'static str, &'static str)]) -> Vec<(String, Vec<String>)> {
        list.iter()
            .map(|(n, c)| (n.to_string(), vec![c.to_string()]))
            .collect()
    }

    fn reading(list: &[(&'static str, &'static str)], page: PageSignals) -> Reading {
        let owned = techs(list);
        let t: Vec<Tech<'_>> = owned
            .iter()
            .map(|(name, categories)| Tech { name, categories })
            .collect();
        read(&t, &page)
    }

    #[test]
    fn a_shop_reads_as_a_shop() {
        let r = reading(
            &[
                ("Shopify", "Ecommerce"),
                ("Google Analytics", "Analytics"),
                ("Facebook Pixel", "Advertising"),
                ("Klaviyo", "Email"),
                ("Cloudflare", "CDN"),
            ],
            PageSignals {
                has_ssl: true,
                has_social_media: true,
                ..PageSignals::default()
            },
        );
        for s in [
            "has_ecommerce",
            "has_analytics",
            "has_ads",
            "has_email_marketing",
            "has_cdn",
            "has_ssl",
        ] {
            assert!(r.alert.contains(&s), "{s}: {:?}", r.alert);
        }
        for s in [
            "has_ecommerce",
            "has_advertising",
            "has_newsletter",
            "has_social_media",
        ] {
            assert!(r.audience.contains(&s), "{s}: {:?}", r.audience);
        }
        assert!(!r.audience.contains(&"has_saas"));
        // ecommerce 10 + ads 15 + analytics 5
        assert_eq!(intent(&r, false, None), 30);
        let (gaps, buys) = gaps_and_buys(&r, "B2C");
        assert_eq!(gaps, vec!["payments", "reviews", "live_chat"]);
        assert_eq!(buys, vec!["payments", "reviews", "live_chat"]);
    }

    #[test]
    fn a_hiring_saas_with_fresh_changes_is_hot() {
        let r = reading(
            &[
                ("Stripe", "Payment processors"),
                ("Intercom", "Live chat"),
                ("HubSpot", "Marketing automation"),
                ("Salesforce", "CRM"),
                ("Google Analytics", "Analytics"),
                ("Zendesk", "Live chat"),
                ("Optimizely", "A/B Testing"),
                ("Google Ads", "Advertising"),
            ],
            PageSignals {
                has_login: true,
                has_pricing: true,
                has_job_board: true,
                ..PageSignals::default()
            },
        );
        assert!(r.audience.contains(&"has_saas"));
        assert!(r.audience.contains(&"has_job_board"));
        assert!(r.alert.contains(&"has_helpdesk"), "Zendesk by name");
        let score = intent(&r, true, Some(30));
        assert_eq!(score, 100, "capped");
        assert_eq!(level(score), "hot");
        let (gaps, buys) = gaps_and_buys(&r, "B2B");
        assert_eq!(gaps, vec!["seo"]);
        assert_eq!(buys, vec!["recruiting", "seo"]);
    }

    #[test]
    fn levels_follow_the_tier_mapping() {
        assert_eq!(level(0), "cold");
        assert_eq!(level(19), "cold");
        assert_eq!(level(20), "neutral");
        assert_eq!(level(49), "neutral");
        assert_eq!(level(50), "warm");
        assert_eq!(level(79), "warm");
        assert_eq!(level(80), "hot");
    }

    #[test]
    fn every_signal_is_one_of_the_spec_sets() {
        let r = reading(
            &CAPABILITIES
                .iter()
                .map(|(_, cats)| ("X", cats[0]))
                .collect::<Vec<_>>(),
            PageSignals {
                has_ssl: true,
                has_forms: true,
                has_login: true,
                has_blog: true,
                has_newsletter: true,
                has_video: true,
                has_podcast: true,
                has_forum: true,
                has_job_board: true,
                has_api: true,
                has_mobile_app: true,
                has_social_media: true,
                has_pricing: true,
            },
        );
        assert_eq!(r.alert.len(), 14, "every alert signal can be reached");
        assert_eq!(r.audience.len(), 20, "all but has_saas (a shop is no SaaS)");
        assert!(r.alert.iter().all(|s| ALERT_SIGNALS.contains(s)));
        assert!(r.audience.iter().all(|s| AUDIENCE_SIGNALS.contains(s)));
    }
}
