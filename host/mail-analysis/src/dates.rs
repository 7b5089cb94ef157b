//! The "back on" date of an out-of-office reply, so the next step can wait for
//! the person to return. Pure civil-date arithmetic, no clock, no time zones.

use crate::util::{fold, regex, truncate};

const DAY_MS: i64 = 86_400_000;

/// The date an out-of-office text says its author is back (or away until), as
/// 00:00 UTC of that day in Unix milliseconds.
///
/// Recognises ISO dates (`2026-11-30`), dotted European dates (`3.12.`,
/// `03.12.2026`), slashed dates (`5/14`, `14/05/2026`; month first in English
/// when ambiguous), month names with a day in the seven languages
/// (`December 3rd`, `3 December`, `the 2nd of September`, `3. Dezember`,
/// `5 septembre`, `10 de enero`, `2 novembre`, `21 juli`, `15 de fevereiro`),
/// and, failing those, a weekday ("back Monday", "bis Montag") taken as its next
/// occurrence after the message date. A date without a year is placed in the year
/// that puts it on or after the message date. Only dates from the message date up
/// to a year later count (any date with an explicit year when the message date is
/// unknown); with several, the latest wins ("from Dec 23 through Jan 2").
pub(crate) fn return_date(text: &str, sent_ms: Option<i64>) -> Option<i64> {
    let t = fold(truncate(text, 8 * 1024));
    let ref_day = sent_ms.map(|ms| ms.div_euclid(DAY_MS));
    let english =
        regex!(r"\b(the|until|till|back|return|returning|office|through|will)\b").is_match(&t);
    let mut candidates: Vec<i64> = Vec::new();
    let mut push = |y: Option<i64>, m: i64, d: i64| {
        if let Some(day) = resolve(y, m, d, ref_day) {
            candidates.push(day);
        }
    };

    for c in regex!(r"\b(20\d\d)-(\d{1,2})-(\d{1,2})\b").captures_iter(&t) {
        push(Some(num(&c[1])), num(&c[2]), num(&c[3]));
    }
    for c in
        regex!(r"(?:^|[^\d.])(\d{1,2})\.\s?(\d{1,2})\.(\d{4}|\d{2})?(?:[^\d]|$)").captures_iter(&t)
    {
        push(c.get(3).map(|y| year(y.as_str())), num(&c[2]), num(&c[1]));
    }
    for c in
        regex!(r"(?:^|[^\d/])(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?(?:[^\d/]|$)").captures_iter(&t)
    {
        let (a, b) = (num(&c[1]), num(&c[2]));
        let (m, d) = if a > 12 || (!english && b <= 12) {
            (b, a)
        } else {
            (a, b)
        };
        push(c.get(3).map(|y| year(y.as_str())), m, d);
    }
    let day_month = regex!(&format!(
        r"\b(\d{{1,2}})(?:st|nd|rd|th|er|º|ª|\.)?\s(?:of\s|de\s)?({})\b\.?(?:,?\s(?:de\s)?(\d{{4}}))?",
        month_alternation()
    ));
    for c in day_month.captures_iter(&t) {
        if let Some(m) = month_number(&c[2]) {
            push(c.get(3).map(|y| num(y.as_str())), m, num(&c[1]));
        }
    }
    let month_day = regex!(&format!(
        r"\b({})\.?\s(?:the\s)?(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s(\d{{4}}))?",
        month_alternation()
    ));
    for c in month_day.captures_iter(&t) {
        if let Some(m) = month_number(&c[1]) {
            push(c.get(3).map(|y| num(y.as_str())), m, num(&c[2]));
        }
    }
    if let Some(best) = candidates.into_iter().max() {
        return Some(best * DAY_MS);
    }
    weekday(&t, ref_day?).map(|d| d * DAY_MS)
}

fn ry_of(day: i64) -> i64 {
    civil_from_days(day).0
}

fn num(s: &str) -> i64 {
    s.parse().unwrap_or(0)
}

fn year(s: &str) -> i64 {
    let y = num(s);
    if y < 100 { 2000 + y } else { y }
}

