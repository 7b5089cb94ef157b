//! What a page's links say: the page features of spec/2's signals, and the
//! same-site pages worth crawling next.

use super::jsonld::compact;
use super::scan::{Form, Scan};
use super::url::Url;
use super::{CrawlCandidate, PageFeatures, PageKind};
use crate::domain::is_same_site;

/// Candidate pages returned per page, one per kind at most.
pub const MAX_CRAWL_CANDIDATES: usize = 5;

/// A link of the page, resolved.
pub(crate) struct Link {
    pub url: Url,
    /// Anchor text, compacted (letters and digits, lower case).
    pub text: String,
    /// Path segments, compacted, file extensions such as `.html` dropped.
    pub segments: Vec<String>,
    /// On the page's own registrable domain.
    pub same_site: bool,
}

impl Link {
    pub fn new(url: Url, text: &str, site: Option<&str>) -> Link {
        let segments = url
            .segments()
            .map(|s| compact(strip_extension(&s)))
            .collect();
        let same_site = site.is_some_and(|site| is_same_site(site, &url.host));
        Link {
            text: compact(text),
            segments,
            same_site,
            url,
        }
    }

    /// One of the first three path segments is in `words` (same site).
    fn path_has(&self, words: &[&str]) -> bool {
        self.same_site
            && self
                .segments
                .iter()
                .take(3)
                .any(|s| words.contains(&s.as_str()))
    }

    /// The host's first label is in `words` (`blog.acme.com`).
    fn subdomain_is(&self, words: &[&str]) -> bool {
        self.same_site
            && self
                .url
                .host
                .split('.')
                .next()
                .is_some_and(|label| words.contains(&label))
    }

    /// The host is on one of `domains` or a subdomain of it.
    fn host_on(&self, domains: &[&str]) -> bool {
        domains.iter().any(|d| is_same_site(d, &self.url.host))
    }
}

fn strip_extension(segment: &str) -> &str {
    const EXTENSIONS: &[&str] = &[".html", ".htm", ".php", ".aspx", ".asp", ".jsp", ".shtml"];
    EXTENSIONS
        .iter()
        .find_map(|ext| segment.strip_suffix(ext))
        .unwrap_or(segment)
}

