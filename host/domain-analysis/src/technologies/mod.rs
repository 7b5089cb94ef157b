//! Technology detection with the Wappalyzer fingerprints.
//!
//! The data is the MIT-licensed snapshot in `data/wappalyzer/` (see its
//! `LICENSE` and `SOURCE.txt`), embedded in the binary and parsed once
//! ([`Fingerprints::bundled`]). What it reads of a site: the HTML,
//! `<script src>`, inline scripts, `<meta>` tags, response headers,
//! cookies, the URL and DNS records; then `implies`, `excludes`,
//! `requires` and `requiresCategory` settle the set in the order
//! Wappalyzer's own engine settles it ([`Detection::finish`]; compared side
//! by side in `tests/bench/wappalyzer/`), and each technology
//! gets a confidence (the sum of its matched patterns' confidences, at
//! most 100) and the most specific version any pattern extracted.
//!
//! Not read: `js` (global variables) and `dom` (CSS selectors, text and
//! properties of a rendered page) need a browser; `xhr`, `css`, `robots`,
//! `probe` and `certIssuer` need requests the crawler does not make.
//!
//! Speed (`index.rs`): text fields are matched through an Aho-Corasick
//! prefilter over the literals each pattern requires, and patterns
//! without one through a regex set, so a page costs a few passes, not
//! thousands of regexes run one by one.

mod data;
mod index;
mod literal;
mod pattern;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::extract::PageAssets;
use index::{KeyedIndex, TextIndex};

/// A technology found on a site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detected {
    pub name: String,
    /// Category names, such as `CMS` or `Analytics`.
    pub categories: Vec<String>,
    pub version: Option<String>,
    /// 1-100.
    pub confidence: u8,
}

/// One fetched page as the fingerprints see it.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    pub url: &'a str,
    pub html: &'a str,
    pub assets: &'a PageAssets,
    /// Response headers; names in any case.
    pub headers: &'a [(String, String)],
    /// Cookies the site set: `(name, value)`.
    pub cookies: &'a [(String, String)],
}

/// Where a pattern is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Field {
    Html,
    Scripts,
    ScriptSrc,
    Url,
    Headers,
    Meta,
    Cookies,
    Dns,
}

#[derive(Debug)]
struct Technology {
    name: String,
    categories: Vec<u32>,
    implies: Vec<Implied>,
    excludes: Vec<String>,
    requires: Vec<String>,
    requires_category: Vec<u32>,
}

#[derive(Debug)]
struct Implied {
    name: String,
    confidence: u8,
    version: Option<String>,
}

/// The compiled fingerprints.
pub struct Fingerprints {
    technologies: Vec<Technology>,
    by_name: HashMap<String, usize>,
    categories: HashMap<u32, String>,
    html: TextIndex,
    scripts: TextIndex,
    script_src: TextIndex,
    url: TextIndex,
    headers: KeyedIndex,
    meta: KeyedIndex,
    cookies: KeyedIndex,
    dns: KeyedIndex,
    skipped_patterns: usize,
}

static BUNDLED: LazyLock<Fingerprints> = LazyLock::new(|| {
    Fingerprints::from_json(data::CATEGORIES, data::TECHNOLOGIES)
        .expect("the bundled Wappalyzer data parses")
});

