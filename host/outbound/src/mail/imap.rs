//! IMAP: connect through the outbound policy, read the greeting, secure the
//! connection by the port rule (see the module docs), LOGIN, SELECT INBOX,
//! LOGOUT.

use std::time::Duration;

use async_imap::Client;
use async_imap::imap_proto::{Capability, Response, ResponseCode, Status};
use async_imap::types::UnsolicitedResponse;
use outreach_ssrf::GuardPolicy;

use super::tls::{MailStream, handshake};
use super::{MailError, MailServer, connect, within};

/// The port where IMAP speaks TLS from the first byte (RFC 8314).
const IMPLICIT_TLS_PORT: u16 = 993;

/// Connects, reads the greeting, secures the connection (port 993: implicit
/// TLS; other ports: STARTTLS when offered), logs in, selects INBOX and logs
/// out. Without TLS the password is sent only when `allow_plaintext` is true,
/// which the caller passes when the account's `smtp_encryption` is `none`.
pub async fn check_imap(
    policy: &GuardPolicy,
    server: &MailServer,
    allow_plaintext: bool,
    timeout: Duration,
) -> Result<(), MailError> {
    within(timeout, server, "IMAP", async {
        let mut session = login(policy, server, allow_plaintext, timeout).await?;
        session
            .select("INBOX")
            .await
            .map_err(|e| failed("IMAP SELECT INBOX failed", &e))?;
        // The check has passed; a server that closes instead of answering
        // LOGOUT does not undo that.
        let _ = session.logout().await;
        Ok(())
    })
    .await
}

/// An IMAP session logged in to `server`, for the inbox poller. The caller
/// bounds the whole exchange with its own timeout.
pub(crate) async fn open_session(
    policy: &GuardPolicy,
    server: &MailServer,
    allow_plaintext: bool,
    timeout: Duration,
) -> Result<ImapSession, MailError> {
    within(
        timeout,
        server,
        "IMAP",
        login(policy, server, allow_plaintext, timeout),
    )
    .await
}

/// A logged-in IMAP session over a plain or TLS stream.
pub(crate) type ImapSession = async_imap::Session<MailStream>;

/// Connects, reads the greeting, secures the connection by the port rule
/// and logs in.
async fn login(
    policy: &GuardPolicy,
    server: &MailServer,
    allow_plaintext: bool,
    timeout: Duration,
) -> Result<ImapSession, MailError> {
    let tcp = connect(policy, server, "IMAP", timeout).await?;
    let implicit_tls = server.port == IMPLICIT_TLS_PORT;
    let stream = if implicit_tls {
        MailStream::Tls(Box::new(
            handshake(tcp, &server.host)
                .await
                .map_err(MailError::Failed)?,
        ))
    } else {
        MailStream::Plain(tcp)
    };
    let mut client = Client::new(stream);
    let mut starttls = greeting(&mut client).await?;

    if !implicit_tls {
        if starttls.is_none() {
            starttls = Some(offers_starttls(&mut client).await?);
        }
        if starttls == Some(true) {
            client
                .run_command_and_check_ok("STARTTLS", None)
                .await
                .map_err(|e| failed("IMAP STARTTLS failed", &e))?;
            let MailStream::Plain(tcp) = client.into_inner() else {
                unreachable!("only a plain connection is upgraded");
            };
            let tls = handshake(tcp, &server.host)
                .await
                .map_err(MailError::Failed)?;
            client = Client::new(MailStream::Tls(Box::new(tls)));
        } else if !allow_plaintext {
            return Err(MailError::Failed(format!(
                "IMAP server offers no TLS (no STARTTLS on port {}, and port {IMPLICIT_TLS_PORT} \
                 is the implicit-TLS port); the password is sent in plain text only when \
                 smtp_encryption is \"none\"",
                server.port
            )));
        }
    }

    client
        .login(&server.username, &server.password)
        .await
        .map_err(|(e, _)| failed("IMAP login failed", &e))
}

