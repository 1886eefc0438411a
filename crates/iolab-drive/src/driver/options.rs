//! What a drive is told (its options, the live progress counters) and what it returns.

use iolab_core::lat_target::{DepthSearch, LatencyTarget};
use iolab_core::prio::Priorities;
use iolab_core::stats::RunStats;
use iolab_core::sync::{SyncPolicy, SyncSummary};
use iolab_verify::verifier::JobVerifier;
use std::sync::atomic::{AtomicBool, AtomicU64};

/// Shared counters a progress display reads while a run goes on.
#[derive(Debug, Default)]
pub struct Progress {
    /// Completed I/Os so far (all workers, ramp included).
    pub ios: AtomicU64,
    /// Completed bytes so far.
    pub bytes: AtomicU64,
    /// Measured I/Os so far (after the ramp), whose latencies `lat_ns` adds up.
    pub measured_ios: AtomicU64,
    /// Sum of the measured I/Os' latencies, ns (a steady-state stop on latency samples it).
    pub lat_ns: AtomicU64,
}

/// How a drive ends. The default: no ramp, no duration (until the sources run out), nothing
/// watched, nothing shared.
#[derive(Default)]
pub struct DriveOptions<'a> {
    /// When the run starts on the clock (threads of one job share it, so they measure one
    /// window); `None`: when the drive begins.
    pub start_ns: Option<u64>,
    /// Ramp time from the start, excluded from statistics.
    pub ramp_ns: u64,
    /// Measured time after the ramp; `None` runs until every source is exhausted.
    pub duration_ns: Option<u64>,
    /// At the end of the duration, also count the I/Os still in flight as they complete and
    /// measure up to the last of them, as fio does (the job's `drain_end`); otherwise only
    /// those that complete within the duration count, over exactly the duration.
    pub drain_end: bool,
    /// Width of the series bins.
    pub interval_ns: u64,
    /// Stop issuing when set (Ctrl-C); what completed is kept.
    pub stop: Option<&'a AtomicBool>,
    /// Stop issuing when set because another worker of the same job failed.
    pub abort: Option<&'a AtomicBool>,
    /// Live counters, if someone is watching.
    pub progress: Option<&'a Progress>,
    /// Count I/O errors and go on.
    pub continue_on_error: bool,
    /// Stamps writes and checks them read back (the job's `verify`).
    pub verify: Option<&'a JobVerifier>,
    /// Stop issuing when set, as if the job's time were up (another job's end ends this one:
    /// fio's `exitall`); the job is complete, not interrupted.
    pub end: Option<&'a AtomicBool>,
    /// Pauses between I/Os (the job's `think_s`).
    pub think: Option<iolab_core::schedule::Think>,
    /// The job's place in a flow shared with jobs running beside it.
    pub flow: Option<&'a crate::flow::FlowMember>,
    /// The job's I/O priorities, where it sets any.
    pub priorities: Option<&'a Priorities>,
    /// An earlier end of the measured time, set while the job runs (a steady-state stop);
    /// `u64::MAX` until then. The job ends there complete, as at the end of its duration.
    pub end_at: Option<&'a AtomicU64>,
    /// Search the deepest queue that meets this latency target (fio's latency-target mode).
    pub latency_target: Option<&'a LatencyTarget>,
    /// Sync written data every N writes and at the end (fio's `fsync`, `end_fsync`).
    pub sync: Option<&'a SyncPolicy>,
}

/// What a drive measured.
#[derive(Debug)]
pub struct DriveOutcome {
    /// Statistics of the measured period.
    pub stats: RunStats,
    /// Length of the measured period in ns.
    pub measured_ns: u64,
    /// Ramp actually excluded, in ns.
    pub ramp_ns: u64,
    /// False when stopped early (interrupt or error).
    pub complete: bool,
    /// Why it stopped early.
    pub stopped_by: Option<String>,
    /// Whether latency counted from intended starts.
    pub paced: bool,
    /// Where a latency-target search got to.
    pub depth_search: Option<DepthSearch>,
    /// The syncs issued, where the job asks for them.
    pub syncs: Option<SyncSummary>,
}
