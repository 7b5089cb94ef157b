//! Tests of the spoofing check against the local DNS server: trusted and
//! untrusted `Authentication-Results`, our own DKIM, SPF and DMARC check
//! with a key made here, the mismatch rule, `Received` formats and hostile
//! input.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use base64::Engine;
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter;
use mail_auth::dkim::DkimSigner;
use outreach_core::testing::dns::TestDns;

use super::*;

const TRUSTED: &str = "mx.inbox.example";

/// The header section and body a sender signs (CRLF line ends).
fn message(from: &str, body: &str) -> String {
    format!(
        "From: Alice <{from}>\r\n\
         To: Bob <bob@inbox.example>\r\n\
         Subject: Re: our call\r\n\
         Date: Tue, 3 Nov 2026 10:00:00 +0000\r\n\
         Message-ID: <reply-1@sender.example>\r\n\
         \r\n\
         {body}\r\n"
    )
}

/// A Postfix-style `Received` header our mailbox's server adds.
fn received(helo: &str, rdns: &str, ip: &str) -> String {
    format!(
        "Received: from {helo} ({rdns} [{ip}])\r\n\
         \tby mx.inbox.example (Postfix) with ESMTPS id 4Xk2Lq0Q1Zz9sT\r\n\
         \tfor <bob@inbox.example>; Tue, 3 Nov 2026 10:00:01 +0000 (UTC)\r\n"
    )
}

struct Signer {
    pkcs8: Vec<u8>,
}

impl Signer {
    /// A fresh Ed25519 key, published at `sel._domainkey.<domain>`.
    fn publish(dns: &TestDns, domain: &str) -> Signer {
        let pkcs8 = Ed25519Key::generate_pkcs8().unwrap();
        let key = Ed25519Key::from_pkcs8_der(&pkcs8).unwrap();
        let public = base64::engine::general_purpose::STANDARD.encode(key.public_key());
        dns.txt(
            &format!("sel._domainkey.{domain}"),
            &format!("v=DKIM1; k=ed25519; p={public}"),
        );
        Signer { pkcs8 }
    }

    /// `DKIM-Signature` header plus the message.
    fn sign(&self, domain: &str, message: &str) -> String {
        let key = Ed25519Key::from_pkcs8_der(&self.pkcs8).unwrap();
        let signature = DkimSigner::from_key(key)
            .domain(domain)
            .selector("sel")
            .headers(["From", "To", "Subject", "Date", "Message-ID"])
            .sign(message.as_bytes())
            .unwrap();
        format!("{}{message}", signature.to_header())
    }
}

async fn checker(dns: &TestDns, trusted: &[&str]) -> SpoofCheck {
    SpoofCheck::new(
        &[dns.addr()],
        trusted.iter().map(|id| id.to_string()).collect(),
    )
    .unwrap()
}

fn assert_send<T: Send>(_: &T) {}

// ---------------------------------------------------------------------------
// Trusted Authentication-Results

fn spoofed_bank_reply(auth_results: &[&str]) -> String {
    let mut raw = String::from("Return-Path: <ceo@bank.example>\r\n");
    for header in auth_results {
        raw.push_str(&format!("Authentication-Results: {header}\r\n"));
    }
    raw.push_str(&received(
        "mail.evil.example",
        "host9.evil.example",
        "203.0.113.9",
    ));
    raw.push_str(&message("ceo@bank.example", "Please wire the money."));
    raw
}

