//! The industry report's PDF on the real binary, checked by tools written
//! by others: records imported with `outreach domains import`, the PDF
//! fetched over HTTP, then `qpdf --check`, `pdfinfo` (A4, page count),
//! `pdffonts` (embedded), `pdftotext` (the industry, the totals, the first
//! top domain, a chart label) and `pdftoppm` (every page renders). Also
//! `outreach domains rebuild-rollups` leaving the figures as they were.

use std::process::Command;

use outreach_e2e::{Deployment, client, get};

/// Sixty Software records with long summaries (the table flows over pages)
/// and two Retail ones, as JSON lines.
fn records() -> String {
    let countries = ["DE", "US", "FR", "GB", "NL"];
    let mut lines = String::new();
    for i in 0..60 {
        lines.push_str(&format!(
            "{{\"domain\": \"vendor{i:02}.com\", \"industry\": \"Software\", \"confidence\": {:.2}, \
             \"registrant_country\": \"{}\",{} \"summary\": \"Vendor {i} \
             builds workflow software for finance teams, with integrations, audit trails and an \
             API that connects the tools those teams already use every day.\"}}\n",
            0.99 - f64::from(i) * 0.01,
            countries[i as usize % countries.len()],
            if i % 3 == 0 {
                ""
            } else {
                " \"website_email\": \"hello@example.com\","
            },
        ));
    }
    lines.push_str(
        "{\"domain\": \"shop1.com\", \"industry\": \"Retail\", \"registrant_country\": \"DE\"}\n",
    );
    lines.push_str("{\"domain\": \"shop2.com\", \"industry\": \"Retail\"}\n");
    lines
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} (tests/run.sh installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn field<'a>(info: &'a str, name: &str) -> &'a str {
    info.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
        .unwrap_or_else(|| panic!("{name} in {info}"))
}

#[tokio::test]
async fn the_industry_report_pdf_passes_qpdf_and_poppler() {
    let deployment = Deployment::new();
    let account = deployment.create_account("reports@example.com", "pro");
    let file = deployment.scratch().join("records.jsonl");
    std::fs::write(&file, records()).unwrap();
    deployment.cli_ok(&["domains", "import", file.to_str().unwrap()]);
    let server = deployment.start();
    let http = client();
    let key = Some(account.api_key.as_str());

    let json = get(&http, &server.url("/v1/intelligence/report/software"), key).await;
    assert_eq!(json.status, 200, "{}", json.text);
    assert_eq!(json.json["summary"]["total_leads"], 60);
    assert_eq!(json.json["summary"]["with_email"], 40);
    assert_eq!(json.json["top_domains"][0]["domain"], "vendor00.com");

    let response = http
        .get(server.url("/v1/intelligence/report/Software?format=pdf"))
        .bearer_auth(&account.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/pdf"
    );
    let bytes = response.bytes().await.unwrap();
    let pdf = deployment.scratch().join("software.pdf");
    std::fs::write(&pdf, &bytes).unwrap();
    let pdf = pdf.to_str().unwrap();

    run("qpdf", &["--check", pdf]);
    let info = run("pdfinfo", &[pdf]);
    assert!(field(&info, "Page size:").contains("(A4)"), "{info}");
    let pages: usize = field(&info, "Pages:").parse().unwrap();
    // The summary and charts, then 50 domains with their summaries.
    assert!(pages >= 2, "{info}");
    let fonts = run("pdffonts", &[pdf]);
    let rows: Vec<&str> = fonts.lines().skip(2).collect();
    assert!(!rows.is_empty(), "{fonts}");
    for row in &rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        // name type... emb sub uni object ID: "yes" under emb.
        assert!(
            cols.iter().rev().nth(4) == Some(&"yes"),
            "not embedded: {row}"
        );
    }
    let text = run("pdftotext", &["-layout", pdf, "-"]);
    for needle in ["Software", "60", "vendor00.com", "vendor49.com", "DE"] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    let prefix = deployment.scratch().join("page");
    run(
        "pdftoppm",
        &["-png", "-r", "40", pdf, prefix.to_str().unwrap()],
    );
    let rendered = std::fs::read_dir(deployment.scratch())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("page") && name.ends_with(".png")
        })
        .count();
    assert_eq!(rendered, pages);

    // Bad input on the real binary answers in the spec's shape.
    let r = get(
        &http,
        &server.url("/v1/intelligence/report/Software?format=docx"),
        key,
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(!r.detail().is_empty());
    drop(server);

    // A rebuild from the facet rows gives the same figures.
    let out = deployment.cli_ok(&["domains", "rebuild-rollups"]);
    assert!(out.contains("62 records"), "{out}");
    let server = deployment.start();
    let again = get(&http, &server.url("/v1/intelligence/report/software"), key).await;
    assert_eq!(again.json, json.json);
}
