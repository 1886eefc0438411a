//! Plain-text tables of what the results store holds: the run list, one run, and runs side by
//! side (`iolab results list|show|compare`).

use crate::store::{Comparison, RunDetail, RunSummary};

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

#[cfg(test)]
use iolab_core::result::SweepValue;
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
    let s = &d.summary;
    let t = &d.target;
    let mut out = String::new();
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
        headings.push((
            rows.len(),
            format!(
                "job {}: {} ({})",
                step.job_index + 1,
                step.label,
                where_.join(", ")
            ),
        ));
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
    for ss in &d.steady_state {
        let _ = writeln!(out, "\n{}", crate::terminal::steady_state_line(ss));
    }
    out
}

fn compare_table_unescaped(c: &Comparison) -> String {
    let mut out = String::new();
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
    let names = column_names(c);
    for (name, side) in names.iter().zip(&c.sides) {
        if side.len() > 1 {
            let _ = writeln!(
                out,
                "{name}: the mean of {} runs, ± half their range",
                side.len()
            );
        }
    }
    out.push('\n');
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
            let mark = format!("… [{}]", long_names.len());
            // Up to its first parenthesis (a scaled window, a unit) where that fits.
            let room = MAX_METRIC_CHARS - mark.chars().count();
            let head = row.metric.split(" (").next().unwrap_or_default();
            let cut: String = if head.chars().count() <= room {
                head.to_string()
            } else {
                row.metric.chars().take(room).collect()
            };
            format!("{}{mark}", cut.trim_end())
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
        noise_footer(&mut out, c, &noise);
    }
    out
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
mod tests {
    use super::*;

