//! Horizontal grouped bars.

use std::fmt::Write;

use super::frame::*;
use super::*;

/// Height of one bar.
const BAR_H: f64 = 13.0;
/// Space between two categories' groups of bars.
const GAP: f64 = 9.0;

/// Horizontal grouped bars.
pub fn bar_chart(ch: &BarChart) -> String {
    let layout = BarLayout::new(ch);
    let (near, far_note) = split_ceilings(&ch.ceilings, layout.data_max);
    let layout = layout.with_scale(&near);
    let mut entries: Vec<(String, &str, Mark)> = ch
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), colour(i), Mark::Box))
        .collect();
    for (i, cl) in near.iter().enumerate() {
        entries.push((cl.label.clone(), ceiling_colour(i), Mark::Dash));
    }
    let height = layout.axis_y + BOTTOM + legend_height(entries.len());
    let mut out = String::new();
    open(
        &mut out,
        height,
        &ch.title,
        &join_subtitle(&ch.subtitle, &far_note),
    );
    layout.value_ticks(&mut out);
    for (ci, cat) in ch.categories.iter().enumerate() {
        layout.category(&mut out, ch, ci, cat);
    }
    for (i, cl) in near.iter().enumerate() {
        let x = layout.px(cl.value);
        let _ = write!(
            out,
            r#"<line class="ceiling" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
            c(x),
            c(TOP),
            c(x),
            c(layout.axis_y),
            ceiling_colour(i)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999999"/><text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
        c(layout.x0),
        c(TOP),
        c(layout.x0),
        c(layout.axis_y),
        c((layout.x0 + layout.x1) / 2.0),
        c(layout.axis_y + 34.0),
        esc(&ch.value_label)
    );
    legend(&mut out, layout.axis_y + BOTTOM, &entries);
    out.push_str("</svg>");
    out
}

/// Where a bar chart's parts go and how values map to widths.
struct BarLayout {
    /// Bars per category (at least one, so an empty chart still has a shape).
    bars: f64,
    /// Height of one category's group of bars with its gap.
    group_h: f64,
    /// The largest finite value drawn.
    data_max: f64,
    /// The value axis' ticks; the last one is the right end of the scale.
    ticks: Vec<f64>,
    /// The value at the right end of the scale.
    v_max: f64,
    /// Left end of the bars (right of the category labels).
    x0: f64,
    /// Right end of the scale.
    x1: f64,
    /// The y of the value axis (below the last group).
    axis_y: f64,
}

impl BarLayout {
    /// The layout before the scale is known: sizes from the categories and series.
    fn new(ch: &BarChart) -> BarLayout {
        let bars = ch.series.len().max(1) as f64;
        let group_h = bars * BAR_H + GAP;
        let plot_h = ch.categories.len().max(1) as f64 * group_h;
        let data_max = ch
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // Room for the longest category label (about 6.2 units a character at this font size).
        let longest = ch
            .categories
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0);
        let label_w = (longest as f64 * 6.2 + 18.0).clamp(60.0, 330.0);
        BarLayout {
            bars,
            group_h,
            data_max,
            ticks: Vec::new(),
            v_max: 1.0,
            x0: label_w,
            x1: WIDTH - RIGHT - 10.0,
            axis_y: TOP + plot_h,
        }
    }

    /// The value scale, reaching past the data and the ceilings drawn.
    fn with_scale(mut self, near: &[&Ceiling]) -> BarLayout {
        let top_v = near.iter().map(|c| c.value).fold(self.data_max, f64::max);
        self.ticks = nice_ticks(0.0, if top_v > 0.0 { top_v * 1.08 } else { 1.0 }, 5);
        self.v_max = *self.ticks.last().unwrap_or(&1.0);
        self
    }

    /// The x of value `v`.
    fn px(&self, v: f64) -> f64 {
        self.x0 + v.max(0.0) / self.v_max * (self.x1 - self.x0)
    }

    /// Grid lines and labels of the value axis.
    fn value_ticks(&self, out: &mut String) {
        for &t in &self.ticks {
            let x = self.px(t);
            let _ = write!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/><text x="{}" y="{}" text-anchor="middle" fill="#333333">{}</text>"##,
                c(x),
                c(TOP),
                c(x),
                c(self.axis_y),
                c(x),
                c(self.axis_y + 16.0),
                esc(&fmt_tick(t))
            );
        }
    }

    /// Category `ci`'s label and its bars, one per series that has a value there.
    fn category(&self, out: &mut String, ch: &BarChart, ci: usize, cat: &str) {
        let gy = TOP + ci as f64 * self.group_h + GAP / 2.0;
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#222222">{}</text>"##,
            c(self.x0 - 8.0),
            c(gy + self.bars * BAR_H / 2.0 + 4.0),
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
            self.bar(out, gy + si as f64 * BAR_H, si, &s.label, cat, v);
        }
    }

    /// One bar at `y` with its value written after it (or inside it near the right edge).
    fn bar(&self, out: &mut String, y: f64, si: usize, label: &str, cat: &str, v: f64) {
        let w = self.px(v) - self.x0;
        let _ = write!(
            out,
            r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {}</title></rect>"#,
            c(self.x0),
            c(y),
            c(w),
            c(BAR_H - 2.0),
            colour(si),
            esc(&format!("{label} — {cat}")),
            esc(&fmt_value(v))
        );
        let (tx, anchor, fill) = if self.px(v) > self.x1 - 60.0 {
            (self.px(v) - 4.0, "end", "#ffffff")
        } else {
            (self.px(v) + 4.0, "start", "#222222")
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
