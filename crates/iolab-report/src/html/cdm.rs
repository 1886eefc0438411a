//! CrystalDiskMark's grid, for `quick` and the `cdm` suite: read and write × each test, MB/s
//! and IOPS (and mean µs) in one table whose cells carry a bar as CrystalDiskMark's do, then
//! the sequential tests charted in MB/s and the random ones in IOPS. On one MB/s axis beside
//! SEQ1M's thousands of MB/s, RND4K Q1T1's tens were slivers; its figure people read is IOPS.

use super::{ceilings, Figure, Run};
use crate::svg::{bar_chart, esc, fmt_value, BarChart, BarSeries};
use crate::terminal::quick_stop;
use iolab_core::quick::{self, GridRow, TestAccess};
use iolab_core::result::{DirectionResult, JobResult};
use std::fmt::Write;

/// The tests of CrystalDiskMark-like results, each once, in first-seen order.
fn tests(group: &[Run]) -> Vec<GridRow> {
    quick::grid_rows(group.iter().map(|g| g.r.jobs.as_slice()))
}

/// Sequential tests are read in MB/s; random ones in IOPS.
fn figure_of(access: TestAccess) -> Figure {
    match access {
        TestAccess::Seq => Figure::Throughput,
        TestAccess::Rnd => Figure::Iops,
    }
}

fn value(d: &DirectionResult, f: Figure) -> f64 {
    match f {
        Figure::Iops => d.iops,
        _ => d.bw_mb_per_s,
    }
}

fn cell<'a>(jobs: &'a [JobResult], test: &str, read: bool) -> Option<&'a DirectionResult> {
    quick::cell(jobs, test, read).map(|j| if read { &j.read } else { &j.write })
}

/// The grid and the two charts.
pub(super) fn grid_and_charts(out: &mut String, group: &[Run], subtitle: &str) {
    let tests = tests(group);
    for (f, title, pick) in [
        (Figure::Throughput, "Sequential: MB/s", true),
        (Figure::Iops, "Random: IOPS", false),
    ] {
        let cats: Vec<&str> = tests
            .iter()
            .filter(|t| (figure_of(t.access) == Figure::Throughput) == pick)
            .map(|t| t.label.as_str())
            .collect();
        if cats.is_empty() {
            continue;
        }
        let mut series = Vec::new();
        for g in group {
            for (read, dir) in [(true, "Read"), (false, "Write")] {
                series.push(BarSeries {
                    label: if group.len() > 1 {
                        format!("{dir} — {}", g.label)
                    } else {
                        dir.to_string()
                    },
                    values: cats
                        .iter()
                        .map(|t| cell(&g.r.jobs, t, read).map(|d| value(d, f)))
                        .collect(),
                });
            }
        }
        out.push_str(&bar_chart(&BarChart {
            title: title.into(),
            subtitle: subtitle.into(),
            value_label: f.axis().into(),
            categories: cats.iter().map(|t| t.to_string()).collect(),
            series,
            ceilings: ceilings(group, f),
        }));
        out.push('\n');
    }
    grid(out, group, &tests);
}

/// The widest value of each column kind (MB/s, IOPS) over every result, for the cells' bars.
fn column_max(group: &[Run], tests: &[GridRow]) -> (f64, f64) {
    let mut mb: f64 = 0.0;
    let mut iops: f64 = 0.0;
    for g in group {
        for t in tests {
            for read in [true, false] {
                if let Some(d) = cell(&g.r.jobs, &t.label, read) {
                    mb = mb.max(d.bw_mb_per_s);
                    iops = iops.max(d.iops);
                }
            }
        }
    }
    (mb, iops)
}

/// A figure's cell with a bar behind it, as long as the value is on a log scale (as
/// CrystalDiskMark's meters): one decade in four of the column's width.
fn bar_cell(v: f64, max: f64, main: bool) -> String {
    let share = if v > 0.0 && max > 0.0 {
        (1.0 + (v / max).log10() / 4.0).clamp(0.02, 1.0) * 100.0
    } else {
        0.0
    };
    let class = if main { "cdm main" } else { "cdm" };
    format!(
        "<td class=\"{class}\" style=\"background:linear-gradient(90deg,#cfe3f5 {share:.0}%,transparent {share:.0}%)\">{}</td>",
        fmt_value(v)
    )
}

fn grid(out: &mut String, group: &[Run], tests: &[GridRow]) {
    let (mb_max, iops_max) = column_max(group, tests);
    out.push_str("<table class=\"figures cdm\"><tr>");
    if group.len() > 1 {
        out.push_str("<th class=\"l\">result</th>");
    }
    out.push_str("<th class=\"l\">test</th><th>read MB/s</th><th>read IOPS</th><th>read µs</th><th>write MB/s</th><th>write IOPS</th><th>write µs</th></tr>\n");
    for g in group {
        for t in tests {
            out.push_str("<tr>");
            if group.len() > 1 {
                let _ = write!(out, "<td class=\"l\">{}</td>", esc(g.label));
            }
            let stop = quick_stop(&g.r.jobs, &t.label)
                .map(|why| format!(" <span class=\"incomplete\">{}</span>", esc(&why)))
                .unwrap_or_default();
            let _ = write!(out, "<td class=\"l\">{}{stop}</td>", esc(&t.label));
            let seq = figure_of(t.access) == Figure::Throughput;
            for read in [true, false] {
                match cell(&g.r.jobs, &t.label, read) {
                    Some(d) => {
                        out.push_str(&bar_cell(d.bw_mb_per_s, mb_max, seq));
                        out.push_str(&bar_cell(d.iops, iops_max, !seq));
                        let _ = write!(out, "<td>{}</td>", fmt_value(d.lat_ns.mean / 1e3));
                    }
                    None => out.push_str("<td>–</td><td>–</td><td>–</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</table>\n");
    out.push_str("<p class=\"note\">Bold: the figure each test is read by (MB/s for sequential, IOPS for random); bars on a log scale, as CrystalDiskMark's.</p>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_and_bars() {
        assert_eq!(figure_of(TestAccess::Rnd), Figure::Iops);
        assert_eq!(figure_of(TestAccess::Seq), Figure::Throughput);
        assert!(bar_cell(10.0, 10.0, true).contains("100%"));
        // A tenth of the widest fills three quarters: one decade is a quarter.
        assert!(bar_cell(1.0, 10.0, false).contains(" 75%"));
        assert!(bar_cell(0.0, 10.0, false).contains(" 0%"));
    }
}
