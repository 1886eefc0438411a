//! Running a job on a prepared real target: one thread per worker, each with its own descriptor
//! and ring, all on one wall-clock time base, merged into one [`JobResult`].

use crate::clock::{Clock, WallClock};
use crate::driver::{
    drive, plan_workers, DriveOptions, DriveOutcome, Progress, RequestSource, Worker,
};
use crate::open::{EngineChoice, PreparedTarget};
use crate::sys;
use iolab_core::job::{Direction, Job};
use iolab_core::result::{CpuResult, JobResult, RepeatFigures};
use iolab_core::stats::RunStats;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// How a run is watched and stopped from outside.
#[derive(Clone, Copy, Default)]
pub struct RunControl<'a> {
    /// Set to stop issuing (Ctrl-C); what completed is kept and the result marked incomplete.
    pub stop: Option<&'a AtomicBool>,
    /// Live counters for a progress display.
    pub progress: Option<&'a Progress>,
}

/// Width of the per-second series bins.
pub const SERIES_INTERVAL_NS: u64 = 1_000_000_000;

/// A job's result and the merged statistics behind it (kept for combining repeated runs).
#[derive(Debug)]
pub struct JobRun {
    /// The result.
    pub result: JobResult,
    /// Every worker's statistics, merged.
    pub stats: RunStats,
}

/// Runs `job` (span resolved by [`crate::open::prepare_target`]) on `target`.
pub fn run_job(target: &PreparedTarget, job: &Job, ctl: RunControl) -> io::Result<JobRun> {
    run_workers(target, job, plan_workers(job, 0), ctl)
}

/// Runs `workers` (one thread each, requests from any [`RequestSource`], e.g. a trace) on
/// `target`; `job` gives the limits, ramp, duration, data and error policy.
pub fn run_workers<S: RequestSource + Send>(
    target: &PreparedTarget,
    job: &Job,
    mut workers: Vec<Worker<S>>,
    ctl: RunControl,
) -> io::Result<JobRun> {
    // Open every descriptor before starting, so a failure refuses the job before any I/O.
    let mut targets = Vec::with_capacity(workers.len());
    for _ in 0..workers.len() {
        targets.push(target.open_worker(job)?);
    }
    if target.engine == EngineChoice::Psync {
        // A synchronous target completes each I/O inside submit: deeper queues would only
        // serialise behind each other and inflate latency.
        for w in &mut workers {
            w.queue_depth = 1;
        }
    }
    let slot_bytes = job.max_block() as usize;
    let barrier = Barrier::new(workers.len());
    let abort = AtomicBool::new(false);
    let origin = Instant::now();
    let cpu_before = sys::process_cpu_seconds();
    let outcomes: Vec<io::Result<DriveOutcome>> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .into_iter()
            .zip(workers)
            .map(|(mut t, w)| {
                let (barrier, abort) = (&barrier, &abort);
                scope.spawn(move || {
                    sys::tighten_timer_slack();
                    // The ring is built on the thread that uses it (SINGLE_ISSUER).
                    let prepared = t.prepare(w.queue_depth, slot_bytes);
                    barrier.wait();
                    prepared?;
                    let clock = WallClock::with_origin(origin);
                    let mut worker = w;
                    worker.source.start_at(clock.now_ns());
                    let opts = DriveOptions {
                        ramp_ns: (job.ramp_s * 1e9) as u64,
                        duration_ns: job.duration_s.map(|d| (d * 1e9) as u64),
                        interval_ns: SERIES_INTERVAL_NS,
                        stop: ctl.stop,
                        abort: Some(abort),
                        progress: ctl.progress,
                        continue_on_error: job.continue_on_error,
                    };
                    let out = drive(&mut t, &clock, vec![worker], &opts);
                    if out.as_ref().map_or(true, |o| !o.complete) {
                        abort.store(true, Ordering::Relaxed);
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("worker thread panicked")))
            })
            .collect()
    });
    let cpu_after = sys::process_cpu_seconds();
    let mut merged: Option<DriveOutcome> = None;
    let mut stopped_by: Option<String> = None;
    for o in outcomes {
        let o = o?;
        // The first real reason wins over "another thread failed".
        if stopped_by
            .as_deref()
            .is_none_or(|s| s.starts_with("stopped because"))
        {
            if let Some(reason) = &o.stopped_by {
                stopped_by = Some(reason.clone());
            }
        }
        merged = Some(match merged {
            None => o,
            Some(mut m) => {
                m.stats.merge(&o.stats);
                m.measured_ns = m.measured_ns.max(o.measured_ns);
                m.ramp_ns = m.ramp_ns.max(o.ramp_ns);
                m.paced |= o.paced;
                m
            }
        });
    }
    let m = merged.expect("a job has at least one thread");
    let result = job_result(
        job,
        &m.stats,
        m.measured_ns,
        m.ramp_ns,
        m.paced,
        stopped_by,
        CpuResult {
            user_s: cpu_after.0 - cpu_before.0,
            system_s: cpu_after.1 - cpu_before.1,
        },
    );
    Ok(JobRun {
        result,
        stats: m.stats,
    })
}