#[tokio::test]
async fn trusted_dmarc_fail_from_another_server_is_suspected() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;
    let raw = spoofed_bank_reply(&[
        "mx.inbox.example; spf=softfail smtp.mailfrom=bank.example; dkim=none; \
         dmarc=fail (p=reject dis=quarantine) header.from=bank.example",
    ]);
    let found = check.check(raw.as_bytes()).await;
    assert!(found.suspected, "{found:?}");
    assert_eq!(found.source, "authentication-results");
    assert_eq!(
        (
            found.spf.as_str(),
            found.dkim.as_str(),
            found.dmarc.as_str()
        ),
        ("softfail", "none", "fail")
    );
    assert_eq!(found.from_domain.as_deref(), Some("bank.example"));
    assert_eq!(found.connecting_host.as_deref(), Some("host9.evil.example"));
    assert_eq!(found.helo.as_deref(), Some("mail.evil.example"));
    assert_eq!(
        found.connecting_ip,
        Some(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 9)))
    );
    let reason = found.reason.unwrap();
    assert!(reason.contains("DMARC fail"), "{reason}");
    assert!(reason.contains("does not match"), "{reason}");
    // The trusted verdicts were taken as they are: no DNS lookup at all.
    assert_eq!(dns.total_queries(), 0);
}

#[tokio::test]
async fn the_same_header_from_an_untrusted_server_is_ignored() {
    let dns = TestDns::start().await;
    // bank.example's SPF does allow the connecting address.
    dns.txt("bank.example", "v=spf1 ip4:203.0.113.9 -all");
    let raw = spoofed_bank_reply(&[
        "mx.inbox.example; spf=softfail smtp.mailfrom=bank.example; dkim=none; \
         dmarc=fail header.from=bank.example",
    ]);

    let check = checker(&dns, &["mx.elsewhere.example"]).await;
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.source, "own-check");
    assert_eq!(found.spf, "pass");
    assert_eq!(found.dmarc, "none");
    assert!(!found.suspected, "{found:?}");
    assert_eq!(found.reason, None);

    // No trusted ids at all: the same.
    let found = checker(&dns, &[]).await.check(raw.as_bytes()).await;
    assert_eq!((found.source, found.suspected), ("own-check", false));
}

#[tokio::test]
async fn a_forged_pass_from_an_untrusted_server_does_not_clear_a_spoof() {
    let dns = TestDns::start().await;
    dns.txt("bank.example", "v=spf1 ip4:198.51.100.0/24 -all");
    dns.txt("_dmarc.bank.example", "v=DMARC1; p=reject");
    let raw = spoofed_bank_reply(&["relay.evil.example; spf=pass; dkim=pass; dmarc=pass"]);
    let found = checker(&dns, &[TRUSTED]).await.check(raw.as_bytes()).await;
    assert_eq!(found.source, "own-check");
    assert_eq!(
        (
            found.spf.as_str(),
            found.dkim.as_str(),
            found.dmarc.as_str()
        ),
        ("fail", "none", "fail")
    );
    assert!(found.suspected, "{found:?}");
}

#[tokio::test]
async fn the_topmost_trusted_header_wins() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &["MX.Inbox.Example."]).await;
    let fail = "mx.inbox.example; dmarc=fail header.from=bank.example";
    let pass = "mx.inbox.example; spf=pass; dkim=pass header.d=bank.example; dmarc=pass";

    // The sender forged a pass below the receiving server's own header.
    let found = check
        .check(spoofed_bank_reply(&[fail, pass]).as_bytes())
        .await;
    assert!(found.suspected, "{found:?}");
    assert_eq!(found.dmarc, "fail");

    let found = check
        .check(spoofed_bank_reply(&[pass, fail]).as_bytes())
        .await;
    assert!(!found.suspected, "{found:?}");
    assert_eq!(found.source, "authentication-results");
    assert_eq!(found.dmarc, "pass");
}

