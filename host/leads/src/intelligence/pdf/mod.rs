//! Lays out the industry market report on A4 pages with krilla.
//!
//! Page 1 carries the title, the summary figures and both charts; the top-domains table starts
//! below them and flows onto further pages, repeating its header row. Layout happens in two
//! passes: the table rows are measured and split into pages first, so every footer can say
//! "Page N of M" while the pages are drawn.

use std::ops::Range;

use anyhow::{Context, Result, anyhow};
use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::paint::Fill;
use krilla::surface::Surface;
use krilla_svg::{SurfaceExt, SvgSettings};

use self::charts::Bar;
use self::text::{Face, Fonts, abbreviate, clean, percent, signed_percent, thousands};
use crate::intelligence::reports::{IndustryReport, TopDomain};

mod charts;
#[cfg(test)]
mod tests;
mod text;

const PAGE_W: f32 = 595.276;
const PAGE_H: f32 = 841.89;
const MARGIN: f32 = 48.0;
const CONTENT_W: f32 = PAGE_W - 2.0 * MARGIN;
/// The table never runs below this line, which keeps clear of the footer.
const CONTENT_BOTTOM: f32 = PAGE_H - 60.0;
const CARD_H: f32 = 52.0;
const CHART_H: f32 = 170.0;
const SECTION_H: f32 = 30.0;
const TOP_COUNTRIES: usize = 10;

// Table geometry: column left edges relative to the margin, and the row metrics.
const COL_DOMAIN: f32 = 28.0;
const COL_CONF: f32 = 196.0;
const COL_SUMMARY: f32 = 262.0;
const PAD: f32 = 6.0;
const LINE_H: f32 = 10.0;
const ROW_PAD: f32 = 8.0;
const HEADER_H: f32 = 18.0;
const SUMMARY_LINES: usize = 2;

type Rgb = (u8, u8, u8);
const INK: Rgb = (17, 24, 39);
const BODY: Rgb = (55, 65, 81);
const MUTED: Rgb = (107, 114, 128);
const ACCENT: Rgb = (37, 99, 235);
const RULE: Rgb = (229, 231, 235);
const PANEL: Rgb = (248, 250, 252);
const ZEBRA: Rgb = (249, 250, 251);
const POSITIVE: Rgb = (22, 163, 74);
const NEGATIVE: Rgb = (220, 38, 38);

/// A text style: every piece of text in the report uses one of the constants below, which
/// keeps the type hierarchy consistent from page to page.
#[derive(Clone, Copy)]
struct Style {
    bold: bool,
    size: f32,
    color: Rgb,
}

impl Style {
    const fn new(bold: bool, size: f32, color: Rgb) -> Style {
        Style { bold, size, color }
    }

    const fn color(self, color: Rgb) -> Style {
        Style { color, ..self }
    }

    const fn sized(self, size: f32) -> Style {
        Style { size, ..self }
    }
}

const EYEBROW: Style = Style::new(true, 7.5, ACCENT);
const TITLE: Style = Style::new(true, 22.0, INK);
const DATE: Style = Style::new(false, 9.0, MUTED);
const HEADING: Style = Style::new(true, 10.5, INK);
const NOTE: Style = Style::new(false, 7.5, MUTED);
const CARD_LABEL: Style = Style::new(false, 7.0, MUTED);
const FIGURE: Style = Style::new(true, 15.0, INK);
const TH: Style = Style::new(true, 6.5, MUTED);
const CELL: Style = Style::new(false, 8.0, INK);
const DOMAIN: Style = Style::new(true, 8.0, INK);
const SUMMARY: Style = Style::new(false, 7.5, BODY);
const PLACEHOLDER: Style = Style::new(false, 9.0, MUTED);

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
    Center,
}

/// Draws on one page: filled rectangles and single lines of shaped text.
struct Pen<'a, 'b> {
    s: &'a mut Surface<'b>,
    fonts: &'static Fonts,
}

