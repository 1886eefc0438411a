//! A job: one workload, as a user writes it in TOML or on the command line ([`JobSpec`]), and as
//! the engine runs it once validated ([`Job`]).
//!
//! Parsing and validation are separate stages (ripgrep's LowArgs → HiArgs): [`JobSpec`] holds
//! only what the user said; [`JobSpec::validate`] checks every cross-field rule and returns a
//! [`Job`] whose fields are all resolved, or one [`JobError`] naming the key and the fix.

use crate::size::{format_size, ByteSize};
use crate::skew::Distribution;
use serde::{Deserialize, Serialize};

mod bssplit;
mod display;
mod kinds;
mod layout;
mod overlay;
mod share;
mod validate;

pub use bssplit::{parse_bssplit, parse_bssplit_rw, SizeShare, Split};
pub use kinds::{Access, DataKind, Direction, TrimKind, VerifyMode};
use share::gcd;
pub use share::{byte_share, byte_share_start};

/// The longest ramp or duration a job may ask for (about three years): nanosecond clocks
/// overflow past 584 years, and nothing runs that long.
pub const MAX_SECONDS: f64 = 1e8;

/// The slowest `rate_iops` a job may ask for: one I/O per hour.
pub const MIN_RATE_IOPS: f64 = 1.0 / 3600.0;

