//! Fonts, shaping, line breaking and the sanitising of untrusted strings for the report.
//!
//! Text is shaped here with rustybuzz rather than by krilla, so that the widths used to wrap,
//! truncate and right-align a cell are exactly those of the glyphs that are then drawn.

use std::ops::Range;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use anyhow::{Result, anyhow};
use krilla::text::{Font, GlyphId, KrillaGlyph};
use rustybuzz::{Direction, Script, ShapePlan, UnicodeBuffer, script};
use unicode_bidi::{Level, ParagraphBidiInfo};

/// DejaVu Sans (Bitstream Vera licence, see assets/fonts/LICENSE-DejaVu.txt) is compiled in,
/// so the PDF never depends on the fonts of the machine that renders it.
pub(super) static REGULAR_TTF: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
pub(super) static BOLD_TTF: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

type PlanKey = (Direction, Option<Script>);

/// A font as both krilla (for embedding) and rustybuzz (for shaping and measuring) see it.
pub(super) struct Face {
    pub(super) pdf: Font,
    shaper: rustybuzz::Face<'static>,
    upem: f32,
    /// Building a shape plan costs more than shaping a short cell, and a report shapes
    /// hundreds of cells in the same one or two scripts, so plans are kept per script.
    plans: Mutex<Vec<(PlanKey, Arc<ShapePlan>)>>,
}

impl Face {
    fn load(data: &'static [u8]) -> Option<Face> {
        let shaper = rustybuzz::Face::from_slice(data, 0)?;
        let upem = shaper.units_per_em().max(1) as f32;
        Some(Face {
            pdf: Font::new(data.into(), 0)?,
            shaper,
            upem,
            plans: Mutex::new(Vec::new()),
        })
    }

    fn plan(&self, key: PlanKey) -> Arc<ShapePlan> {
        // A poisoned lock only means another render panicked; the cache itself is still valid.
        let mut plans = self.plans.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, plan)) = plans.iter().find(|(k, _)| *k == key) {
            return plan.clone();
        }
        let plan = Arc::new(ShapePlan::new(&self.shaper, key.0, key.1, None, &[]));
        // Hostile text could cycle through every script; the cache stays small regardless.
        if plans.len() < 32 {
            plans.push((key, plan.clone()));
        }
        plan
    }
}

pub(super) struct Fonts {
    pub(super) regular: Face,
    pub(super) bold: Face,
}

/// Parsing the faces is done once per process rather than once per report.
static FONTS: LazyLock<Option<Fonts>> = LazyLock::new(|| {
    Some(Fonts {
        regular: Face::load(REGULAR_TTF)?,
        bold: Face::load(BOLD_TTF)?,
    })
});

pub(super) fn fonts() -> Result<&'static Fonts> {
    FONTS
        .as_ref()
        .ok_or_else(|| anyhow!("the embedded DejaVu fonts could not be parsed"))
}

/// Shapes a line, returning krilla glyphs in visual order and the advance width in ems.
/// Mixed-direction text (an Arabic name in an English sentence) is split into bidi runs
/// first, because rustybuzz shapes one direction at a time and would otherwise mirror the
/// whole line. Each glyph keeps the bytes of its cluster so the PDF maps it back to the text.
pub(super) fn shape(face: &Face, t: &str) -> (Vec<KrillaGlyph>, f32) {
    let mut glyphs = Vec::new();
    let mut width = 0.0;
    // Most cells are ASCII, which cannot contain right-to-left text; skip the bidi analysis.
    let bidi = (!t.is_ascii()).then(|| ParagraphBidiInfo::new(t, Some(Level::ltr())));
    if let Some(bidi) = bidi.filter(|b| b.has_rtl()) {
        let (levels, runs) = bidi.visual_runs(0..t.len());
        for run in runs {
            let rtl = levels.get(run.start).is_some_and(|l| l.is_rtl());
            width += shape_run(face, t, run, rtl, &mut glyphs);
        }
    } else {
        width += shape_run(face, t, 0..t.len(), false, &mut glyphs);
    }
    (glyphs, width)
}

fn shape_run(
    face: &Face,
    t: &str,
    run: Range<usize>,
    rtl: bool,
    out: &mut Vec<KrillaGlyph>,
) -> f32 {
    let Some(part) = t.get(run.clone()) else {
        return 0.0;
    };
    let mut buffer = UnicodeBuffer::new();
    buffer.push_str(part);
    buffer.guess_segment_properties();
    buffer.set_direction(if rtl {
        Direction::RightToLeft
    } else {
        Direction::LeftToRight
    });
    let script = Some(buffer.script()).filter(|s| *s != script::UNKNOWN);
    let plan = face.plan((buffer.direction(), script));
    let shaped = rustybuzz::shape_with_plan(&face.shaper, &plan, buffer);
    // A cluster ends where the next one (in text order) starts.
    let mut starts: Vec<usize> = shaped
        .glyph_infos()
        .iter()
        .map(|g| g.cluster as usize)
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let end_of = |start: usize| match starts.binary_search(&start) {
        Ok(k) => starts.get(k + 1).copied().unwrap_or(part.len()),
        Err(_) => part.len(),
    };
    let mut width = 0.0;
    for (info, pos) in shaped.glyph_infos().iter().zip(shaped.glyph_positions()) {
        let start = info.cluster as usize;
        let advance = pos.x_advance as f32 / face.upem;
        width += advance;
        out.push(KrillaGlyph::new(
            GlyphId::new(info.glyph_id),
            advance,
            pos.x_offset as f32 / face.upem,
            pos.y_offset as f32 / face.upem,
            pos.y_advance as f32 / face.upem,
            run.start + start..run.start + end_of(start),
            None,
        ));
    }
    width
}

