//! Terminal rendering of a [`Report`]: one column per device plus the total.

use std::fmt::Write;

use super::{Bucket, DeviceReport, Report};

/// Formats a report as a plain-text table.
pub fn render(rep: &Report) -> String {
    let mut cols: Vec<&DeviceReport> = Vec::new();
    // With one device the total repeats it; show it once.
    if rep.devices.len() != 1 {
        cols.extend(rep.devices.iter());
    }
    cols.push(&rep.total);
    let heads: Vec<String> = cols
        .iter()
        .map(|d| match d.device {
            Some(n) => device_label(&rep.format, n),
            None if rep.devices.len() == 1 => {
                device_label(&rep.format, rep.devices[0].device.unwrap_or(0))
            }
            None => "total".to_string(),
        })
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "trace {} ({})", rep.file, rep.format);
    if rep.bad_records > 0 {
        let _ = writeln!(out, "bad lines skipped: {}", rep.bad_records);
    }
    if rep.out_of_order > 0 {
        let _ = writeln!(
            out,
            "records out of time order beyond the reorder window: {} (raise --reorder-window)",
            rep.out_of_order
        );
    }
    let mut t = Table::new(&heads);
    t.row("requests", &cols, |d| d.requests.to_string());
    t.row("reads", &cols, |d| d.reads.to_string());
    t.row("writes", &cols, |d| d.writes.to_string());
    t.row("trims / flushes", &cols, |d| {
        format!("{} / {}", d.trims, d.flushes)
    });
    t.row("GB read", &cols, |d| format!("{:.2}", d.gb_read));
    t.row("GB written", &cols, |d| format!("{:.2}", d.gb_written));
    t.row("read %", &cols, |d| format!("{:.1}", d.read_pct));
    t.row("read/write ratio", &cols, |d| {
        d.read_write_ratio.map_or("-".into(), |r| format!("{r:.2}"))
    });
    t.row("mean size KiB", &cols, |d| {
        format!("{:.1}", d.mean_size_bytes / 1024.0)
    });
    t.row("sequential %", &cols, |d| {
        format!("{:.1}", d.sequential_pct)
    });
    t.row("avg QD (busy)", &cols, |d| opt(d.avg_qd_busy, 2));
    t.row("avg QD (arrival)", &cols, |d| opt(d.avg_qd_at_arrival, 2));
    t.row("mean latency us", &cols, |d| opt(d.mean_latency_us, 1));
    t.row("mean gap us", &cols, |d| opt(d.mean_interarrival_us, 1));
    t.row("duration s", &cols, |d| format!("{:.3}", d.duration_s));
    t.row("footprint GiB", &cols, |d| {
        format!("{:.3}", d.footprint_bytes as f64 / (1u64 << 30) as f64)
    });
    t.row("span GiB", &cols, |d| {
        format!("{:.3}", d.span_bytes as f64 / (1u64 << 30) as f64)
    });
    t.row("hottest 1% extents", &cols, |d| {
        format!("{:.1}%", d.skew_top1_pct)
    });
    t.row("hottest 10% extents", &cols, |d| {
        format!("{:.1}%", d.skew_top10_pct)
    });
    t.section("IO size (% of reads+writes)");
    breakdown_rows(&mut t, &cols, |d| Some(&d.size_breakdown));
    t.section("queue depth (% of reads+writes)");
    if cols.iter().any(|d| d.qd_breakdown.is_some()) {
        breakdown_rows(&mut t, &cols, |d| d.qd_breakdown.as_ref());
    } else {
        t.note("no completion times in this format (for blkparse/blktrace use --event D)");
    }
    t.section("inter-arrival (% of gaps)");
    breakdown_rows(&mut t, &cols, |d| Some(&d.interarrival_distribution));
    out.push_str(&t.finish());
    out
}

/// blkparse/blktrace devices are `dev_t` numbers: show them as `major,minor`.
pub fn device_label(format: &str, dev: u32) -> String {
    if format == "blkparse" || format == "blktrace" {
        format!("dev {},{}", dev >> 20, dev & 0xfffff)
    } else {
        format!("dev {dev}")
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn breakdown_rows(
    t: &mut Table,
    cols: &[&DeviceReport],
    get: impl Fn(&DeviceReport) -> Option<&Vec<Bucket>>,
) {
    let Some(first) = cols.iter().find_map(|d| get(d)) else {
        return;
    };
    for (i, b) in first.iter().enumerate() {
        t.row(&format!("  {}", b.label), cols, |d| {
            get(d)
                .and_then(|v| v.get(i))
                .map_or("-".into(), |b| format!("{:.1}", b.pct))
        });
    }
}

struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(heads: &[String]) -> Self {
        let mut h = vec![String::new()];
        h.extend(heads.iter().cloned());
        Table { rows: vec![h] }
    }

    fn row(&mut self, name: &str, cols: &[&DeviceReport], f: impl Fn(&DeviceReport) -> String) {
        let mut r = vec![name.to_string()];
        r.extend(cols.iter().map(|d| f(d)));
        self.rows.push(r);
    }

    fn section(&mut self, name: &str) {
        self.rows.push(vec![name.to_string()]);
    }

    fn note(&mut self, text: &str) {
        self.rows.push(vec![format!("  {text}")]);
    }

    fn finish(self) -> String {
        let ncol = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut width = vec![0; ncol];
        for r in &self.rows {
            if r.len() > 1 {
                for (w, c) in width.iter_mut().zip(r) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let mut out = String::new();
        for r in &self.rows {
            if r.len() == 1 {
                let _ = writeln!(out, "{}", r[0]);
                continue;
            }
            for (i, c) in r.iter().enumerate() {
                if i == 0 {
                    let _ = write!(out, "{c:<w$}", w = width[0]);
                } else {
                    let _ = write!(out, "  {c:>w$}", w = width[i]);
                }
            }
            out.push('\n');
        }
        out
    }
}
