//! What a run of one job gives, real or modelled: its [`JobResult`] and the merged statistics
//! behind it, built the same way whatever served the I/O.

use crate::driver::{Progress, RequestSource, Worker};
use iolab_core::job::{Direction, Job};
use iolab_core::result::{CpuResult, JobResult};
use iolab_core::stats::RunStats;
use iolab_verify::journal::JournalWriter;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::SystemTime;

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

/// How a run is watched and stopped from outside.
#[derive(Clone, Copy, Default)]
pub struct RunControl<'a> {
    /// Set to stop issuing (Ctrl-C); what completed is kept and the result marked incomplete.
    pub stop: Option<&'a AtomicBool>,
    /// Live counters for a progress display.
    pub progress: Option<&'a Progress>,
    /// The journal of verified writes (`--verify-journal`), for jobs that verify.
    pub journal: Option<&'a Arc<JournalWriter>>,
    /// Start the job's I/O at this wall-clock time, once every thread is set up (processes
    /// that start one job together, e.g. MPI ranks); `None`: as soon as they are.
    pub start_at: Option<SystemTime>,
    /// Where to put when the job's I/O started, ns since the Unix epoch.
    pub started_unix_ns: Option<&'a AtomicU64>,
    /// Set to end the job as if its time were up (another job's end stops it: fio's
    /// `exitall`); the result stays complete.
    pub end: Option<&'a AtomicBool>,
    /// The job's place in a flow shared with jobs running beside it.
    pub flow: Option<&'a crate::flow::FlowMember>,
}

/// One way to run a job, whatever serves it: the engine's prepared file or device or a model
/// of a drive on a host path. Both run their workers through the same [`driver`](crate::driver)
/// (on a wall clock and on a virtual one) and build the result with [`job_result`], so what
/// comes back has one schema; a target honours what of [`RunControl`] it can (a model in
/// virtual time has no wall-clock start, progress line or journal, and takes only `stop`).
pub trait RunTarget {
    /// Bytes the target offers.
    fn size_bytes(&self) -> u64;

    /// The logical block size (alignment of every I/O).
    fn logical_block_bytes(&self) -> u64;

    /// Runs `workers` (one per thread on a real target; requests from any source, e.g. a
    /// trace) under `job`'s limits, ramp, duration, data and error policy; the job's span must
    /// already be resolved.
    fn run_workers<S: RequestSource + Send>(
        &mut self,
        job: &Job,
        workers: Vec<Worker<S>>,
        ctl: RunControl,
    ) -> io::Result<JobRun>
    where
        Self: Sized;

    /// Runs `job` (span resolved) as its own workload plans it.
    fn run_job(&mut self, job: &Job, ctl: RunControl) -> io::Result<JobRun>;

    /// Lets the target sit idle for `seconds` (a finite wait, not negative): a real one in
    /// wall time, ending early once `stop` is set; a model in its own virtual time, in which
    /// background work drains.
    fn idle(&mut self, seconds: f64, stop: Option<&AtomicBool>);
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
        complete: stop_reason.is_none(),
        stop_reason,
        measured_ns,
        ramp_ns,
        read: stats.direction_summary(Direction::Read, measured_ns),
        write: stats.direction_summary(Direction::Write, measured_ns),
        trim: stats.trim_summary(measured_ns),
        series: stats.series(measured_ns),
        cpu,
        errors: stats.error_list(),
        latency_from_intended_start: paced,
        ..JobResult::unmeasured(job.clone())
    }
}
