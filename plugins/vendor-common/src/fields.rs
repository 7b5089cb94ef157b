//! Reading loosely typed vendor JSON into canonical field values.
//!
//! Vendors disagree on types (ZeroBounce sends credits as a string, Hunter
//! sends headcount as "1K-5K"), so every reader accepts the shapes seen in
//! the vendors' documentation and answers `None` for anything else rather
//! than failing the whole call over one odd field.

use serde_json::Value;

/// A non-empty, trimmed string.
pub fn text(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A number, also when sent as a numeric string ("2375323", "1.5e6").
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|n| n.is_finite())
}

/// An integer, also when sent as a string or as a float with no fraction.
pub fn integer(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    number(v)
        .filter(|n| n.fract() == 0.0 && n.abs() < 9.0e15)
        .map(|n| n as i64)
}

/// A boolean, also when sent as "yes"/"no" or "true"/"false" (Bouncer and
/// ZeroBounce spell booleans as strings); "unknown" and the like are `None`.
pub fn flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "yes" | "true" | "1" => Some(true),
            "no" | "false" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A founding year from a number, "2010" or a date such as "2010-05-01",
/// limited to plausible years so that a timestamp is not taken for one.
pub fn year(v: &Value) -> Option<i32> {
    let y = match v {
        Value::Number(_) => integer(v)?,
        Value::String(s) => s.trim().get(..4)?.parse::<i64>().ok()?,
        _ => return None,
    };
    (1000..=2200).contains(&y).then_some(y as i32)
}

/// The strings of an array, skipping empty and non-string items.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(text).collect())
        .unwrap_or_default()
}

/// The headcount bucket an exact count falls in, using the LinkedIn-style
/// buckets that the vendors' own ranges follow ("51-200", "10001+").
pub fn employee_bucket(count: i64) -> Option<String> {
    const BOUNDS: [(i64, i64); 8] = [
        (1, 10),
        (11, 50),
        (51, 200),
        (201, 500),
        (501, 1000),
        (1001, 5000),
        (5001, 10000),
        (10001, i64::MAX),
    ];
    if count < 1 {
        return None;
    }
    BOUNDS
        .iter()
        .find(|(lo, hi)| (*lo..=*hi).contains(&count))
        .map(|(lo, hi)| {
            if *hi == i64::MAX {
                format!("{lo}+")
            } else {
                format!("{lo}-{hi}")
            }
        })
}

/// A vendor's headcount range in the canonical digits-and-dash form:
/// "1K-5K" becomes "1000-5000", "10K+" becomes "10000+", "51 - 200" loses its
/// spaces. Anything without a digit is dropped.
pub fn employee_range(v: &Value) -> Option<String> {
    let raw = text(v)?;
    if !raw.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut out = String::new();
    for c in raw.chars().filter(|c| !c.is_whitespace() && *c != ',') {
        // A K or M multiplies only the number it follows ("5K"), never a word.
        let after_digit = out.ends_with(|p: char| p.is_ascii_digit());
        match c {
            'k' | 'K' if after_digit => out.push_str("000"),
            'm' | 'M' if after_digit => out.push_str("000000"),
            _ => out.push(c),
        }
    }
    Some(out)
}

/// A LinkedIn URL with a scheme; vendors often send "linkedin.com/company/x".
pub fn linkedin_url(v: &Value) -> Option<String> {
    let s = text(v)?;
    Some(if s.starts_with("http://") || s.starts_with("https://") {
        s
    } else {
        format!("https://{s}")
    })
}

/// A Twitter/X handle without "@" from either a handle or a profile URL.
pub fn twitter_handle(v: &Value) -> Option<String> {
    let s = text(v)?;
    let s = s.trim_end_matches('/');
    let handle = match s.rfind("twitter.com/").or_else(|| s.rfind("x.com/")) {
        Some(i) => s[i..].split_once('/').map(|(_, h)| h).unwrap_or(""),
        None => s,
    };
    let handle = handle
        .split(['?', '/'])
        .next()
        .unwrap_or("")
        .trim_start_matches('@');
    (!handle.is_empty()).then(|| handle.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn loose_scalars() {
        assert_eq!(number(&json!("2375323")), Some(2375323.0));
        assert_eq!(integer(&json!("42")), Some(42));
        assert_eq!(integer(&json!(7.0)), Some(7));
        assert_eq!(integer(&json!("n/a")), None);
        assert_eq!(flag(&json!("yes")), Some(true));
        assert_eq!(flag(&json!("unknown")), None);
        assert_eq!(text(&json!("  ")), None);
        assert_eq!(year(&json!("2010-05-01")), Some(2010));
        assert_eq!(year(&json!(1699999999)), None);
        assert_eq!(strings(&json!(["a", "", 3, "b"])), vec!["a", "b"]);
    }

    #[test]
    fn headcounts() {
        assert_eq!(employee_bucket(140).as_deref(), Some("51-200"));
        assert_eq!(employee_bucket(20000).as_deref(), Some("10001+"));
        assert_eq!(employee_bucket(0), None);
        assert_eq!(
            employee_range(&json!("1K-5K")).as_deref(),
            Some("1000-5000")
        );
        assert_eq!(employee_range(&json!("10K+")).as_deref(), Some("10000+"));
        assert_eq!(employee_range(&json!("unknown")), None);
    }

    #[test]
    fn social_links() {
        assert_eq!(
            linkedin_url(&json!("linkedin.com/company/acme")).as_deref(),
            Some("https://linkedin.com/company/acme")
        );
        assert_eq!(
            twitter_handle(&json!("https://twitter.com/acme/")).as_deref(),
            Some("acme")
        );
        assert_eq!(
            twitter_handle(&json!("x.com/acme?lang=en")).as_deref(),
            Some("acme")
        );
        assert_eq!(twitter_handle(&json!("@acme")).as_deref(), Some("acme"));
    }
}
