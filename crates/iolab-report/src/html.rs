//! A self-contained HTML report of one or more results: inline CSS and inline SVG charts, no
//! scripts and no references outside the file, so it opens anywhere, offline, and can be mailed.
//!
//! Several results overlay on the same charts, one series per result (the AnandTech Bench idea);
//! results of different kinds (a suite, `quick`, `run`) each get their own section.

use crate::svg::{bar_chart, esc, fmt_value, BarChart, BarSeries, Ceiling};
use crate::terminal::model_line;
use iolab_core::result::{DirectionResult, JobResult, RunResult};
use std::fmt::Write;

mod cdm;
mod hosts;
mod suite;

const CSS: &str = "body{font-family:sans-serif;margin:0 auto;max-width:1100px;padding:16px;color:#222;background:#fafafa}\
h1{font-size:24px;margin:8px 0}h2{font-size:20px;margin:28px 0 8px;border-bottom:2px solid #1f77b4}\
h3{font-size:16px;margin:22px 0 6px}section.step{background:#fff;border:1px solid #ddd;border-radius:4px;padding:8px 12px;margin:12px 0}\
table{border-collapse:collapse;font-size:12px;margin:6px 0}th,td{border:1px solid #ddd;padding:2px 6px;text-align:right}\
th{background:#f0f0f0}td.l,th.l{text-align:left}.incomplete{color:#b00;font-weight:bold}\
svg.chart{display:block;max-width:100%;height:auto;margin:8px 0}td.cdm.main{font-weight:bold}.note{color:#555;font-size:12px}";

