//! Checks against real peers: Postfix's smtp-sink and a private Dovecot,
//! started by `tests/support/mail.sh` on the ports `mail_peers` names. They
//! fail (never skip) when the peers are down, so a green run means the
//! connection layer really spoke to an SMTP and an IMAP server. A bad SMTP
//! password is tested against a tiny in-process server, because smtp-sink
//! accepts any login.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use outreach_core::testing::mail_peers::{IMAP_PASSWORD, IMAP_PORT, IMAP_USER, SMTP_PORT};
use outreach_ssrf::GuardPolicy;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::*;

const TIMEOUT: Duration = Duration::from_secs(10);

/// Fails the test with the fix when a peer does not answer.
async fn require_peer(port: u16) {
    if tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        panic!("no mail peer on 127.0.0.1:{port}: run tests/support/mail.sh");
    }
}

fn server(host: &str, port: u16, username: &str, password: &str) -> MailServer {
    MailServer {
        host: host.to_owned(),
        port,
        username: username.to_owned(),
        password: password.to_owned(),
    }
}

fn smtp_sink() -> MailServer {
    server(
        "127.0.0.1",
        SMTP_PORT,
        "seller@outreach.test",
        "smtp-pass-1",
    )
}

fn dovecot(password: &str) -> MailServer {
    server("127.0.0.1", IMAP_PORT, IMAP_USER, password)
}

fn loopback() -> GuardPolicy {
    GuardPolicy::allow_loopback_for_tests()
}

fn failed_text(result: Result<(), MailError>) -> String {
    match result {
        Err(MailError::Failed(text)) => text,
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[test]
fn encryption_parse_round_trips() {
    for e in [Encryption::Tls, Encryption::Ssl, Encryption::None] {
        assert_eq!(Encryption::parse(e.as_str()), Some(e));
    }
    assert_eq!(Encryption::parse("TLS"), Some(Encryption::Tls));
    assert_eq!(Encryption::parse("starttls"), None);
    assert_eq!(Encryption::parse(""), None);
}

#[test]
fn debug_output_leaves_the_password_out() {
    let text = format!("{:?}", dovecot("hunter2-secret"));
    assert!(
        text.contains("127.0.0.1") && text.contains(IMAP_USER),
        "{text}"
    );
    assert!(!text.contains("hunter2-secret"), "{text}");
}

#[tokio::test]
async fn smtp_check_succeeds_against_smtp_sink_in_plain_text() {
    require_peer(SMTP_PORT).await;
    check_smtp(&loopback(), &smtp_sink(), Encryption::None, TIMEOUT)
        .await
        .unwrap();
    // The connection itself comes back authenticated and usable.
    let mut conn = connect_smtp(&loopback(), &smtp_sink(), Encryption::None, TIMEOUT)
        .await
        .unwrap();
    assert!(conn.test_connected().await);
    conn.quit().await.unwrap();
}

#[tokio::test]
async fn smtp_starttls_is_required_when_the_account_says_tls() {
    require_peer(SMTP_PORT).await;
    let text = failed_text(check_smtp(&loopback(), &smtp_sink(), Encryption::Tls, TIMEOUT).await);
    assert!(text.contains("does not offer STARTTLS"), "{text}");
}

#[tokio::test]
async fn smtp_implicit_tls_against_a_plain_server_fails_in_the_handshake() {
    require_peer(SMTP_PORT).await;
    let text = failed_text(check_smtp(&loopback(), &smtp_sink(), Encryption::Ssl, TIMEOUT).await);
    assert!(
        text.starts_with("TLS handshake with 127.0.0.1 failed"),
        "{text}"
    );
}

#[tokio::test]
async fn a_closed_port_fails_with_the_reason() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().port()
    };
    let s = server("127.0.0.1", port, "u", "p");
    let text = failed_text(check_smtp(&loopback(), &s, Encryption::None, TIMEOUT).await);
    assert!(
        text.starts_with("Could not connect to SMTP server"),
        "{text}"
    );
    assert!(text.contains("refused"), "{text}");
    let text = failed_text(check_imap(&loopback(), &s, true, TIMEOUT).await);
    assert!(
        text.starts_with("Could not connect to IMAP server"),
        "{text}"
    );
}

