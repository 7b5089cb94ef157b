//! Which step and which recipient a preview renders.

use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::enrollment::store as enrollments;
use crate::rendering::{Contact, RenderedEmail, render_email};
use crate::sequences::service::owned;
use crate::sequences::store::SequenceRow;
use crate::steps::store as steps;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::state::AppState;
use outreach_vendors::Actor;

/// A sample recipient.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleContact {
    pub contact_email: String,
    /// Defaults to the address's domain.
    pub domain: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
}

/// One of `step_id` and `step_position`, and one of `contact` and
/// `enrollment_id`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    pub step_id: Option<i64>,
    /// 1 = the first step.
    pub step_position: Option<i64>,
    pub contact: Option<SampleContact>,
    /// Renders for this enrollment of the sequence (its domain and metadata).
    pub enrollment_id: Option<i64>,
    /// `a` (default) or `b` for an A/B step, or a multivariate label.
    pub variant: Option<String>,
}

/// The subject and body of `variant` of the step; variant B falls back to
/// A's subject or body where it leaves one empty. The sender uses this too.
pub fn content(step: &steps::StepRow, variant: Option<&str>) -> ApiResult<(String, String)> {
    let base = (
        step.subject.clone().unwrap_or_default(),
        step.body_html.clone().unwrap_or_default(),
    );
    let filled = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    match variant {
        None | Some("a") => Ok(base),
        Some("b") if step.ab_test_enabled => Ok((
            filled(&step.variant_b_subject).unwrap_or(base.0),
            filled(&step.variant_b_body_html).unwrap_or(base.1),
        )),
        Some(label) => step
            .variants
            .iter()
            .flatten()
            .find(|v| v.label == label)
            .map(|v| (v.subject.clone(), v.body_html.clone()))
            .ok_or_else(|| ApiError::bad_request(format!("The step has no variant {label:?}"))),
    }
}

pub async fn preview(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    body: PreviewRequest,
) -> ApiResult<RenderedEmail> {
    let sequence = owned(state, caller, sequence_id).await?;
    render_for(state, caller, &sequence, body)
        .await
        .map(|(_, rendered)| rendered)
}

/// Renders the step, variant and recipient `body` names, as the sender
/// would; test-send uses it too.
pub async fn render_for(
    state: &AppState,
    caller: &Caller,
    sequence: &SequenceRow,
    body: PreviewRequest,
) -> ApiResult<(steps::StepRow, RenderedEmail)> {
    let mut conn = state.db.pool.acquire().await?;
    let all = steps::list(&mut conn, sequence.id).await?;
    drop(conn);
    let step = match (body.step_id, body.step_position) {
        (Some(id), None) => all.iter().find(|s| s.id == id),
        (None, Some(p)) => all.iter().find(|s| s.position == p),
        _ => {
            return Err(ApiError::bad_request(
                "Name the step with step_id or step_position (one of them)",
            ));
        }
    }
    .ok_or_else(|| ApiError::not_found("Step"))?;
    let contact = match (body.contact, body.enrollment_id) {
        (Some(c), None) => {
            let address =
                crate::suppression::address::parse_address(&c.contact_email).ok_or_else(|| {
                    ApiError::bad_request("contact.contact_email must be a valid address")
                })?;
            Contact {
                domain: c
                    .domain
                    .map(|d| d.trim().to_ascii_lowercase())
                    .filter(|d| !d.is_empty())
                    .unwrap_or(address.domain),
                email: address.email,
                metadata: c.metadata.unwrap_or_default(),
            }
        }
        (None, Some(id)) => {
            let e = enrollments::get(&state.db, caller.account_id, sequence.id, id)
                .await?
                .ok_or_else(|| ApiError::not_found("Enrollment"))?;
            Contact {
                email: e.contact_email,
                domain: e.domain,
                metadata: serde_json::from_str(&e.metadata).unwrap_or_default(),
            }
        }
        _ => {
            return Err(ApiError::bad_request(
                "Give a sample contact or an enrollment_id (one of them)",
            ));
        }
    };
    let (subject, body_html) = content(step, body.variant.as_deref())?;
    let rendered =
        render_email(state, &Actor::from(caller), &subject, &body_html, &contact).await?;
    Ok((step.clone(), rendered))
}
