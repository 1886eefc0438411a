//! The one result schema every run writes and every renderer reads.
//!
//! Rules (learned from fio's drifting formats): every field is always present, units are in the
//! field names, and [`SCHEMA_VERSION`] changes whenever a field changes meaning.

use crate::hist::SparseHistogram;
use crate::job::Job;
use crate::stats::{OVER_100MS_NS, OVER_10MS_NS};
use serde::{Deserialize, Serialize};

/// Version of this schema; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run: one or more jobs on one target.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    /// Schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool that wrote this.
    pub tool: ToolInfo,
    /// What kind of run: `run`, `quick`, `suite:NAME`, `replay`.
    pub kind: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix_s: f64,
    /// False when the run was interrupted or failed before all jobs finished.
    pub complete: bool,
    /// Why the run is incomplete, if it is.
    pub incomplete_reason: Option<String>,
    /// The machine that ran it.
    pub host: HostInfo,
    /// The target measured.
    pub target: TargetInfo,
    /// Free-form notes the run wants readers to see (e.g. "psync fallback: io_uring unavailable").
    pub notes: Vec<String>,
    /// One entry per job, in run order.
    pub jobs: Vec<JobResult>,
    /// For suite runs: the suite, its scores and steady-state verdicts (null otherwise).
    pub suite: Option<SuiteSummary>,
    /// For trace replays: the trace, how it was replayed, and the storage-bench metrics (null
    /// otherwise).
    pub replay: Option<ReplaySummary>,
    /// For runs of several coordinated processes (`mpirun … iolab run`): every rank and host,
    /// while `jobs` holds their aggregate (null otherwise, and in results written before).
    #[serde(default)]
    pub scale: Option<crate::scale::ScaleSummary>,
}

/// A trace replay's setting and its storage-bench figures (the SSD 750 review's metrics).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct ReplaySummary {
    /// The trace file.
    pub trace: String,
    /// Its format.
    pub format: String,
    /// `timestamps` or `as-fast-as-possible`.
    pub mode: String,
    /// Replay speed-up (timestamps mode).
    pub time_scale: f64,
    /// Idle gaps longer than this were shortened to it, in ms of trace time (null: kept).
    pub idle_cap_ms: Option<f64>,
    /// Requests kept in flight at most.
    pub queue_depth: u32,
    /// The recorded queue depth of the requests replayed (the reads' own when only the reads
    /// are), where the trace has completion times.
    pub recorded_queue_depth: Option<f64>,
    /// What was done to the target first: `as-is`, `empty` or `filled`.
    pub target_state: String,
    /// Reads and writes the trace asked for (after filters).
    pub planned_ios: u64,
    /// Trims and flushes left out, as the storage bench does.
    pub skipped_trims_and_flushes: u64,
    /// Average data rate, 10^6 bytes per second, over the replay's duration.
    pub data_rate_mb_per_s: f64,
    /// Average latency of every I/O, µs.
    pub avg_latency_us: f64,
    /// Share of I/Os longer than 10 ms (strictly), percent: exact
    /// ([`JobResult::ios_over_10ms`]).
    pub pct_over_10ms: f64,
    /// Share of I/Os longer than 100 ms (strictly), percent: exact.
    pub pct_over_100ms: f64,
    /// What the replay changed of the trace to fit the target; each non-zero count is also
    /// said in a note. Absent from results recorded before it was kept (read as zeros).
    #[serde(default)]
    pub adjustments: ReplayAdjustments,
}

/// The changes a replay makes to what a trace asks for, counted.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct ReplayAdjustments {
    /// Requests not issued at the trace's offset: beyond the target (wrapped modulo its size)
    /// or running past its end (moved down to end at it).
    pub offsets_moved: u64,
    /// The trace's highest byte (offset + length), to set against the target's size.
    pub trace_span_bytes: u64,
    /// Requests longer than the replay's request buffer, cut to it.
    pub sizes_clamped: u64,
    /// Volumes (devices) of the trace replayed together onto the one target (0 or 1: none
    /// merged).
    pub volumes_merged: u64,
    /// The step all the trace's timestamps are multiples of (from its first), in ns.
    pub timestamp_step_ns: Option<u64>,
    /// Requests with the same timestamp as the one before them: issued together in
    /// timestamp-faithful replay (noted when the step is 1 ms or coarser).
    pub requests_at_a_shared_time: u64,
    /// The most requests issued together at one timestamp.
    pub largest_burst: u64,
}

