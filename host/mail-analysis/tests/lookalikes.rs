//! Look-alikes built from the labelled replies: every non-bounce reply of the
//! seven sets, sent from senders and with markers that bounce evidence uses
//! (a no-reply sender, `Auto-Submitted`, a null return path, `Precedence: bulk`,
//! a person with a role-like address, a security team mailbox), each with an
//! SMTP reply next to a foreign address appended. None may become a bounce or a
//! complaint: the evidence must come together, not one marker at a time.
//!
//! Run with `cargo test -p outreach-mail-analysis --test lookalikes -- --nocapture`.

mod common;
use outreach_mail_analysis::{Kind, inspect, parse};
#[test]
fn replies_with_bounce_markers_are_not_bounces() {
    let mut n = 0;
    let mut bad = Vec::new();
    for set in [
        "replies.jsonl",
        "replies_dev2.jsonl",
        "replies_holdout.jsonl",
        "replies_paraphrase.jsonl",
        "replies_fresh.jsonl",
        "replies_fresh2.jsonl",
        "replies_fresh3.jsonl",
    ] {
        for row in common::rows_from(set) {
            if row.label == "bounce" {
                continue;
            }
            for (from, extra, subj) in [
                ("Shop <no-reply@shop.example>", "", "Hello"),
                (
                    "Anna <anna@x.example>",
                    "Auto-Submitted: auto-replied\r\n",
                    "Automatic reply: Hello",
                ),
                ("Anna <anna@x.example>", "Return-Path: <>\r\n", "Hello"),
                (
                    "Team <notifications@x.example>",
                    "Precedence: bulk\r\n",
                    "Delivery update",
                ),
                ("Pia <product-owner@acme.example>", "", "Your message"),
                ("Security <email-security@acme.example>", "", "Your message"),
            ] {
                let raw = format!(
                    "From: {from}\r\n{extra}To: mark@outreach.test\r\nSubject: {subj}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{}\r\nContact: info@other.example, error: 550 5.1.1\r\n",
                    row.text
                );
                let p = parse(raw.as_bytes());
                let got = inspect(raw.as_bytes(), &p);
                n += 1;
                if matches!(got.kind, Kind::Bounce | Kind::Complaint) {
                    bad.push(format!(
                        "{from} {extra:?} {}",
                        if common::held_out(&row.text) {
                            "(held-out)".into()
                        } else {
                            row.text.clone()
                        }
                    ));
                }
            }
        }
    }
    println!(
        "{n} variants, {} bounces: {:#?}",
        bad.len(),
        &bad[..bad.len().min(12)]
    );
}