impl Pen<'_, '_> {
    fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, color: Rgb) {
        let Some(r) = Rect::from_xywh(x, y, w, h).filter(|_| w > 0.0 && h > 0.0) else {
            return;
        };
        let mut pb = PathBuilder::new();
        pb.push_rect(r);
        if let Some(path) = pb.finish() {
            self.s.set_fill(Some(fill(color)));
            self.s.set_stroke(None);
            self.s.draw_path(&path);
        }
    }

    /// Draws one line of text with its baseline at `y`.
    fn text(&mut self, st: Style, x: f32, y: f32, align: Align, t: &str) {
        if t.is_empty() {
            return;
        }
        let face = face(self.fonts, st);
        let (glyphs, width) = text::shape(face, t);
        let x = match align {
            Align::Left => x,
            Align::Right => x - width * st.size,
            Align::Center => x - width * st.size / 2.0,
        };
        self.s.set_fill(Some(fill(st.color)));
        self.s.set_stroke(None);
        self.s.draw_glyphs(
            Point::from_xy(x, y),
            &glyphs,
            face.pdf.clone(),
            t,
            st.size,
            false,
        );
    }

    fn left(&mut self, st: Style, x: f32, y: f32, t: &str) {
        self.text(st, x, y, Align::Left, t);
    }

    fn right(&mut self, st: Style, x: f32, y: f32, t: &str) {
        self.text(st, x, y, Align::Right, t);
    }

    fn heading(&mut self, x: f32, top: f32, title: &str, note: &str) {
        self.left(HEADING, x, top + 10.0, title);
        self.left(NOTE, x, top + 22.0, note);
    }

    /// The placeholder shown instead of a chart or table that would have nothing in it.
    fn no_data(&mut self, x: f32, y: f32, w: f32, h: f32) {
        self.rect(x, y, w, h, PANEL);
        self.text(
            PLACEHOLDER,
            x + w / 2.0,
            y + h / 2.0 + 3.0,
            Align::Center,
            "No data",
        );
    }

    /// Draws a parsed chart as vector content; its text stays text in the embedded font.
    fn svg(&mut self, tree: &usvg::Tree, x: f32, y: f32, w: f32, h: f32) -> Result<()> {
        let size = Size::from_wh(w, h).context("invalid chart size")?;
        self.s.push_transform(&Transform::from_translate(x, y));
        let drawn = self.s.draw_svg(tree, size, SvgSettings::default());
        self.s.pop();
        drawn.context("chart could not be drawn")
    }
}

