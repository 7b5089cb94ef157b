//! The keys of a sequence's free-form `settings` object that the sender
//! reads. The object is stored exactly as given; these keys are checked so
//! a typo in a time zone answers 400 at once instead of silently never
//! sending. Unknown keys are kept and ignored.
//!
//! ```json
//! {"send_window": {"start": "09:00", "end": "17:00",
//!                  "days": ["mon", "tue", "wed", "thu", "fri"],
//!                  "timezone": "Europe/Berlin"},
//!  "quiet_hours": {"start": "12:00", "end": "13:00"},
//!  "track_opens": true, "track_clicks": true, "stop_on_reply": true}
//! ```
//!
//! `timezone` is an IANA zone or `recipient`, meaning the enrollment
//! metadata's `timezone` (an IANA zone; UTC when absent or unknown).
//! `quiet_hours` is a span in which nothing is sent, in the window's zone
//! (UTC without a window); it may wrap midnight (`22:00`-`07:00`). Times are
//! wall-clock times, so a window follows daylight saving time.

use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Timelike, Utc, Weekday};
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
    /// A daily span in which nothing is sent.
    pub quiet_hours: Option<QuietHours>,
    pub track_opens: bool,
    pub track_clicks: bool,
    /// Default true: a reply ends the contact's enrollment.
    pub stop_on_reply: bool,
}

/// A daily span without sends; `start > end` wraps midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

impl QuietHours {
    fn contains(&self, t: NaiveTime) -> bool {
        if self.start <= self.end {
            t >= self.start && t < self.end
        } else {
            t >= self.start || t < self.end
        }
    }
}

impl Zone {
    fn resolve(self, recipient_zone: Option<&str>) -> Tz {
        match self {
            Zone::Fixed(tz) => tz,
            Zone::Recipient => recipient_zone
                .and_then(|z| z.parse::<Tz>().ok())
                .unwrap_or(Tz::UTC),
        }
    }
}

fn wall_time(at: DateTime<Utc>, zone: Tz) -> (Weekday, NaiveTime) {
    let local = at.with_timezone(&zone);
    let time = NaiveTime::from_hms_opt(local.hour(), local.minute(), 0).unwrap_or_default();
    (local.weekday(), time)
}

impl SendWindow {
    /// Whether `at` falls in the window for a recipient in `recipient_zone`.
    pub fn contains(&self, at: DateTime<Utc>, recipient_zone: Option<&str>) -> bool {
        let (day, time) = wall_time(at, self.zone.resolve(recipient_zone));
        self.days.contains(&day) && time >= self.start && time < self.end
    }
}

impl EngineSettings {
    fn zone(&self, recipient_zone: Option<&str>) -> Tz {
        self.send_window
            .as_ref()
            .map_or(Tz::UTC, |w| w.zone.resolve(recipient_zone))
    }

    /// Whether a step may be sent at `at` (inside the window, outside quiet hours).
    pub fn allows(&self, at: DateTime<Utc>, recipient_zone: Option<&str>) -> bool {
        let in_window = self
            .send_window
            .as_ref()
            .is_none_or(|w| w.contains(at, recipient_zone));
        let quiet = self.quiet_hours.is_some_and(|q| {
            let (_, time) = wall_time(at, self.zone(recipient_zone));
            q.contains(time)
        });
        in_window && !quiet
    }

