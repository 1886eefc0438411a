//! Charts as SVG text: pure functions from numbers to markup, no dependencies.
//!
//! Every chart is deterministic (fixed palette, fixed layout, coordinates printed with one
//! decimal) so a report renders byte for byte the same from the same result, and every piece of
//! text is escaped. Sizes are in SVG user units; the page scales the charts to its width.

use std::fmt::Write;

/// Width of every chart.
const WIDTH: f64 = 760.0;
/// Left margin: room for the y tick labels and the y axis label.
const LEFT: f64 = 78.0;
/// Right margin.
const RIGHT: f64 = 24.0;
/// Room above the plot for the title and subtitle.
const TOP: f64 = 52.0;
/// Height of the plot area of line, scatter and convergence charts.
const PLOT_H: f64 = 260.0;
/// Room below the plot for the x tick labels and the x axis label.
const BOTTOM: f64 = 48.0;
/// One row of the legend.
const LEGEND_ROW: f64 = 18.0;
/// Legend entries per row.
const LEGEND_COLS: usize = 3;

/// Series colours, in order (distinguishable, also in grey print).
pub const PALETTE: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for SVG and HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A coordinate with one decimal (never `-0.0`, never NaN).
fn c(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let r = (v * 10.0).round() / 10.0;
    if r == 0.0 {
        "0".into()
    } else if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// A figure as a reader wants it: three significant digits or whole numbers.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

/// A number as a label: whole numbers without decimals (`16`, `50`), others as [`fmt_value`].
pub fn fmt_num(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        fmt_value(v)
    }
}

/// A tick label: short, with k and M for large numbers.
fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 && (v / 1e6).fract().abs() < 1e-9 {
        format!("{:.0}M", v / 1e6)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 && (v / 1e3).fract().abs() < 1e-9 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        let s = fmt_value(v);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// Bytes as a transfer-size label: `512`, `4K`, `64M`.
pub fn fmt_bytes(v: f64) -> String {
    let b = v.round() as u64;
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

/// How the x axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XScale {
    /// Evenly spaced values.
    Linear,
    /// Powers of two evenly spaced (queue depths, block sizes).
    Log2,
}

/// How x tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XLabels {
    /// Plain numbers.
    Number,
    /// Byte counts as transfer sizes (`4K`).
    Bytes,
}

/// One named series of points.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// (x, y) points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// A horizontal reference line: the path ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct Ceiling {
    /// Legend text (`ceiling of the path: PCIe 3.0 x4`).
    pub label: String,
    /// Value in the chart's y unit.
    pub value: f64,
}

/// A line chart of several series (QD scaling, block-size scaling, mixed workloads).
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// A line under the title (may be empty).
    pub subtitle: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label, with its unit.
    pub y_label: String,
    /// x mapping.
    pub x_scale: XScale,
    /// x tick text.
    pub x_labels: XLabels,
    /// The series.
    pub series: Vec<Series>,
    /// Ceilings to draw (only those within reach of the data are drawn; the rest are named in
    /// the subtitle).
    pub ceilings: Vec<Ceiling>,
}

/// Per-second values over time as dots (performance consistency, WSAT).
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterChart {
    /// Title.
    pub title: String,
    /// A line under the title (may be empty).
    pub subtitle: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// The series (x = seconds).
    pub series: Vec<Series>,
    /// Show only points whose x is within this many seconds of each series' last x.
    pub last_seconds: Option<f64>,
}

/// One named row of bar values, one per category (`None`: not measured).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BarSeries {
    /// Legend text.
    pub label: String,
    /// A value per category.
    pub values: Vec<Option<f64>>,
}

/// Horizontal grouped bars (ATTO's read and write per transfer size; scores per drive).
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Title.
    pub title: String,
    /// A line under the title (may be empty).
    pub subtitle: String,
    /// The value axis label, with its unit.
    pub value_label: String,
    /// Category labels, top to bottom.
    pub categories: Vec<String>,
    /// Series, drawn in this order within each category.
    pub series: Vec<BarSeries>,
    /// Ceilings (as for [`LineChart::ceilings`]).
    pub ceilings: Vec<Ceiling>,
}

