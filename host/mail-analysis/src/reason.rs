//! Failure categories and hard/soft, from the status code and the diagnostic text.

use crate::BounceType;
use crate::util::regex;

/// The category of a failure. The text decides first (it is more specific than a
/// generic 5.0.0 or 5.7.1), then the enhanced status code, then the SMTP code.
pub(crate) fn reason(status: Option<&str>, diagnostic: &str) -> &'static str {
    let d = diagnostic.to_lowercase();
    let text = from_text(&d);
    // Wording that is more informative than any code wins first ...
    if let Some(r @ ("mailbox_full" | "message_too_large" | "relay_denied" | "spam_blocked")) = text
    {
        return r;
    }
    // ... then a code with a specific meaning ...
    if let Some(r) = status.and_then(specific_status) {
        return r;
    }
    // ... then the rest of the wording, then any code.
    if let Some(r) = text.or_else(|| status.and_then(from_status)) {
        return r;
    }
    match smtp_code(&d).as_deref() {
        Some("552") => "mailbox_full",
        Some("550" | "551" | "553") => "user_unknown",
        Some("554") => "policy",
        _ => "other",
    }
}

/// Status codes whose meaning is specific enough to trust over the wording.
fn specific_status(status: &str) -> Option<&'static str> {
    let detail: Vec<&str> = status.split('.').skip(1).collect();
    Some(match detail.as_slice() {
        ["1", "1" | "10"] => "user_unknown",
        ["1", "2"] | ["4", "4"] => "host_unknown",
        ["2", "1"] => "mailbox_disabled",
        ["2", "2"] => "mailbox_full",
        ["2", "3"] | ["3", "4"] => "message_too_large",
        ["4", "7"] => "expired",
        _ => return None,
    })
}

fn from_text(d: &str) -> Option<&'static str> {
    let rules: [(&regex::Regex, &'static str); 10] = [
        (
            regex!(
                r"mailbox (is )?full|over ?quota|quota (exceeded|full)|exceeded (the )?(storage|quota)|insufficient (disk )?space|out of storage|mailbox size limit|storage limit|too much mail|boîte.{0,20}pleine|postfach.{0,20}voll|speicherplatz|mailbox has exceeded|user is over|is full|一杯"
            ),
            "mailbox_full",
        ),
        (
            regex!(
                r"message (size )?(is )?too (big|large)|message size exceeds|exceeds? (the )?(maximum|size limit|message size)|size limit|message length exceeds|mail size|too large"
            ),
            "message_too_large",
        ),
        (
            regex!(
                r"relay(ing)? (access )?(denied|not permitted|prohibited|not allowed)|not permitted to relay|unable to relay|we do not relay|not an open relay|relay not|no relaying"
            ),
            "relay_denied",
        ),
        (
            regex!(
                r"spam|blacklist|blocklist|black list|block list|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|reputation|listed (at|in|on|by)|junk|bulk e?mail|unsolicited|blocked (using|by|because)|\bubce\b|poor reputation|sender (ip|address) (is )?blocked"
            ),
            "spam_blocked",
        ),
        (
            regex!(
                r"suspended|disabled|deactivated|inactive|no longer (active|in use|available|valid|exists)|account (has been |is )?(locked|closed|expired|blocked)|mailbox (is )?(inactive|disabled|locked|unavailable for)"
            ),
            "mailbox_disabled",
        ),
        (
            regex!(
                r"user unknown|unknown user|no such (user|mailbox|recipient|address|account|local user|person)|user (does not|doesn't) exist|(address|mailbox|account|recipient|user)( name)? (does not|doesn't|did not) exist|does not exist|recipient not found|not found by smtp address|recipient address rejected|invalid (recipient|mailbox|address|user)|unknown (recipient|mailbox|address|local)|no mailbox|mailbox not found|mailbox unavailable|address not found|couldn't be found|wasn't found|was not found|not listed in|unrouteable address|user not found|address rejected|bad destination mailbox|account .{0,40} not exist|doesn't have a .{0,30}account|no account by that name|addressee unknown|resolver\.adr\.recipnotfound|recipientnotfound|unknown or illegal alias|utilisateur inconnu|unbekannt"
            ),
            "user_unknown",
        ),
        (
            regex!(
                r"host (or domain name )?not found|host unknown|unknown host|domain (name )?not found|domain (does not|doesn't) exist|no mx|mx (record|lookup)|nxdomain|name service error|dns error|unrouteable (mail )?domain|name or service not known|no such domain|unknown domain|domain (could not|couldn't) be found|domain not found|bad destination host"
            ),
            "host_unknown",
        ),
        (
            regex!(
                r"retry time(out)? (not reached|exceeded)|timeout exceeded|delivery time expired|message expired|expired|giving up|gave up|could not be delivered for|cannot send message for|too long in (the )?queue|has been delayed|could not send message for past"
            ),
            "expired",
        ),
        (
            regex!(
                r"connection (timed out|refused|reset|lost)|timed out|network (is )?unreachable|no route to host|unable to connect|could not connect|connect to .{0,60} failed|hop count exceeded|mail loop|routing loop|loop detected|too many hops|lost connection|\btls\b|temporary failure|try again later|service unavailable"
            ),
            "network",
        ),
        (
            regex!(
                r"policy|not authori[sz]ed|not allowed|rejected (by|due to|for)|dmarc|\bspf\b|dkim|authentication|content (restrictions|filter|rejected)|virus|malware|security|prohibited|refused|access denied|denied"
            ),
            "policy",
        ),
    ];
    rules.iter().find(|(re, _)| re.is_match(d)).map(|(_, r)| *r)
}

