//! Outgoing dashboard mail (password resets). Sequence mail goes through the
//! customer's own send accounts instead, in the sending area.

use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::SmtpConfig;

#[derive(Clone)]
pub struct Mailer {
    transport: Option<(AsyncSmtpTransport<Tokio1Executor>, Mailbox)>,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("configured", &self.transport.is_some())
            .finish()
    }
}

impl Mailer {
    /// Builds the SMTP transport, or a log-only mailer when no host is set.
    pub fn new(config: &SmtpConfig) -> anyhow::Result<Mailer> {
        if config.host.is_empty() {
            return Ok(Mailer { transport: None });
        }
        let builder = match config.security.as_str() {
            "tls" => AsyncSmtpTransport::<Tokio1Executor>::relay(&config.host)?,
            "starttls" => AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.host)?,
            _ => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host),
        };
        let mut builder = builder.port(config.port);
        if !config.username.is_empty() {
            builder = builder.credentials(Credentials::new(
                config.username.clone(),
                config.password.clone(),
            ));
        }
        let from = if config.from.is_empty() {
            format!("outreach@{}", config.host)
        } else {
            config.from.clone()
        };
        Ok(Mailer {
            transport: Some((builder.build(), from.parse()?)),
        })
    }

    /// Sends a plain-text message, or logs it when SMTP is not configured.
    pub async fn send(&self, to: &str, subject: &str, body: &str) -> anyhow::Result<()> {
        let Some((transport, from)) = &self.transport else {
            tracing::info!(
                to,
                subject,
                body,
                "SMTP not configured; mail written to the log"
            );
            return Ok(());
        };
        let message = Message::builder()
            .from(from.clone())
            .to(to.parse()?)
            .subject(subject)
            .body(body.to_string())?;
        transport.send(message).await?;
        Ok(())
    }
}
