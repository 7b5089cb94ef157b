//! Sequence warmup through the router, on either backend: the ramp's state
//! rules with the manual clock (`ramp.rs`) and the DNS checks against a
//! local DNS server (`dns.rs`).

use std::net::Ipv4Addr;

use serde_json::json;

use crate::testkit::{insert_send_account, sequence, step};
use outreach_core::testing::TestApp;
use outreach_core::testing::dns::TestDns;

mod dns;
mod ramp;

pub const DAY_MS: i64 = 86_400_000;

/// A test app whose resolver is a fresh local DNS server.
pub async fn app_with_dns() -> (TestApp, TestDns) {
    let dns = TestDns::start().await;
    let ns = dns.nameserver();
    let app = TestApp::with_areas(&[crate::AREA], |c| c.dns_nameservers = vec![ns]).await;
    (app, dns)
}

/// A sequence sending from `email` (a send account written straight to the
/// store) with one email step; warmup on when `warmup`, active when `active`.
pub async fn sending_sequence(
    app: &TestApp,
    key: &str,
    account_id: i64,
    email: &str,
    warmup: bool,
    active: bool,
) -> i64 {
    insert_send_account(app, account_id, email).await;
    let id = sequence(
        app,
        key,
        json!({"name": "Warm", "from_email": email, "warmup_enabled": warmup}),
    )
    .await;
    step(
        app,
        key,
        id,
        json!({"subject": "Hello", "body_html": "<p>Hi {{first_name}}</p>"}),
    )
    .await;
    if active {
        let r = app
            .post(&format!("/v1/sequences/{id}/activate"), key, json!({}))
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
    id
}

/// The records of `acme.io` most tests use: SPF, DMARC quarantine, a DKIM
/// key under `google`, MX at mx.acme.io (192.0.2.10), listed on Spamhaus
/// ZEN (address) and DBL (domain); Barracuda answers its refusal code.
pub fn publish_acme(dns: &TestDns) {
    dns.txt("acme.io", "google-site-verification=abc");
    dns.txt("acme.io", "v=spf1 include:_spf.google.com ~all");
    dns.txt(
        "_dmarc.acme.io",
        "v=DMARC1; p=quarantine; rua=mailto:dmarc@acme.io",
    );
    dns.txt(
        "google._domainkey.acme.io",
        "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAx",
    );
    dns.mx("acme.io", 10, "mx.acme.io");
    dns.a("mx.acme.io", Ipv4Addr::new(192, 0, 2, 10));
    dns.a("acme.io", Ipv4Addr::new(198, 51, 100, 7));
    dns.a("10.2.0.192.zen.spamhaus.org", Ipv4Addr::new(127, 0, 0, 4));
    dns.a("acme.io.dbl.spamhaus.org", Ipv4Addr::new(127, 0, 1, 2));
    dns.a(
        "10.2.0.192.b.barracudacentral.org",
        Ipv4Addr::new(127, 0, 0, 1),
    );
}
