//! health, blacklist, dns-guide and deliverability against a local DNS
//! server.

use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::{Value, json};

use super::{app_with_dns, publish_acme, sending_sequence};
use crate::sequence_warmup::auth_records::DKIM_SELECTORS;
use crate::testkit::{exec, sequence};
use outreach_core::accounts::plans::Plan;

fn listed(report: &Value) -> Vec<String> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["listed"] == true)
        .map(|r| r["list"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn health_reads_spf_dkim_and_dmarc_from_dns() {
    let (app, dns) = app_with_dns().await;
    publish_acme(&dns);
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", true, false).await;
    let r = app
        .get(&format!("/v1/sequence-warmup/{id}/health"), key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let h = r.body;
    assert_eq!(
        (h["domain"].clone(), h["from_email"].clone()),
        (json!("acme.io"), json!("seller@acme.io"))
    );
    assert_eq!(h["spf"]["type"], "SPF");
    assert_eq!(
        (h["spf"]["present"].clone(), h["spf"]["passed"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(h["spf"]["record"], "v=spf1 include:_spf.google.com ~all");
    assert_eq!(
        (h["dkim"]["passed"].clone(), h["dkim"]["selector"].clone()),
        (json!(true), json!("google"))
    );
    assert_eq!(h["dkim_selectors_found"], json!(["google"]));
    assert_eq!(
        h["dkim_selectors_checked"].as_array().unwrap().len(),
        DKIM_SELECTORS.len()
    );
    assert_eq!(
        (h["dmarc"]["passed"].clone(), h["dmarc"]["policy"].clone()),
        (json!(true), json!("quarantine"))
    );
    assert_eq!(h["all_passed"], true);
    assert!(
        h["recommendation"]
            .as_str()
            .unwrap()
            .contains("nothing to change")
    );
    assert_eq!(dns.queries("selector1._domainkey.acme.io"), 1);

    // A subdomain with weak records: two SPF records, a revoked DKIM key,
    // and p=none inherited from the parent's DMARC record.
    dns.txt("_dmarc.weak.io", "v=DMARC1; p=none");
    dns.txt("selector1._domainkey.mail.weak.io", "v=DKIM1; p=");
    let id = sending_sequence(
        &app,
        key,
        acct.account_id,
        "seller@mail.weak.io",
        true,
        false,
    )
    .await;
    dns.txt(
        "mail.weak.io",
        "v=spf1 include:a.example include:b.example ~all",
    );
    dns.txt("mail.weak.io", "v=spf1 -all");
    let h = app
        .get(&format!("/v1/sequence-warmup/{id}/health"), key)
        .await
        .body;
    assert_eq!(
        (h["spf"]["present"].clone(), h["spf"]["passed"].clone()),
        (json!(true), json!(false))
    );
    assert!(
        h["spf"]["details"]
            .as_str()
            .unwrap()
            .contains("2 SPF records"),
        "{}",
        h["spf"]["details"]
    );
    assert_eq!(
        (h["dkim"]["present"].clone(), h["dkim"]["passed"].clone()),
        (json!(true), json!(false))
    );
    assert!(h["dkim"]["details"].as_str().unwrap().contains("revoked"));
    assert_eq!(
        (h["dmarc"]["passed"].clone(), h["dmarc"]["policy"].clone()),
        (json!(true), json!("none"))
    );
    assert!(
        h["dmarc"]["details"]
            .as_str()
            .unwrap()
            .contains("inherited from weak.io")
    );
    assert_eq!(h["all_passed"], false);
    let rec = h["recommendation"].as_str().unwrap();
    assert!(
        rec.contains("SPF") && rec.contains("DKIM") && rec.contains("p=quarantine"),
        "{rec}"
    );

    // No records, and a lookup that fails: nothing passes, nothing breaks.
    let id = sending_sequence(&app, key, acct.account_id, "seller@bare.io", true, false).await;
    dns.fail("bare.io");
    let h = app
        .get(&format!("/v1/sequence-warmup/{id}/health"), key)
        .await
        .body;
    assert_eq!(
        (
            h["spf"]["present"].clone(),
            h["dkim"]["present"].clone(),
            h["dmarc"]["present"].clone()
        ),
        (json!(false), json!(false), json!(false))
    );
    assert!(
        h["spf"]["details"].as_str().unwrap().contains("failed"),
        "{}",
        h["spf"]["details"]
    );
    assert!(
        h["dkim"]["details"]
            .as_str()
            .unwrap()
            .contains("not visible")
    );
    assert!(
        h["recommendation"]
            .as_str()
            .unwrap()
            .contains("Publish an SPF record")
    );
}

#[tokio::test]
async fn blacklist_reads_listings_and_caches_them_a_day_per_domain() {
    let (app, dns) = app_with_dns().await;
    publish_acme(&dns);
    // bl.spamcop.net fails outright; Spamhaus answers its "public resolver" code for clean.io.
    dns.fail("10.2.0.192.bl.spamcop.net");
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", true, false).await;
    let path = format!("/v1/sequence-warmup/{id}/blacklist");
    let r = app.get(&path, key).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let b = r.body;
    assert_eq!(
        (b["domain"].clone(), b["ip"].clone(), b["cached"].clone()),
        (json!("acme.io"), json!("192.0.2.10"), json!(false))
    );
    assert_eq!(listed(&b), vec!["zen.spamhaus.org", "dbl.spamhaus.org"]);
    assert_eq!(
        (b["listed_count"].clone(), b["total_checked"].clone()),
        (json!(2), json!(11))
    );
    assert_eq!(b["checked_at"], "2026-11-21T12:00:00Z");
    let spamcop = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["list"] == "bl.spamcop.net")
        .unwrap();
    assert_eq!(
        spamcop["listed"], false,
        "a failed lookup reads as not listed"
    );
    assert_eq!(dns.queries("10.2.0.192.zen.spamhaus.org"), 1);

    // Within 24 hours the domain's result is reused, even by another sequence.
    dns.remove("10.2.0.192.zen.spamhaus.org");
    app.clock.advance(Duration::from_secs(23 * 3600));
    let other = sending_sequence(&app, key, acct.account_id, "second@acme.io", false, false).await;
    let b = app
        .get(&format!("/v1/sequence-warmup/{other}/blacklist"), key)
        .await
        .body;
    assert_eq!(
        (b["cached"].clone(), b["listed_count"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(b["checked_at"], "2026-11-21T12:00:00Z");
    assert_eq!(dns.queries("10.2.0.192.zen.spamhaus.org"), 1);
    // After it, the lists are asked again.
    app.clock.advance(Duration::from_secs(2 * 3600));
    let b = app.get(&path, key).await.body;
    assert_eq!(
        (b["cached"].clone(), b["listed_count"].clone()),
        (json!(false), json!(1))
    );
    assert_eq!(dns.queries("10.2.0.192.zen.spamhaus.org"), 2);

    // Refusal codes are not listings; no MX falls back to the A record.
    dns.a("clean.io", Ipv4Addr::new(192, 0, 2, 20));
    dns.a(
        "20.2.0.192.zen.spamhaus.org",
        Ipv4Addr::new(127, 255, 255, 254),
    );
    dns.a("20.2.0.192.bl.spamcop.net", Ipv4Addr::new(192, 0, 2, 99));
    dns.a("clean.io.multi.surbl.org", Ipv4Addr::new(127, 0, 0, 1));
    let id = sending_sequence(&app, key, acct.account_id, "seller@clean.io", false, false).await;
    let b = app
        .get(&format!("/v1/sequence-warmup/{id}/blacklist"), key)
        .await
        .body;
    assert_eq!(
        (
            b["ip"].clone(),
            b["listed_count"].clone(),
            b["total_checked"].clone()
        ),
        (json!("192.0.2.20"), json!(0), json!(11))
    );

    // A domain without any address: only the domain lists are asked.
    let id = sending_sequence(&app, key, acct.account_id, "seller@noip.io", false, false).await;
    let b = app
        .get(&format!("/v1/sequence-warmup/{id}/blacklist"), key)
        .await
        .body;
    assert_eq!(
        (b["ip"].clone(), b["total_checked"].clone()),
        (Value::Null, json!(3))
    );
    let lists: Vec<&str> = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["list"].as_str().unwrap())
        .collect();
    assert_eq!(
        lists,
        vec!["dbl.spamhaus.org", "multi.surbl.org", "multi.uribl.com"]
    );
}

#[tokio::test]
async fn dns_guide_tailors_records_to_the_domain_and_smtp_host() {
    let (app, dns) = app_with_dns().await;
    publish_acme(&dns);
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", true, false).await;
    let g = app
        .get(&format!("/v1/sequence-warmup/{id}/dns-guide"), key)
        .await;
    assert_eq!(g.status, 200, "{:?}", g.body);
    let g = g.body;
    assert_eq!(g["smtp_host"], "127.0.0.1");
    assert_eq!(g["spf"]["host"], "acme.io");
    assert_eq!(
        g["spf"]["value"],
        "v=spf1 include:_spf.google.com ip4:127.0.0.1 ~all"
    );
    assert_eq!(g["spf"]["up_to_date"], false);
    assert_eq!(
        (g["dkim"]["host"].clone(), g["dkim"]["up_to_date"].clone()),
        (json!("google._domainkey.acme.io"), json!(true))
    );
    assert_eq!(
        (g["dmarc"]["host"].clone(), g["dmarc"]["up_to_date"].clone()),
        (json!("_dmarc.acme.io"), json!(true))
    );

    // A Google Workspace mailbox is already covered by the include; no DKIM
    // or DMARC yet gives the provider's steps and a p=none start.
    dns.txt("fresh.io", "v=spf1 include:_spf.google.com +all");
    let id = sending_sequence(&app, key, acct.account_id, "seller@fresh.io", true, false).await;
    exec(
        &app,
        "UPDATE send_accounts SET smtp_host = 'smtp.gmail.com' WHERE account_id = $1",
        &[acct.account_id],
    )
    .await;
    let g = app
        .get(&format!("/v1/sequence-warmup/{id}/dns-guide"), key)
        .await
        .body;
    assert_eq!(g["spf"]["value"], "v=spf1 include:_spf.google.com ~all");
    assert_eq!(g["spf"]["current"], "v=spf1 include:_spf.google.com +all");
    assert!(
        g["dkim"]["notes"]
            .as_str()
            .unwrap()
            .contains("Google Admin console")
    );
    assert_eq!(g["dkim"]["host"], "<selector>._domainkey.fresh.io");
    assert_eq!(
        g["dmarc"]["value"],
        "v=DMARC1; p=none; rua=mailto:dmarc-reports@fresh.io; adkim=r; aspf=r"
    );
    assert_eq!(g["dmarc"]["current"], Value::Null);
}

#[tokio::test]
async fn deliverability_merges_the_checks_and_dns_endpoints_need_a_from_email() {
    let (app, dns) = app_with_dns().await;
    publish_acme(&dns);
    let acct = app.account(Plan::Starter).await;
    let key = &acct.api_key;
    let id = sending_sequence(&app, key, acct.account_id, "seller@acme.io", true, true).await;
    let r = app
        .get(&format!("/v1/sequence-warmup/{id}/deliverability"), key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let d = r.body;
    // 45 of 45 DNS points, 5 of 25 blacklist points, no sending data: 50 / 70.
    assert_eq!(d["overall_score"], 71);
    assert_eq!(
        (d["sequence_id"].clone(), d["domain"].clone()),
        (json!(id), json!("acme.io"))
    );
    assert_eq!(d["health"]["all_passed"], true);
    assert_eq!(d["blacklist"]["listed_count"], 2);
    assert_eq!(d["dashboard"]["warmup_phase"], "ramping");
    let recs: Vec<&str> = d["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        recs[0].starts_with("192.0.2.10 is listed on zen.spamhaus.org"),
        "{recs:?}"
    );
    assert!(
        recs[1].starts_with("acme.io is listed on dbl.spamhaus.org"),
        "{recs:?}"
    );

    // With sends in the window, reputation joins the score.
    let today = crate::sequence_events::day_of(app.state.clock.now_ms());
    exec(
        &app,
        "INSERT INTO sequence_days (sequence_id, day, account_id, sent, bounced) VALUES ($1, $2, $3, 100, 4)",
        &[id, today, acct.account_id],
    )
    .await;
    let d = app
        .get(&format!("/v1/sequence-warmup/{id}/deliverability"), key)
        .await
        .body;
    // 50 + 80 x 0.3 = 74 of 100.
    assert_eq!(d["overall_score"], 74);
    assert!(
        d["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().contains("bounce rate is 4.0%"))
    );

    // Without a from_email the four DNS endpoints answer 400; others' ids 404.
    let bare = sequence(&app, key, json!({"name": "No sender"})).await;
    for what in ["health", "blacklist", "dns-guide", "deliverability"] {
        let r = app
            .get(&format!("/v1/sequence-warmup/{bare}/{what}"), key)
            .await;
        assert_eq!(r.status, 400, "{what}");
        assert!(r.detail().contains("from_email"), "{what}: {}", r.detail());
        let other = app.account(Plan::Pro).await;
        assert_eq!(
            app.get(&format!("/v1/sequence-warmup/{id}/{what}"), &other.api_key)
                .await
                .status,
            404
        );
    }
}
