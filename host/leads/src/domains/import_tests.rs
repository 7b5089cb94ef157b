//! `outreach domains import` through its library function: CSV and TSV
//! with and without headers, JSON lines with fields, repeats, bad lines,
//! `--enrich`, and a re-run.

use std::io::Cursor;

use serde_json::Value;

use super::import::{Format, Summary, import};
use super::pipeline;
use outreach_core::testing::TestApp;

async fn app() -> TestApp {
    TestApp::with_areas(&[crate::AREA], |_| {}).await
}

async fn run(app: &TestApp, text: &str, format: Format, enrich: bool) -> Summary {
    let mut reports = Vec::new();
    let s = import(
        &app.state,
        Cursor::new(text.as_bytes().to_vec()),
        format,
        enrich,
        |n| reports.push(n),
    )
    .await
    .unwrap();
    assert_eq!(
        reports.last().copied(),
        Some(text.len() as u64),
        "progress reaches the end"
    );
    s
}

async fn record(app: &TestApp, domain: &str) -> Value {
    let stored = super::store::find(&app.state.db, domain)
        .await
        .unwrap()
        .unwrap();
    serde_json::to_value(stored.record).unwrap()
}

fn summary(imported: u64, updated: u64, skipped: u64, invalid: u64) -> Summary {
    Summary {
        imported,
        updated,
        skipped,
        invalid,
    }
}

#[tokio::test]
async fn csv_with_a_named_column_quotes_and_a_bom() {
    let app = app().await;
    let csv = "\u{feff}Company,Website,Notes\n\
               Acme,https://www.acme-corp.com/about,\"big, \"\"old\"\" client\"\n\
               Beta,beta-labs.io,\"two\nlines\"\n\
               Dup,ACME-CORP.com,\n\
               Bad,localhost,\n\
               Empty,,\n";
    assert_eq!(
        run(&app, csv, Format::Csv, false).await,
        summary(2, 0, 1, 2)
    );
    let r = record(&app, "acme-corp.com").await;
    assert_eq!(r["status"], "imported");
    // Not due: nothing enriches an imported domain until someone asks.
    assert_eq!(pipeline::queue_due(&app.state, 10).await.unwrap(), 0);
}

#[tokio::test]
async fn tsv_without_a_header_uses_the_first_column() {
    let app = app().await;
    let tsv = "gamma-co.de\tGamma\nhttp://delta.co.uk/x\tDelta\n";
    assert_eq!(
        run(&app, tsv, Format::Csv, false).await,
        summary(2, 0, 0, 0)
    );
    record(&app, "delta.co.uk").await;
    // Running it again adds nothing.
    assert_eq!(
        run(&app, tsv, Format::Csv, false).await,
        summary(0, 0, 2, 0)
    );
}

#[tokio::test]
async fn json_lines_carry_fields_and_update_known_domains() {
    let app = app().await;
    let lines = r#"{"domain": "epsilon.com", "company_name": "Epsilon", "industry": "Software", "business_type": "B2B", "confidence": 0.7, "technologies": ["Stripe", {"name": "HubSpot", "categories": ["Marketing automation"], "version": "1"}], "social_links": {"linkedin": "https://www.linkedin.com/company/epsilon"}, "registered_at": "2019-05-01"}
{"domain": "zeta.com"}
not json
{"domain": "eta.com", "colour": "blue"}
{"domain": "theta.com", "confidence": 3}
{"domain": "iota.com", "business_type": "B2X"}
{"company_name": "no domain"}

"#;
    assert_eq!(
        run(&app, lines, Format::JsonLines, false).await,
        summary(2, 0, 0, 5)
    );
    let r = record(&app, "epsilon.com").await;
    assert_eq!(r["company_name"], "Epsilon");
    assert_eq!(r["business_type"], "B2B");
    assert_eq!(r["confidence"], 0.7);
    assert_eq!(r["technologies"][1]["name"], "HubSpot");
    assert_eq!(r["technologies"][1]["version"], "1");
    assert_eq!(
        r["social_links"]["linkedin"],
        "https://www.linkedin.com/company/epsilon"
    );
    assert_eq!(r["registered_at"], "2019-05-01T00:00:00Z");

    let update =
        "{\"domain\": \"epsilon.com\", \"industry\": \"Fintech\"}\n{\"domain\": \"zeta.com\"}\n";
    assert_eq!(
        run(&app, update, Format::JsonLines, false).await,
        summary(0, 1, 1, 0)
    );
    assert_eq!(record(&app, "epsilon.com").await["industry"], "Fintech");
    assert_eq!(record(&app, "epsilon.com").await["company_name"], "Epsilon");
}

#[tokio::test]
async fn enrich_queues_the_new_domains() {
    let app = app().await;
    assert_eq!(
        run(&app, "domain\nkappa.com\nlambda.com\n", Format::Csv, true).await,
        summary(2, 0, 0, 0)
    );
    // Queued, and still shown as what it is until its enrichment lands.
    assert_eq!(record(&app, "kappa.com").await["status"], "imported");
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = $1")
        .bind(pipeline::QUEUE)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(jobs, 2);
}
