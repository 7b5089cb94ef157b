//! Rules for accounts and members: creation with an owner and a first key,
//! plan changes, suspension, billing periods.

use chrono::{Datelike, Months, NaiveDate, TimeZone, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::plans::Plan;
use super::store;
use crate::api_keys::NewKey;
use crate::auth::password;
use crate::error::{ApiError, ApiResult};
use crate::platform::clock::{iso, ms_to_datetime};
use crate::state::AppState;
use crate::store::is_unique_violation;

/// What `outreach accounts create --json` prints; scripts rely on its shape.
#[derive(Debug, Serialize)]
pub struct CreatedAccount {
    pub account_id: i64,
    pub user_id: i64,
    pub api_key: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccountView {
    pub id: i64,
    pub name: String,
    pub plan: Plan,
    pub status: String,
    /// Day of the month (1-28) on which the monthly quota resets.
    pub billing_day: i64,
    pub created_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MemberView {
    pub id: i64,
    pub email: String,
    /// owner, admin or member
    pub role: String,
    pub two_factor_enabled: bool,
    pub created_at: String,
}

/// Lower-cases and checks an address: one `@`, a dotted domain, no spaces,
/// at most 254 characters.
pub fn normalize_email(email: &str) -> ApiResult<String> {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && match email.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && local.len() <= 64
                    && !domain.contains('@')
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !domain.contains("..")
            }
            None => false,
        };
    if valid {
        Ok(email)
    } else {
        Err(ApiError::bad_request("invalid email address"))
    }
}

/// The billing day an account created at `created_ms` keeps: its day of the
/// month, capped at 28 so every month has it.
pub fn billing_day_of(created_ms: i64) -> u32 {
    ms_to_datetime(created_ms).day().min(28)
}

/// Start of the current billing period and the next reset, in ms.
pub fn billing_period(billing_day: u32, now_ms: i64) -> (i64, i64) {
    let now = ms_to_datetime(now_ms).date_naive();
    let this_month = NaiveDate::from_ymd_opt(now.year(), now.month(), billing_day.clamp(1, 28))
        .expect("day 1-28 exists in every month");
    let start = if now >= this_month {
        this_month
    } else {
        this_month - Months::new(1)
    };
    let end = start + Months::new(1);
    let ms = |d: NaiveDate| {
        Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap())
            .timestamp_millis()
    };
    (ms(start), ms(end))
}