/// What a suite run adds to its result: which suite, at what scale, and what it concluded.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct SuiteSummary {
    /// Suite name (`anandtech2015`).
    pub name: String,
    /// Its title.
    pub title: String,
    /// Where its parameters come from.
    pub source: String,
    /// Factor applied to every duration and size (1.0 = as published).
    pub scale: f64,
    /// Preparation done before or between measurements, in order (`fill 1×`, `purge: discard`).
    pub prepared: Vec<String>,
    /// Scores computed from the steps.
    pub scores: Vec<Score>,
    /// Steady-state verdicts of steps that loop in rounds.
    pub steady_state: Vec<SteadyStateReport>,
}

/// One score of a suite.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct Score {
    /// Name (`Random read, mean of QD1–4`).
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit (`MB/s`, `IOPS`, `points`).
    pub unit: String,
    /// Standard deviation, where the rule gives one (last-N-seconds).
    pub stddev: Option<f64>,
    /// How it was computed, in words.
    pub rule: String,
}

/// The SNIA PTS steady-state determination of one step.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct SteadyStateReport {
    /// Step name.
    pub step: String,
    /// The tracking variable (`write_iops`).
    pub tracking: String,
    /// Whether the window met both criteria.
    pub attained: bool,
    /// Rounds run.
    pub rounds: u32,
    /// Round cap.
    pub max_rounds: u32,
    /// Tracking value of every round, in order.
    pub round_values: Vec<f64>,
    /// Rounds in the window (5).
    pub window: u32,
    /// Mean of the window.
    pub window_mean: f64,
    /// max − min of the window.
    pub range: f64,
    /// Allowed range: 20 % of the mean.
    pub range_limit: f64,
    /// Least-squares slope per round over the window.
    pub slope: f64,
    /// Intercept of that fit at the window's first round.
    pub intercept: f64,
    /// |slope| × (window − 1): the fit's excursion across the window.
    pub slope_excursion: f64,
    /// Allowed excursion: 10 % of the mean.
    pub slope_limit: f64,
}

/// Where a job sits in a suite: for reports to group, chart and compare steps.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct StepInfo {
    /// Phase name.
    pub phase: String,
    /// Step name (jobs of one step share it; a sweep varies `sweep`).
    pub step: String,
    /// How reports draw the step: `qd-lines`, `bs-lines`, `mix-lines`, `bars`, `atto`,
    /// `scatter`, `heatmap`, `table`.
    pub chart: String,
    /// The swept keys and their values for this job (`queue_depth` = 4, `read_pct` = 40).
    pub sweep: Vec<SweepValue>,
    /// Round number, for steps that loop until steady state (1-based).
    pub round: Option<u32>,
}

/// One swept key's value.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct SweepValue {
    /// The job key (`queue_depth`, `block_size`, `read_pct`, `threads`).
    pub key: String,
    /// Its value (bytes for sizes).
    pub value: f64,
}

/// Tool name and version.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    /// "iolab".
    pub name: String,
    /// Crate version.
    pub version: String,
}

/// Facts about the host.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpus: u32,
    /// Memory in bytes.
    pub memory_bytes: u64,
}

/// Facts about the target.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct TargetInfo {
    /// Path or `sim:` name as given.
    pub path: String,
    /// `file`, `block`, `sim` or `null`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Logical block size in bytes.
    pub logical_block_bytes: u64,
    /// I/O engine used: `io_uring`, `psync`, `sim`, `null`.
    pub engine: String,
    /// True when the figures come from a model, not a device.
    pub modelled: bool,
    /// The model's parameters, when modelled.
    pub model: Option<crate::model_info::ModelInfo>,
    /// The host-path probe of the target, when one was taken.
    pub probe: Option<serde_json::Value>,
    /// One line describing the path (drive, filesystem, narrowest link), from the probe.
    pub path_summary: Option<String>,
    /// The narrowest link's effective rate in bytes/s (one direction), when the probe knows it:
    /// no measured figure can exceed it.
    pub path_ceiling_bytes_per_s: Option<f64>,
}

