//! `outreach mail inspect FILE...`: what the inbox poller would make of raw
//! messages, for operators and scripts. No database, account or server.
//!
//! Each argument is a message file, a Maildir (a folder with `cur/` and
//! `new/`), a folder of message files, or an mbox file (messages separated
//! by `From ` lines). Every message goes through `outreach-mail-analysis`
//! exactly as the poller's: the same parse, the same bounce, complaint and
//! auto-reply detection, and the rules classifier.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use outreach_mail_analysis::{self as analysis, BounceType, Kind, rules};

#[derive(Debug, Subcommand)]
pub enum MailCommand {
    /// Print what each raw message is (bounce, complaint, auto-reply,
    /// reply) and its classification.
    Inspect {
        /// Message files, Maildirs, folders of messages or mbox files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Serialize)]
struct Report {
    file: String,
    kind: Kind,
    bounce_type: Option<BounceType>,
    recipients: Vec<String>,
    status: Option<String>,
    reason: Option<&'static str>,
    classification: Classification,
}

#[derive(Debug, Serialize)]
struct Classification {
    label: &'static str,
    confidence: f64,
    model: &'static str,
}

pub fn run(command: MailCommand) -> anyhow::Result<()> {
    let MailCommand::Inspect { files, json } = command;
    for path in files {
        for (name, raw) in messages(&path)? {
            let report = inspect(name, &raw);
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{} ({:.2})",
                    report.file,
                    word(&report.kind),
                    report.bounce_type.as_ref().map_or("-".into(), word),
                    report.status.as_deref().unwrap_or("-"),
                    if report.recipients.is_empty() {
                        "-".into()
                    } else {
                        report.recipients.join(",")
                    },
                    report.classification.label,
                    report.classification.confidence,
                );
            }
        }
    }
    Ok(())
}

/// A unit enum's JSON name (`bounce`, `hard`) for the table.
fn word<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn inspect(file: String, raw: &[u8]) -> Report {
    let parsed = analysis::parse(raw);
    let found = analysis::inspect(raw, &parsed);
    let verdict = rules::classify(&rules::Input {
        headers: &parsed.headers,
        subject: &parsed.subject,
        text: &parsed.body_text,
        original_subject: None,
    });
    Report {
        file,
        kind: found.kind,
        bounce_type: found.bounce_type,
        recipients: found.recipients,
        status: found.status,
        reason: found.reason,
        classification: Classification {
            label: verdict.label,
            confidence: verdict.confidence,
            model: rules::MODEL,
        },
    }
}

/// The messages `path` holds, each with the name it is reported under.
fn messages(path: &Path) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let shown = path.display().to_string();
    if path.is_dir() {
        let maildir = path.join("cur").is_dir() || path.join("new").is_dir();
        let folders = if maildir {
            vec![path.join("new"), path.join("cur")]
        } else {
            vec![path.to_path_buf()]
        };
        let mut files: Vec<PathBuf> = Vec::new();
        for folder in folders.iter().filter(|f| f.is_dir()) {
            for entry in std::fs::read_dir(folder)? {
                let p = entry?.path();
                if p.is_file() {
                    files.push(p);
                }
            }
        }
        files.sort();
        return files
            .into_iter()
            .map(|p| Ok((p.display().to_string(), std::fs::read(&p)?)))
            .collect();
    }
    let raw = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {shown}: {e}"))?;
    let split = split_mbox(&raw);
    if split.len() > 1 {
        return Ok(split
            .into_iter()
            .enumerate()
            .map(|(i, m)| (format!("{shown}#{}", i + 1), m))
            .collect());
    }
    Ok(vec![(shown, raw)])
}

/// Splits an mbox (mboxrd or mboxo) at its `From ` separator lines; a file
/// that does not start with one is a single message. `>From ` quoting is
/// undone.
fn split_mbox(raw: &[u8]) -> Vec<Vec<u8>> {
    if !raw.starts_with(b"From ") {
        return vec![raw.to_vec()];
    }
    let mut out: Vec<Vec<u8>> = Vec::new();
    for line in raw.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b"From ") {
            out.push(Vec::new());
            continue;
        }
        let current = out.last_mut().expect("the file starts with a separator");
        let unquoted = line
            .iter()
            .position(|b| *b != b'>')
            .filter(|n| *n > 0 && line[*n..].starts_with(b"From "))
            .map_or(line, |_| &line[1..]);
        current.extend_from_slice(unquoted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mbox_splits_at_from_lines_and_unquotes() {
        let mbox = b"From a@b Mon Jan 1 00:00:00 2026\nSubject: one\n\n>From here\n\nFrom c@d Mon Jan 1 00:00:00 2026\nSubject: two\n\nbody\n";
        let parts = split_mbox(mbox);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], b"Subject: one\n\nFrom here\n\n");
        assert_eq!(parts[1], b"Subject: two\n\nbody\n");
        assert_eq!(split_mbox(b"Subject: x\n\nbody").len(), 1);
    }

    #[test]
    fn a_bounce_reports_its_recipient_and_a_reply_its_label() {
        let dsn = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/corpora/sisimai/bsd/rfc3464-01.eml"),
        )
        .unwrap();
        let r = inspect("dsn".into(), &dsn);
        assert!(matches!(r.kind, Kind::Bounce));
        assert!(!r.recipients.is_empty());
        let reply = b"From: Ann <ann@acme.test>\r\nSubject: Re: a question\r\n\r\nPlease remove me from your list.\r\n";
        let r = inspect("reply".into(), reply);
        assert!(matches!(r.kind, Kind::Reply));
        assert_eq!(r.classification.label, "unsubscribe");
        assert_eq!(r.classification.model, rules::MODEL);
    }
}