/// A job as written by the user: every field optional except what has no sane default.
///
/// Unknown keys are rejected (`deny_unknown_fields`): a typo must not silently run another test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Name shown in results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Target path (file, block device, or `sim:DRIVE@PLATFORM`); may also come from the CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Access pattern (default `randread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// Percent of I/Os that are reads, for `rw`/`randrw` (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pct: Option<f64>,
    /// Percent of I/Os at random offsets; the others continue where the previous I/O ended
    /// (Iometer's "% random"). Default: 100 for the random patterns, 0 for the sequential ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_pct: Option<f64>,
    /// One block size (default 4k).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<ByteSize>,
    /// A weighted split of block sizes, fio's bssplit form `512/10:4k/60:64k/30`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<String>,
    /// I/Os kept in flight per thread (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    /// Worker threads, each with its own queue (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Start of the span in the target (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<ByteSize>,
    /// Length of the span (default: the whole target; required for a file that does not exist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<ByteSize>,
    /// Give each thread its own non-overlapping zone of the span (X-bit's multithreaded test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<bool>,
    /// Measured time in seconds (after ramp). Without it, the job ends after its byte/I/O limit,
    /// or after one pass over the span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// Seconds run before measuring starts; their I/Os are excluded from results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_s: Option<f64>,
    /// Stop after this many bytes in total (all threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limit: Option<ByteSize>,
    /// Stop after this many I/Os in total (all threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios_limit: Option<u64>,
    /// Bypass the page cache with O_DIRECT (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
    /// Content of written data (default `random`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataKind>,
    /// Bytes every written block repeats from its start instead of `data`, in hex (`0xaa55`) or
    /// quoted text (fio's `verify_pattern`); verify stamps sit on top as usual.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Percent of each written block that compresses away (0–100), on top of `data = "random"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_pct: Option<f64>,
    /// Percent of written blocks that repeat an earlier block (0–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_pct: Option<f64>,
    /// Cap on I/Os per second for the whole job; latency then counts from each I/O's intended
    /// start, so a stalled device is not hidden (no coordinated omission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// Cap on bytes per second for the whole job (same latency rule as `rate_iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<ByteSize>,
    /// Seed of every random choice (default 1): same seed, same offsets, same bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Count I/O errors and go on instead of stopping the job (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_on_error: Option<bool>,
    /// A timed or budget-limited random job visits every block of its span once before any
    /// block again, in an order chosen by the seed, as fio's random map does (default false:
    /// offsets drawn with replacement, Iometer's way). One-pass jobs always do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_map: Option<bool>,
    /// A timed job counts the I/Os still in flight at its end as they complete, over the time
    /// up to the last of them, as fio does (default false: those that complete within the
    /// duration, over the duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_end: Option<bool>,
    /// Stamp every written block and check it read back: `end` (after the job's I/O), `inline`
    /// (after each write) or `off` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyMode>,
    /// How random offsets spread over the span: `random` (uniform, the default), `zipf:THETA`,
    /// `pareto:H`, `normal:SIGMA%`, `zoned:ACCESS%/SPAN%:…`, `zoned_abs:ACCESS%/SIZE:…`
    /// (fio's `random_distribution`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// Seconds to wait before the job starts (fio's `startdelay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay_s: Option<f64>,
    /// Paced I/Os (`rate_iops`, `rate_bytes_per_s`) arrive as a Poisson process, at random
    /// exponential gaps of the rate's mean, instead of evenly spaced (fio's
    /// `rate_process=poisson`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_poisson: Option<bool>,
    /// Bytes added after each sequential I/O (fio's `rw=read:8k`): holes between I/Os, or with
    /// a negative value a walk backwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_skip: Option<i64>,
    /// I/Os per random jump (fio's `rw=randread:N`): each random offset is followed by N − 1
    /// I/Os that continue sequentially from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_run: Option<u32>,
    /// Random offsets are multiples of this (fio's `blockalign`; default: the smallest block
    /// size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_align: Option<ByteSize>,
    /// Strided access (fio's `zonemode=strided`): after this many bytes in one window of the
    /// span the job moves to the next window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_io: Option<ByteSize>,
    /// The window's length (fio's `zonerange`; default `stride_io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_range: Option<ByteSize>,
    /// Bytes skipped between one window's end and the next one's start (fio's `zoneskip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_skip: Option<ByteSize>,

    /// Starts at the same time as the job before it in the file, instead of after it ends
    /// (fio's jobs without `stonewall`); default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<bool>,
    /// Starts once the job of this name (one before it) has ended (fio's `wait_for`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// The job's reporting group (fio's groups: `new_group`, `stonewall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// The jobs of the group are reported as one result (fio's `group_reporting`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_reporting: Option<bool>,
    /// When the job ends it stops `group` (the jobs of its group), `running` (every job then
    /// running) or `all` (also the jobs not started yet) — fio's `exitall`/`exit_what`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_others: Option<crate::schedule::EndsOthers>,
    /// Pause, in seconds, after every `think_blocks` I/Os of a thread (fio's `thinktime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_s: Option<f64>,
    /// I/Os between pauses (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_blocks: Option<u32>,
    /// The first part of a pause spent busy on the CPU instead of asleep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_spin_s: Option<f64>,
    /// `complete` (default) or `issue`: which I/Os count towards `think_blocks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_after: Option<crate::schedule::ThinkAfter>,
    /// Weight in a flow: jobs of one `flow_id` that run together issue I/Os in proportion to
    /// their weights (fio's `flow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<u32>,
    /// The flow the job belongs to (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<u32>,
    /// Seconds a job ahead of its share of the flow waits before it looks again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sleep_s: Option<f64>,
    /// NUMA nodes whose CPUs the job's threads run on: `0`, `0-1` (fio's `numa_cpu_nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_nodes: Option<String>,
    /// CPUs the job's threads run on: `1`, `0-3,6` (fio's `cpus_allowed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// How the job's threads share `cpus`: `shared`, each on any of them (the default), or
    /// `split`, thread i on the i-th CPU of the list, round robin (fio's `cpus_allowed_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_policy: Option<String>,
    /// Where the job's buffers live: `local`, `prefer:N`, `bind:NODES`, `interleave:NODES`
    /// (fio's `numa_mem_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_policy: Option<String>,
    /// The engine this job runs on where it differs from the run's (`psync`, `io_uring`,
    /// `auto`): a fio file whose jobs name different `ioengine`s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// End the job early once its IOPS, bandwidth or latency is steady (fio's `steadystate`):
    /// `{ criterion = "iops:10%", window_s = 30, ramp_s = 10, interval_s = 1 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_stop: Option<crate::steady_stop::SteadyStop>,
    /// I/O priorities (fio's `prio`, `prioclass`, `cmdprio*`): a default class and level, and
    /// shares of reads and writes at others: `{ class = "idle", read = "64k/25/rt/1" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<crate::prio::IoPriority>,
    /// Find the deepest queue that meets a latency target (fio's `latency_target`): the
    /// depth is searched window by window up to `queue_depth`, and the job's figures are one
    /// last window at the depth found: `{ target_us = 500, window_s = 5, percentile = 99.9 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::lat_target::LatencyTarget>,
    /// Sync written data (fio's `fsync`, `fdatasync`, `end_fsync`):
    /// `{ every_writes = 32, data_only = true, at_end = true }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::sync::SyncPolicy>,
    /// Duplicates (`dedupe_pct`) repeat blocks of a fixed working set of this share of the
    /// span, one per thread or, `global`, one for all (fio's `dedupe_mode=working_set`,
    /// `dedupe_global`): `{ share_pct = 5, global = true }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_set: Option<crate::data::DedupeSet>,
    /// SPRandom preconditioning (fio's `sprandom`): one pass of random writes over the span
    /// plus `op` of it, ordered to leave each of `regions` parts with the steady-state share
    /// of overwritten blocks: `{ op = 0.15, regions = 100 }`. Single-thread `randwrite` jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<crate::sprandom::SpRandom>,
    /// Thread `i` works in a span of `size` of its own that starts `i` times this many bytes
    /// after `offset` (fio's `offset_increment`); the spans may leave gaps or overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_offset: Option<ByteSize>,
    /// Zones with write pointers, emulated on any target (fio's `zonemode=zbd`): writes only
    /// at a zone's write pointer, reads only below it: `{ zone_size = "256m", max_open = 32 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<crate::zbd::Zoned>,
}

