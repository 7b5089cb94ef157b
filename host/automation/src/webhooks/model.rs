//! The webhook resources as the API shows them (spec/2 "Webhook", "Webhook
//! delivery"), the request bodies, and the event-name rules.

use outreach_core::error::{ApiError, ApiResult};
use outreach_core::events::EventType;
use outreach_core::http::extract::within;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// A subscription. The secret is never part of it (only [`CreatedWebhook`]).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Webhook {
    pub id: i64,
    pub name: Option<String>,
    /// The receiver's URL (HTTPS).
    pub url: String,
    /// Canonical event names, or `["*"]` for every event.
    pub events: Vec<String>,
    pub is_active: bool,
    /// When deliveries started failing without a success since; five days of
    /// that disables the subscription.
    pub failing_since: Option<String>,
    /// Why the service disabled the subscription, if it did.
    pub disabled_reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// The answer to a create: the subscription and its signing secret, shown
/// this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedWebhook {
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_` and 32 random bytes in base64. Keys `X-Service-Signature`
    /// (the whole string) and `webhook-signature` (the decoded bytes).
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
    pub count: u64,
    /// The plan's cap on subscriptions (`null` = unlimited).
    pub limit: Option<u64>,
    pub remaining: Option<u64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// HTTPS URL of the receiver.
    pub url: String,
    /// 1-20 event names of spec/2, or `*`.
    pub events: Vec<String>,
    /// 1-200 characters.
    pub name: Option<String>,
}

/// Fields to change; absent fields keep their value. PUT and PATCH take the
/// same body.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhook {
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub name: Option<String>,
    /// Setting true again after the service disabled the subscription
    /// clears its failure state.
    pub is_active: Option<bool>,
}

/// One delivery of one event to one subscription.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Delivery {
    pub id: i64,
    pub webhook_id: i64,
    pub event_type: String,
    /// The URL of the latest attempt.
    pub url: String,
    /// `pending` (not tried yet), `retrying` (a retry is scheduled),
    /// `delivered`, `failed` (retries exhausted; the retry endpoint replays it).
    pub status: String,
    /// The latest attempt's HTTP status; `null` when no answer came.
    pub status_code: Option<i64>,
    /// Attempts made so far.
    pub attempt: i64,
    pub response_ms: Option<i64>,
    /// Why the latest attempt failed.
    pub error: Option<String>,
    pub next_attempt_at: Option<String>,
    pub delivered_at: Option<String>,
    /// The outbox event delivered; `null` for test deliveries.
    pub event_id: Option<i64>,
    pub created_at: String,
}

/// A delivery with the exact body sent and every attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryDetail {
    #[serde(flatten)]
    pub delivery: Delivery,
    /// The JSON envelope sent on every attempt.
    pub payload: Value,
    pub attempts: Vec<DeliveryAttempt>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeliveryAttempt {
    pub attempt: i64,
    pub attempted_at: String,
    pub status_code: Option<i64>,
    pub response_ms: i64,
    /// The first 1,024 bytes of the answer (lossy UTF-8).
    pub response_excerpt: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct DeliverySummary {
    pub total_delivered: i64,
    pub total_failed: i64,
    /// delivered / (delivered + failed) x 100, rounded to 1 decimal; 0 when
    /// nothing has finished.
    pub success_rate: f64,
    /// Mean answer time of the latest attempts, in whole milliseconds.
    pub avg_response_ms: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryList {
    pub deliveries: Vec<Delivery>,
    pub summary: DeliverySummary,
}

/// Filters of `GET /v1/webhooks/deliveries`.
#[derive(Debug, Default, Deserialize, IntoParams)]
pub struct DeliveryFilter {
    pub webhook_id: Option<i64>,
    pub event_type: Option<String>,
    /// 1-200, default 100.
    pub limit: Option<i64>,
}

/// `limit` of `GET /v1/webhooks/{id}/deliveries`.
#[derive(Debug, Default, Deserialize, IntoParams)]
pub struct LimitQuery {
    /// 1-200, default 100.
    pub limit: Option<i64>,
}

/// The result of `POST /v1/webhooks/{id}/test`.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookTestResult {
    /// The receiver answered 2xx within 5 seconds.
    pub success: bool,
    pub status_code: Option<i64>,
    pub response_ms: i64,
    pub error: Option<String>,
    /// The recorded test delivery (it appears in the delivery log).
    pub delivery_id: i64,
}

/// spec/2: at most 20 event names per subscription.
pub const MAX_EVENTS: usize = 20;

/// The event name that means "every event".
pub const ALL_EVENTS: &str = "*";

/// Checks a subscription's event list and returns it canonical: aliases
/// replaced by the names they stand for, duplicates dropped, and a list
/// containing `*` reduced to `["*"]`.
pub fn canonical_events(names: &[String]) -> ApiResult<Vec<String>> {
    if names.is_empty() || names.len() > MAX_EVENTS {
        return Err(ApiError::bad_request(format!(
            "events must list 1-{MAX_EVENTS} event types"
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let name = name.trim();
        if name == ALL_EVENTS {
            return Ok(vec![ALL_EVENTS.to_owned()]);
        }
        let Some(t) = EventType::parse(name) else {
            let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            return Err(ApiError::bad_request(format!(
                "Unknown event type '{name}'. Use '*' or one of: {}",
                known.join(", ")
            )));
        };
        if !out.iter().any(|n| n == t.as_str()) {
            out.push(t.as_str().to_owned());
        }
    }
    Ok(out)
}

/// Whether a subscription to `events` receives an event of type `t`.
pub fn wants(events: &[String], t: EventType) -> bool {
    events.iter().any(|e| e == ALL_EVENTS || e == t.as_str())
}

/// 1-200 characters, when given.
pub fn check_name(name: Option<&str>) -> ApiResult<Option<String>> {
    match name.map(str::trim) {
        None => Ok(None),
        Some(n) if (1..=200).contains(&n.chars().count()) => Ok(Some(n.to_owned())),
        Some(_) => Err(ApiError::bad_request("name must be 1-200 characters")),
    }
}

/// The page size of delivery listings: 1-200, default 100.
pub fn page_size(limit: Option<i64>) -> ApiResult<i64> {
    within("limit", limit.unwrap_or(100), 1..=200)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn events_are_checked_and_made_canonical() {
        assert_eq!(
            canonical_events(&names(&[
                "alert.domain_matched",
                "search.alert",
                "list.item_added"
            ]))
            .unwrap(),
            names(&["search.alert", "list.item_added"])
        );
        assert_eq!(
            canonical_events(&names(&["list.item_added", "*"])).unwrap(),
            names(&["*"])
        );
        assert!(canonical_events(&[]).is_err());
        assert!(canonical_events(&names(&["list.deleted"])).is_err());
        assert!(canonical_events(&vec!["search.alert".to_string(); 21]).is_err());
        assert!(canonical_events(&vec!["search.alert".to_string(); 20]).is_ok());
        assert!(wants(&names(&["*"]), EventType::SequenceBounced));
        assert!(wants(
            &names(&["sequence.bounced"]),
            EventType::SequenceBounced
        ));
        assert!(!wants(
            &names(&["sequence.opened"]),
            EventType::SequenceBounced
        ));
    }
}
