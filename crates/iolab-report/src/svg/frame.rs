//! What every chart shares: ticks, the title block, the legend, the x–y plot area and its
//! axes, and the ceilings drawn across it.

use std::fmt::Write;

use super::*;

/// Tick values from 0 (or `lo`) to at least `hi` in steps of 1, 2 or 5 × 10^k.
pub(super) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).floor();
    let last = (hi / step - 1e-9).ceil().max(first + 1.0);
    (0..=((last - first) as usize))
        .map(|i| (first + i as f64) * step)
        .collect()
}

/// The svg element's opening tag and the title block.
pub(super) fn open(out: &mut String, height: f64, title: &str, subtitle: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}" font-family="sans-serif" font-size="11">"#,
        w = c(WIDTH),
        h = c(height),
        t = esc(title)
    );
    let _ = write!(
        out,
        r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/><text x="{}" y="20" font-size="14" font-weight="bold">{}</text>"##,
        c(WIDTH),
        c(height),
        c(LEFT - 60.0),
        esc(title)
    );
    if !subtitle.is_empty() {
        let _ = write!(
            out,
            r##"<text x="{}" y="38" fill="#555555">{}</text>"##,
            c(LEFT - 60.0),
            esc(subtitle)
        );
    }
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(super) enum Mark {
    Line,
    Dash,
    Dot,
    Box,
}

/// The legend below the plot, starting at `y`; returns its height.
pub(super) fn legend(out: &mut String, y: f64, entries: &[(String, &str, Mark)]) -> f64 {
    let col_w = (WIDTH - LEFT - RIGHT + 40.0) / LEGEND_COLS as f64;
    for (i, (label, col, mark)) in entries.iter().enumerate() {
        let x = LEFT - 40.0 + (i % LEGEND_COLS) as f64 * col_w;
        let ly = y + (i / LEGEND_COLS) as f64 * LEGEND_ROW + 10.0;
        match mark {
            Mark::Line => {
                let _ = write!(
                    out,
                    r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="2.5"/>"#,
                    c(x),
                    c(ly - 4.0),
                    c(x + 18.0),
                    c(ly - 4.0)
                );
            }
            Mark::Dash => {
                let _ = write!(
                    out,
                    r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="2" stroke-dasharray="5 3"/>"#,
                    c(x),
                    c(ly - 4.0),
                    c(x + 18.0),
                    c(ly - 4.0)
                );
            }
            Mark::Dot => {
                let _ = write!(
                    out,
                    r#"<circle cx="{}" cy="{}" r="3" fill="{col}"/>"#,
                    c(x + 9.0),
                    c(ly - 4.0)
                );
            }
            Mark::Box => {
                let _ = write!(
                    out,
                    r#"<rect x="{}" y="{}" width="18" height="9" fill="{col}"/>"#,
                    c(x),
                    c(ly - 9.0)
                );
            }
        }
        // Long labels are cut to the column in the middle, keeping both ends (a series' name
        // in front, a result's distinguishing file name and time at the end); the full text
        // stays in a tooltip.
        let max_chars = ((col_w - 30.0) / 6.2) as usize;
        let shown = cut_middle(label, max_chars);
        let _ = write!(
            out,
            r#"<text x="{}" y="{}"><title>{}</title>{}</text>"#,
            c(x + 24.0),
            c(ly),
            esc(label),
            esc(&shown)
        );
    }
    legend_height(entries.len())
}