/// One job's measurements.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JobResult {
    /// Job name.
    pub name: String,
    /// The job exactly as run.
    pub job: Job,
    /// False when the job was cut short (interrupt, error).
    pub complete: bool,
    /// Why it was cut short (the first I/O error with its offset, or "interrupted").
    pub stop_reason: Option<String>,
    /// Measured time (after ramp) in ns.
    pub measured_ns: u64,
    /// Ramp time excluded, in ns.
    pub ramp_ns: u64,
    /// Reads.
    pub read: DirectionResult,
    /// Writes.
    pub write: DirectionResult,
    /// TRIMs (left out where the job issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<DirectionResult>,
    /// Per-interval series.
    pub series: SeriesResult,
    /// CPU time of the whole process during the job.
    pub cpu: CpuResult,
    /// I/O errors by errno.
    pub errors: Vec<ErrorCount>,
    /// Latency counted from each I/O's intended start (rate-limited jobs) rather than from
    /// submission.
    pub latency_from_intended_start: bool,
    /// When the job's figures combine repeated runs (quick's counted runs), each run's own
    /// figures; the job's rates are then their mean. Empty for a single run.
    pub repeats: Vec<RepeatFigures>,
    /// Where the job sits in a suite (null outside suites).
    pub step: Option<StepInfo>,
    /// What reading back the job's writes found (null when the job did not verify, and in
    /// results recorded before verify existed).
    #[serde(default)]
    pub verify: Option<VerifySummary>,
    /// What the job's steady-state stop found (left out where the job had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_stop: Option<crate::steady_stop::SteadyStopOutcome>,
    /// What the job's latency-target search found (left out where the job had none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::lat_target::LatencyTargetOutcome>,
    /// The syncs the job issued (left out where it issued none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syncs: Option<crate::sync::SyncSummary>,
    /// The CrystalDiskMark test the job runs (`quick`'s and the cdm suite's jobs; left out
    /// elsewhere, and missing from results written before it: see [`crate::quick::tests_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<crate::quick::QuickTest>,
}

/// What a verify pass found: blocks checked, failures by kind, the first failures in full.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct VerifySummary {
    /// `end` (after the job), `inline` (after each write) or `journal` (`iolab verify`).
    pub mode: String,
    /// Checksum of every 512-byte sector: `xxh3-32 per sector`.
    pub checksum: String,
    /// Blocks (or what later writes left of them) read back and checked.
    pub blocks_checked: u64,
    /// Bytes read back and checked.
    pub bytes_checked: u64,
    /// Blocks that failed (the sum of the kinds below).
    pub failures: u64,
    /// A sector's checksum did not match.
    pub corrupted: u64,
    /// The block read back was written for another offset.
    pub misplaced: u64,
    /// Zeros (or another uniform byte) where the block should be.
    pub zeros: u64,
    /// Sectors of different writes in one block.
    pub torn: u64,
    /// An older generation of the block: a lost write.
    pub stale: u64,
    /// Data iolab did not stamp where a write should have landed.
    pub foreign: u64,
    /// After a crash: writes acknowledged after the last flush that did not survive, which a
    /// drive may lose (not failures).
    pub unflushed_lost: u64,
    /// The first failures (at most 100), in the order found.
    pub first_failures: Vec<VerifyFailure>,
    /// The journal written or read, if any.
    pub journal: Option<String>,
    /// Flushes of the target recorded in the journal.
    pub journal_flushes: u64,
    /// What stopped the verify from being complete (an unreadable range, a journal error).
    pub problem: Option<String>,
}

/// One block that did not read back as written.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct VerifyFailure {
    /// `corrupted`, `misplaced`, `zeros`, `torn`, `stale` or `foreign`.
    pub kind: String,
    /// Byte offset of the block (or of what is left of it).
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Byte offset of the first sector at fault.
    pub sector_offset: u64,
    /// What should have been there.
    pub expected: String,
    /// What was there.
    pub found: String,
}

/// The headline figures of one of several repeated runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct RepeatFigures {
    /// Measured time in ns.
    pub measured_ns: u64,
    /// Reads per second.
    pub read_iops: f64,
    /// Writes per second.
    pub write_iops: f64,
    /// Read 10^6 bytes per second.
    pub read_mb_per_s: f64,
    /// Write 10^6 bytes per second.
    pub write_mb_per_s: f64,
    /// Mean read latency in ns.
    pub read_lat_mean_ns: f64,
    /// Mean write latency in ns.
    pub write_lat_mean_ns: f64,
}

