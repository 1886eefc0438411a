//! Plain-text tables for a terminal: the CrystalDiskMark-like table of `iolab quick` and the
//! per-job table of `iolab run`.

use iolab_core::quick;
use iolab_core::result::{DirectionResult, JobResult, RunResult, SteadyStateReport, TargetInfo};
use iolab_core::size::human_size;
use std::fmt::Write;

/// What a target is, in brackets after its path: kind, size (with its logical block where
/// `blocks`) and engine. A directory (the filecopy suite's) has neither size nor blocks.
pub fn target_facts(t: &TargetInfo, blocks: bool) -> String {
    let mut facts = vec![t.kind.clone()];
    if t.size_bytes > 0 {
        facts.push(human_size(t.size_bytes));
        if blocks && t.logical_block_bytes > 0 {
            facts.push(format!("{} B logical blocks", t.logical_block_bytes));
        }
    }
    facts.push(if t.modelled {
        "modelled".to_string()
    } else {
        t.engine.clone()
    });
    format!("({})", facts.join(", "))
}

/// The header line: what was measured, where, with what.
fn header(r: &RunResult) -> String {
    let t = &r.target;
    let mut s = format!("{} on {} {}", r.kind, t.path, target_facts(t, false));
    if !r.complete {
        let _ = write!(
            s,
            " — INCOMPLETE: {}",
            r.incomplete_reason.as_deref().unwrap_or("stopped early")
        );
    }
    s
}

/// The path and its ceiling, and how close the best measured throughput came to it.
fn ceiling_lines(r: &RunResult, out: &mut String) {
    if let Some(p) = &r.target.path_summary {
        let _ = writeln!(out, "path: {p}");
    }
    if let Some(c) = r.target.path_ceiling_bytes_per_s {
        let best = r
            .jobs
            .iter()
            .map(|j| j.read.bw_bytes_per_s.max(j.write.bw_bytes_per_s))
            .fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "ceiling of the path: {:.0} MB/s; best measured {:.0} MB/s = {:.0} % of it",
            c / 1e6,
            best / 1e6,
            100.0 * best / c
        );
    }
}

fn notes(r: &RunResult, out: &mut String) {
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
}

/// Why quick's test `label` was stopped before its last counted run ended, with what it
/// measured, if it was: its figures are then of fewer or shorter runs than the others'.
pub(crate) fn quick_stop(jobs: &[JobResult], label: &str) -> Option<String> {
    let j = [true, false]
        .into_iter()
        .filter_map(|read| quick::cell(jobs, label, read))
        .find(|j| j.stop_reason.is_some())?;
    let runs = j.repeats.len().max(1);
    Some(format!(
        "stopped early ({}): {runs} counted run(s), {:.1} s measured in all",
        j.stop_reason.as_deref().unwrap_or_default(),
        j.measured_ns as f64 / 1e9
    ))
}

/// What a busy machine did while `j` measured, where it was busy enough to say
/// ([`iolab_core::result::CpuResult::busy_machine`]).
fn busy_machine(j: &JobResult) -> Option<String> {
    let (others, steal) = j.cpu.busy_machine(j.measured_ns as f64 / 1e9)?;
    Some(format!(
        "other processes kept {others:.2} CPUs busy and the hypervisor took {steal:.2} (steal)"
    ))
}

/// Why a busy machine matters to the figures beside it.
const BUSY_MACHINE_COST: &str = "they compete for the CPUs a fast device needs, and on a VM slow \
     its virtual disk; figures from a quiet machine compare better";

