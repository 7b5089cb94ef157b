//! The rules classifier alone over the labelled replies: the first call, which
//! compiles the phrase patterns (what every fresh WebAssembly instance of the
//! reply classifier pays), then the steady cost of a reply.
//!
//! `cargo run --release -p outreach-mail-analysis --example rules_bench [N]`
//! natively, or built for `wasm32-wasip2` and run by a component runtime; the
//! labelled set is embedded so it needs no file access.

use std::time::Instant;

use outreach_mail_analysis::rules;

fn main() {
    let replies = include_str!("../tests/data/replies.jsonl");
    let items: Vec<(String, String)> = replies
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| {
            (
                v["subject"].as_str().unwrap_or("").to_owned(),
                v["text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let input = |(subject, text): &(String, String)| {
        rules::classify(&rules::Input {
            headers: &[],
            subject,
            text,
            original_subject: Some("Quick question"),
        })
    };
    let t = Instant::now();
    let first = input(&items[3]);
    println!(
        "first call (compiles the patterns): {:.1} ms, {}",
        t.elapsed().as_secs_f64() * 1e3,
        first.label
    );
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let t = Instant::now();
    // The summed label lengths change if any verdict does.
    let checksum: usize = (0..n)
        .map(|i| input(&items[i % items.len()]).label.len())
        .sum();
    println!(
        "{n} replies ({} distinct): {:.1} µs a reply (checksum {checksum})",
        items.len(),
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
