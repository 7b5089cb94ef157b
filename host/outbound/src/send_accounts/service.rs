//! Rules of spec/3 "Send accounts": connecting tests SMTP and IMAP through
//! the outbound policy, stores the account with its credentials sealed, and
//! lists accounts with filters and paging.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::store::{self, SendAccountRow};
use crate::mail::{self, Encryption, MailError, MailServer};
use crate::sequences::service::gate;
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::http::auth::Caller;
use outreach_core::http::extract::{one_of, within};
use outreach_core::platform::clock::iso;
use outreach_core::state::AppState;

/// How long each connection test may take.
const TEST_TIMEOUT: Duration = Duration::from_secs(15);
pub const STATUSES: [&str; 4] = ["active", "paused", "error", "warming"];

/// A send account as spec/3 lists it; credentials never appear.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SendAccount {
    /// A string here, as spec/3 has it.
    pub id: String,
    pub email: String,
    pub display_name: Option<String>,
    /// `smtp` for accounts connected with SMTP and IMAP settings.
    pub provider: String,
    /// active, paused, error, warming.
    pub status: String,
    pub warmup_enabled: bool,
    pub warmup_progress_pct: f64,
    pub daily_send_limit: i64,
    pub emails_sent_today: i64,
    pub connected_at: String,
    pub last_activity_at: Option<String>,
    pub smtp_verified: bool,
    pub imap_verified: bool,
    pub smtp_host: String,
    pub smtp_port: i64,
    /// tls (STARTTLS), ssl (implicit TLS) or none.
    pub smtp_encryption: String,
    pub imap_host: String,
    pub imap_port: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectedSendAccount {
    #[serde(flatten)]
    pub account: SendAccount,
    pub message: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SendAccountList {
    pub accounts: Vec<SendAccount>,
    pub total: i64,
    pub page: i64,
    pub per_page: i64,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectSendAccount {
    pub email: String,
    pub display_name: Option<String>,
    pub smtp_host: String,
    pub smtp_port: i64,
    pub smtp_username: String,
    pub smtp_password: String,
    /// tls (default: STARTTLS), ssl (implicit TLS), none.
    pub smtp_encryption: Option<String>,
    pub imap_host: String,
    pub imap_port: i64,
    /// Defaults to smtp_username.
    pub imap_username: Option<String>,
    /// Defaults to smtp_password.
    pub imap_password: Option<String>,
    /// Default false.
    pub enable_warmup: Option<bool>,
    /// 1-10000, default 50.
    pub daily_send_limit: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// active, paused, error, warming.
    pub status: Option<String>,
    /// smtp or a hosted-provider id.
    pub provider: Option<String>,
    /// Default 1.
    pub page: Option<i64>,
    /// 1-100, default 25.
    pub per_page: Option<i64>,
}

/// The sealed part of a send account.
#[derive(Serialize, Deserialize)]
struct Credentials {
    smtp_username: String,
    smtp_password: String,
    imap_username: String,
    imap_password: String,
}

/// Everything a worker needs to reach the mailbox, credentials opened.
#[derive(Debug, Clone)]
pub struct Connection {
    pub smtp: MailServer,
    pub encryption: Encryption,
    pub imap: MailServer,
}

impl Connection {
    /// Plain IMAP logins are allowed only where the owner chose plain SMTP.
    pub fn allow_plaintext_imap(&self) -> bool {
        self.encryption == Encryption::None
    }
}

fn aad(id: i64) -> String {
    format!("send_account:{id}")
}

pub fn view(r: &SendAccountRow, today: i64) -> SendAccount {
    SendAccount {
        id: r.id.to_string(),
        email: r.email.clone(),
        display_name: r.display_name.clone(),
        provider: r.provider.clone(),
        status: r.status.clone(),
        warmup_enabled: r.warmup_enabled,
        warmup_progress_pct: r.warmup_progress_pct,
        daily_send_limit: r.daily_send_limit,
        emails_sent_today: sent_today(r.emails_sent_today, r.sent_day, today),
        connected_at: iso(r.connected_at),
        last_activity_at: r.last_activity_at.map(iso),
        smtp_verified: r.smtp_verified,
        imap_verified: r.imap_verified,
        smtp_host: r.smtp_host.clone(),
        smtp_port: r.smtp_port,
        smtp_encryption: r.smtp_encryption.clone(),
        imap_host: r.imap_host.clone(),
        imap_port: r.imap_port,
    }
}

/// A mailbox's count for `today`: the stored count is of day `sent_day`,
/// and a count of an earlier day is zero today.
pub fn sent_today(count: i64, sent_day: i64, today: i64) -> i64 {
    if sent_day == today { count } else { 0 }
}

/// The UTC day number `emails_sent_today` counts against.
pub fn today(state: &AppState) -> i64 {
    state.clock.now_ms().div_euclid(86_400_000)
}

fn required(field: &str, value: &str, max: usize) -> ApiResult<String> {
    let v = value.trim();
    if v.is_empty() || v.chars().count() > max {
        return Err(ApiError::bad_request(format!(
            "{field} is required (at most {max} characters)"
        )));
    }
    Ok(v.to_owned())
}

fn port(field: &str, value: i64) -> ApiResult<u16> {
    Ok(within(field, value, 1..=65_535)? as u16)
}

/// 400 for a refusal by the outbound policy, 422 with the server's reason
/// for a failed test (spec/3 "Errors").
fn test_failed(protocol: &str, e: MailError) -> ApiError {
    match e {
        MailError::Blocked(reason) => ApiError::bad_request(format!("{protocol} host: {reason}")),
        MailError::Failed(reason) => {
            ApiError::Unprocessable(format!("{protocol} connection test failed: {reason}"))
        }
    }
}

pub async fn connect(
    state: &AppState,
    caller: &Caller,
    body: ConnectSendAccount,
) -> ApiResult<ConnectedSendAccount> {
    gate(caller)?;
    let email = crate::suppression::address::parse_address(&body.email)
        .ok_or_else(|| ApiError::bad_request("email must be a valid address"))?
        .email;
    let display_name = match body.display_name.as_deref().map(str::trim) {
        Some(n) if n.chars().count() > 200 => {
            return Err(ApiError::bad_request(
                "display_name must be at most 200 characters",
            ));
        }
        Some("") | None => None,
        Some(n) => Some(n.to_owned()),
    };
    let encryption_name = body.smtp_encryption.as_deref().unwrap_or("tls");
    let encryption = Encryption::parse(encryption_name)
        .ok_or_else(|| ApiError::bad_request("smtp_encryption must be one of: tls, ssl, none"))?;
    let smtp = MailServer {
        host: required("smtp_host", &body.smtp_host, 253)?,
        port: port("smtp_port", body.smtp_port)?,
        username: required("smtp_username", &body.smtp_username, 320)?,
        password: required("smtp_password", &body.smtp_password, 1024)?,
    };
    let imap = MailServer {
        host: required("imap_host", &body.imap_host, 253)?,
        port: port("imap_port", body.imap_port)?,
        username: match &body.imap_username {
            Some(u) => required("imap_username", u, 320)?,
            None => smtp.username.clone(),
        },
        password: match &body.imap_password {
            Some(p) => required("imap_password", p, 1024)?,
            None => smtp.password.clone(),
        },
    };
    let daily_send_limit = within(
        "daily_send_limit",
        body.daily_send_limit.unwrap_or(50),
        1..=10_000,
    )?;
    if store::find_by_email(&state.db, caller.account_id, &email)
        .await?
        .is_some()
    {
        return Err(already_connected());
    }
    mail::check_smtp(&state.outbound, &smtp, encryption, TEST_TIMEOUT)
        .await
        .map_err(|e| test_failed("SMTP", e))?;
    mail::check_imap(
        &state.outbound,
        &imap,
        encryption == Encryption::None,
        TEST_TIMEOUT,
    )
    .await
    .map_err(|e| test_failed("IMAP", e))?;
    let warmup = body.enable_warmup.unwrap_or(false);
    let now = state.clock.now_ms();
    let row = SendAccountRow {
        id: 0,
        account_id: caller.account_id,
        email,
        display_name,
        provider: "smtp".into(),
        status: if warmup { "warming" } else { "active" }.into(),
        warmup_enabled: warmup,
        warmup_progress_pct: 0.0,
        daily_send_limit,
        emails_sent_today: 0,
        sent_day: 0,
        smtp_host: smtp.host.clone(),
        smtp_port: smtp.port.into(),
        smtp_encryption: encryption.as_str().into(),
        imap_host: imap.host.clone(),
        imap_port: imap.port.into(),
        credentials: String::new(),
        smtp_verified: true,
        imap_verified: true,
        connected_at: now,
        last_activity_at: None,
        created_at: now,
        updated_at: now,
    };
    let sealed = serde_json::to_string(&Credentials {
        smtp_username: smtp.username,
        smtp_password: smtp.password,
        imap_username: imap.username,
        imap_password: imap.password,
    })
    .map_err(anyhow::Error::from)?;
    let secrets = state.secrets.clone();
    // Warmup enabled: the account joins the smart warmup pool with it.
    let join = match warmup {
        true => Some(crate::smart_warmup::service::new_member(state, &row, 0).await),
        false => None,
    };
    let id = store::insert_joining(
        &state.db,
        &row,
        move |id| secrets.encrypt(&aad(id), &sealed),
        join,
    )
    .await?
    .ok_or_else(already_connected)?;
    let stored = get(state, caller.account_id, id).await?;
    Ok(ConnectedSendAccount {
        account: view(&stored, today(state)),
        message: "Send account connected: SMTP and IMAP verified".into(),
    })
}

fn already_connected() -> ApiError {
    ApiError::Conflict("This address is already connected as a send account".into())
}

async fn get(state: &AppState, account_id: i64, id: i64) -> ApiResult<SendAccountRow> {
    store::get(&state.db, account_id, id)
        .await?
        .ok_or_else(|| ApiError::not_found("Send account"))
}

pub async fn list(state: &AppState, caller: &Caller, q: ListQuery) -> ApiResult<SendAccountList> {
    gate(caller)?;
    if let Some(s) = &q.status {
        one_of("status", s, &STATUSES)?;
    }
    let page = within("page", q.page.unwrap_or(1), 1..=100_000)?;
    let per_page = within("per_page", q.per_page.unwrap_or(25), 1..=100)?;
    let (rows, total) = store::list(
        &state.db,
        caller.account_id,
        q.status.as_deref(),
        q.provider.as_deref(),
        per_page,
        (page - 1) * per_page,
    )
    .await?;
    let today = today(state);
    Ok(SendAccountList {
        accounts: rows.iter().map(|r| view(r, today)).collect(),
        total,
        page,
        per_page,
    })
}

pub async fn detail(state: &AppState, caller: &Caller, id: i64) -> ApiResult<SendAccount> {
    gate(caller)?;
    Ok(view(
        &get(state, caller.account_id, id).await?,
        today(state),
    ))
}

/// Disconnects the mailbox: its sealed credentials go, mailbox pools drop
/// it and sequences that used it alone are left without a sender.
pub async fn delete(state: &AppState, caller: &Caller, id: i64) -> ApiResult<()> {
    gate(caller)?;
    if store::delete(&state.db, caller.account_id, id).await? {
        Ok(())
    } else {
        Err(ApiError::not_found("Send account"))
    }
}

/// The mailbox's servers with the credentials opened, for the sender and
/// the inbox poller.
pub async fn connection(state: &AppState, account_id: i64, id: i64) -> ApiResult<Connection> {
    let row = get(state, account_id, id).await?;
    let opened = state
        .secrets
        .decrypt(&aad(id), &row.credentials)
        .map_err(ApiError::Internal)?;
    let c: Credentials = serde_json::from_str(&opened).map_err(anyhow::Error::from)?;
    Ok(Connection {
        smtp: MailServer {
            host: row.smtp_host,
            port: row.smtp_port as u16,
            username: c.smtp_username,
            password: c.smtp_password,
        },
        encryption: Encryption::parse(&row.smtp_encryption).unwrap_or(Encryption::Tls),
        imap: MailServer {
            host: row.imap_host,
            port: row.imap_port as u16,
            username: c.imap_username,
            password: c.imap_password,
        },
    })
}
