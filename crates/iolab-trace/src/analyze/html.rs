//! A self-contained HTML page for a [`Report`]: inline CSS and SVG bar charts, no scripts,
//! no network.

use std::fmt::Write;

use super::{Bucket, DeviceReport, Report};

/// Device sections on one page at most.
const MAX_DEVICE_SECTIONS: usize = 32;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A horizontal-label bar chart of a breakdown, in percent.
fn bar_chart(title: &str, buckets: &[Bucket]) -> String {
    let (w, h, pad_l, pad_b, pad_t) = (560.0, 220.0, 40.0, 40.0, 24.0);
    let n = buckets.len().max(1) as f64;
    let max = buckets
        .iter()
        .map(|b| b.pct)
        .fold(0.0f64, f64::max)
        .max(1.0);
    let plot_h = h - pad_b - pad_t;
    let slot = (w - pad_l - 10.0) / n;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<figure><figcaption>{}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{}">"#,
        esc(title),
        esc(title)
    );
    let _ = write!(
        s,
        r##"<line x1="{pad_l}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#444"/>"##,
        y0 = h - pad_b,
        x1 = w - 10.0
    );
    for (i, b) in buckets.iter().enumerate() {
        let bh = b.pct / max * plot_h;
        let x = pad_l + i as f64 * slot + slot * 0.1;
        let y = h - pad_b - bh;
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{bh:.1}" fill="#3b7dd8"><title>{l}: {p:.2}% ({c})</title></rect><text x="{tx:.1}" y="{ty:.1}" font-size="10" text-anchor="middle">{p:.1}</text><text x="{tx:.1}" y="{ly:.1}" font-size="10" text-anchor="middle">{l}</text>"##,
            bw = slot * 0.8,
            l = esc(&b.label),
            p = b.pct,
            c = b.count,
            tx = x + slot * 0.4,
            ty = y - 3.0,
            ly = h - pad_b + 14.0,
        );
    }
    let _ = write!(
        s,
        r#"<text x="4" y="{}" font-size="10">% </text></svg></figure>"#,
        pad_t
    );
    s
}

fn device_section(title: &str, d: &DeviceReport) -> String {
    let mut s = String::new();
    let _ = write!(s, "<section><h2>{}</h2><table>", esc(title));
    let mut row = |k: &str, v: String| {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    };
    row("requests", d.requests.to_string());
    row("reads / writes", format!("{} / {}", d.reads, d.writes));
    row("trims / flushes", format!("{} / {}", d.trims, d.flushes));
    row(
        "GB read / written",
        format!("{:.3} / {:.3}", d.gb_read, d.gb_written),
    );
    row("read %", format!("{:.1}", d.read_pct));
    row("sequential %", format!("{:.1}", d.sequential_pct));
    row(
        "mean size",
        format!("{:.1} KiB", d.mean_size_bytes / 1024.0),
    );
    let o = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    row(
        "avg QD (busy / at arrival)",
        format!("{} / {}", o(d.avg_qd_busy), o(d.avg_qd_at_arrival)),
    );
    row("mean latency", format!("{} us", o(d.mean_latency_us)));
    row(
        "footprint",
        format!("{:.3} GiB", d.footprint_bytes as f64 / (1u64 << 30) as f64),
    );
    row(
        "hottest 1% / 10% of extents",
        format!("{:.1}% / {:.1}%", d.skew_top1_pct, d.skew_top10_pct),
    );
    s.push_str("</table><div class=charts>");
    s.push_str(&bar_chart("IO size (% of reads+writes)", &d.size_breakdown));
    if let Some(q) = &d.qd_breakdown {
        s.push_str(&bar_chart("Queue depth at arrival (%)", q));
    }
    s.push_str(&bar_chart("Size distribution (%)", &d.size_distribution));
    s.push_str(&bar_chart(
        "Inter-arrival time (%)",
        &d.interarrival_distribution,
    ));
    if let Some(l) = &d.latency_distribution {
        s.push_str(&bar_chart("Service time (%)", l));
    }
    s.push_str("</div></section>");
    s
}

/// Renders the page.
pub fn render(rep: &Report) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>iolab trace: {}</title>\
         <style>body{{font-family:sans-serif;margin:2em;max-width:1200px}}table{{border-collapse:collapse}}\
         th,td{{border:1px solid #ccc;padding:2px 8px;text-align:left}}figure{{display:inline-block;margin:8px}}\
         figcaption{{font-weight:bold;font-size:13px}}</style></head><body><h1>Trace {}</h1><p>format {}; \
         bad lines skipped {}; records out of order {}</p>",
        esc(&rep.file),
        esc(&rep.file),
        esc(&rep.format),
        rep.bad_records,
        rep.out_of_order
    );
    s.push_str(&device_section("All devices", &rep.total));
    if rep.devices.len() > 1 {
        // Traces of a thousand volumes would make a page nobody can scroll: show the
        // busiest ones (all of them are in the JSON report).
        let mut busiest: Vec<&DeviceReport> = rep.devices.iter().collect();
        busiest.sort_by_key(|d| std::cmp::Reverse(d.requests));
        if busiest.len() > MAX_DEVICE_SECTIONS {
            let _ = write!(
                s,
                "<p>{} devices; the {MAX_DEVICE_SECTIONS} busiest are shown (all are in --json).</p>",
                busiest.len()
            );
            busiest.truncate(MAX_DEVICE_SECTIONS);
        }
        for d in busiest {
            let label = super::text::device_label(&rep.format, d.device.unwrap_or(0));
            s.push_str(&device_section(&label, d));
        }
    }
    s.push_str("</body></html>\n");
    s
}
