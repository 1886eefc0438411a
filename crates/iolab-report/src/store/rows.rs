//! What the store's queries return.

use super::*;

/// A run as the list shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Row id: the run's number.
    pub id: i64,
    /// The run's key (16 hex digits).
    pub key: String,
    /// `run`, `quick`, `suite:NAME`, `replay`.
    pub kind: String,
    /// Start, Unix seconds.
    pub started_unix_s: f64,
    /// When it was recorded, Unix seconds.
    pub finished_unix_s: f64,
    /// All jobs finished.
    pub complete: bool,
    /// Why not, if not.
    pub incomplete_reason: Option<String>,
    /// Tool version that ran it.
    pub tool_version: String,
    /// The tool that ran it: `iolab`, or `fio` for fio's output imported.
    pub tool_name: String,
    /// Host name.
    pub hostname: String,
    /// Kernel release.
    pub kernel: String,
    /// Target path or `sim:` name.
    pub target_path: String,
    /// Target kind (`file`, `block`, `sim`).
    pub target_kind: String,
    /// Whether the target was a model.
    pub modelled: bool,
    /// Jobs recorded.
    pub jobs: u32,
    /// Suite name, for suite runs.
    pub suite_name: Option<String>,
    /// Suite scale, for suite runs.
    pub suite_scale: Option<f64>,
}

/// Which runs to list.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    /// Kind, exactly or as the part before `:` (`suite` matches `suite:cdm`).
    pub kind: Option<String>,
    /// A part of the target's path.
    pub target: Option<String>,
    /// At most this many (newest first).
    pub limit: Option<u32>,
}

/// The target of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTarget {
    /// Path or `sim:` name.
    pub path: String,
    /// `file`, `block`, `sim`, `null`.
    pub kind: String,
    /// Engine used.
    pub engine: String,
    /// True for a model.
    pub modelled: bool,
    /// The model's parameters (JSON), when modelled.
    pub model_json: Option<String>,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// Logical block size.
    pub logical_block_bytes: u64,
    /// The probe's one-line path summary.
    pub path_summary: Option<String>,
    /// The path's ceiling, bytes/s.
    pub path_ceiling_bytes_per_s: Option<f64>,
}

/// One metric of one step (core's: the store keeps what core names).
pub use iolab_core::metrics::Metric as StoredMetric;

/// One job of a run with its metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredStep {
    /// Position in the run, from 0.
    pub job_index: u32,
    /// The job's name.
    pub label: String,
    /// Suite phase.
    pub phase: Option<String>,
    /// Suite step.
    pub step: Option<String>,
    /// Suite chart.
    pub chart: Option<String>,
    /// Swept keys and values.
    pub sweep: Vec<SweepValue>,
    /// Steady-state round.
    pub round: Option<u32>,
    /// Whether the job finished.
    pub complete: bool,
    /// Why not.
    pub stop_reason: Option<String>,
    /// Measured time.
    pub measured_ns: u64,
    /// The job as run (`None` if this iolab cannot read how an other version stored it).
    pub job: Option<Job>,
    /// Its metrics, in [`metric_order`].
    pub metrics: Vec<StoredMetric>,
}

/// A score of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredScore {
    /// Name.
    pub name: String,
    /// Value.
    pub value: f64,
    /// Unit.
    pub unit: String,
    /// Standard deviation, where the rule gives one.
    pub stddev: Option<f64>,
    /// How it was computed.
    pub rule: String,
}

/// Everything `show` tells about a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunDetail {
    /// The list row.
    pub summary: RunSummary,
    /// CPU model of the host.
    pub cpu_model: String,
    /// The target.
    pub target: StoredTarget,
    /// The jobs.
    pub steps: Vec<StoredStep>,
    /// Scores.
    pub scores: Vec<StoredScore>,
    /// The run's notes.
    pub notes: Vec<String>,
    /// Steady-state verdicts of a suite's looped steps (SNIA PTS), from the saved result.
    pub steady_state: Vec<SteadyStateReport>,
    /// A model's own account of each job, by job index (watts, bottleneck, write
    /// amplification), as the live table and `iolab report` give it; `None` for a job it has
    /// none for, and empty for a run on a real target.
    pub model_lines: Vec<Option<String>>,
}

/// One row of a comparison: a job's metric (or a score) across runs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ComparedRow {
    /// Job label (with its round or occurrence when it repeats), or `score`.
    pub label: String,
    /// Metric name, or score name with its unit.
    pub metric: String,
    /// One value per compared run (or side: the mean of its runs); `None` where it lacks it.
    pub values: Vec<Option<f64>>,
    /// Per column, the spread of the value over repeats, where there were some: several runs
    /// of the side, or the counted runs one run combines (quick). Empty or `None`: no repeats.
    pub spread: Vec<Option<Spread>>,
    /// Per column, for a latency percentile or maximum, how many I/Os lie beyond it (the
    /// job's I/Os of that direction × the share above the percentile): a tail of a few I/Os
    /// moves by chance. Empty or `None`: not a tail figure, or not known.
    pub tail_ios: Vec<Option<f64>>,
}

/// How far one figure ranged over repeated measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// How many measurements.
    pub n: usize,
}

/// Runs side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The runs, in the order asked (with sides of several runs: each side's first).
    pub runs: Vec<RunSummary>,
    /// Where a column is a side of several runs, all of them per column (else empty).
    pub sides: Vec<Vec<RunSummary>>,
    /// Rows in first-seen order.
    pub rows: Vec<ComparedRow>,
    /// Job labels that name different workloads in different runs (access, block sizes,
    /// depth, threads, read share), with each run's workload (`None` where it lacks the job).
    pub differing: Vec<(String, Vec<Option<String>>)>,
}

/// What an insert produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The run's number.
    pub id: i64,
    /// The run's key.
    pub key: String,
}
