//! schema.org JSON-LD: the organisation a page describes, with its name,
//! address, contact points and profiles.
//!
//! Blocks may hold one object, an array, or an `@graph`; the organisation
//! may also sit inside another object (a `WebSite`'s `publisher`). Invalid
//! blocks are skipped. serde_json refuses nesting deeper than 128, so a
//! hostile block cannot exhaust the stack, and the walk over the parsed
//! value is iterative with a cap on the nodes it visits.

use serde_json::{Map, Value};

use super::country::country_code;
use super::scan::collapse_whitespace;
use super::url::Url;
use crate::domain::is_same_site;

/// Nodes visited per block.
const MAX_NODES: usize = 20_000;

/// What the page's main organisation object says.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Organization {
    pub name: Option<String>,
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: Option<String>,
    pub emails: Vec<String>,
    pub phones: Vec<String>,
    pub same_as: Vec<String>,
}

/// The organisation the page most likely describes: among every object of
/// an organisation type, the one whose `url` is on the site, that sits at
/// the top level, whose name resembles the domain, that has an address.
/// When it has no address, another organisation's is used.
pub(crate) fn organization(blocks: &[String], site: Option<&str>) -> Option<Organization> {
    let mut candidates: Vec<(i32, &Map<String, Value>)> = Vec::new();
    let parsed: Vec<Value> = blocks.iter().filter_map(|b| parse(b)).collect();
    for value in &parsed {
        collect(value, site, &mut candidates);
    }
    let (_, best) = candidates
        .iter()
        .enumerate()
        .max_by_key(|(index, (score, _))| (*score, -(*index as i64)))
        .map(|(_, candidate)| *candidate)?;
    let mut org = read(best);
    if org.city.is_none() && org.country.is_none() {
        let other = candidates
            .iter()
            .map(|(_, object)| address_of(object))
            .find(|(city, country)| city.is_some() || country.is_some());
        if let Some((city, country)) = other {
            org.city = city;
            org.country = country;
        }
    }
    Some(org)
}

/// Parses a block, tolerating what CMSs wrap around it: HTML comment
/// markers, CDATA and a trailing semicolon.
fn parse(block: &str) -> Option<Value> {
    let mut text = block.trim();
    for (open, close) in [
        ("<!--", "-->"),
        ("//<![CDATA[", "//]]>"),
        ("<![CDATA[", "]]>"),
    ] {
        text = text.strip_prefix(open).unwrap_or(text);
        text = text.strip_suffix(close).unwrap_or(text).trim();
    }
    let text = text.strip_suffix(';').unwrap_or(text);
    serde_json::from_str(text).ok()
}

/// Adds every organisation object of `value` with its score.
fn collect<'a>(
    value: &'a Value,
    site: Option<&str>,
    candidates: &mut Vec<(i32, &'a Map<String, Value>)>,
) {
    // (value, nesting below the top level)
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    let mut visited = 0;
    while let Some((value, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_NODES {
            return;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().rev().map(|item| (item, depth))),
            Value::Object(object) => {
                if is_organization(object) {
                    candidates.push((score(object, depth, site), object));
                }
                for (key, child) in object.iter().rev() {
                    // Objects of an `@graph` are top-level nodes.
                    let child_depth = if key == "@graph" { depth } else { depth + 1 };
                    if child.is_object() || child.is_array() {
                        stack.push((child, child_depth));
                    }
                }
            }
            _ => {}
        }
    }
}

fn score(object: &Map<String, Value>, depth: usize, site: Option<&str>) -> i32 {
    let mut score = 0;
    if depth == 0 {
        score += 2;
    }
    let on_site = ["url", "@id"]
        .iter()
        .filter_map(|key| text(object.get(*key)?))
        .filter_map(|url| Url::parse(&url))
        .any(|url| site.is_some_and(|site| is_same_site(site, &url.host)));
    if on_site {
        score += 4;
    }
    let label = site.and_then(|s| s.split('.').next()).unwrap_or_default();
    let name = object.get("name").and_then(text).unwrap_or_default();
    if !label.is_empty() && compact(&name).contains(&compact(label)) {
        score += 2;
    }
    if object.contains_key("address") {
        score += 1;
    }
    score
}

