//! Every error detail the specification quotes, in one table. Where spec/1,
//! 2 or 3 gives a detail in quotes, clients compare the text, so the body is
//! exactly `{"detail": "<text>"}`: handlers use these constants and never
//! append to them (what was wrong goes in the status and the request the
//! client made). A detail with a `<placeholder>` is a template the spec
//! fills in; [`matches`] reads it.
//!
//! The server's `spec_details_tests` walks [`SPEC_DETAILS`] and provokes
//! every entry whose area exists; an entry whose area has not landed names
//! the issue that brings it, so adding the area means adding its test.

/// spec/1 "Errors": 401 on API-key routes.
pub const INVALID_API_KEY: &str = "Invalid API key";
/// spec/1 "Errors": 401 on the dashboard's routes; spec/2's automation
/// platform and spreadsheet endpoints.
pub const NOT_AUTHENTICATED: &str = "Not authenticated";
/// spec/1 "Errors": every 403 about the key (suspended account, disabled
/// reseller client, a higher plan needed, an IP not on the allowlist).
pub const NO_ACCESS: &str = "API key does not have access to this resource";
/// spec/1 "Errors": 429, with the wait in seconds (also `Retry-After`).
pub const RATE_LIMITED: &str = "Rate limit exceeded. Try again in <n> seconds.";
/// spec/2 "Spreadsheet export" and "Automation-platform integration": 429.
pub const RATE_LIMIT_EXCEEDED: &str = "Rate limit exceeded";
/// spec/2 "Scoring": 400 for a domain the pool's normalisation refuses.
pub const INVALID_DOMAIN_FORMAT: &str = "Invalid domain format";
/// spec/2 "Scoring" and "Automation-platform integration": 404.
pub const DOMAIN_NOT_FOUND: &str = "Domain not found";
/// spec/2 "Scoring": 404 for a rule id the account cannot see.
pub const SCORING_RULE_NOT_FOUND: &str = "Scoring rule not found";
/// spec/2 "Spreadsheet export" and "Automation-platform integration": 404
/// for a list that is missing or another account's.
pub const LEAD_LIST_NOT_FOUND: &str = "Lead list not found";
/// spec/2 "Spreadsheet export": 400 before the OAuth flow is completed.
pub const SHEETS_NOT_CONNECTED: &str = "Google Sheets not connected";
/// spec/2 "Spreadsheet export": 400 past the export cap.
pub const EXPORT_TOO_LARGE: &str = "Maximum 500 domains per export";
/// spec/2 "Spreadsheet export": 500 with the spreadsheet service's text.
pub const SHEETS_API_ERROR: &str = "Google API error: <text>";
/// spec/3 "Vendor keys": AI features with no AI key connected (400 here).
pub const NO_BYOK_PROVIDER: &str = "No BYOK provider connected";
/// spec/3 "Errors": the error text of an `http_request` action the SSRF
/// guard refused (in the action's result, not a response body).
pub const BLOCKED_BY_SSRF_GUARD: &str = "Blocked by SSRF guard";

/// One quoted detail: the status it goes with, where the spec quotes it,
/// and the issue that brings its area when that area has not landed.
#[derive(Debug, Clone, Copy)]
pub struct SpecDetail {
    pub status: u16,
    pub detail: &'static str,
    pub spec: &'static str,
    pub pending: Option<&'static str>,
}

const fn here(status: u16, detail: &'static str, spec: &'static str) -> SpecDetail {
    SpecDetail {
        status,
        detail,
        spec,
        pending: None,
    }
}

// Every quoted detail's area has landed; the next one that lands pending
// uses this.
#[allow(dead_code)]
const fn later(
    status: u16,
    detail: &'static str,
    spec: &'static str,
    issue: &'static str,
) -> SpecDetail {
    SpecDetail {
        status,
        detail,
        spec,
        pending: Some(issue),
    }
}

/// Every quoted detail of the three documents.
pub const SPEC_DETAILS: &[SpecDetail] = &[
    here(401, INVALID_API_KEY, "spec/1 Errors"),
    here(401, NOT_AUTHENTICATED, "spec/1 Errors; spec/2 integrations"),
    here(403, NO_ACCESS, "spec/1 Errors"),
    here(429, RATE_LIMITED, "spec/1 Errors"),
    here(400, INVALID_DOMAIN_FORMAT, "spec/2 Scoring"),
    here(404, DOMAIN_NOT_FOUND, "spec/2 Scoring"),
    here(404, SCORING_RULE_NOT_FOUND, "spec/2 Scoring"),
    here(
        404,
        LEAD_LIST_NOT_FOUND,
        "spec/2 Spreadsheet export, integrations",
    ),
    here(400, NO_BYOK_PROVIDER, "spec/3 Vendor keys"),
    here(429, RATE_LIMIT_EXCEEDED, "spec/2 integrations"),
    here(400, SHEETS_NOT_CONNECTED, "spec/2 Spreadsheet export"),
    here(400, EXPORT_TOO_LARGE, "spec/2 Spreadsheet export"),
    here(500, SHEETS_API_ERROR, "spec/2 Spreadsheet export"),
    here(200, BLOCKED_BY_SSRF_GUARD, "spec/3 Errors (action result)"),
];

/// Whether `detail` is the spec's text `spec`, with each `<placeholder>`
/// standing for a non-empty run of text.
pub fn matches(spec: &str, detail: &str) -> bool {
    let mut parts = spec.split('<');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = detail.strip_prefix(first) else {
        return false;
    };
    let mut placeholders = 0;
    for part in parts {
        placeholders += 1;
        // `part` is `name>literal`: skip at least one character, then find
        // the literal that follows the placeholder.
        let literal = part.split_once('>').map_or("", |(_, l)| l);
        let skip = rest.chars().next().map_or(0, char::len_utf8);
        if skip == 0 {
            return false;
        }
        if literal.is_empty() {
            rest = "";
            continue;
        }
        match rest[skip..].find(literal) {
            Some(at) => rest = &rest[skip + at + literal.len()..],
            None => return false,
        }
    }
    rest.is_empty() && (placeholders > 0 || detail == spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_filled_in_details_only() {
        assert!(matches(
            RATE_LIMITED,
            "Rate limit exceeded. Try again in 12 seconds."
        ));
        assert!(!matches(
            RATE_LIMITED,
            "Rate limit exceeded. Try again in  seconds"
        ));
        assert!(!matches(RATE_LIMITED, "Rate limit exceeded"));
        assert!(matches(SHEETS_API_ERROR, "Google API error: quota"));
        assert!(!matches(SHEETS_API_ERROR, "Google API error: "));
        assert!(matches(LEAD_LIST_NOT_FOUND, "Lead list not found"));
        assert!(!matches(LEAD_LIST_NOT_FOUND, "Lead list not found: 7"));
        assert!(!matches(INVALID_DOMAIN_FORMAT, "Invalid domain format: x"));
    }

    #[test]
    fn every_detail_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for d in SPEC_DETAILS {
            assert!(seen.insert(d.detail), "{} twice", d.detail);
        }
    }
}