/// CrystalDiskMark's grid: one row per test, read and write side by side, each with MB/s,
/// IOPS and mean µs; a test stopped early is starred and said why under it.
fn cdm_grid(out: &mut String, r: &RunResult) {
    let rows = quick::grid_rows([r.jobs.as_slice()]);
    let labels: Vec<&str> = rows.iter().map(|row| row.label.as_str()).collect();
    // Wide enough for every label (a mixed test's is longer), so the columns line up.
    let w = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(14)
        + if labels.iter().any(|l| quick_stop(&r.jobs, l).is_some()) {
            2
        } else {
            0
        };
    let _ = writeln!(out, "{:<w$}|{:>28} |{:>28}", "", "Read", "Write");
    let _ = writeln!(
        out,
        "{:<w$}|{:>10}{:>10}{:>8} |{:>10}{:>10}{:>8}",
        "Test", "MB/s", "IOPS", "µs", "MB/s", "IOPS", "µs"
    );
    for &label in &labels {
        let cell = |read: bool| -> String {
            quick::cell(&r.jobs, label, read)
                .map(|j| {
                    let d = if read { &j.read } else { &j.write };
                    format!(
                        "{:>10.2}{:>10.0}{:>8.0}",
                        d.bw_mb_per_s,
                        d.iops,
                        d.lat_ns.mean / 1e3
                    )
                })
                .unwrap_or_else(|| format!("{:>28}", "-"))
        };
        let marked = if quick_stop(&r.jobs, label).is_some() {
            format!("{label} *")
        } else {
            label.to_string()
        };
        let _ = writeln!(out, "{marked:<w$}|{} |{}", cell(true), cell(false));
    }
    let mut busy_tests = 0;
    for label in &labels {
        for (read, side) in [(true, "read"), (false, "write")] {
            if let Some(busy) = quick::cell(&r.jobs, label, read).and_then(busy_machine) {
                let _ = writeln!(out, "busy  while {label} {side} measured, {busy}");
                busy_tests += 1;
            }
        }
    }
    if busy_tests > 0 {
        let _ = writeln!(out, "busy  {BUSY_MACHINE_COST}");
    }
    for label in &labels {
        if let Some(why) = quick_stop(&r.jobs, label) {
            let _ = writeln!(out, "* {label}: {why}");
        }
    }
}

fn quick_table_unescaped(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", header(r));
    if let Some(j) = r.jobs.first() {
        let runs = j.repeats.len().max(1);
        // The first run's length: only the last can have been cut short, and with it a mean
        // of the measured times.
        let secs = j
            .repeats
            .first()
            .map_or(j.measured_ns as f64 / runs as f64, |f| f.measured_ns as f64)
            / 1e9;
        let _ = writeln!(out, "figures: mean of {runs} counted run(s) of {secs:.1} s each (warm-up not counted; a run cut short counts for the time it ran); MB/s = 10^6 B/s");
    }
    cdm_grid(&mut out, r);
    for j in &r.jobs {
        if let Some(line) = model_line(r, j) {
            let _ = writeln!(out, "{}: {line}", j.name);
        }
    }
    ceiling_lines(r, &mut out);
    notes(r, &mut out);
    out
}

/// `text` right-aligned in `width` columns, with a space before it when it fills them: a
/// figure too wide for its column (a model's TRIMs run at TB/s) must not run into the one
/// before it.
fn figure_cell(text: String, width: usize) -> String {
    if text.len() >= width {
        format!(" {text}")
    } else {
        format!("{text:>width$}")
    }
}

fn direction_row(name: &str, d: &DirectionResult) -> String {
    let us = |ns: f64| ns / 1e3;
    let counts = format!(
        "{:<6}{}{}{}{}",
        name,
        figure_cell(d.ios.to_string(), 12),
        figure_cell(format!("{:.0}", d.iops), 12),
        figure_cell(format!("{:.2}", d.bw_mb_per_s), 10),
        figure_cell(format!("{:.2}", d.bw_mib_per_s), 10),
    );
    if d.ios == 0 {
        // No I/O completed: there is no latency to show, not one of 0 µs.
        return format!("{counts}  -");
    }
    format!(
        "{counts}  {:.1} / {:.1} / {:.1} / {:.1} / {:.1} / {:.1}",
        us(d.lat_ns.min as f64),
        us(d.lat_ns.mean),
        us(d.lat_ns.p50 as f64),
        us(d.lat_ns.p99 as f64),
        us(d.lat_ns.p99_9 as f64),
        us(d.lat_ns.max as f64),
    )
}