impl RepeatFigures {
    /// The figures of one job result.
    pub fn of(r: &JobResult) -> Self {
        RepeatFigures {
            measured_ns: r.measured_ns,
            read_iops: r.read.iops,
            write_iops: r.write.iops,
            read_mb_per_s: r.read.bw_mb_per_s,
            write_mb_per_s: r.write.bw_mb_per_s,
            read_lat_mean_ns: r.read.lat_ns.mean,
            write_lat_mean_ns: r.write.lat_ns.mean,
        }
    }
}

/// One direction's figures.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct DirectionResult {
    /// Completed I/Os.
    pub ios: u64,
    /// Completed bytes.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes_per_s: f64,
    /// 10^6 bytes per second.
    pub bw_mb_per_s: f64,
    /// 2^20 bytes per second.
    pub bw_mib_per_s: f64,
    /// Latency summary in ns: from submission, or from the intended start for paced jobs
    /// (rate limits, trace timestamps), so a stalled device cannot hide (no coordinated omission).
    pub lat_ns: LatencySummary,
    /// Paced jobs only (else null): from submission to completion, the device's service time,
    /// comparable with tools that start the clock at submission (fio).
    pub service_lat_ns: Option<LatencySummary>,
    /// Full latency histogram, mergeable.
    pub lat_histogram: SparseHistogram,
    /// I/Os whose latency (as `lat_ns`'s) was longer than 10 ms, counted exactly as they
    /// completed: the histogram cannot say, its bucket holding 10 ms spans 9.961–10.027 ms.
    /// Null in results written before iolab counted them.
    #[serde(default)]
    pub ios_over_10ms: Option<u64>,
    /// I/Os longer than 100 ms, counted exactly (the histogram's bucket holding 100 ms spans
    /// 99.615–100.139 ms). Null in results written before iolab counted them.
    #[serde(default)]
    pub ios_over_100ms: Option<u64>,
}

impl DirectionResult {
    /// `exact`, or for a result written before the exact counts were kept, the histogram's
    /// samples in buckets that start above `ns` (which leaves out the bucket holding `ns`).
    fn over(&self, exact: Option<u64>, ns: u64) -> u64 {
        exact.unwrap_or_else(|| self.lat_histogram.count_above(ns))
    }
}

/// Latency figures in nanoseconds (percentiles within ±0.39 %, see [`crate::hist`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencySummary {
    /// Minimum.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub stddev: f64,
    /// Maximum.
    pub max: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
}

/// Per-interval series (bins end at `t_end_s`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct SeriesResult {
    /// Bin width in ms.
    pub interval_ms: f64,
    /// End of each bin, seconds after measuring started.
    pub t_end_s: Vec<f64>,
    /// Reads per second in each bin.
    pub read_iops: Vec<f64>,
    /// Writes per second in each bin.
    pub write_iops: Vec<f64>,
    /// Read bytes per second.
    pub read_bytes_per_s: Vec<f64>,
    /// Write bytes per second.
    pub write_bytes_per_s: Vec<f64>,
    /// TRIMs per second in each bin (left out where the job issued none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trim_iops: Vec<f64>,
    /// Mean latency of the I/Os completed in each bin.
    pub mean_lat_ns: Vec<f64>,
}

/// CPU seconds the process used over the measured window (the ramp and set-up excluded), and
/// how busy the rest of the machine was meanwhile.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct CpuResult {
    /// User-mode seconds.
    pub user_s: f64,
    /// Kernel-mode seconds.
    pub system_s: f64,
    /// User-mode CPU seconds the machine's other processes used over the same window: every
    /// CPU's user time (Linux's /proc/stat) less this process's own. Kernel time is left out,
    /// since the kernel's threads serve this run's I/O too (a loop device's worker, say). None
    /// where not measured: a model, an imported result, a run of several processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_user_s: Option<f64>,
    /// Seconds over the window in which a hypervisor ran something else on this machine's CPUs
    /// (steal time), where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_s: Option<f64>,
}

