//! Helpers the crate's area tests share: pool records written as the
//! pipeline writes them, lists, multipart uploads, the outbox.

use serde_json::{Value, json};

use crate::domains::pipeline::save::Findings;
use crate::domains::pipeline::{self, save};
use outreach_core::events::{self, EventType};
use outreach_core::testing::{TestApp, TestResponse};

/// Writes an enriched record straight through `save`, as the pipeline would.
pub async fn seed(app: &TestApp, domain: &str, f: save::Findings) -> i64 {
    pipeline::submit(&app.state, &[domain.to_string()], "import", None)
        .await
        .unwrap();
    let id: i64 = sqlx::query_scalar("SELECT id FROM domains WHERE domain = $1")
        .bind(domain)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    let now = app.state.clock.now_ms();
    save::save(&app.state, id, &f, now, now + 1_000_000)
        .await
        .unwrap();
    id
}

/// Findings of a B2B company in `industry` with an intent score.
pub fn findings(industry: &str, score: i64) -> save::Findings {
    save::Findings {
        company_name: Some(format!("{industry} Co")),
        summary: Some(format!("We make {industry} software for teams.")),
        industry: Some(industry.into()),
        business_type: Some("B2B".into()),
        confidence: 0.8,
        intent_score: score,
        intent_level: "warm".into(),
        registrant_country: Some("DE".into()),
        social_links: json!({}),
        ..save::Findings::default()
    }
}

pub async fn put(app: &TestApp, path: &str, key: &str, body: Value) -> TestResponse {
    app.call("PUT", path, Some(key), Some(body)).await
}

pub async fn delete(app: &TestApp, path: &str, key: &str) -> TestResponse {
    app.call("DELETE", path, Some(key), None).await
}

/// Runs the pool-evaluation worker until no pool event is left.
pub async fn evaluate(app: &TestApp) -> usize {
    crate::evaluation::drain(&app.state).await.unwrap()
}

/// Creates a list and returns its id.
pub async fn new_list(app: &TestApp, key: &str, name: &str) -> i64 {
    let r = app.post("/v1/lists", key, json!({"name": name})).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body["id"].as_i64().unwrap()
}

/// Adds `domains` to a list; returns the answer.
pub async fn add_domains(app: &TestApp, key: &str, list: i64, domains: &[&str]) -> TestResponse {
    let items: Vec<Value> = domains.iter().map(|d| json!({"domain": d})).collect();
    app.post(
        &format!("/v1/lists/{list}/items"),
        key,
        json!({"items": items}),
    )
    .await
}

/// The `data` of the account's outbox events of one type, oldest first.
pub async fn outbox(app: &TestApp, account_id: i64, kind: EventType) -> Vec<Value> {
    let mut found: Vec<Value> = events::for_account(&app.state.db, account_id, 100_000)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == kind)
        .map(|e| e.data)
        .collect();
    found.reverse();
    found
}

/// Moves the test clock forward by whole days.
pub fn days_pass(app: &TestApp, days: i64) {
    app.clock
        .advance(std::time::Duration::from_secs((days * 86_400) as u64));
}

const INDUSTRIES: [&str; 4] = ["Software", "Retail", "Healthcare", "Financial Services"];
const COUNTRIES: [Option<&str>; 4] = [Some("DE"), Some("FR"), Some("US"), None];
const SIGNALS: [&str; 4] = ["has_crm", "has_blog", "has_ssl", "has_saas"];
const TYPES: [&str; 3] = ["B2B", "B2C", "marketplace"];

/// The `i`-th synthetic record for audience and alert tests: every field varies on its own cycle.
pub fn record(i: usize) -> Findings {
    let audience_signals: Vec<String> = SIGNALS
        .iter()
        .enumerate()
        .filter(|(k, _)| (i >> k) & 1 == 1)
        .map(|(_, s)| (*s).to_owned())
        .collect();
    let intent = ((i * 37) % 101) as i64;
    Findings {
        company_name: Some(format!("Company {i}")),
        industry: Some(INDUSTRIES[i % 4].into()),
        business_type: Some(TYPES[i % 3].into()),
        confidence: ((i * 13) % 100) as f64 / 100.0,
        intent_score: intent,
        intent_level: if intent >= 80 { "hot" } else { "warm" }.into(),
        registrant_country: COUNTRIES[i % 4].map(str::to_owned),
        // A record without a registrant country falls back to its server's.
        ip_country: (i % 8 == 3).then(|| "NL".to_owned()),
        audience_signals,
        alert_signals: if i.is_multiple_of(2) {
            vec!["has_crm".into()]
        } else {
            vec![]
        },
        social_links: json!({}),
        ..Findings::default()
    }
}