/// The report page for `results` (in the order given).
pub fn render_html(results: &[RunResult]) -> String {
    let labels = crate::labels::result_labels(results);
    let mut out = String::new();
    let title = match results {
        [one] => format!("iolab report: {} on {}", one.kind, one.target.path),
        _ => format!("iolab report: {} results", results.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if results.is_empty() {
        out.push_str("<p>No results.</p>\n");
    }
    let mut kinds: Vec<&str> = Vec::new();
    for r in results {
        if !kinds.contains(&r.kind.as_str()) {
            kinds.push(&r.kind);
        }
    }
    for kind in kinds {
        let group: Vec<Run> = results
            .iter()
            .zip(&labels)
            .filter(|(r, _)| r.kind == kind)
            .map(|(r, l)| Run { r, label: l })
            .collect();
        let _ = writeln!(out, "<section class=\"kind\">\n<h2>{}</h2>", esc(kind));
        runs_table(&mut out, &group);
        // A suite's partial save (after each job, before its summary exists) still has its
        // jobs' steps: it is drawn as a suite too.
        let suite_like =
            |r: &RunResult| r.suite.is_some() || r.jobs.iter().any(|j| j.step.is_some());
        if group.iter().any(|g| suite_like(g.r)) {
            suite::suite_section(&mut out, &group);
        } else if kind == "quick" {
            quick_section(&mut out, &group);
        } else {
            run_section(&mut out, &group);
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// One result and the label its series carry.
#[derive(Clone, Copy)]
struct Run<'a> {
    r: &'a RunResult,
    label: &'a str,
}

/// `2026-11-23 01:02:03 UTC` for a Unix time.
fn utc_time(unix_s: f64) -> String {
    format!(
        "{} UTC",
        iolab_core::time::UtcTime::from_unix(unix_s).readable()
    )
}

/// What each result is: tool, target, host, path and ceiling, state, notes.
fn runs_table(out: &mut String, group: &[Run]) {
    for g in group {
        let r = g.r;
        let t = &r.target;
        let _ = write!(out, "<h3>{}</h3>\n<table class=\"run\">", esc(g.label));
        let mut row = |k: &str, v: String| {
            let _ = write!(
                out,
                "<tr><th class=\"l\">{}</th><td class=\"l\">{v}</td></tr>",
                esc(k)
            );
        };
        row(
            "tool",
            esc(&format!(
                "{} {} (schema {})",
                r.tool.name, r.tool.version, r.schema_version
            )),
        );
        row("kind", esc(&r.kind));
        row("started", esc(&utc_time(r.started_unix_s)));
        row(
            "target",
            esc(&format!(
                "{} {}",
                t.path,
                crate::terminal::target_facts(t, true)
            )),
        );
        let h = &r.host;
        row(
            "host",
            esc(&format!(
                "{}: {} × {}, {:.1} GiB memory, kernel {}",
                h.hostname,
                h.cpus,
                h.cpu_model,
                h.memory_bytes as f64 / (1u64 << 30) as f64,
                h.kernel
            )),
        );
        if let Some(p) = &t.path_summary {
            row("path", esc(p));
        }
        if let Some(c) = t.path_ceiling_bytes_per_s {
            row(
                "ceiling",
                esc(&format!(
                    "{} MB/s (narrowest link, one direction)",
                    fmt_value(c / 1e6)
                )),
            );
        }
        if let Some(s) = &r.suite {
            row(
                "suite",
                esc(&format!("{}: {} (scale {})", s.name, s.title, s.scale)),
            );
            if !s.source.is_empty() {
                row("source", esc(&s.source));
            }
            for p in &s.prepared {
                row("prepared", esc(p));
            }
        }
        if let Some(rp) = &r.replay {
            row(
                "replay",
                esc(&format!(
                    "{} ({}), {}, QD {}, time scale {}, target {}",
                    rp.trace, rp.format, rp.mode, rp.queue_depth, rp.time_scale, rp.target_state
                )),
            );
        }
        row(
            "state",
            if r.complete {
                "complete".into()
            } else {
                format!(
                    "<span class=\"incomplete\">INCOMPLETE: {}</span>",
                    esc(r.incomplete_reason.as_deref().unwrap_or("stopped early"))
                )
            },
        );
        for n in &r.notes {
            row("note", esc(n));
        }
        out.push_str("</table>\n");
        hosts::hosts_table(out, r);
    }
}

/// The headline figure a chart of a step draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Figure {
    /// Both directions' MB/s.
    Throughput,
    /// Both directions' IOPS.
    Iops,
    /// Mean latency of all I/Os, µs.
    Latency,
}

impl Figure {
    fn metric(self) -> &'static str {
        match self {
            Figure::Throughput => "total_mb_per_s",
            Figure::Iops => "total_iops",
            Figure::Latency => "lat_mean_us",
        }
    }
    fn unit(self) -> &'static str {
        match self {
            Figure::Throughput => "MB/s",
            Figure::Iops => "IOPS",
            Figure::Latency => "µs",
        }
    }
    fn axis(self) -> &'static str {
        match self {
            Figure::Throughput => "MB/s (10^6 B/s)",
            Figure::Iops => "IOPS",
            Figure::Latency => "mean latency, µs",
        }
    }
    fn of(self, j: &JobResult) -> f64 {
        j.metric(self.metric()).unwrap_or(0.0)
    }

    /// A step's figure: the steady-state tracking variable's kind where the step has one, else
    /// IOPS for small random or mixed-size transfers (as X-bit charted its patterns) and MB/s
    /// for the rest (as AnandTech, ATTO and CrystalDiskMark chart).
    fn for_step(jobs: &[&JobResult], tracking: Option<&str>) -> Figure {
        // The tracking text is the metric, maybe followed by the tracked sweep point
        // (`write_iops of read_pct=0 4K`).
        if let Some(t) = tracking.and_then(|t| t.split_whitespace().next()) {
            if t.ends_with("_us") {
                return Figure::Latency;
            }
            if t.ends_with("_iops") {
                return Figure::Iops;
            }
            if t.ends_with("_mb_per_s") {
                return Figure::Throughput;
            }
        }
        let small_random = jobs.iter().all(|j| {
            j.job.access.is_random()
                && (j.job.block_sizes.len() > 1
                    || j.job.block_sizes.iter().all(|b| b.bytes <= 8192))
        });
        if !jobs.is_empty() && small_random {
            Figure::Iops
        } else {
            Figure::Throughput
        }
    }
}

/// A step of a suite: where it is and how it is drawn.
#[derive(Clone, Debug, PartialEq)]
struct StepKey {
    phase: String,
    step: String,
    chart: String,
}

fn step_key(j: &JobResult) -> StepKey {
    match &j.step {
        Some(s) => StepKey {
            phase: s.phase.clone(),
            step: s.step.clone(),
            chart: s.chart.clone(),
        },
        None => StepKey {
            phase: String::new(),
            step: j.name.clone(),
            chart: "table".into(),
        },
    }
}

/// The jobs of one step of one result; of a step looped in rounds, only the last round (the
/// rounds themselves are drawn by the convergence chart), and the number of rounds.
fn step_jobs<'a>(r: &'a RunResult, key: &StepKey) -> (Vec<&'a JobResult>, Option<u32>) {
    let all = step_rounds(r, key);
    let last = all.iter().filter_map(|j| j.step.as_ref()?.round).max();
    let jobs = all
        .into_iter()
        .filter(|j| j.step.as_ref().and_then(|s| s.round) == last)
        .collect();
    (jobs, last)
}