#[tokio::test]
async fn trusted_header_without_dmarc_needs_spf_or_aligned_dkim() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;
    let cases = [
        // DKIM passed, but for an unrelated domain: not aligned.
        (
            "mx.inbox.example; spf=fail; dkim=pass header.d=evil.example",
            true,
        ),
        // Aligned DKIM (a subdomain of the From domain's organisation).
        (
            "mx.inbox.example; spf=fail; dkim=pass header.d=mail.bank.example",
            false,
        ),
        // header.i instead of header.d.
        (
            "mx.inbox.example; spf=none; dkim=pass header.i=@bank.example",
            false,
        ),
        ("mx.inbox.example; spf=pass; dkim=none", false),
        // Spaces around '=' and comments are allowed.
        (
            "mx.inbox.example (a comment; with a semicolon) 1; spf = softfail (why) \
             smtp.mailfrom = bank.example; dkim=fail (bad signature) header.d=bank.example",
            true,
        ),
        // A DNS error where a pass could have been: undecided.
        ("mx.inbox.example; spf=temperror; dkim=none", false),
        ("mx.inbox.example; dmarc=temperror", false),
    ];
    for (header, suspected) in cases {
        let found = check.check(spoofed_bank_reply(&[header]).as_bytes()).await;
        assert_eq!(found.suspected, suspected, "{header}: {found:?}");
        assert_eq!(found.source, "authentication-results", "{header}");
    }
}

#[tokio::test]
async fn a_trusted_header_reporting_nothing_falls_back_to_the_own_check() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;
    let found = check
        .check(spoofed_bank_reply(&["mx.inbox.example; none"]).as_bytes())
        .await;
    assert_eq!(found.source, "own-check");
    // bank.example publishes nothing: no SPF pass, no DKIM, another server.
    assert!(found.suspected, "{found:?}");
}

// ---------------------------------------------------------------------------
// Own check

#[tokio::test]
async fn own_check_signed_and_spf_listed_passes() {
    let dns = TestDns::start().await;
    let signer = Signer::publish(&dns, "sender.example");
    dns.txt("sender.example", "v=spf1 ip4:203.0.113.5 -all");
    dns.txt("_dmarc.sender.example", "v=DMARC1; p=reject");
    let signed = signer.sign(
        "sender.example",
        &message("alice@sender.example", "Sounds good, Tuesday works."),
    );
    // Relayed by a provider whose name is not the From domain's.
    let raw = format!(
        "Return-Path: <alice@sender.example>\r\n{}{signed}",
        received("out.relay.example", "out-5.relay.example", "203.0.113.5")
    );

    let check = checker(&dns, &[TRUSTED]).await;
    assert_send(&check.check(raw.as_bytes()));
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.source, "own-check");
    assert_eq!(
        (
            found.spf.as_str(),
            found.dkim.as_str(),
            found.dmarc.as_str()
        ),
        ("pass", "pass", "pass")
    );
    assert!(!found.suspected, "{found:?}");
    assert_eq!(found.reason, None);
    assert_eq!(found.from_domain.as_deref(), Some("sender.example"));
    assert_eq!(
        found.connecting_host.as_deref(),
        Some("out-5.relay.example")
    );
    assert!(dns.queries("sel._domainkey.sender.example") >= 1);

    // DKIM alone carries it when SPF does not list the relay.
    dns.remove("sender.example");
    dns.txt("sender.example", "v=spf1 -all");
    let found = check.check(raw.as_bytes()).await;
    assert_eq!((found.spf.as_str(), found.dkim.as_str()), ("fail", "pass"));
    assert_eq!(found.dmarc, "pass");
    assert!(!found.suspected, "{found:?}");

    // And without a DMARC record, an aligned DKIM pass still passes.
    dns.remove("_dmarc.sender.example");
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.dmarc, "none");
    assert!(!found.suspected, "{found:?}");
}

fn tampered(signer: &Signer, received_header: &str) -> String {
    let signed = signer.sign(
        "sender.example",
        &message("alice@sender.example", "Sounds good, Tuesday works."),
    );
    let signed = signed.replace("Tuesday works", "send the invoice to my new bank");
    format!("Return-Path: <alice@sender.example>\r\n{received_header}{signed}")
}

