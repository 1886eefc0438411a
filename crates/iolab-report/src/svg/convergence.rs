//! The steady-state determination of a step: rounds, window, band and fit.

use std::fmt::Write;

use super::frame::*;
use super::*;

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