    /// The first moment at or after `at` when a step may be sent: `at`
    /// itself when allowed, else the next window opening or end of quiet
    /// hours that is allowed. Candidates are wall-clock times converted in
    /// the zone, so they move with daylight saving time; a time that does
    /// not exist on a spring-forward day is taken an hour later.
    pub fn next_allowed(&self, at: DateTime<Utc>, recipient_zone: Option<&str>) -> DateTime<Utc> {
        if self.allows(at, recipient_zone) {
            return at;
        }
        let zone = self.zone(recipient_zone);
        let today = at.with_timezone(&zone).date_naive();
        let starts = [
            self.send_window.as_ref().map(|w| w.start),
            self.quiet_hours.map(|q| q.end),
        ];
        let mut best: Option<DateTime<Utc>> = None;
        for offset in 0..9 {
            let date = today + Duration::days(offset);
            for time in starts.iter().flatten() {
                let naive = date.and_time(*time);
                let local = zone.from_local_datetime(&naive).earliest().or_else(|| {
                    zone.from_local_datetime(&(naive + Duration::hours(1)))
                        .earliest()
                });
                let Some(candidate) = local.map(|l| l.with_timezone(&Utc)) else {
                    continue;
                };
                if candidate >= at
                    && self.allows(candidate, recipient_zone)
                    && best.is_none_or(|b| candidate < b)
                {
                    best = Some(candidate);
                }
            }
            if best.is_some() {
                break;
            }
        }
        // Settings that never allow a send (a window wholly inside quiet
        // hours) check again a day later rather than spinning.
        best.unwrap_or(at + Duration::days(1))
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
        quiet_hours: match map.get("quiet_hours") {
            None | Some(Value::Null) => None,
            Some(Value::Object(q)) => Some(quiet_hours(q)?),
            Some(_) => return Err("settings.quiet_hours must be an object".into()),
        },
        track_opens: flag("track_opens", true)?,
        track_clicks: flag("track_clicks", true)?,
        stop_on_reply: flag("stop_on_reply", true)?,
    })
}

/// The `HH:MM` time under `key` of the object `section`, or `default`.
fn time_of(
    w: &Map<String, Value>,
    section: &str,
    key: &str,
    default: &str,
) -> Result<NaiveTime, String> {
    let bad = || format!("settings.{section}.{key} must be \"HH:MM\"");
    let text = match w.get(key) {
        None | Some(Value::Null) => default,
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(bad()),
    };
    NaiveTime::parse_from_str(text, "%H:%M").map_err(|_| bad())
}

fn quiet_hours(q: &Map<String, Value>) -> Result<QuietHours, String> {
    let (start, end) = (
        time_of(q, "quiet_hours", "start", "")?,
        time_of(q, "quiet_hours", "end", "")?,
    );
    if start == end {
        return Err("settings.quiet_hours.start and end must differ".into());
    }
    Ok(QuietHours { start, end })
}

fn window(w: &Map<String, Value>) -> Result<SendWindow, String> {
    let (start, end) = (
        time_of(w, "send_window", "start", "09:00")?,
        time_of(w, "send_window", "end", "17:00")?,
    );
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
            "other": "kept"}))
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
            (
                json!({"quiet_hours": {"start": "22:00"}}),
                "quiet_hours.end",
            ),
        ] {
            let e = parse(&bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn the_next_allowed_time_follows_windows_quiet_hours_and_dst() {
        let s = parse(&json!({"send_window": {"start": "09:00", "end": "17:00",
            "timezone": "Europe/Berlin"}, "quiet_hours": {"start": "12:00", "end": "13:00"}}))
        .unwrap();
        // Friday 2026-10-23 18:00 Berlin (16:00 UTC, CEST): next is Monday 09:00 CET,
        // after the change to winter time on Sunday 25 October: 08:00 UTC.
        assert_eq!(
            s.next_allowed(at("2026-10-23T16:00:00Z"), None),
            at("2026-10-26T08:00:00Z")
        );
        // Before the change the same wall time is 07:00 UTC.
        assert_eq!(
            s.next_allowed(at("2026-10-22T05:00:00Z"), None),
            at("2026-10-22T07:00:00Z")
        );
        // Quiet hours: 12:30 Berlin waits for 13:00.
        assert_eq!(
            s.next_allowed(at("2026-11-23T11:30:00Z"), None),
            at("2026-11-23T12:00:00Z")
        );
        // Inside: unchanged.
        let inside = at("2026-11-23T09:15:00Z");
        assert_eq!(s.next_allowed(inside, None), inside);
        // Quiet hours across midnight without a window.
        let q = parse(&json!({"quiet_hours": {"start": "22:00", "end": "07:00"}})).unwrap();
        assert_eq!(
            q.next_allowed(at("2026-11-23T23:00:00Z"), None),
            at("2026-11-24T07:00:00Z")
        );
        assert!(q.allows(at("2026-11-23T07:00:00Z"), None));
        // A recipient zone: 08:30 UTC is 03:30 in New York; next is 09:00 there (14:00 UTC).
        let r = parse(&json!({"send_window": {"timezone": "recipient"}})).unwrap();
        assert_eq!(
            r.next_allowed(at("2026-11-23T08:30:00Z"), Some("America/New_York")),
            at("2026-11-23T14:00:00Z")
        );
    }
}
