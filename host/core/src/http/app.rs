//! Router plumbing: the routes of the areas the server lists, the API-key
//! layer on `/v1`, the error-shape and tracing layers, the OpenAPI document
//! and health checks. The server passes its area list (`outreach::AREAS`);
//! tests pass the areas they exercise.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tower_http::trace::TraceLayer;
use utoipa::{OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::auth::RequireApiKey;
use super::errors::{json_errors, not_found};
use super::openapi::{BaseDoc, complete_responses, operation_id_problems};
use crate::area::Area;
use crate::error::ErrorBody;
use crate::state::AppState;

/// Routes that need an API key: every area's `v1` router.
fn v1_routes(areas: &[Area]) -> OpenApiRouter<AppState> {
    areas.iter().fold(OpenApiRouter::new(), |router, area| {
        router.merge((area.v1)())
    })
}

/// Routes without an API key: health, then every area's public router
/// (dashboard sign-in, known-providers, incoming webhooks...).
fn public_routes(areas: &[Area]) -> OpenApiRouter<AppState> {
    let health = OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz));
    areas
        .iter()
        .fold(health, |router, area| router.merge((area.public)()))
}

/// The OpenAPI document of every route, as served at `/openapi.json`.
///
/// Panics when two operations share an `operationId` (see
/// [`operation_id_problems`] for why this refuses rather than renames).
pub fn openapi(areas: &[Area]) -> serde_json::Value {
    let (_, v1) = v1_routes(areas).split_for_parts();
    let (_, public) = public_routes(areas).split_for_parts();
    document(v1, public)
}

fn document(v1: utoipa::openapi::OpenApi, public: utoipa::openapi::OpenApi) -> serde_json::Value {
    let mut doc = BaseDoc::openapi();
    doc.merge(v1);
    doc.merge(public);
    let mut json = serde_json::to_value(&doc).expect("OpenAPI serialises");
    let problems = operation_id_problems(&json);
    assert!(
        problems.is_empty(),
        "every OpenAPI operationId must be unique; give one of the handlers an explicit \
         `operation_id = \"...\"` in its #[utoipa::path]: {}",
        problems.join("; ")
    );
    complete_responses(&mut json);
    json
}

/// The whole HTTP application over `areas`.
pub fn router(state: AppState, areas: &[Area]) -> Router {
    let (v1, v1_doc) = v1_routes(areas).split_for_parts();
    let (public, public_doc) = public_routes(areas).split_for_parts();
    let doc_json: Arc<[u8]> = serde_json::to_vec(&document(v1_doc, public_doc))
        .expect("OpenAPI serialises")
        .into();

    let v1 = v1.route_layer(RequireApiKey::new(state.clone()));
    Router::new()
        .merge(v1)
        .merge(public)
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let doc = doc_json.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], doc.to_vec()) }
            }),
        )
        // A route layer runs after routing, so it sees the route template.
        .route_layer(middleware::from_fn(http_metrics))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn(json_errors))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Request counts and latencies per route template, for Prometheus.
async fn http_metrics(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |m| m.as_str().to_string());
    let method = req.method().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    metrics::counter!("outreach_http_requests_total", "method" => method.clone(), "route" => route.clone(), "status" => status).increment(1);
    metrics::histogram!("outreach_http_request_duration_seconds", "method" => method, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    pub status: String,
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "Alive", body = Health)))]
async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
    })
}

/// Readiness: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ))]
async fn readyz(State(state): State<AppState>) -> Response {
    match sqlx::query("SELECT 1").execute(&state.db.pool).await {
        Ok(_) => axum::Json(Health {
            status: "ready".into(),
        })
        .into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            crate::error::error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                "Database unavailable".into(),
            )
        }
    }
}