fn job_block_unescaped(j: &JobResult, modelled: bool) -> String {
    let mut out = String::new();
    let mut state = match &j.stop_reason {
        None => "complete".to_string(),
        Some(why) => format!("INCOMPLETE: {why}"),
    };
    if let Some(ss) = &j.steady_stop {
        state.push_str(&match ss.attained_at_s {
            Some(t) => format!("; steady by {} at {t:.1} s", ss.criterion),
            None => format!("; not steady by {}", ss.criterion),
        });
    }
    if let Some(lt) = &j.latency_target {
        let depths: Vec<String> = lt
            .depth
            .iter()
            .map(|d| d.map_or("none yet".to_string(), |d| format!("QD{d}")))
            .collect();
        state.push_str(&format!(
            "; deepest queue with p{} ≤ {} µs: {}",
            lt.percentile,
            lt.target_us,
            depths.join(", ")
        ));
    }
    let _ = writeln!(
        out,
        "job {}: {}  ({:.2} s measured, {state})",
        j.name,
        j.job,
        j.measured_ns as f64 / 1e9
    );
    let _ = writeln!(
        out,
        "{:<6}{:>12}{:>12}{:>10}{:>10}  latency µs: min / mean / p50 / p99 / p99.9 / max",
        "", "I/Os", "IOPS", "MB/s", "MiB/s"
    );
    let trim_only = j.job.access.trims() == iolab_core::job::TrimKind::Only;
    let none = DirectionResult::default();
    for (name, d, wanted) in [
        ("read", &j.read, j.job.reads()),
        ("write", &j.write, j.job.writes() && !trim_only),
        ("trim", j.trim.as_ref().unwrap_or(&none), j.trim.is_some()),
    ] {
        if d.ios > 0 || wanted {
            let _ = writeln!(out, "{}", direction_row(name, d));
            if let Some(s) = &d.service_lat_ns {
                let _ = writeln!(
                    out,
                    "      service time from submission, µs: mean {:.1}, p50 {:.1}, p99 {:.1} (above: from intended start)",
                    s.mean / 1e3,
                    s.p50 as f64 / 1e3,
                    s.p99 as f64 / 1e3
                );
            }
        }
    }
    let ios = j.read.ios + j.write.ios + j.trim.as_ref().map_or(0, |t| t.ios);
    let cpu = j.cpu.user_s + j.cpu.system_s;
    let from_intended = if j.latency_from_intended_start {
        "; latency counted from each I/O's intended start"
    } else {
        ""
    };
    if modelled {
        // The simulator's own CPU time says nothing about the modelled host's.
        let _ = writeln!(
            out,
            "cpu   not modelled: the host's stack is a latency per I/O (`iolab sim explain` \
             shows it){from_intended}"
        );
    } else {
        // With no I/O done there is no CPU time per I/O to show (an interrupted run, say).
        let per_io = match ios {
            0 => "no I/O done".to_string(),
            n => format!("{:.2} µs per I/O", cpu / n as f64 * 1e6),
        };
        let _ = writeln!(
            out,
            "cpu   user {:.2} s, system {:.2} s ({per_io}){from_intended}",
            j.cpu.user_s, j.cpu.system_s,
        );
        if let Some(busy) = busy_machine(j) {
            let _ = writeln!(
                out,
                "busy  while this measured, {busy}: {BUSY_MACHINE_COST}"
            );
        }
    }
    if let Some(s) = &j.syncs {
        let _ = writeln!(
            out,
            "syncs {} {:?}{}, mean {:.1} µs, max {:.1} µs",
            s.count,
            s.call,
            if s.failed > 0 {
                format!(" ({} failed)", s.failed)
            } else {
                String::new()
            },
            s.mean_ns / 1e3,
            s.max_ns as f64 / 1e3
        );
    }
    for e in &j.errors {
        let _ = writeln!(
            out,
            "errors {} ({}) ×{}, first at offset {}",
            e.name, e.errno, e.count, e.first_offset_bytes
        );
    }
    out
}

/// What the model says of job `job` beyond the figures (its report in the result's model
/// description): the drive's mean power, the resource that limited it, the write
/// amplification when it wrote, and the share of its SSD reads their write buffers served (a
/// tier's disk reads are not in it).
pub(crate) fn model_line(r: &RunResult, job: &JobResult) -> Option<String> {
    let tests = &r.target.model.as_ref()?.tests;
    // The model reports every run of a job in order, preparation included: jobs of one name
    // (a suite's rounds) take theirs in order, and a job run several times (quick's warm-up
    // and counted runs) is shown by its last run.
    let same_name = |name: &str| r.jobs.iter().filter(|j| j.name == name).count();
    let nth = r
        .jobs
        .iter()
        .take_while(|j| !std::ptr::eq(*j, job))
        .filter(|j| j.name == job.name)
        .count();
    let runs: Vec<_> = tests.iter().filter(|t| t.job == job.name).collect();
    let per_job = runs.len() / same_name(&job.name).max(1);
    let t = runs.get((nth + 1) * per_job.max(1) - 1)?;
    let mut line = format!(
        "model {:.1} W; {} ({:.0} %)",
        t.avg_power_w,
        t.bottleneck,
        t.bottleneck_utilisation * 100.0
    );
    if let Some(wa) = t.write_amplification {
        let _ = write!(line, "; write amplification {wa:.2}");
    }
    match t.reads_from_buffer {
        Some(share) if share >= 0.0005 => {
            let _ = write!(
                line,
                "; {:.1} % of SSD reads from the write buffer",
                share * 100.0
            );
        }
        _ => {}
    }
    Some(line)
}