#[tokio::test]
async fn loopback_is_blocked_by_the_strict_policy_and_reached_with_the_allowance() {
    require_peer(SMTP_PORT).await;
    require_peer(IMAP_PORT).await;
    let strict = GuardPolicy::strict();
    let smtp = check_smtp(&strict, &smtp_sink(), Encryption::None, TIMEOUT).await;
    let imap = check_imap(&strict, &dovecot(IMAP_PASSWORD), true, TIMEOUT).await;
    for result in [smtp, imap] {
        let e = result.unwrap_err();
        assert!(matches!(e, MailError::Blocked(_)), "{e:?}");
        assert!(e.to_string().starts_with("Blocked by SSRF guard"), "{e}");
    }
    check_smtp(&loopback(), &smtp_sink(), Encryption::None, TIMEOUT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_private_address_is_blocked_even_with_loopback_allowed() {
    // Refused before any packet is sent: the guard checks the address first.
    let s = server("10.0.0.1", 25, "u", "p");
    for result in [
        check_smtp(&loopback(), &s, Encryption::Tls, TIMEOUT).await,
        check_imap(&loopback(), &s, false, TIMEOUT).await,
    ] {
        let e = result.unwrap_err();
        assert!(matches!(e, MailError::Blocked(_)), "{e:?}");
        assert!(e.to_string().starts_with("Blocked by SSRF guard"), "{e}");
    }
}

#[tokio::test]
async fn imap_check_succeeds_with_the_right_password() {
    require_peer(IMAP_PORT).await;
    check_imap(&loopback(), &dovecot(IMAP_PASSWORD), true, TIMEOUT)
        .await
        .unwrap();
}

#[tokio::test]
async fn imap_wrong_password_fails_with_the_servers_answer() {
    require_peer(IMAP_PORT).await;
    let password = "wrong-pass-9";
    let text = failed_text(check_imap(&loopback(), &dovecot(password), true, TIMEOUT).await);
    assert!(text.starts_with("IMAP login failed: "), "{text}");
    assert!(text.contains("AUTHENTICATIONFAILED"), "{text}");
    assert!(!text.contains(password), "{text}");
}

#[tokio::test]
async fn imap_without_tls_is_refused_unless_plain_text_is_allowed() {
    require_peer(IMAP_PORT).await;
    let text = failed_text(check_imap(&loopback(), &dovecot(IMAP_PASSWORD), false, TIMEOUT).await);
    assert!(text.starts_with("IMAP server offers no TLS"), "{text}");
}

/// A server that greets, answers EHLO with AUTH, and then replies `auth_reply`
/// (with `{line}` replaced by the AUTH line it received) to AUTH.
async fn fake_smtp(auth_reply: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"220 fake ESMTP\r\n").await.unwrap();
        while let Ok(Some(line)) = lines.next_line().await {
            let verb = line.split(' ').next().unwrap_or("").to_ascii_uppercase();
            let reply = match verb.as_str() {
                "EHLO" => "250-fake\r\n250 AUTH PLAIN LOGIN\r\n".to_owned(),
                "AUTH" => format!("{}\r\n", auth_reply.replace("{line}", &line)),
                "QUIT" => "221 2.0.0 Bye\r\n".to_owned(),
                _ => "502 5.5.2 Not implemented\r\n".to_owned(),
            };
            if write.write_all(reply.as_bytes()).await.is_err() || verb == "QUIT" {
                break;
            }
        }
    });
    port
}

#[tokio::test]
async fn a_rejected_smtp_login_carries_the_servers_reply() {
    let port = fake_smtp("535 5.7.8 Authentication credentials invalid").await;
    let s = server("127.0.0.1", port, "seller@outreach.test", "bad-pass-7");
    let text = failed_text(check_smtp(&loopback(), &s, Encryption::None, TIMEOUT).await);
    assert_eq!(
        text,
        "SMTP authentication failed: 535 5.7.8 Authentication credentials invalid"
    );
}

#[tokio::test]
async fn a_server_echoing_the_credentials_never_gets_them_into_the_message() {
    // "e" also checks that a short password is not cut out of other words.
    for password in ["bad-pass-7", "e"] {
        let port = fake_smtp("535 5.7.8 Rejected {line} for the password").await;
        let s = server("127.0.0.1", port, "seller@outreach.test", password);
        let text = failed_text(check_smtp(&loopback(), &s, Encryption::None, TIMEOUT).await);
        assert_eq!(
            text,
            "SMTP authentication failed: 535 5.7.8 Rejected AUTH PLAIN *** for the password"
        );
    }
}

#[tokio::test]
async fn imap_against_a_server_that_is_not_imap_fails_with_its_reply() {
    require_peer(SMTP_PORT).await;
    let text = failed_text(check_imap(&loopback(), &smtp_sink(), true, TIMEOUT).await);
    assert!(
        text.starts_with("IMAP greeting failed: not an IMAP reply: \"220 "),
        "{text}"
    );
}

/// An IMAP server that offers STARTTLS (in its greeting, or only when asked
/// for CAPABILITY) and answers the upgrade with bytes that are not TLS. The
/// flag records whether a LOGIN ever arrived.
async fn fake_imap(greeting: &'static str) -> (u16, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let login = Arc::new(AtomicBool::new(false));
    let seen = login.clone();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (read, mut write) = socket.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(greeting.as_bytes()).await.unwrap();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut words = line.split(' ');
            let (tag, verb) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            let reply = match verb.to_ascii_uppercase().as_str() {
                "CAPABILITY" => format!("* CAPABILITY IMAP4rev1 STARTTLS\r\n{tag} OK done\r\n"),
                "STARTTLS" => format!("{tag} OK Begin TLS\r\nthis is not TLS\r\n"),
                "LOGIN" => {
                    seen.store(true, Ordering::SeqCst);
                    format!("{tag} OK logged in\r\n")
                }
                _ => format!("{tag} BAD unknown\r\n"),
            };
            if write.write_all(reply.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    (port, login)
}

#[tokio::test]
async fn imap_upgrades_with_starttls_before_sending_the_password() {
    for greeting in [
        "* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] fake ready\r\n",
        "* OK fake ready\r\n",
    ] {
        let (port, login) = fake_imap(greeting).await;
        let s = server("127.0.0.1", port, IMAP_USER, "imap-pass-3");
        // Plain text would be allowed, yet the offered TLS is taken.
        let text = failed_text(check_imap(&loopback(), &s, true, TIMEOUT).await);
        assert!(
            text.starts_with("TLS handshake with 127.0.0.1 failed"),
            "{text}"
        );
        assert!(!login.load(Ordering::SeqCst), "LOGIN was sent before TLS");
    }
}

#[tokio::test]
async fn a_server_that_stalls_fails_at_the_timeout() {
    // Accepts and never greets.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let _hold = tokio::spawn(async move {
        let (_socket, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let s = server("127.0.0.1", port, "u", "p");
    let quick = Duration::from_millis(300);
    let text = failed_text(check_smtp(&loopback(), &s, Encryption::None, quick).await);
    assert!(text.contains("did not answer within"), "{text}");
}