/// CPU time read at one moment: this process's, and the whole machine's where the system
/// tells it. Two readings make a [`CpuResult`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuReading {
    /// This process's user-mode seconds.
    pub user_s: f64,
    /// This process's kernel-mode seconds.
    pub system_s: f64,
    /// Every CPU's user-mode seconds (user and nice) and steal seconds since boot.
    pub machine: Option<MachineCpu>,
}

/// The whole machine's CPU time since boot, summed over its CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineCpu {
    /// User-mode seconds (user and nice).
    pub user_s: f64,
    /// Seconds a hypervisor gave the CPUs to others.
    pub steal_s: f64,
}

fn micros(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

/// How many CPUs, on average, others may keep busy (user time and steal together) while a job
/// measures before its result says so. On the 2-CPU VM iolab is developed on, one busy CPU
/// elsewhere in the VM took 4K QD1 reads on its virtual disk from 27.0K to 19.6K IOPS (fio,
/// pinned; README, "A quiet machine").
pub const BUSY_MACHINE_CPUS: f64 = 0.1;

/// The shortest measured window over which [`CpuResult::busy_machine`] judges: the machine's
/// times advance by whole 10 ms ticks, the process's are exact, so a short window's difference
/// is mostly rounding.
pub const BUSY_MACHINE_MIN_WINDOW_S: f64 = 1.0;

impl CpuResult {
    /// The CPU used between two readings; the others' share where both readings have the
    /// machine's (never below zero: the machine's ticks round what the process's times do not).
    pub fn between(before: CpuReading, after: CpuReading) -> CpuResult {
        let user_s = after.user_s - before.user_s;
        let (others_user_s, steal_s) = match (before.machine, after.machine) {
            // To the microsecond: the machine's times are large sums, whose difference
            // carries float noise below it.
            (Some(b), Some(a)) => (
                Some(micros((a.user_s - b.user_s - user_s).max(0.0))),
                Some(micros((a.steal_s - b.steal_s).max(0.0))),
            ),
            _ => (None, None),
        };
        CpuResult {
            user_s,
            system_s: after.system_s - before.system_s,
            others_user_s,
            steal_s,
        }
    }

    /// The sum of several runs' CPU (repeats of one job in turn): the others' share only where
    /// every run measured it.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a CpuResult> + Clone) -> CpuResult {
        let total = |f: fn(&CpuResult) -> Option<f64>| -> Option<f64> {
            parts.clone().into_iter().map(f).sum()
        };
        CpuResult {
            user_s: parts.clone().into_iter().map(|c| c.user_s).sum(),
            system_s: parts.clone().into_iter().map(|c| c.system_s).sum(),
            others_user_s: total(|c| c.others_user_s),
            steal_s: total(|c| c.steal_s),
        }
    }

    /// The CPUs others kept busy (user time) and the hypervisor took (steal), on average over
    /// `measured_s`, where together they reach [`BUSY_MACHINE_CPUS`] over a window of at least
    /// [`BUSY_MACHINE_MIN_WINDOW_S`]; None on a quiet machine, a short window, or unmeasured.
    pub fn busy_machine(&self, measured_s: f64) -> Option<(f64, f64)> {
        if measured_s < BUSY_MACHINE_MIN_WINDOW_S {
            return None;
        }
        let others = self.others_user_s? / measured_s;
        let steal = self.steal_s.unwrap_or(0.0) / measured_s;
        (others + steal >= BUSY_MACHINE_CPUS).then_some((others, steal))
    }
}

/// Errors of one errno.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ErrorCount {
    /// errno value.
    pub errno: i32,
    /// Symbolic name.
    pub name: String,
    /// How many I/Os failed with it.
    pub count: u64,
    /// Byte offset of the first.
    pub first_offset_bytes: u64,
}

impl JobResult {
    /// The result of `job` before anything was measured: complete, no I/O, no time, nothing
    /// beside. Runners and fixtures fill in what they measured.
    pub fn unmeasured(job: Job) -> JobResult {
        JobResult {
            name: job.name.clone(),
            job,
            complete: true,
            stop_reason: None,
            measured_ns: 0,
            ramp_ns: 0,
            read: DirectionResult::default(),
            write: DirectionResult::default(),
            trim: None,
            series: SeriesResult::default(),
            cpu: CpuResult::default(),
            errors: Vec::new(),
            latency_from_intended_start: false,
            repeats: Vec::new(),
            step: None,
            verify: None,
            steady_stop: None,
            latency_target: None,
            syncs: None,
            test: None,
        }
    }

