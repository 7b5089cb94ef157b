//! The rules classifier measured on `tests/data/replies.jsonl`: short replies to a
//! cold sales email, at least 20 per label, more than a quarter not in English.
//! Prints accuracy per class, per language and overall (for the README) and fails
//! below the floors, so a regression in the phrase lists shows.
//!
//! Run with `cargo test -p outreach-mail-analysis --test replies -- --nocapture`.

mod common;

use common::{Row, raw_message, rows_from};

use std::collections::BTreeMap;

use outreach_mail_analysis::rules::{self, Input, LABELS};
use outreach_mail_analysis::{Kind, inspect, parse};

/// Overall accuracy below this fails the test.
const OVERALL_FLOOR: f64 = 0.85;
/// Any single class below this fails the test.
const CLASS_FLOOR: f64 = 0.7;
/// Held-out overall accuracy below this fails the test.
const HOLDOUT_FLOOR: f64 = 0.7;
/// Accuracy floor of the paraphrase set.
const PARAPHRASE_FLOOR: f64 = 0.95;
/// Accuracy floor of the fresh set.
const FRESH_FLOOR: f64 = 0.9;
/// Accuracy floor of the second fresh set.
const FRESH2_FLOOR: f64 = 0.9;
/// Accuracy floor of the third fresh set (set below its once-measured figure).
const FRESH3_FLOOR: f64 = 0.8;
/// Accuracy floor of the fourth fresh set.
const FRESH4_FLOOR: f64 = 0.8;
/// The step the replies answer (what `original_subject` carries in production).
const ORIGINAL_SUBJECT: &str = "Quick question about your outbound process";

fn rows() -> Vec<Row> {
    rows_from("replies.jsonl")
}

#[test]
fn the_labelled_set_is_as_described() {
    let rows = rows();
    assert!(rows.len() >= 140, "{} rows", rows.len());
    for label in LABELS {
        let n = rows.iter().filter(|r| r.label == label).count();
        assert!(n >= 20, "{label}: {n} rows");
    }
    assert!(rows.iter().all(|r| LABELS.contains(&r.label.as_str())));
    let foreign = rows.iter().filter(|r| r.lang != "en").count();
    assert!(
        foreign * 4 >= rows.len(),
        "{foreign} of {} not in English",
        rows.len()
    );
}

#[test]
fn rules_accuracy() {
    let (overall, per_class) = evaluate(&rows());
    assert!(
        overall >= OVERALL_FLOOR,
        "overall accuracy {overall:.3} < {OVERALL_FLOOR}"
    );
    for (label, acc) in per_class {
        assert!(
            acc >= CLASS_FLOOR,
            "{label}: accuracy {acc:.2} < {CLASS_FLOOR}"
        );
    }
}

/// The second set (10 per label, 29 of 70 not in English), written after the
/// first rules as a held-out set; its misses (0.54 then) showed the first lists
/// were fitted to the first set's wording, and the lists were broadened after it,
/// so it is development data now.
#[test]
fn rules_accuracy_second_set() {
    let (overall, _) = evaluate(&rows_from("replies_dev2.jsonl"));
    assert!(
        overall >= OVERALL_FLOOR,
        "second-set accuracy {overall:.3} < {OVERALL_FLOOR}"
    );
}

/// The held-out set (10 per label, 29 of 70 not in English), written after the
/// rules were frozen: the fairer estimate of how the rules do on wording they were
/// not written against. Measured once at 0.700 (49/70) with the frozen rules; its
/// five unsubscribe misses were then added to the unsubscribe list (missing an
/// opt-out is the costly error), which lifts it to 0.771, a figure that is no
/// longer held-out. No other class was tuned on it. Its floor guards regressions.
#[test]
fn rules_accuracy_held_out() {
    let (overall, _) = evaluate(&rows_from("replies_holdout.jsonl"));
    assert!(
        overall >= HOLDOUT_FLOOR,
        "held-out accuracy {overall:.3} < {HOLDOUT_FLOOR}"
    );
}

/// A fourth set (`replies_paraphrase.jsonl`, 73 rows, 52 not in English), written
/// for issue 27 item 6 before the phrase families were reworked, with phrasings
/// unlike the first three sets (not-now by timing and budget cycles, objections by
/// an existing vendor, in-house tools or no need, opt-outs in many word orders).
#[test]
fn rules_accuracy_paraphrase_set() {
    let (overall, _) = evaluate(&rows_from("replies_paraphrase.jsonl"));
    assert!(
        overall >= PARAPHRASE_FLOOR,
        "paraphrase-set accuracy {overall:.3} < {PARAPHRASE_FLOOR}"
    );
}

/// A fifth set (`replies_fresh.jsonl`, 46 rows, 32 not in English), written after
/// the phrase families were frozen and measured once; nothing was tuned on it, so
/// it is the fair estimate for wording nobody fitted the rules to.
#[test]
fn rules_accuracy_fresh_set() {
    let (overall, _) = evaluate(&rows_from("replies_fresh.jsonl"));
    assert!(
        overall >= FRESH_FLOOR,
        "fresh-set accuracy {overall:.3} < {FRESH_FLOOR}"
    );
}

/// A sixth set (`replies_fresh2.jsonl`, 39 rows, 28 not in English), written
/// after the second round of phrase families and measured once with the rules
/// as committed then: the latest fair estimate.
#[test]
fn rules_accuracy_fresh2_set() {
    let (overall, _) = evaluate(&rows_from("replies_fresh2.jsonl"));
    assert!(
        overall >= FRESH2_FLOOR,
        "fresh2-set accuracy {overall:.3} < {FRESH2_FLOOR}"
    );
}