fn from_status(status: &str) -> Option<&'static str> {
    let mut it = status.split('.').skip(1);
    let subject = it.next()?;
    let detail = it.next()?;
    Some(match (subject, detail) {
        ("1", "1" | "0" | "3" | "6" | "10") => "user_unknown",
        ("1", "2") => "host_unknown",
        ("1", "8") => "host_unknown",
        ("2", "1") => "mailbox_disabled",
        ("2", "2") => "mailbox_full",
        ("2", "3") | ("3", "4") => "message_too_large",
        ("3", "1") => "mailbox_full",
        ("4", "4") => "host_unknown",
        ("4", "6") => "network",
        ("4", "7") => "expired",
        ("4", _) => "network",
        ("5", _) => "other",
        ("7", _) => "policy",
        _ => return None,
    })
}

/// The first SMTP reply code (`550`, `452`...) in the text.
pub(crate) fn smtp_code(d: &str) -> Option<String> {
    regex!(r"(?:^|[^\d.\-:/])([245][0-5]\d)(?:[ \-]|$)")
        .captures_iter(d)
        .map(|c| c[1].to_string())
        .find(|c| c.starts_with('4') || c.starts_with('5'))
}

/// The first enhanced status code (`5.1.1`) in the text that is not part of a
/// dotted number such as an IP address or a version.
pub(crate) fn status_code(text: &str) -> Option<String> {
    let re = regex!(r"([245])\.(\d{1,3})\.(\d{1,3})");
    for m in re.find_iter(text) {
        let before = text[..m.start()].chars().next_back();
        let after = text[m.end()..].chars().next();
        let glued = |c: Option<char>| {
            c.is_some_and(|c| c.is_ascii_digit() || c == '.' || c.is_ascii_alphabetic())
        };
        let after_bad = after.is_some_and(|c| c.is_ascii_digit() || c.is_ascii_alphabetic())
            || (after == Some('.')
                && text[m.end() + 1..].starts_with(|c: char| c.is_ascii_digit()));
        if glued(before) || after_bad {
            continue;
        }
        let s = m.as_str();
        if s.starts_with('2') {
            continue;
        }
        return Some(s.to_string());
    }
    None
}

/// Hard or soft: 4.x.x, 4xx, `delayed` and a full mailbox are soft, the rest hard.
/// Without any code the wording decides, and a final-sounding notice is hard.
pub(crate) fn bounce_type(
    delayed: bool,
    status: Option<&str>,
    reason: &str,
    text: &str,
) -> BounceType {
    if delayed || reason == "mailbox_full" {
        return BounceType::Soft;
    }
    if let Some(s) = status {
        return if s.starts_with('4') {
            BounceType::Soft
        } else {
            BounceType::Hard
        };
    }
    let t = text.to_lowercase();
    if let Some(code) = smtp_code(&t) {
        return if code.starts_with('4') {
            BounceType::Soft
        } else {
            BounceType::Hard
        };
    }
    let temporary = regex!(
        r"temporar|delayed|will (be )?retr|still (trying|being retried)|warning: |not yet been delivered|deferred|will keep trying|try again later"
    );
    let permanent =
        regex!(r"permanent|fatal|given up|gave up|failed|could not be delivered|undeliverable");
    if temporary.is_match(&t) && !permanent.is_match(&t) {
        BounceType::Soft
    } else {
        BounceType::Hard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_are_found_but_not_inside_ips() {
        assert_eq!(
            status_code("host 192.5.1.1 said: 550 5.1.1 User unknown").as_deref(),
            Some("5.1.1")
        );
        assert_eq!(status_code("(#5.1.1)").as_deref(), Some("5.1.1"));
        assert_eq!(status_code("version 4.2.10.1 ok"), None);
        assert_eq!(
            status_code("2.0.0 Ok then 4.4.7 expired").as_deref(),
            Some("4.4.7")
        );
    }

    #[test]
    fn reasons() {
        assert_eq!(
            reason(Some("5.1.1"), "550 5.1.1 User unknown"),
            "user_unknown"
        );
        assert_eq!(reason(Some("5.2.2"), "mailbox is full"), "mailbox_full");
        assert_eq!(
            reason(
                Some("5.7.1"),
                "Message rejected as spam by Content Filtering"
            ),
            "spam_blocked"
        );
        assert_eq!(reason(Some("5.7.1"), "Relay access denied"), "relay_denied");
        assert_eq!(
            reason(None, "Host or domain name not found. Name service error"),
            "host_unknown"
        );
        assert_eq!(reason(Some("4.4.7"), ""), "expired");
        assert_eq!(reason(Some("5.3.4"), ""), "message_too_large");
        assert_eq!(reason(None, "nothing useful"), "other");
    }

    #[test]
    fn hard_and_soft() {
        assert_eq!(
            bounce_type(false, Some("5.1.1"), "user_unknown", ""),
            BounceType::Hard
        );
        assert_eq!(
            bounce_type(false, Some("4.2.0"), "other", ""),
            BounceType::Soft
        );
        assert_eq!(
            bounce_type(true, Some("5.0.0"), "other", ""),
            BounceType::Soft
        );
        assert_eq!(
            bounce_type(false, Some("5.2.2"), "mailbox_full", ""),
            BounceType::Soft
        );
        assert_eq!(
            bounce_type(false, None, "other", "host said: 451 try later"),
            BounceType::Soft
        );
        assert_eq!(
            bounce_type(false, None, "other", "This is a permanent error"),
            BounceType::Hard
        );
    }
}
