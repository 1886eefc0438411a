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

use iolab_core::job::JobSpec;
use iolab_core::result::JobResult;
use iolab_core::size::parse_size;
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
    /// The measurements.
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
    /// Seconds of idle time afterwards (scaled).
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
    /// not scaled, since the span already is.
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
    /// Which job of a sweep is tracked (all sweep keys given); empty for a single job.
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
    /// Filter on swept keys (`mean`).
    #[serde(default, rename = "where")]
    pub filter: Vec<SweepSpec>,
    /// Seconds (`last_seconds`; scaled with the suite).
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

impl SweepSpec {
    /// The values as numbers (sizes in bytes), or why not.
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
        self.values
            .iter()
            .map(|v| match v {
                toml::Value::Integer(i) => Ok(*i as f64),
                toml::Value::Float(f) => Ok(*f),
                toml::Value::String(s) if self.key == "block_size" => {
                    parse_size(s).map(|b| b as f64).map_err(|e| e.to_string())
                }
                other => Err(format!("'{other}' is not a value for {}", self.key)),
            })
            .collect()
    }
}

impl SuiteSpec {
    /// Parses and validates a suite from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<SuiteSpec, SuiteError> {
        let spec: SuiteSpec = toml::from_str(text).map_err(|e| SuiteError {
            origin: origin.to_string(),
            place: "syntax".into(),
            message: e.to_string(),
        })?;
        spec.validate(origin)?;
        Ok(spec)
    }

    /// Every step, with its phase.
    pub fn steps(&self) -> impl Iterator<Item = (&PhaseSpec, &StepSpec)> {
        self.phases
            .iter()
            .flat_map(|p| p.steps.iter().map(move |s| (p, s)))
    }

    fn validate(&self, origin: &str) -> Result<(), SuiteError> {
        let fail = |place: String, message: String| SuiteError {
            origin: origin.to_string(),
            place,
            message,
        };
        let mut names: Vec<&str> = Vec::new();
        for (_, step) in self.steps() {
            let place = |key: &str| format!("step '{}', key {key}", step.name);
            if names.contains(&step.name.as_str()) {
                return Err(fail(
                    place("name"),
                    "two steps share this name; names must be unique".into(),
                ));
            }
            names.push(&step.name);
            if let Some(f) = &step.files {
                if !["create", "read", "copy-near", "copy-far"].contains(&f.op.as_str()) {
                    return Err(fail(
                        place("files.op"),
                        format!(
                            "unknown operation '{}'; use create, read, copy-near or copy-far",
                            f.op
                        ),
                    ));
                }
                parse_size(&f.file_size)
                    .map_err(|e| fail(place("files.file_size"), e.to_string()))?;
                if f.count == 0 {
                    return Err(fail(
                        place("files.count"),
                        "a set needs at least one file".into(),
                    ));
                }
                if !step.sweep.is_empty() || step.steady_state.is_some() {
                    return Err(fail(
                        place("files"),
                        "a file-set step takes no sweep or steady_state".into(),
                    ));
                }
                continue;
            }
            let mut job = self.job.clone();
            job.overlay(&step.job);
            job.validate()
                .map_err(|e| fail(place(&format!("job.{}", e.key)), e.message))?;
            for sw in &step.sweep {
                sw.numbers().map_err(|m| fail(place("sweep"), m))?;
            }
            if let Some(ss) = &step.steady_state {
                if !JobResult::METRICS.contains(&ss.metric.as_str()) {
                    return Err(fail(
                        place("steady_state.metric"),
                        format!(
                            "unknown metric; use one of {}",
                            JobResult::METRICS.join(", ")
                        ),
                    ));
                }
                if ss.window < 2 || ss.max_rounds < ss.window {
                    return Err(fail(
                        place("steady_state"),
                        "need window ≥ 2 and max_rounds ≥ window".into(),
                    ));
                }
                for t in &ss.track {
                    t.numbers()
                        .map_err(|m| fail(place("steady_state.track"), m))?;
                    if !step.sweep.iter().any(|s| s.key == t.key) {
                        return Err(fail(
                            place("steady_state.track"),
                            format!("'{}' is not swept by this step", t.key),
                        ));
                    }
                }
            }
        }
        for score in &self.scores {
            let place = |key: &str| format!("score '{}', key {key}", score.name);
            if !RULES.contains(&score.rule.as_str()) {
                return Err(fail(
                    place("rule"),
                    format!(
                        "unknown rule '{}'; use one of {}",
                        score.rule,
                        RULES.join(", ")
                    ),
                ));
            }
            let known = |s: &str| names.contains(&s);
            let metric_ok = |m: &str| {
                if score.rule == "last_seconds" {
                    SERIES_METRICS.contains(&m)
                } else {
                    JobResult::METRICS.contains(&m)
                }
            };
            if score.rule == "weighted" {
                if score.terms.is_empty() {
                    return Err(fail(place("terms"), "a weighted score needs terms".into()));
                }
                for t in &score.terms {
                    if !known(&t.step) {
                        return Err(fail(
                            place("terms.step"),
                            format!("no step named '{}'", t.step),
                        ));
                    }
                    if !metric_ok(&t.metric) {
                        return Err(fail(
                            place("terms.metric"),
                            format!("unknown metric '{}'", t.metric),
                        ));
                    }
                }
                continue;
            }
            match &score.step {
                Some(s) if known(s) => {}
                Some(s) => return Err(fail(place("step"), format!("no step named '{s}'"))),
                None => return Err(fail(place("step"), "this rule needs a step".into())),
            }
            match &score.metric {
                Some(m) if metric_ok(m) => {}
                Some(m) => {
                    return Err(fail(
                        place("metric"),
                        format!("unknown metric '{m}' for rule {}", score.rule),
                    ))
                }
                None => return Err(fail(place("metric"), "this rule needs a metric".into())),
            }
            if score.rule == "last_seconds" && !score.seconds.is_some_and(|s| s > 0.0) {
                return Err(fail(
                    place("seconds"),
                    "last_seconds needs seconds > 0".into(),
                ));
            }
            for f in &score.filter {
                f.numbers().map_err(|m| fail(place("where"), m))?;
            }
        }
        Ok(())
    }
}
