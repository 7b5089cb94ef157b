//! Tracked-keyword matching benchmark: 10,000 keywords (words and two-word
//! phrases) against the summaries of 100,000 records, through the one
//! automaton the pool's save uses, timed against two references in the
//! same run: folding the summaries alone (lower case, spaces; the floor any
//! matcher pays) and the naive way, a whole-word `contains` per keyword
//! (timed on 1,000 summaries and scaled). Prints summaries per second and
//! the ratios.
//!
//! Run: `tests/bench/intelligence.sh` (release build), or
//! `cargo run --release -p outreach-leads --example keyword_bench`.

use std::time::Instant;

use outreach_leads::intelligence::keywords::matcher::{Automaton, Tracked, normalise};

const KEYWORDS: usize = 10_000;
const SUMMARIES: usize = 100_000;
const NAIVE_SAMPLE: usize = 1_000;

/// A small deterministic generator, so every run reads the same text.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below
    }
}

/// 2,000 made-up words of 4-9 letters.
fn vocabulary(rng: &mut Lcg) -> Vec<String> {
    let letters: Vec<char> = "abcdefghijklmnopqrstuvwxyz".chars().collect();
    let mut words = std::collections::BTreeSet::new();
    while words.len() < 2_000 {
        let len = 4 + rng.next(6);
        words.insert((0..len).map(|_| letters[rng.next(26)]).collect::<String>());
    }
    words.into_iter().collect()
}

fn main() {
    let mut rng = Lcg(7);
    let words = vocabulary(&mut rng);
    let mut seen = std::collections::HashSet::new();
    let mut keywords = Vec::with_capacity(KEYWORDS);
    while keywords.len() < KEYWORDS {
        let k = if rng.next(2) == 0 {
            words[rng.next(words.len())].clone()
        } else {
            format!(
                "{} {}",
                words[rng.next(words.len())],
                words[rng.next(words.len())]
            )
        };
        if seen.insert(k.clone()) {
            keywords.push(Tracked {
                id: keywords.len() as i64 + 1,
                account_id: (keywords.len() / 500) as i64 + 1,
                keyword: k,
            });
        }
    }
    // Summaries of 20-40 words, capitalised and punctuated as sites write.
    let summaries: Vec<String> = (0..SUMMARIES)
        .map(|_| {
            let n = 20 + rng.next(21);
            let mut s = String::new();
            for i in 0..n {
                let w = &words[rng.next(words.len())];
                if i == 0 {
                    s.push_str(&w[..1].to_uppercase());
                    s.push_str(&w[1..]);
                } else {
                    s.push(' ');
                    s.push_str(w);
                }
                if rng.next(10) == 0 {
                    s.push(',');
                }
            }
            s.push('.');
            s
        })
        .collect();
    let bytes: usize = summaries.iter().map(String::len).sum();

    let start = Instant::now();
    let automaton = Automaton::new(keywords.clone()).expect("automaton");
    let build = start.elapsed();

    let start = Instant::now();
    let mut found = 0usize;
    for s in &summaries {
        found += automaton.find(s).len();
    }
    let matched = start.elapsed();

    let start = Instant::now();
    let mut folded = 0usize;
    for s in &summaries {
        folded += normalise(s).len();
    }
    let fold = start.elapsed();

    let patterns: Vec<String> = keywords.iter().map(|k| normalise(&k.keyword)).collect();
    let start = Instant::now();
    let mut naive_found = 0usize;
    for s in summaries.iter().take(NAIVE_SAMPLE) {
        let text = format!(" {} ", normalise(s).replace([',', '.'], " "));
        for p in &patterns {
            if text.contains(&format!(" {p} ")) {
                naive_found += 1;
            }
        }
    }
    let naive = start.elapsed().as_secs_f64() * (SUMMARIES / NAIVE_SAMPLE) as f64;

    let per_sec = SUMMARIES as f64 / matched.as_secs_f64();
    println!(
        "{KEYWORDS} keywords, {SUMMARIES} summaries ({:.1} MB); automaton built in {:.1} ms",
        bytes as f64 / 1e6,
        build.as_secs_f64() * 1e3
    );
    println!(
        "automaton: {:.0} ms, {per_sec:.0} summaries/s, {:.0} MB/s, {found} matches",
        matched.as_secs_f64() * 1e3,
        bytes as f64 / 1e6 / matched.as_secs_f64()
    );
    println!(
        "reference fold only: {:.0} ms ({folded} bytes); automaton / fold: {:.1}x",
        fold.as_secs_f64() * 1e3,
        matched.as_secs_f64() / fold.as_secs_f64()
    );
    println!(
        "reference naive contains per keyword: {:.0} ms (scaled from {NAIVE_SAMPLE}, {naive_found} matches there); naive / automaton: {:.0}x",
        naive * 1e3,
        naive / matched.as_secs_f64()
    );
}
