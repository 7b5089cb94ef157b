//! Password reset mail delivered through a real SMTP server: Postfix's
//! `smtp-sink`, which accepts each message and dumps it to a file we read.

use std::net::TcpListener;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use outreach_e2e::{Deployment, client, post_json};
use serde_json::json;

struct SmtpSink {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl SmtpSink {
    fn start() -> SmtpSink {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        // smtp-sink drops privileges to `nobody`, which must write the dumps.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let child = Command::new("smtp-sink")
            .args(["-u", "nobody", "-d"])
            .arg(format!("{}/%M.", dir.path().display()))
            .arg(format!("127.0.0.1:{port}"))
            .arg("10")
            .spawn()
            .expect("smtp-sink (Debian package postfix; tests/run.sh installs it)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "smtp-sink did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        SmtpSink { child, port, dir }
    }

    /// The body of the first message received, waiting up to 10 s.
    fn first_message(&self) -> String {
        let started = Instant::now();
        loop {
            let files: Vec<_> = std::fs::read_dir(self.dir.path())
                .unwrap()
                .flatten()
                .collect();
            if let Some(f) = files.first() {
                let text = std::fs::read_to_string(f.path()).unwrap_or_default();
                if text.contains("Reset token:") {
                    return text;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no mail arrived"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn forgot_password_mails_a_token_that_resets_the_password() {
    let sink = SmtpSink::start();
    let deployment = Deployment::new()
        .with_env("OUTREACH_SMTP_HOST", "127.0.0.1")
        .with_env("OUTREACH_SMTP_PORT", &sink.port.to_string())
        .with_env("OUTREACH_SMTP_SECURITY", "none")
        .with_env("OUTREACH_SMTP_FROM", "noreply@outreach.test");
    let server = deployment.start();
    let http = client();
    let creds = json!({"email": "reset@example.com", "password": "first password 1"});
    let r = post_json(&http, &server.url("/auth/register"), None, &creds).await;
    assert_eq!(r.status, 201, "{}", r.text);

    let r = post_json(
        &http,
        &server.url("/auth/forgot-password"),
        None,
        &json!({"email": "reset@example.com"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mail = sink.first_message();
    assert!(mail.contains("X-Rcpt-Args: <reset@example.com>"), "{mail}");
    assert!(
        mail.contains("Subject: Reset your Outreach password"),
        "{mail}"
    );
    let token = mail
        .lines()
        .find_map(|l| l.strip_prefix("Reset token: "))
        .expect("token line")
        .trim()
        .to_string();

    let r = post_json(
        &http,
        &server.url("/auth/reset-password"),
        None,
        &json!({"token": token, "new_password": "second password 2"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let old = post_json(&http, &server.url("/auth/login"), None, &creds).await;
    assert_eq!(old.status, 401);
    let new = post_json(
        &http,
        &server.url("/auth/login"),
        None,
        &json!({"email": "reset@example.com", "password": "second password 2"}),
    )
    .await;
    assert_eq!(new.status, 200, "{}", new.text);
}
