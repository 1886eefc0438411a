//! Plain-text tables of what the results store holds: the run list, one run, and runs side by
//! side (`iolab results list|show|compare`).

use crate::store::{Comparison, RunDetail, RunSummary, StoredStep};

/// The run list: newest first, with how many more matched than are shown.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn list_table(runs: &[RunSummary], total: u64) -> String {
    iolab_core::text::escape_control_keep_lines(&list_table_unescaped(runs, total)).into_owned()
}

/// One run: what, where, when, then every job's metrics and the scores.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn show_table(d: &RunDetail) -> String {
    iolab_core::text::escape_control_keep_lines(&show_table_unescaped(d)).into_owned()
}

/// Runs side by side: a legend of the runs, then one row per job and metric. With two runs,
/// a last column gives the second's change against the first.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn compare_table(c: &Comparison) -> String {
    iolab_core::text::escape_control_keep_lines(&compare_table_unescaped(c)).into_owned()
}

use iolab_core::size::human_size;
use std::fmt::Write;

/// `YYYY-mm-dd HH:MM:SS` UTC for a Unix time.
pub fn utc_time(unix_s: f64) -> String {
    iolab_core::time::UtcTime::from_unix(unix_s).readable()
}

/// A figure with as many decimals as its size deserves.
pub fn figure(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A run's kind, with the tool where another tool's run was imported (`run (fio 3.33)`).
fn kind_of(r: &RunSummary) -> String {
    if r.tool_name == "iolab" {
        r.kind.clone()
    } else {
        format!("{} ({} {})", r.kind, r.tool_name, r.tool_version)
    }
}

fn state(complete: bool) -> &'static str {
    if complete {
        "complete"
    } else {
        "INCOMPLETE"
    }
}