/// Days since the epoch of a plausible return date, or `None`.
fn resolve(y: Option<i64>, m: i64, d: i64, ref_day: Option<i64>) -> Option<i64> {
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y.unwrap_or(2024), m) {
        return None;
    }
    match (y, ref_day) {
        (Some(y), Some(r)) => {
            Some(days_from_civil(y, m, d)).filter(|day| *day >= r && *day <= r + 366)
        }
        (Some(y), None) => (2000..=2100).contains(&y).then(|| days_from_civil(y, m, d)),
        (None, Some(r)) => [ry_of(r), ry_of(r) + 1]
            .into_iter()
            .filter(|y| d <= days_in_month(*y, m))
            .map(|y| days_from_civil(y, m, d))
            .find(|day| *day >= r && *day <= r + 366),
        (None, None) => None,
    }
}

const MONTHS: &[(&str, i64)] = &[
    ("january", 1),
    ("jan", 1),
    ("januar", 1),
    ("jänner", 1),
    ("janvier", 1),
    ("enero", 1),
    ("gennaio", 1),
    ("januari", 1),
    ("janeiro", 1),
    ("february", 2),
    ("feb", 2),
    ("februar", 2),
    ("février", 2),
    ("fevrier", 2),
    ("febrero", 2),
    ("febbraio", 2),
    ("februari", 2),
    ("fevereiro", 2),
    ("march", 3),
    ("mar", 3),
    ("märz", 3),
    ("mars", 3),
    ("marzo", 3),
    ("maart", 3),
    ("março", 3),
    ("marco", 3),
    ("april", 4),
    ("apr", 4),
    ("avril", 4),
    ("abril", 4),
    ("aprile", 4),
    ("may", 5),
    ("mai", 5),
    ("mayo", 5),
    ("maggio", 5),
    ("mei", 5),
    ("maio", 5),
    ("june", 6),
    ("jun", 6),
    ("juni", 6),
    ("juin", 6),
    ("junio", 6),
    ("giugno", 6),
    ("junho", 6),
    ("july", 7),
    ("jul", 7),
    ("juli", 7),
    ("juillet", 7),
    ("julio", 7),
    ("luglio", 7),
    ("julho", 7),
    ("august", 8),
    ("aug", 8),
    ("août", 8),
    ("aout", 8),
    ("agosto", 8),
    ("augustus", 8),
    ("september", 9),
    ("sept", 9),
    ("sep", 9),
    ("septembre", 9),
    ("septiembre", 9),
    ("setiembre", 9),
    ("settembre", 9),
    ("setembro", 9),
    ("october", 10),
    ("oct", 10),
    ("oktober", 10),
    ("octobre", 10),
    ("octubre", 10),
    ("ottobre", 10),
    ("outubro", 10),
    ("november", 11),
    ("nov", 11),
    ("novembre", 11),
    ("noviembre", 11),
    ("novembro", 11),
    ("december", 12),
    ("dec", 12),
    ("dezember", 12),
    ("décembre", 12),
    ("decembre", 12),
    ("diciembre", 12),
    ("dicembre", 12),
    ("dezembro", 12),
];

fn month_alternation() -> String {
    let mut names: Vec<&str> = MONTHS.iter().map(|(n, _)| *n).collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.join("|")
}