#[tokio::test]
async fn own_check_tampered_and_unlisted_from_another_server_is_suspected() {
    let dns = TestDns::start().await;
    let signer = Signer::publish(&dns, "sender.example");
    dns.txt("sender.example", "v=spf1 ip4:203.0.113.5 -all");
    dns.txt("_dmarc.sender.example", "v=DMARC1; p=reject");
    let raw = tampered(
        &signer,
        &received("mail.relay.example", "mail.relay.example", "203.0.113.66"),
    );
    let found = checker(&dns, &[TRUSTED]).await.check(raw.as_bytes()).await;
    assert_eq!(found.source, "own-check");
    assert_eq!(found.spf, "fail");
    assert_ne!(found.dkim, "pass");
    assert_eq!(found.dmarc, "fail");
    assert!(found.suspected, "{found:?}");
    assert_eq!(
        found.connecting_ip,
        Some(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 66)))
    );
    let reason = found.reason.unwrap();
    assert!(reason.contains("sender.example"), "{reason}");
    assert!(reason.contains("mail.relay.example"), "{reason}");

    // Without any DMARC record the rule is the same: no SPF pass, no
    // aligned DKIM pass.
    dns.remove("_dmarc.sender.example");
    let found = checker(&dns, &[]).await.check(raw.as_bytes()).await;
    assert_eq!(found.dmarc, "none");
    assert!(found.suspected, "{found:?}");
}

#[tokio::test]
async fn a_failing_reply_from_its_own_domains_server_is_not_suspected() {
    let dns = TestDns::start().await;
    let signer = Signer::publish(&dns, "sender.example");
    dns.txt("sender.example", "v=spf1 ip4:203.0.113.5 -all");
    dns.txt("_dmarc.sender.example", "v=DMARC1; p=reject");
    let check = checker(&dns, &[TRUSTED]).await;

    // The HELO is in the From domain.
    let raw = tampered(
        &signer,
        &received("mx2.sender.example", "unknown", "203.0.113.66"),
    );
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.dmarc, "fail");
    assert!(!found.suspected, "{found:?}");
    assert!(found.reason.as_deref().unwrap().contains("matches"));
    assert_eq!(found.connecting_host.as_deref(), Some("mx2.sender.example"));

    // The rDNS name is in the From domain.
    let raw = tampered(
        &signer,
        &received("[203.0.113.66]", "out.sender.example", "203.0.113.66"),
    );
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.dmarc, "fail");
    assert!(!found.suspected, "{found:?}");
}

#[tokio::test]
async fn own_check_reads_ipv6_connections() {
    let dns = TestDns::start().await;
    dns.txt("sender.example", "v=spf1 ip6:2001:db8:25::/48 -all");
    let raw = |ip: &str| {
        format!(
            "Return-Path: <alice@sender.example>\r\n\
             Received: from mail6.relay.example (mail6.relay.example [IPv6:{ip}])\r\n\
             \tby mx.inbox.example with ESMTPS; Tue, 3 Nov 2026 10:00:01 +0000\r\n{}",
            message("alice@sender.example", "Yes.")
        )
    };
    let check = checker(&dns, &[]).await;
    let found = check.check(raw("2001:db8:25::7").as_bytes()).await;
    assert_eq!(found.spf, "pass");
    assert!(!found.suspected, "{found:?}");
    assert_eq!(found.connecting_ip, Some("2001:db8:25::7".parse().unwrap()));

    let found = check.check(raw("2001:db8:99::7").as_bytes()).await;
    assert_eq!(found.spf, "fail");
    assert!(found.suspected, "{found:?}");
}

#[tokio::test]
async fn null_sender_is_checked_on_the_helo_and_missing_return_path_on_from() {
    let dns = TestDns::start().await;
    dns.txt("sender.example", "v=spf1 ip4:203.0.113.5 -all");
    let check = checker(&dns, &[]).await;
    let body = format!(
        "{}{}",
        received("out.relay.example", "out.relay.example", "203.0.113.5"),
        message("alice@sender.example", "Hi")
    );
    // Null sender: the HELO identity out.relay.example has no record.
    let found = check
        .check(format!("Return-Path: <>\r\n{body}").as_bytes())
        .await;
    assert_eq!(found.spf, "none");
    assert!(found.suspected, "{found:?}");
    // No Return-Path: the From address is the MAIL FROM.
    let found = check.check(body.as_bytes()).await;
    assert_eq!(found.spf, "pass");
    assert!(!found.suspected, "{found:?}");
}

