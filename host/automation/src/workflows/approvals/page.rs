//! The approval page's HTML, on the core's public-link page (strict
//! Content-Security-Policy, no-store, no referrer). Every value from the
//! workflow or the run is escaped.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::store::ApprovalRow;
use crate::workflows::model::WorkflowApprovalDecision;
use outreach_core::http::page::{escape_html, html_page};
use outreach_core::platform::clock::iso;

/// Domains the page lists before "and N more".
const LISTED: usize = 100;

fn summary(row: &ApprovalRow) -> String {
    let domains: String = row
        .items
        .iter()
        .take(LISTED)
        .map(|i| {
            let d = i
                .get("domain")
                .and_then(Value::as_str)
                .unwrap_or("(no domain)");
            format!("<li>{}</li>", escape_html(d))
        })
        .collect();
    let more = if row.items.len() > LISTED {
        format!(
            "<p class=\"muted\">and {} more</p>",
            row.items.len() - LISTED
        )
    } else {
        String::new()
    };
    format!(
        "<p>Workflow <strong id=\"workflow\">{}</strong> waits for a decision.</p>\
         <blockquote id=\"message\">{}</blockquote>\
         <p>{} domain(s) waiting:</p><ul id=\"domains\">{domains}</ul>{more}",
        escape_html(&row.workflow_name),
        escape_html(&row.message),
        row.items.len(),
    )
}

/// The page before a decision: the summary and two buttons; after one, or
/// past expiry, what happened instead of the buttons.
pub fn approval(row: &ApprovalRow, now: i64) -> Response {
    let state = match (&row.decision, row.expires_at <= now) {
        (Some(d), _) => format!(
            "<p id=\"status\" data-status=\"{d}\">Already decided: {d} at {}.</p>",
            row.decided_at.map(iso).unwrap_or_default(),
            d = escape_html(d),
        ),
        (None, true) => format!(
            "<p id=\"status\" data-status=\"expired\">This request expired at {}.</p>",
            iso(row.expires_at)
        ),
        (None, false) => format!(
            "<form method=\"post\">\
             <button type=\"submit\" name=\"decision\" value=\"approved\" id=\"approve\">Approve</button>\
             <button type=\"submit\" name=\"decision\" value=\"rejected\" id=\"reject\">Reject</button>\
             </form><p class=\"muted\">The request expires at {}.</p>",
            iso(row.expires_at)
        ),
    };
    html_page(
        StatusCode::OK,
        "Approval request",
        &format!("{}{state}", summary(row)),
    )
}

/// The page a form post answers.
pub fn decided(row: &ApprovalRow, outcome: &WorkflowApprovalDecision) -> Response {
    let text = match outcome.status.as_str() {
        "approved" => "Approved: the workflow continues with the domains below.".to_owned(),
        "rejected" => "Rejected: the workflow continues on its rejection path.".to_owned(),
        "already_decided" => format!(
            "Already decided: {}.",
            outcome.decision.as_deref().unwrap_or_default()
        ),
        _ => format!("This request expired at {}.", outcome.expires_at),
    };
    let run = outcome
        .run_id
        .map(|id| format!("<p class=\"muted\">Run <span id=\"run\">{id}</span>.</p>"))
        .unwrap_or_default();
    html_page(
        StatusCode::OK,
        "Approval request",
        &format!(
            "<p id=\"status\" data-status=\"{}\">{}</p>{run}{}",
            escape_html(&outcome.status),
            escape_html(&text),
            summary(row)
        ),
    )
}
