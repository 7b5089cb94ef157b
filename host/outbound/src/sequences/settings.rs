//! The keys of a sequence's free-form `settings` object that the sender
//! reads. The object is stored exactly as given; these keys are checked so
//! a typo in a time zone answers 400 at once instead of silently never
//! sending. Unknown keys are kept and ignored.
//!
//! ```json
//! {"send_window": {"start": "09:00", "end": "17:00",
//!                  "days": ["mon", "tue", "wed", "thu", "fri"],
//!                  "timezone": "Europe/Berlin"},
//!  "track_opens": true, "track_clicks": true, "stop_on_reply": true}
//! ```
//!
//! `timezone` is an IANA zone or `recipient`, meaning the enrollment
//! metadata's `timezone` (an IANA zone; UTC when absent or unknown).

use chrono::{DateTime, Datelike, NaiveTime, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use serde_json::{Map, Value};

/// The largest settings object accepted, serialised.
pub const MAX_SETTINGS_BYTES: usize = 16 * 1024;

const DAYS: [(&str, Weekday); 7] = [
    ("mon", Weekday::Mon),
    ("tue", Weekday::Tue),
    ("wed", Weekday::Wed),
    ("thu", Weekday::Thu),
    ("fri", Weekday::Fri),
    ("sat", Weekday::Sat),
    ("sun", Weekday::Sun),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    Fixed(Tz),
    /// The enrollment metadata's `timezone`.
    Recipient,
}

/// Hours of the day and days of the week in which steps may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendWindow {
    pub start: NaiveTime,
    pub end: NaiveTime,
    pub days: Vec<Weekday>,
    pub zone: Zone,
}

/// What the sender reads from `settings`, with the defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSettings {
    /// `None`: any time of any day.
    pub send_window: Option<SendWindow>,
    pub track_opens: bool,
    pub track_clicks: bool,
    /// Default true: a reply ends the contact's enrollment.
    pub stop_on_reply: bool,
}

impl SendWindow {
    /// Whether `at` falls in the window for a recipient in `recipient_zone`.
    pub fn contains(&self, at: DateTime<Utc>, recipient_zone: Option<&str>) -> bool {
        let zone = match self.zone {
            Zone::Fixed(tz) => tz,
            Zone::Recipient => recipient_zone
                .and_then(|z| z.parse::<Tz>().ok())
                .unwrap_or(Tz::UTC),
        };
        let local = at.with_timezone(&zone);
        let time = NaiveTime::from_hms_opt(local.hour(), local.minute(), 0).unwrap_or_default();
        self.days.contains(&local.weekday()) && time >= self.start && time < self.end
    }
}

/// Checks the known keys of `settings`; the error is the 400 detail.
pub fn parse(settings: &Value) -> Result<EngineSettings, String> {
    let Value::Object(map) = settings else {
        return Err("settings must be a JSON object".into());
    };
    if settings.to_string().len() > MAX_SETTINGS_BYTES {
        return Err(format!(
            "settings must be at most {MAX_SETTINGS_BYTES} bytes"
        ));
    }
    let flag = |key: &str, default: bool| match map.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("settings.{key} must be a boolean")),
    };
    Ok(EngineSettings {
        send_window: match map.get("send_window") {
            None | Some(Value::Null) => None,
            Some(Value::Object(w)) => Some(window(w)?),
            Some(_) => return Err("settings.send_window must be an object".into()),
        },
        track_opens: flag("track_opens", true)?,
        track_clicks: flag("track_clicks", true)?,
        stop_on_reply: flag("stop_on_reply", true)?,
    })
}

fn window(w: &Map<String, Value>) -> Result<SendWindow, String> {
    let time = |key: &str, default: &str| -> Result<NaiveTime, String> {
        let text = match w.get(key) {
            None | Some(Value::Null) => default,
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(format!("settings.send_window.{key} must be \"HH:MM\"")),
        };
        NaiveTime::parse_from_str(text, "%H:%M")
            .map_err(|_| format!("settings.send_window.{key} must be \"HH:MM\""))
    };
    let (start, end) = (time("start", "09:00")?, time("end", "17:00")?);
    if start >= end {
        return Err("settings.send_window.start must be before end".into());
    }
    let days = match w.get("days") {
        None | Some(Value::Null) => DAYS[..5].iter().map(|d| d.1).collect(),
        Some(Value::Array(list)) if !list.is_empty() => {
            let mut days = Vec::new();
            for d in list {
                let name = d.as_str().map(|s| s.trim().to_ascii_lowercase());
                let day = DAYS
                    .iter()
                    .find(|(n, _)| name.as_deref().is_some_and(|s| s.starts_with(n)))
                    .ok_or("settings.send_window.days holds mon, tue, wed, thu, fri, sat, sun")?;
                if !days.contains(&day.1) {
                    days.push(day.1);
                }
            }
            days
        }
        Some(_) => return Err("settings.send_window.days must be a non-empty array".into()),
    };
    let zone = match w.get("timezone") {
        None | Some(Value::Null) => Zone::Fixed(Tz::UTC),
        Some(Value::String(s)) if s == "recipient" => Zone::Recipient,
        Some(Value::String(s)) => Zone::Fixed(s.parse::<Tz>().map_err(|_| {
            format!("settings.send_window.timezone: unknown time zone {s:?} (an IANA name or \"recipient\")")
        })?),
        Some(_) => return Err("settings.send_window.timezone must be a string".into()),
    };
    Ok(SendWindow {
        start,
        end,
        days,
        zone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_a_full_window() {
        let s = parse(&json!({})).unwrap();
        assert!(s.send_window.is_none() && s.track_opens && s.track_clicks && s.stop_on_reply);
        let s = parse(&json!({"send_window": {"start": "08:30", "end": "12:00",
            "days": ["Mon", "saturday"], "timezone": "America/New_York"}, "stop_on_reply": false,
            "quiet_hours": "kept"}))
        .unwrap();
        let w = s.send_window.unwrap();
        assert!(!s.stop_on_reply);
        assert_eq!(w.days, vec![Weekday::Mon, Weekday::Sat]);
        // Monday 2026-11-23 14:00 UTC is 09:00 in New York: inside.
        let at = "2026-11-23T14:00:00Z".parse().unwrap();
        assert!(w.contains(at, None));
        // 17:30 UTC is 12:30 there: outside.
        assert!(!w.contains("2026-11-23T17:30:00Z".parse().unwrap(), None));
    }

    #[test]
    fn the_recipient_zone_comes_from_metadata() {
        let w = parse(&json!({"send_window": {"timezone": "recipient"}}))
            .unwrap()
            .send_window
            .unwrap();
        let at = "2026-11-23T08:30:00Z".parse().unwrap();
        assert!(!w.contains(at, None));
        assert!(w.contains(at, Some("Europe/Berlin")));
        assert!(!w.contains(at, Some("Not/AZone")));
    }

    #[test]
    fn bad_keys_are_named() {
        for (bad, needle) in [
            (json!([]), "object"),
            (json!({"track_opens": "yes"}), "track_opens"),
            (
                json!({"send_window": {"timezone": "Mars/Base"}}),
                "Mars/Base",
            ),
            (
                json!({"send_window": {"start": "18:00", "end": "09:00"}}),
                "before",
            ),
            (json!({"send_window": {"start": "9am"}}), "HH:MM"),
            (json!({"send_window": {"days": ["funday"]}}), "days"),
            (json!({"send_window": {"days": []}}), "days"),
        ] {
            let e = parse(&bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }
}
