//! Render and compose one message: the rendering engine fills the step's
//! template, tracking rewrites links and adds the pixel, and lettre builds
//! the MIME message (HTML and plain-text alternatives) with the headers
//! receivers rely on: a deterministic Message-ID, threading under the
//! enrollment's first message, and RFC 8058 one-click unsubscribe.

use std::time::SystemTime;

use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::{Address, Message};

use super::Sender;
use super::plan::Job;
use crate::rendering::{Enrichment, render_email_using};
use crate::tracking::track;
use outreach_core::state::AppState;
use outreach_vendors::Actor;

/// A message ready for SMTP.
pub struct Outgoing {
    pub envelope: lettre::address::Envelope,
    pub bytes: Vec<u8>,
    pub subject: String,
    /// The original URLs behind the click-tracking links.
    pub links: Vec<String>,
}

/// Renders and composes `job`. Fails only when the message cannot be built
/// (an address that does not parse, the enrichment cache unreadable).
pub async fn compose(state: &AppState, job: &Job) -> Result<Outgoing, String> {
    let sender = state.ext::<Sender>();
    // The sequence acts for the account: its AI keys and enrichment cache.
    let actor = Actor {
        account_id: job.account_id,
        user_key: format!("sequence:{}", job.sequence_id),
    };
    let rendered = render_email_using(
        state,
        &actor,
        &job.subject_template,
        &job.body_template,
        &job.contact,
        Enrichment::Given(job.enrichment.as_deref()),
    )
    .await
    .map_err(|e| format!("rendering failed: {e}"))?;
    let tracked = track(
        &sender.tracking,
        &state.config.public_base_url,
        job.message_row_id,
        &rendered.body_html,
        job.tracking,
    );
    let subject = subject_line(&rendered.subject, job.thread.as_ref());
    let mut text = rendered.body_text;
    if let Some(url) = &tracked.unsubscribe_url {
        text.push_str(&format!("\n\n--\nUnsubscribe: {url}\n"));
    }
    let message = build(
        job,
        &subject,
        &tracked.body_html,
        &text,
        tracked.unsubscribe_url.as_deref(),
        SystemTime::from(outreach_core::platform::clock::ms_to_datetime(
            state.clock.now_ms(),
        )),
    )?;
    Ok(Outgoing {
        envelope: message.envelope().clone(),
        bytes: message.formatted(),
        subject,
        links: tracked.links,
    })
}

/// A follow-up with an empty subject continues the thread as `Re: <first
/// subject>`; a first message without one says so.
pub fn subject_line(rendered: &str, thread: Option<&(String, String)>) -> String {
    let own = rendered.trim();
    if !own.is_empty() {
        return own.to_owned();
    }
    match thread {
        Some((_, root)) if !root.trim().is_empty() => {
            let root = root.trim();
            if root.to_ascii_lowercase().starts_with("re:") {
                root.to_owned()
            } else {
                format!("Re: {root}")
            }
        }
        _ => "(no subject)".to_owned(),
    }
}

fn header(name: &'static str, value: String) -> HeaderValue {
    HeaderValue::new(HeaderName::new_from_ascii_str(name), value)
}

/// The MIME message of `job`.
pub fn build(
    job: &Job,
    subject: &str,
    html: &str,
    text: &str,
    unsubscribe_url: Option<&str>,
    date: SystemTime,
) -> Result<Message, String> {
    let from: Address = job
        .from_email
        .parse()
        .map_err(|e| format!("from address {:?}: {e}", job.from_email))?;
    let to: Address = job
        .contact
        .email
        .parse()
        .map_err(|e| format!("recipient address {:?}: {e}", job.contact.email))?;
    let mut builder = Message::builder()
        .from(Mailbox::new(job.from_name.clone(), from))
        .to(Mailbox::new(None, to))
        .subject(subject)
        .date(date)
        .message_id(Some(format!("<{}>", job.message_id)));
    if let Some((root, _)) = &job.thread {
        builder = builder
            .in_reply_to(format!("<{root}>"))
            .references(format!("<{root}>"));
    }
    if let Some(url) = unsubscribe_url {
        builder = builder
            .raw_header(header("List-Unsubscribe", format!("<{url}>")))
            .raw_header(header(
                "List-Unsubscribe-Post",
                "List-Unsubscribe=One-Click".into(),
            ));
    }
    builder
        .multipart(MultiPart::alternative_plain_html(
            text.to_owned(),
            html.to_owned(),
        ))
        .map_err(|e| format!("composing the message failed: {e}"))
}