/// Letters and digits only, lower case, for loose comparisons.
pub(crate) fn compact(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// schema.org types that are organisations: `Organization` and its
/// subtypes, which by convention end in `Organization`, `Business`,
/// `Store` or `Service`, plus the common subtypes that do not.
fn is_organization(object: &Map<String, Value>) -> bool {
    const OTHERS: &[&str] = &[
        "Corporation",
        "NGO",
        "Airline",
        "Consortium",
        "Project",
        "FundingScheme",
        "LibrarySystem",
        "PerformingGroup",
        "WorkersUnion",
        "SearchRescueOrganization",
        "Restaurant",
        "Bakery",
        "BarOrPub",
        "CafeOrCoffeeShop",
        "Dentist",
        "Hotel",
        "Motel",
        "Physician",
        "Pharmacy",
        "AutoDealer",
        "AutoRepair",
        "RealEstateAgent",
        "TravelAgency",
        "InsuranceAgency",
        "Attorney",
        "Notary",
        "AccountingService",
        "Brewery",
        "Winery",
        "ShoppingCenter",
        "SportsClub",
        "SportsTeam",
        "HealthClub",
        "Library",
        "School",
        "CollegeOrUniversity",
        "Hospital",
        "Clinic",
        "MedicalClinic",
        "Optician",
        "HairSalon",
        "BeautySalon",
        "DaySpa",
        "Electrician",
        "Plumber",
        "HVACBusiness",
        "Locksmith",
        "MovingCompany",
        "RoofingContractor",
        "GeneralContractor",
        "HousePainter",
    ];
    let types: Vec<String> = match object.get("@type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(text).collect(),
        _ => return false,
    };
    types.iter().any(|kind| {
        // Full IRIs and prefixed names: `https://schema.org/Organization`.
        let kind = kind.rsplit(['/', ':', '#']).next().unwrap_or(kind);
        ["Organization", "Business", "Store", "Service"]
            .iter()
            .any(|suffix| kind.ends_with(suffix))
            || OTHERS.contains(&kind)
    })
}

fn read(object: &Map<String, Value>) -> Organization {
    let (city, country) = address_of(object);
    let mut org = Organization {
        name: object
            .get("name")
            .and_then(text)
            .map(|n| collapse_whitespace(&decode_entities(&n)))
            .filter(|n| !n.is_empty() && n.chars().count() <= 200),
        city,
        country,
        emails: strings(object.get("email")),
        phones: strings(object.get("telephone")),
        same_as: strings(object.get("sameAs")),
    };
    // Contact points carry the addresses and numbers of departments.
    if let Some(points) = object.get("contactPoint") {
        for point in as_objects(points) {
            org.emails.extend(strings(point.get("email")));
            org.phones.extend(strings(point.get("telephone")));
        }
    }
    org
}

/// City and country of `address` (a `PostalAddress`, an array of them, or
/// the same under `location`).
fn address_of(object: &Map<String, Value>) -> (Option<String>, Option<String>) {
    let location = object.get("location").map(as_objects).unwrap_or_default();
    let addresses = object
        .get("address")
        .into_iter()
        .chain(location.iter().filter_map(|place| place.get("address")))
        .flat_map(as_objects);
    for address in addresses {
        let city = address
            .get("addressLocality")
            .and_then(text)
            .map(|c| collapse_whitespace(&c))
            .filter(|c| !c.is_empty() && c.chars().count() <= 100);
        let country = address.get("addressCountry").and_then(|value| match value {
            Value::Object(country) => ["name", "identifier", "@id"]
                .iter()
                .filter_map(|key| country.get(*key).and_then(text))
                .find_map(|c| country_code(&c)),
            other => text(other).and_then(|c| country_code(&c)),
        });
        if city.is_some() || country.is_some() {
            return (city, country);
        }
    }
    (None, None)
}

fn as_objects(value: &Value) -> Vec<&Map<String, Value>> {
    match value {
        Value::Object(object) => vec![object],
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    }
}

/// A string, the first string of an array, or a `{"@value": ...}`.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Value::Array(items) => items.iter().find_map(text),
        Value::Object(object) => object.get("@value").and_then(text),
        _ => None,
    }
}

/// Every string of a value or an array, at most 20.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.trim().to_owned()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .take(20)
            .map(|s| s.trim().to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// Some CMSs write HTML entities into JSON-LD strings.
fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&quot;", "\"")
        .replace("&#039;", "'")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
