//! A suite as written in TOML, and its validation.
//!
//! ```toml
//! name = "example"
//! title = "An example"
//! source = "where the parameters come from"
//! [job]                      # defaults for every step's job (any job key)
//! data = "random"
//!
//! [[phase]]
//! name = "fill"
//! prepare = { fill_passes = 1 }        # also: purge = true, idle_s = 5, fill_block_size = "128k"
//!
//! [[phase]]
//! name = "random read"
//! [[phase.step]]
//! name = "Random read 4K"
//! chart = "qd-lines"
//! job = { access = "randread", block_size = "4k", duration_s = 180 }
//! sweep = [{ key = "queue_depth", values = [1, 2, 4, 8, 16, 32] }]
//!
//! [[score]]
//! name = "Random read, mean of QD1–4"
//! rule = "mean"
//! step = "Random read 4K"
//! metric = "read_mb_per_s"
//! where = [{ key = "queue_depth", values = [1, 2, 4] }]
//! ```
//!
//! Several sweep entries form a nested product, the first entry outermost. A step with
//! `steady_state` runs its whole sweep once per round until the tracked job's metric is steady
//! by the SNIA rule, or the round cap is reached.

use iolab_core::job::{BufferedHint, JobSpec};
use iolab_core::result::{JobResult, SweepValue};
use iolab_core::size::{format_size, parse_size};
use serde::Deserialize;

mod validate;

/// A whole suite.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSpec {
    /// Short name (`anandtech2015`).
    pub name: String,
    /// Title for reports.
    pub title: String,
    /// Where the parameters come from.
    #[serde(default)]
    pub source: String,
    /// Job keys shared by every step (a step's own keys win).
    #[serde(default)]
    pub job: JobSpec,
    /// Phases, run in order.
    #[serde(rename = "phase")]
    pub phases: Vec<PhaseSpec>,
    /// Scores computed at the end.
    #[serde(default, rename = "score")]
    pub scores: Vec<ScoreSpec>,
    /// Where the suite came from (its file, or `built-in NAME`), so that what is found wrong
    /// after parsing (at a run's own scale) still names the file. Set by [`SuiteSpec::parse`].
    #[serde(skip)]
    pub origin: String,
    /// What a refused unaligned block size suggests: `direct = false`, or nothing on a model,
    /// which refuses buffered I/O. Set by [`SuiteSpec::parse_for`].
    #[serde(skip)]
    pub buffered_hint: BufferedHint,
}

/// A phase: optional preparation, then its steps.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Name.
    pub name: String,
    /// What to do to the target before the steps.
    #[serde(default)]
    pub prepare: Option<PrepareSpec>,
    /// The measurements; none only in a phase that prepares the next one's steps.
    #[serde(default, rename = "step")]
    pub steps: Vec<StepSpec>,
}

/// Preparation of the target.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrepareSpec {
    /// Return the span to "never written": discard on a device (only when destructive use was
    /// allowed for it), hole punching on a file.
    #[serde(default)]
    pub purge: bool,
    /// Sequential passes of incompressible writes over the whole span.
    #[serde(default)]
    pub fill_passes: u32,
    /// Block size of the fill (default 128k, as SNIA's WIPC).
    #[serde(default)]
    pub fill_block_size: Option<String>,
    /// Bytes the fill covers from the span's start (default: the suite's span, else the
    /// whole target): AS SSD writes its 1 GB test file, not the drive.
    #[serde(default)]
    pub fill_size: Option<String>,
    /// Seconds of idle time afterwards (scaled; finite, ≥ 0).
    #[serde(default)]
    pub idle_s: f64,
}

/// One step: a job, or a sweep of jobs, maybe looped to steady state.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Name (unique in the suite).
    pub name: String,
    /// How reports draw it (see [`iolab_core::result::StepInfo::chart`]).
    #[serde(default = "default_chart")]
    pub chart: String,
    /// The step's job keys (over the suite's `[job]`).
    #[serde(default)]
    pub job: JobSpec,
    /// Swept keys, outermost first.
    #[serde(default)]
    pub sweep: Vec<SweepSpec>,
    /// Loop the step in rounds until steady state.
    #[serde(default)]
    pub steady_state: Option<SteadySpec>,
    /// A file-set operation through the filesystem instead of a job (FC-Test); the target is
    /// then a directory.
    #[serde(default)]
    pub files: Option<FilesSpec>,
    /// Stop each job after this many times its span's bytes (SNIA WSAT's "4 × capacity");
    /// not scaled, since the span already is. Positive and finite.
    #[serde(default)]
    pub io_limit_spans: Option<f64>,
    /// The CrystalDiskMark test the step is (`SEQ1M Q8T1`): its jobs' results carry it (a
    /// [`iolab_core::quick::QuickTest`]), and reports show them in CrystalDiskMark's grid.
    #[serde(default)]
    pub cdm_test: Option<String>,
}

fn default_chart() -> String {
    "bars".into()
}

