//! List import benchmark: a 5 MB CSV of about 150,000 rows (a third of
//! them repeats or malformed) through `POST /v1/lists/import-csv` into a
//! list the configuration caps at 200,000 items, on embedded SQLite, in
//! process through the router: multipart, reading, the item inserts with
//! their history rows and `list.item_added` events, and the pool's new
//! domains with their enrichment jobs, in one transaction.
//!
//! The reference, in the same run and database: the file's distinct
//! domains inserted into `list_items` of a second list with plain multi-row
//! INSERT statements in one transaction (the work a list import cannot do
//! without). Prints rows per second for both, their ratio, and the peak RSS
//! the import added.
//!
//! Run: `tests/bench/list_import.sh` (release build). `IMPORT_ROWS` changes
//! the number of rows.

use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use outreach_core::accounts::limits::LimitSetting;
use outreach_core::accounts::plans::Plan;
use outreach_core::store::value_rows;
use outreach_core::testing::TestApp;

/// Peak resident memory of this process so far, in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The file: `rows` data rows under a header; every third row repeats an
/// earlier domain or is malformed. Returns the bytes and the distinct
/// domains.
fn file(rows: usize) -> (Vec<u8>, Vec<String>) {
    let mut out = b"Company,Website,Country\n".to_vec();
    let mut distinct = Vec::new();
    for i in 0..rows {
        let line = match i % 6 {
            2 => format!("Repeat {i},https://www.co{}.io/,DE\n", i / 2),
            5 => format!("Broken {i},not a domain {i},FR\n"),
            _ => {
                let d = format!("co{i}.io");
                distinct.push(d.clone());
                format!("Company {i},{d},US\n")
            }
        };
        out.extend_from_slice(line.as_bytes());
    }
    (out, distinct)
}

fn multipart(list_name: &str, file: &[u8]) -> (String, Vec<u8>) {
    let boundary = "BeNcHbOuNdArY";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"list_name\"\r\n\r\n{list_name}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"leads.csv\"\r\n\
         Content-Type: text/csv\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rows: usize = std::env::var("IMPORT_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150_000);
    let app = TestApp::with_areas(&[outreach_leads::AREA], |c| {
        c.limits.insert(
            "enterprise".into(),
            [("list_items".to_string(), LimitSetting::Number(200_000))]
                .into_iter()
                .collect(),
        );
    })
    .await;
    let account = app.account(Plan::Enterprise).await;
    let (csv, distinct) = file(rows);
    eprintln!(
        "file: {rows} rows, {:.2} MB, {} distinct domains",
        csv.len() as f64 / 1_048_576.0,
        distinct.len()
    );
    assert!(
        csv.len() <= 5 * 1024 * 1024,
        "the file must fit the 5 MB limit"
    );

    let (content_type, body) = multipart("Bench import", &csv);
    drop(csv);
    let rss_before = peak_rss_kib();
    let req = Request::post("/v1/lists/import-csv")
        .header("authorization", format!("Bearer {}", account.api_key))
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap();
    let started = Instant::now();
    let r = app.send(req).await;
    let import_s = started.elapsed().as_secs_f64();
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.body["domains_added"], distinct.len());
    assert_eq!(r.body["total_in_file"], rows);
    let rss_after = peak_rss_kib();

    // The reference: the same distinct domains into a second list's items,
    // plain multi-row inserts in one transaction.
    let r = app
        .post("/v1/lists", &account.api_key, json!({"name": "Reference"}))
        .await;
    let list_id = r.body["id"].as_i64().unwrap();
    let backend = app.state.db.backend;
    let started = Instant::now();
    let mut tx = app.state.db.pool.begin().await.unwrap();
    for chunk in distinct.chunks(200) {
        let sql = format!(
            "INSERT INTO list_items (account_id, list_id, domain, notes, status, added_at) VALUES {}",
            value_rows(backend, chunk.len(), 6)
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for d in chunk {
            q = q
                .bind(account.account_id)
                .bind(list_id)
                .bind(d)
                .bind("")
                .bind("discovered")
                .bind(0i64);
        }
        q.execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
    let reference_s = started.elapsed().as_secs_f64();

    let import_rate = rows as f64 / import_s;
    let reference_rate = distinct.len() as f64 / reference_s;
    println!(
        "import: {rows} rows in {import_s:.2} s = {import_rate:.0} rows/s ({} items added)",
        distinct.len()
    );
    println!(
        "reference (plain item inserts of the distinct domains): {:.0} rows/s",
        reference_rate
    );
    println!(
        "ratio (items added per second, import / reference): {:.3}",
        (distinct.len() as f64 / import_s) / reference_rate
    );
    println!(
        "peak RSS: {:.0} MB before the import, {:.0} MB after (+{:.0} MB)",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        (rss_after.saturating_sub(rss_before)) as f64 / 1024.0
    );
}
