//! Renders edge-case reports and checks that each yields a complete PDF; the
//! end-to-end test (`tests/tests/intelligence.rs`) runs qpdf and poppler over
//! a served one.

use crate::intelligence::reports::{
    CountryShare, IndustryReport, ReportSummary, TopDomain, WeekCount,
};

fn report(domains: usize, countries: usize, weeks: i64) -> (IndustryReport, Vec<TopDomain>) {
    let top: Vec<TopDomain> = (0..domains)
        .map(|i| TopDomain {
            domain: format!("domain-{i}.example"),
            confidence: 1.0 - i as f64 / 200.0,
            summary: Some(
                "A company that does something useful for its customers every day.".repeat(3),
            ),
        })
        .collect();
    let report = IndustryReport {
        industry: "Financial Services".to_owned(),
        summary: ReportSummary {
            total_leads: 1234,
            with_email: 1000,
            email_coverage_pct: 81.0,
            avg_confidence: 0.77,
            growth_rate_pct: Some(-3.5),
        },
        weekly_trend: (0..12)
            .map(|i| WeekCount {
                week: format!("2026-W{}", 36 + i),
                cnt: weeks * i,
            })
            .collect(),
        country_distribution: (0..countries)
            .map(|i| CountryShare {
                country: format!("C{i}"),
                cnt: 100 - i as i64,
                pct: 2.0,
            })
            .collect(),
        top_domains: top.iter().take(10).cloned().collect(),
    };
    (report, top)
}

fn assert_pdf(bytes: &[u8]) {
    assert!(bytes.starts_with(b"%PDF-"), "missing PDF header");
    let tail = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(64)..]).into_owned();
    assert!(tail.contains("%%EOF"), "missing PDF trailer");
}

#[test]
fn renders_full_report() {
    let (r, top) = report(100, 40, 10);
    assert_pdf(&super::render(&r, &top, "2026-11-28").expect("render"));
}

#[test]
fn renders_empty_report() {
    let (mut r, top) = report(0, 0, 0);
    r.summary.total_leads = 0;
    r.summary.growth_rate_pct = None;
    r.weekly_trend.clear();
    assert_pdf(&super::render(&r, &top, "").expect("render"));
}

#[test]
fn renders_hostile_text() {
    let (mut r, mut top) = report(5, 12, 3);
    r.industry = "\u{0000}\u{202E}(%)\\ Ω 金融 مالية".to_owned();
    r.country_distribution[0].country = "<&>\u{0001}".to_owned();
    r.country_distribution[1].pct = f64::NAN;
    r.weekly_trend[0].cnt = -50;
    top[0].domain = "d".repeat(10_000);
    top[1].summary = Some("\n\t\r".to_owned());
    top[2].confidence = f64::NAN;
    top[3].summary = Some("🚀".repeat(300));
    assert_pdf(&super::render(&r, &top, "(%)\\").expect("render"));
}

#[test]
fn renders_single_week_and_country() {
    let (mut r, top) = report(1, 1, 5);
    r.weekly_trend.truncate(1);
    r.weekly_trend[0].cnt = 7;
    assert_pdf(&super::render(&r, &top, "2026-11-28").expect("render"));
}

#[test]
fn renders_extreme_numbers() {
    let (mut r, top) = report(3, 15, 1);
    r.summary.total_leads = i64::MAX;
    r.summary.with_email = i64::MIN;
    r.summary.email_coverage_pct = f64::INFINITY;
    r.summary.avg_confidence = f64::NAN;
    r.summary.growth_rate_pct = Some(1e300);
    r.weekly_trend[5].cnt = i64::MAX;
    r.weekly_trend[6].cnt = i64::MIN;
    for c in &mut r.country_distribution {
        c.cnt = i64::MAX;
        c.pct = 1e308;
    }
    r.country_distribution[2].pct = f64::NEG_INFINITY;
    assert_pdf(&super::render(&r, &top, "2026-11-28").expect("render"));
    for c in &mut r.country_distribution {
        c.pct = 0.0;
    }
    assert_pdf(&super::render(&r, &top, "2026-11-28").expect("render"));
}