/// One swept key and its values.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// `queue_depth`, `threads`, `block_size` or `read_pct`.
    pub key: String,
    /// Values: numbers, or sizes (`"4k"`) for `block_size`.
    pub values: Vec<toml::Value>,
}

/// A file-set operation: `op` on `count` files of `file_size` in the set `set`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesSpec {
    /// Set name (a directory under the target).
    pub set: String,
    /// `create`, `read`, `copy-near` or `copy-far`.
    pub op: String,
    /// Files in the set.
    pub count: u32,
    /// Bytes per file (scaled, at least 4 KiB).
    pub file_size: String,
}

/// The steady-state loop of a step (SNIA PTS: window 5, cap 25).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadySpec {
    /// The tracking variable, a job metric (`write_iops`, `write_mb_per_s`, `write_lat_mean_us`).
    pub metric: String,
    /// Which job of a sweep is tracked: one value, one the sweep runs, of every swept key;
    /// empty only when the sweep runs a single job.
    #[serde(default)]
    pub track: Vec<SweepSpec>,
    /// Rounds in the window.
    #[serde(default = "default_window")]
    pub window: u32,
    /// Round cap.
    #[serde(default = "default_max_rounds")]
    pub max_rounds: u32,
}

fn default_window() -> u32 {
    5
}

fn default_max_rounds() -> u32 {
    25
}

/// A score rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreSpec {
    /// Name.
    pub name: String,
    /// `mean` (of a metric over a step's jobs, optionally filtered by `where`), `last_seconds`
    /// (mean and standard deviation of a step's per-second series over its last `seconds`),
    /// `weighted` (Σ weight × metric over `terms`, AS-SSD), `rating` (Σ metric / queue depth
    /// over a QD sweep, X-bit).
    pub rule: String,
    /// The step, for all rules but `weighted`.
    #[serde(default)]
    pub step: Option<String>,
    /// The metric (for `last_seconds`: `read_iops`, `write_iops`, `total_iops`,
    /// `read_mb_per_s`, `write_mb_per_s`, `total_mb_per_s`).
    #[serde(default)]
    pub metric: Option<String>,
    /// Filter on swept keys (`mean`, `rating`): keys the step sweeps, values it runs.
    #[serde(default, rename = "where")]
    pub filter: Vec<SweepSpec>,
    /// Seconds (`last_seconds`; scaled with the suite; at most what the step measures).
    #[serde(default)]
    pub seconds: Option<f64>,
    /// Terms (`weighted`).
    #[serde(default)]
    pub terms: Vec<TermSpec>,
    /// Unit shown (default: from the metric).
    #[serde(default)]
    pub unit: Option<String>,
}

/// One term of a weighted score.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermSpec {
    /// Step.
    pub step: String,
    /// Metric.
    pub metric: String,
    /// Weight.
    pub weight: f64,
    /// Filter on swept keys.
    #[serde(default, rename = "where")]
    pub filter: Vec<SweepSpec>,
}

/// A suite that cannot run: the file, the place and the fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {place}: {message}")]
pub struct SuiteError {
    /// File (or `built-in NAME`).
    pub origin: String,
    /// Where in it: `step 'Random read 4K', key sweep.key`.
    pub place: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// Why a suite's job may not carry its own `name`.
const NAMED_BY_STEP: &str =
    "a suite names each job by its step and sweep point; remove it, or rename the step";

/// The most sequential fill passes a phase may make.
pub const MAX_FILL_PASSES: u32 = 100;

/// The most rounds a steady-state loop may run.
pub const MAX_ROUNDS: u32 = 1000;

/// The longest `prepare.idle_s`: a day.
pub const MAX_IDLE_S: f64 = 86_400.0;

/// The keys a sweep may vary.
pub const SWEEP_KEYS: &[&str] = &["queue_depth", "threads", "block_size", "read_pct"];
/// The series metrics `last_seconds` accepts.
pub const SERIES_METRICS: &[&str] = &[
    "read_iops",
    "write_iops",
    "total_iops",
    "read_mb_per_s",
    "write_mb_per_s",
    "total_mb_per_s",
];
/// The score rules.
pub const RULES: &[&str] = &["mean", "last_seconds", "weighted", "rating"];
/// The charts reports draw (see [`iolab_core::result::StepInfo::chart`]); a step with any
/// other would get no chart at all.
pub const CHARTS: &[&str] = &[
    "qd-lines",
    "bs-lines",
    "mix-lines",
    "bars",
    "atto",
    "scatter",
    "heatmap",
    "table",
];

impl SweepSpec {
    /// The values as numbers (sizes in bytes), or why not. Queue depths and threads take whole
    /// numbers only and block sizes whole bytes or a size string: `1.9` was once run as 1.
    pub fn numbers(&self) -> Result<Vec<f64>, String> {
        if !SWEEP_KEYS.contains(&self.key.as_str()) {
            return Err(format!(
                "unknown sweep key '{}'; use one of {}",
                self.key,
                SWEEP_KEYS.join(", ")
            ));
        }
        if self.values.is_empty() {
            return Err(format!("sweep of '{}' has no values", self.key));
        }
        self.values.iter().map(|v| self.number(v)).collect()
    }