/// Reads the greeting. Refuses a BYE or NO greeting with the server's text;
/// returns whether STARTTLS is offered when the greeting lists capabilities
/// (most servers do, saving a round trip), `None` when it does not say.
async fn greeting(client: &mut Client<MailStream>) -> Result<Option<bool>, MailError> {
    let response = client
        .read_response()
        .await
        .map_err(|e| MailError::Failed(format!("IMAP greeting failed: {}", io_text(&e))))?
        .ok_or_else(|| {
            MailError::Failed("IMAP server closed the connection before its greeting".into())
        })?;
    match response.parsed() {
        Response::Data {
            status: Status::Ok | Status::PreAuth,
            outcome,
        } => Ok(match &outcome.code {
            Some(ResponseCode::Capabilities(caps)) => Some(has_starttls(caps)),
            _ => None,
        }),
        Response::Data { status, outcome } => Err(MailError::Failed(format!(
            "IMAP server refused the connection: {status:?} {}",
            outcome.information.as_deref().unwrap_or("")
        ))),
        other => Err(MailError::Failed(format!(
            "IMAP server sent no greeting: {other:?}"
        ))),
    }
}

/// Asks CAPABILITY (the greeting did not list them) and looks for STARTTLS.
/// The untagged answer arrives on the unsolicited channel, which is the only
/// way async-imap exposes it before login.
async fn offers_starttls(client: &mut Client<MailStream>) -> Result<bool, MailError> {
    let (tx, rx) = async_channel::unbounded();
    client
        .run_command_and_check_ok("CAPABILITY", Some(tx))
        .await
        .map_err(|e| failed("IMAP CAPABILITY failed", &e))?;
    while let Ok(response) = rx.try_recv() {
        if let UnsolicitedResponse::Other(data) = response
            && let Response::Capabilities(caps) = data.parsed()
        {
            return Ok(has_starttls(caps));
        }
    }
    Ok(false)
}

fn has_starttls(caps: &[Capability<'_>]) -> bool {
    caps.iter()
        .any(|c| matches!(c, Capability::Atom(a) if a.eq_ignore_ascii_case("STARTTLS")))
}

/// `what: <server text>` from async-imap's error. A NO or BAD reply reaches
/// us as `code: .., info: ..` in Debug notation; the response code and the
/// text are pulled out so the customer reads what the server said.
pub(crate) fn failed(what: &str, e: &async_imap::error::Error) -> MailError {
    use async_imap::error::Error;
    let text = match e {
        Error::No(detail) | Error::Bad(detail) => server_text(detail),
        Error::Io(e) => io_text(e),
        other => other.to_string(),
    };
    MailError::Failed(format!("{what}: {text}"))
}

/// Turns `code: None, info: Some("[AUTHENTICATIONFAILED] Authentication
/// failed.")` into `[AUTHENTICATIONFAILED] Authentication failed.`, keeping a
/// parsed response code (`code: Some(Alert)`) in front as `[Alert]`.
fn server_text(detail: &str) -> String {
    let (code, info) = match detail.split_once(", info: ") {
        Some((code, info)) => (code.trim_start_matches("code: "), info),
        None => return detail.to_owned(),
    };
    let info = info
        .strip_prefix("Some(\"")
        .and_then(|i| i.strip_suffix("\")"))
        .map(|i| i.replace("\\\"", "\"").replace("\\\\", "\\"))
        .unwrap_or_default();
    match code.strip_prefix("Some(").and_then(|c| c.strip_suffix(')')) {
        Some(code) => format!("[{code}] {info}").trim_end().to_owned(),
        None if info.is_empty() => detail.to_owned(),
        None => info,
    }
}

/// An I/O error's text; async-imap reports a reply it cannot parse as an I/O
/// error carrying parser internals and then the bytes, so only the bytes are
/// kept ("not an IMAP reply: \"220 smtp.example.com ESMTP\\r\\n\"").
fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.split_once(" during parsing of ") {
        Some((_, reply)) => format!(
            "not an IMAP reply: {}",
            reply.chars().take(200).collect::<String>()
        ),
        None => text,
    }
}