/// A validated job with every default resolved. Sizes that depend on the target (`span_bytes`
/// when `size` was not given) are resolved by [`Job::resolve_span`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Name shown in results.
    pub name: String,
    /// Access pattern.
    pub access: Access,
    /// Percent of I/Os that are reads (0–100).
    pub read_pct: f64,
    /// Percent of I/Os at random offsets (0–100).
    pub random_pct: f64,
    /// Block sizes and their normalised weights (sum 1.0); the reads' where the writes have
    /// their own.
    pub block_sizes: Vec<SizeShare>,
    /// The writes' block sizes where they differ from the reads' (fio's `READ,WRITE` split);
    /// empty where writes use `block_sizes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_block_sizes: Vec<SizeShare>,
    /// I/Os in flight per thread.
    pub queue_depth: u32,
    /// Worker threads.
    pub threads: u32,
    /// Start of the span.
    pub offset_bytes: u64,
    /// Length of the span; `None` until resolved against the target.
    pub span_bytes: Option<u64>,
    /// Threads work in separate zones.
    pub zones: bool,
    /// Measured seconds after ramp.
    pub duration_s: Option<f64>,
    /// Ramp seconds excluded from results.
    pub ramp_s: f64,
    /// Byte limit (all threads).
    pub io_limit_bytes: Option<u64>,
    /// I/O count limit (all threads).
    pub ios_limit: Option<u64>,
    /// O_DIRECT.
    pub direct: bool,
    /// Written content.
    pub data: DataKind,
    /// Bytes every written block repeats instead of `data`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Vec<u8>>,
    /// Percent of each block that compresses away.
    pub compress_pct: f64,
    /// Percent of blocks that repeat an earlier one.
    pub dedupe_pct: f64,
    /// I/O rate cap for the job.
    pub rate_iops: Option<f64>,
    /// Byte rate cap for the job.
    pub rate_bytes_per_s: Option<u64>,
    /// Seed.
    pub seed: u64,
    /// Continue on I/O errors.
    pub continue_on_error: bool,
    /// Random offsets without repeats until every block was visited (fio's random map), also
    /// for timed and budget-limited jobs. Left out of a result where false, as results written
    /// before the key existed read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_map: bool,
    /// Count the I/Os in flight at a timed job's end as they complete (fio's way). Left out of
    /// a result where false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drain_end: bool,
    /// Whether written blocks are stamped and checked. Left out of a result where off, as
    /// results written before the key existed read.
    #[serde(default, skip_serializing_if = "VerifyMode::is_off")]
    pub verify: VerifyMode,
    /// How random offsets spread over the span (uniform unless the job says).
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub distribution: Distribution,
    /// Seconds waited before the job starts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_delay_s: f64,
    /// Paced I/Os arrive at random exponential gaps (a Poisson process).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_poisson: bool,
    /// Bytes added after each sequential I/O (negative: backwards).
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub seq_skip: i64,
    /// I/Os per random jump (1: every random I/O jumps).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub random_run: u32,
    /// Strided access, if the job asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<Stride>,
    /// Random offsets are multiples of this; 0: of the smallest block size.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub block_align: u64,
    /// When it runs beside other jobs, and how it is paced from within.
    #[serde(default, skip_serializing_if = "crate::schedule::Schedule::is_default")]
    pub schedule: crate::schedule::Schedule,
    /// Ends the job once steady, if the job asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_stop: Option<crate::steady_stop::SteadyStop>,
    /// I/O priorities, if the job sets any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<crate::prio::IoPriority>,
    /// The latency target whose deepest queue the job searches, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::lat_target::LatencyTarget>,
    /// Syncs of written data, if the job asks for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::sync::SyncPolicy>,
    /// The working set duplicates come from, if the job gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_set: Option<crate::data::DedupeSet>,
    /// SPRandom preconditioning, if the job asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprandom: Option<crate::sprandom::SpRandom>,
    /// Bytes between one thread's span start and the next one's; 0: the threads share a span.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub thread_offset: u64,
    /// Emulated zones with write pointers, if the job asks for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<crate::zbd::Zoned>,
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

