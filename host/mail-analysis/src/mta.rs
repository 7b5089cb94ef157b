//! Bounces that are not (only) RFC 3464: the plain-text notices of qmail, Exim,
//! Sendmail, Postfix, Exchange/Office 365, Gmail, Yahoo, AOL, Domino, Courier,
//! MailMarshal, SES, Mail.ru and others, recognised by who sent them, their
//! subject and their wording, in several languages.

use crate::mime::View;
use crate::util::{self, regex};
use crate::{Inspection, Parsed, evidence, reason};

/// What a message looks like, reduced to the signals the decision uses.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    /// Sent by a mailer daemon or postmaster.
    pub(crate) daemon: bool,
    /// The subject reads like a delivery failure.
    pub(crate) subject: bool,
    /// The subject is a human reply or forward ("Re:", "Fwd:"...).
    pub(crate) reply_prefix: bool,
    /// MTA-specific boilerplate found in the notice text.
    pub(crate) strong: usize,
    /// Generic failure wording found in the notice text.
    pub(crate) weak: usize,
    /// Null return path, `Auto-Submitted`, an attached original message, or an
    /// MTA-only header (`X-Failed-Recipients`, `X-Mailer-Daemon`).
    pub(crate) machine: bool,
    /// Sent from a bounce-handling, list-manager or filtering role address.
    pub(crate) role: bool,
    /// List or bulk mail (`List-Id`, `List-Unsubscribe`, `List-Post`).
    pub(crate) list: bool,
    /// A `List-Post` header: a post to a list, not a list manager's notice.
    pub(crate) list_post: bool,
    /// An SMTP reply near an address that is not the message's own.
    pub(crate) smtp_reply: bool,
    /// Filter and list-manager wording (blocked, rejected, not allowed to post...).
    pub(crate) policy: usize,
    /// The subject says the message was blocked or rejected.
    pub(crate) policy_subject: bool,
    /// `X-Failed-Recipients` / `X-Mailer-Daemon` present.
    pub(crate) mta_header: bool,
    /// Sent from a `no-reply@`-like address.
    pub(crate) automated: bool,
    /// A moderation hold or a quarantine digest, not a failure.
    pub(crate) held: bool,
    /// A sending report about many messages (campaign counters).
    pub(crate) campaign: bool,
    /// The text says its author is away (out of office).
    pub(crate) away: bool,
}

impl Signals {
    /// The bounce decision. A daemon sender needs some failure wording; a bounce-like
    /// subject needs failure wording from a non-human; MTA boilerplate needs a
    /// machine marker. A human "Re:"/"Fwd:" is never a bounce unless a daemon sent it.
    ///
    /// Beyond vendor wording, structure decides: a role sender (bounces@,
    /// …-owner@, quarantine@, a filtering product) with failure, policy or SMTP
    /// evidence; a machine-made message (null return path, `Auto-Submitted`, an
    /// attached original, `X-Failed-Recipients`) whose text puts an SMTP reply next
    /// to a foreign address and says what failed. List and bulk mail (newsletters,
    /// list posts about bounces) is never a bounce unless a daemon sent it.
    pub(crate) fn is_bounce(&self) -> bool {
        if self.reply_prefix && !self.daemon {
            return false;
        }
        // A list manager's own notice (a role sender, machine-made: Mailman 2 sends
        // its rejections with List-Id, List-Unsubscribe and Precedence but no
        // List-Post, the original attached) is not list mail in this sense.
        let list = self.list && !(self.role && self.machine && !self.list_post);
        if (list || self.held || self.campaign) && !self.daemon {
            return false;
        }
        // An out-of-office notice quoting an old address's failure is still an
        // out-of-office notice, unless MTA boilerplate says otherwise.
        if self.away && !self.daemon && self.strong == 0 {
            return false;
        }
        let wording = self.strong > 0 || self.weak > 0;
        let policy = self.policy > 0 || self.policy_subject;
        (self.daemon && (self.subject || wording || self.machine))
            || (self.subject && wording)
            || (self.strong > 0 && self.machine)
            || self.strong >= 2
            || (self.role
                && (self.subject
                    || wording
                    || (policy && (self.machine || self.smtp_reply || self.policy > 0))))
            || (self.machine && self.smtp_reply && (self.subject || wording || policy))
            || (self.mta_header && (self.smtp_reply || self.subject || wording))
            || (self.daemon && self.smtp_reply)
            || (self.role && self.smtp_reply && (self.machine || wording || policy))
            || (self.automated
                && self.smtp_reply
                && (self.subject || self.policy_subject)
                && (wording || self.policy > 0))
    }
}