/// Every job of one step of one result, all its rounds.
fn step_rounds<'a>(r: &'a RunResult, key: &StepKey) -> Vec<&'a JobResult> {
    r.jobs
        .iter()
        .filter(|j| {
            let k = step_key(j);
            k.phase == key.phase && k.step == key.step
        })
        .collect()
}

/// Ceilings of the results, in MB/s, for throughput charts.
fn ceilings(group: &[Run], figure: Figure) -> Vec<Ceiling> {
    if figure != Figure::Throughput {
        return Vec::new();
    }
    let with: Vec<(&str, f64)> = group
        .iter()
        .filter_map(|g| Some((g.label, g.r.target.path_ceiling_bytes_per_s? / 1e6)))
        .collect();
    // Results on the same kind of path share one line.
    let mut out: Vec<Ceiling> = Vec::new();
    for (label, value) in &with {
        if out.iter().any(|c| c.value == *value) {
            continue;
        }
        let alike = with.iter().filter(|(_, v)| v == value).count();
        out.push(Ceiling {
            label: if alike == with.len() && alike == group.len() {
                "path ceiling".to_string()
            } else {
                format!("path ceiling, {label}")
            },
            value: *value,
        });
    }
    out
}

/// A compact table of the figures of each job of the steps.
fn step_table(out: &mut String, group: &[Run], keys: &[StepKey]) {
    out.push_str("<table class=\"figures\"><tr>");
    if group.len() > 1 {
        out.push_str("<th class=\"l\">result</th>");
    }
    out.push_str("<th class=\"l\">job</th><th>read MB/s</th><th>write MB/s</th><th>read IOPS</th><th>write IOPS</th><th>mean µs</th><th>p99 µs</th><th>seconds</th><th class=\"l\">state</th></tr>\n");
    for k in keys {
        for g in group {
            let (jobs, round) = step_jobs(g.r, k);
            for j in jobs {
                out.push_str("<tr>");
                if group.len() > 1 {
                    let _ = write!(out, "<td class=\"l\">{}</td>", esc(g.label));
                }
                let p99 = p99_cell(j);
                let mut state = match (&j.stop_reason, round) {
                    (Some(why), _) => format!("<span class=\"incomplete\">{}</span>", esc(why)),
                    (None, Some(n)) => format!("round {n}"),
                    (None, None) => String::new(),
                };
                // A model's own account of the job: watts, bottleneck, write amplification.
                if let Some(line) = model_line(g.r, j) {
                    if !state.is_empty() {
                        state.push_str("; ");
                    }
                    state.push_str(&esc(&line));
                }
                let _ = writeln!(
                    out,
                    "<td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{state}</td></tr>",
                    esc(&j.name),
                    fmt_value(j.read.bw_mb_per_s),
                    fmt_value(j.write.bw_mb_per_s),
                    fmt_value(j.read.iops),
                    fmt_value(j.write.iops),
                    fmt_value(j.metric("lat_mean_us").unwrap_or(f64::NAN)),
                    p99,
                    fmt_value(j.measured_ns as f64 / 1e9),
                );
            }
        }
    }
    out.push_str("</table>\n");
}

/// A job's p99 latency in µs: one figure for a job in one direction; for a mix, each
/// direction's, since percentiles of two distributions do not combine (the larger of the two
/// was shown once, beside the mix's combined mean); a dash for a job that did no I/O.
fn p99_cell(j: &JobResult) -> String {
    let us = |d: &DirectionResult| fmt_value(d.lat_ns.p99 as f64 / 1e3);
    let cell = match (j.read.ios > 0, j.write.ios > 0) {
        (true, true) => format!("{} r / {} w", us(&j.read), us(&j.write)),
        (true, false) => us(&j.read),
        (false, true) => us(&j.write),
        (false, false) => String::new(),
    };
    // TRIMs have their own: a job's TRIMs and writes take very different times.
    match (j.trim.as_ref().filter(|t| t.ios > 0), cell.is_empty()) {
        (Some(t), true) => format!("{} trim", us(t)),
        (Some(t), false) => format!("{cell} / {} trim", us(t)),
        (None, true) => fmt_value(f64::NAN),
        (None, false) => cell,
    }
}