/// A grid of values coloured by size (X-bit's Database read share × QD; SNIA's IOPS matrix).
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    /// Title.
    pub title: String,
    /// A line under the title (may be empty).
    pub subtitle: String,
    /// What the rows are (`read %`).
    pub row_label: String,
    /// What the columns are (`queue depth`).
    pub col_label: String,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Column labels, left to right.
    pub cols: Vec<String>,
    /// `values[row][col]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// Unit of the values.
    pub unit: String,
}

/// The steady-state determination of a step drawn: every round's tracking value, the window, its
/// mean with the ±10 % band and the ±20 % range, and the least-squares line over the window.
#[derive(Clone, Debug, PartialEq)]
pub struct Convergence {
    /// Title.
    pub title: String,
    /// A line under the title (the verdict).
    pub subtitle: String,
    /// y axis label.
    pub y_label: String,
    /// Tracking value of each round, round 1 first.
    pub rounds: Vec<f64>,
    /// Rounds in the window (the last ones).
    pub window: usize,
    /// Mean of the window.
    pub window_mean: f64,
    /// Least-squares slope per round over the window.
    pub slope: f64,
    /// The fit's value at the window's first round.
    pub intercept: f64,
}

/// Tick values from 0 (or `lo`) to at least `hi` in steps of 1, 2 or 5 × 10^k.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
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
fn open(out: &mut String, height: f64, title: &str, subtitle: &str) {
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
enum Mark {
    Line,
    Dash,
    Dot,
    Box,
}

/// The legend below the plot, starting at `y`; returns its height.
fn legend(out: &mut String, y: f64, entries: &[(String, &str, Mark)]) -> f64 {
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
fn cut_middle(label: &str, max: usize) -> String {
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

fn legend_height(entries: usize) -> f64 {
    entries.div_ceil(LEGEND_COLS) as f64 * LEGEND_ROW + 6.0
}

/// The plot area of an x–y chart and its mapping from values to user units.
struct Plot {
    x_scale: XScale,
    x_min: f64,
    x_max: f64,
    y_min: f64,
    y_max: f64,
}

impl Plot {
    fn left(&self) -> f64 {
        LEFT
    }
    fn right(&self) -> f64 {
        WIDTH - RIGHT
    }
    fn top(&self) -> f64 {
        TOP
    }
    fn bottom(&self) -> f64 {
        TOP + PLOT_H
    }
    fn tx(&self, x: f64) -> f64 {
        match self.x_scale {
            XScale::Linear => x,
            XScale::Log2 => x.max(f64::MIN_POSITIVE).log2(),
        }
    }
    fn px(&self, x: f64) -> f64 {
        let (a, b) = (self.tx(self.x_min), self.tx(self.x_max));
        if b - a <= 0.0 {
            return (self.left() + self.right()) / 2.0;
        }
        // A little room at both ends so end points and their markers are not cut.
        let pad = 12.0;
        self.left() + pad + (self.tx(x) - a) / (b - a) * (self.right() - self.left() - 2.0 * pad)
    }
    fn py(&self, y: f64) -> f64 {
        let span = (self.y_max - self.y_min).max(f64::MIN_POSITIVE);
        self.bottom() - (y - self.y_min) / span * (self.bottom() - self.top())
    }

    /// Grid, y ticks and labels, axis labels; x ticks at `x_ticks` with `x_text` labels.
    fn axes(
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
fn x_ticks(scale: XScale, labels: XLabels, xs: &[f64], lo: f64, hi: f64) -> Vec<(f64, String)> {
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
fn split_ceilings(ceilings: &[Ceiling], data_max: f64) -> (Vec<&Ceiling>, String) {
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

fn join_subtitle(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a} · {b}"),
    }
}

fn draw_ceiling(out: &mut String, plot: &Plot, value: f64, col: &str) {
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

/// A line chart.
pub fn line_chart(ch: &LineChart) -> String {
    let points: Vec<(f64, f64)> = ch
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .filter(|(x, _)| ch.x_scale == XScale::Linear || *x > 0.0)
        .collect();
    let data_max = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let (near, far_note) = split_ceilings(&ch.ceilings, data_max);
    let y_top = near.iter().map(|c| c.value).fold(data_max, f64::max);
    let y_ticks = nice_ticks(0.0, if y_top > 0.0 { y_top * 1.05 } else { 1.0 }, 5);
    let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min.is_finite() {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    };
    let (x_min, x_max) = match ch.x_scale {
        XScale::Linear => {
            let t = nice_ticks(x_min.min(0.0), x_max, 8);
            (t[0], *t.last().unwrap_or(&1.0))
        }
        XScale::Log2 => (x_min, x_max),
    };
    let plot = Plot {
        x_scale: ch.x_scale,
        x_min,
        x_max,
        y_min: 0.0,
        y_max: *y_ticks.last().unwrap_or(&1.0),
    };
    let mut entries: Vec<(String, &str, Mark)> = ch
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), colour(i), Mark::Line))
        .collect();
    for (i, cl) in near.iter().enumerate() {
        entries.push((cl.label.clone(), ceiling_colour(i), Mark::Dash));
    }
    let height = TOP + PLOT_H + BOTTOM + legend_height(entries.len());
    let mut out = String::new();
    open(
        &mut out,
        height,
        &ch.title,
        &join_subtitle(&ch.subtitle, &far_note),
    );
    let ticks = x_ticks(ch.x_scale, ch.x_labels, &xs, x_min, x_max);
    plot.axes(&mut out, &y_ticks, &ticks, &ch.x_label, &ch.y_label);
    for (i, cl) in near.iter().enumerate() {
        draw_ceiling(&mut out, &plot, cl.value, ceiling_colour(i));
    }
    for (i, s) in ch.series.iter().enumerate() {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|(x, y)| {
                x.is_finite() && y.is_finite() && (ch.x_scale == XScale::Linear || *x > 0.0)
            })
            .collect();
        let col = colour(i);
        let path = pts
            .iter()
            .map(|(x, y)| format!("{},{}", c(plot.px(*x)), c(plot.py(*y))))
            .collect::<Vec<_>>()
            .join(" ");
        let _ = write!(
            out,
            r#"<g class="series"><polyline points="{path}" fill="none" stroke="{col}" stroke-width="2"/>"#
        );
        for (x, y) in &pts {
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="3" fill="{col}"><title>{}: {} → {}</title></circle>"#,
                c(plot.px(*x)),
                c(plot.py(*y)),
                esc(&s.label),
                esc(&match ch.x_labels {
                    XLabels::Bytes => fmt_bytes(*x),
                    XLabels::Number => fmt_value(*x),
                }),
                esc(&fmt_value(*y))
            );
        }
        out.push_str("</g>");
    }
    legend(&mut out, TOP + PLOT_H + BOTTOM, &entries);
    out.push_str("</svg>");
    out
}

fn ceiling_colour(i: usize) -> &'static str {
    ["#444444", "#888888", "#aa6600"][i % 3]
}

