//! Loading Wappalyzer's JSON into [`Fingerprints`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::index::{KeyedIndex, TextIndex};
use super::pattern::Pattern;
use super::{Fingerprints, Implied, Technology};

pub(crate) const CATEGORIES: &str = include_str!("../../data/wappalyzer/categories.json");

macro_rules! technology_files {
    ($($file:literal),*) => {
        &[$(include_str!(concat!("../../data/wappalyzer/technologies/", $file, ".json"))),*]
    };
}

pub(crate) const TECHNOLOGIES: &[&str] = technology_files!(
    "_", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
    "s", "t", "u", "v", "w", "x", "y", "z"
);

/// A string or a list of strings, as Wappalyzer writes most fields.
fn strings(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Category ids: numbers, or numbers written as strings.
fn ids(value: Option<&Value>) -> Vec<u32> {
    let items = match value {
        Some(Value::Array(items)) => items.clone(),
        Some(single) => vec![single.clone()],
        None => Vec::new(),
    };
    items
        .iter()
        .filter_map(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
        .filter_map(|v| u32::try_from(v).ok())
        .collect()
}

/// `name\;confidence:50\;version:2` in `implies`.
fn implied(raw: &str) -> Implied {
    let mut parts = raw.split("\\;");
    let name = parts.next().unwrap_or_default().trim().to_owned();
    let mut implied = Implied {
        name,
        confidence: 100,
        version: None,
    };
    for tag in parts {
        match tag.split_once(':') {
            Some(("confidence", c)) => implied.confidence = c.parse::<u8>().unwrap_or(100).min(100),
            Some(("version", v)) if !v.is_empty() => implied.version = Some(v.to_owned()),
            _ => {}
        }
    }
    implied
}

pub(crate) fn load(categories: &str, files: &[&str]) -> Result<Fingerprints, String> {
    let categories: Map<String, Value> =
        serde_json::from_str(categories).map_err(|e| format!("categories: {e}"))?;
    let categories = categories
        .into_iter()
        .filter_map(|(id, c)| Some((id.parse().ok()?, c.get("name")?.as_str()?.to_owned())))
        .collect();

    let mut f = Fingerprints {
        technologies: Vec::new(),
        by_name: HashMap::new(),
        categories,
        html: TextIndex::default(),
        scripts: TextIndex::default(),
        script_src: TextIndex::default(),
        url: TextIndex::default(),
        headers: KeyedIndex::default(),
        meta: KeyedIndex::default(),
        cookies: KeyedIndex::default(),
        dns: KeyedIndex::default(),
        skipped_patterns: 0,
    };
    for file in files {
        let technologies: Map<String, Value> =
            serde_json::from_str(file).map_err(|e| format!("technologies: {e}"))?;
        for (name, t) in &technologies {
            let id = f.technologies.len();
            let mut skipped = 0;
            let mut parse = |raw: &str| {
                let pattern = Pattern::parse(raw);
                skipped += usize::from(pattern.is_none());
                pattern
            };
            for (index, field) in [
                (&mut f.html, "html"),
                (&mut f.scripts, "scripts"),
                (&mut f.script_src, "scriptSrc"),
                (&mut f.url, "url"),
            ] {
                for raw in strings(t.get(field)) {
                    if let Some(pattern) = parse(raw) {
                        index.push(id, pattern);
                    }
                }
            }
            for (index, field) in [
                (&mut f.headers, "headers"),
                (&mut f.meta, "meta"),
                (&mut f.cookies, "cookies"),
                (&mut f.dns, "dns"),
            ] {
                let Some(Value::Object(keyed)) = t.get(field) else {
                    continue;
                };
                for (key, value) in keyed {
                    // `""` (or an empty list) means the key's presence.
                    let raws = strings(Some(value));
                    for raw in if raws.is_empty() { vec![""] } else { raws } {
                        if let Some(pattern) = parse(raw) {
                            index.push(key, id, pattern);
                        }
                    }
                }
            }
            f.skipped_patterns += skipped;
            f.technologies.push(Technology {
                name: name.clone(),
                categories: ids(t.get("cats")),
                implies: strings(t.get("implies")).into_iter().map(implied).collect(),
                excludes: strings(t.get("excludes"))
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                requires: strings(t.get("requires"))
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                requires_category: ids(t.get("requiresCategory")),
            });
            f.by_name.insert(name.clone(), id);
        }
    }
    for index in [&mut f.html, &mut f.scripts, &mut f.script_src, &mut f.url] {
        index.build();
    }
    Ok(f)
}
