//! SMTP: connect through the outbound policy, EHLO, secure the connection as
//! the account says, authenticate; the open connection is what the sending
//! engine will reuse.

use std::time::Duration;

use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use outreach_ssrf::GuardPolicy;

use super::tls::{MailStream, handshake};
use super::{Encryption, MailError, MailServer, connect, within};

/// Connects, says EHLO, secures per `encryption`, authenticates (AUTH PLAIN
/// or LOGIN with the server's username and password) and returns the open,
/// authenticated lettre connection so the sending engine can reuse it.
///
/// With [`Encryption::Tls`] a server that does not offer STARTTLS fails the
/// connection before the credentials are sent.
pub async fn connect_smtp(
    policy: &GuardPolicy,
    server: &MailServer,
    encryption: Encryption,
    timeout: Duration,
) -> Result<AsyncSmtpConnection, MailError> {
    within(timeout, server, "SMTP", async {
        let tcp = connect(policy, server, "SMTP", timeout).await?;
        // EHLO names this machine, as lettre's transports do by default.
        let hello = ClientId::default();
        let stream = match encryption {
            Encryption::Ssl => MailStream::Tls(Box::new(
                handshake(tcp, &server.host)
                    .await
                    .map_err(MailError::Failed)?,
            )),
            Encryption::Tls | Encryption::None => MailStream::Plain(tcp),
        };
        let mut conn = AsyncSmtpConnection::connect_with_transport(Box::new(stream), &hello)
            .await
            .map_err(|e| failed("SMTP greeting failed", &e))?;

        if encryption == Encryption::Tls {
            if !conn.can_starttls() {
                conn.abort().await;
                return Err(MailError::Failed(format!(
                    "SMTP server {}:{} does not offer STARTTLS; choose smtp_encryption \"ssl\" \
                     for a TLS port or \"none\" to send in plain text",
                    server.host, server.port
                )));
            }
            let params = TlsParameters::new(bare_host(&server.host).to_owned())
                .map_err(|e| failed("SMTP STARTTLS failed", &e))?;
            conn.starttls(params, &hello)
                .await
                .map_err(|e| failed("SMTP STARTTLS failed", &e))?;
        }

        let credentials = Credentials::new(server.username.clone(), server.password.clone());
        if let Err(e) = conn
            .auth(&[Mechanism::Plain, Mechanism::Login], &credentials)
            .await
        {
            conn.abort().await;
            return Err(failed("SMTP authentication failed", &e));
        }
        Ok(conn)
    })
    .await
}

/// [`connect_smtp`], then QUIT: the check run when a send account is
/// connected or tested.
pub async fn check_smtp(
    policy: &GuardPolicy,
    server: &MailServer,
    encryption: Encryption,
    timeout: Duration,
) -> Result<(), MailError> {
    let mut conn = connect_smtp(policy, server, encryption, timeout).await?;
    // The login already succeeded; a server that drops the connection instead
    // of answering QUIT has still passed the check.
    let _ = tokio::time::timeout(timeout, conn.quit()).await;
    Ok(())
}

/// `what: <code> <server text>` for a negative reply ("SMTP authentication
/// failed: 535 5.7.8 Authentication credentials invalid"), lettre's own text
/// for anything else (network, TLS, unparsable replies).
fn failed(what: &str, e: &lettre::transport::smtp::Error) -> MailError {
    use std::error::Error as _;
    match (e.status(), e.source()) {
        (Some(code), Some(text)) => MailError::Failed(format!("{what}: {code} {text}")),
        _ => MailError::Failed(format!("{what}: {e}")),
    }
}

/// The host without IPv6 brackets, as TLS wants it for SNI and verification.
fn bare_host(host: &str) -> &str {
    host.trim().trim_start_matches('[').trim_end_matches(']')
}
