//! Competitors through the router: the domain's form, the plan's gate and
//! cap, auto-detected industry, detail and analysis after two enrichments
//! that differ, market share, the digest, the CSV, refresh, isolation.

use serde_json::{Value, json};

use crate::domains::pipeline::QUEUE;
use crate::domains::record::Technology;
use crate::intelligence::geo_tests::{app, at};
use crate::testkit::{days_pass, delete, seed};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

const PATH: &str = "/v1/intelligence/competitors";

async fn add(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let r = app.post(PATH, key, body).await;
    (r.status.as_u16(), r.body)
}

#[tokio::test]
async fn a_competitor_is_a_plain_domain_tracked_once_within_the_plan() {
    let app = app().await;
    let starter = app.account(Plan::Starter).await;
    let (status, _) = add(&app, &starter.api_key, json!({"domain": "acme.com"})).await;
    assert_eq!(status, 403);
    assert_eq!(app.get(PATH, &starter.api_key).await.status, 403);

    let pro = app.account(Plan::Pro).await;
    let key = &pro.api_key;
    for bad in [
        "https://Example.com/path",
        "Example.com",
        "example.com/about",
        "www.example.com",
        "",
        "localhost",
    ] {
        let (status, body) = add(&app, key, json!({"domain": bad})).await;
        assert_eq!(status, 400, "{bad}: {body:?}");
        assert!(
            body["detail"].as_str().unwrap().contains("domain"),
            "{body:?}"
        );
    }
    let (status, body) = add(&app, key, json!({"domain": "www.example.com"})).await;
    assert_eq!(status, 400);
    assert!(body["detail"].as_str().unwrap().contains("example.com"));
    let (status, body) = add(
        &app,
        key,
        json!({"domain": "acme.com", "industry": "Astrology"}),
    )
    .await;
    assert_eq!(status, 400, "{body:?}");

    // New to the pool: queued for enrichment, industry not known yet.
    let (status, body) = add(
        &app,
        key,
        json!({"domain": "acme.com", "notes": "Main rival", "alert_email": "me@ours.com"}),
    )
    .await;
    assert_eq!(status, 201, "{body:?}");
    assert_eq!(body["domain"], "acme.com");
    assert_eq!(body["status"], "queued");
    assert_eq!(body["industry"], Value::Null);
    assert_eq!(body["enrichment"], Value::Null);
    assert_eq!(body["alert_email"], "me@ours.com");
    assert_eq!(body["last_checked_at"], Value::Null);
    let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE queue = $1")
        .bind(QUEUE)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap();
    assert_eq!(jobs, 1);
    let (status, body) = add(&app, key, json!({"domain": "acme.com"})).await;
    assert_eq!(status, 409, "{body:?}");
    assert_eq!(body["detail"], "Competitor already tracked");

    // In the pool already: its industry is the record's.
    seed(&app, "rival.com", at("Retail", Some("FR"), None, None)).await;
    let (status, body) = add(&app, key, json!({"domain": "rival.com"})).await;
    assert_eq!(status, 201, "{body:?}");
    assert_eq!(body["industry"], "Retail");
    assert_eq!(body["enrichment"]["country"], "FR");
    assert_eq!(body["enrichment"]["business_type"], "B2B");
    // An industry given wins, in the taxonomy's spelling.
    let (_, body) = add(
        &app,
        key,
        json!({"domain": "other.com", "industry": "software"}),
    )
    .await;
    assert_eq!(body["industry"], "Software");

    // Pro tracks 10: the eleventh is refused and not written.
    for i in 3..10 {
        let (status, _) = add(&app, key, json!({"domain": format!("c{i}.com")})).await;
        assert_eq!(status, 201);
    }
    let (status, body) = add(&app, key, json!({"domain": "c10.com"})).await;
    assert_eq!(status, 400, "{body:?}");
    let r = app.get(PATH, key).await;
    assert_eq!(
        (
            r.body["count"].clone(),
            r.body["limit"].clone(),
            r.body["remaining"].clone()
        ),
        (json!(10), json!(10), json!(0))
    );

    // Another account sees none of them.
    let other = app.account(Plan::Pro).await;
    let id = r.body["competitors"][0]["id"].as_i64().unwrap();
    for path in [
        format!("{PATH}/{id}/detail"),
        format!("{PATH}/{id}/analysis"),
    ] {
        assert_eq!(app.get(&path, &other.api_key).await.status, 404, "{path}");
    }
    let r = app
        .post(&format!("{PATH}/{id}/refresh"), &other.api_key, json!({}))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        delete(&app, &format!("{PATH}/{id}"), &other.api_key)
            .await
            .status,
        404
    );
    assert_eq!(app.get(PATH, &other.api_key).await.body["count"], 0);
    assert_eq!(delete(&app, &format!("{PATH}/{id}"), key).await.status, 204);
    assert_eq!(delete(&app, &format!("{PATH}/{id}"), key).await.status, 404);
}

fn tech(name: &str) -> Technology {
    Technology {
        name: name.into(),
        categories: vec!["Analytics".into()],
        version: None,
        confidence: 100,
    }
}

