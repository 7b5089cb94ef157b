//! Detection measured on the sisimai set-of-emails development corpus (copied to
//! `tests/corpora/sisimai`, BSD-2-Clause) and on hand-written negatives
//! (`tests/corpora/negatives`): every `bsd/` file must be a bounce, except
//! `arf-*` (complaint) and `rfc3834-*` (auto-reply); `not/` and the negatives must
//! not be bounces. Prints the figures and the misses for the README.
//!
//! Run with `cargo test -p outreach-mail-analysis --test corpus -- --nocapture`.

mod common;

use common::{corpus_root, files, name};
use outreach_mail_analysis::{BounceType, Kind, inspect, parse};

/// Bounces that yield no recipient, each checked by reading it; every other bounce
/// must yield at least one.
const NO_RECIPIENT: &[(&str, &str)] = &[
    // Anonymised: the failed address is the same string as the bounce's To (our own
    // sender address), which is excluded on purpose.
    (
        "lhost-einsundeins-03.eml",
        "failed address equals the bounce's To (anonymised)",
    ),
    (
        "lhost-exim-61.eml",
        "failed address equals the bounce's To (anonymised)",
    ),
];

#[test]
fn sisimai_corpus() {
    let root = corpus_root().join("sisimai");
    let mut bounces = 0usize;
    let mut bounce_hits = 0usize;
    let mut misses: Vec<String> = Vec::new();
    let mut false_positives: Vec<String> = Vec::new();
    let mut without_recipient: Vec<String> = Vec::new();
    let mut wrong_recipient: Vec<String> = Vec::new();
    let (mut hard, mut soft) = (0, 0);
    let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();

    for path in files(&root.join("bsd"))
        .into_iter()
        .chain(files(&root.join("not")))
    {
        let raw = std::fs::read(&path).unwrap();
        let parsed = parse(&raw);
        let got = inspect(&raw, &parsed);
        let file = name(&path);
        let expected = common::expected_kind(&path);
        println!(
            "{file:32} {:10} {:5} {:8} {:18} {}",
            format!("{:?}", got.kind),
            got.bounce_type
                .map(|b| if b == BounceType::Hard {
                    "hard"
                } else {
                    "soft"
                })
                .unwrap_or("-"),
            got.status.as_deref().unwrap_or("-"),
            got.reason.unwrap_or("-"),
            got.recipients.join(",")
        );
        match expected {
            Some(Kind::Bounce) => {
                bounces += 1;
                if got.kind == Kind::Bounce {
                    bounce_hits += 1;
                    *reasons.entry(got.reason.unwrap_or("-")).or_default() += 1;
                    if got.bounce_type == Some(BounceType::Hard) {
                        hard += 1;
                    } else {
                        soft += 1;
                    }
                } else {
                    misses.push(format!("{file} ({:?})", got.kind));
                }
            }
            Some(kind) => {
                if got.kind == Kind::Bounce {
                    false_positives.push(file.clone());
                } else if got.kind != kind {
                    misses.push(format!("{file} ({:?}, expected {kind:?})", got.kind));
                }
            }
            None => {
                if got.kind == Kind::Bounce || got.kind == Kind::Complaint {
                    false_positives.push(file.clone());
                }
            }
        }
        if matches!(got.kind, Kind::Bounce | Kind::Complaint) && expected == Some(got.kind) {
            if got.recipients.is_empty() {
                if !NO_RECIPIENT.iter().any(|(f, _)| *f == file) && !file.starts_with("arf-") {
                    without_recipient.push(file.clone());
                }
            } else {
                // The address must occur in the message (raw, or decoded text for
                // base64 bodies).
                let lower =
                    String::from_utf8_lossy(&raw).to_lowercase() + &parsed.full_text.to_lowercase();
                for r in &got.recipients {
                    if !lower.contains(r.as_str()) {
                        wrong_recipient.push(format!("{file}: {r}"));
                    }
                }
            }
        }
    }

    let recall = bounce_hits as f64 / bounces as f64;
    println!(
        "\nbounces: {bounce_hits}/{bounces} detected, recall {recall:.4} (hard {hard}, soft {soft})"
    );
    println!("reasons: {reasons:?}");
    println!(
        "false positives: {} {false_positives:?}",
        false_positives.len()
    );
    println!("misses: {misses:?}");
    println!(
        "bounces without a recipient: {} {without_recipient:?}",
        without_recipient.len()
    );
    println!("recipients not in the message: {wrong_recipient:?}");

    assert!(
        recall >= 0.98,
        "bounce recall {recall:.4} < 0.98; misses: {misses:?}"
    );
    assert!(
        false_positives.is_empty(),
        "false positives: {false_positives:?}"
    );
    assert!(
        misses.iter().all(|m| m.starts_with("lhost-")
            || m.starts_with("rhost-")
            || m.starts_with("rfc3464-")),
        "{misses:?}"
    );
    assert!(
        without_recipient.is_empty(),
        "no recipient found: {without_recipient:?}"
    );
    assert!(
        wrong_recipient.is_empty(),
        "bad recipients: {wrong_recipient:?}"
    );
}