impl Fingerprints {
    /// The fingerprints shipped in the binary, parsed on first use.
    pub fn bundled() -> &'static Fingerprints {
        &BUNDLED
    }

    /// Builds from Wappalyzer's `categories.json` and its technology files.
    pub fn from_json(categories: &str, technologies: &[&str]) -> Result<Fingerprints, String> {
        data::load(categories, technologies)
    }

    pub fn technology_count(&self) -> usize {
        self.technologies.len()
    }

    /// Patterns dropped at load because the `regex` crate cannot run them
    /// (look-behind, nested look-aheads, back-references).
    pub fn skipped_patterns(&self) -> usize {
        self.skipped_patterns
    }

    /// Per text field: `(name, patterns, patterns run without a literal)`.
    pub fn prefilter_sizes(&self) -> Vec<(&'static str, usize, usize)> {
        [
            ("html", &self.html),
            ("scripts", &self.scripts),
            ("scriptSrc", &self.script_src),
            ("url", &self.url),
        ]
        .into_iter()
        .map(|(name, index)| {
            let (all, unfiltered) = index.sizes();
            (name, all, unfiltered)
        })
        .collect()
    }

    /// The HTML patterns that run on every page (no usable literal).
    pub fn unfiltered_html(&self) -> Vec<&str> {
        self.html.unfiltered_sources()
    }

    /// A detection over one site: feed it pages and DNS records, then
    /// [`Detection::finish`].
    pub fn detection(&self) -> Detection<'_> {
        Detection {
            fingerprints: self,
            hits: HashMap::new(),
            naive: false,
        }
    }

    /// Detection over a single page.
    pub fn detect(&self, page: &Observed<'_>) -> Vec<Detected> {
        let mut detection = self.detection();
        detection.page(page);
        detection.finish()
    }

    /// [`Fingerprints::detect`] without the prefilter: every text pattern
    /// runs on its own, as a naive matcher would. The reference for tests
    /// and the benchmark; same answers, far slower.
    pub fn detect_naively(&self, page: &Observed<'_>) -> Vec<Detected> {
        let mut detection = Detection {
            fingerprints: self,
            hits: HashMap::new(),
            naive: true,
        };
        detection.page(page);
        detection.finish()
    }
}

impl Fingerprints {
    /// Exclusions among `matched`, then implications, transitively; an
    /// implied technology takes the lower of its implier's confidence and
    /// the implication's. A cycle ends because a technology is only
    /// revisited when its confidence rises.
    fn settle(
        &self,
        matched: &BTreeMap<usize, (u8, Option<String>)>,
    ) -> BTreeMap<usize, (u8, Option<String>)> {
        let excluded: HashSet<usize> = matched
            .keys()
            .flat_map(|t| &self.technologies[*t].excludes)
            .filter_map(|name| self.by_name.get(name).copied())
            .collect();
        let mut found: BTreeMap<usize, (u8, Option<String>)> = matched
            .iter()
            .filter(|(t, _)| !excluded.contains(t))
            .map(|(t, entry)| (*t, entry.clone()))
            .collect();
        let mut queue: Vec<usize> = found.keys().copied().collect();
        while let Some(technology) = queue.pop() {
            let parent = found[&technology].0;
            for implied in &self.technologies[technology].implies {
                let Some(&child) = self.by_name.get(&implied.name) else {
                    continue;
                };
                let confidence = parent.min(implied.confidence);
                let entry = found.entry(child).or_insert((0, None));
                if entry.1.is_none() {
                    entry.1 = implied.version.clone();
                }
                if confidence > entry.0 {
                    entry.0 = confidence;
                    queue.push(child);
                }
            }
        }
        found
    }
}

/// Matches collected so far for one site.
pub struct Detection<'a> {
    fingerprints: &'a Fingerprints,
    /// Per technology: the patterns that matched (each counted once however
    /// many pages it matched on) and the versions they gave.
    hits: HashMap<usize, Hits>,
    /// Run every text pattern (see [`Fingerprints::detect_naively`]).
    naive: bool,
}

#[derive(Default)]
struct Hits {
    patterns: HashMap<(Field, usize), u8>,
    versions: Vec<String>,
}