const LOGIN: &[&str] = &[
    "login",
    "signin",
    "logon",
    "anmelden",
    "anmeldung",
    "einloggen",
    "connexion",
    "seconnecter",
    "iniciarsesion",
    "iniciarsesión",
    "accedi",
    "inloggen",
    "myaccount",
    "meinkonto",
    "moncompte",
    "micuenta",
    "customerlogin",
    "clientlogin",
    "wploginphp",
    "account",
];
const BLOG: &[&str] = &[
    "blog",
    "blogs",
    "news",
    "articles",
    "insights",
    "magazine",
    "magazin",
    "journal",
    "stories",
    "aktuelles",
    "neuigkeiten",
    "actualites",
    "actualités",
    "noticias",
    "notizie",
    "nieuws",
];
const NEWSLETTER: &[&str] = &[
    "newsletter",
    "subscribe",
    "abonn",
    "suscrib",
    "iscriviti",
    "iscrizione",
    "inschrijven",
    "nieuwsbrief",
    "mailing list",
    "mailchimp",
    "klaviyo",
    "sign up for",
    "stay up to date",
    "stay updated",
    "sendinblue",
    "brevo",
];
const VIDEO_HOSTS: &[&str] = &[
    "youtube.com",
    "youtube-nocookie.com",
    "youtu.be",
    "vimeo.com",
    "wistia.com",
    "wistia.net",
    "loom.com",
    "vidyard.com",
    "dailymotion.com",
    "twitch.tv",
];
const PODCAST_HOSTS: &[&str] = &[
    "podcasts.apple.com",
    "anchor.fm",
    "podcasters.spotify.com",
    "buzzsprout.com",
    "libsyn.com",
    "podbean.com",
    "simplecast.com",
    "transistor.fm",
    "castbox.fm",
    "pocketcasts.com",
    "overcast.fm",
    "podcasts.google.com",
    "spreaker.com",
    "captivate.fm",
    "podigee.io",
];
const FORUM: &[&str] = &[
    "forum",
    "forums",
    "foren",
    "community",
    "discuss",
    "discussions",
    "discourse",
    "board",
    "boards",
];
const JOB_HOSTS: &[&str] = &[
    "greenhouse.io",
    "lever.co",
    "workable.com",
    "ashbyhq.com",
    "smartrecruiters.com",
    "recruitee.com",
    "personio.de",
    "personio.com",
    "bamboohr.com",
    "breezy.hr",
    "teamtailor.com",
    "jobvite.com",
    "myworkdayjobs.com",
    "join.com",
    "icims.com",
    "softgarden.io",
    "taleo.net",
    "successfactors.com",
    "applytojob.com",
    "jobs.ch",
    "welcometothejungle.com",
];
const API: &[&str] = &[
    "api",
    "apis",
    "developers",
    "developer",
    "apidocs",
    "apireference",
    "docs",
    "documentation",
    "devdocs",
    "restapi",
];
const PRICING: &[&str] = &[
    "pricing",
    "prices",
    "plans",
    "preise",
    "tarife",
    "tarifs",
    "precios",
    "prezzi",
    "prijzen",
    "planes",
    "pricingplans",
    "plansandpricing",
    "planspricing",
];
const CONTACT: &[&str] = &[
    "contact",
    "contactus",
    "contacts",
    "kontakt",
    "kontaktformular",
    "contacto",
    "contactos",
    "contactenos",
    "contáctenos",
    "contatti",
    "contato",
    "contatto",
    "contattaci",
    "getintouch",
    "nouscontacter",
    "contacteznous",
    "neemcontact",
    "kontaktaoss",
    "yhteystiedot",
    "kontakty",
    "reachus",
];
const IMPRINT: &[&str] = &[
    "impressum",
    "imprint",
    "legalnotice",
    "legalnotices",
    "mentionslegales",
    "mentionslégales",
    "avisolegal",
    "notelegali",
    "colofon",
    "sitenotice",
    "legalinformation",
];
const ABOUT: &[&str] = &[
    "about",
    "aboutus",
    "ueberuns",
    "uberuns",
    "überuns",
    "unternehmen",
    "company",
    "apropos",
    "àpropos",
    "quisommesnous",
    "quienessomos",
    "quiénessomos",
    "sobrenosotros",
    "nosotros",
    "chisiamo",
    "azienda",
    "overons",
    "ourstory",
    "whoweare",
    "team",
    "ourteam",
    "ourcompany",
];
const CAREERS: &[&str] = &[
    "careers",
    "career",
    "jobs",
    "karriere",
    "stellenangebote",
    "stellen",
    "offenestellen",
    "emplois",
    "carrieres",
    "carrières",
    "carreras",
    "empleo",
    "empleos",
    "trabajaconnosotros",
    "lavoraconnoi",
    "werkenbij",
    "vacatures",
    "vacancies",
    "joinus",
    "jointheteam",
    "workwithus",
    "jobsandcareers",
    "openpositions",
    "wearehiring",
];