/// `quick`: CrystalDiskMark's grid (read and write × each test, MB/s and IOPS) per result,
/// the sequential tests charted in MB/s and the random ones in IOPS.
fn quick_section(out: &mut String, group: &[Run]) {
    out.push_str("<section class=\"step\">\n<h3>CrystalDiskMark's tests</h3>\n");
    cdm::grid_and_charts(out, group, "mean of the counted runs");
    // A model's own account of each job (watts, bottleneck, write amplification), as the
    // terminal table, `run` and suites give it.
    let mut lines = String::new();
    for g in group {
        for j in &g.r.jobs {
            let Some(line) = model_line(g.r, j) else {
                continue;
            };
            lines.push_str("<tr>");
            if group.len() > 1 {
                let _ = write!(lines, "<td class=\"l\">{}</td>", esc(g.label));
            }
            let _ = writeln!(
                lines,
                "<td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                esc(&j.name),
                esc(&line)
            );
        }
    }
    if !lines.is_empty() {
        out.push_str("<table class=\"figures\"><tr>");
        if group.len() > 1 {
            out.push_str("<th class=\"l\">result</th>");
        }
        out.push_str("<th class=\"l\">job</th><th class=\"l\">model</th></tr>\n");
        out.push_str(&lines);
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}

/// `run`, `replay` and any other kind: read/write bars per job and the jobs' table.
fn run_section(out: &mut String, group: &[Run]) {
    let mut names: Vec<&str> = Vec::new();
    for g in group {
        for j in &g.r.jobs {
            if !names.contains(&j.name.as_str()) {
                names.push(&j.name);
            }
        }
    }
    for g in group {
        if let Some(rp) = &g.r.replay {
            let _ = writeln!(
                out,
                "<p>{}storage-bench figures: average data rate {} MB/s, average latency {} µs, {} % of I/Os over 10 ms, {} % over 100 ms ({} I/Os planned, {} trims and flushes left out)</p>",
                if group.len() > 1 { format!("{}: ", esc(g.label)) } else { String::new() },
                fmt_value(rp.data_rate_mb_per_s),
                fmt_value(rp.avg_latency_us),
                fmt_value(rp.pct_over_10ms),
                fmt_value(rp.pct_over_100ms),
                rp.planned_ios,
                rp.skipped_trims_and_flushes
            );
        }
    }
    if names.is_empty() {
        return;
    }
    // The chart pairs jobs across results by name and occurrence: a name that repeats within
    // a result (saved before `run` refused that) is each of its jobs in turn, shown as "a",
    // "a (2)", …, so that no job loses its bar to an earlier one of its name.
    let mut bars: Vec<(&str, usize)> = Vec::new();
    for g in group {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for j in &g.r.jobs {
            let nth = match seen.iter_mut().find(|(n, _)| *n == j.name) {
                Some((_, count)) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    seen.push((&j.name, 1));
                    0
                }
            };
            if !bars.contains(&(j.name.as_str(), nth)) {
                bars.push((&j.name, nth));
            }
        }
    }
    let mut series = Vec::new();
    for g in group {
        for (read, dir) in [(true, "Read"), (false, "Write")] {
            let values: Vec<Option<f64>> = bars
                .iter()
                .map(|&(n, nth)| {
                    // A direction the job does not do gets no bar (rather than a 0).
                    let j = g.r.jobs.iter().filter(|j| j.name == n).nth(nth)?;
                    match read {
                        true if j.job.reads() || j.read.ios > 0 => Some(j.read.bw_mb_per_s),
                        false if j.job.writes() || j.write.ios > 0 => Some(j.write.bw_mb_per_s),
                        _ => None,
                    }
                })
                .collect();
            if values.iter().all(|v| v.is_none()) {
                continue;
            }
            series.push(BarSeries {
                label: if group.len() > 1 {
                    format!("{dir} — {}", g.label)
                } else {
                    dir.to_string()
                },
                values,
            });
        }
    }
    out.push_str("<section class=\"step\">\n<h3>Jobs</h3>\n");
    out.push_str(&bar_chart(&BarChart {
        title: "Throughput per job, MB/s".into(),
        subtitle: String::new(),
        value_label: Figure::Throughput.axis().into(),
        categories: bars
            .iter()
            .map(|&(n, nth)| match nth {
                0 => n.to_string(),
                _ => format!("{n} ({})", nth + 1),
            })
            .collect(),
        series,
        ceilings: ceilings(group, Figure::Throughput),
    }));
    out.push('\n');
    // The table shows every job of a name under it, in order.
    let keys: Vec<StepKey> = names
        .iter()
        .map(|n| StepKey {
            phase: String::new(),
            step: n.to_string(),
            chart: "table".into(),
        })
        .collect();
    step_table(out, group, &keys);
    out.push_str("</section>\n");
}
