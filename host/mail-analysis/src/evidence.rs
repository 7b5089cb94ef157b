//! Vendor-independent evidence that a message reports a delivery failure, for the
//! notices that follow no standard: who sent it (a bounce-handling, list-manager
//! or filtering role rather than a person), whether it is list or bulk mail, and
//! whether its text carries an SMTP reply (`5.x.x`, `550 ...`) next to an address
//! that is neither the sender's nor ours. Cloud sending services, list managers
//! (Mailman, LISTSERV, Sympa, ezmlm, fml) and filtering appliances (Barracuda,
//! Proofpoint, Symantec/MessageLabs, IronPort, Trend Micro, McAfee, Sophos,
//! Mimecast) all write such notices in their own words; these signals do not
//! depend on the words.

use crate::util::{self, wregex as regex};

/// A sender address whose role is handling bounces, mailing lists or filtering:
/// `bounces@`, `bounce-…@`, `…-bounces@`, `…-owner@`, `owner-…@`, `listserv@`,
/// `quarantine@`, `…filter@`..., or a filtering product named in the display
/// name. People do not write from these; the strict daemon names (mailer-daemon,
/// postmaster) are `mta::is_daemon`.
pub(crate) fn bounce_role_sender(from: &str) -> bool {
    let from = from.to_lowercase();
    let local_role = crate::mta::addresses_in(&from).iter().any(|a| {
        let local = a.split('@').next().unwrap_or("");
        regex!(
            r"^(bounces?|bounce[-+._=].*|.*[-+._]bounces?|.*-bounces[-+=].*|bouncehandler|bounce-?handler|ndr|dsn|returns?|return-?path|undeliver\w*|delivery-?(status|failure|report|notification)s?|fail(ed|ures?)|quarantine\w*|spam-?(filter|quarantine|control)|antispam|anti-spam|mailscanner|mail-?filter|post-?filter|content-?filter|mailguard|mail-?security|email-?security|mail-?gateway|mailsweeper|mailmarshal|mailer|listserv|majordomo|sympa|mailman|ezmlm|fml)$"
        )
        .is_match(local)
            // List-owner aliases (`…-owner`, `owner-…`, `…-admin`) only on a list
            // host: "product-owner@" or "office-admin@" is a person.
            || (regex!(r"^(.+-owner|owner-.+|.+-admin)$").is_match(local)
                && regex!(r"@(lists?|ml|listserv|groups|mailman|sympa|majordomo|listes|liste|listas)\.")
                    .is_match(a))
    });
    local_role
        || regex!(
            r"(^|[^a-z])(l-soft list server|listserv|mailman|sympa|majordomo|barracuda|proofpoint|symantec|messagelabs|ironport|trend ?micro|interscan|mcafee|sophos|mimecast|mailmarshal|spam firewall|email security|mail security|e-mail security|mailscanner)([^a-z]|$)"
        )
        .is_match(&from)
}

/// An automated but not bounce-specific sender (`no-reply@`, `donotreply@`,
/// `notifications@`): newsletters and receipts come from these too, so it only
/// counts with an SMTP reply next to a foreign address and failure wording.
pub(crate) fn automated_sender(from: &str) -> bool {
    crate::mta::addresses_in(&from.to_lowercase()).iter().any(|a| {
        let local = a.split('@').next().unwrap_or("");
        regex!(r"^(no-?reply|do-?not-?reply|donotreply|noreply-.+|.+-noreply|notifications?|notify|alerts?|system|automailer|auto-?mailer|daemon|robot)$")
            .is_match(local)
    })
}

/// A moderation hold ("held until the list moderator can review it", "awaiting
/// approval"): the message may still be delivered, so it is not a bounce.
pub(crate) fn moderation_hold(subject: &str, notice: &str) -> bool {
    let text = format!("{} {}", subject, util::truncate(notice, 16 * 1024));
    regex!(
        r"(?i)\b(held|being held|is held|awaits?|awaiting|pending|requires?) (for |until |the )?(the )?(list )?(moderat|approval|review)|\bmoderator('s)? approval\b|\bzur freigabe\b|\ben attente de (modération|validation|approbation)\b|\bin attesa di (moderazione|approvazione)\b|\bpendiente de (moderación|aprobación)\b"
    )
    .is_match(&text)
}

/// A sending report about many messages (a campaign summary: "Sent: 1,240
/// Delivered: 1,221 Bounced: 12"), not a report that one message failed, even
/// when it quotes a bounce reason: two or more counters.
pub(crate) fn campaign_statistics(notice: &str) -> bool {
    let text = util::fold(util::truncate(notice, 16 * 1024));
    regex!(
        r"\b(sent|delivered|bounced|bounces|hard bounces|soft bounces|opens|opened|clicks|clicked|complaints|unsubscribes|recipients|open rate|click rate|delivery rate|bounce rate|zugestellt|versendet|envoyés|délivrés|enviados|entregados|inviati|consegnati|verzonden|afgeleverd|entregues)\s*:?\s*[0-9][0-9,.]*%?"
    )
    .find_iter(&text)
    .count()
        >= 2
}

