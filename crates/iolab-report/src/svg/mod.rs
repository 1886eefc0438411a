//! Charts as SVG text: pure functions from numbers to markup, no dependencies.
//!
//! Every chart is deterministic (fixed palette, fixed layout, coordinates printed with one
//! decimal) so a report renders byte for byte the same from the same result, and every piece of
//! text is escaped. Sizes are in SVG user units; the page scales the charts to its width.

mod bars;
mod convergence;
mod frame;
mod heatmap;
mod lines;
#[cfg(test)]
mod tests;

pub use bars::bar_chart;
pub use convergence::convergence_chart;
pub use heatmap::heatmap;
pub use lines::{line_chart, scatter_chart};

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