    #[test]
    fn utc_times_and_figures() {
        assert_eq!(utc_time(0.0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(1_795_392_000.0 + 3661.0), "2026-11-23 01:01:01");
        assert_eq!(figure(12345.678), "12346");
        assert_eq!(figure(123.456), "123.5");
        assert_eq!(figure(1.23456), "1.23");
    }

    fn summary(id: i64, key: &str, kind: &str, complete: bool) -> RunSummary {
        RunSummary {
            id,
            key: key.into(),
            kind: kind.into(),
            started_unix_s: 1_795_392_000.0 + id as f64 * 60.0,
            finished_unix_s: 1_795_392_000.0 + id as f64 * 60.0 + 12.5,
            complete,
            incomplete_reason: (!complete).then(|| "interrupted".into()),
            tool_version: "0.1.0".into(),
            tool_name: "iolab".into(),
            hostname: "bench".into(),
            kernel: "6.1.0".into(),
            target_path: "/tmp/t.bin".into(),
            target_kind: "file".into(),
            modelled: false,
            jobs: 2,
            suite_name: None,
            suite_scale: None,
        }
    }

    #[test]
    fn list_snapshot() {
        let runs = [
            summary(12, "00112233445566778899", "quick", true),
            summary(3, "aabbccddeeff00112233", "suite:cdm", false),
        ];
        assert_eq!(
            list_table(&runs, 5),
            "\
id  key           started (UTC)        kind       target      jobs  state
12  001122334455  2026-11-23 00:12:00  quick      /tmp/t.bin     2  complete
 3  aabbccddeeff  2026-11-23 00:03:00  suite:cdm  /tmp/t.bin     2  INCOMPLETE
2 of 5 runs shown (newest first); --limit shows more
"
        );
        assert_eq!(list_table(&[], 0), "no runs recorded (that match)\n");
    }

    #[test]
    fn compare_snapshot() {
        use crate::store::ComparedRow;
        let row = |label: &str, metric: &str, a, b| ComparedRow {
            label: label.into(),
            metric: metric.into(),
            values: vec![a, b],
            ..ComparedRow::default()
        };
        let c = Comparison {
            runs: vec![
                summary(1, "00112233445566778899", "run", true),
                summary(2, "aabbccddeeff00112233", "run", false),
            ],
            rows: vec![
                row("job1", "read_iops", Some(20000.0), Some(25000.0)),
                row("job1", "read_lat_mean_us", Some(50.0), Some(40.0)),
                row("job2", "write_iops", None, Some(900.0)),
            ],
            differing: vec![],
            sides: vec![],
        };
        assert_eq!(
            compare_table(&c),
            "\
#1  001122334455  2026-11-23 00:01:00 UTC  run  /tmp/t.bin
#2  aabbccddeeff  2026-11-23 00:02:00 UTC  run  /tmp/t.bin  INCOMPLETE

job   metric               #1     #2   change
job1  read_iops         20000  25000  +25.0 %
      read_lat_mean_us  50.00  40.00  -20.0 %
job2  write_iops            -  900.0
noise: no repeats to judge it (each side is one run without counted repeats); compare several runs a side (`iolab results compare 3,4,5 6,7,8`) or quick runs (--count)
"
        );
        // Suite runs at different scales: each says its scale, and the difference is noted.
        let mut c = c;
        c.runs[0].suite_scale = Some(0.1);
        c.runs[1].suite_scale = Some(0.01);
        let t = compare_table(&c);
        assert!(t.contains("run (scale 0.1)  /tmp/t.bin"), "{t}");
        assert!(
            t.contains("note: these runs used different --scale values"),
            "{t}"
        );
        // A model is marked as `results list` marks it; a score's long name does not widen
        // the metric column past 40 characters, and is given in full under the table.
        c.runs[1].modelled = true;
        let long = "Performance consistency, last 400 s (scaled run: last 4 s) (IOPS)";
        c.rows.push(row("score", long, Some(1.0), Some(2.0)));
        let t = compare_table(&c);
        assert!(t.contains("/tmp/t.bin (modelled)  INCOMPLETE"), "{t}");
        assert!(!t.lines().next().unwrap().contains("modelled"), "{t}");
        let widest = t
            .lines()
            .filter(|l| l.starts_with("score"))
            .map(|l| {
                l.split("  ")
                    .filter(|c| !c.is_empty())
                    .nth(1)
                    .unwrap()
                    .chars()
                    .count()
            })
            .max()
            .unwrap();
        assert!(widest <= 40, "{t}");
        assert!(
            t.contains("Performance consistency, last 400 s… [1]"),
            "{t}"
        );
        assert!(t.contains(&format!("\n[1] {long}\n")), "{t}");
    }

    #[test]
    fn compare_marks_noise_from_repeats_and_thin_tails_without() {
        use crate::store::{ComparedRow, Spread};
        let spread = |min, max| Some(Spread { min, max, n: 3 });
        let mut a = summary(1, "00112233445566778899", "quick", true);
        a.id = 1;
        let c = Comparison {
            runs: vec![a.clone(), summary(4, "aabbccddeeff00112233", "quick", true)],
            sides: vec![
                vec![
                    a,
                    summary(2, "11", "quick", true),
                    summary(3, "22", "quick", true),
                ],
                vec![
                    summary(4, "33", "quick", true),
                    summary(5, "44", "quick", true),
                    summary(6, "55", "quick", true),
                ],
            ],
            rows: vec![
                ComparedRow {
                    label: "RND4K Q1T1 read".into(),
                    metric: "read_iops".into(),
                    values: vec![Some(10000.0), Some(10100.0)],
                    spread: vec![spread(9800.0, 10200.0), spread(9900.0, 10300.0)],
                    tail_ios: vec![None, None],
                },
                ComparedRow {
                    label: "RND4K Q1T1 read".into(),
                    metric: "read_mb_per_s".into(),
                    values: vec![Some(40.0), Some(50.0)],
                    spread: vec![spread(39.0, 41.0), spread(49.0, 51.0)],
                    tail_ios: vec![None, None],
                },
                ComparedRow {
                    label: "RND4K Q1T1 read".into(),
                    metric: "read_lat_p99_99_us".into(),
                    values: vec![Some(100.0), Some(692.0)],
                    spread: vec![None, None],
                    tail_ios: vec![Some(1.5), Some(1.5)],
                },
            ],
            differing: vec![],
        };
        let t = compare_table(&c);
        assert!(t.contains("#1,2,3: the mean of 3 runs"), "{t}");
        let line = |m: &str| t.lines().find(|l| l.contains(m)).unwrap().to_string();
        assert!(line("read_iops").contains("10000 ±2.0 %"), "{t}");
        assert!(line("read_iops").ends_with("within noise"), "{t}");
        assert!(line("read_mb_per_s").ends_with("beyond noise"), "{t}");
        assert!(line("read_lat_p99_99_us").contains("+592.0 %"), "{t}");
        assert!(line("read_lat_p99_99_us").ends_with("tail: 2 I/Os"), "{t}");
        assert!(t.contains("noise: ± is half the range over repeats"), "{t}");
        assert!(t.contains("tail: N I/Os: the percentile rests"), "{t}");
    }

    #[test]
    fn show_snapshot() {
        use crate::store::{StoredMetric, StoredScore, StoredStep, StoredTarget};
        let metric = |name: &str, value| StoredMetric {
            direction: "read".into(),
            name: name.into(),
            value,
        };
        let d = RunDetail {
            summary: summary(7, "00112233445566778899", "suite:x", false),
            cpu_model: "EPYC".into(),
            target: StoredTarget {
                path: "/tmp/t.bin".into(),
                kind: "file".into(),
                engine: "io_uring".into(),
                modelled: false,
                model_json: None,
                size_bytes: 64 << 20,
                logical_block_bytes: 512,
                path_summary: None,
                path_ceiling_bytes_per_s: Some(600e6),
            },
            steps: vec![StoredStep {
                job_index: 0,
                label: "4K QD4".into(),
                phase: Some("measure".into()),
                step: Some("4K".into()),
                chart: None,
                sweep: vec![SweepValue {
                    key: "queue_depth".into(),
                    value: 4.0,
                }],
                round: None,
                complete: false,
                stop_reason: Some("interrupted".into()),
                measured_ns: 1_500_000_000,
                job: None,
                metrics: vec![
                    metric("read_iops", 12345.6),
                    metric("read_lat_p99_us", 88.25),
                ],
            }],
            scores: vec![StoredScore {
                name: "Read".into(),
                value: 578.5,
                unit: "points".into(),
                stddev: Some(1.5),
                rule: "a rule".into(),
            }],
            notes: vec!["psync fallback".into()],
            steady_state: vec![iolab_core::result::SteadyStateReport {
                step: "IOPS".into(),
                tracking: "write_iops".into(),
                attained: false,
                rounds: 25,
                max_rounds: 25,
                window: 5,
                window_mean: 1000.0,
                range: 300.0,
                range_limit: 200.0,
                slope_excursion: 50.0,
                slope_limit: 100.0,
                ..Default::default()
            }],
            model_lines: Vec::new(),
        };
        assert_eq!(
            show_table(&d),
            "\
run 7 (key 00112233445566778899): suite:x, INCOMPLETE
incomplete: interrupted
started 2026-11-23 00:07:00 UTC, recorded 2026-11-23 00:07:12 UTC (12.5 s)
iolab 0.1.0 on bench (kernel 6.1.0, EPYC)
target /tmp/t.bin (file, 64m, io_uring)
ceiling of the path: 600 MB/s
note: psync fallback

job 1: 4K QD4 (phase measure, step 4K, queue_depth=4, 1.50 s, INCOMPLETE: interrupted)
  read_iops        12346
  read_lat_p99_us  88.25

score         value  unit    rule
Read   578.5 ± 1.50  points  a rule

steady state of 'IOPS' (write_iops): NOT attained after 25 of at most 25 rounds; window mean 1000.00, range 300.00 (limit 200.00), slope excursion 50.00 (limit 100.00)
"
        );
    }

    #[test]
    fn columns_align_left_and_right() {
        let rows = vec![
            vec!["a".to_string(), "1".into()],
            vec!["long".to_string(), "100".into()],
        ];
        assert_eq!(columns(&rows, &[false, true]), "a       1\nlong  100\n");
    }
}