/// Computes the signals from the `From` header text, subject, notice text and headers.
pub(crate) fn signals(
    from: &str,
    subject: &str,
    text: &str,
    headers: &[(String, String)],
) -> Signals {
    signals_with(from, subject, text, headers, false)
}

/// [`signals`], knowing whether the message has an attached original (a machine
/// marker only the MIME structure shows). The costlier evidence (SMTP replies,
/// policy wording) is only gathered when some sender or machine marker makes it
/// count.
pub(crate) fn signals_with(
    from: &str,
    subject: &str,
    text: &str,
    headers: &[(String, String)],
    has_original: bool,
) -> Signals {
    let raw_notice = util::truncate(self::notice(text), 64 * 1024);
    let notice = util::fold(raw_notice);
    let from = from.to_lowercase();
    let subj = subject.to_lowercase();
    let return_path_null = util::header(headers, "Return-Path").is_some_and(|v| {
        let v = v.trim();
        v == "<>" || v.is_empty() || v == "<<>>"
    });
    let auto = util::header(headers, "Auto-Submitted")
        .is_some_and(|v| !v.trim().to_ascii_lowercase().starts_with("no"));
    let report = util::header(headers, "Content-Type").is_some_and(|v| {
        v.to_ascii_lowercase()
            .contains("report-type=delivery-status")
            || v.to_ascii_lowercase()
                .contains("report-type=\"delivery-status")
    });
    let mta_header = evidence::mta_header(headers);
    let mut sig = Signals {
        daemon: is_daemon(&from) || util::header(headers, "X-Mailer-Daemon").is_some(),
        subject: bounce_subject().is_match(&subj),
        reply_prefix: regex!(r"^\s*(re|fwd?|aw|wg|sv|vs|tr|rv|antw|odp|r|i)\s*:").is_match(&subj),
        strong: strong_phrases(&notice),
        weak: weak_phrases().find_iter(&notice).count(),
        machine: return_path_null || auto || report || mta_header || has_original,
        role: evidence::bounce_role_sender(&from),
        list: evidence::list_or_bulk(headers),
        list_post: util::header(headers, "List-Post").is_some(),
        smtp_reply: false,
        policy: 0,
        policy_subject: evidence::policy_subject(&subj),
        mta_header,
        automated: evidence::automated_sender(&from),
        held: false,
        campaign: false,
        away: false,
    };
    if sig.daemon || sig.role || sig.machine || sig.automated || sig.mta_header {
        sig.smtp_reply = evidence::smtp_reply_near_foreign_address(raw_notice, headers);
        sig.policy = evidence::policy_wording(raw_notice);
    }
    if !sig.daemon
        && (sig.subject
            || sig.strong > 0
            || sig.weak > 0
            || sig.role
            || sig.machine
            || sig.automated
            || sig.mta_header)
    {
        sig.held = evidence::moderation_hold(&subj, raw_notice)
            || evidence::quarantine_digest(&subj, raw_notice);
        sig.campaign = evidence::campaign_statistics(raw_notice);
        sig.away = crate::phrases::is_out_of_office(util::truncate(raw_notice, 16 * 1024));
    }
    sig
}

/// A human reply or forward ("Re:", "Fwd:"...) or list/bulk mail not sent by a
/// daemon: report-shaped text in it is quoted, not reported.
pub(crate) fn human_or_list(parsed: &Parsed) -> bool {
    let from = util::header(&parsed.headers, "From")
        .unwrap_or("")
        .to_lowercase();
    let daemon = is_daemon(&from);
    let reply_prefix = regex!(r"^\s*(re|fwd?|aw|wg|sv|vs|tr|rv|antw|odp|r|i)\s*:")
        .is_match(&parsed.subject.to_lowercase());
    !daemon && (reply_prefix || evidence::list_or_bulk(&parsed.headers))
}

pub(crate) fn is_daemon(from: &str) -> bool {
    regex!(
        r"(^|[^a-z])(mailer-daemon|mailer_daemon|mailerdaemon|mail-daemon|maildaemon|postmaster|poostmaster|post_master|mail\.delivery\.system|mail delivery (system|subsystem|service)|mail deliver system|mailer daemon|delivery status notification|ndr administrator|internet mail delivery|e-mail interconnect|content-filter at|interscan mss|mail administrator)([^a-z]|$)"
    )
    .is_match(from)
}

