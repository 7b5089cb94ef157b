//! Cron schedules of `schedule` workflow triggers: a five-field expression
//! (minute, hour, day of month, month, day of week) read on the wall clock
//! of an IANA time zone, UTC when none is given.
//!
//! The expression language is [croner]'s without its seconds and year
//! fields: `*`, lists (`1,15`), ranges (`1-5`), steps (`*/15`, `0-30/10`),
//! month and weekday names (`JAN`, `mon-fri`, any case), `?` as `*` in the
//! day fields, the nicknames `@hourly`, `@daily`, `@weekly`, `@monthly`,
//! `@yearly`/`@annually`, and croner's extensions `L` (last day or last
//! weekday), `W` (nearest weekday), `#` (nth weekday) and a leading `+` on
//! the weekday field (day of month AND day of week; without it either
//! matches, as in Vixie cron). 0 and 7 are both Sunday.
//!
//! # Daylight saving time
//!
//! The schedule follows the wall clock, and where the wall clock skips or
//! repeats an hour it does what cronie and Vixie cron do (croner implements
//! these rules; the tests below pin them for New York and Berlin):
//!
//! * A *fixed-time* schedule names one minute of one hour (`30 2 * * *`,
//!   `0 9 * * 1-5`). When that wall clock time does not exist (spring
//!   forward), it runs once, at the first instant after the gap (03:00
//!   local for 02:30 on a 02:00 to 03:00 jump), on the same day. When it
//!   exists twice (fall back), it runs once, at the first of the two
//!   instants. It keeps its local time across a change, so its UTC time moves.
//! * Any other schedule (a `*`, a step, a list or a range in the minute or
//!   hour field, such as `0 * * * *`) runs at every instant whose wall clock
//!   matches: times inside a spring-forward gap are skipped (they never
//!   happen), and times in a repeated hour run on both passes, because
//!   01:00 EDT and 01:00 EST are distinct instants an hour apart. An hourly
//!   schedule therefore fires every real hour across both changes: 23 times
//!   on the spring-forward day in New York and 25 times on the fall-back day.