/// Combines repeated runs of one job into one result whose rates are the **mean of the runs**
/// (CrystalDiskMark reports the maximum; KDiskMark's default profile and iolab the mean) and
/// whose latency statistics cover every counted I/O. Each run's figures stay in `repeats`.
pub fn mean_of_repeats(job: &Job, runs: &[JobRun]) -> Option<JobResult> {
    let first = runs.first()?;
    let mut stats = first.stats.clone();
    for r in &runs[1..] {
        stats.merge(&r.stats);
    }
    let n = runs.len() as f64;
    let measured_total: u64 = runs.iter().map(|r| r.result.measured_ns).sum();
    let stop_reason = runs.iter().find_map(|r| r.result.stop_reason.clone());
    let mut out = job_result(
        job,
        &stats,
        measured_total,
        runs.iter().map(|r| r.result.ramp_ns).sum(),
        runs.iter().any(|r| r.result.latency_from_intended_start),
        stop_reason,
        CpuResult {
            user_s: runs.iter().map(|r| r.result.cpu.user_s).sum(),
            system_s: runs.iter().map(|r| r.result.cpu.system_s).sum(),
        },
    );
    let mean = |f: &dyn Fn(&JobResult) -> f64| runs.iter().map(|r| f(&r.result)).sum::<f64>() / n;
    for (dir, pick) in [
        (
            &mut out.read,
            (|r: &JobResult| &r.read) as fn(&JobResult) -> &iolab_core::result::DirectionResult,
        ),
        (&mut out.write, |r: &JobResult| &r.write),
    ] {
        dir.iops = mean(&|r| pick(r).iops);
        dir.bw_bytes_per_s = mean(&|r| pick(r).bw_bytes_per_s);
        dir.bw_mb_per_s = dir.bw_bytes_per_s / 1e6;
        dir.bw_mib_per_s = dir.bw_bytes_per_s / (1u64 << 20) as f64;
    }
    // Merged bins would add runs second by second; lay the runs' series end to end instead.
    out.series = first.result.series.clone();
    out.series.t_end_s.clear();
    let mut t0 = 0.0;
    let s = &mut out.series;
    for (i, r) in runs.iter().enumerate() {
        let rs = &r.result.series;
        if i > 0 {
            s.read_iops.extend_from_slice(&rs.read_iops);
            s.write_iops.extend_from_slice(&rs.write_iops);
            s.read_bytes_per_s.extend_from_slice(&rs.read_bytes_per_s);
            s.write_bytes_per_s.extend_from_slice(&rs.write_bytes_per_s);
            s.mean_lat_ns.extend_from_slice(&rs.mean_lat_ns);
        }
        s.t_end_s.extend(rs.t_end_s.iter().map(|t| t0 + t));
        t0 += r.result.measured_ns as f64 / 1e9;
    }
    out.repeats = runs.iter().map(|r| RepeatFigures::of(&r.result)).collect();
    Some(out)
}

/// Builds a job's result from merged statistics (shared with the model's runner).
pub fn job_result(
    job: &Job,
    stats: &RunStats,
    measured_ns: u64,
    ramp_ns: u64,
    paced: bool,
    stop_reason: Option<String>,
    cpu: CpuResult,
) -> JobResult {
    JobResult {
        name: job.name.clone(),
        job: job.clone(),
        complete: stop_reason.is_none(),
        stop_reason,
        measured_ns,
        ramp_ns,
        read: stats.direction_summary(Direction::Read, measured_ns),
        write: stats.direction_summary(Direction::Write, measured_ns),
        series: stats.series(measured_ns),
        cpu,
        errors: stats.error_list(),
        latency_from_intended_start: paced,
        repeats: Vec::new(),
        step: None,
    }
}
