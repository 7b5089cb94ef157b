//! Scoring benchmark: 1,000 enriched records in the pool on embedded
//! SQLite, then 200 batch scorings of 100 of them by the default rule,
//! timed three ways in the same run: the service call (rule resolution, one
//! `find_many`, evaluation), the same through the router (API-key check,
//! rate limit, usage record, JSON both ways), and as the reference the
//! plain `find_many` of the same 100 records. Prints p50 and p95 in ms and
//! the scoring cost as a ratio of the plain read.
//!
//! Run: `tests/bench/scoring.sh` (release build).

use std::time::Instant;

use serde_json::json;

use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_leads::domains::pipeline::{self, save};
use outreach_leads::domains::record::Technology;
use outreach_leads::domains::store as pool;
use outreach_leads::scoring::{score, service};

const RECORDS: usize = 1_000;
const BATCH: usize = 100;
const RUNS: usize = 200;

const INDUSTRIES: &[&str] = &[
    "Software",
    "Fintech",
    "E-commerce",
    "Consulting",
    "Healthcare",
];
const TYPES: &[&str] = &["B2B", "B2C", "B2B2C", "marketplace", "unknown"];
const TECHS: &[(&str, &str)] = &[
    ("Stripe", "Payment processors"),
    ("Shopify", "Ecommerce"),
    ("HubSpot", "Marketing automation"),
    ("Google Analytics", "Analytics"),
    ("Intercom", "Live chat"),
    ("Cloudflare", "CDN"),
];
const SIGNALS: &[&str] = &[
    "has_analytics",
    "has_crm",
    "has_ecommerce",
    "has_payments",
    "has_ads",
    "has_cdn",
];

fn findings(n: usize) -> save::Findings {
    let technologies = (0..n % 5)
        .map(|i| {
            let (name, category) = TECHS[(n + i) % TECHS.len()];
            Technology {
                name: name.into(),
                categories: vec![category.into()],
                version: None,
                confidence: 100,
            }
        })
        .collect();
    save::Findings {
        company_name: Some(format!("Company {n}")),
        summary: Some(format!("Company {n} serves its customers well.")),
        industry: Some(INDUSTRIES[n % INDUSTRIES.len()].into()),
        business_type: Some(TYPES[n % TYPES.len()].into()),
        confidence: (n % 10) as f64 / 10.0,
        website_email: (!n.is_multiple_of(3)).then(|| format!("info@company{n}.com")),
        phone: n
            .is_multiple_of(4)
            .then(|| format!("+1415555{:04}", n % 10_000)),
        employees_range: Some("11-50".into()),
        technologies,
        alert_signals: (0..n % 4)
            .map(|i| SIGNALS[(n + i) % SIGNALS.len()].into())
            .collect(),
        audience_signals: vec!["has_ssl".into()],
        intent_score: (n * 7 % 101) as i64,
        intent_level: "warm".into(),
        likely_buys: vec!["crm".into()],
        gaps: vec!["ab_testing".into()],
        registrant_country: Some("US".into()),
        city: Some("San Francisco".into()),
        language: Some("en".into()),
        social_links: json!({}),
        mx_provider: Some("Google Workspace".into()),
        ..save::Findings::default()
    }
}

fn percentiles(mut ms: Vec<f64>) -> (f64, f64) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 * p).ceil() as usize).saturating_sub(1)];
    (at(0.50), at(0.95))
}

#[tokio::main]
async fn main() {
    let app = TestApp::with_areas(&[outreach_leads::AREA], |c| {
        c.rdap_bootstrap_url = "http://127.0.0.1:9/".into();
    })
    .await;
    let domains: Vec<String> = (0..RECORDS).map(|n| format!("company{n}.com")).collect();
    pipeline::submit(&app.state, &domains, "import", None)
        .await
        .unwrap();
    let now = app.state.clock.now_ms();
    for (n, domain) in domains.iter().enumerate() {
        let id: i64 = sqlx::query_scalar("SELECT id FROM domains WHERE domain = $1")
            .bind(domain)
            .fetch_one(&app.state.db.pool)
            .await
            .unwrap();
        save::save(&app.state, id, &findings(n), now, now + 1_000_000_000)
            .await
            .unwrap();
    }
    let account = app.account(Plan::Enterprise).await;
    // Every 10th record, so a batch spreads over the table.
    let batch: Vec<String> = domains.iter().step_by(RECORDS / BATCH).cloned().collect();
    assert_eq!(batch.len(), BATCH);

    // Warm the statement caches and the pool's connections.
    for _ in 0..10 {
        pool::find_many(&app.state.db, &batch).await.unwrap();
    }

    let mut read = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let found = pool::find_many(&app.state.db, &batch).await.unwrap();
        read.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(found.len(), BATCH);
    }

    let mut scored = Vec::with_capacity(RUNS);
    let mut hot = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let rule = service::resolve(&app.state, account.account_id, None)
            .await
            .unwrap();
        let results = score::score_domains(&app.state, &rule, &batch)
            .await
            .unwrap();
        scored.push(t.elapsed().as_secs_f64() * 1000.0);
        hot = results.iter().filter(|r| r.tier == "hot").count();
    }

    let mut routed = Vec::with_capacity(RUNS);
    let body = json!({"domains": batch});
    for _ in 0..RUNS {
        let t = Instant::now();
        let r = app
            .post("/v1/scoring/batch", &account.api_key, body.clone())
            .await;
        routed.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(r.status, 200, "{:?}", r.body);
    }

    let (read50, read95) = percentiles(read);
    let (score50, score95) = percentiles(scored);
    let (route50, route95) = percentiles(routed);
    println!(
        "{RECORDS} enriched records, {RUNS} runs of {BATCH} domains by the default rule ({hot} hot)"
    );
    println!("find_many alone:        p50 {read50:.2} ms, p95 {read95:.2} ms");
    println!(
        "service batch scoring:  p50 {score50:.2} ms, p95 {score95:.2} ms ({:.2}x the read at p50)",
        score50 / read50
    );
    println!(
        "through the router:     p50 {route50:.2} ms, p95 {route95:.2} ms ({:.2}x the read at p50)",
        route50 / read50
    );
}