    /// A named figure of the job, as suites and reports refer to it: `read_iops`, `write_iops`,
    /// `total_iops`, `read_mb_per_s`, `write_mb_per_s`, `total_mb_per_s`, `read_lat_mean_us`,
    /// `write_lat_mean_us`, `lat_mean_us` (both directions, weighted by I/Os), `read_lat_max_us`,
    /// `write_lat_max_us`, `read_lat_p99_us`, `write_lat_p99_us` (`total_iops` counts TRIMs too).
    /// A latency of a direction that completed no I/O is no value, not 0 µs (a suite's
    /// access-time score read 0.00 µs on a disk whose reads all missed the window).
    pub fn metric(&self, name: &str) -> Option<f64> {
        let (r, w) = (&self.read, &self.write);
        let no_latency = match name {
            "read_lat_mean_us" | "read_lat_max_us" | "read_lat_p99_us" => r.ios == 0,
            "write_lat_mean_us" | "write_lat_max_us" | "write_lat_p99_us" => w.ios == 0,
            "lat_mean_us" => r.ios + w.ios == 0,
            _ => false,
        };
        if no_latency {
            return None;
        }
        Some(match name {
            "read_iops" => r.iops,
            "write_iops" => w.iops,
            "total_iops" => self.total_iops(),
            "read_mb_per_s" => r.bw_mb_per_s,
            "write_mb_per_s" => w.bw_mb_per_s,
            "total_mb_per_s" => r.bw_mb_per_s + w.bw_mb_per_s,
            "read_lat_mean_us" => r.lat_ns.mean / 1e3,
            "write_lat_mean_us" => w.lat_ns.mean / 1e3,
            "lat_mean_us" => {
                let n = (r.ios + w.ios).max(1) as f64;
                (r.lat_ns.mean * r.ios as f64 + w.lat_ns.mean * w.ios as f64) / n / 1e3
            }
            "read_lat_max_us" => r.lat_ns.max as f64 / 1e3,
            "write_lat_max_us" => w.lat_ns.max as f64 / 1e3,
            "read_lat_p99_us" => r.lat_ns.p99 as f64 / 1e3,
            "write_lat_p99_us" => w.lat_ns.p99 as f64 / 1e3,
            _ => return None,
        })
    }