fn month_number(name: &str) -> Option<i64> {
    MONTHS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

const DAYS: &[(&str, i64)] = &[
    ("monday", 0),
    ("montag", 0),
    ("lundi", 0),
    ("lunes", 0),
    ("lunedì", 0),
    ("lunedi", 0),
    ("maandag", 0),
    ("segunda", 0),
    ("tuesday", 1),
    ("dienstag", 1),
    ("mardi", 1),
    ("martes", 1),
    ("martedì", 1),
    ("martedi", 1),
    ("dinsdag", 1),
    ("terça", 1),
    ("wednesday", 2),
    ("mittwoch", 2),
    ("mercredi", 2),
    ("miércoles", 2),
    ("miercoles", 2),
    ("mercoledì", 2),
    ("mercoledi", 2),
    ("woensdag", 2),
    ("quarta", 2),
    ("thursday", 3),
    ("donnerstag", 3),
    ("jeudi", 3),
    ("jueves", 3),
    ("giovedì", 3),
    ("giovedi", 3),
    ("donderdag", 3),
    ("quinta", 3),
    ("friday", 4),
    ("freitag", 4),
    ("vendredi", 4),
    ("viernes", 4),
    ("venerdì", 4),
    ("venerdi", 4),
    ("vrijdag", 4),
    ("sexta", 4),
    ("saturday", 5),
    ("samstag", 5),
    ("samedi", 5),
    ("sábado", 5),
    ("sabato", 5),
    ("zaterdag", 5),
    ("sunday", 6),
    ("sonntag", 6),
    ("dimanche", 6),
    ("domingo", 6),
    ("domenica", 6),
    ("zondag", 6),
];

/// "back Monday" and its translations: the next such weekday after the message
/// date; with several ("through Friday, back Monday") the latest.
fn weekday(t: &str, ref_day: i64) -> Option<i64> {
    let re = regex!(&format!(
        r"\b(?:until|till|through|thru|back|return(?:ing)?(?: on)?|back on|on|bis|ab|am|jusqu'à|jusqu'au|retour|dès|hasta el|el|fino a|fino al|tot|vanaf|op|até|na|a partir de)\s(?:next\s|nächsten\s|this\s)?({})\b",
        DAYS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("|")
    ));
    // 1970-01-01 was a Thursday (index 3 with Monday = 0).
    let today = (ref_day + 3).rem_euclid(7);
    re.captures_iter(t)
        .filter_map(|c| DAYS.iter().find(|(n, _)| *n == &c[1]).map(|(_, d)| *d))
        .map(|target| {
            let ahead = (target - today).rem_euclid(7);
            ref_day + if ahead == 0 { 7 } else { ahead }
        })
        .max()
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i64, m: i64, d: i64) -> Option<i64> {
        Some(days_from_civil(y, m, d) * DAY_MS)
    }

    // Wednesday 4 November 2026, 09:30 UTC.
    const SENT: i64 = 1_793_784_600_000;

    #[test]
    fn civil_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2026, 11, 4)), (2026, 11, 4));
        assert_eq!(SENT.div_euclid(DAY_MS), days_from_civil(2026, 11, 4));
    }

    #[test]
    fn formats_and_languages() {
        let cases = [
            (
                "I am out of the office until Monday, December 3rd.",
                day(2026, 12, 3),
            ),
            ("back on December 3", day(2026, 12, 3)),
            ("Ich bin bis zum 3.12. nicht im Büro.", day(2026, 12, 3)),
            ("bis 03.12.2026 abwesend", day(2026, 12, 3)),
            ("away until 2026-11-30", day(2026, 11, 30)),
            ("je suis absent jusqu'au 5 septembre", day(2027, 9, 5)),
            ("fuera hasta el 10 de enero", day(2027, 1, 10)),
            // More than a year ahead is not a return date.
            ("fuori ufficio fino al 2 dicembre 2027", None),
            ("fuori ufficio fino al 20 novembre", day(2026, 11, 20)),
            ("afwezig tot en met 21 juli", day(2027, 7, 21)),
            ("de férias até 15 de fevereiro", day(2027, 2, 15)),
            ("back on 11/14", day(2026, 11, 14)),
            ("zurück am 14/11", day(2026, 11, 14)),
            ("on holiday until the 2nd of December", day(2026, 12, 2)),
            ("closed from December 23 through January 2", day(2027, 1, 2)),
            ("ab dem 14. August wieder erreichbar", day(2027, 8, 14)),
            ("I'm OOO through Friday, back Monday.", day(2026, 11, 9)),
            ("out until Friday", day(2026, 11, 6)),
            ("I'll be back Monday", day(2026, 11, 9)),
            ("I am travelling with limited access to email.", None),
        ];
        for (text, want) in cases {
            assert_eq!(return_date(text, Some(SENT)), want, "{text}");
        }
    }

    #[test]
    fn without_a_message_date_only_explicit_years_count() {
        assert_eq!(return_date("back on 2027-01-05", None), day(2027, 1, 5));
        assert_eq!(return_date("back on January 5", None), None);
    }
}