#[tokio::test]
async fn without_a_received_header_nothing_is_judged() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;
    let raw = format!(
        "Return-Path: <ceo@bank.example>\r\n{}",
        message("ceo@bank.example", "Wire it.")
    );
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.source, "none");
    assert!(!found.suspected);
    assert_eq!(found.from_domain.as_deref(), Some("bank.example"));
    assert!(found.reason.is_some());
    assert_eq!(dns.total_queries(), 0);

    // Only internal hops (LMTP hand-over, a private address): the same.
    let raw = format!(
        "Received: from mx.inbox.example by imap.inbox.example with LMTP id x; Tue, 3 Nov 2026 10:00:02 +0000\r\n\
         Received: from gw (gw.corp [10.1.2.3]) by mx.inbox.example; Tue, 3 Nov 2026 10:00:01 +0000\r\n{}",
        message("ceo@bank.example", "Wire it.")
    );
    let found = check.check(raw.as_bytes()).await;
    assert_eq!(found.source, "none");
    assert!(!found.suspected);
}

#[tokio::test]
async fn the_result_serialises_for_the_reply_row() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;
    let raw = spoofed_bank_reply(&["mx.inbox.example; dmarc=fail"]);
    let value = serde_json::to_value(check.check(raw.as_bytes()).await).unwrap();
    assert_eq!(value["suspected"], true);
    assert_eq!(value["source"], "authentication-results");
    assert_eq!(value["dmarc"], "fail");
    assert_eq!(value["from_domain"], "bank.example");
    assert_eq!(value["connecting_ip"], "203.0.113.9");
    assert!(value["reason"].is_string());
}

// ---------------------------------------------------------------------------
// Hostile input

