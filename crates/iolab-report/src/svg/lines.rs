//! Charts of points: lines over an x axis and per-second dots.

use std::fmt::Write;

use super::frame::*;
use super::*;

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