/// A scatter chart of per-second values.
pub fn scatter_chart(ch: &ScatterChart) -> String {
    let shown: Vec<Vec<(f64, f64)>> = ch
        .series
        .iter()
        .map(|s| {
            let end = s
                .points
                .iter()
                .map(|p| p.0)
                .fold(f64::NEG_INFINITY, f64::max);
            s.points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .filter(|(x, _)| ch.last_seconds.is_none_or(|n| *x > end - n + 1e-9))
                .collect()
        })
        .collect();
    let all: Vec<(f64, f64)> = shown.iter().flatten().copied().collect();
    let y_max = all.iter().map(|p| p.1).fold(0.0, f64::max);
    let y_ticks = nice_ticks(0.0, if y_max > 0.0 { y_max * 1.05 } else { 1.0 }, 5);
    let x_lo = all.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_hi = all.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let (x_lo, x_hi) = if x_lo.is_finite() {
        (x_lo, x_hi)
    } else {
        (0.0, 1.0)
    };
    // The whole run starts the axis at 0; a window starts it at its first second.
    let x_ticks_v = nice_ticks(
        if ch.last_seconds.is_some() {
            x_lo.floor()
        } else {
            0.0
        },
        x_hi.max(x_lo + 1.0),
        8,
    );
    let plot = Plot {
        x_scale: XScale::Linear,
        x_min: x_ticks_v[0],
        x_max: *x_ticks_v.last().unwrap_or(&1.0),
        y_min: 0.0,
        y_max: *y_ticks.last().unwrap_or(&1.0),
    };
    let entries: Vec<(String, &str, Mark)> = ch
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), colour(i), Mark::Dot))
        .collect();
    let height = TOP + PLOT_H + BOTTOM + legend_height(entries.len());
    let mut out = String::new();
    open(&mut out, height, &ch.title, &ch.subtitle);
    let ticks: Vec<(f64, String)> = x_ticks_v.iter().map(|&t| (t, fmt_tick(t))).collect();
    plot.axes(&mut out, &y_ticks, &ticks, &ch.x_label, &ch.y_label);
    // Dots shrink as they crowd: an hour of seconds is a cloud, a few seconds are points.
    let r = if all.len() > 300 { "1.8" } else { "3" };
    for (i, pts) in shown.iter().enumerate() {
        let col = colour(i);
        out.push_str(r#"<g class="series">"#);
        for (x, y) in pts {
            let _ = write!(
                out,
                r#"<circle class="dot" cx="{}" cy="{}" r="{r}" fill="{col}" fill-opacity="0.8"/>"#,
                c(plot.px(*x)),
                c(plot.py(*y))
            );
        }
        out.push_str("</g>");
    }
    legend(&mut out, TOP + PLOT_H + BOTTOM, &entries);
    out.push_str("</svg>");
    out
}

