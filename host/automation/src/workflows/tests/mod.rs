//! Workflows through the router and the workers' single passes, on either
//! backend, with the leads and outbound areas (the actions' ports) and a
//! real HTTP receiver on loopback.

mod actions;
mod ai;
mod analytics;
mod definitions;
mod hostile;
mod runs;
mod triggers;

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::workflows::runs::drain;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestAccount, TestApp};

pub async fn app() -> TestApp {
    app_with(|_| {}).await
}

/// The workflow areas with an adjusted configuration.
pub async fn app_with(adjust: impl FnOnce(&mut outreach_core::config::Config)) -> TestApp {
    TestApp::with_areas(
        &[outreach_leads::AREA, outreach_outbound::AREA, crate::AREA],
        adjust,
    )
    .await
}

pub async fn starter(app: &TestApp) -> TestAccount {
    app.account(Plan::Starter).await
}

/// A workflow with these actions and trigger; answers its body.
pub async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let r = app.post("/v1/workflows", key, body).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.body
}

pub fn manual(name: &str, actions: Value) -> Value {
    json!({"name": name, "trigger_type": "manual", "actions": actions})
}

/// Imports pool records (JSON lines, as `outreach domains import` reads).
pub async fn pool(app: &TestApp, records: &[Value]) {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    outreach_leads::domains::import::import(
        &app.state,
        text.as_bytes(),
        outreach_leads::domains::import::Format::JsonLines,
        false,
        |_| {},
    )
    .await
    .unwrap();
}

/// Executes `id` manually and runs the queue dry; answers the run.
pub async fn run_now(app: &TestApp, key: &str, id: i64) -> Value {
    let r = app
        .post(&format!("/v1/workflows/{id}/execute"), key, json!({}))
        .await;
    assert_eq!(r.status, 202, "{:?}", r.body);
    let run_id = r.body["run_id"].as_i64().unwrap();
    drain(&app.state).await.unwrap();
    run(app, key, id, run_id).await
}

pub async fn run(app: &TestApp, key: &str, id: i64, run_id: i64) -> Value {
    let r = app
        .get(&format!("/v1/workflows/{id}/runs/{run_id}"), key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

/// A receiver on loopback: answers each request with the next status of
/// `statuses` (the last one repeats) and a JSON body, and records bodies
/// and headers.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    pub got: Arc<Mutex<Vec<Value>>>,
    pub headers: Arc<Mutex<Vec<HeaderMap>>>,
    statuses: Arc<Mutex<Vec<u16>>>,
}

impl Receiver {
    pub async fn start(body: Value) -> Receiver {
        let got = Arc::new(Mutex::new(Vec::new()));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let statuses = Arc::new(Mutex::new(vec![200]));
        let answer = Arc::new(Mutex::new(body));
        let (g, h, s, a) = (
            got.clone(),
            headers.clone(),
            statuses.clone(),
            answer.clone(),
        );
        let app = axum::Router::new().fallback(move |seen: HeaderMap, body: Bytes| {
            let (g, h, s, a) = (g.clone(), h.clone(), s.clone(), a.clone());
            async move {
                h.lock().unwrap().push(seen);
                g.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let status = {
                    let mut s = s.lock().unwrap();
                    if s.len() > 1 { s.remove(0) } else { s[0] }
                };
                let body = a.lock().unwrap().clone();
                (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver {
            url,
            got,
            headers,
            statuses,
        }
    }

    pub fn answer_with(&self, statuses: &[u16]) {
        *self.statuses.lock().unwrap() = statuses.to_vec();
    }

    pub fn hits(&self) -> usize {
        self.got.lock().unwrap().len()
    }
}
