//! What a run of one job gives, real or modelled: its [`JobResult`] and the merged statistics
//! behind it, built the same way whatever served the I/O.

use iolab_core::job::{Direction, Job};
use iolab_core::result::{CpuResult, JobResult};
use iolab_core::stats::RunStats;

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
        verify: None,
        steady_stop: None,
        latency_target: None,
        syncs: None,
    }
}