#[tokio::test]
async fn the_analysis_diffs_the_last_two_enrichments() {
    let app = app().await;
    let key = &app.account(Plan::Pro).await.api_key;
    let mut first = at("Software", Some("DE"), None, None);
    first.summary = Some("CRM for small teams.".into());
    first.technologies = vec![tech("Stripe"), tech("HubSpot")];
    first.alert_signals = vec!["has_crm".into()];
    seed(&app, "rival.com", first.clone()).await;
    let (_, body) = add(&app, key, json!({"domain": "rival.com"})).await;
    let id = body["id"].as_i64().unwrap();

    let r = app.get(&format!("{PATH}/{id}/analysis"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["comparable"], false);
    assert_eq!(r.body["enrichments"], 1);
    assert_eq!(r.body["signals"], Value::Null);

    days_pass(&app, 3);
    let mut second = first;
    second.summary = Some("CRM and billing for teams.".into());
    second.technologies = vec![tech("Stripe"), tech("Segment")];
    second.alert_signals = vec!["has_crm".into(), "hiring".into()];
    second.confidence = 0.7;
    seed(&app, "rival.com", second).await;

    let r = app.get(&format!("{PATH}/{id}/analysis"), key).await;
    assert_eq!(r.body["comparable"], true, "{:?}", r.body);
    assert_eq!(r.body["enrichments"], 2);
    assert_eq!(
        r.body["technologies"],
        json!({"added": ["Segment"], "removed": ["HubSpot"]})
    );
    assert_eq!(
        r.body["signals"],
        json!({"added": ["hiring"], "removed": []})
    );
    assert_eq!(
        r.body["summary"],
        json!({"changed": true, "before": "CRM for small teams.", "after": "CRM and billing for teams."})
    );
    assert_eq!(r.body["industry"]["changed"], false);
    assert_eq!(r.body["confidence"], json!({"before": 0.5, "after": 0.7}));

    let r = app.get(&format!("{PATH}/{id}/detail"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["record"]["domain"], "rival.com");
    assert_eq!(
        r.body["activity"]["enrichments"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        r.body["activity"]["enrichments"][0]["technologies"],
        json!(["Segment", "Stripe"])
    );
    let fields: Vec<&str> = r.body["activity"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field_changed"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"summary") && fields.contains(&"confidence"),
        "{fields:?}"
    );

    // Once the seeds' enrichment jobs have run, a refresh queues one
    // enrichment; a second waits for it.
    let waiting = format!("{PATH}/{id}/refresh");
    let r = app.post(&waiting, key, json!({})).await;
    assert_eq!(r.body["status"], "already_queued");
    sqlx::query("UPDATE jobs SET status = 'done'")
        .execute(&app.state.db.pool)
        .await
        .unwrap();
    let r = app
        .post(&format!("{PATH}/{id}/refresh"), key, json!({}))
        .await;
    assert_eq!(
        (r.status.as_u16(), r.body["status"].clone()),
        (202, json!("queued"))
    );
    let r = app
        .post(&format!("{PATH}/{id}/refresh"), key, json!({}))
        .await;
    assert_eq!(r.body["status"], "already_queued");
}

#[tokio::test]
async fn market_share_digest_and_export_read_the_competitors_industries() {
    let app = app().await;
    let key = &app.account(Plan::Enterprise).await.api_key;
    seed(&app, "rival.com", at("Software", Some("DE"), None, None)).await;
    seed(&app, "s1.com", at("Software", Some("DE"), None, None)).await;
    seed(&app, "r1.com", at("Retail", Some("DE"), None, None)).await;
    days_pass(&app, 10);
    seed(&app, "s2.com", at("Software", Some("DE"), None, None)).await;
    seed(&app, "s3.com", at("Software", Some("DE"), None, None)).await;
    seed(&app, "h1.com", at("Healthcare", None, None, None)).await;
    let mut none = at("Software", None, None, None);
    none.industry = None;
    seed(&app, "blank.com", none).await;
    let (_, body) = add(
        &app,
        key,
        json!({"domain": "rival.com", "notes": "=HYPERLINK(\"http://x\")"}),
    )
    .await;
    let id = body["id"].as_i64().unwrap();

    let r = app.get(&format!("{PATH}/market-share"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Six records carry an industry: four Software, one Retail, one
    // Healthcare; blank.com has none.
    assert_eq!(r.body["total_market_domains"], 6);
    assert_eq!(
        r.body["competitors"],
        json!([{"id": id, "domain": "rival.com", "industry": "Software",
                "industry_domain_count": 4, "industry_share_pct": 66.67}])
    );
    assert_eq!(r.body["industries"].as_array().unwrap().len(), 1);
    assert_eq!(r.body["industries"][0]["industry"], "Software");
    assert_eq!(r.body["industries"][0]["domain_count"], 4);
    assert_eq!(r.body["industries"][0]["new_7d"], 2);
    assert_eq!(r.body["industries"][0]["competitors"], 1);

    // The last 7 days of Software: s2 and s3, rival.com left out.
    let r = app.get(&format!("{PATH}/digest"), key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let entry = &r.body["competitors"][0];
    assert_eq!(entry["new_count"], 2);
    let names: Vec<&str> = entry["new_domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["domain"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["s3.com", "s2.com"]);

    let r = app.get(&format!("{PATH}/export"), key).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/csv; charset=utf-8"));
    let csv = r.body.as_str().unwrap();
    assert!(
        csv.starts_with("id,domain,industry,notes,alert_email,status,"),
        "{csv}"
    );
    assert!(
        csv.contains(",rival.com,Software,\"'=HYPERLINK(\"\"http://x\"\")\","),
        "{csv}"
    );
}