fn bounce_subject() -> &'static regex::Regex {
    regex!(
        r"undeliver|undelivered|returned mail|returning message|return(ed|ing)? to sender|mail failed|mail delivery (failed|failure)|delivery (status|failure|failed|notification|report|has failed|problem|error|delayed)|failure (notice|delivery)|failed delivery|could not be delivered|couldn't be delivered|not delivered|non[- ]?deliver|mail system error|mail failure|postmaster notify|see transcript|could not send message|cannot send message|delayed mail|message you sent blocked|considered unsolicited|there was an error sending|loop alert|mail could not be delivered|nicht zustellbar|unzustellbar|non remis|non distribu|no se puede entregar|no entregado|non recapitabile|onbestelbaar|não é possível entregar|não entregue|недоставленное|не доставлено|配信できません|returned mail"
    )
}

/// MTA boilerplate: long, specific sentences no person writes.
/// How many of the [`STRONG`] phrases the folded notice holds, each counted
/// once: one pass of an Aho-Corasick automaton instead of a substring search
/// per phrase.
fn strong_phrases(notice: &str) -> usize {
    static PHRASES: std::sync::LazyLock<aho_corasick::AhoCorasick> =
        std::sync::LazyLock::new(|| {
            aho_corasick::AhoCorasick::new(STRONG).expect("the phrases are plain strings")
        });
    let mut found = [false; STRONG.len()];
    for m in PHRASES.find_overlapping_iter(notice) {
        found[m.pattern().as_usize()] = true;
    }
    found.iter().filter(|f| **f).count()
}

const STRONG: &[&str] = &[
    "this is the qmail-send program",
    "i'm afraid i wasn't able to deliver your message",
    "this message was created automatically by mail delivery software",
    "a message that you sent could not be delivered",
    "the following address(es) failed",
    "transcript of session follows",
    "the following addresses had permanent fatal errors",
    "the following addresses had transient non-fatal errors",
    "this is the mail system at host",
    "i'm sorry to have to inform you that your message could not",
    "delivery has failed to these recipients or groups",
    "your message did not reach some or all of the intended recipients",
    "delivery to the following recipient failed permanently",
    "delivery to the following recipients failed",
    "delivery to the following recipient has been delayed",
    "delivery to the following recipients has been delayed",
    "sorry, we were unable to deliver your message",
    "unable to deliver message to the following",
    "an error occurred while trying to deliver the mail",
    "this is an automatically generated delivery status notification",
    "we had trouble delivering your message",
    "the following recipients returned permanent errors",
    "message delivery has failed",
    "could not be delivered to one or more recipients",
    "your message couldn't be delivered",
    "your message wasn't delivered",
    "your message was not delivered",
    "was not delivered to:",
    "the original message was received at",
    "this is a delivery status notification",
    "this is an automatically generated message from",
    "message could not be delivered to the following",
    "the following message to <",
    "your mail sent on",
    "the email account that you tried to reach does not exist",
    "ihre nachricht konnte",
    "la remise aux destinataires",
    "error al entregar el mensaje",
    "impossibile recapitare il messaggio",
    "kan niet worden bezorgd",
    "falha na entrega",
    "не может быть доставлено",
    "your message was rejected",
    "message not delivered",
];

fn weak_phrases() -> &'static regex::Regex {
    regex!(
        r"could ?not be delivered|couldn't be delivered|can ?not be delivered|undeliverable|delivery (has )?failed|delivery failure|permanent (fatal )?error|failed permanently|user unknown|unknown user|no such user|mailbox (unavailable|is full|full)|recipient address rejected|address not found|was not delivered|wasn't delivered|unable to deliver|returned mail|has been delayed|retry timeout exceeded|host or domain name not found|not listed in domino directory|duplicated message-id|hop count exceeded|message rejected|unknown host|no valid recipients|failed addresses follow|had delivery problems|rejected your message|nicht zugestellt|n'a pas pu être remis|no se pudo entregar|non è stato recapitato|niet worden bezorgd|não foi possível entregar|не доставлено"
    )
}

