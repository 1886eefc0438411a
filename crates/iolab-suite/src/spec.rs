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

/// The values a step's sweep offers for `key`, for errors (`1, 2, 4`).
fn offered(sweep: &SweepSpec) -> String {
    sweep
        .numbers()
        .unwrap_or_default()
        .iter()
        .map(|&v| show_value(&sweep.key, v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks that `filter` picks jobs of `step`'s sweep: every key swept (once), every value one
/// the sweep runs. A filter that picks nothing would drop its score silently.
fn check_filter(step: &StepSpec, filter: &[SweepSpec]) -> Result<(), String> {
    for (i, f) in filter.iter().enumerate() {
        let values = f.numbers()?;
        if filter[..i].iter().any(|g| g.key == f.key) {
            return Err(format!(
                "{} is given twice; give all its values in one entry",
                f.key
            ));
        }
        let Some(swept) = step.sweep.iter().find(|s| s.key == f.key) else {
            let swept: Vec<&str> = step.sweep.iter().map(|s| s.key.as_str()).collect();
            return Err(if swept.is_empty() {
                format!(
                    "step '{}' has no sweep, so nothing to pick by {}",
                    step.name, f.key
                )
            } else {
                format!(
                    "step '{}' does not sweep {}; it sweeps {}",
                    step.name,
                    f.key,
                    swept.join(", ")
                )
            });
        };
        let runs = swept.numbers()?;
        if let Some(v) = values
            .iter()
            .find(|v| !runs.iter().any(|r| (*r - **v).abs() < 1e-9))
        {
            return Err(format!(
                "step '{}' does not run {} = {}; its sweep offers {}",
                step.name,
                f.key,
                show_value(&f.key, *v),
                offered(swept)
            ));
        }
    }
    Ok(())
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

    fn validate(&self) -> Result<(), SuiteError> {
        if self.steps().next().is_none() {
            return Err(self.error(
                "key phase",
                "the suite has no steps; add a [[phase]] with a [[phase.step]]",
            ));
        }
        for phase in &self.phases {
            let place = |key: &str| format!("phase '{}', key {key}", phase.name);
            // A phase may only prepare (purge and fill before the next phase's steps), but
            // one that neither prepares nor measures is a mistake.
            let prepares = phase
                .prepare
                .as_ref()
                .is_some_and(|p| p.purge || p.fill_passes > 0 || p.idle_s != 0.0);
            if phase.steps.is_empty() && !prepares {
                return Err(self.error(
                    place("step"),
                    "this phase neither prepares nor has steps; add a [[phase.step]] or a \
                     prepare (purge, fill_passes, idle_s)",
                ));
            }
            if let Some(prep) = &phase.prepare {
                // Each pass writes the whole span: thousands are a typo the run never ends.
                if prep.fill_passes > MAX_FILL_PASSES {
                    return Err(self.error(
                        place("prepare.fill_passes"),
                        format!(
                            "{} passes; at most {MAX_FILL_PASSES} (SNIA PTS writes 2)",
                            prep.fill_passes
                        ),
                    ));
                }
                // At most a day: more is a typo, and a wait the run could never finish.
                if !(prep.idle_s.is_finite() && (0.0..=MAX_IDLE_S).contains(&prep.idle_s)) {
                    return Err(self.error(
                        place("prepare.idle_s"),
                        format!(
                            "{} must be zero or more seconds, at most {MAX_IDLE_S} (a day)",
                            prep.idle_s
                        ),
                    ));
                }
                if let Some(b) = &prep.fill_block_size {
                    parse_size(b)
                        .map_err(|e| self.error(place("prepare.fill_block_size"), e.to_string()))?;
                }
            }
        }
        if self.job.name.is_some() {
            return Err(self.error("key job.name", NAMED_BY_STEP));
        }
        let mut names: Vec<&str> = Vec::new();
        for (_, step) in self.steps() {
            // Its job takes its name, and results and reports tell jobs apart by name.
            if step.name.trim().is_empty() {
                return Err(self.error(
                    format!("step '{}', key name", step.name),
                    "a step needs a name; give it one that says what it measures",
                ));
            }
            if names.contains(&step.name.as_str()) {
                return Err(self.error(
                    format!("step '{}', key name", step.name),
                    "two steps share this name; names must be unique",
                ));
            }
            names.push(&step.name);
            self.validate_step(step)?;
        }
        self.check_job_names()?;
        for score in &self.scores {
            self.validate_score(score)?;
        }
        self.check_plan(1.0)
    }

    /// Checks that no two planned jobs share a name (step `a` at QD2 and a step named
    /// `a QD2`): results, comparisons and reports tell jobs apart by name.
    fn check_job_names(&self) -> Result<(), SuiteError> {
        let mut seen: Vec<(String, &StepSpec, Vec<SweepValue>)> = Vec::new();
        for (_, step) in self.steps() {
            let planned = if step.files.is_some() {
                vec![(step.name.clone(), Vec::new())]
            } else {
                crate::plan::step_jobs(self, step, 1.0)?
                    .into_iter()
                    .map(|j| (j.spec.name.unwrap_or_default(), j.sweep))
                    .collect()
            };
            for (name, sweep) in planned {
                if let Some((_, other, at)) = seen.iter().find(|(n, _, _)| *n == name) {
                    let point: Vec<String> = at
                        .iter()
                        .map(|p| format!("{} = {}", p.key, show_value(&p.key, p.value)))
                        .collect();
                    let whose = if point.is_empty() {
                        format!("the job of step '{}'", other.name)
                    } else {
                        format!("the job of step '{}' at {}", other.name, point.join(", "))
                    };
                    return Err(self.error(
                        format!("step '{}', key name", step.name),
                        format!(
                            "its job would be named '{name}', as is {whose}; rename one of the steps"
                        ),
                    ));
                }
                seen.push((name, step, sweep));
            }
        }
        Ok(())
    }

    fn validate_step(&self, step: &StepSpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("step '{}', key {key}", step.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
        if !CHARTS.contains(&step.chart.as_str()) {
            return Err(fail(
                "chart",
                format!(
                    "unknown chart '{}'; use one of {}",
                    step.chart,
                    CHARTS.join(", ")
                ),
            ));
        }
        if let Some(f) = &step.files {
            if !["create", "read", "copy-near", "copy-far"].contains(&f.op.as_str()) {
                return Err(fail(
                    "files.op",
                    format!(
                        "unknown operation '{}'; use create, read, copy-near or copy-far",
                        f.op
                    ),
                ));
            }
            match parse_size(&f.file_size) {
                Ok(0) => {
                    return Err(fail(
                        "files.file_size",
                        "files of 0 bytes; give a size such as \"1m\"".into(),
                    ))
                }
                // Each file is one I/O of the step's result, and a job's I/O is at most 1 GiB.
                Ok(bytes) if bytes > 1 << 30 => {
                    return Err(fail(
                        "files.file_size",
                        format!(
                            "files of {} each: a file counts as one I/O, which is at most 1 GiB; \
                             use more files of at most \"1g\"",
                            f.file_size
                        ),
                    ))
                }
                Ok(_) => {}
                Err(e) => return Err(fail("files.file_size", e.to_string())),
            }
            if f.count == 0 {
                return Err(fail("files.count", "a set needs at least one file".into()));
            }
            if !step.sweep.is_empty() || step.steady_state.is_some() {
                return Err(fail(
                    "files",
                    "a file-set step takes no sweep or steady_state".into(),
                ));
            }
            return Ok(());
        }
        if step.job.name.is_some() {
            return Err(fail("job.name", NAMED_BY_STEP.into()));
        }
        for (i, sw) in step.sweep.iter().enumerate() {
            let values = sw
                .numbers()
                .map_err(|m| fail(&format!("sweep.{}", sw.key), m))?;
            // A value given twice would run two jobs of one name.
            if let Some((j, _)) = values
                .iter()
                .enumerate()
                .find(|(j, v)| values[..*j].iter().any(|w| (*w - **v).abs() < 1e-9))
            {
                return Err(fail(
                    &format!("sweep.{}", sw.key),
                    format!(
                        "{} is given twice; each value runs once",
                        show_value(&sw.key, values[j])
                    ),
                ));
            }
            if step.sweep[..i].iter().any(|s| s.key == sw.key) {
                return Err(fail(
                    &format!("sweep.{}", sw.key),
                    format!(
                        "{} is swept twice; give all its values in one entry",
                        sw.key
                    ),
                ));
            }
        }
        if let Some(spans) = step.io_limit_spans {
            if !(spans.is_finite() && spans > 0.0) {
                return Err(fail(
                    "io_limit_spans",
                    format!("{spans} must be a positive number of spans (SNIA WSAT writes 4)"),
                ));
            }
        }
        if let Some(ss) = &step.steady_state {
            if !JobResult::METRICS.contains(&ss.metric.as_str()) {
                return Err(fail(
                    "steady_state.metric",
                    format!(
                        "unknown metric; use one of {}",
                        JobResult::METRICS.join(", ")
                    ),
                ));
            }
            // Every round's jobs are kept in the result: a typo of a million rounds would run
            // on until memory ran out.
            if ss.max_rounds > MAX_ROUNDS {
                return Err(fail(
                    "steady_state.max_rounds",
                    format!(
                        "{} rounds; at most {MAX_ROUNDS} (SNIA PTS runs 25)",
                        ss.max_rounds
                    ),
                ));
            }
            if ss.window < 2 || ss.max_rounds < ss.window {
                return Err(fail(
                    "steady_state",
                    "need window ≥ 2 and max_rounds ≥ window".into(),
                ));
            }
            check_track(step, &ss.track).map_err(|m| fail("steady_state.track", m))?;
        }
        Ok(())
    }

    fn validate_score(&self, score: &ScoreSpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("score '{}', key {key}", score.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
        if !RULES.contains(&score.rule.as_str()) {
            return Err(fail(
                "rule",
                format!(
                    "unknown rule '{}'; use one of {}",
                    score.rule,
                    RULES.join(", ")
                ),
            ));
        }
        // A key the rule does not read would be ignored silently (a `where` on a weighted
        // score filters nothing: its terms carry their own).
        let given = [
            ("step", score.step.is_some(), score.rule != "weighted"),
            ("metric", score.metric.is_some(), score.rule != "weighted"),
            (
                "where",
                !score.filter.is_empty(),
                ["mean", "rating"].contains(&score.rule.as_str()),
            ),
            (
                "seconds",
                score.seconds.is_some(),
                score.rule == "last_seconds",
            ),
            ("terms", !score.terms.is_empty(), score.rule == "weighted"),
        ];
        if let Some((key, _, _)) = given.iter().find(|(_, given, read)| *given && !read) {
            return Err(fail(
                key,
                format!("rule {} does not read {key}; remove it", score.rule),
            ));
        }
        let metric_ok = |m: &str| {
            if score.rule == "last_seconds" {
                SERIES_METRICS.contains(&m)
            } else {
                JobResult::METRICS.contains(&m)
            }
        };
        if score.rule == "weighted" {
            if score.terms.is_empty() {
                return Err(fail("terms", "a weighted score needs terms".into()));
            }
            for t in &score.terms {
                let Some(step) = self.step_named(&t.step) else {
                    return Err(fail("terms.step", format!("no step named '{}'", t.step)));
                };
                if !metric_ok(&t.metric) {
                    return Err(fail(
                        "terms.metric",
                        format!("unknown metric '{}'", t.metric),
                    ));
                }
                if !t.weight.is_finite() {
                    return Err(fail(
                        "terms.weight",
                        format!("{} is not a weight; give a finite number", t.weight),
                    ));
                }
                check_filter(step, &t.filter).map_err(|m| fail("terms.where", m))?;
            }
            return Ok(());
        }
        let step = match &score.step {
            Some(s) => self
                .step_named(s)
                .ok_or_else(|| fail("step", format!("no step named '{s}'")))?,
            None => return Err(fail("step", "this rule needs a step".into())),
        };
        match &score.metric {
            Some(m) if metric_ok(m) => {}
            Some(m) => {
                return Err(fail(
                    "metric",
                    format!("unknown metric '{m}' for rule {}", score.rule),
                ))
            }
            None => return Err(fail("metric", "this rule needs a metric".into())),
        }
        if score.rule == "last_seconds" {
            let Some(secs) = score.seconds.filter(|s| s.is_finite() && *s > 0.0) else {
                return Err(fail(
                    "seconds",
                    "last_seconds needs a finite number of seconds > 0".into(),
                ));
            };
            // A window longer than the run would be the mean of the whole run under a name
            // that says otherwise.
            let shortest = crate::plan::step_jobs(self, step, 1.0)?
                .iter()
                .filter_map(|j| j.spec.duration_s)
                .fold(f64::INFINITY, f64::min);
            if secs > shortest + 1e-9 {
                return Err(fail(
                    "seconds",
                    format!(
                        "{secs} s is longer than step '{}' measures ({shortest} s per job); \
                         give at most {shortest}",
                        step.name
                    ),
                ));
            }
        }
        check_filter(step, &score.filter).map_err(|m| fail("where", m))
    }
}

/// Checks that `track` names exactly one job of `step`'s sweep: one value of every swept key,
/// each a value the sweep runs. Otherwise the first job that matched was tracked, silently.
fn check_track(step: &StepSpec, track: &[SweepSpec]) -> Result<(), String> {
    for t in track {
        if !step.sweep.iter().any(|s| s.key == t.key) {
            return Err(format!("'{}' is not swept by this step", t.key));
        }
        if t.values.len() != 1 {
            let swept = step.sweep.iter().find(|s| s.key == t.key);
            return Err(format!(
                "track names one job, so one value of {}; the sweep offers {}",
                t.key,
                swept.map(offered).unwrap_or_default()
            ));
        }
    }
    check_filter(step, track)?;
    let several = step.sweep.iter().any(|s| s.values.len() > 1);
    for sw in step.sweep.iter().filter(|_| several) {
        if !track.iter().any(|t| t.key == sw.key) {
            return Err(format!(
                "track gives no value of {}; name the tracked job by every swept key \
                 (the sweep offers {})",
                sw.key,
                offered(sw)
            ));
        }
    }
    Ok(())
}