    /// The names [`JobResult::metric`] knows.
    pub const METRICS: &'static [&'static str] = &[
        "read_iops",
        "write_iops",
        "total_iops",
        "read_mb_per_s",
        "write_mb_per_s",
        "total_mb_per_s",
        "read_lat_mean_us",
        "write_lat_mean_us",
        "lat_mean_us",
        "read_lat_max_us",
        "write_lat_max_us",
        "read_lat_p99_us",
        "write_lat_p99_us",
    ];

    /// The value of a swept key, if this job is a point of a sweep.
    pub fn sweep_value(&self, key: &str) -> Option<f64> {
        self.step
            .as_ref()?
            .sweep
            .iter()
            .find(|s| s.key == key)
            .map(|s| s.value)
    }

    /// I/Os of both directions whose latency was longer than 10 ms (strictly): exact, but in
    /// a result written before the exact counts were kept (`ios_over_10ms` null), where it
    /// is the histogram's count above its bucket holding 10 ms (9.961–10.027 ms).
    pub fn ios_over_10ms(&self) -> u64 {
        self.read.over(self.read.ios_over_10ms, OVER_10MS_NS)
            + self.write.over(self.write.ios_over_10ms, OVER_10MS_NS)
    }

    /// I/Os of both directions longer than 100 ms, as [`JobResult::ios_over_10ms`].
    pub fn ios_over_100ms(&self) -> u64 {
        self.read.over(self.read.ios_over_100ms, OVER_100MS_NS)
            + self.write.over(self.write.ios_over_100ms, OVER_100MS_NS)
    }

    /// Total I/Os per second, of every direction (TRIMs too).
    pub fn total_iops(&self) -> f64 {
        self.read.iops + self.write.iops + self.trim.as_ref().map_or(0.0, |t| t.iops)
    }

    /// Total MB/s (10^6), both directions.
    pub fn total_mb_per_s(&self) -> f64 {
        self.read.bw_mb_per_s + self.write.bw_mb_per_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(user_s: f64, machine_user_s: f64, steal_s: f64) -> CpuReading {
        CpuReading {
            user_s,
            system_s: 0.5 * user_s,
            machine: Some(MachineCpu {
                user_s: machine_user_s,
                steal_s,
            }),
        }
    }

    #[test]
    fn the_others_share_is_the_machines_user_time_less_the_processs() {
        let cpu = CpuResult::between(reading(10.0, 1000.0, 7.0), reading(10.5, 1002.0, 7.25));
        assert_eq!((cpu.user_s, cpu.system_s), (0.5, 0.25));
        assert_eq!(cpu.others_user_s, Some(1.5));
        assert_eq!(cpu.steal_s, Some(0.25));
        // The machine's ticks lag the process's exact time: never below zero.
        let cpu = CpuResult::between(reading(10.0, 1000.0, 7.0), reading(10.5, 1000.49, 7.0));
        assert_eq!(cpu.others_user_s, Some(0.0));
        // Without the machine's times at both ends there is no share to give.
        let mut after = reading(10.5, 1002.0, 7.25);
        after.machine = None;
        let cpu = CpuResult::between(reading(10.0, 1000.0, 7.0), after);
        assert_eq!((cpu.others_user_s, cpu.steal_s), (None, None));
        assert_eq!(cpu.user_s, 0.5);
    }

    #[test]
    fn repeats_add_the_others_share_only_where_every_run_has_it() {
        let a = CpuResult {
            user_s: 1.0,
            system_s: 2.0,
            others_user_s: Some(0.5),
            steal_s: Some(0.1),
        };
        let both = CpuResult::sum([&a, &a]);
        assert_eq!((both.user_s, both.others_user_s), (2.0, Some(1.0)));
        let imported = CpuResult {
            user_s: 1.0,
            ..CpuResult::default()
        };
        let mixed = CpuResult::sum([&a, &imported]);
        assert_eq!(
            (mixed.user_s, mixed.others_user_s, mixed.steal_s),
            (2.0, None, None)
        );
    }

    #[test]
    fn a_busy_machine_is_judged_over_a_long_enough_window_only() {
        let cpu = CpuResult {
            others_user_s: Some(0.3),
            steal_s: Some(0.0),
            ..CpuResult::default()
        };
        assert_eq!(cpu.busy_machine(2.0), Some((0.15, 0.0)));
        assert_eq!(cpu.busy_machine(4.0), None, "0.075 CPUs is quiet enough");
        assert_eq!(
            cpu.busy_machine(0.5),
            None,
            "half a second is mostly tick rounding"
        );
    }
    use crate::job::Direction;
    use crate::stats::RunStats;

    #[test]
    fn slow_io_counts_are_exact_and_old_results_still_load() {
        let mut s = RunStats::new(1_000_000_000);
        for ns in [1_000, 10_013_000, 10_020_000, 100_100_000] {
            s.record(Direction::Read, 4096, ns, 0);
        }
        s.record(Direction::Write, 4096, 10_000_000, 0);
        let spec: crate::job::JobSpec = toml::from_str("access = \"randrw\"").unwrap();
        let j = JobResult {
            name: "j".into(),
            measured_ns: 1_000_000_000,
            read: s.direction_summary(Direction::Read, 1_000_000_000),
            write: s.direction_summary(Direction::Write, 1_000_000_000),
            ..JobResult::unmeasured(spec.validate().unwrap())
        };
        assert_eq!((j.ios_over_10ms(), j.ios_over_100ms()), (3, 1));
        // A result written before the counts were kept has no such fields: it loads, says
        // null, and the figures fall back to the histogram (10.013 and 10.02 ms not over 10 ms,
        // 100.1 ms not over 100 ms).
        let mut old = serde_json::to_value(&j).unwrap();
        for dir in ["read", "write"] {
            let d = old[dir].as_object_mut().unwrap();
            d.remove("ios_over_10ms").unwrap();
            d.remove("ios_over_100ms").unwrap();
        }
        let old: JobResult = serde_json::from_value(old).unwrap();
        assert_eq!(old.read.ios_over_10ms, None);
        assert_eq!((old.ios_over_10ms(), old.ios_over_100ms()), (1, 0));
    }
}