impl Detection<'_> {
    pub fn page(&mut self, page: &Observed<'_>) {
        let f = self.fingerprints;
        let mut found = Vec::new();
        let text = |index: &TextIndex, field, haystack: &str, found: &mut Vec<index::Found>| {
            if self.naive {
                index.matches_naively(field, haystack, found);
            } else {
                index.matches(field, haystack, found);
            }
        };
        text(&f.html, Field::Html, page.html, &mut found);
        for script in &page.assets.scripts {
            text(&f.scripts, Field::Scripts, script, &mut found);
        }
        for src in &page.assets.script_srcs {
            text(&f.script_src, Field::ScriptSrc, src, &mut found);
        }
        text(&f.url, Field::Url, page.url, &mut found);
        for (name, value) in page.headers {
            f.headers.matches(Field::Headers, name, value, &mut found);
        }
        for (name, value) in &page.assets.metas {
            f.meta.matches(Field::Meta, name, value, &mut found);
        }
        for (name, value) in page.cookies {
            f.cookies.matches(Field::Cookies, name, value, &mut found);
        }
        self.record(found);
    }

    /// DNS records as `(type, value)`: `("MX", "aspmx.l.google.com")`,
    /// `("TXT", "v=spf1 include:_spf.google.com ~all")`.
    pub fn dns(&mut self, records: &[(String, String)]) {
        let mut found = Vec::new();
        for (kind, value) in records {
            self.fingerprints
                .dns
                .matches(Field::Dns, kind, value, &mut found);
        }
        self.record(found);
    }

    fn record(&mut self, found: Vec<index::Found>) {
        for hit in found {
            let entry = self.hits.entry(hit.technology).or_default();
            entry
                .patterns
                .insert((hit.field, hit.pattern), hit.confidence);
            if !hit.version.is_empty() {
                entry.versions.push(hit.version);
            }
        }
    }

    /// Settles requirements, exclusions and implications as Wappalyzer's
    /// own engine does (its `resolve` and its driver's passes for
    /// `requires`): a technology that requires others (or a category) is
    /// admitted once one of them is in the settled set, and only then do
    /// its implications and exclusions count; exclusions act among the
    /// technologies that matched, before implications are added.
    pub fn finish(self) -> Vec<Detected> {
        let f = self.fingerprints;
        // Technology -> (confidence, version).
        let mut matched: BTreeMap<usize, (u8, Option<String>)> = BTreeMap::new();
        for (technology, hits) in self.hits {
            let sum: u32 = hits.patterns.values().map(|c| u32::from(*c)).sum();
            let confidence = sum.min(100) as u8;
            if confidence == 0 {
                continue;
            }
            // The longest version is the most specific (`6.4.2` over `6`).
            let version = hits.versions.into_iter().max_by_key(String::len);
            matched.insert(technology, (confidence, version));
        }

        let conditional = |t: &usize| {
            let technology = &f.technologies[*t];
            !technology.requires.is_empty() || !technology.requires_category.is_empty()
        };
        let (mut pending, mut admitted): (BTreeMap<_, _>, BTreeMap<_, _>) =
            matched.into_iter().partition(|(t, _)| conditional(t));
        let kept = loop {
            let settled = f.settle(&admitted);
            let names: HashSet<&str> = settled
                .keys()
                .map(|t| f.technologies[*t].name.as_str())
                .collect();
            let categories: HashSet<u32> = settled
                .keys()
                .flat_map(|t| f.technologies[*t].categories.iter().copied())
                .collect();
            let ready: Vec<usize> = pending
                .keys()
                .copied()
                .filter(|t| {
                    let technology = &f.technologies[*t];
                    technology
                        .requires
                        .iter()
                        .any(|r| names.contains(r.as_str()))
                        || technology
                            .requires_category
                            .iter()
                            .any(|c| categories.contains(c))
                })
                .collect();
            if ready.is_empty() {
                break settled;
            }
            for t in ready {
                if let Some(entry) = pending.remove(&t) {
                    admitted.insert(t, entry);
                }
            }
        };

        let mut detected: Vec<Detected> = kept
            .into_iter()
            .map(|(t, (confidence, version))| {
                let technology = &f.technologies[t];
                Detected {
                    name: technology.name.clone(),
                    categories: technology
                        .categories
                        .iter()
                        .filter_map(|c| f.categories.get(c).cloned())
                        .collect(),
                    version: version.filter(|v| !v.is_empty()),
                    confidence,
                }
            })
            .collect();
        detected.sort_by_key(|d| d.name.to_lowercase());
        detected
    }
}