/// A quarantine digest or release notice about mail sent *to* the reader ("You
/// have 3 messages in quarantine", "review these messages", "release"): about
/// inbound mail held by the reader's own filter, not about our message failing.
pub(crate) fn quarantine_digest(subject: &str, notice: &str) -> bool {
    let text = util::fold(&format!(
        "{} {}",
        subject,
        util::truncate(notice, 16 * 1024)
    ));
    regex!(
        r"\b(you have|there (is|are)) (\d+ )?(new )?(messages?|e-?mails?) (in|held in|waiting in|in your) (your |the )?(quarantine|spam|junk)|\bmessages? (held|waiting|quarantined) for you\b|\b(quarantine|spam) (summary|digest|report)\b|\breview (these|the|your) (quarantined )?messages\b|\brelease (this|the|these) messages?\b|\bsie haben \d* ?(neue )?nachrichten in (der )?quarantäne\b|\bvous avez \d* ?(nouveaux )?messages en quarantaine\b"
    )
    .is_match(&text)
}

/// List or bulk mail (a list post, a newsletter: `List-Id`, `List-Unsubscribe`,
/// `List-Post`): never a delivery report unless a daemon sent it, it carries a
/// report structure, or it is a list manager's own notice. `Precedence: bulk`
/// alone does not count: MTAs put it on their bounces too.
pub(crate) fn list_or_bulk(headers: &[(String, String)]) -> bool {
    ["List-Id", "List-Unsubscribe", "List-Post"]
        .iter()
        .any(|h| util::header(headers, h).is_some())
}

/// Whether an MTA-only header is present: `X-Failed-Recipients` (Exim and others
/// name the failed addresses there) or `X-Mailer-Daemon`.
pub(crate) fn mta_header(headers: &[(String, String)]) -> bool {
    util::header(headers, "X-Failed-Recipients").is_some_and(|v| v.contains('@'))
        || util::header(headers, "X-Mailer-Daemon").is_some()
}

/// Whether the notice carries an SMTP reply (an enhanced status `4.x.x`/`5.x.x`,
/// or a `4xx`/`5xx` reply code followed by text) within a few lines of an address
/// that is not one of the message's own (From, To, Cc, Reply-To, Sender) and not
/// a daemon's: the failed recipient and the remote server's answer.
pub(crate) fn smtp_reply_near_foreign_address(notice: &str, headers: &[(String, String)]) -> bool {
    let notice = util::truncate(notice, 64 * 1024);
    let mut own: Vec<String> = Vec::new();
    for name in ["From", "To", "Cc", "Reply-To", "Sender", "Return-Path"] {
        for (n, v) in headers {
            if n.eq_ignore_ascii_case(name) {
                own.extend(crate::mta::addresses_in(v));
            }
        }
    }
    let codes: Vec<usize> = smtp_replies(notice);
    if codes.is_empty() {
        return false;
    }
    let addresses: Vec<usize> = regex!(r"[A-Za-z0-9._%+\-=/']+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
        .find_iter(notice)
        .filter(|m| {
            util::clean_address(m.as_str()).is_some_and(|a| {
                !own.contains(&a) && !crate::mta::is_daemon(&a) && !bounce_role_sender(&a)
            })
        })
        .map(|m| m.start())
        .collect();
    codes
        .iter()
        .any(|c| addresses.iter().any(|a| a.abs_diff(*c) <= 400))
}

/// Where SMTP replies occur in a text: an enhanced status code (`5.1.1`, not a
/// version number), or a `4xx`/`5xx` reply code where a reply is quoted (at the
/// start of a line, after `:`, `said`, `response`, `error`, `reason`, `reply`,
/// `<<<`, or followed by an enhanced code), so "order 550 shipped" is not one.
fn smtp_replies(text: &str) -> Vec<usize> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    for m in regex!(r"\b[45]\.[0-7]\.[0-9]{1,3}\b").find_iter(&lower) {
        let before = &lower[..m.start()];
        let prefix = before.trim_end();
        let version = regex!(r"(version|release|v|ver\.|build|update|patch|[0-9]\.)$")
            .is_match(prefix)
            || before.ends_with('.')
            || before.ends_with('v');
        if !version {
            out.push(m.start());
        }
    }
    for m in regex!(r"\b(4[2-5][0-9]|5[0-5][0-9])\b").find_iter(&lower) {
        let before = lower[..m.start()].trim_end_matches([' ', '\t', '"', '\'', '(', '[']);
        let after = &lower[m.end()..];
        let quoted = before.is_empty()
            || before.ends_with('\n')
            || before.ends_with(':')
            || before.ends_with(';')
            || before.ends_with("<<<")
            || regex!(r"(said|says|response|responded|replied|reply|error|reason|code|answer|status|smtp|antwort|fehler|grund|erreur|raison|réponse|respuesta|motivo|errore|risposta|fout|reden|resposta)$").is_match(before);
        let enhanced_follows = regex!(r"^[ -]+[45]\.[0-7]\.[0-9]{1,3}\b").is_match(after);
        if quoted || enhanced_follows {
            out.push(m.start());
        }
    }
    out
}