/// Strided access: `io_bytes` in one window of `range_bytes`, then the next window, which
/// starts `skip_bytes` after this one ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stride {
    /// Bytes transferred in a window before moving on.
    pub io_bytes: u64,
    /// A window's length.
    pub range_bytes: u64,
    /// The gap between windows.
    pub skip_bytes: u64,
}

fn is_zero_i64(x: &i64) -> bool {
    *x == 0
}

fn one() -> u32 {
    1
}

fn is_one(x: &u32) -> bool {
    *x == 1
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A job that cannot run, with the key at fault and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("job '{job}': {key}: {message}")]
pub struct JobError {
    /// Job name.
    pub job: String,
    /// The offending key, as written in a job file.
    pub key: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// What a refusal of a block size that O_DIRECT cannot issue may suggest: buffered I/O, under
/// the name the user can set it by, or nothing where the target cannot take it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferedHint {
    /// A job or suite file's key: `direct = false`.
    #[default]
    Key,
    /// `iolab run`, which takes a job file and flags: `direct = false (--buffered)`.
    KeyAndFlag,
    /// Nothing: the target is a model, which has no page cache and refuses buffered I/O.
    Refused,
}

impl BufferedHint {
    /// The fix for a size that is not a multiple of `multiple` bytes.
    fn fix(self, multiple: u64) -> String {
        match self {
            BufferedHint::Key => {
                format!("use a multiple of {multiple} or set direct = false (buffered I/O)")
            }
            BufferedHint::KeyAndFlag => {
                format!("use a multiple of {multiple} or buffered I/O: direct = false (--buffered)")
            }
            BufferedHint::Refused => format!(
                "use a multiple of {multiple} (a model has no page cache, so its I/O is always \
                 direct)"
            ),
        }
    }
}

/// The sector size O_DIRECT needs at the least; a target with larger logical blocks is checked
/// again when it is opened ([`Job::check_alignment`]).
pub const MIN_DIRECT_ALIGN: u64 = 512;

impl JobSpec {
    /// Parses a job from TOML text, naming `origin` (a file path) in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<JobSpec, String> {
        toml::from_str(text).map_err(|e| format!("{origin}: {e}"))
    }

    /// When `bssplit`'s weights do not add up to 100: what they are taken as, for a warning.
    /// They are normalised (as fio does, and as documented), but a split that adds up to 80
    /// or 120 is as likely a typo as a choice, so the shares used are said.
    pub fn bssplit_note(&self) -> Option<String> {
        let split = parse_bssplit(self.bssplit.as_deref()?).ok()?;
        let total: f64 = split.iter().map(|s| s.weight).sum();
        if !(total.is_finite() && total > 0.0) || (total - 100.0).abs() < 1e-9 {
            return None;
        }
        let pct = |v: f64| {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        let used = split
            .iter()
            .filter(|s| s.weight > 0.0)
            .map(|s| format!("{}/{}", format_size(s.bytes), pct(s.weight / total * 100.0)))
            .collect::<Vec<_>>()
            .join(":");
        Some(format!(
            "bssplit {}: the weights add up to {}, not 100, so they are taken as shares of it: \
             {used}",
            self.bssplit.as_deref().unwrap_or_default(),
            pct(total)
        ))
    }

    /// Checks every rule and resolves defaults.
    pub fn validate(&self) -> Result<Job, JobError> {
        self.validate_with(BufferedHint::Key)
    }

    /// [`JobSpec::validate`], suggesting buffered I/O for an unaligned block size as `hint`
    /// says (under the name the command takes it by; not at all on a model).
    pub fn validate_with(&self, hint: BufferedHint) -> Result<Job, JobError> {
        validate::validate(self, hint)
    }
}

