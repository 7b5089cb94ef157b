//! Connections to a customer's mail servers: the SMTP server a send account
//! sends through and the IMAP server its replies arrive at (spec/3 "Send
//! accounts": connecting a mailbox tests SMTP and IMAP).
//!
//! Every TCP connection is opened by `outreach_ssrf::connect_checked` under
//! the caller's outbound policy, and the socket it returns is handed to
//! lettre or async-imap. Neither library ever resolves a host name itself, so
//! a customer cannot point a send account at the metadata endpoint or an
//! internal service, and a rebinding DNS server gets no second lookup.
//!
//! SMTP follows the account's `smtp_encryption`: `tls` (the default) says
//! EHLO in plain text and then requires STARTTLS before any credentials are
//! sent; `ssl` speaks TLS from the first byte (port 465 style); `none` stays
//! in plain text, which the customer chose explicitly. Authentication uses
//! AUTH PLAIN or AUTH LOGIN, whichever the server offers.
//!
//! IMAP has no encryption setting of its own, so the rule is by port: port
//! 993 is implicit TLS; on any other port the client upgrades with STARTTLS
//! when the server's CAPABILITY offers it. A server that offers no TLS at all
//! gets the password in plain text only when the caller allows it, which it
//! does when the account's `smtp_encryption` is `none` (the customer has
//! already accepted plain text for that mailbox); otherwise the check fails
//! before LOGIN is sent.
//!
//! TLS certificates are verified against Mozilla's roots (webpki-roots) with
//! the server name the customer typed as SNI; there is no option to skip
//! verification. Every operation runs under one overall timeout, so a server
//! that accepts the connection and then stalls cannot hold a request.
//!
//! Errors come in two kinds: [`MailError::Blocked`] when the outbound policy
//! refused the address (the API answers 400) and [`MailError::Failed`] when
//! the server could not be reached or refused us (422), carrying the server's
//! own words so the customer can fix the settings. Neither ever contains the
//! password: messages are scrubbed of it before they leave this module.

mod imap;
mod smtp;
mod tls;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use outreach_ssrf::{GuardError, GuardPolicy};
use tokio::net::TcpStream;

pub use imap::check_imap;
pub(crate) use imap::{ImapSession, failed as imap_failure, open_session};
pub use smtp::{check_smtp, connect_smtp};

/// How the SMTP connection is secured: spec's `smtp_encryption` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    /// `tls`: STARTTLS after the plain-text greeting, required; the default.
    Tls,
    /// `ssl`: implicit TLS from the first byte.
    Ssl,
    /// `none`: plain text throughout, credentials included.
    None,
}

impl Encryption {
    /// Reads the spec's spelling (`tls`, `ssl`, `none`), case-insensitively.
    pub fn parse(s: &str) -> Option<Encryption> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tls" => Some(Encryption::Tls),
            "ssl" => Some(Encryption::Ssl),
            "none" => Some(Encryption::None),
            _ => None,
        }
    }

    /// The spec's spelling, as stored and returned by the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Encryption::Tls => "tls",
            Encryption::Ssl => "ssl",
            Encryption::None => "none",
        }
    }
}

/// One server and its login.
#[derive(Clone)]
pub struct MailServer {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: String,
}

impl fmt::Debug for MailServer {
    /// Leaves the password out, so a logged server never leaks it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailServer")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Why a mail server check or connection failed.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The outbound policy refused the host; the text is the guard's own and
    /// starts with "Blocked by SSRF guard". Maps to HTTP 400.
    #[error("{0}")]
    Blocked(String),
    /// The server could not be reached or refused us (connect, TLS, greeting,
    /// authentication, SELECT), with the server's reason. Maps to HTTP 422.
    #[error("{0}")]
    Failed(String),
}

/// Opens the TCP connection through the outbound policy: the only way this
/// module reaches the network.
async fn connect(
    policy: &GuardPolicy,
    server: &MailServer,
    protocol: &str,
    timeout: Duration,
) -> Result<TcpStream, MailError> {
    let tcp = outreach_ssrf::connect_checked(policy, &server.host, server.port, timeout)
        .await
        .map_err(|e| match e {
            GuardError::Blocked(_) => MailError::Blocked(e.to_string()),
            GuardError::Timeout => MailError::Failed(format!(
                "Could not connect to {protocol} server {}:{}: no answer within {} s",
                server.host,
                server.port,
                timeout.as_secs_f32()
            )),
            other => MailError::Failed(format!(
                "Could not connect to {protocol} server {}:{}: {other}",
                server.host, server.port
            )),
        })?;
    // SMTP and IMAP are request and answer in small writes (the end of a
    // message's data, then its dot): Nagle's algorithm would hold each
    // second write until the peer's delayed acknowledgement.
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

/// Runs a whole exchange under one deadline, so a server that accepts the
/// connection and then stalls fails the check instead of holding it.
async fn within<T>(
    timeout: Duration,
    server: &MailServer,
    protocol: &str,
    work: impl Future<Output = Result<T, MailError>>,
) -> Result<T, MailError> {
    match tokio::time::timeout(timeout, work).await {
        Ok(result) => result.map_err(|e| scrub(e, server)),
        Err(_) => Err(MailError::Failed(format!(
            "{protocol} server {}:{} did not answer within {} s",
            server.host,
            server.port,
            timeout.as_secs_f32()
        ))),
    }
}

/// Removes the password from an error message, in clear and in the base64
/// forms AUTH LOGIN and AUTH PLAIN send, in case a server echoes what it got.
fn scrub(error: MailError, server: &MailServer) -> MailError {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let secrets = [
        server.password.clone(),
        b64.encode(&server.password),
        b64.encode(format!("\0{}\0{}", server.username, server.password)),
    ];
    let clean = |mut text: String| {
        for secret in &secrets {
            text = redact_token(&text, secret);
        }
        text
    };
    match error {
        MailError::Blocked(text) => MailError::Blocked(clean(text)),
        MailError::Failed(text) => MailError::Failed(clean(text)),
    }
}

/// Replaces `secret` where it stands as a token of its own (not inside a
/// longer word), which is how an echoed credential appears. Matching inside
/// words would turn a message into nonsense for short passwords ("x" in
/// "text") without hiding anything.
fn redact_token(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_owned();
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(secret) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + secret.len()..].chars().next();
        out.push_str(&rest[..at]);
        if word(before) || word(after) {
            out.push_str(secret);
        } else {
            out.push_str("***");
        }
        rest = &rest[at + secret.len()..];
    }
    out.push_str(rest);
    out
}
