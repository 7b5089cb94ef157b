//! Throughput of the inbox path without I/O: parse, thread key, inspect and the
//! rules classifier over stored messages (the sisimai corpus, the negatives and the
//! labelled replies as raw messages), repeated until 10,000 messages are done.
//! `cargo run --release -p outreach-mail-analysis --example bench`.

use std::time::Instant;

use outreach_mail_analysis::{inspect, parse, rules, thread_id};

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpora");
    let mut messages: Vec<Vec<u8>> = Vec::new();
    for dir in ["sisimai/bsd", "sisimai/not", "negatives"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "eml") {
                messages.push(std::fs::read(e.path()).unwrap_or_default());
            }
        }
    }
    let replies = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replies.jsonl"
    ))
    .unwrap_or_default();
    for line in replies.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let mut raw = String::new();
        for h in v["headers"].as_array().into_iter().flatten() {
            raw.push_str(&format!(
                "{}: {}\r\n",
                h[0].as_str().unwrap_or(""),
                h[1].as_str().unwrap_or("")
            ));
        }
        raw.push_str(&format!(
            "Subject: {}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}\r\n",
            v["subject"].as_str().unwrap_or(""),
            v["text"].as_str().unwrap_or("")
        ));
        messages.push(raw.into_bytes());
    }
    let total_bytes: usize = messages.iter().map(Vec::len).sum();
    println!(
        "{} distinct messages, {} KB",
        messages.len(),
        total_bytes / 1024
    );

    let target = 10_000;
    let start = Instant::now();
    let mut done = 0;
    let mut labels = 0usize;
    while done < target {
        for raw in &messages {
            let parsed = parse(raw);
            let _thread = thread_id(parsed.from_email.as_deref().unwrap_or(""), &parsed.subject);
            let inspection = inspect(raw, &parsed);
            let verdict = rules::classify(&rules::Input {
                headers: &parsed.headers,
                subject: &parsed.subject,
                text: &parsed.body_text,
                original_subject: None,
            });
            labels += usize::from(verdict.label != "other" || inspection.recipients.is_empty());
            done += 1;
            if done == target {
                break;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{done} messages in {secs:.2} s: {:.0} messages/s (one core) [{labels}]",
        done as f64 / secs
    );
}