/// The page features spec/2's signals are derived from. `has_ssl` and
/// `has_social_media` are set by the caller, which knows the final URL and
/// the profiles found.
pub(crate) fn features(scan: &Scan, links: &[Link]) -> PageFeatures {
    let any = |test: &dyn Fn(&Link) -> bool| links.iter().any(test);
    let media_hosts: Vec<String> = scan
        .media
        .iter()
        .filter_map(|src| Url::parse(src).or_else(|| Url::parse(&format!("https:{src}"))))
        .map(|url| url.host)
        .collect();
    let media_on = |domains: &[&str]| {
        media_hosts
            .iter()
            .any(|host| domains.iter().any(|d| is_same_site(d, host)))
    };
    let spotify_show = |l: &Link| {
        l.url.host == "open.spotify.com"
            && l.segments
                .first()
                .is_some_and(|s| s == "show" || s == "episode")
    };
    PageFeatures {
        has_forms: scan.forms.iter().any(|f| !f.search && f.fields > 0),
        has_login: scan.has_password
            || any(&|l| l.path_has(LOGIN) || LOGIN.contains(&l.text.as_str()) || l.text == "login"),
        has_blog: scan.has_feed || any(&|l| l.path_has(BLOG) || l.subdomain_is(&["blog", "news"])),
        has_newsletter: scan.forms.iter().any(is_newsletter)
            || any(&|l| l.host_on(&["list-manage.com", "substack.com"])),
        has_video: scan.has_video || media_on(VIDEO_HOSTS),
        has_podcast: media_on(PODCAST_HOSTS)
            || any(&|l| {
                l.host_on(PODCAST_HOSTS)
                    || spotify_show(l)
                    || l.text.contains("podcast")
                    || (l.same_site && l.segments.iter().any(|s| s.contains("podcast")))
            }),
        has_forum: any(&|l| l.path_has(FORUM) || l.subdomain_is(FORUM)),
        has_job_board: any(&|l| {
            l.path_has(CAREERS)
                || l.subdomain_is(&["jobs", "careers", "karriere"])
                || l.host_on(JOB_HOSTS)
        }),
        has_api: any(&|l| {
            l.path_has(API)
                || l.subdomain_is(&["api", "developer", "developers", "docs", "dev"])
                || (l.same_site && API.contains(&l.text.as_str()))
        }),
        has_mobile_app: any(&|l| {
            (l.host_on(&["apps.apple.com", "itunes.apple.com"]) && l.url.path.contains("app"))
                || (l.url.host == "play.google.com" && l.url.path.starts_with("/store/apps"))
        }),
        has_pricing: any(&|l| l.path_has(PRICING)),
        has_social_media: false,
        has_ssl: false,
    }
}

/// A form with an email field whose wording speaks of a newsletter.
fn is_newsletter(form: &Form) -> bool {
    let wording = form.wording.to_lowercase();
    form.has_email && NEWSLETTER.iter().any(|w| wording.contains(w))
}

/// Same-site pages worth fetching after this one: for each kind (contact,
/// imprint, about, careers, pricing, in that order) the best link, judged
/// by its last path segment and its text in several languages.
pub(crate) fn crawl_candidates(links: &[Link], page: &Url) -> Vec<CrawlCandidate> {
    const KINDS: &[(PageKind, &[&str])] = &[
        (PageKind::Contact, CONTACT),
        (PageKind::Imprint, IMPRINT),
        (PageKind::About, ABOUT),
        (PageKind::Careers, CAREERS),
        (PageKind::Pricing, PRICING),
    ];
    let mut chosen: Vec<CrawlCandidate> = Vec::new();
    for (kind, words) in KINDS {
        let best = links
            .iter()
            .filter(|l| l.same_site && is_page(&l.url) && !same_page(&l.url, page))
            .filter_map(|l| {
                let score = link_score(l, words);
                (score > 0).then_some((score, l))
            })
            .filter(|(_, l)| !chosen.iter().any(|c| c.url == l.url.to_string()))
            // Highest score, then the shortest URL, then the first.
            .min_by_key(|(score, l)| (std::cmp::Reverse(*score), l.url.to_string().len()));
        if let Some((_, link)) = best {
            chosen.push(CrawlCandidate {
                kind: *kind,
                url: link.url.to_string(),
            });
        }
        if chosen.len() >= MAX_CRAWL_CANDIDATES {
            break;
        }
    }
    chosen
}

fn link_score(link: &Link, words: &[&str]) -> u32 {
    let mut score = 0;
    if let Some(last) = link.segments.last() {
        if words.contains(&last.as_str()) {
            score += 4;
        } else if words.iter().any(|w| w.len() >= 6 && last.starts_with(w)) {
            score += 3;
        }
    }
    if words.contains(&link.text.as_str()) {
        score += 2;
    }
    score
}

/// Not a download.
fn is_page(url: &Url) -> bool {
    const FILES: &[&str] = &[
        ".pdf", ".jpg", ".jpeg", ".png", ".gif", ".svg", ".zip", ".doc", ".docx", ".xls", ".xlsx",
        ".mp4", ".mp3",
    ];
    let path = url.path.to_ascii_lowercase();
    !FILES.iter().any(|ext| path.ends_with(ext))
}

fn same_page(a: &Url, b: &Url) -> bool {
    a.host == b.host
        && a.path.trim_end_matches('/') == b.path.trim_end_matches('/')
        && a.query == b.query
}