/// `label` in at most `max` characters: whole, or its start and end around a `…`.
pub(super) fn cut_middle(label: &str, max: usize) -> String {
    let n = label.chars().count();
    if n <= max {
        return label.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep * 2 / 5;
    let tail = keep - head;
    let start: String = label.chars().take(head).collect();
    let end: String = label.chars().skip(n - tail).collect();
    format!("{}…{}", start.trim_end(), end.trim_start())
}

pub(super) fn legend_height(entries: usize) -> f64 {
    entries.div_ceil(LEGEND_COLS) as f64 * LEGEND_ROW + 6.0
}

/// The plot area of an x–y chart and its mapping from values to user units.
pub(super) struct Plot {
    pub(super) x_scale: XScale,
    pub(super) x_min: f64,
    pub(super) x_max: f64,
    pub(super) y_min: f64,
    pub(super) y_max: f64,
}

impl Plot {
    pub(super) fn left(&self) -> f64 {
        LEFT
    }
    pub(super) fn right(&self) -> f64 {
        WIDTH - RIGHT
    }
    pub(super) fn top(&self) -> f64 {
        TOP
    }
    pub(super) fn bottom(&self) -> f64 {
        TOP + PLOT_H
    }
    pub(super) fn tx(&self, x: f64) -> f64 {
        match self.x_scale {
            XScale::Linear => x,
            XScale::Log2 => x.max(f64::MIN_POSITIVE).log2(),
        }
    }
    pub(super) fn px(&self, x: f64) -> f64 {
        let (a, b) = (self.tx(self.x_min), self.tx(self.x_max));
        if b - a <= 0.0 {
            return (self.left() + self.right()) / 2.0;
        }
        // A little room at both ends so end points and their markers are not cut.
        let pad = 12.0;
        self.left() + pad + (self.tx(x) - a) / (b - a) * (self.right() - self.left() - 2.0 * pad)
    }
    pub(super) fn py(&self, y: f64) -> f64 {
        let span = (self.y_max - self.y_min).max(f64::MIN_POSITIVE);
        self.bottom() - (y - self.y_min) / span * (self.bottom() - self.top())
    }

    /// Grid, y ticks and labels, axis labels; x ticks at `x_ticks` with `x_text` labels.
    pub(super) fn axes(
        &self,
        out: &mut String,
        y_ticks: &[f64],
        x_ticks: &[(f64, String)],
        x_label: &str,
        y_label: &str,
    ) {
        for &t in y_ticks {
            let y = self.py(t);
            let _ = write!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/><text x="{}" y="{}" text-anchor="end" fill="#333333">{}</text>"##,
                c(self.left()),
                c(y),
                c(self.right()),
                c(y),
                c(self.left() - 6.0),
                c(y + 4.0),
                esc(&fmt_tick(t))
            );
        }
        for (x, text) in x_ticks {
            let px = self.px(*x);
            let _ = write!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#f0f0f0"/><text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
                c(px),
                c(self.top()),
                c(px),
                c(self.bottom()),
                c(px),
                c(self.bottom() + 16.0),
                esc(text)
            );
        }
        let _ = write!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999999"/>"##,
            c(self.left()),
            c(self.top()),
            c(self.right() - self.left()),
            c(self.bottom() - self.top())
        );
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
            c((self.left() + self.right()) / 2.0),
            c(self.bottom() + 34.0),
            esc(x_label)
        );
        let yc = (self.top() + self.bottom()) / 2.0;
        let _ = write!(
            out,
            r##"<text x="14" y="{}" text-anchor="middle" fill="#333333" transform="rotate(-90 14 {})">{}</text>"##,
            c(yc),
            c(yc),
            esc(y_label)
        );
    }
}

/// x ticks: on a log2 axis at every distinct x (every other one when crowded), else nice ticks.
pub(super) fn x_ticks(
    scale: XScale,
    labels: XLabels,
    xs: &[f64],
    lo: f64,
    hi: f64,
) -> Vec<(f64, String)> {
    let text = |v: f64| match labels {
        XLabels::Bytes => fmt_bytes(v),
        XLabels::Number => fmt_tick(v),
    };
    match scale {
        XScale::Log2 => {
            let mut d: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
            d.sort_by(f64::total_cmp);
            d.dedup();
            let every = d.len().div_ceil(16).max(1);
            d.iter()
                .enumerate()
                .filter(|(i, _)| i % every == 0)
                .map(|(_, &x)| (x, text(x)))
                .collect()
        }
        XScale::Linear => nice_ticks(lo, hi, 8)
            .into_iter()
            .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
            .map(|t| (t, text(t)))
            .collect(),
    }
}

/// The ceilings close enough to the data to draw (within 1.6× the largest value), and a note
/// naming the others.
pub(super) fn split_ceilings(ceilings: &[Ceiling], data_max: f64) -> (Vec<&Ceiling>, String) {
    let (near, far): (Vec<&Ceiling>, Vec<&Ceiling>) = ceilings
        .iter()
        .filter(|c| c.value.is_finite() && c.value > 0.0)
        .partition(|c| data_max > 0.0 && c.value <= 1.6 * data_max);
    let note = far
        .iter()
        .map(|c| format!("{} {} (off the scale)", c.label, fmt_value(c.value)))
        .collect::<Vec<_>>()
        .join("; ");
    (near, note)
}

pub(super) fn join_subtitle(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a} · {b}"),
    }
}

pub(super) fn draw_ceiling(out: &mut String, plot: &Plot, value: f64, col: &str) {
    let y = plot.py(value);
    let _ = write!(
        out,
        r#"<line class="ceiling" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
        c(plot.left()),
        c(y),
        c(plot.right()),
        c(y)
    );
}

pub(super) fn ceiling_colour(i: usize) -> &'static str {
    ["#444444", "#888888", "#aa6600"][i % 3]
}