impl Job {
    /// What random offsets are multiples of: `block_align`, else the smallest block size.
    pub fn align(&self) -> u64 {
        if self.block_align > 0 {
            return self.block_align;
        }
        self.all_block_sizes()
            .map(|s| s.bytes)
            .min()
            .unwrap_or(4096)
    }

    /// Every block size of the job: the reads' and the writes' own, if any.
    pub fn all_block_sizes(&self) -> impl Iterator<Item = &SizeShare> {
        self.block_sizes.iter().chain(&self.write_block_sizes)
    }

    /// The largest block size of the job.
    pub fn max_block(&self) -> u64 {
        self.all_block_sizes()
            .map(|s| s.bytes)
            .max()
            .unwrap_or(4096)
    }

    /// The largest size every block size is a multiple of: byte budgets, and the threads'
    /// shares of a span, are cut in it.
    pub fn granule(&self) -> u64 {
        self.all_block_sizes()
            .fold(0, |g, s| gcd(g, s.bytes))
            .max(1)
    }

    /// The smallest size that is a multiple of every block size (the largest one where, as
    /// usual, they are powers of two): zones start on it, so every block a thread issues
    /// from its zone's start is aligned as it would be from the span's.
    fn zone_granule(&self) -> u64 {
        self.all_block_sizes()
            .try_fold(MIN_DIRECT_ALIGN, |l, s| {
                (l / gcd(l, s.bytes)).checked_mul(s.bytes)
            })
            .unwrap_or_else(|| self.max_block())
    }

    /// Each thread's zone: an equal share of the span in whole [`Job::zone_granule`]s (the
    /// last zone also takes what is left).
    fn zone_bytes(&self) -> u64 {
        let g = self.zone_granule();
        self.span() / self.threads.max(1) as u64 / g * g
    }

    /// Whether each thread works in a range of its own (zones, or spans `thread_offset`
    /// apart) rather than all in the job's span.
    pub fn separate_ranges(&self) -> bool {
        self.zones || (self.thread_offset > 0 && self.threads > 1)
    }

    /// Whether the job ends after one pass over its span: no duration and no budget.
    pub fn one_pass(&self) -> bool {
        self.duration_s.is_none() && self.ios_limit.is_none() && self.io_limit_bytes.is_none()
    }

    /// Whether the job writes at all.
    pub fn writes(&self) -> bool {
        self.read_pct < 100.0
    }

    /// Whether the job reads at all.
    pub fn reads(&self) -> bool {
        self.read_pct > 0.0
    }

    /// The span in bytes; zero until resolved.
    pub fn span(&self) -> u64 {
        self.span_bytes.unwrap_or(0)
    }

    fn error(&self, key: &'static str, message: String) -> JobError {
        JobError {
            job: self.name.clone(),
            key,
            message,
        }
    }

    /// Sets the span and checks it against the block sizes and zones.
    pub fn set_span(&mut self, span: u64) -> Result<(), JobError> {
        let max_block = self.max_block();
        if span < max_block {
            return Err(self.error(
                "size",
                format!(
                    "the span of {} is smaller than one block of {}; make size (--size) at least \
                     the block size",
                    format_size(span),
                    format_size(max_block)
                ),
            ));
        }
        if self.zones {
            let g = self.zone_granule();
            let zone = span / self.threads as u64 / g * g;
            if zone < max_block {
                return Err(self.error(
                    "zones",
                    format!(
                        "{} threads split {} into zones of {} bytes, smaller than one block of {}; \
                         use fewer threads or a larger size",
                        self.threads,
                        format_size(span),
                        zone,
                        format_size(max_block)
                    ),
                ));
            }
        }
        self.span_bytes = Some(span);
        if let Some(spr) = &self.sprandom {
            // The pass's writes are its budget: it ends when its order does.
            let bs = self.align();
            let writes =
                crate::sprandom::SpRandomOrder::new(spr, span / bs, bs, self.seed).total_writes();
            let pass = writes * bs;
            self.io_limit_bytes = Some(self.io_limit_bytes.map_or(pass, |b| b.min(pass)));
        }
        Ok(())
    }

