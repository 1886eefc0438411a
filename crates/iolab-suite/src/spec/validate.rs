//! Validation of a suite: each phase, step and score checked with the file and key of the
//! first mistake, before anything runs.

use super::*;

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
    pub(super) fn validate(&self) -> Result<(), SuiteError> {
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
        if let Some(label) = &step.cdm_test {
            if label.trim().is_empty() || step.files.is_some() {
                return Err(fail(
                    "cdm_test",
                    "name the CrystalDiskMark test of a job step, as \"SEQ1M Q8T1\"".into(),
                ));
            }
        }
        if let Some(f) = &step.files {
            return self.validate_files_step(step, f);
        }
        if step.job.name.is_some() {
            return Err(fail("job.name", NAMED_BY_STEP.into()));
        }
        self.validate_sweep(step)?;
        if let Some(spans) = step.io_limit_spans {
            if !(spans.is_finite() && spans > 0.0) {
                return Err(fail(
                    "io_limit_spans",
                    format!("{spans} must be a positive number of spans (SNIA WSAT writes 4)"),
                ));
            }
        }
        if let Some(ss) = &step.steady_state {
            self.validate_steady_state(step, ss)?;
        }
        Ok(())
    }

    /// A file-set step: a known operation, files of a size one I/O can hold, at least one
    /// file, and no sweep or steady state.
    fn validate_files_step(&self, step: &StepSpec, f: &FilesSpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("step '{}', key {key}", step.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
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
        Ok(())
    }

    /// Each swept key once, each of its values once.
    fn validate_sweep(&self, step: &StepSpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("step '{}', key {key}", step.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
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
        Ok(())
    }

    /// A steady-state rule: a known metric, a bounded number of rounds holding the window, and
    /// a tracked job that is one of the step's.
    fn validate_steady_state(&self, step: &StepSpec, ss: &SteadySpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("step '{}', key {key}", step.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
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
            return self.validate_terms(score, &metric_ok);
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
            self.validate_last_seconds(score, step)?;
        }
        check_filter(step, &score.filter).map_err(|m| fail("where", m))
    }

    /// A weighted score's terms: at least one, each naming a step, a metric the rule reads, a
    /// finite weight and a filter that picks jobs of the step.
    fn validate_terms(
        &self,
        score: &ScoreSpec,
        metric_ok: &dyn Fn(&str) -> bool,
    ) -> Result<(), SuiteError> {
        let place = |key: &str| format!("score '{}', key {key}", score.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
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
        Ok(())
    }

    /// A last-seconds score's window: a positive number of seconds, no longer than the
    /// shortest job of the step measures.
    fn validate_last_seconds(&self, score: &ScoreSpec, step: &StepSpec) -> Result<(), SuiteError> {
        let place = |key: &str| format!("score '{}', key {key}", score.name);
        let fail = |key: &str, message: String| self.error(place(key), message);
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
        Ok(())
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