#[test]
fn negatives_are_not_bounces() {
    let mut wrong = Vec::new();
    for path in files(&corpus_root().join("negatives")) {
        let raw = std::fs::read(&path).unwrap();
        let parsed = parse(&raw);
        let got = inspect(&raw, &parsed);
        let file = name(&path);
        let expected = match file.split('-').next() {
            Some("reply") => Kind::Reply,
            Some("autoreply") => Kind::AutoReply,
            _ => Kind::Other,
        };
        println!("{file:40} {:?}", got.kind);
        if got.kind != expected {
            wrong.push(format!("{file}: {:?}, expected {expected:?}", got.kind));
        }
    }
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// Hand-written reports of the format families (`tests/corpora/formats`): each
/// must be a bounce naming the address of its `X-Test-Expect-Recipient` header.
#[test]
fn format_families_are_bounces() {
    format_batch("formats");
}

/// The second batch (`tests/corpora/formats-fresh`), written after the structural
/// rules and measured once before any change for it: `bounce-*` must be bounces
/// naming their `X-Test-Expect-Recipient`, `not-*` must not be bounces.
#[test]
fn fresh_format_batch() {
    format_batch("formats-fresh");
}

/// The third batch (`tests/corpora/formats-fresh2`), written after the last rule
/// change of item 6 and measured once, same expectations.
#[test]
fn fresh_format_batch_2() {
    format_batch("formats-fresh2");
}

/// Checks a folder of hand-written reports: `not-*` must not be bounces or
/// complaints, every other file a bounce naming the address of its
/// `X-Test-Expect-Recipient` header.
fn format_batch(dir: &str) {
    let mut wrong = Vec::new();
    let all = files(&corpus_root().join(dir));
    for path in &all {
        let raw = std::fs::read(path).unwrap();
        let parsed = parse(&raw);
        let got = inspect(&raw, &parsed);
        let file = name(path);
        println!(
            "{file:48} {:?} {:?} {:?} {:?} {}",
            got.kind,
            got.bounce_type,
            got.status,
            got.reason,
            got.recipients.join(",")
        );
        if file.starts_with("not-") {
            if matches!(got.kind, Kind::Bounce | Kind::Complaint) {
                wrong.push(format!("{file}: {:?}", got.kind));
            }
            continue;
        }
        let want = parsed
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("X-Test-Expect-Recipient"))
            .map(|(_, v)| v.trim().to_lowercase())
            .unwrap_or_default();
        if got.kind != Kind::Bounce {
            wrong.push(format!("{file}: {:?}", got.kind));
        } else if !got.recipients.contains(&want) {
            wrong.push(format!(
                "{file}: recipients {:?}, want {want}",
                got.recipients
            ));
        }
    }
    println!(
        "{dir}: {} of {} right; wrong: {wrong:?}",
        all.len() - wrong.len(),
        all.len()
    );
    assert!(wrong.is_empty(), "{wrong:?}");
}