/// Horizontal grouped bars.
pub fn bar_chart(ch: &BarChart) -> String {
    const BAR_H: f64 = 13.0;
    const GAP: f64 = 9.0;
    let n = ch.series.len().max(1) as f64;
    let group_h = n * BAR_H + GAP;
    let plot_h = ch.categories.len().max(1) as f64 * group_h;
    let data_max = ch
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (near, far_note) = split_ceilings(&ch.ceilings, data_max);
    let top_v = near.iter().map(|c| c.value).fold(data_max, f64::max);
    let ticks = nice_ticks(0.0, if top_v > 0.0 { top_v * 1.08 } else { 1.0 }, 5);
    let v_max = *ticks.last().unwrap_or(&1.0);
    // Room for the longest category label (about 6.2 units a character at this font size).
    let longest = ch
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    let label_w = (longest as f64 * 6.2 + 18.0).clamp(60.0, 330.0);
    let (x0, x1) = (label_w, WIDTH - RIGHT - 10.0);
    let px = |v: f64| x0 + v.max(0.0) / v_max * (x1 - x0);
    let mut entries: Vec<(String, &str, Mark)> = ch
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), colour(i), Mark::Box))
        .collect();
    for (i, cl) in near.iter().enumerate() {
        entries.push((cl.label.clone(), ceiling_colour(i), Mark::Dash));
    }
    let axis_y = TOP + plot_h;
    let height = axis_y + BOTTOM + legend_height(entries.len());
    let mut out = String::new();
    open(
        &mut out,
        height,
        &ch.title,
        &join_subtitle(&ch.subtitle, &far_note),
    );
    for &t in &ticks {
        let x = px(t);
        let _ = write!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/><text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
            c(x),
            c(TOP),
            c(x),
            c(axis_y),
            c(x),
            c(axis_y + 16.0),
            esc(&fmt_tick(t))
        );
    }
    for (ci, cat) in ch.categories.iter().enumerate() {
        let gy = TOP + ci as f64 * group_h + GAP / 2.0;
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#222222">{}</text>"##,
            c(x0 - 8.0),
            c(gy + n * BAR_H / 2.0 + 4.0),
            esc(cat)
        );
        for (si, s) in ch.series.iter().enumerate() {
            let Some(v) = s
                .values
                .get(ci)
                .copied()
                .flatten()
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            let y = gy + si as f64 * BAR_H;
            let w = px(v) - x0;
            let _ = write!(
                out,
                r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>"#,
                c(x0),
                c(y),
                c(w),
                c(BAR_H - 2.0),
                colour(si),
                esc(&format!("{} — {cat}", s.label)),
                esc(&fmt_value(v))
            );
            // The value sits after the bar, or inside it near the right edge.
            let (tx, anchor, fill) = if px(v) > x1 - 60.0 {
                (px(v) - 4.0, "end", "#ffffff")
            } else {
                (px(v) + 4.0, "start", "#222222")
            };
            let _ = write!(
                out,
                r#"<text x="{}" y="{}" text-anchor="{anchor}" fill="{fill}" font-size="10">{}</text>"#,
                c(tx),
                c(y + BAR_H - 4.0),
                esc(&fmt_value(v))
            );
        }
    }
    for (i, cl) in near.iter().enumerate() {
        let x = px(cl.value);
        let _ = write!(
            out,
            r#"<line class="ceiling" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
            c(x),
            c(TOP),
            c(x),
            c(axis_y),
            ceiling_colour(i)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999999"/><text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
        c(x0),
        c(TOP),
        c(x0),
        c(axis_y),
        c((x0 + x1) / 2.0),
        c(axis_y + 34.0),
        esc(&ch.value_label)
    );
    legend(&mut out, axis_y + BOTTOM, &entries);
    out.push_str("</svg>");
    out
}