/// Wording of filtering appliances and list managers: a message blocked,
/// quarantined or rejected by a policy or filter, a sender not allowed to post.
/// Only counted together with a role sender or machine markers.
pub(crate) fn policy_wording(notice: &str) -> usize {
    regex!(
        r"(?x)\b(was|were|has\ been|have\ been|been|is|got)\ (blocked|quarantined|rejected|refused|denied|held|stopped|discarded|bounced)\b
        | \bblocked\ by\b|\brejected\ (by|due|because|for)\b|\bquarantin|\b(content|spam|bulk\ e?-?mail|mail|e-?mail|message)\ (filter|firewall|policy)\b
        | \bpolicy\ (violation|reasons?|restriction)\b|\bviolates?\ (the|our)\b
        | \bnot\ (authori[sz]ed|allowed|permitted)\ to\ (send|post|mail)\b|\bnot\ a\ (member|subscriber)\b|\bnon-?member\b|\bmembers?\ only\b|\brejected\ posting\b
        | \bblockiert\b|\babgelehnt\b|\bzurückgewiesen\b|\bnicht\ zugestellt\b
        | \bbloqué|\brejeté|\brefusé|\bn'avez\ pas\ le\ droit\b|\bréservée?\ aux\ abonnés\b
        | \bbloquead[oa]|\brechazad[oa]|\bbloccat[oa]|\brifiutat[oa]|\brespint[oa]|\bgeblokkeerd\b|\bgeweigerd\b|\bafgewezen\b|\brejeitad[oa]|\brecusad[oa]"
    )
    .find_iter(&util::fold(notice))
    .count()
}

/// A subject saying the message was blocked or rejected (appliances, list
/// managers), counted like [`policy_wording`].
pub(crate) fn policy_subject(subject: &str) -> bool {
    regex!(
        r"(?i)\b(message|mail|e-?mail|posting|nachricht|message)\b.{0,30}\b(blocked|rejected|refused|quarantined|held|blockiert|abgelehnt|bloqué|rejeté|rechazado|bloccato|respinto|geblokkeerd|rejeitad[oa])|\brejected posting\b|\bquarantine (notice|notification|report)\b|\b(hard |soft )?bounced?\b|\bbounce (notification|notice|report|alert)\b|\b(blocked|rejected)\b.{0,20}\b(message|mail|e-?mail)\b|\brejeté|\brejected\b"
    )
    .is_match(subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_senders() {
        for f in [
            "bounces@mailer.example.com",
            "Announce <announce-owner@lists.example.org>",
            "LISTSERV@LISTS.EXAMPLE.EDU",
            "\"Spam Firewall\" <postfilter@gw.example.com>",
            "Trend Micro Email Security <tmems@x.example>",
        ] {
            assert!(bounce_role_sender(f), "{f}");
        }
        for f in [
            "Anna <anna@example.com>",
            "noreply@news.example.com",
            "sales@acme.example",
            "Pia <product-owner@acme.example>",
            "office-admin@acme.example",
        ] {
            assert!(!bounce_role_sender(f), "{f}");
        }
    }

    #[test]
    fn smtp_replies_are_quoted_replies_not_numbers() {
        assert!(!smtp_replies("said: 550 5.1.1 user unknown").is_empty());
        assert!(!smtp_replies("Error: 550 Rejected").is_empty());
        assert!(!smtp_replies("<<< 452 mailbox full").is_empty());
        assert!(smtp_replies("Your order 550 has shipped").is_empty());
        assert!(smtp_replies("Upgrade to version 5.1.1 today").is_empty());
        assert!(smtp_replies("Ticket #450 received").is_empty());
    }

    #[test]
    fn an_smtp_reply_must_sit_next_to_a_foreign_address() {
        let headers = vec![
            ("From".to_string(), "bounces@esp.example".to_string()),
            ("To".to_string(), "mark@outreach.test".to_string()),
        ];
        assert!(smtp_reply_near_foreign_address(
            "Recipient: jo@acme.example\nResponse: 550 5.1.1 no such user",
            &headers
        ));
        assert!(!smtp_reply_near_foreign_address(
            "Sender: mark@outreach.test\nResponse: 550 5.1.1 no such user",
            &headers
        ));
    }
}