    fn number(&self, value: &toml::Value) -> Result<f64, String> {
        use toml::Value::{Float, Integer, String as Text};
        match (self.key.as_str(), value) {
            ("queue_depth" | "threads", Integer(i)) if (0..=i64::from(u32::MAX)).contains(i) => {
                Ok(*i as f64)
            }
            ("queue_depth" | "threads", other) => Err(format!(
                "{other} is not a value for {}: give a whole number such as 1, 4 or 32",
                self.key
            )),
            ("block_size", Integer(i)) if *i >= 0 => Ok(*i as f64),
            ("block_size", Text(s)) => parse_size(s).map(|b| b as f64).map_err(|e| e.to_string()),
            ("block_size", other) => Err(format!(
                "{other} is not a block size: give whole bytes (4096) or a size (\"4k\")"
            )),
            (_, Integer(i)) => Ok(*i as f64),
            (_, Float(f)) => Ok(*f),
            (key, other) => Err(format!("{other} is not a value for {key}: give a number")),
        }
    }
}

/// A swept value as a suite file would write it (`4k`, `32`).
pub fn show_value(key: &str, value: f64) -> String {
    if key == "block_size" {
        format_size(value as u64)
    } else {
        format!("{value}")
    }
}

impl SuiteSpec {
    /// Parses and validates a suite from TOML text; `origin` names it in errors. Every job the
    /// suite plans is checked here, so a bad value is refused before anything runs.
    pub fn parse(text: &str, origin: &str) -> Result<SuiteSpec, SuiteError> {
        SuiteSpec::parse_for(text, origin, BufferedHint::Key)
    }

    /// [`SuiteSpec::parse`], for a target whose refusals of an unaligned block size suggest
    /// what `hint` says (a model's suggest no buffered I/O).
    pub fn parse_for(
        text: &str,
        origin: &str,
        hint: BufferedHint,
    ) -> Result<SuiteSpec, SuiteError> {
        let mut spec: SuiteSpec = toml::from_str(text).map_err(|e| SuiteError {
            origin: origin.to_string(),
            place: "syntax".into(),
            message: e.to_string(),
        })?;
        spec.origin = origin.to_string();
        spec.buffered_hint = hint;
        spec.validate()?;
        Ok(spec)
    }

    /// Every step, with its phase.
    pub fn steps(&self) -> impl Iterator<Item = (&PhaseSpec, &StepSpec)> {
        self.phases
            .iter()
            .flat_map(|p| p.steps.iter().map(move |s| (p, s)))
    }

    /// An error in this suite at `place`.
    pub fn error(&self, place: impl Into<String>, message: impl Into<String>) -> SuiteError {
        SuiteError {
            origin: self.origin.clone(),
            place: place.into(),
            message: message.into(),
        }
    }

    /// Checks every job the suite would run at `scale` (each fill pass, each sweep point of
    /// each step) the way the executor will, naming the step and key of the first bad one.
    /// [`SuiteSpec::parse`] checks at scale 1; sizes and durations scale so that a job valid
    /// there stays valid, but a run at another scale checks again before it starts.
    pub fn check_plan(&self, scale: f64) -> Result<(), SuiteError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(self.error("scale", format!("{scale} must be a positive number")));
        }
        for phase in &self.phases {
            if let Some(prep) = &phase.prepare {
                if prep.fill_passes > 0 || prep.fill_block_size.is_some() {
                    let fill = crate::plan::fill_job(self, phase, 1, scale)?;
                    fill.validate_with(self.buffered_hint).map_err(|e| {
                        self.error(
                            format!("phase '{}', key prepare.fill_block_size", phase.name),
                            format!("the fill job: {}", e.message),
                        )
                    })?;
                }
            }
            for step in phase.steps.iter().filter(|s| s.files.is_none()) {
                self.check_step_jobs(step, scale)?;
            }
        }
        Ok(())
    }

    /// Checks every planned job of `step` at `scale`: a bad value of a swept key names the
    /// sweep and the point, any other the step's job key.
    fn check_step_jobs(&self, step: &StepSpec, scale: f64) -> Result<(), SuiteError> {
        for job in crate::plan::step_jobs(self, step, scale)? {
            if let Err(e) = job.spec.validate_with(self.buffered_hint) {
                let point = job.sweep.iter().find(|p| p.key == e.key);
                let (key, message) = match point {
                    Some(p) => (
                        format!("sweep.{}", e.key),
                        format!(
                            "{} (at the sweep point {} = {})",
                            e.message,
                            p.key,
                            show_value(&p.key, p.value)
                        ),
                    ),
                    None => (format!("job.{}", e.key), e.message),
                };
                return Err(self.error(format!("step '{}', key {key}", step.name), message));
            }
        }
        Ok(())
    }

    fn step_named(&self, name: &str) -> Option<&StepSpec> {
        self.steps().map(|(_, s)| s).find(|s| s.name == name)
    }
}