fn face(fonts: &'static Fonts, st: Style) -> &'static Face {
    if st.bold { &fonts.bold } else { &fonts.regular }
}

fn measure(fonts: &'static Fonts, st: Style, t: &str) -> f32 {
    text::measure(face(fonts, st), st.size, t)
}

fn wrap(fonts: &'static Fonts, st: Style, t: &str, max_w: f32, lines: usize) -> Vec<String> {
    text::wrap(face(fonts, st), st.size, t, max_w, lines)
}

fn fill(color: Rgb) -> Fill {
    Fill {
        paint: rgb::Color::new(color.0, color.1, color.2).into(),
        ..Fill::default()
    }
}

/// Renders the report as a PDF. `top` feeds the table (the JSON keeps only ten domains);
/// `generated_on` is printed as given, e.g. "2026-11-28".
pub fn render(report: &IndustryReport, top: &[TopDomain], generated_on: &str) -> Result<Vec<u8>> {
    let fonts = text::fonts()?;
    let mut industry = clean(&report.industry, 120);
    if industry.is_empty() {
        industry = "Unnamed industry".to_owned();
    }
    let title = format!("{industry} market report");
    let date = clean(generated_on, 40);
    let title_lines = wrap(fonts, TITLE, &title, CONTENT_W, 2);

    let rows: Vec<Row> = top
        .iter()
        .enumerate()
        .map(|(i, d)| Row::new(fonts, i + 1, d))
        .collect();
    let layout = Layout::new(title_lines.len());
    let segments = paginate(&rows, layout.table_top);
    let page_count = segments.last().map_or(1, |s| s.page + 1);
    let footer = if date.is_empty() {
        title.clone()
    } else {
        format!("{title} · {date}")
    };

    let mut doc = Document::new();
    doc.set_metadata(
        Metadata::new()
            .title(title)
            .creator("Outreach".to_owned())
            .language("en".to_owned()),
    );
    for page_no in 0..page_count {
        let settings = PageSettings::from_wh(PAGE_W, PAGE_H).context("invalid page size")?;
        let mut page = doc.start_page_with(settings);
        let mut s = page.surface();
        let mut pen = Pen { s: &mut s, fonts };
        if page_no == 0 {
            draw_header(&mut pen, report, &layout, &title_lines, &date)?;
            if rows.is_empty() {
                pen.heading(MARGIN, layout.table_top, "Top domains", "");
                pen.no_data(MARGIN, layout.table_top + SECTION_H, CONTENT_W, 60.0);
            }
        }
        for seg in segments.iter().filter(|seg| seg.page == page_no) {
            draw_table(&mut pen, &rows, seg, top.len());
        }
        draw_footer(&mut pen, &footer, page_no + 1, page_count);
        s.finish();
        page.finish();
    }
    doc.finish()
        .map_err(|e| anyhow!("PDF serialization failed: {e:?}"))
}

/// Vertical positions on page 1, which depend only on how many lines the title takes.
struct Layout {
    title_base: f32,
    cards_top: f32,
    charts_top: f32,
    table_top: f32,
}

impl Layout {
    fn new(title_lines: usize) -> Layout {
        let title_base = 84.0;
        let last_title_base = title_base + 26.0 * title_lines.saturating_sub(1) as f32;
        let cards_top = last_title_base + 34.0;
        let charts_top = cards_top + CARD_H + 22.0;
        let table_top = charts_top + SECTION_H + CHART_H + 26.0;
        Layout {
            title_base,
            cards_top,
            charts_top,
            table_top,
        }
    }
}

fn draw_header(
    pen: &mut Pen<'_, '_>,
    report: &IndustryReport,
    layout: &Layout,
    title_lines: &[String],
    date: &str,
) -> Result<()> {
    pen.rect(0.0, 0.0, PAGE_W, 6.0, ACCENT);
    pen.left(EYEBROW, MARGIN, 58.0, "INDUSTRY MARKET REPORT");
    let mut y = layout.title_base;
    for line in title_lines {
        pen.left(TITLE, MARGIN, y, line);
        y += 26.0;
    }
    if !date.is_empty() {
        pen.left(
            DATE,
            MARGIN,
            layout.cards_top - 16.0,
            &format!("Generated on {date}"),
        );
    }
    draw_cards(pen, report, layout.cards_top);

    let gap = 20.0;
    let w = (CONTENT_W - gap) / 2.0;
    draw_trend(pen, report, MARGIN, layout.charts_top, w)?;
    draw_countries(pen, report, MARGIN + w + gap, layout.charts_top, w)
}

fn draw_cards(pen: &mut Pen<'_, '_>, report: &IndustryReport, top: f32) {
    let sum = &report.summary;
    let (growth, growth_color) = match sum.growth_rate_pct {
        Some(g) if g.is_finite() => {
            let color = match g {
                g if g > 0.0 => POSITIVE,
                g if g < 0.0 => NEGATIVE,
                _ => INK,
            };
            (signed_percent(g), color)
        }
        _ => ("n/a".to_owned(), MUTED),
    };
    let confidence = percent(sum.avg_confidence * 100.0);
    let cards = [
        (
            "Total leads",
            thousands(sum.total_leads),
            abbreviate(sum.total_leads),
            INK,
        ),
        (
            "With email",
            thousands(sum.with_email),
            abbreviate(sum.with_email),
            INK,
        ),
        ("Email coverage", percent(sum.email_coverage_pct), None, INK),
        ("Avg. confidence", confidence, None, INK),
        ("Growth (30 days)", growth, None, growth_color),
    ];
    let gap = 8.0;
    let w = (CONTENT_W - gap * (cards.len() - 1) as f32) / cards.len() as f32;
    for (i, (label, exact, short, color)) in cards.iter().enumerate() {
        let x = MARGIN + i as f32 * (w + gap);
        pen.rect(x, top, w, CARD_H, PANEL);
        pen.rect(x, top, 2.5, CARD_H, ACCENT);
        pen.left(CARD_LABEL, x + 10.0, top + 16.0, label);
        // Large figures shrink, then abbreviate, rather than overflow the card.
        let inner = w - 18.0;
        let fits = |v: &str, size: f32| measure(pen.fonts, FIGURE.sized(size), v) <= inner;
        let value = match short {
            Some(short) if !fits(exact, 11.0) => short,
            _ => exact,
        };
        let mut size = FIGURE.size;
        while size > 7.0 && !fits(value, size) {
            size -= 0.5;
        }
        pen.left(
            FIGURE.sized(size).color(*color),
            x + 10.0,
            top + 38.0,
            value,
        );
    }
}

fn draw_trend(
    pen: &mut Pen<'_, '_>,
    report: &IndustryReport,
    x: f32,
    top: f32,
    w: f32,
) -> Result<()> {
    let weeks = &report.weekly_trend;
    let note = match (weeks.first(), weeks.last()) {
        (Some(first), Some(last)) => format!(
            "New leads per ISO week, {} to {}",
            clean(&first.week, 16),
            clean(&last.week, 16)
        ),
        _ => String::new(),
    };
    pen.heading(x, top, "Weekly trend", &note);
    let chart_top = top + SECTION_H;
    if weeks.iter().all(|w| w.cnt <= 0) {
        pen.no_data(x, chart_top, w, CHART_H);
        return Ok(());
    }
    let labels: Vec<String> = weeks.iter().map(|w| week_label(&w.week)).collect();
    // No real week has a quadrillion leads; the cap keeps plotters' integer axis arithmetic
    // (which adds headroom and steps to the maximum) far from overflowing.
    let counts: Vec<i64> = weeks.iter().map(|w| w.cnt.clamp(0, 1_i64 << 50)).collect();
    let tree = charts::trend(&labels, &counts, f64::from(w), f64::from(CHART_H))?;
    pen.svg(&tree, x, chart_top, w, CHART_H)
}

fn draw_countries(
    pen: &mut Pen<'_, '_>,
    report: &IndustryReport,
    x: f32,
    top: f32,
    w: f32,
) -> Result<()> {
    let all = &report.country_distribution;
    let note = match all.len() {
        0 => String::new(),
        n if n > TOP_COUNTRIES => format!("Share of leads, top {TOP_COUNTRIES} of {n} countries"),
        _ => "Share of leads by country".to_owned(),
    };
    pen.heading(x, top, "Country distribution", &note);
    let chart_top = top + SECTION_H;
    let total = all.iter().fold(0i64, |t, c| t.saturating_add(c.cnt.max(0)));
    // Shares come from `pct` as reported; if every pct is unusable they fall back to counts.
    let use_pct = all.iter().any(|c| c.pct.is_finite() && c.pct > 0.0);
    let share = |cnt: i64, pct: f64| {
        // A share outside 0..=100 is bad data; clamping keeps the axis finite and readable.
        if use_pct {
            if pct.is_finite() {
                pct.clamp(0.0, 100.0)
            } else {
                0.0
            }
        } else if total > 0 {
            cnt.clamp(0, total) as f64 * 100.0 / total as f64
        } else {
            0.0
        }
    };
    let bar = |label: String, value: f64, muted: bool| Bar {
        label,
        value_label: format!("{value:.1}%"),
        value,
        muted,
    };
    let mut bars: Vec<Bar> = all
        .iter()
        .take(TOP_COUNTRIES)
        .map(|c| {
            let label = Some(clean(&c.country, 14)).filter(|l| !l.is_empty());
            bar(
                label.unwrap_or_else(|| "Unknown".to_owned()),
                share(c.cnt, c.pct),
                false,
            )
        })
        .collect();
    if let Some(rest) = all.get(TOP_COUNTRIES..).filter(|rest| !rest.is_empty()) {
        let other = rest
            .iter()
            .map(|c| share(c.cnt, c.pct))
            .sum::<f64>()
            .min(100.0);
        bars.push(bar("Other".to_owned(), other, true));
    }
    if bars.iter().all(|b| b.value <= 0.0) {
        pen.no_data(x, chart_top, w, CHART_H);
        return Ok(());
    }
    let tree = charts::bars(&bars, f64::from(w), f64::from(CHART_H))?;
    pen.svg(&tree, x, chart_top, w, CHART_H)
}

/// "2026-W47" becomes "W47"; anything else is shown shortened but otherwise as given.
fn week_label(week: &str) -> String {
    let week = clean(week, 16);
    match week.rsplit_once('-') {
        Some((_, w)) if w.starts_with('W') => w.to_owned(),
        _ => week,
    }
}

/// One measured row of the top-domains table.
struct Row {
    rank: String,
    domain: String,
    confidence: String,
    confidence_frac: f32,
    summary: Vec<String>,
    height: f32,
}

impl Row {
    fn new(fonts: &'static Fonts, rank: usize, d: &TopDomain) -> Row {
        let domain_w = COL_CONF - COL_DOMAIN - 2.0 * PAD;
        let domain = wrap(fonts, DOMAIN, &clean(&d.domain, 300), domain_w, 1);
        // Two lines hold at most about 220 of the narrowest glyphs, so the rest of a long
        // summary would only be shaped to be cut off.
        let summary = d
            .summary
            .as_deref()
            .map(|t| clean(t, 400))
            .unwrap_or_default();
        let summary_w = CONTENT_W - COL_SUMMARY - 2.0 * PAD;
        let summary = wrap(fonts, SUMMARY, &summary, summary_w, SUMMARY_LINES);
        let conf = if d.confidence.is_finite() {
            d.confidence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Row {
            rank: rank.to_string(),
            domain: domain.into_iter().next().unwrap_or_default(),
            confidence: percent(conf * 100.0),
            confidence_frac: conf as f32,
            height: ROW_PAD + LINE_H * summary.len().max(1) as f32,
            summary,
        }
    }
}

/// A run of table rows drawn on one page, starting at `top`.
struct Segment {
    page: usize,
    rows: Range<usize>,
    top: f32,
    continued: bool,
}

/// Splits the rows into page-sized runs; page 1's run starts below the charts.
fn paginate(rows: &[Row], page1_top: f32) -> Vec<Segment> {
    let mut segments = Vec::new();
    let (mut start, mut page, mut top) = (0, 0, page1_top);
    while start < rows.len() {
        let mut y = top + SECTION_H + HEADER_H;
        let mut end = start;
        while end < rows.len() && y + rows[end].height <= CONTENT_BOTTOM {
            y += rows[end].height;
            end += 1;
        }
        // Page 1 may have no room left after the charts; a later page always takes at least
        // one row (wrapping caps row height far below a page), so the loop always ends.
        if end == start && page > 0 {
            end = start + 1;
        }
        if end > start {
            segments.push(Segment {
                page,
                rows: start..end,
                top,
                continued: start > 0,
            });
        }
        (start, page, top) = (end, page + 1, MARGIN);
    }
    segments
}

fn draw_table(pen: &mut Pen<'_, '_>, rows: &[Row], seg: &Segment, total: usize) {
    if seg.continued {
        pen.heading(MARGIN, seg.top, "Top domains (continued)", "");
    } else {
        let note = format!("The {total} most confident domains");
        pen.heading(MARGIN, seg.top, "Top domains", &note);
    }
    let mut y = seg.top + SECTION_H;
    pen.rect(MARGIN, y, CONTENT_W, HEADER_H, PANEL);
    pen.rect(MARGIN, y + HEADER_H - 0.75, CONTENT_W, 0.75, BODY);
    let (rank_x, domain_x) = (MARGIN + PAD, MARGIN + COL_DOMAIN + PAD);
    let (conf_right, summary_x) = (MARGIN + COL_SUMMARY - PAD, MARGIN + COL_SUMMARY + PAD);
    let meter_x = MARGIN + COL_CONF + PAD;
    pen.left(TH, rank_x, y + 12.0, "#");
    pen.left(TH, domain_x, y + 12.0, "DOMAIN");
    pen.right(TH, conf_right, y + 12.0, "CONFIDENCE");
    pen.left(TH, summary_x, y + 12.0, "SUMMARY");
    y += HEADER_H;
    for (i, row) in rows
        .get(seg.rows.clone())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if i % 2 == 1 {
            pen.rect(MARGIN, y, CONTENT_W, row.height, ZEBRA);
        }
        let base = y + ROW_PAD / 2.0 + 7.5;
        pen.left(CELL.color(MUTED), rank_x, base, &row.rank);
        pen.left(DOMAIN, domain_x, base, &row.domain);
        // A small meter before the figure lets the eye compare confidences down the column.
        pen.rect(meter_x, base - 4.0, 18.0, 3.5, RULE);
        pen.rect(meter_x, base - 4.0, 18.0 * row.confidence_frac, 3.5, ACCENT);
        pen.right(CELL, conf_right, base, &row.confidence);
        if row.summary.is_empty() {
            pen.left(SUMMARY.color(MUTED), summary_x, base, "—");
        }
        for (l, line) in row.summary.iter().enumerate() {
            pen.left(SUMMARY, summary_x, base + l as f32 * LINE_H, line);
        }
        y += row.height;
        pen.rect(MARGIN, y - 0.5, CONTENT_W, 0.5, RULE);
    }
}

fn draw_footer(pen: &mut Pen<'_, '_>, label: &str, page: usize, pages: usize) {
    let y = PAGE_H - 34.0;
    pen.rect(MARGIN, y - 12.0, CONTENT_W, 0.5, RULE);
    let numbering = format!("Page {page} of {pages}");
    pen.right(NOTE, MARGIN + CONTENT_W, y, &numbering);
    let room = CONTENT_W - measure(pen.fonts, NOTE, &numbering) - 24.0;
    let label = wrap(pen.fonts, NOTE, label, room, 1);
    pen.left(NOTE, MARGIN, y, label.first().map_or("", String::as_str));
}
