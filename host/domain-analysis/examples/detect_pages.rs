//! Technology detection over a folder of saved pages, for the side-by-side
//! comparison with Wappalyzer's own JavaScript engine
//! (`tests/bench/wappalyzer/run.sh`).
//!
//! The folder holds `N.html` and `N.json` (`{url, headers: {name: value},
//! cookies: {name: value}}`) per page. Prints one JSON line per page,
//! `{"file": "N.html", "technologies": [names]}`, then one timing line,
//! `{"timing": {...}}`. The clock covers `read_page` (html5ever's tokenizer
//! collecting script sources, inline scripts and meta tags, together with
//! the rest of the page's facts) and `detect`; reading the
//! files and printing are outside it. A technology counts when its
//! confidence is above 0.
//!
//! Run: `cargo run --release --example detect_pages -p outreach-domain-analysis -- DIR
//! [--passes N] [--inputs]`. With `--passes N` every page is read and
//! detected N times and the timing line gives the first pass and the
//! fastest; `--inputs` adds to each line what the fingerprints were matched
//! against (script sources, inline scripts, meta tags), so that another
//! engine can be checked to have had the same inputs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use outreach_domain_analysis::extract::{Page, PageKind, read_page};
use outreach_domain_analysis::technologies::{Fingerprints, Observed};
use serde_json::{Value, json};

struct Saved {
    file: String,
    url: String,
    html: String,
    headers: Vec<(String, String)>,
    cookies: Vec<(String, String)>,
}

fn pairs(value: Option<&Value>) -> Vec<(String, String)> {
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (name.clone(), value)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn load(dir: &Path) -> Vec<Saved> {
    let mut numbered: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            if path.extension()? != "html" {
                return None;
            }
            let n = path.file_stem()?.to_str()?.parse().ok()?;
            Some((n, path))
        })
        .collect();
    numbered.sort();
    numbered
        .into_iter()
        .map(|(_, path)| {
            let html = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let html = String::from_utf8_lossy(&html).into_owned();
            let meta_path = path.with_extension("json");
            let meta: Value = std::fs::read_to_string(&meta_path)
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or_else(|| panic!("{}: missing or not JSON", meta_path.display()));
            Saved {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                url: meta["url"]
                    .as_str()
                    .unwrap_or("https://example.com/")
                    .to_owned(),
                html,
                headers: pairs(meta.get("headers")),
                cookies: pairs(meta.get("cookies")),
            }
        })
        .collect()
}

struct Pass {
    parse: Duration,
    detect: Duration,
}

impl Pass {
    fn total(&self) -> Duration {
        self.parse + self.detect
    }
}

fn main() {
    let mut dir = None;
    let mut passes = 1usize;
    let mut with_inputs = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--passes" => passes = args.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1),
            "--inputs" => with_inputs = true,
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: detect_pages DIR [--passes N] [--inputs]");
        std::process::exit(2);
    };
    let pages = load(&dir);

    let started = Instant::now();
    let fingerprints = Fingerprints::bundled();
    let load_time = started.elapsed();

    let mut runs = Vec::new();
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut inputs: Vec<Value> = Vec::new();
    for pass in 0..passes {
        let mut run = Pass {
            parse: Duration::ZERO,
            detect: Duration::ZERO,
        };
        for saved in &pages {
            let t0 = Instant::now();
            let read = read_page(&Page {
                url: &saved.url,
                final_url: &saved.url,
                html: &saved.html,
                kind: PageKind::Home,
            });
            let t1 = Instant::now();
            let detected = fingerprints.detect(&Observed {
                url: &saved.url,
                html: read.html,
                assets: &read.assets,
                headers: &saved.headers,
                cookies: &saved.cookies,
            });
            let t2 = Instant::now();
            run.parse += t1 - t0;
            run.detect += t2 - t1;
            if pass == 0 {
                let mut names: Vec<String> = detected
                    .into_iter()
                    .filter(|d| d.confidence > 0)
                    .map(|d| d.name)
                    .collect();
                names.sort();
                found.push(names);
                if with_inputs {
                    inputs.push(json!({
                        "scriptSrc": read.assets.script_srcs,
                        "scripts": read.assets.scripts,
                        "meta": read.assets.metas,
                        "htmlBytes": read.html.len(),
                    }));
                }
            }
        }
        runs.push(run);
    }

    for (index, saved) in pages.iter().enumerate() {
        let mut line = json!({ "file": saved.file, "technologies": found[index] });
        if with_inputs {
            line["inputs"] = inputs[index].clone();
        }
        println!("{line}");
    }
    let n = pages.len() as f64;
    let per_s = |d: Duration| {
        if d.is_zero() {
            0.0
        } else {
            n / d.as_secs_f64()
        }
    };
    let first = &runs[0];
    let best = runs.iter().min_by_key(|r| r.total()).unwrap();
    println!(
        "{}",
        json!({ "timing": {
            "engine": "outreach-domain-analysis",
            "pages": pages.len(),
            "passes": passes,
            "load_ms": load_time.as_secs_f64() * 1000.0,
            "technologies": fingerprints.technology_count(),
            "skipped_patterns": fingerprints.skipped_patterns(),
            "first": {
                "seconds": first.total().as_secs_f64(),
                "parse_seconds": first.parse.as_secs_f64(),
                "detect_seconds": first.detect.as_secs_f64(),
                "pages_per_s": per_s(first.total()),
            },
            "best": {
                "seconds": best.total().as_secs_f64(),
                "parse_seconds": best.parse.as_secs_f64(),
                "detect_seconds": best.detect.as_secs_f64(),
                "pages_per_s": per_s(best.total()),
                "detect_pages_per_s": per_s(best.detect),
            },
        }})
    );
}