/// A colour from white-blue (small) to dark blue (large) for a share `t` in 0..=1.
fn heat_colour(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(235.0, 8.0),
        lerp(243.0, 48.0),
        lerp(251.0, 107.0)
    )
}

/// A heatmap with the value written in each cell.
pub fn heatmap(ch: &Heatmap) -> String {
    const LABEL_W: f64 = 110.0;
    let rows = ch.rows.len().max(1);
    let cols = ch.cols.len().max(1);
    let cell_w = (WIDTH - LABEL_W - RIGHT) / cols as f64;
    let cell_h = 24.0;
    let top = TOP + 18.0;
    let vals: Vec<f64> = ch
        .values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let height = top + rows as f64 * cell_h + 44.0;
    let mut out = String::new();
    open(&mut out, height, &ch.title, &ch.subtitle);
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text><text x="{}" y="{}" text-anchor="end" fill="#333333">{}</text>"##,
        c(LABEL_W + (WIDTH - LABEL_W - RIGHT) / 2.0),
        c(top - 20.0),
        esc(&ch.col_label),
        c(LABEL_W - 8.0),
        c(top - 6.0),
        esc(&ch.row_label)
    );
    for (ci, col) in ch.cols.iter().enumerate() {
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
            c(LABEL_W + (ci as f64 + 0.5) * cell_w),
            c(top - 6.0),
            esc(col)
        );
    }
    for (ri, row) in ch.rows.iter().enumerate() {
        let y = top + ri as f64 * cell_h;
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#333333">{}</text>"##,
            c(LABEL_W - 8.0),
            c(y + cell_h / 2.0 + 4.0),
            esc(row)
        );
        for ci in 0..ch.cols.len() {
            let x = LABEL_W + ci as f64 * cell_w;
            let v = ch.values.get(ri).and_then(|r| r.get(ci)).copied().flatten();
            match v.filter(|v| v.is_finite()) {
                Some(v) => {
                    let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
                    let text_fill = if t > 0.55 { "#ffffff" } else { "#111111" };
                    let _ = write!(
                        out,
                        r##"<rect class="cell" x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#ffffff"><title>{} {}, {} {}: {} {}</title></rect><text x="{}" y="{}" text-anchor="middle" fill="{text_fill}" font-size="10">{}</text>"##,
                        c(x),
                        c(y),
                        c(cell_w),
                        c(cell_h),
                        heat_colour(t),
                        esc(&ch.row_label),
                        esc(row),
                        esc(&ch.col_label),
                        esc(ch.cols.get(ci).map_or("", |s| s.as_str())),
                        esc(&fmt_value(v)),
                        esc(&ch.unit),
                        c(x + cell_w / 2.0),
                        c(y + cell_h / 2.0 + 4.0),
                        esc(&fmt_tick(v))
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#f4f4f4" stroke="#ffffff"/>"##,
                        c(x),
                        c(y),
                        c(cell_w),
                        c(cell_h)
                    );
                }
            }
        }
    }
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" fill="#555555">{}</text>"##,
        c(LABEL_W),
        c(top + rows as f64 * cell_h + 24.0),
        esc(&if vals.is_empty() {
            format!("values in {}", ch.unit)
        } else {
            format!(
                "values in {}: light {} … dark {}",
                ch.unit,
                fmt_value(lo),
                fmt_value(hi)
            )
        })
    );
    out.push_str("</svg>");
    out
}