/// A seventh set (`replies_fresh3.jsonl`, 39 rows, 28 not in English), written
/// after the third round of phrase families and measured once; nothing was
/// tuned on it. Its floor only guards against regressions.
#[test]
fn rules_accuracy_fresh3_set() {
    let (overall, _) = evaluate(&rows_from("replies_fresh3.jsonl"));
    assert!(
        overall >= FRESH3_FLOOR,
        "fresh3-set accuracy {overall:.3} < {FRESH3_FLOOR}"
    );
}

/// An eighth set (`replies_fresh4.jsonl`, 40 rows, 28 not in English, longer and
/// politer replies with greetings), written after the fourth round of families
/// and measured once; nothing was tuned on it before that measurement.
#[test]
fn rules_accuracy_fresh4_set() {
    let (overall, _) = evaluate(&rows_from("replies_fresh4.jsonl"));
    assert!(
        overall >= FRESH4_FLOOR,
        "fresh4-set accuracy {overall:.3} < {FRESH4_FLOOR}"
    );
}

/// Classifies every row, prints the README table and the misses, and returns the
/// overall and per-class accuracy.
fn evaluate(rows: &[Row]) -> (f64, Vec<(&'static str, f64)>) {
    let mut per_class: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut per_lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut confusion: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    for row in rows {
        let verdict = rules::classify(&Input {
            headers: &row.headers,
            subject: &row.subject,
            text: &row.text,
            original_subject: Some(ORIGINAL_SUBJECT),
        });
        assert!(LABELS.contains(&verdict.label) && (0.0..=1.0).contains(&verdict.confidence));
        let ok = verdict.label == row.label;
        let c = per_class
            .entry(LABELS.iter().find(|l| **l == row.label).unwrap())
            .or_default();
        c.1 += 1;
        c.0 += usize::from(ok);
        let l = per_lang
            .entry(if row.lang == "en" {
                "en".into()
            } else {
                "non-en".into()
            })
            .or_default();
        l.1 += 1;
        l.0 += usize::from(ok);
        *confusion
            .entry((row.label.clone(), verdict.label))
            .or_default() += 1;
        if !ok {
            // Rows of the held-out fifth (tests/holdout.rs) are not shown, so
            // tuning against this output cannot see them.
            let text = if common::held_out(&row.text) {
                "(held-out row)".to_string()
            } else {
                row.text.replace('\n', " ")
            };
            wrong.push(format!(
                "[{} -> {}] ({}) {text}",
                row.label, verdict.label, row.lang,
            ));
        }
    }
    let correct: usize = per_class.values().map(|c| c.0).sum();
    let overall = correct as f64 / rows.len() as f64;
    println!("\n| class | correct | total | accuracy |\n|---|---|---|---|");
    for (label, (ok, n)) in &per_class {
        println!("| {label} | {ok} | {n} | {:.2} |", *ok as f64 / *n as f64);
    }
    println!(
        "| **overall** | {correct} | {} | {overall:.3} |",
        rows.len()
    );
    for (lang, (ok, n)) in &per_lang {
        println!("{lang}: {ok}/{n} = {:.3}", *ok as f64 / *n as f64);
    }
    println!(
        "confusions: {:?}",
        confusion
            .iter()
            .filter(|((a, b), _)| a != b)
            .collect::<Vec<_>>()
    );
    println!("misclassified:\n  {}", wrong.join("\n  "));
    let per_class = per_class
        .into_iter()
        .map(|(l, (ok, n))| (l, ok as f64 / n as f64))
        .collect();
    (overall, per_class)
}

/// The same replies as raw messages through `parse` and `inspect`: no human reply
/// is a bounce, the bounces are bounces, and classifying `parse`'s `body_text`
/// gives the label classifying the clean text gives (the quoted cold email that
/// `raw_message` appends is trimmed away).
#[test]
fn raw_replies_through_parse_and_inspect() {
    let mut false_bounces = Vec::new();
    let mut missed_bounces = Vec::new();
    let mut drift = Vec::new();
    for row in rows() {
        let raw = raw_message(&row);
        let parsed = parse(&raw);
        let got = inspect(&raw, &parsed);
        match (row.label.as_str(), got.kind) {
            ("bounce", Kind::Bounce) => {}
            ("bounce", other) => missed_bounces.push(format!("{other:?}: {}", row.subject)),
            (_, Kind::Bounce | Kind::Complaint) => false_bounces.push(row.text.clone()),
            _ => {}
        }
        let input = |text| Input {
            headers: &parsed.headers,
            subject: &parsed.subject,
            text,
            original_subject: Some(ORIGINAL_SUBJECT),
        };
        let direct = rules::classify(&Input {
            headers: &row.headers,
            subject: &row.subject,
            text: &row.text,
            original_subject: Some(ORIGINAL_SUBJECT),
        });
        let through = rules::classify(&input(&parsed.body_text));
        if direct.label != through.label {
            drift.push(format!(
                "{} vs {}: {:?}",
                direct.label, through.label, parsed.body_text
            ));
        }
    }
    println!(
        "inspect on raw replies: false bounces {false_bounces:?}, missed bounces {missed_bounces:?}, drift {drift:?}"
    );
    assert!(false_bounces.is_empty(), "{false_bounces:?}");
    assert!(missed_bounces.is_empty(), "{missed_bounces:?}");
    assert!(drift.is_empty(), "{drift:?}");
}
