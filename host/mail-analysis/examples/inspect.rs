//! Prints what the crate makes of raw messages, for debugging detection:
//! `cargo run -p outreach-mail-analysis --example inspect -- FILE... [--parsed]`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show_parsed = args.iter().any(|a| a == "--parsed");
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let raw = match std::fs::read(path) {
            Ok(raw) => raw,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let parsed = outreach_mail_analysis::parse(&raw);
        let inspection = outreach_mail_analysis::inspect(&raw, &parsed);
        let verdict =
            outreach_mail_analysis::rules::classify(&outreach_mail_analysis::rules::Input {
                headers: &parsed.headers,
                subject: &parsed.subject,
                text: &parsed.body_text,
                original_subject: None,
            });
        let mut out = serde_json::json!({
            "file": path,
            "inspection": inspection,
            "classification": {"label": verdict.label, "confidence": verdict.confidence, "model": outreach_mail_analysis::rules::MODEL},
        });
        if show_parsed {
            out["parsed"] = serde_json::to_value(&parsed).unwrap_or_default();
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    }
}
