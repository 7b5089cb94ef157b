//! The two report charts, drawn by plotters into SVG and parsed by usvg so that krilla-svg
//! can place them on the page as vector paths with real, selectable text.

use std::sync::{Arc, LazyLock};

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use usvg::fontdb;

/// The chart SVGs are drawn at this multiple of their size on the page. Plotters works in
/// integer pixels, so drawing at 1 px per point would snap every line to whole points.
const SCALE: f64 = 2.0;
/// Plotters writes `font-size = size / 1.24` into the SVG; this undoes that so sizes below
/// are in final PDF points.
const PLOTTERS_FONT_FACTOR: f64 = 1.24;
/// The family plotters writes into every `<text>`; usvg resolves it to the shipped font.
const FAMILY: &str = "sans-serif";

const ACCENT: RGBColor = RGBColor(37, 99, 235);
const ACCENT_FILL: RGBColor = RGBColor(219, 234, 254);
const MUTED_BAR: RGBColor = RGBColor(156, 163, 175);
const TEXT: RGBColor = RGBColor(55, 65, 81);
const GRID: RGBColor = RGBColor(229, 231, 235);
const AXIS: RGBColor = RGBColor(209, 213, 219);

/// One bar of the country chart, already labelled and measured by the caller.
pub struct Bar {
    pub label: String,
    pub value_label: String,
    pub value: f64,
    pub muted: bool,
}

/// usvg needs a font database to lay out chart text. It holds only the shipped fonts (never
/// the system's), so the PDF looks the same on every machine, and it is built once because
/// parsing the faces is the most expensive part of preparing a chart.
static FONT_DB: LazyLock<Arc<fontdb::Database>> = LazyLock::new(|| {
    let mut db = fontdb::Database::new();
    db.load_font_source(fontdb::Source::Binary(Arc::new(super::text::REGULAR_TTF)));
    db.load_font_source(fontdb::Source::Binary(Arc::new(super::text::BOLD_TTF)));
    db.set_sans_serif_family("DejaVu Sans");
    Arc::new(db)
});

fn px(points: f64) -> u32 {
    (points * SCALE).round().max(1.0) as u32
}

fn font(points: f64, color: &RGBColor) -> TextStyle<'static> {
    (FAMILY, points * SCALE * PLOTTERS_FONT_FACTOR)
        .into_font()
        .color(color)
}

/// Parses a plotters SVG into a usvg tree that uses only the shipped fonts.
fn parse(svg: &str) -> Result<usvg::Tree> {
    let options = usvg::Options {
        font_family: "DejaVu Sans".to_owned(),
        fontdb: FONT_DB.clone(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).context("chart SVG could not be parsed")
}

/// Runs a drawing closure on a fresh SVG canvas of `w` x `h` points and returns the parsed tree.
fn draw_svg<F>(w: f64, h: f64, draw: F) -> Result<usvg::Tree>
where
    F: FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (px(w), px(h))).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    parse(&svg)
}

/// Short axis labels: counts above ten thousand are abbreviated so the y axis stays narrow.
fn compact_count(v: i64) -> String {
    let a = v.unsigned_abs();
    if a >= 1_000_000 {
        format!("{:.1}M", v as f64 / 1e6)
    } else if a >= 10_000 {
        format!("{}k", v / 1000)
    } else {
        super::text::thousands(v)
    }
}

