//! One company from several pages.
//!
//! Each fact is taken from the most trusted source any page gives; between
//! equally trusted sources the home page wins, then the pages in crawl
//! order. Contact details prefer the contact and imprint pages, where a
//! company publishes the addresses it wants used.

use super::emails::{is_free_mail, role_rank};
use super::{CompanyFacts, PageFacts, PageKind, SocialLinks, SocialNetwork};

/// How much a page's contact details count, lower is better.
fn contact_rank(kind: PageKind) -> usize {
    match kind {
        PageKind::Contact => 0,
        PageKind::Imprint => 1,
        PageKind::Home => 2,
        PageKind::About => 3,
        PageKind::Pricing | PageKind::Careers | PageKind::Other => 4,
    }
}

/// How much a page's description of the company counts, lower is better.
fn page_rank(kind: PageKind) -> usize {
    match kind {
        PageKind::Home => 0,
        PageKind::About => 1,
        _ => 2,
    }
}

/// Merges the pages of `domain` (a registrable domain) into one company.
pub fn merge(domain: &str, pages: &[PageFacts]) -> CompanyFacts {
    let company_name = pages
        .iter()
        .filter_map(|p| {
            p.company_name
                .as_ref()
                .map(|n| (n.source, page_rank(p.kind), n))
        })
        .min_by_key(|(source, rank, _)| (*source, *rank))
        .map(|(_, _, name)| name.clone());
    let summary = pages
        .iter()
        .filter_map(|p| p.summary.as_ref().map(|s| (s.source, page_rank(p.kind), s)))
        .min_by_key(|(source, rank, _)| (*source, *rank))
        .map(|(_, _, summary)| summary.clone());

    let mut by_contact: Vec<&PageFacts> = pages.iter().collect();
    // A stable sort keeps crawl order between pages of the same kind.
    by_contact.sort_by_key(|p| contact_rank(p.kind));

    let mut emails: Vec<(usize, usize, String)> = Vec::new();
    for page in &by_contact {
        for email in &page.emails {
            if emails.iter().any(|(_, _, a)| *a == email.address) {
                continue;
            }
            let (local, host) = email
                .address
                .split_once('@')
                .unwrap_or((&email.address, ""));
            // Own-domain addresses first, then free mail (a small firm's
            // gmail address is still its own), then other domains (an
            // agency's, a hosting provider's).
            let own = if host == domain || host.ends_with(&format!(".{domain}")) {
                0
            } else if is_free_mail(host) {
                1
            } else {
                2
            };
            emails.push((own, role_rank(local), email.address.clone()));
        }
    }
    let order: Vec<String> = emails.iter().map(|(_, _, a)| a.clone()).collect();
    let website_email = emails
        .iter()
        .enumerate()
        .filter(|(_, (own, _, _))| *own < 2)
        .min_by_key(|(index, (own, rank, _))| (*own, *rank, *index))
        .map(|(_, (_, _, address))| address.clone());

    let mut phones: Vec<(usize, String)> = Vec::new();
    for page in &by_contact {
        for phone in &page.phones {
            if !phones.iter().any(|(_, p)| *p == phone.e164) {
                phones.push((phone.source as usize, phone.e164.clone()));
            }
        }
    }
    let phone = phones
        .iter()
        .enumerate()
        .min_by_key(|(index, (source, _))| (*source, *index))
        .map(|(_, (_, number))| number.clone());

    let mut social = SocialLinks::default();
    // JSON-LD `sameAs` first: the company says these are its profiles.
    for from_json_ld in [true, false] {
        for page in pages {
            for link in page
                .social
                .iter()
                .filter(|l| l.from_json_ld == from_json_ld)
            {
                let slot = match link.network {
                    SocialNetwork::Linkedin => &mut social.linkedin,
                    SocialNetwork::Twitter => &mut social.twitter,
                    SocialNetwork::Facebook => &mut social.facebook,
                    SocialNetwork::Instagram => &mut social.instagram,
                    SocialNetwork::Youtube => &mut social.youtube,
                    SocialNetwork::Github => &mut social.github,
                    SocialNetwork::Tiktok => &mut social.tiktok,
                };
                slot.get_or_insert_with(|| link.url.clone());
            }
        }
    }

    let home = pages.iter().find(|p| p.kind == PageKind::Home);
    let mut features = home.map(|p| p.features).unwrap_or_default();
    for page in pages {
        let f = page.features;
        features.has_forms |= f.has_forms;
        features.has_login |= f.has_login;
        features.has_blog |= f.has_blog;
        features.has_newsletter |= f.has_newsletter;
        features.has_video |= f.has_video;
        features.has_podcast |= f.has_podcast;
        features.has_forum |= f.has_forum;
        features.has_job_board |= f.has_job_board;
        features.has_api |= f.has_api;
        features.has_mobile_app |= f.has_mobile_app;
        features.has_social_media |= f.has_social_media;
        features.has_pricing |= f.has_pricing;
    }

    let first =
        |f: fn(&PageFacts) -> Option<&String>| by_contact.iter().find_map(|p| f(p)).cloned();
    CompanyFacts {
        domain: domain.to_owned(),
        company_name,
        summary,
        website_email,
        emails: order,
        phone,
        phones: phones.into_iter().map(|(_, p)| p).collect(),
        social,
        city: first(|p| p.city.as_ref()),
        country: first(|p| p.country.as_ref()),
        language: home
            .and_then(|p| p.language.clone())
            .or_else(|| pages.iter().find_map(|p| p.language.clone())),
        features,
    }
}