/// The part of a notice before the copy of the original message, so addresses and
/// wording of the original (the cold email itself) are not mistaken for the failure.
pub(crate) fn notice(text: &str) -> &str {
    let cut = regex!(
        r"(?im)^[ \t]*[-*=_|]*[ \t]*(below this line is a copy of the message|this is a copy of (the|your) message|(original|returned|undelivered) (message|mail) (follows|headers?|as follows|is attached)|original message[ \t]*[-*=_|]*[ \t]*$|the header of the original message|(original )?message headers? follows?|headers of (the|your) original message|the following is a copy of|forwarded message|content-type: message/rfc822|your message follows|text of (the )?original message|begin (original )?message|unsent message below|message text follows|original mail as follows|rejected message\b)"
    );
    match cut.find(text) {
        Some(m) if m.start() > 0 => &text[..m.start()],
        _ => text,
    }
}

/// The full detector for a message without a usable `message/delivery-status` part.
pub(crate) fn detect(view: &View<'_>, parsed: &Parsed) -> Option<Inspection> {
    let text = view.text();
    let from = util::header(&parsed.headers, "From").unwrap_or("");
    let has_original = view.parts().iter().any(|p| {
        matches!(
            crate::mime::content_type(p).as_str(),
            "message/rfc822" | "text/rfc822-headers" | "message/global"
        )
    });
    let sig = signals_with(from, &parsed.subject, &text, &parsed.headers, has_original);
    if !sig.is_bounce() {
        return None;
    }
    Some(build(view, parsed, &text))
}

/// A `multipart/report; report-type=delivery-status` without usable fields: a
/// bounce by declaration, described from its text.
pub(crate) fn detect_as_report(view: &View<'_>, parsed: &Parsed) -> Option<Inspection> {
    Some(build(view, parsed, &view.text()))
}

fn build(view: &View<'_>, parsed: &Parsed, text: &str) -> Inspection {
    let mut notice_text = notice(text).to_string();
    for extra in view.attached_texts() {
        // Some reports keep their details in an attached text part.
        if extra.len() < 64 * 1024 && weak_phrases().is_match(&extra.to_lowercase()) {
            notice_text.push('\n');
            notice_text.push_str(notice(&extra));
        }
    }
    let rest = &text[notice(text).len()..];
    let recipients = recipients_from_text(&format!("{notice_text}\n{rest}"), parsed, view);
    let status = reason::status_code(&notice_text);
    let why = reason::reason(status.as_deref(), &notice_text);
    let delayed = regex!(r"(?i)\b(delayed|delay\)|warning: could not send|still being retried|will continue trying|not yet been delivered|will be retried)")
        .is_match(&format!("{} {}", parsed.subject, util::truncate(&notice_text, 8192)))
        && !regex!(r"(?i)permanent|failed permanently|given up|gave up").is_match(&notice_text);
    let bounce_type = reason::bounce_type(delayed, status.as_deref(), why, &notice_text);
    crate::dsn::bounce(bounce_type, recipients, status, why)
}

