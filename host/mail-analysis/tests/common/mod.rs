//! Helpers shared by the corpus, replies and held-out tests: the labelled reply
//! rows, the raw message a row becomes, the corpus files and the fixed held-out
//! split.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use outreach_mail_analysis::Kind;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The step the replies answer (what `original_subject` carries in production).
pub const ORIGINAL_SUBJECT: &str = "Quick question about your outbound process";

/// One labelled reply.
pub struct Row {
    pub label: String,
    pub lang: String,
    pub subject: String,
    pub text: String,
    pub headers: Vec<(String, String)>,
}

/// The rows of `tests/data/{file}`.
pub fn rows_from(file: &str) -> Vec<Row> {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read_to_string(path).unwrap();
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            let s = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{k} missing: {l}"))
                    .to_string()
            };
            let headers = v["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    (
                        h[0].as_str().unwrap().to_string(),
                        h[1].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            Row {
                label: s("label"),
                lang: s("lang"),
                subject: s("subject"),
                text: s("text"),
                headers,
            }
        })
        .collect()
}

/// The row as the IMAP poller would fetch it, for the end-to-end checks.
pub fn raw_message(row: &Row) -> Vec<u8> {
    let mut raw = String::new();
    for (n, v) in &row.headers {
        raw.push_str(&format!("{n}: {v}\r\n"));
    }
    raw.push_str("To: mark@outreach.test\r\n");
    raw.push_str(&format!("Subject: {}\r\n", row.subject));
    raw.push_str("Date: Wed, 4 Nov 2026 10:30:00 +0100\r\n");
    if !row
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("Content-Type"))
    {
        raw.push_str("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n");
        raw.push_str("\r\n");
        raw.push_str(&row.text.replace('\n', "\r\n"));
    } else {
        // The bounce rows declaring a report get a minimal report structure.
        raw.push_str("\r\n--x\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n");
        raw.push_str(&row.text.replace('\n', "\r\n"));
        raw.push_str("\r\n--x--\r\n");
    }
    raw.push_str(
        "\r\n\r\nOn Tue, Nov 3, 2026 at 9:00 AM Mark Weber <mark@outreach.test> wrote:\r\n> Hi, quick question about your outbound process.\r\n",
    );
    raw.into_bytes()
}

/// `tests/corpora` at the repository root.
pub fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpora")
}

/// The `.eml` files of a folder, sorted.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "eml"))
        .collect();
    v.sort();
    v
}

/// A file's name.
pub fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Files under the sisimai `bsd/` folder that are not bounces in content (sisimai
/// keeps them for its own record types): the expected kind and why.
pub const NOT_BOUNCES: &[(&str, Kind, &str)] = &[
    (
        "lhost-amazonses-11.eml",
        Kind::Complaint,
        "SES/SNS notificationType Complaint",
    ),
    (
        "lhost-amazonses-13.eml",
        Kind::Other,
        "SES/SNS notificationType Delivery (a success notice)",
    ),
];

/// What a sisimai corpus file is: `None` for `not/` (anything but a bounce or a
/// complaint is right), else the expected kind.
pub fn expected_kind(path: &Path) -> Option<Kind> {
    let file = name(path);
    if path.parent().unwrap().ends_with("not") {
        None
    } else if file.starts_with("arf-") {
        Some(Kind::Complaint)
    } else if file.starts_with("rfc3834-") {
        Some(Kind::AutoReply)
    } else if let Some((_, kind, _)) = NOT_BOUNCES.iter().find(|(f, _, _)| *f == file) {
        Some(*kind)
    } else {
        Some(Kind::Bounce)
    }
}

/// Whether an item is in the held-out fifth: the first byte of
/// sha256("outreach-holdout-v1\n" + key) is divisible by 5. The key is the
/// corpus file's name or the reply row's text, so the split survives reordering
/// and additions. Fixed before any tuning of issue 27 item 6; do not change it.
pub fn held_out(key: &str) -> bool {
    let digest = Sha256::digest(format!("outreach-holdout-v1\n{key}").as_bytes());
    digest[0] % 5 == 0
}