use chrono::{DateTime, SubsecRound, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// The nicknames accepted in place of five fields.
const NICKNAMES: &[&str] = &[
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@hourly",
];

/// Appended to value errors, which croner reports without the field.
const FIELD_RANGES: &str = " (minute 0-59, hour 0-23, day of month 1-31, month 1-12 or JAN-DEC, \
                            day of week 0-7 or SUN-SAT)";

/// A parsed cron expression and the time zone it is read in.
#[derive(Debug, Clone)]
pub struct CronSchedule {
    cron: Cron,
    timezone: Tz,
    expression: String,
}

impl CronSchedule {
    /// Parses `expr` to be read in `timezone` (an IANA name; UTC when `None`).
    ///
    /// Err is a sentence for a 400 detail naming the field, e.g.
    /// "trigger_config.cron: '0 0 * * * *' has 6 fields; ..." or
    /// "trigger_config.timezone: unknown time zone 'Mars/Base' ...".
    pub fn parse(expr: &str, timezone: Option<&str>) -> Result<CronSchedule, String> {
        let timezone = match timezone {
            None => Tz::UTC,
            Some(name) => name.parse::<Tz>().map_err(|_| {
                format!(
                    "trigger_config.timezone: unknown time zone '{name}'; \
                     expected an IANA name such as 'Europe/Berlin' or 'UTC'"
                )
            })?,
        };

        let expression = expr.trim();
        if expression.is_empty() {
            return Err(
                "trigger_config.cron: must not be empty; expected five fields \
                 (minute hour day-of-month month day-of-week)"
                    .to_owned(),
            );
        }
        if expression.starts_with('@') {
            // croner passes an unknown nickname through as a one-field
            // pattern, whose error would not say what is accepted.
            if !NICKNAMES.iter().any(|n| n.eq_ignore_ascii_case(expression)) {
                return Err(format!(
                    "trigger_config.cron: '{expression}' is not a known nickname; \
                     use one of {} or five fields",
                    NICKNAMES.join(", ")
                ));
            }
        } else {
            // Counted here rather than left to croner so that a seconds
            // field (Quartz, Spring, the `cron` crate) gets a message that
            // says what is wrong instead of a generic field-count error.
            let fields = expression.split_whitespace().count();
            match fields {
                5 => {}
                6 | 7 => {
                    return Err(format!(
                        "trigger_config.cron: '{expression}' has {fields} fields; seconds and \
                         year fields are not supported, use five fields \
                         (minute hour day-of-month month day-of-week)"
                    ));
                }
                _ => {
                    return Err(format!(
                        "trigger_config.cron: '{expression}' has {fields} field{}; expected five \
                         (minute hour day-of-month month day-of-week)",
                        if fields == 1 { "" } else { "s" }
                    ));
                }
            }
        }

        let parser = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build();
        let cron = parser.parse(expression).map_err(|e| {
            // croner's value errors ("Number out of bounds.") do not say
            // which field; the ranges let the reader find it.
            let hint = match e {
                croner::errors::CronError::ComponentError(_) => FIELD_RANGES,
                _ => "",
            };
            format!("trigger_config.cron: '{expression}' is not a valid cron expression: {e}{hint}")
        })?;

        let schedule = CronSchedule {
            cron,
            timezone,
            expression: expression.to_owned(),
        };
        // A schedule that parses but can never fire (`0 0 30 2 *`) would
        // be saved and then silently never run; refuse it while the user
        // is still looking. Any real date pattern recurs within a few
        // years (29 February within eight), so one search from a fixed
        // point decides it.
        let reference = Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).unwrap();
        if schedule.next_after(reference).is_none() {
            return Err(format!(
                "trigger_config.cron: '{expression}' never matches a real date"
            ));
        }
        Ok(schedule)
    }

    /// The first due time strictly after `after`, or `None` when there is
    /// none before the year 5000 (croner's search horizon).
    ///
    /// Chaining calls, each with the previous answer, walks every due time
    /// in order, including both passes of a repeated hour.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        // Due times fall on whole seconds, so dropping the fraction keeps
        // "strictly after" exact: the first match after 09:00:00.5 is the
        // first after 09:00:00, and croner's one-second step would
        // otherwise carry the fraction into its wall clock cursor.
        let start = after.trunc_subsecs(0).with_timezone(&self.timezone);
        self.cron
            .find_next_occurrence(&start, false)
            .ok()
            .map(|due| due.with_timezone(&Utc))
    }

    /// The time zone the expression is read in.
    pub fn timezone(&self) -> Tz {
        self.timezone
    }

    /// The expression as given, trimmed.
    pub fn expression(&self) -> &str {
        &self.expression
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// The next `n` due times after `start`, each search starting from the
    /// previous answer, as RFC 3339 UTC strings.
    fn chain(s: &CronSchedule, start: &str, n: usize) -> Vec<String> {
        let mut at = utc(start);
        (0..n)
            .map(|_| {
                at = s.next_after(at).unwrap();
                at.to_rfc3339()
            })
            .collect()
    }

    /// The same due times shown on the schedule's wall clock with offset.
    fn local_chain(s: &CronSchedule, start: &str, n: usize) -> Vec<String> {
        chain(s, start, n)
            .iter()
            .map(|t| utc(t).with_timezone(&s.timezone()).to_rfc3339())
            .collect()
    }

    fn err(expr: &str, tz: Option<&str>) -> String {
        CronSchedule::parse(expr, tz).unwrap_err()
    }

    #[test]
    fn utc_is_the_default_zone() {
        let s = CronSchedule::parse("*/15 * * * *", None).unwrap();
        assert_eq!(s.timezone(), Tz::UTC);
        assert_eq!(
            chain(&s, "2026-05-01T10:07:00Z", 3),
            [
                "2026-05-01T10:15:00+00:00",
                "2026-05-01T10:30:00+00:00",
                "2026-05-01T10:45:00+00:00"
            ]
        );
    }

    #[test]
    fn next_is_strictly_after() {
        let s = CronSchedule::parse("0 9 * * *", None).unwrap();
        assert_eq!(
            s.next_after(utc("2026-05-01T09:00:00Z")).unwrap(),
            utc("2026-05-02T09:00:00Z")
        );
        assert_eq!(
            s.next_after(utc("2026-05-01T08:59:59.999Z")).unwrap(),
            utc("2026-05-01T09:00:00Z")
        );
        // A fraction past the due second is after it.
        assert_eq!(
            s.next_after(utc("2026-05-01T09:00:00.250Z")).unwrap(),
            utc("2026-05-02T09:00:00Z")
        );
    }

    #[test]
    fn lists_ranges_steps_and_names() {
        // Weekdays by name, two hours by list; 2026-05-01 is a Friday.
        let s = CronSchedule::parse("0 8,17 * * mon-FRI", None).unwrap();
        assert_eq!(
            chain(&s, "2026-05-01T12:00:00Z", 3),
            [
                "2026-05-01T17:00:00+00:00",
                "2026-05-04T08:00:00+00:00",
                "2026-05-04T17:00:00+00:00"
            ]
        );
        // A stepped range and a month name.
        let s = CronSchedule::parse("10-40/15 6 1 JAN,jul *", None).unwrap();
        assert_eq!(
            chain(&s, "2026-05-01T00:00:00Z", 4),
            [
                "2026-07-01T06:10:00+00:00",
                "2026-07-01T06:25:00+00:00",
                "2026-07-01T06:40:00+00:00",
                "2027-01-01T06:10:00+00:00"
            ]
        );
        // Day of month OR day of week, as Vixie cron reads two restricted
        // day fields: the 13th (a Sunday in September 2026) and Fridays.
        let s = CronSchedule::parse("0 0 13 9 5", None).unwrap();
        assert_eq!(
            chain(&s, "2026-09-01T00:00:00Z", 3),
            [
                "2026-09-04T00:00:00+00:00",
                "2026-09-11T00:00:00+00:00",
                "2026-09-13T00:00:00+00:00"
            ]
        );
        // 7 is Sunday as well as 0.
        let s = CronSchedule::parse("0 12 * * 7", None).unwrap();
        assert_eq!(
            s.next_after(utc("2026-05-01T00:00:00Z")).unwrap(),
            utc("2026-05-03T12:00:00Z")
        );
        let s = CronSchedule::parse("@daily", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            s.next_after(utc("2026-05-01T12:00:00Z")).unwrap(),
            utc("2026-05-01T22:00:00Z")
        );
    }

    #[test]
    fn a_leap_day_schedule_is_accepted_and_found() {
        let s = CronSchedule::parse("0 0 29 2 *", None).unwrap();
        assert_eq!(
            s.next_after(utc("2026-05-01T00:00:00Z")).unwrap(),
            utc("2028-02-29T00:00:00Z")
        );
    }

    #[test]
    fn seconds_and_years_are_refused() {
        let e = err("0 0 9 * * *", None);
        assert_eq!(
            e,
            "trigger_config.cron: '0 0 9 * * *' has 6 fields; seconds and year fields are not \
             supported, use five fields (minute hour day-of-month month day-of-week)"
        );
        assert!(err("0 0 9 * * * 2027", None).contains("has 7 fields; seconds"));
    }

    #[test]
    fn garbage_is_refused_with_the_field_named() {
        for (expr, wanted) in [
            ("", "must not be empty"),
            ("   ", "must not be empty"),
            ("every day", "'every day' has 2 fields; expected five"),
            ("hourly", "'hourly' has 1 field; expected five"),
            ("* * * *", "has 4 fields"),
            (
                "60 * * * *",
                "is not a valid cron expression: Component error: Number out of bounds. (minute 0-59, hour 0-23,",
            ),
            ("* 24 * * *", "is not a valid cron expression"),
            ("* * 0 * *", "is not a valid cron expression"),
            ("* * * 13 *", "is not a valid cron expression"),
            ("* * * * 8", "is not a valid cron expression"),
            ("a b c d e", "is not a valid cron expression"),
            ("*/0 * * * *", "is not a valid cron expression"),
            ("5-1 * * * *", "is not a valid cron expression"),
            ("* * * * MONDAY", "is not a valid cron expression"),
            ("@reboot", "'@reboot' is not a known nickname"),
            ("0 0 30 2 *", "'0 0 30 2 *' never matches a real date"),
            ("0 0 31 4,6,9,11 *", "never matches a real date"),
        ] {
            let e = err(expr, None);
            assert!(e.starts_with("trigger_config.cron: "), "{expr:?}: {e}");
            assert!(e.contains(wanted), "{expr:?}: {e}");
        }
    }

    #[test]
    fn unknown_time_zones_are_refused() {
        assert_eq!(
            err("0 9 * * *", Some("Mars/Base")),
            "trigger_config.timezone: unknown time zone 'Mars/Base'; expected an IANA name \
             such as 'Europe/Berlin' or 'UTC'"
        );
        assert!(err("0 9 * * *", Some("")).starts_with("trigger_config.timezone: "));
        // The zone is checked first, so a bad pair reports the zone.
        assert!(err("bad", Some("Nowhere")).starts_with("trigger_config.timezone: "));
    }

    // 2026 transitions: New York springs forward on 8 March (02:00 EST
    // becomes 03:00 EDT) and falls back on 1 November (02:00 EDT becomes
    // 01:00 EST); Berlin on 29 March (02:00 CET to 03:00 CEST) and
    // 25 October (03:00 CEST to 02:00 CET).

    #[test]
    fn daily_in_the_spring_gap_runs_once_just_after_it() {
        let s = CronSchedule::parse("30 2 * * *", Some("America/New_York")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-03-06T12:00:00Z", 4),
            [
                "2026-03-07T02:30:00-05:00",
                // 02:30 does not exist on the 8th: once, at 03:00 EDT.
                "2026-03-08T03:00:00-04:00",
                "2026-03-09T02:30:00-04:00",
                "2026-03-10T02:30:00-04:00"
            ]
        );
        let s = CronSchedule::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-03-27T12:00:00Z", 4),
            [
                "2026-03-28T02:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-30T02:30:00+02:00",
                "2026-03-31T02:30:00+02:00"
            ]
        );
    }

    #[test]
    fn daily_in_the_repeated_hour_runs_once_on_the_first_pass() {
        // In New York 01:30 happens twice on 1 November.
        let s = CronSchedule::parse("30 1 * * *", Some("America/New_York")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-10-30T12:00:00Z", 3),
            [
                "2026-10-31T01:30:00-04:00",
                "2026-11-01T01:30:00-04:00",
                "2026-11-02T01:30:00-05:00"
            ]
        );
        // In Berlin 02:30 happens twice on 25 October.
        let s = CronSchedule::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-10-23T12:00:00Z", 3),
            [
                "2026-10-24T02:30:00+02:00",
                "2026-10-25T02:30:00+02:00",
                "2026-10-26T02:30:00+01:00"
            ]
        );
        // Starting inside the repeated hour, after the first 02:30, the
        // second 02:30 is not a new run: the next is the following day.
        let s = CronSchedule::parse("30 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            chain(&s, "2026-10-25T00:45:00Z", 1),
            ["2026-10-26T01:30:00+00:00"]
        );
    }

    #[test]
    fn weekday_mornings_keep_local_time_across_both_changes() {
        let s = CronSchedule::parse("0 9 * * 1-5", Some("America/New_York")).unwrap();
        // Friday 6 March (EST) to Monday 9 March (EDT): 14:00Z then 13:00Z.
        assert_eq!(
            chain(&s, "2026-03-05T15:00:00Z", 3),
            [
                "2026-03-06T14:00:00+00:00",
                "2026-03-09T13:00:00+00:00",
                "2026-03-10T13:00:00+00:00"
            ]
        );
        // Friday 30 October (EDT) to Monday 2 November (EST).
        assert_eq!(
            chain(&s, "2026-10-29T14:00:00Z", 3),
            [
                "2026-10-30T13:00:00+00:00",
                "2026-11-02T14:00:00+00:00",
                "2026-11-03T14:00:00+00:00"
            ]
        );
        let s = CronSchedule::parse("0 9 * * MON-FRI", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-03-27T12:00:00Z", 2),
            ["2026-03-30T09:00:00+02:00", "2026-03-31T09:00:00+02:00"]
        );
        assert_eq!(
            chain(&s, "2026-10-23T12:00:00Z", 2),
            ["2026-10-26T08:00:00+00:00", "2026-10-27T08:00:00+00:00"]
        );
    }

    #[test]
    fn hourly_fires_every_real_hour_across_both_changes() {
        let s = CronSchedule::parse("0 * * * *", Some("America/New_York")).unwrap();
        // Spring: 01:00 EST is followed by 03:00 EDT, one real hour later;
        // the 02:00 that does not exist is not made up.
        assert_eq!(
            local_chain(&s, "2026-03-08T05:30:00Z", 3),
            [
                "2026-03-08T01:00:00-05:00",
                "2026-03-08T03:00:00-04:00",
                "2026-03-08T04:00:00-04:00"
            ]
        );
        // Fall: 01:00 happens twice, an hour apart, and both run.
        assert_eq!(
            local_chain(&s, "2026-11-01T03:30:00Z", 4),
            [
                "2026-11-01T00:00:00-04:00",
                "2026-11-01T01:00:00-04:00",
                "2026-11-01T01:00:00-05:00",
                "2026-11-01T02:00:00-05:00"
            ]
        );
        // Every run is exactly one hour after the previous one, and the
        // fall-back day has 25 of them, the spring-forward day 23.
        let day_count = |start: &str, end: &str| {
            let end = utc(end);
            let mut at = utc(start);
            let mut n = 0;
            loop {
                let next = s.next_after(at).unwrap();
                if next >= end {
                    break n;
                }
                if n > 0 {
                    assert_eq!(next - at, chrono::Duration::hours(1));
                }
                at = next;
                n += 1;
            }
        };
        // Local midnight to midnight, starting a second before.
        assert_eq!(
            day_count("2026-03-08T04:59:59Z", "2026-03-09T04:00:00Z"),
            23
        );
        assert_eq!(
            day_count("2026-11-01T03:59:59Z", "2026-11-02T05:00:00Z"),
            25
        );

        let s = CronSchedule::parse("0 * * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-10-24T23:30:00Z", 4),
            [
                "2026-10-25T02:00:00+02:00",
                "2026-10-25T02:00:00+01:00",
                "2026-10-25T03:00:00+01:00",
                "2026-10-25T04:00:00+01:00"
            ]
        );
    }

    #[test]
    fn a_step_in_the_gap_is_skipped_and_in_the_overlap_repeated() {
        // Every 30 minutes in hour 2: an interval schedule. On Berlin's
        // spring-forward day 02:xx does not exist and nothing runs; on the
        // fall-back day 02:00 and 02:30 each run on both passes.
        let s = CronSchedule::parse("*/30 2 * * *", Some("Europe/Berlin")).unwrap();
        assert_eq!(
            local_chain(&s, "2026-03-28T03:00:00Z", 1),
            ["2026-03-30T02:00:00+02:00"]
        );
        assert_eq!(
            local_chain(&s, "2026-10-24T12:00:00Z", 5),
            [
                "2026-10-25T02:00:00+02:00",
                "2026-10-25T02:30:00+02:00",
                "2026-10-25T02:00:00+01:00",
                "2026-10-25T02:30:00+01:00",
                "2026-10-26T02:00:00+01:00"
            ]
        );
    }

    #[test]
    fn a_year_of_chained_runs_crosses_both_changes_in_order() {
        // A weekly chain through all of 2026 in New York: 52 or 53 runs,
        // strictly increasing, each at 09:00 local whatever the offset.
        let s = CronSchedule::parse("0 9 * * MON", Some("America/New_York")).unwrap();
        let mut at = utc("2026-01-01T00:00:00Z");
        let mut runs = 0;
        while let Some(next) = s.next_after(at) {
            if next >= utc("2027-01-01T00:00:00Z") {
                break;
            }
            assert!(next > at);
            let local = next.with_timezone(&s.timezone());
            assert_eq!(local.format("%a %H:%M").to_string(), "Mon 09:00");
            at = next;
            runs += 1;
        }
        assert_eq!(runs, 52);
    }
}
