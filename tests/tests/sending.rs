//! The sending engine through the real binary: a send account on a
//! capturing SMTP server this test starts (IMAP on the private Dovecot of
//! tests/support/mail.sh), a two-step sequence, and then what arrived:
//! rendered tokens, the headers, step 2 threaded under step 1, tracking
//! links that redirect, and a one-click unsubscribe that suppresses. Then
//! the kill test: 2,000 messages while the server is SIGKILLed several
//! times; every message arrives, duplicates only for the sends in flight.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use outreach_core::smtp_capture::{CaptureServer, Captured};
use outreach_e2e::{Deployment, Server, client, get, post_json};
use serde_json::{Value, json};

/// The IMAP peer of tests/support/mail.sh (connecting a mailbox tests both).
const IMAP_PORT: u16 = 11143;
const IMAP_PASSWORD: &str = "mail-pass-1";
const SMTP_PASSWORD: &str = "smtp-pass-1";

/// Undoes quoted-printable (soft line breaks and `=XX`), enough to read
/// links out of a captured body.
fn unquote(body: &str) -> String {
    let joined = body.replace("=\r\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'='
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&joined[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path of the first URL in `text` that contains `marker`.
fn tracked_path(text: &str, marker: &str) -> String {
    let start = text.find(marker).expect("a tracking link");
    let rest = &text[start..];
    let end = rest
        .find(|c: char| c == '"' || c == '<' || c.is_whitespace())
        .unwrap_or(rest.len());
    rest[..end].to_owned()
}

async fn setup(deployment: &Deployment, smtp: &CaptureServer) -> (Server, String, i64) {
    let account = deployment.create_account("seller@example.com", "pro");
    let server = deployment.start();
    let key = account.api_key.clone();
    let http = client();
    let r = post_json(
        &http,
        &server.url("/v1/send-accounts"),
        Some(&key),
        &json!({"email": "sam@seller.test", "display_name": "Sam Seller",
            "smtp_host": "127.0.0.1", "smtp_port": smtp.port, "smtp_encryption": "none",
            "smtp_username": "seller@outreach.test", "smtp_password": SMTP_PASSWORD,
            "imap_host": "127.0.0.1", "imap_port": IMAP_PORT,
            "imap_password": IMAP_PASSWORD, "daily_send_limit": 10000}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.json);
    let r = post_json(
        &http,
        &server.url("/v1/sequences"),
        Some(&key),
        &json!({"name": "Launch", "from_email": "sam@seller.test", "from_name": "Sam from Seller",
            "daily_send_limit": 10000}),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.json);
    let id = r.json["id"].as_i64().unwrap();
    (server, key, id)
}

async fn call(server: &Server, key: &str, path: &str, body: Value) -> Value {
    let r = post_json(&client(), &server.url(path), Some(key), &body).await;
    assert!(r.status < 300, "{path}: {} {:?}", r.status, r.json);
    r.json
}

async fn wait_for(smtp: &CaptureServer, n: usize, within: Duration) -> Vec<Captured> {
    let deadline = Instant::now() + within;
    loop {
        let got = smtp.messages();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_sequence_sends_threads_tracks_and_unsubscribes() {
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    let deployment = Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_PUBLIC_BASE_URL", "https://links.seller.test");
    let (server, key, seq) = setup(&deployment, &smtp).await;
    call(&server, &key, &format!("/v1/sequences/{seq}/steps"), json!({
        "subject": "{{first_name}}, a question about {{company}}",
        "body_html": "<p>Hi {{first_name}},</p><p>Our <a href=\"https://seller.test/pricing?ref=mail\">pricing</a> fits {{company}}.</p>"}))
    .await;
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/steps"),
        json!({"body_html": "<p>Any thoughts, {{first_name}}?</p>"}),
    )
    .await;
    let r = call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/enroll"),
        json!({"contacts": [
        {"domain": "acme.test", "contact_email": "ann@acme.test",
         "metadata": {"first_name": "Ann", "company": "Acme"}}]}),
    )
    .await;
    assert_eq!(r["enrolled"], 1);
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/activate"),
        json!({}),
    )
    .await;

    let got = wait_for(&smtp, 2, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 2, "both steps arrive: {}", server.log());
    let (first, second) = (&got[0], &got[1]);
    assert_eq!(first.to, vec!["ann@acme.test"]);
    assert_eq!(first.from, "sam@seller.test");
    assert_eq!(
        first.header("Subject").as_deref(),
        Some("Ann, a question about Acme")
    );
    assert_eq!(
        first.header("From").as_deref(),
        Some("\"Sam from Seller\" <sam@seller.test>")
    );
    let root = first.header("Message-ID").unwrap();
    assert!(root.ends_with("@seller.test>"), "{root}");
    assert_eq!(
        first.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    let body = unquote(&first.data);
    assert!(body.contains("Hi Ann,"), "tokens rendered in the HTML part");
    assert!(body.contains("Content-Type: text/plain"));
    assert!(!body.contains("{{"), "no token left");
    // Step 2 replies in the thread.
    assert_eq!(
        second.header("Subject").as_deref(),
        Some("Re: Ann, a question about Acme")
    );
    assert_eq!(second.header("In-Reply-To"), Some(root.clone()));
    assert_eq!(second.header("References"), Some(root.clone()));
    assert_ne!(second.header("Message-ID"), Some(root));

    // The click link redirects to the original URL, and only there.
    let click = tracked_path(&body, "https://links.seller.test/t/c/");
    let path = click.trim_start_matches("https://links.seller.test");
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = no_redirects.get(server.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(
        r.headers()["location"].to_str().unwrap(),
        "https://seller.test/pricing?ref=mail"
    );
    let mut tampered = path.to_owned();
    tampered.pop();
    tampered.push(if path.ends_with('A') { 'B' } else { 'A' });
    let r = no_redirects
        .get(server.url(&tampered))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    // One-click unsubscribe (RFC 8058) from the header's URL.
    let header = first.header("List-Unsubscribe").unwrap();
    let url = header.trim_matches(['<', '>']);
    let path = url.trim_start_matches("https://links.seller.test");
    let r = client()
        .post(server.url(path))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = get(
        &client(),
        &server.url("/v1/sequences/suppression"),
        Some(&key),
    )
    .await;
    let entries = r.json["entries"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["email"] == "ann@acme.test" && e["reason"] == "unsubscribe"),
        "{entries:?}"
    );
    // The capture server keeps a message before it answers 250, so the
    // record of the last send may trail it by a moment.
    let mut r = get(
        &client(),
        &server.url(&format!("/v1/sequences/{seq}/analytics")),
        Some(&key),
    )
    .await;
    for _ in 0..50 {
        if r.json["rollup"]["delivered"] == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        r = get(
            &client(),
            &server.url(&format!("/v1/sequences/{seq}/analytics")),
            Some(&key),
        )
        .await;
    }
    assert_eq!(r.status, 200, "{:?}", r.json);
    assert_eq!(r.json["rollup"]["sent"], 2);
    assert_eq!(r.json["rollup"]["delivered"], 2);
    assert_eq!(r.json["rollup"]["clicked"], 1);
    assert_eq!(r.json["rollup"]["unsubscribed"], 1);
}

#[tokio::test]
async fn killing_the_server_mid_send_loses_nothing_and_duplicates_only_in_flight_sends() {
    const CONTACTS: usize = 2_000;
    const KILLS: usize = 4;
    let smtp = CaptureServer::start(SMTP_PASSWORD).await;
    // A slow receiver stretches the send over a few seconds to kill into.
    smtp.set_delay(Duration::from_millis(4));
    // Short leases: a killed server's claimed sends are taken over soon.
    let deployment = Deployment::new()
        .with_env("OUTREACH_UNSAFE_OUTBOUND_ALLOW_LOOPBACK", "true")
        .with_env("OUTREACH_SENDER_LEASE_SECS", "3");
    let (mut server, key, seq) = setup(&deployment, &smtp).await;
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/steps"),
        json!({"subject": "Hello", "body_html": "<p>Hello {{domain}}</p>"}),
    )
    .await;
    for chunk in 0..CONTACTS / 1000 {
        let contacts: Vec<Value> = (0..1000)
            .map(|i| {
                json!({"domain": "acme.test",
                "contact_email": format!("c{}@acme.test", chunk * 1000 + i)})
            })
            .collect();
        let r = call(
            &server,
            &key,
            &format!("/v1/sequences/{seq}/enroll"),
            json!({"contacts": contacts}),
        )
        .await;
        assert_eq!(r["enrolled"], 1000);
    }
    call(
        &server,
        &key,
        &format!("/v1/sequences/{seq}/activate"),
        json!({}),
    )
    .await;

    // SIGKILL at pseudo-random moments (a fixed seed keeps runs comparable).
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..KILLS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(150 + seed % 400)).await;
        drop(server); // Server's Drop sends SIGKILL
        server = deployment.start();
    }
    // The last server takes over the killed servers' leases once they run
    // out; the test moves on when everything arrived.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut got = smtp.messages();
    while Instant::now() < deadline {
        let distinct: std::collections::HashSet<&String> = got.iter().flat_map(|m| &m.to).collect();
        if distinct.len() >= CONTACTS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        got = smtp.messages();
    }
    // Late duplicates would arrive within a lease; give them the chance.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let got = smtp.messages();
    let mut per_message: HashMap<String, usize> = HashMap::new();
    for m in &got {
        *per_message
            .entry(m.header("Message-ID").unwrap())
            .or_default() += 1;
    }
    let unique = per_message.len();
    let duplicates: usize = per_message.values().map(|n| n - 1).sum();
    let recipients: std::collections::HashSet<&String> = got.iter().flat_map(|m| &m.to).collect();
    eprintln!(
        "kill test: {} received, {unique} distinct, {duplicates} duplicates",
        got.len()
    );
    assert_eq!(recipients.len(), CONTACTS, "every contact got its message");
    assert_eq!(unique, CONTACTS);
    // At most the message in flight on each of the 4 connections per kill.
    assert!(
        duplicates <= KILLS * 4,
        "{duplicates} duplicates; the servers' warnings:\n{}",
        deployment.warnings("journal")
    );
    let r = get(
        &client(),
        &server.url(&format!("/v1/sequences/{seq}/analytics")),
        Some(&key),
    )
    .await;
    assert_eq!(r.json["rollup"]["sent"], CONTACTS as i64, "{:?}", r.json);
}
