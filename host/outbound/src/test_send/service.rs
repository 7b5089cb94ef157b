//! Test-send rules: the request, the mailbox, one SMTP transaction.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::mail::MailError;
use crate::preview::service::{PreviewRequest, SampleContact, render_for};
use crate::send_accounts::service::connection;
use crate::sender::compose::{build, subject_line};
use crate::sender::lanes::send_once;
use crate::sender::plan::Job;
use crate::sender::record::SmtpResult;
use crate::sequences::service::owned;
use crate::suppression::address::parse_address;
use crate::tracking::TrackingOptions;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::platform::clock::ms_to_datetime;
use outreach_core::state::AppState;

/// spec/1 Limits: test-send, 5 per minute (per user).
pub const TEST_SENDS_PER_MINUTE: u32 = 5;

/// `to_email` and the step (`step_position` or `step_id`); the recipient
/// data defaults to a sample built from `to_email`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestSendRequest {
    /// Where the test goes.
    pub to_email: String,
    /// 1 = the first step.
    pub step_position: Option<i64>,
    pub step_id: Option<i64>,
    /// Sample recipient data for the tokens (default: `to_email`, its domain, no metadata).
    pub contact: Option<SampleContact>,
    /// Render with this enrollment's data instead.
    pub enrollment_id: Option<i64>,
    /// `a`, `b` or a multivariate label.
    pub variant: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestSendResult {
    pub sent: bool,
    pub to_email: String,
    pub subject: String,
    /// The Message-ID header of the test (without angle brackets).
    pub message_id: String,
    pub send_account_id: i64,
    /// Tokens left literal for this recipient.
    pub missing_tokens: Vec<String>,
}

pub async fn test_send(
    state: &AppState,
    caller: &Caller,
    sequence_id: i64,
    body: TestSendRequest,
) -> ApiResult<TestSendResult> {
    let sequence = owned(state, caller, sequence_id).await?;
    let to = parse_address(&body.to_email)
        .ok_or_else(|| ApiError::bad_request("to_email must be a valid email address"))?;
    let mut conn = state.db.pool.acquire().await?;
    let steps = crate::steps::store::list(&mut conn, sequence.id).await?;
    drop(conn);
    let named = match (body.step_position, body.step_id) {
        (Some(p), None) => steps.iter().find(|s| s.position == p),
        (None, Some(id)) => steps.iter().find(|s| s.id == id),
        _ => {
            return Err(ApiError::bad_request(
                "Name the step with step_position or step_id (one of them)",
            ));
        }
    };
    let Some(named) = named else {
        return Err(ApiError::bad_request(
            "The sequence has no step at that step_position or step_id",
        ));
    };
    if named.step_type != "email" {
        return Err(ApiError::bad_request(format!(
            "Step {} is a {} step; only email steps can be test-sent",
            named.position, named.step_type
        )));
    }
    let send_account_id = match sequence.send_account_id {
        Some(id) => id,
        None => crate::mailbox_pool::store::list(&state.db, sequence.id)
            .await?
            .first()
            .map(|p| p.send_account_id)
            .ok_or_else(|| {
                ApiError::bad_request("The sequence has no send account (from_email) to send from")
            })?,
    };
    state
        .limit_per_minute("test_send", &caller.user_key(), TEST_SENDS_PER_MINUTE)
        .await?;
    let contact = match (&body.contact, body.enrollment_id) {
        (None, None) => Some(SampleContact {
            contact_email: to.email.clone(),
            domain: None,
            metadata: None,
        }),
        _ => body.contact,
    };
    let request = PreviewRequest {
        step_id: body.step_id,
        step_position: body.step_position,
        contact,
        enrollment_id: body.enrollment_id,
        variant: body.variant,
    };
    let (step, rendered) = render_for(state, caller, &sequence, request).await?;
    let server = connection(state, caller.account_id, send_account_id).await?;
    let from_email =
        crate::send_accounts::store::get(&state.db, caller.account_id, send_account_id)
            .await?
            .map(|a| a.email)
            .ok_or_else(|| ApiError::not_found("Send account"))?;
    let domain = from_email.rsplit_once('@').map_or("localhost", |(_, d)| d);
    let message_id = format!("otr.test.{}@{domain}", uuid::Uuid::new_v4().simple());
    let subject = subject_line(&rendered.subject, None);
    // A Job shaped like the sender's, so the message is composed the same
    // way; tracking is off (a test records nothing).
    let job = Job {
        message_row_id: 0,
        message_id: message_id.clone(),
        account_id: caller.account_id,
        sequence_id,
        enrollment_id: 0,
        step_id: step.id,
        variant: None,
        send_account_id,
        reserved_day: None,
        from_email,
        from_name: sequence.from_name.clone(),
        contact: crate::rendering::Contact {
            email: to.email.clone(),
            domain: to.domain.clone(),
            metadata: Default::default(),
        },
        subject_template: String::new(),
        body_template: String::new(),
        thread: None,
        tracking: TrackingOptions {
            opens: false,
            clicks: false,
            unsubscribe: false,
        },
        next_delay_ms: None,
        enrichment: None,
    };
    let date = std::time::SystemTime::from(ms_to_datetime(state.clock.now_ms()));
    let message = build(
        &job,
        &subject,
        &rendered.body_html,
        &rendered.body_text,
        None,
        date,
    )
    .map_err(ApiError::bad_request)?;
    let result = send_once(state, &server, message.envelope(), &message.formatted())
        .await
        .map_err(|e| match e {
            MailError::Blocked(m) => ApiError::bad_request(m),
            MailError::Failed(m) => ApiError::Unprocessable(format!("Test send failed: {m}")),
        })?;
    match result {
        SmtpResult::Delivered => Ok(TestSendResult {
            sent: true,
            to_email: to.email,
            subject,
            message_id,
            send_account_id,
            missing_tokens: rendered.missing_tokens,
        }),
        SmtpResult::Bounced(m) | SmtpResult::Deferred(m) | SmtpResult::AccountFailed(m) => {
            Err(ApiError::Unprocessable(format!("Test send failed: {m}")))
        }
    }
}
