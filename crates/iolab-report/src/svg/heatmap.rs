//! A grid of values coloured by size.

use std::fmt::Write;

use super::frame::*;
use super::*;

/// A colour from white-blue (small) to dark blue (large) for a share `t` in 0..=1.
pub(super) fn heat_colour(t: f64) -> String {
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