/// Creates an account with its owner and a first API key.
pub async fn create_account(
    state: &AppState,
    email: &str,
    plan: Plan,
    password: Option<&str>,
) -> ApiResult<CreatedAccount> {
    let email = normalize_email(email)?;
    let password_hash = match password {
        Some(p) => Some(password::hash(p)?),
        None => None,
    };
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let account_id =
        store::insert_account(&mut tx, &email, plan.as_str(), billing_day_of(now), now).await?;
    let user_id = match store::insert_user(
        &mut tx,
        account_id,
        &email,
        password_hash.as_deref(),
        "owner",
        now,
    )
    .await
    {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => {
            return Err(ApiError::Conflict(
                "an account with this email exists".into(),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    tx.commit().await?;
    let (_, api_key) = state
        .keys
        .create(account_id, Some(user_id), None, NewKey::named("Default"))
        .await?;
    Ok(CreatedAccount {
        account_id,
        user_id,
        api_key,
    })
}

/// Adds a member to an existing account (used by inbox assignment and teams).
pub async fn add_member(
    state: &AppState,
    account_id: i64,
    email: &str,
    role: &str,
    password: Option<&str>,
) -> ApiResult<MemberView> {
    if !["admin", "member"].contains(&role) {
        return Err(ApiError::bad_request("role must be admin or member"));
    }
    let email = normalize_email(email)?;
    let hash = match password {
        Some(p) => Some(password::hash(p)?),
        None => None,
    };
    let now = state.clock.now_ms();
    let mut conn = state.db.pool.acquire().await?;
    let id =
        match store::insert_user(&mut conn, account_id, &email, hash.as_deref(), role, now).await {
            Ok(id) => id,
            Err(e) if is_unique_violation(&e) => {
                return Err(ApiError::Conflict("a user with this email exists".into()));
            }
            Err(e) => return Err(e.into()),
        };
    Ok(MemberView {
        id,
        email,
        role: role.to_string(),
        two_factor_enabled: false,
        created_at: iso(now),
    })
}

/// The account as authentication loaded it, without a database read: the
/// hottest authenticated route must not cost a query.
pub fn account_view_of(key: &crate::api_keys::VerifiedKey) -> AccountView {
    AccountView {
        id: key.account_id,
        name: key.account_name.clone(),
        plan: key.plan,
        status: if key.account_suspended {
            "suspended"
        } else {
            "active"
        }
        .to_string(),
        billing_day: key.billing_day as i64,
        created_at: iso(key.account_created_at),
    }
}

pub async fn account_view(state: &AppState, account_id: i64) -> ApiResult<AccountView> {
    let row = store::get_account(&state.db, account_id)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    Ok(AccountView {
        id: row.id,
        name: row.name,
        plan: Plan::parse(&row.plan).unwrap_or(Plan::Free),
        status: row.status,
        billing_day: row.billing_day,
        created_at: iso(row.created_at),
    })
}

pub async fn members(state: &AppState, account_id: i64) -> ApiResult<Vec<MemberView>> {
    Ok(store::members(&state.db, account_id)
        .await?
        .into_iter()
        .map(|u| MemberView {
            id: u.id,
            email: u.email,
            role: u.role,
            two_factor_enabled: u.totp_enabled,
            created_at: iso(u.created_at),
        })
        .collect())
}

/// True when `user_id` is a member of the account (for assignment checks).
pub async fn is_member(state: &AppState, account_id: i64, user_id: i64) -> ApiResult<bool> {
    Ok(store::user_by_id(&state.db, user_id)
        .await?
        .is_some_and(|u| u.account_id == account_id))
}

pub async fn set_plan(state: &AppState, account_id: i64, plan: Plan) -> ApiResult<()> {
    if !store::set_plan(&state.db, account_id, plan.as_str(), state.clock.now_ms()).await? {
        return Err(ApiError::not_found("account"));
    }
    state.keys.invalidate_all();
    Ok(())
}

/// Suspends (or reactivates) an account: its keys then answer 403.
pub async fn set_suspended(state: &AppState, account_id: i64, suspended: bool) -> ApiResult<()> {
    let status = if suspended { "suspended" } else { "active" };
    if !store::set_status(&state.db, account_id, status, state.clock.now_ms()).await? {
        return Err(ApiError::not_found("account"));
    }
    state.keys.invalidate_all();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(y: i32, m: u32, d: u32) -> i64 {
        Utc.with_ymd_and_hms(y, m, d, 12, 0, 0)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn billing_periods_follow_the_billing_day() {
        let day = |y, m, d| {
            Utc.with_ymd_and_hms(y, m, d, 0, 0, 0)
                .unwrap()
                .timestamp_millis()
        };
        assert_eq!(
            billing_period(15, ms(2026, 3, 20)),
            (day(2026, 3, 15), day(2026, 4, 15))
        );
        assert_eq!(
            billing_period(15, ms(2026, 3, 10)),
            (day(2026, 2, 15), day(2026, 3, 15))
        );
        assert_eq!(
            billing_period(1, ms(2026, 12, 31)),
            (day(2026, 12, 1), day(2027, 1, 1))
        );
        assert_eq!(billing_day_of(ms(2026, 1, 31)), 28);
    }

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            normalize_email(" Ann@Example.COM ").unwrap(),
            "ann@example.com"
        );
        for bad in [
            "",
            "a",
            "a@b",
            "@x.com",
            "a@@x.com",
            "a b@x.com",
            "a@x..com",
            "a@.x.com",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad}");
        }
    }
}