    /// Resolves the span against a target of `target_bytes`: the default span is everything
    /// from `offset` to the end; a span past the end is an error.
    pub fn resolve_span(&mut self, target_bytes: u64) -> Result<(), JobError> {
        if self.thread_offset > 0 && self.threads > 1 {
            return self.resolve_thread_spans(target_bytes);
        }
        if self.offset_bytes >= target_bytes {
            return Err(self.error(
                "offset",
                format!(
                    "{} is at or past the end of the target ({} bytes); lower offset (--offset)",
                    self.offset_bytes, target_bytes
                ),
            ));
        }
        match self.span_bytes {
            Some(span) if self.offset_bytes.saturating_add(span) > target_bytes => {
                let room = target_bytes - self.offset_bytes;
                let message = if self.offset_bytes == 0 {
                    format!(
                        "size {} runs past the end of the target ({target_bytes} bytes); make \
                         size (--size) at most {}",
                        format_size(span),
                        format_size(room)
                    )
                } else {
                    format!(
                        "offset {} + size {} runs past the end of the target ({target_bytes} \
                         bytes); make size (--size) at most {} or lower offset (--offset)",
                        format_size(self.offset_bytes),
                        format_size(span),
                        format_size(room)
                    )
                };
                Err(self.error("size", message))
            }
            Some(_) => Ok(()),
            None => {
                let room = target_bytes - self.offset_bytes;
                let span = room - room % MIN_DIRECT_ALIGN;
                let max_block = self.max_block();
                if span < max_block {
                    // No size was given: the target's own size is what is too small, and
                    // "make size at least the block size" would point at a file to grow.
                    let from = if self.offset_bytes == 0 {
                        String::new()
                    } else {
                        format!(" past offset {}", format_size(self.offset_bytes))
                    };
                    return Err(self.error(
                        "size",
                        format!(
                            "the target holds {room} bytes{from}, less than one block of {};                              use a smaller block size (--bs) or a larger target",
                            format_size(max_block)
                        ),
                    ));
                }
                self.set_span(span)
            }
        }
    }

    /// Checks sizes and offsets against the target's logical block size (O_DIRECT only).
    pub fn check_alignment(&self, logical_block: u64) -> Result<(), JobError> {
        self.check_alignment_with(logical_block, BufferedHint::Key)
    }

    /// [`Job::check_alignment`], suggesting buffered I/O as `hint` says.
    pub fn check_alignment_with(
        &self,
        logical_block: u64,
        hint: BufferedHint,
    ) -> Result<(), JobError> {
        if !self.direct || logical_block <= 1 {
            return Ok(());
        }
        let key = if self.block_sizes.len() > 1 || !self.write_block_sizes.is_empty() {
            "bssplit"
        } else {
            "block_size"
        };
        if let Some(bad) = self
            .all_block_sizes()
            .find(|s| s.bytes % logical_block != 0)
        {
            return Err(self.error(
                key,
                format!(
                    "{} bytes is not a multiple of the target's {logical_block}-byte logical block, \
                     which O_DIRECT needs; {}",
                    bad.bytes,
                    hint.fix(logical_block)
                ),
            ));
        }
        if self.block_align % logical_block != 0 {
            return Err(self.error(
                "block_align",
                format!(
                    "{} is not a multiple of the target's {logical_block}-byte logical block",
                    self.block_align
                ),
            ));
        }
        if self.offset_bytes % logical_block != 0 {
            return Err(self.error(
                "offset",
                format!(
                    "{} is not a multiple of the target's {logical_block}-byte logical block",
                    self.offset_bytes
                ),
            ));
        }
        Ok(())
    }

    /// The byte range `[start, end)` worker `index` of `threads` works in: the span, or with
    /// zones the thread's own, the last one reaching the span's end so every byte is in one.
    pub fn worker_range(&self, index: u32) -> (u64, u64) {
        let span = self.span();
        let start = self.offset_bytes;
        if self.thread_offset > 0 {
            let own = start + self.thread_offset * u64::from(index);
            return (own, own + span);
        }
        if !self.zones {
            return (start, start + span);
        }
        let zone = self.zone_bytes();
        let zs = start + zone * index as u64;
        if index + 1 >= self.threads {
            (zs, start + span)
        } else {
            (zs, zs + zone)
        }
    }
}

#[cfg(test)]
mod tests;