/// The failed addresses a notice names, most specific patterns first; then the
/// `X-Failed-Recipients` header; then the `To` of the attached original. Our own
/// addresses (the bounce's `To`, the original's `From`) and daemons are excluded.
pub(crate) fn recipients_from_text(full: &str, parsed: &Parsed, view: &View<'_>) -> Vec<String> {
    let text = notice(full);
    let mut original = view.original_headers();
    if original.is_empty() && text.len() < full.len() {
        original = inline_original(&full[text.len()..]);
    }
    // Our own addresses: the bounce's To (the original sender), the original's
    // sender fields, and the daemon that wrote the notice.
    let mut exclude: Vec<String> = parsed.to.clone();
    for name in ["From", "Sender", "Return-Path", "Reply-To"] {
        if let Some(h) = util::header(&original, name) {
            exclude.extend(addresses_in(h));
        }
    }
    for name in ["From", "Sender", "Return-Path"] {
        if let Some(h) = util::header(&parsed.headers, name) {
            exclude.extend(addresses_in(h));
        }
    }
    let ok = |a: &String| !exclude.contains(a);
    // Where the address is only mentioned in prose, a daemon address is a contact
    // ("send mail to postmaster@..."), not the failed recipient.
    let ok_prose = |a: &String| ok(a) && !is_daemon(a);

    let text = util::truncate(text, 256 * 1024);
    let patterns: [(&regex::Regex, bool); 5] = [
        (
            regex!(
                r"(?im)^[ \t]*(?:final|original)-recipient:[ \t]*(?:rfc822;)?[ \t]*<?([^\s<>;]+@[^\s<>;]+?)>?[ \t]*$"
            ),
            false,
        ),
        (regex!(r"(?im)^[ \t]*<([^\s<>]+@[^\s<>]+)>"), false),
        (
            regex!(
                r"(?im)^[ \t]*(?:\*[ \t]*)?['\x22]?([^\s<>:,;()\[\]'\x22]+@[^\s<>:,;()\[\]'\x22]+?)['\x22]?[.,;:]*(?:[ \t(].*)?$"
            ),
            false,
        ),
        (
            regex!(r"(?i)rcpt to:[ \t]*<?([^\s<>]+@[^\s<>]+?)>?(?:\s|$)"),
            false,
        ),
        (
            regex!(
                r"(?i)(?:deliver(?:ed|y)?|sent|message|mail|recipients?|address(?:es)?|user|mailbox|destinat\w*|empfänger|destinataires?|destinatarios?|destinatari|geadresseerden|destinatários)[^\n@]{0,60}?[\s:<'(\[]<?([A-Za-z0-9._%+\-=/']+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,})"
            ),
            true,
        ),
    ];
    let mut found = Vec::new();
    for (re, prose) in patterns {
        for c in re.captures_iter(text) {
            if let Some(a) =
                util::clean_address(&c[1]).filter(|a| if prose { ok_prose(a) } else { ok(a) })
            {
                util::push_unique(&mut found, a);
            }
        }
        if !found.is_empty() {
            return found;
        }
    }
    for h in [
        "X-Failed-Recipients",
        "X-Original-Recipient",
        "Original-Recipient",
    ] {
        if let Some(v) = util::header(&parsed.headers, h) {
            found.extend(addresses_in(v).into_iter().filter(&ok));
        }
    }
    if found.is_empty()
        && let Some(to) = util::header(&original, "To")
    {
        found.extend(addresses_in(to).into_iter().filter(&ok));
    }
    if found.is_empty() {
        // Last resort: the only foreign address the notice mentions.
        let mut any = Vec::new();
        for c in regex!(r"([A-Za-z0-9._%+\-=]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,})").captures_iter(text)
        {
            if let Some(a) = util::clean_address(&c[1]).filter(ok_prose) {
                util::push_unique(&mut any, a);
            }
        }
        if any.len() == 1 {
            found = any;
        }
    }
    let mut unique = Vec::new();
    for a in found {
        util::push_unique(&mut unique, a);
    }
    unique
}

/// The header block of an original message pasted after the notice (qmail,
/// Exim, Sendmail): the marker line is skipped and the rest parsed as headers.
fn inline_original(rest: &str) -> Vec<(String, String)> {
    let body = rest
        .split_once('\n')
        .map_or("", |(_, b)| b)
        .trim_start_matches(['\r', '\n']);
    let lines: String = body
        .lines()
        .map(str::trim_start)
        .take(200)
        .collect::<Vec<_>>()
        .join("\n");
    crate::mime::parse_headers(lines.as_bytes())
        .and_then(|m| {
            m.parts
                .first()
                .map(|p| crate::mime::header_pairs(lines.as_bytes(), &p.headers, 200))
        })
        .unwrap_or_default()
}

/// Every address in a header-ish string.
pub(crate) fn addresses_in(value: &str) -> Vec<String> {
    regex!(r"([A-Za-z0-9._%+\-=/']+@[A-Za-z0-9.\-]+)")
        .captures_iter(value)
        .filter_map(|c| util::clean_address(&c[1]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_human_mentioning_failures_is_not_a_bounce() {
        let s = signals(
            "Anna <anna@example.com>",
            "Re: Quick question",
            "Your last mail could not be delivered to my colleague, user unknown apparently.",
            &[],
        );
        assert!(!s.is_bounce());
    }

    #[test]
    fn a_daemon_with_failure_wording_is_a_bounce() {
        let s = signals(
            "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
            "Delivery Status Notification (Failure)",
            "Delivery to the following recipient failed permanently:\n\n jo@example.com",
            &[],
        );
        assert!(s.is_bounce());
    }

    #[test]
    fn notice_stops_at_the_copy() {
        let t = "failed: a@b.org\n--- Below this line is a copy of the message.\nTo: c@d.org";
        assert_eq!(notice(t), "failed: a@b.org\n");
    }
}