#[tokio::test]
async fn hostile_input_is_not_suspected_and_returns_quickly() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[TRUSTED]).await;

    // Deterministic binary garbage.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let garbage: Vec<u8> = (0..256 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();

    let mut many_received = String::new();
    for i in 0..10_000 {
        many_received.push_str(&format!(
            "Received: from ((( [[{i} by ;; (unclosed [IPv6:zz::{i}] helo=\r\n"
        ));
    }
    many_received.push_str(&message("ceo@bank.example", "x"));

    let mut deep = String::from("Received: from ");
    deep.push_str(&"(".repeat(100_000));
    deep.push_str("\r\nAuthentication-Results: mx.inbox.example; ");
    deep.push_str(&"dmarc=\"".repeat(10_000));
    deep.push_str("\r\n\r\nbody");

    let long_line = format!(
        "Received: from a{} (b [203.0.113.1]) by mx.inbox.example\r\nFrom: <{}@{}>\r\n\r\n",
        "a".repeat(2_000_000),
        "x".repeat(100_000),
        "y.".repeat(100_000)
    );

    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("crlf only", b"\r\n\r\n".to_vec()),
        ("garbage", garbage),
        ("10,000 Received headers", many_received.into_bytes()),
        ("nested comments", deep.into_bytes()),
        ("long lines", long_line.into_bytes()),
        (
            "headers only, no From",
            received("mail.evil.example", "mail.evil.example", "203.0.113.9").into_bytes(),
        ),
        (
            "invalid UTF-8",
            b"Received: from \xff\xfe (\xc3 [203.0.113.9]) by mx.inbox.example\r\nFrom: \xff@\xfe\r\n\r\n"
                .to_vec(),
        ),
    ];
    for (name, raw) in inputs {
        let started = Instant::now();
        let found = check.check(&raw).await;
        assert!(!found.suspected, "{name}: {found:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn dkim_signatures_beyond_the_cap_are_not_looked_up() {
    let dns = TestDns::start().await;
    let check = checker(&dns, &[]).await;
    // Signatures whose body hash matches, so each one would need its key.
    let body_hash = base64::engine::general_purpose::STANDARD
        .encode(<sha2::Sha256 as sha2::Digest>::digest(b"x\r\n"));
    let mut raw = received("mail.evil.example", "mail.evil.example", "203.0.113.9");
    for i in 0..1_000 {
        raw.push_str(&format!(
            "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=flood.example; s=sel{i};\r\n\
             \th=from; bh={body_hash}; b=AAAA\r\n"
        ));
    }
    raw.push_str(&message("ceo@bank.example", "x"));
    let started = Instant::now();
    let found = check.check(raw.as_bytes()).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let key_lookups = (0..1_000)
        .filter(|i| dns.queries(&format!("sel{i}._domainkey.flood.example")) > 0)
        .count();
    assert!(key_lookups >= 1, "no key was looked up");
    assert!(
        key_lookups <= MAX_DKIM_SIGNATURES,
        "{key_lookups} keys looked up"
    );
    // Failed (no SPF record, no DKIM pass) and from another server.
    assert!(found.suspected, "{found:?}");
}

// ---------------------------------------------------------------------------
// Parsers

fn hop(value: &str) -> Hop {
    parse_received(value.as_bytes()).unwrap()
}

#[test]
fn received_formats() {
    // Postfix.
    let h = hop(
        " from mail-ej1-f54.google.com (mail-ej1-f54.google.com [209.85.218.54])\r\n\tby mx.inbox.example (Postfix) with ESMTPS id 1; Tue, 3 Nov 2026",
    );
    assert_eq!(h.ip, Some("209.85.218.54".parse().unwrap()));
    assert_eq!(h.helo.as_deref(), Some("mail-ej1-f54.google.com"));
    assert_eq!(h.rdns.as_deref(), Some("mail-ej1-f54.google.com"));
    assert_eq!(h.by.as_deref(), Some("mx.inbox.example"));

    // Postfix, unknown rDNS, TLS and authentication comments.
    let h = hop(
        "from helo.example (unknown [203.0.113.5]) (using TLSv1.3 with cipher TLS_AES_256_GCM_SHA384 (256/256 bits)) (Authenticated sender: alice@sender.example) by mx.inbox.example (Postfix)",
    );
    assert_eq!(h.ip, Some("203.0.113.5".parse().unwrap()));
    assert_eq!(h.helo.as_deref(), Some("helo.example"));
    assert_eq!(h.rdns, None);

    // Gmail: trailing dot on the rDNS name.
    let h = hop(
        "from mail.sender.example (mail.sender.example. [198.51.100.7])\r\n        by mx.google.com with ESMTPS id x; Tue",
    );
    assert_eq!(h.rdns.as_deref(), Some("mail.sender.example"));
    assert_eq!(h.by.as_deref(), Some("mx.google.com"));

    // Exim: the leading name is the rDNS name, the HELO is in the comment.
    let h = hop(
        "from host-7.isp.example ([198.51.100.7] helo=mail.sender.example)\r\n\tby mx.inbox.example with esmtps (Exim 4.96)",
    );
    assert_eq!(h.ip, Some("198.51.100.7".parse().unwrap()));
    assert_eq!(h.helo.as_deref(), Some("mail.sender.example"));
    assert_eq!(h.rdns.as_deref(), Some("host-7.isp.example"));

    // qmail.
    let h = hop(
        "from unknown (HELO mail.sender.example) (198.51.100.8)\r\n  by mx.inbox.example with SMTP",
    );
    assert_eq!(h.ip, Some("198.51.100.8".parse().unwrap()));
    assert_eq!(h.helo.as_deref(), Some("mail.sender.example"));
    assert_eq!(h.rdns, None);

    // Sendmail, nested comment.
    let h = hop(
        "from helo.sender.example (rdns.isp.example [198.51.100.9] (may be forged)) by mx.inbox.example (8.17.1/8.17.1) with ESMTP id 1",
    );
    assert_eq!(h.rdns.as_deref(), Some("rdns.isp.example"));
    assert_eq!(h.ip, Some("198.51.100.9".parse().unwrap()));

    // IPv6, bracketed with the IPv6: tag, and bare (Microsoft).
    let h = hop(
        "from mail6.sender.example (mail6.sender.example [IPv6:2001:db8::25]) by mx.inbox.example",
    );
    assert_eq!(h.ip, Some("2001:db8::25".parse().unwrap()));
    let h = hop(
        "from AM0PR07MB1234.eurprd07.prod.outlook.com (2603:10a6:208:12::34) by AM0PR07MB5678.eurprd07.prod.outlook.com (2603:10a6:208:12::56) with Microsoft SMTP Server",
    );
    assert_eq!(h.ip, Some("2603:10a6:208:12::34".parse().unwrap()));
    assert_eq!(
        h.helo.as_deref(),
        Some("am0pr07mb1234.eurprd07.prod.outlook.com")
    );
    // An IPv4-mapped address and a port.
    let h = hop("from x.example ([::ffff:198.51.100.10]:2525) by mx.inbox.example");
    assert_eq!(h.ip, Some("198.51.100.10".parse().unwrap()));
    // An address literal as the HELO.
    let h = hop("from [198.51.100.11] (unknown [198.51.100.11]) by mx.inbox.example");
    assert_eq!(h.ip, Some("198.51.100.11".parse().unwrap()));
    assert_eq!((h.helo, h.rdns), (None, None));

    // No from clause.
    assert_eq!(
        parse_received(b"by 2002:a05:6a10:1::1 with SMTP id x; Tue"),
        None
    );
    assert_eq!(parse_received(b""), None);
}

#[test]
fn the_connecting_hop_skips_internal_hops() {
    let headers = [
        "from mx.inbox.example by imap.inbox.example with LMTP id 1; Tue".as_bytes(),
        b"from mx1.inbox.example (mx1.inbox.example [192.168.1.4]) by mx2.inbox.example; Tue",
        b"from EX1.prod.inbox.example (2603:10a6:208:12::34) by EX2.prod.inbox.example (2603:10a6:208:12::56); Tue",
        b"from out.sender.example (out.sender.example [198.51.100.7]) by mx1.inbox.example; Tue",
        b"from forged.example (forged.example [192.0.2.1]) by out.sender.example; Tue",
    ];
    let found = connecting_hop(&headers).unwrap();
    assert_eq!(found.ip, Some("198.51.100.7".parse().unwrap()));

    // Only the top MAX_RECEIVED_EXAMINED headers count.
    let internal = b"from a.inbox.example ([10.0.0.1]) by b.inbox.example; Tue".as_slice();
    let mut deep = vec![internal; MAX_RECEIVED_EXAMINED];
    deep.push(headers[3]);
    let raw: String = deep
        .iter()
        .map(|h| format!("Received: {}\r\n", String::from_utf8_lossy(h)))
        .collect::<String>()
        + "\r\n";
    let scan = scan_headers(raw.as_bytes());
    assert_eq!(scan.received.len(), MAX_RECEIVED_EXAMINED);
    assert_eq!(connecting_hop(&scan.received), None);
}

#[test]
fn authentication_results_parse() {
    let found = parse_auth_results(
        b" mx.google.com;\r\n       dkim=pass header.i=@sender.example header.s=sel header.b=\"Ab/c\";\r\n       spf=pass (google.com: domain of a@sender.example designates 198.51.100.7 as permitted sender) smtp.mailfrom=a@sender.example;\r\n       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=sender.example",
    );
    assert_eq!(found.authserv_id.as_deref(), Some("mx.google.com"));
    let methods: Vec<(&str, &str)> = found
        .results
        .iter()
        .map(|r| (r.method.as_str(), r.result.as_str()))
        .collect();
    assert_eq!(
        methods,
        [("dkim", "pass"), ("spf", "pass"), ("dmarc", "pass")]
    );
    assert_eq!(found.results[0].prop("header.i"), Some("@sender.example"));
    assert_eq!(found.results[0].prop("header.b"), Some("Ab/c"));
    assert_eq!(
        found.property("spf", "smtp.mailfrom"),
        Some("a@sender.example")
    );

    // Microsoft 365 writes no authserv-id: never trusted.
    let found = parse_auth_results(
        b"spf=pass (sender IP is 198.51.100.7) smtp.mailfrom=sender.example; dkim=none (message not signed) header.d=none;dmarc=none action=none header.from=sender.example;compauth=pass reason=100",
    );
    assert_eq!(found.authserv_id, None);
    assert_eq!(found.results.len(), 4);
    assert_eq!(found.results[2].result, "none");

    // Version, "none", quoted semicolons, methods with versions.
    let found =
        parse_auth_results(b"mx.example 1; none; dkim/1=PASS reason=\"a; b\" header.d=x.example");
    assert_eq!(found.authserv_id.as_deref(), Some("mx.example"));
    assert_eq!(found.results.len(), 1);
    assert_eq!(found.results[0].method, "dkim");
    assert_eq!(found.results[0].result, "pass");
    assert_eq!(found.results[0].prop("header.d"), Some("x.example"));

    // Garbage.
    for garbage in [
        b"".as_slice(),
        b";;;;",
        b"(((((",
        b"\"unterminated",
        b"= = = ;=;",
        b"\\",
    ] {
        let _ = parse_auth_results(garbage);
    }
}

#[test]
fn organisational_domains_and_suffixes() {
    assert_eq!(
        organizational_domain("mail.sender.example"),
        "sender.example"
    );
    assert_eq!(organizational_domain("sender.example."), "sender.example");
    assert_eq!(organizational_domain("example"), "example");
    assert_eq!(organizational_domain("a.b.example.co.uk"), "example.co.uk");
    assert_eq!(organizational_domain("example.co.uk"), "example.co.uk");
    assert_eq!(organizational_domain("x.example.com.au"), "example.com.au");
    assert_eq!(organizational_domain("x.bücher.example"), "bücher.example");
    assert_eq!(organizational_domain(""), "");
    // What only the public suffix list knows: private suffixes, two-label
    // country suffixes outside the common ones, and case.
    assert_eq!(organizational_domain("a.user.github.io"), "user.github.io");
    assert_eq!(
        organizational_domain("mail.example.kawasaki.jp"),
        "mail.example.kawasaki.jp"
    );
    assert_eq!(organizational_domain("MX.Example.CO.UK"), "example.co.uk");
    assert_eq!(organizational_domain("co.uk"), "co.uk");

    assert!(is_suffix("mail.sender.example", "sender.example"));
    assert!(is_suffix("Sender.Example", "sender.example"));
    assert!(!is_suffix("evilsender.example", "sender.example"));
    assert!(!is_suffix("sender.example.evil", "sender.example"));
    assert!(!is_suffix("anything", ""));
}

#[test]
fn addresses() {
    assert_eq!(
        return_path(b" <Alice@Sender.Example>\r\n").as_deref(),
        Some("Alice@sender.example")
    );
    assert_eq!(return_path(b"<>").as_deref(), Some(""));
    assert_eq!(
        return_path(b"<@relay.example:bob@sender.example>").as_deref(),
        Some("bob@sender.example")
    );
    assert_eq!(return_path(b"garbage"), None);
    assert_eq!(
        author_domain(None, Some(b" \"Bob, Jr.\" <bob@Sender.Example.>\r\n")).as_deref(),
        Some("sender.example")
    );
    assert_eq!(author_domain(None, Some(b" nobody")), None);
    assert_eq!(author_domain(None, None), None);
}