/// A steady-state convergence chart.
pub fn convergence_chart(ch: &Convergence) -> String {
    let n = ch.rounds.len();
    let w = ch.window.min(n);
    let first_w = n - w + 1; // 1-based round of the window's start
    let mean = ch.window_mean;
    let data_max = ch
        .rounds
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(mean * 1.2, f64::max);
    let y_ticks = nice_ticks(0.0, if data_max > 0.0 { data_max * 1.05 } else { 1.0 }, 5);
    let plot = Plot {
        x_scale: XScale::Linear,
        x_min: 0.5,
        x_max: n.max(1) as f64 + 0.5,
        y_min: 0.0,
        y_max: *y_ticks.last().unwrap_or(&1.0),
    };
    let entries: Vec<(String, &str, Mark)> = vec![
        ("tracking value per round".into(), colour(0), Mark::Line),
        ("window mean".into(), "#333333", Mark::Line),
        // The PTS plot's 90 % and 110 % of the mean: a band as wide as the allowed range.
        ("mean ± 10 %".into(), "#2ca02c", Mark::Dash),
        ("least-squares fit".into(), "#d62728", Mark::Line),
        ("window".into(), "#fff3c4", Mark::Box),
    ];
    let height = TOP + PLOT_H + BOTTOM + legend_height(entries.len());
    let mut out = String::new();
    open(&mut out, height, &ch.title, &ch.subtitle);
    let every = n.div_ceil(25).max(1);
    let ticks: Vec<(f64, String)> = (1..=n)
        .filter(|r| (r - 1) % every == 0 || *r == n)
        .map(|r| (r as f64, r.to_string()))
        .collect();
    // The window's background first, so everything else draws over it.
    if w > 0 {
        let (xa, xb) = (plot.px(first_w as f64 - 0.5), plot.px(n as f64 + 0.5));
        let _ = write!(
            out,
            r##"<rect class="window" x="{}" y="{}" width="{}" height="{}" fill="#fff3c4"/>"##,
            c(xa),
            c(plot.top()),
            c(xb - xa),
            c(plot.bottom() - plot.top())
        );
    }
    plot.axes(&mut out, &y_ticks, &ticks, "round", &ch.y_label);
    if w > 0 {
        let (xa, xb) = (plot.px(first_w as f64 - 0.5), plot.px(n as f64 + 0.5));
        let hline = |out: &mut String, v: f64, col: &str, dash: &str| {
            let _ = write!(
                out,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="1.5"{dash}/>"#,
                c(xa),
                c(plot.py(v)),
                c(xb),
                c(plot.py(v))
            );
        };
        hline(
            &mut out,
            mean * 1.1,
            "#2ca02c",
            r#" stroke-dasharray="6 3""#,
        );
        hline(
            &mut out,
            mean * 0.9,
            "#2ca02c",
            r#" stroke-dasharray="6 3""#,
        );
        hline(&mut out, mean, "#333333", "");
        let fit_end = ch.intercept + ch.slope * (w as f64 - 1.0);
        let _ = write!(
            out,
            r##"<line class="slope" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#d62728" stroke-width="2"/>"##,
            c(plot.px(first_w as f64)),
            c(plot.py(ch.intercept)),
            c(plot.px(n as f64)),
            c(plot.py(fit_end))
        );
    }
    let pts: Vec<String> = ch
        .rounds
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{},{}", c(plot.px(i as f64 + 1.0)), c(plot.py(*v))))
        .collect();
    let col = colour(0);
    let _ = write!(
        out,
        r#"<g class="series"><polyline points="{}" fill="none" stroke="{col}" stroke-width="2"/>"#,
        pts.join(" ")
    );
    for (i, v) in ch.rounds.iter().enumerate() {
        let _ = write!(
            out,
            r#"<circle cx="{}" cy="{}" r="3.5" fill="{col}"><title>round {}: {}</title></circle>"#,
            c(plot.px(i as f64 + 1.0)),
            c(plot.py(*v)),
            i + 1,
            esc(&fmt_value(*v))
        );
    }
    out.push_str("</g>");
    legend(&mut out, TOP + PLOT_H + BOTTOM, &entries);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(series: Vec<Series>) -> LineChart {
        LineChart {
            title: "QD <scaling> & \"more\"".into(),
            subtitle: String::new(),
            x_label: "queue depth".into(),
            y_label: "MB/s".into(),
            x_scale: XScale::Log2,
            x_labels: XLabels::Number,
            series,
            ceilings: vec![],
        }
    }

    #[test]
    fn long_legend_labels_keep_both_ends() {
        assert_eq!(cut_middle("short", 10), "short");
        let cut = cut_middle("Read — /home/someone/benchmarks/run-a.bin @ host", 20);
        assert!(cut.chars().count() <= 20, "{cut}");
        assert!(
            cut.starts_with("Read") && cut.ends_with("a.bin @ host"),
            "{cut}"
        );
    }

    #[test]
    fn text_is_escaped() {
        let svg = line_chart(&line(vec![Series {
            label: "<script>alert('x')</script>".into(),
            points: vec![(1.0, 10.0), (2.0, 20.0)],
        }]));
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
        assert!(svg.contains("QD &lt;scaling&gt; &amp; &quot;more&quot;"));
    }

    #[test]
    fn one_polyline_per_series_and_deterministic() {
        let s = |l: &str, k: f64| Series {
            label: l.into(),
            points: [1.0, 2.0, 4.0, 8.0].iter().map(|&q| (q, q * k)).collect(),
        };
        let ch = line(vec![s("a", 10.0), s("b", 7.5), s("c", 1.0)]);
        let a = line_chart(&ch);
        assert_eq!(a.matches("<polyline").count(), 3);
        assert_eq!(a, line_chart(&ch));
        assert!(a.starts_with("<svg") && a.ends_with("</svg>"));
        assert!(!a.contains("NaN") && !a.contains("inf"));
    }

    #[test]
    fn log2_axis_spaces_powers_of_two_evenly() {
        let plot = Plot {
            x_scale: XScale::Log2,
            x_min: 1.0,
            x_max: 32.0,
            y_min: 0.0,
            y_max: 1.0,
        };
        let d1 = plot.px(2.0) - plot.px(1.0);
        let d2 = plot.px(32.0) - plot.px(16.0);
        assert!((d1 - d2).abs() < 1e-9);
        assert!(plot.px(1.0) < plot.px(32.0));
    }

    #[test]
    fn nice_ticks_cover_the_range_in_round_steps() {
        assert_eq!(
            nice_ticks(0.0, 97.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = nice_ticks(0.0, 0.37, 5);
        assert!(*t.last().unwrap() >= 0.37 && t.len() <= 7);
    }

    #[test]
    fn far_ceiling_is_named_not_drawn_and_near_one_is_drawn() {
        let mut ch = line(vec![Series {
            label: "a".into(),
            points: vec![(1.0, 100.0), (2.0, 200.0)],
        }]);
        ch.ceilings = vec![Ceiling {
            label: "ceiling".into(),
            value: 250.0,
        }];
        assert_eq!(line_chart(&ch).matches(r#"class="ceiling""#).count(), 1);
        ch.ceilings[0].value = 4000.0;
        let svg = line_chart(&ch);
        assert_eq!(svg.matches(r#"class="ceiling""#).count(), 0);
        assert!(svg.contains("ceiling 4000 (off the scale)"));
    }

    #[test]
    fn scatter_window_keeps_only_the_last_seconds() {
        let s = Series {
            label: "x".into(),
            points: (1..=100).map(|t| (t as f64, 1000.0)).collect(),
        };
        let mut ch = ScatterChart {
            title: "t".into(),
            subtitle: String::new(),
            x_label: "s".into(),
            y_label: "IOPS".into(),
            series: vec![s],
            last_seconds: None,
        };
        assert_eq!(scatter_chart(&ch).matches(r#"class="dot""#).count(), 100);
        ch.last_seconds = Some(40.0);
        assert_eq!(scatter_chart(&ch).matches(r#"class="dot""#).count(), 40);
    }

    #[test]
    fn bars_skip_missing_values() {
        let ch = BarChart {
            title: "t".into(),
            subtitle: String::new(),
            value_label: "MB/s".into(),
            categories: vec!["4K".into(), "8K".into()],
            series: vec![
                BarSeries {
                    label: "read".into(),
                    values: vec![Some(1.0), None],
                },
                BarSeries {
                    label: "write".into(),
                    values: vec![Some(2.0), Some(3.0)],
                },
            ],
            ceilings: vec![],
        };
        assert_eq!(bar_chart(&ch).matches(r#"class="bar""#).count(), 3);
    }

    #[test]
    fn heatmap_draws_a_cell_per_value() {
        let ch = Heatmap {
            title: "t".into(),
            subtitle: String::new(),
            row_label: "read %".into(),
            col_label: "QD".into(),
            rows: vec!["100".into(), "0".into()],
            cols: vec!["1".into(), "2".into(), "4".into()],
            values: vec![
                vec![Some(1.0), Some(2.0), Some(3.0)],
                vec![Some(4.0), None, Some(6.0)],
            ],
            unit: "IOPS".into(),
        };
        assert_eq!(heatmap(&ch).matches(r#"class="cell""#).count(), 5);
        assert_eq!(heat_colour(0.0), "#ebf3fb");
        assert_eq!(heat_colour(1.0), "#08306b");
    }

    #[test]
    fn convergence_draws_window_band_and_slope() {
        let ch = Convergence {
            title: "t".into(),
            subtitle: "attained".into(),
            y_label: "IOPS".into(),
            rounds: vec![5000.0, 4000.0, 3100.0, 3000.0, 3050.0, 2950.0, 3000.0],
            window: 5,
            window_mean: 3020.0,
            slope: -20.0,
            intercept: 3060.0,
        };
        let svg = convergence_chart(&ch);
        assert_eq!(svg.matches(r#"class="window""#).count(), 1);
        assert_eq!(svg.matches(r#"class="slope""#).count(), 1);
        assert_eq!(svg.matches("<title>round").count(), 7);
    }

    #[test]
    fn values_and_sizes_format_stably() {
        assert_eq!(fmt_value(1234.56), "1235");
        assert_eq!(fmt_value(12.345), "12.3");
        assert_eq!(fmt_value(-0.0001), "0.000");
        assert_eq!(fmt_bytes(512.0), "512");
        assert_eq!(fmt_bytes(4096.0), "4K");
        assert_eq!(fmt_bytes(64.0 * 1048576.0), "64M");
        assert_eq!(fmt_tick(250_000.0), "250k");
        assert_eq!(c(-0.04), "0");
        assert_eq!(c(12.25), "12.3");
    }
}