pub(super) fn measure(face: &Face, size: f32, t: &str) -> f32 {
    shape(face, t).1 * size
}

/// The width in points of each cluster of `t`, in text order, keyed by its first byte.
fn clusters(face: &Face, size: f32, t: &str) -> Vec<(usize, f32)> {
    let (glyphs, _) = shape(face, t);
    let mut widths: Vec<(usize, f32)> = glyphs
        .iter()
        .map(|g| (g.text_range.start, g.x_advance * size))
        .collect();
    widths.sort_by_key(|w| w.0);
    widths.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 += next.1;
        }
        same
    });
    widths
}

/// Breaks `t` into at most `max_lines` lines no wider than `max_w`, preferring spaces and
/// breaking inside words (long domains, URLs) only when a word alone is too wide. Text that
/// does not fit ends in an ellipsis. `t` must already be `clean`ed (single spaces only).
pub(super) fn wrap(face: &Face, size: f32, t: &str, max_w: f32, max_lines: usize) -> Vec<String> {
    let cl = clusters(face, size, t);
    let pos = |k: usize| cl.get(k).map_or(t.len(), |c| c.0);
    let slice = |a: usize, b: usize| t.get(pos(a)..pos(b)).unwrap_or("");
    let mut lines = Vec::new();
    let mut i = 0;
    while i < cl.len() && lines.len() < max_lines {
        while i < cl.len() && slice(i, i + 1) == " " {
            i += 1;
        }
        if i >= cl.len() {
            break;
        }
        let (mut j, mut w, mut space) = (i, 0.0, None);
        while j < cl.len() && w + cl[j].1 <= max_w {
            if slice(j, j + 1) == " " {
                space = Some(j);
            }
            w += cl[j].1;
            j += 1;
        }
        if j == cl.len() {
            lines.push(slice(i, j).trim_end().to_owned());
            break;
        }
        if lines.len() + 1 == max_lines {
            let ellipsis = measure(face, size, "…");
            let (mut k, mut w) = (i, 0.0);
            while k < cl.len() && w + cl[k].1 + ellipsis <= max_w {
                w += cl[k].1;
                k += 1;
            }
            lines.push(format!("{}…", slice(i, k).trim_end()));
            break;
        }
        // Every line takes at least one cluster, so even an absurdly narrow column ends.
        let (stop, next) = match space {
            Some(b) if b > i => (b, b + 1),
            _ => (j.max(i + 1), j.max(i + 1)),
        };
        lines.push(slice(i, stop).to_owned());
        i = next;
    }
    lines
}

/// Makes untrusted text safe to lay out: control characters and invisible bidi overrides are
/// dropped (they would garble the line or the extracted text), runs of whitespace collapse to
/// one space, and the length is capped so a huge field cannot make shaping slow.
pub(super) fn clean(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 4));
    let mut pending_space = false;
    let mut count = 0;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else if c.is_control() || is_invisible_format(c) {
            continue;
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
            count += 1;
            if count >= max_chars {
                break;
            }
        }
    }
    out
}

/// Zero-width characters, bidi embeddings, overrides and isolates, and the byte-order mark.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// 1234567 becomes "1,234,567".
pub(super) fn thousands(v: i64) -> String {
    let digits = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// 12345678901 becomes "12.3B"; used only where the exact figure does not fit.
pub(super) fn abbreviate(v: i64) -> Option<String> {
    let units = [(1e15, "Q"), (1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")];
    let v = v as f64;
    let (scale, unit) = units.iter().find(|(scale, _)| v.abs() >= *scale)?;
    Some(format!("{:.1}{unit}", v / scale))
}

pub(super) fn percent(v: f64) -> String {
    bounded_percent(v, false)
}

/// Like `percent`, with an explicit "+" on gains.
pub(super) fn signed_percent(v: f64) -> String {
    bounded_percent(v, true)
}

/// Percentages from upstream are not trusted to be sane: beyond ±99,999.9 % the figure is
/// shown as a bound (">99999.9%") so it still fits its card.
fn bounded_percent(v: f64, sign: bool) -> String {
    const LIMIT: f64 = 99_999.9;
    if !v.is_finite() {
        return "n/a".to_owned();
    }
    let prefix = if v > LIMIT {
        ">"
    } else if v < -LIMIT {
        "<"
    } else {
        ""
    };
    let v = v.clamp(-LIMIT, LIMIT);
    if sign {
        format!("{prefix}{v:+.1}%")
    } else {
        format!("{prefix}{v:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_controls_and_whitespace() {
        assert_eq!(clean(" a\u{0}b\n\t c\u{202E}d ", 100), "ab cd");
        assert_eq!(clean("abcdef", 3), "abc");
    }

    #[test]
    fn formats_numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(-1234567), "-1,234,567");
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
        assert_eq!(abbreviate(12_345_678_901).as_deref(), Some("12.3B"));
        assert_eq!(percent(f64::NAN), "n/a");
        assert_eq!(signed_percent(8.66), "+8.7%");
        assert_eq!(signed_percent(-1e300), "<-99999.9%");
    }

    #[test]
    fn wraps_and_truncates() {
        let face = &fonts().expect("fonts").regular;
        let text = "one two three four five six seven eight nine ten";
        let lines = wrap(face, 10.0, text, 80.0, 2);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'));
        assert!(lines.iter().all(|l| measure(face, 10.0, l) <= 80.0));
        assert_eq!(wrap(face, 10.0, "short", 80.0, 2), vec!["short"]);
        let long = wrap(face, 10.0, &"x".repeat(500), 80.0, 1);
        assert!(long[0].ends_with('…') && measure(face, 10.0, &long[0]) <= 80.0);
        assert!(wrap(face, 10.0, "", 80.0, 2).is_empty());
    }
}