/// A line chart of weekly lead counts, oldest week on the left.
pub fn trend(labels: &[String], counts: &[i64], w: f64, h: f64) -> Result<usvg::Tree> {
    let n = counts.len().max(1);
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    // Leave headroom above the highest point so its marker is not clipped by the frame.
    let top = max + max / 8 + 1;
    // x is in half-week units (week i sits at 2i) so the integer axis can leave half a week
    // of air at both ends; plotters' key-point axes only format integer coordinates.
    let last = 2 * (n as i32 - 1);
    // Twelve labels share about 200 pt, so when the longest would collide with its
    // neighbour only every second (third, ...) week is labelled, always including the latest.
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64;
    let spacing = (w - 34.0 - 8.0) / n as f64;
    let step = ((longest * 6.5 * 0.7 + 4.0) / spacing).ceil().max(1.0) as usize;
    let keys: Vec<i32> = (0..n)
        .filter(|i| (n - 1 - i).is_multiple_of(step))
        .map(|i| 2 * i as i32)
        .collect();
    draw_svg(w, h, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin_top(px(6.0))
            .margin_right(px(8.0))
            .x_label_area_size(px(16.0))
            .y_label_area_size(px(34.0))
            .build_cartesian_2d((-1..last + 1).with_key_points(keys), 0i64..top)?;
        let x_fmt = |x: &i32| {
            usize::try_from(*x / 2)
                .ok()
                .filter(|_| x % 2 == 0)
                .and_then(|i| labels.get(i).cloned())
                .unwrap_or_default()
        };
        let y_fmt = |y: &i64| compact_count(*y);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_labels(5)
            .bold_line_style(GRID.stroke_width(px(0.5)))
            .light_line_style(TRANSPARENT)
            .axis_style(AXIS.stroke_width(px(0.75)))
            .set_all_tick_mark_size(px(2.0))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style(font(6.5, &TEXT))
            .draw()?;
        let points: Vec<(i32, i64)> = counts.iter().zip(0..).map(|(c, i)| (2 * i, *c)).collect();
        // The shaded area under the line is a plain polygon closed along the x axis.
        let mut area = points.clone();
        area.push((last, 0));
        area.push((0, 0));
        chart.draw_series(std::iter::once(Polygon::new(area, ACCENT_FILL.filled())))?;
        chart.draw_series(LineSeries::new(
            points.iter().copied(),
            ACCENT.stroke_width(px(1.5)),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|p| Circle::new(*p, px(2.0), ACCENT.filled())),
        )?;
        Ok(())
    })
}

/// A horizontal bar chart, first bar at the top, with each bar's value printed at its end.
pub fn bars(bars: &[Bar], w: f64, h: f64) -> Result<usvg::Tree> {
    let n = bars.len().max(1);
    let max = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    // Room on the right for the value labels printed past the longest bar.
    let right = max * 1.28;
    // Category k owns the band [10k, 10k + 10) of an integer axis, labelled at its centre.
    let bands = n as i32;
    let keys: Vec<i32> = (0..bands).map(|k| 10 * k + 5).collect();
    // The label column is sized to the longest label, estimated at DejaVu's average advance.
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(2);
    let label_w = (longest as f64 * 6.5 * 0.62 + 8.0).clamp(18.0, w * 0.35);
    let label_style = font(6.5, &TEXT);
    let value_style = font(6.5, &TEXT).pos(Pos::new(HPos::Left, VPos::Center));
    draw_svg(w, h, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin_top(px(2.0))
            .margin_right(px(4.0))
            .y_label_area_size(px(label_w))
            .build_cartesian_2d(0.0..right, (0..10 * bands).with_key_points(keys))?;
        // Bar i is drawn in band n-1-i so the largest share sits on top.
        let y_fmt = |y: &i32| {
            usize::try_from(bands - 1 - y.div_euclid(10))
                .ok()
                .and_then(|i| bars.get(i))
                .map(|b| b.label.clone())
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_y_mesh()
            .disable_x_axis()
            // The axis and its ticks are invisible; the ticks only space the labels off the
            // baseline, which is drawn below as part of the series.
            .axis_style(TRANSPARENT)
            .set_all_tick_mark_size(px(2.0))
            .y_label_formatter(&y_fmt)
            .label_style(label_style)
            .draw()?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0), (0.0, 10 * bands)],
            AXIS.stroke_width(px(0.75)),
        )))?;
        chart.draw_series(bars.iter().zip(0..).map(|(b, i)| {
            let y = 10 * (bands - 1 - i);
            let color = if b.muted { MUTED_BAR } else { ACCENT };
            Rectangle::new([(0.0, y + 2), (b.value, y + 8)], color.filled())
        }))?;
        chart.draw_series(bars.iter().zip(0..).map(|(b, i)| {
            let y = 10 * (bands - 1 - i) + 5;
            EmptyElement::at((b.value, y))
                + Text::new(b.value_label.clone(), (px(3.0) as i32, 0), &value_style)
        }))?;
        Ok(())
    })
}
