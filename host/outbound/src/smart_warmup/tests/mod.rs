//! Smart warmup against real peers: the capturing SMTP server takes what
//! members send, a small "mail transfer agent" here files each message in
//! the recipient's mailbox on the private Dovecot (INBOX, or the spam folder
//! where the test's filter says so, as a Sieve rule would), and the
//! recipient side reads those mailboxes over IMAP.

mod exchange;
mod membership;

use std::collections::HashMap;
use std::time::Duration;

use futures::TryStreamExt;
use serde_json::{Value, json};

use crate::send_accounts::store;
use outreach_core::accounts::Plan;
use outreach_core::config::Config;
use outreach_core::smtp_capture::{CaptureServer, Captured};
use outreach_core::testing::dns::TestDns;
use outreach_core::testing::{TestAccount, TestApp, mail_peers};

pub const SMTP_PASSWORD: &str = "pool-pass";
/// The password Dovecot's static passdb accepts for any user.
pub const IMAP_PASSWORD: &str = "inbox-pass-1";

/// A test app with the outbound and vendor areas, a DNS server of its own
/// and every day's volume due at once.
pub async fn app(dns: &TestDns, adjust: impl FnOnce(&mut Config)) -> TestApp {
    let nameserver = dns.nameserver();
    TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], move |c| {
        c.dns_nameservers = vec![nameserver];
        c.smart_warmup.spread_over_day = false;
        adjust(c);
    })
    .await
}

/// A unique address at `domain` (each test its own Dovecot mailboxes).
pub fn address(name: &str, domain: &str) -> String {
    format!(
        "{name}-{}@{domain}",
        &uuid::Uuid::new_v4().simple().to_string()[..10]
    )
}

/// A send account of `owner` sending through `smtp` and reading Dovecot,
/// written straight to the store with sealed credentials; returns its id.
pub async fn mailbox(
    app: &TestApp,
    owner: &TestAccount,
    email: &str,
    smtp: &CaptureServer,
    imap_password: &str,
    daily_send_limit: i64,
) -> i64 {
    let mut row = crate::testkit::send_account_row(app, owner.account_id, email);
    row.display_name = None;
    row.daily_send_limit = daily_send_limit;
    row.smtp_port = smtp.port as i64;
    row.imap_port = mail_peers::IMAP_PORT as i64;
    let creds = json!({"smtp_username": email, "smtp_password": SMTP_PASSWORD,
        "imap_username": email, "imap_password": imap_password})
    .to_string();
    let secrets = app.state.secrets.clone();
    store::insert(&app.state.db, &row, move |id| {
        secrets.encrypt(&format!("send_account:{id}"), &creds)
    })
    .await
    .unwrap()
    .unwrap()
}

/// Joins the pool through the API.
pub async fn join(app: &TestApp, owner: &TestAccount, id: i64) {
    let r = app
        .post(
            &format!("/v1/send-accounts/{id}/smart-warmup/start"),
            &owner.api_key,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

pub async fn status(app: &TestApp, owner: &TestAccount, id: i64) -> Value {
    let r = app
        .get(
            &format!("/v1/send-accounts/{id}/smart-warmup/status"),
            &owner.api_key,
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body
}

/// An IMAP session of `user` on the private Dovecot.
pub async fn imap(user: &str) -> async_imap::Session<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", mail_peers::IMAP_PORT))
        .await
        .unwrap();
    let mut client = async_imap::Client::new(tcp);
    client.read_response().await.unwrap();
    client
        .login(user, IMAP_PASSWORD)
        .await
        .map_err(|(e, _)| e)
        .unwrap()
}

/// Creates `folder` in `user`'s mailbox.
pub async fn create_folder(user: &str, folder: &str) {
    let mut s = imap(user).await;
    s.create(folder).await.unwrap();
    s.logout().await.unwrap();
}

/// Files `raw` in `user`'s `folder`.
pub async fn file(user: &str, folder: &str, raw: &[u8]) {
    let mut s = imap(user).await;
    s.append(folder, None, None, raw).await.unwrap();
    s.logout().await.unwrap();
}

/// The raw messages of `user`'s `folder` with their flags.
pub async fn folder(user: &str, folder: &str) -> Vec<(String, Vec<String>)> {
    let mut s = imap(user).await;
    if s.select(folder).await.unwrap().exists == 0 {
        s.logout().await.unwrap();
        return Vec::new();
    }
    let fetched: Vec<_> = s
        .fetch("1:*", "(FLAGS BODY.PEEK[])")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap_or_default();
    let out = fetched
        .iter()
        .map(|f| {
            (
                String::from_utf8_lossy(f.body().unwrap_or_default()).into_owned(),
                f.flags().map(|fl| format!("{fl:?}")).collect(),
            )
        })
        .collect();
    s.logout().await.unwrap();
    out
}

/// Where the test's mail transfer agent files a message.
pub enum Filing {
    Inbox,
    /// Into this folder (the recipient's spam folder).
    Folder(&'static str),
    /// Into INBOX with the marker header removed, as some servers do.
    StrippedInbox,
}

/// Delivers what the capture server took since `*delivered` to the
/// recipients' mailboxes as `route` says; returns the messages delivered.
pub async fn deliver(
    smtp: &CaptureServer,
    delivered: &mut usize,
    route: impl Fn(&Captured) -> Filing,
) -> Vec<Captured> {
    let all = smtp.messages();
    let new: Vec<Captured> = all[*delivered..].to_vec();
    *delivered = all.len();
    for m in &new {
        let to = &m.to[0];
        match route(m) {
            Filing::Inbox => file(to, "INBOX", m.data.as_bytes()).await,
            Filing::Folder(f) => file(to, f, m.data.as_bytes()).await,
            Filing::StrippedInbox => {
                let stripped: String = m
                    .data
                    .split("\r\n")
                    .filter(|l| !l.starts_with("X-Outreach-Warmup:"))
                    .collect::<Vec<_>>()
                    .join("\r\n");
                file(to, "INBOX", stripped.as_bytes()).await
            }
        }
    }
    new
}

/// The token of a captured message (from its body's `ref:` line).
pub fn token_of(m: &Captured) -> String {
    super::writing::tokens_in(m.data.as_bytes())
        .into_iter()
        .next()
        .expect("a pool message carries a token")
}

pub async fn scalar(app: &TestApp, sql: &str, id: i64) -> i64 {
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_owned()))
        .bind(id)
        .fetch_one(&app.state.db.pool)
        .await
        .unwrap()
}

/// Runs the recipient side and the exchange once each.
pub async fn round(app: &TestApp) -> (usize, usize) {
    super::run_once(&app.state).await.unwrap()
}

pub fn hours(n: u64) -> Duration {
    Duration::from_secs(n * 3600)
}

/// Messages per sender address.
pub fn per_sender(messages: &[Captured]) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for m in messages {
        *n.entry(m.from.clone()).or_default() += 1;
    }
    n
}

pub async fn two_tenants(app: &TestApp) -> (TestAccount, TestAccount) {
    (
        app.account(Plan::Pro).await,
        app.account(Plan::Starter).await,
    )
}