fn run_table_unescaped(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", header(r));
    for j in &r.jobs {
        out.push_str(&job_block(j, r.target.modelled));
        if let Some(line) = model_line(r, j) {
            let _ = writeln!(out, "{line}");
        }
    }
    ceiling_lines(r, &mut out);
    notes(r, &mut out);
    out
}

/// What a steady-state loop with no round of its tracked job says instead of a verdict.
pub const NOT_JUDGED: &str = "not judged, no round of the tracked job finished";

fn steady_state_line_unescaped(ss: &SteadyStateReport) -> String {
    if ss.rounds == 0 {
        return format!(
            "steady state of '{}' ({}): {NOT_JUDGED}",
            ss.step, ss.tracking
        );
    }
    format!(
        "steady state of '{}' ({}): {} after {} of at most {} rounds; window mean {:.2}, range {:.2} (limit {:.2}), slope excursion {:.2} (limit {:.2})",
        ss.step,
        ss.tracking,
        if ss.attained { "ATTAINED" } else { "NOT attained" },
        ss.rounds,
        ss.max_rounds,
        ss.window_mean,
        ss.range,
        ss.range_limit,
        ss.slope_excursion,
        ss.slope_limit
    )
}

fn suite_table_unescaped(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", header(r));
    let Some(s) = &r.suite else {
        return run_table(r);
    };
    let _ = writeln!(out, "suite {}: {} (scale {})", s.name, s.title, s.scale);
    for p in &s.prepared {
        let _ = writeln!(out, "prepared: {p}");
    }
    let mut current = String::new();
    for j in &r.jobs {
        let step = j.step.as_ref().map_or(j.name.as_str(), |s| s.step.as_str());
        if step != current {
            current = step.to_string();
            let _ = writeln!(out, "\n{step}");
            let _ = writeln!(
                out,
                "  {:<36}{:>11}{:>11}{:>11}{:>11}{:>10}",
                "job", "read MB/s", "write MB/s", "read IOPS", "write IOPS", "lat µs"
            );
        }
        let flag = if j.complete { "" } else { "  INCOMPLETE" };
        // No I/O, no latency: a dash, not 0.0.
        let latency = j
            .metric("lat_mean_us")
            .map_or_else(|| "-".to_string(), |us| format!("{us:.1}"));
        let _ = writeln!(
            out,
            "  {:<36}{:>11.2}{:>11.2}{:>11.0}{:>11.0}{latency:>10}{flag}",
            j.name, j.read.bw_mb_per_s, j.write.bw_mb_per_s, j.read.iops, j.write.iops,
        );
        if let Some(line) = model_line(r, j) {
            let _ = writeln!(out, "    {line}");
        }
    }
    if s.name == "cdm" && !quick::tests_of(&r.jobs).is_empty() {
        let _ = writeln!(out, "\nCrystalDiskMark's grid (MB/s = 10^6 B/s)");
        cdm_grid(&mut out, r);
    }
    if !s.scores.is_empty() {
        let _ = writeln!(out, "\nscores");
        for sc in &s.scores {
            let sd = sc.stddev.map(|d| format!(" ± {d:.2}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:<44}{:>12.2}{sd} {}   ({})",
                sc.name, sc.value, sc.unit, sc.rule
            );
        }
    }
    for ss in &s.steady_state {
        let _ = writeln!(out, "\n{}", steady_state_line(ss));
    }
    out.push('\n');
    ceiling_lines(r, &mut out);
    notes(r, &mut out);
    out
}

/// CrystalDiskMark's table: one row per test, read and write side by side, MB/s = 10^6 B/s.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn quick_table(r: &RunResult) -> String {
    iolab_core::text::escape_control_keep_lines(&quick_table_unescaped(r)).into_owned()
}

/// One job's block of the run table (`modelled`: the figures come from a model, which has no
/// host CPU time to show).
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn job_block(j: &JobResult, modelled: bool) -> String {
    iolab_core::text::escape_control_keep_lines(&job_block_unescaped(j, modelled)).into_owned()
}

/// The table of `iolab run`: a block per job.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn run_table(r: &RunResult) -> String {
    iolab_core::text::escape_control_keep_lines(&run_table_unescaped(r)).into_owned()
}

/// A steady-state verdict in one line, as `suite`, `report` and `results show` print it.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn steady_state_line(ss: &SteadyStateReport) -> String {
    iolab_core::text::escape_control_keep_lines(&steady_state_line_unescaped(ss)).into_owned()
}