/// Lays out rows of cells in columns; `right[i]` right-aligns column `i`.
fn columns(rows: &[Vec<String>], right: &[bool]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = width[c].saturating_sub(cell.chars().count());
            if right.get(c).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn list_table_unescaped(runs: &[RunSummary], total: u64) -> String {
    if runs.is_empty() {
        return "no runs recorded (that match)\n".into();
    }
    let mut rows = vec![vec![
        "id".to_string(),
        "key".into(),
        "started (UTC)".into(),
        "kind".into(),
        "target".into(),
        "jobs".into(),
        "state".into(),
    ]];
    for r in runs {
        rows.push(vec![
            r.id.to_string(),
            r.key.chars().take(12).collect(),
            utc_time(r.started_unix_s),
            kind_of(r),
            if r.modelled {
                format!("{} (modelled)", r.target_path)
            } else {
                r.target_path.clone()
            },
            r.jobs.to_string(),
            state(r.complete).into(),
        ]);
    }
    let mut out = columns(&rows, &[true, false, false, false, false, true, false]);
    if total > runs.len() as u64 {
        let _ = writeln!(
            out,
            "{} of {total} runs shown (newest first); --limit shows more",
            runs.len()
        );
    }
    out
}

fn show_table_unescaped(d: &RunDetail) -> String {
    let mut out = String::new();
    show_run_lines(&mut out, d);
    show_steps(&mut out, d);
    show_scores(&mut out, d);
    for ss in &d.steady_state {
        let _ = writeln!(out, "\n{}", crate::terminal::steady_state_line(ss));
    }
    out
}

/// The run's own lines: key, state, times, tool and host, target, path, suite and notes.
fn show_run_lines(out: &mut String, d: &RunDetail) {
    let s = &d.summary;
    let t = &d.target;
    let _ = writeln!(
        out,
        "run {} (key {}): {}, {}",
        s.id,
        s.key,
        s.kind,
        state(s.complete)
    );
    if let Some(why) = &s.incomplete_reason {
        let _ = writeln!(out, "incomplete: {why}");
    }
    let _ = writeln!(
        out,
        "started {} UTC, recorded {} UTC ({:.1} s)",
        utc_time(s.started_unix_s),
        utc_time(s.finished_unix_s),
        s.finished_unix_s - s.started_unix_s
    );
    if s.hostname.is_empty() {
        // fio's JSON output, imported, does not say where it ran.
        let _ = writeln!(out, "{} {} on an unknown host", s.tool_name, s.tool_version);
    } else {
        let _ = writeln!(
            out,
            "{} {} on {} (kernel {}, {})",
            s.tool_name, s.tool_version, s.hostname, s.kernel, d.cpu_model
        );
    }
    // A model's engine is "sim", as its kind: said once.
    let engine = if t.engine == t.kind {
        String::new()
    } else {
        format!(", {}", t.engine)
    };
    let _ = writeln!(
        out,
        "target {} ({}, {}{engine}{})",
        t.path,
        t.kind,
        human_size(t.size_bytes),
        if t.modelled { ", modelled" } else { "" }
    );
    if let Some(p) = &t.path_summary {
        let _ = writeln!(out, "path: {p}");
    }
    if let Some(c) = t.path_ceiling_bytes_per_s {
        let _ = writeln!(out, "ceiling of the path: {:.0} MB/s", c / 1e6);
    }
    if let Some(name) = &s.suite_name {
        let _ = writeln!(
            out,
            "suite {name} at scale {}",
            s.suite_scale.unwrap_or(1.0)
        );
    }
    for n in &d.notes {
        let _ = writeln!(out, "note: {n}");
    }
}

/// Each job's heading with its metric rows under it, and the model's line where there is one.
fn show_steps(out: &mut String, d: &RunDetail) {
    // Job lines stand alone; the metric rows under them share one set of columns.
    let mut headings = Vec::new();
    let mut rows = Vec::new();
    let mut model_lines = Vec::new();
    for step in &d.steps {
        model_lines.push(
            d.model_lines
                .get(step.job_index as usize)
                .cloned()
                .flatten(),
        );
        headings.push((rows.len(), step_heading(step)));
        for m in &step.metrics {
            rows.push(vec![String::new(), m.name.clone(), figure(m.value)]);
        }
    }
    let table = columns(&rows, &[false, false, true]);
    let lines: Vec<&str> = table.lines().collect();
    for (i, (start, heading)) in headings.iter().enumerate() {
        let end = headings.get(i + 1).map_or(lines.len(), |(next, _)| *next);
        let _ = writeln!(out, "\n{heading}");
        for line in &lines[*start..end] {
            let _ = writeln!(out, "{line}");
        }
        if let Some(m) = &model_lines[i] {
            let _ = writeln!(out, "  {m}");
        }
    }
}

/// A job's heading: its number and label, then where it sits in the run (job, phase, step, sweep
/// point, round), how long it measured, and why it has no figures or stopped early.
fn step_heading(step: &StoredStep) -> String {
    let mut where_: Vec<String> = step.job.iter().map(|j| j.to_string()).collect();
    if let Some(p) = step.phase.as_deref().filter(|p| !p.is_empty()) {
        where_.push(format!("phase {p}"));
    }
    if let Some(st) = step.step.as_deref().filter(|st| *st != step.label) {
        where_.push(format!("step {st}"));
    }
    where_.extend(step.sweep.iter().map(|v| format!("{}={}", v.key, v.value)));
    if let Some(r) = step.round {
        where_.push(format!("round {r}"));
    }
    where_.push(format!("{:.2} s", step.measured_ns as f64 / 1e9));
    if step.metrics.is_empty() {
        // Not a blank block under the heading: the job has no figures because of this.
        where_.push("no I/O completed".into());
    }
    if !step.complete {
        where_.push(format!(
            "INCOMPLETE: {}",
            step.stop_reason.as_deref().unwrap_or("stopped early")
        ));
    }
    format!(
        "job {}: {} ({})",
        step.job_index + 1,
        step.label,
        where_.join(", ")
    )
}

/// The scores table, when the run has scores.
fn show_scores(out: &mut String, d: &RunDetail) {
    if !d.scores.is_empty() {
        let mut rows = vec![vec![
            "score".to_string(),
            "value".into(),
            "unit".into(),
            "rule".into(),
        ]];
        for sc in &d.scores {
            let value = match sc.stddev {
                Some(sd) => format!("{} ± {}", figure(sc.value), figure(sd)),
                None => figure(sc.value),
            };
            rows.push(vec![
                sc.name.clone(),
                value,
                sc.unit.clone(),
                sc.rule.clone(),
            ]);
        }
        out.push('\n');
        out.push_str(&columns(&rows, &[false, true, false, false]));
    }
}

fn compare_table_unescaped(c: &Comparison) -> String {
    let mut out = String::new();
    compare_preamble(&mut out, c);
    compare_rows(&mut out, c);
    out
}

/// The runs compared, one line each, and notes on what makes them differ.
fn compare_preamble(out: &mut String, c: &Comparison) {
    let scale = |r: &RunSummary| match r.suite_scale {
        Some(s) if s != 1.0 => format!(" (scale {s})"),
        _ => String::new(),
    };
    let legend_runs: Vec<&RunSummary> = if c.sides.is_empty() {
        c.runs.iter().collect()
    } else {
        c.sides.iter().flatten().collect()
    };
    for r in legend_runs {
        let _ = writeln!(
            out,
            "#{}  {}  {} UTC  {}{}  {}{}{}",
            r.id,
            r.key.chars().take(12).collect::<String>(),
            utc_time(r.started_unix_s),
            kind_of(r),
            scale(r),
            r.target_path,
            if r.modelled { " (modelled)" } else { "" },
            if r.complete { "" } else { "  INCOMPLETE" }
        );
    }
    // Suites run at different scales measure different amounts of work: say so beside them.
    let mut scales: Vec<f64> = c.runs.iter().filter_map(|r| r.suite_scale).collect();
    scales.dedup();
    if scales.len() > 1 {
        let _ = writeln!(
            out,
            "note: these runs used different --scale values; durations and sizes differ"
        );
    }
    // Jobs are paired by name: say when a name stands for different work.
    for (label, workloads) in &c.differing {
        let each: Vec<String> = c
            .runs
            .iter()
            .zip(workloads)
            .filter_map(|(r, w)| w.as_ref().map(|w| format!("#{} {w}", r.id)))
            .collect();
        let _ = writeln!(
            out,
            "note: {label} is not the same workload in every run: {}",
            each.join("; ")
        );
    }
    for (name, side) in column_names(c).iter().zip(&c.sides) {
        if side.len() > 1 {
            let _ = writeln!(
                out,
                "{name}: the mean of {} runs, ± half their range",
                side.len()
            );
        }
    }
}

/// The table of metrics side by side (with the change and a noise cue for two runs), then the
/// full names of metrics cut in it and the noise footer.
fn compare_rows(out: &mut String, c: &Comparison) {
    out.push('\n');
    let names = column_names(c);
    let two = c.runs.len() == 2;
    let noise: Vec<String> = c.rows.iter().map(|r| noise_cue(r, two)).collect();
    let noise_column = two && noise.iter().any(|n| !n.is_empty());
    let mut header = vec!["job".to_string(), "metric".into()];
    header.extend(names.iter().cloned());
    if two {
        header.push("change".into());
    }
    if noise_column {
        header.push("noise".into());
    }
    let mut rows = vec![header];
    let mut last_label = None;
    // A long metric name (a score's, with its scaled window or missing points) would widen the
    // whole table: it is cut, numbered, and given in full below.
    let mut long_names: Vec<&str> = Vec::new();
    for (row, cue) in c.rows.iter().zip(&noise) {
        let label = if last_label == Some(&row.label) {
            String::new()
        } else {
            row.label.clone()
        };
        last_label = Some(&row.label);
        let metric = if row.metric.chars().count() > MAX_METRIC_CHARS {
            long_names.push(&row.metric);
            cut_metric_name(&row.metric, long_names.len())
        } else {
            row.metric.clone()
        };
        let mut cells = vec![label, metric];
        cells.extend(row.values.iter().enumerate().map(|(i, v)| match v {
            None => "-".to_string(),
            Some(v) => match row.spread.get(i).copied().flatten() {
                Some(s) if *v != 0.0 => {
                    format!("{} ±{:.1} %", figure(*v), 50.0 * (s.max - s.min) / v.abs())
                }
                _ => figure(*v),
            },
        }));
        if two {
            cells.push(match (row.values[0], row.values[1]) {
                (Some(a), Some(b)) if a != 0.0 => format!("{:+.1} %", 100.0 * (b - a) / a.abs()),
                _ => String::new(),
            });
        }
        if noise_column {
            cells.push(cue.clone());
        }
        rows.push(cells);
    }
    let mut right = vec![false, false];
    right.extend(std::iter::repeat_n(true, c.runs.len() + usize::from(two)));
    if noise_column {
        right.push(false);
    }
    out.push_str(&columns(&rows, &right));
    for (k, name) in long_names.iter().enumerate() {
        let _ = writeln!(out, "[{}] {name}", k + 1);
    }
    if two {
        noise_footer(out, c, &noise);
    }
}

/// A metric name too long for its column, cut and marked with its footnote's number `k`.
fn cut_metric_name(metric: &str, k: usize) -> String {
    let mark = format!("… [{k}]");
    // Up to its first parenthesis (a scaled window, a unit) where that fits.
    let room = MAX_METRIC_CHARS - mark.chars().count();
    let head = metric.split(" (").next().unwrap_or_default();
    let cut: String = if head.chars().count() <= room {
        head.to_string()
    } else {
        metric.chars().take(room).collect()
    };
    format!("{}{mark}", cut.trim_end())
}

/// The columns' names: `#ID`, or `#3,4,5` for a side of several runs.
fn column_names(c: &Comparison) -> Vec<String> {
    if c.sides.is_empty() {
        return c.runs.iter().map(|r| format!("#{}", r.id)).collect();
    }
    c.sides
        .iter()
        .map(|side| {
            let ids: Vec<String> = side.iter().map(|r| r.id.to_string()).collect();
            format!("#{}", ids.join(","))
        })
        .collect()
}

/// What the repeats say of a two-sided row's change: within or beyond their spread, or,
/// without repeats, that a tail percentile rests on few I/Os.
fn noise_cue(row: &crate::store::ComparedRow, two: bool) -> String {
    if !two {
        return String::new();
    }
    let (Some(a), Some(b)) = (row.values[0], row.values[1]) else {
        return String::new();
    };
    let spread = |i: usize| row.spread.get(i).copied().flatten();
    match crate::compare::within_noise((a, spread(0)), (b, spread(1))) {
        Some(true) => return "within noise".into(),
        Some(false) => return "beyond noise".into(),
        None => {}
    }
    let thinnest = row
        .tail_ios
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min);
    if thinnest < crate::compare::THIN_TAIL_IOS {
        return if thinnest <= 1.0 {
            "tail: 1 I/O".into()
        } else {
            format!("tail: {thinnest:.0} I/Os")
        };
    }
    String::new()
}

/// Under a two-sided comparison: how to read the noise column, or that there is nothing to
/// judge noise by.
fn noise_footer(out: &mut String, c: &Comparison, noise: &[String]) {
    let any_spread = c.rows.iter().any(|r| r.spread.iter().any(Option::is_some));
    if any_spread {
        let _ = writeln!(
            out,
            "noise: ± is half the range over repeats; a change is within noise where the two \
             sides' ranges overlap"
        );
    } else {
        let _ = writeln!(
            out,
            "noise: no repeats to judge it (each side is one run without counted repeats); \
             compare several runs a side (`iolab results compare 3,4,5 6,7,8`) or quick runs \
             (--count)"
        );
    }
    if noise.iter().any(|n| n.starts_with("tail")) {
        let _ = writeln!(
            out,
            "tail: N I/Os: the percentile rests on that few I/Os beyond it; its change is \
             mostly chance"
        );
    }
}

/// The widest metric name `results compare` shows in its column; longer ones are cut and
/// given in full under the table.
const MAX_METRIC_CHARS: usize = 40;

#[cfg(test)]
mod tests;