/// The table of `iolab suite`: preparation, each step's jobs with their headline figures, the
/// scores and the steady-state verdicts.
///
/// Control bytes that came from input (a job name, a target path, a note of a result file
/// given to `iolab report`) are shown as escapes (`\x1b`), never sent to the terminal.
pub fn suite_table(r: &RunResult) -> String {
    iolab_core::text::escape_control_keep_lines(&suite_table_unescaped(r)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_direction_without_io_shows_no_latency() {
        let none = direction_row("write", &DirectionResult::default());
        assert!(none.ends_with("0.00  -"), "{none}");
        let mut one = DirectionResult {
            ios: 1,
            ..DirectionResult::default()
        };
        one.lat_ns.mean = 1500.0;
        assert!(direction_row("read", &one).contains("/ 1.5 /"));
    }

    #[test]
    fn figures_too_wide_for_their_columns_stay_apart() {
        // A model's TRIM of 64 MiB ranges: 1,788 TRIMs in 0.07 s, 1.78 TB/s.
        let trims = DirectionResult {
            ios: 1788,
            iops: 26_596.0,
            bw_mb_per_s: 1_784_810.21,
            bw_mib_per_s: 1_702_127.66,
            ..DirectionResult::default()
        };
        let row = direction_row("trim", &trims);
        let cols: Vec<&str> = row.split_whitespace().take(5).collect();
        assert_eq!(
            cols,
            ["trim", "1788", "26596", "1784810.21", "1702127.66"],
            "{row}"
        );
        // Figures that fit keep the table's columns.
        let fits = DirectionResult {
            bw_mb_per_s: 108.94,
            bw_mib_per_s: 103.89,
            ..trims
        };
        assert!(
            direction_row("read", &fits)
                .starts_with("read          1788       26596    108.94    103.89"),
            "{}",
            direction_row("read", &fits)
        );
    }

    #[test]
    fn a_loop_with_no_tracked_round_is_not_judged() {
        // Not "NOT attained after 0 of at most 25 rounds; window mean 0.00, range 0.00 ...".
        let ss = iolab_core::steady::judge("IOPS matrix", "write_iops of R0 4K", &[], 5, 25);
        assert_eq!(
            steady_state_line(&ss),
            "steady state of 'IOPS matrix' (write_iops of R0 4K): not judged, no round of the \
             tracked job finished"
        );
    }

    #[test]
    fn control_bytes_of_a_job_name_are_shown_as_escapes() {
        let j = JobResult {
            name: "evil\x1b]0;owned\x07\x1b[2J".into(),
            stop_reason: Some("stopped by \u{9b}31m".into()),
            ..JobResult::unmeasured(iolab_core::job::JobSpec::default().validate().unwrap())
        };
        let block = job_block(&j, false);
        assert!(block.contains("evil\\x1b]0;owned\\x07\\x1b[2J"), "{block}");
        assert!(
            !block
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{block:?}"
        );
    }

    #[test]
    fn a_busy_machine_is_named_and_a_quiet_one_is_not() {
        let mut j = JobResult {
            name: "j".into(),
            measured_ns: 2_000_000_000,
            cpu: iolab_core::result::CpuResult {
                user_s: 0.4,
                system_s: 1.2,
                others_user_s: Some(1.6),
                steal_s: Some(0.1),
            },
            ..JobResult::unmeasured(iolab_core::job::JobSpec::default().validate().unwrap())
        };
        j.read.ios = 100_000;
        let block = job_block(&j, false);
        assert!(
            block.contains(
                "other processes kept 0.80 CPUs busy and the hypervisor took 0.05 (steal)"
            ),
            "{block}"
        );
        // Under a tenth of a CPU together: nothing to say.
        j.cpu.others_user_s = Some(0.1);
        j.cpu.steal_s = Some(0.05);
        assert!(!job_block(&j, false).contains("busy "));
        // Steal alone is enough.
        j.cpu.steal_s = Some(0.3);
        assert!(job_block(&j, false).contains("took 0.15 (steal)"));
        // Not measured (an imported result): nothing said.
        j.cpu.others_user_s = None;
        assert!(!job_block(&j, false).contains("busy "));
    }

    #[test]
    fn cpu_per_io_is_shown_only_when_io_was_done() {
        let mut j = JobResult {
            name: "j".into(),
            complete: false,
            cpu: iolab_core::result::CpuResult {
                user_s: 0.004,
                system_s: 0.002,
                ..Default::default()
            },
            ..JobResult::unmeasured(iolab_core::job::JobSpec::default().validate().unwrap())
        };
        // Interrupted before its first I/O: 6 ms of CPU is not "6,000 µs per I/O".
        let block = job_block(&j, false);
        assert!(block.contains("(no I/O done)"), "{block}");
        j.read.ios = 3000;
        let block = job_block(&j, false);
        assert!(block.contains("(2.00 µs per I/O)"), "{block}");
    }
}
