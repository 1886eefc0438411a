//! Running a suite: preparation, steps and sweeps, steady-state rounds, scores. What actually
//! performs I/O is behind [`Executor`], so the same suite runs on a real target or a model.

use crate::plan::{size_label, step_jobs, PlannedJob};
use crate::score;
use crate::spec::{FilesSpec, SteadySpec, StepSpec, SuiteSpec};
use iolab_core::job::JobSpec;
use iolab_core::quick::QuickTest;
use iolab_core::result::{JobResult, SteadyStateReport, StepInfo, SuiteSummary, SweepValue};
use iolab_core::size::{format_size, ByteSize};
use iolab_core::steady;

/// Why a job did not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipOrFail {
    /// The job does not fit this target (e.g. 512-byte transfers on a 4K-sector device): the
    /// suite notes it and goes on.
    Skip(String),
    /// The job could not run: the suite stops, keeping what finished.
    Fail(String),
}

/// What a suite needs from the thing it measures.
pub trait Executor {
    /// Size of the target in bytes.
    fn target_bytes(&self) -> u64;
    /// Runs one job. The executor validates it, resolves its span against the target (clamping
    /// a span larger than the target and saying so through [`Executor::take_notes`]) and returns
    /// the result, or why the job could not run.
    fn run_job(&mut self, spec: JobSpec) -> Result<JobResult, SkipOrFail>;
    /// Runs a file-set operation (FC-Test) with `file_bytes` already scaled. Targets that are not
    /// a directory skip it.
    fn file_op(
        &mut self,
        files: &crate::spec::FilesSpec,
        file_bytes: u64,
    ) -> Result<JobResult, SkipOrFail> {
        let _ = (files, file_bytes);
        Err(SkipOrFail::Skip(
            "file-set steps need a directory target".into(),
        ))
    }
    /// Returns the span to "never written" (discard, hole punching), or says why it did not.
    fn purge(&mut self) -> Result<String, String>;
    /// Waits `seconds` (a model advances its clock).
    fn idle(&mut self, seconds: f64);
    /// Whether the user asked to stop (Ctrl-C).
    fn interrupted(&self) -> bool;
    /// Notes gathered since the last call (clamped spans, fallbacks).
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// What a suite run produced.
#[derive(Debug, Default)]
pub struct SuiteRun {
    /// Every job, in run order, each with its [`StepInfo`].
    pub jobs: Vec<JobResult>,
    /// Suite, scale, preparation, scores, steady state.
    pub summary: SuiteSummary,
    /// Why the suite stopped early, if it did.
    pub incomplete: Option<String>,
    /// Notes for the result.
    pub notes: Vec<String>,
}

/// Runs `suite` at `scale`; `on_job` sees every job result as it finishes (progress, partial
/// saves). Never panics on a failing job: it stops, keeps what finished and says why.
pub fn run_suite(
    suite: &SuiteSpec,
    scale: f64,
    exec: &mut dyn Executor,
    on_job: &mut dyn FnMut(&JobResult),
) -> SuiteRun {
    let mut run = SuiteRun {
        summary: SuiteSummary {
            name: suite.name.clone(),
            title: suite.title.clone(),
            source: suite.source.clone(),
            scale,
            ..SuiteSummary::default()
        },
        ..SuiteRun::default()
    };
    // Parsing checked the plan at scale 1; this run's scale is checked before anything runs,
    // so a bad job cannot stop the suite after earlier steps took their time.
    if let Err(e) = suite.check_plan(scale) {
        run.incomplete = Some(format!("nothing ran: {e}"));
        return run;
    }
    'phases: for phase in &suite.phases {
        if let Some(prep) = &phase.prepare {
            if prep.purge {
                match exec.purge() {
                    Ok(done) => run
                        .summary
                        .prepared
                        .push(format!("{}: purge: {done}", phase.name)),
                    Err(why) => run
                        .summary
                        .prepared
                        .push(format!("{}: purge skipped: {why}", phase.name)),
                }
            }
            for pass in 1..=prep.fill_passes {
                let spec = match crate::plan::fill_job(suite, phase, pass, scale) {
                    Ok(spec) => spec,
                    Err(e) => {
                        run.incomplete = Some(e.to_string());
                        break 'phases;
                    }
                };
                let block = format_size(spec.block_size.map_or(128 << 10, |b| b.0));
                let info = StepInfo {
                    phase: phase.name.clone(),
                    step: format!("fill pass {pass}"),
                    chart: "table".into(),
                    ..StepInfo::default()
                };
                if let Err(why) = run_one(&mut run, exec, spec, info, None, on_job) {
                    run.incomplete = Some(why);
                    break 'phases;
                }
                run.summary.prepared.push(format!(
                    "{}: sequential fill pass {pass} with {block} incompressible writes",
                    phase.name
                ));
            }
            if prep.idle_s > 0.0 {
                exec.idle(prep.idle_s * scale);
                run.summary.prepared.push(format!(
                    "{}: idle {:.1} s",
                    phase.name,
                    prep.idle_s * scale
                ));
            }
        }
        for step in &phase.steps {
            if let Err(why) = run_step(&mut run, suite, &phase.name, step, scale, exec, on_job) {
                run.incomplete = Some(why);
                break 'phases;
            }
        }
    }
    for spec in &suite.scores {
        match score::compute_with(suite, spec, &run.jobs, scale, &run.summary.steady_state) {
            Some(s) => run.summary.scores.push(s),
            // A suite that stopped early says why already. One that ran to the end but lacks
            // a score would otherwise just not list it (AS SSD's access time at --scale 0.001
            // is 10 ms, less than one access of a hard disk: its step completes no I/O).
            None if run.incomplete.is_none() => run.notes.push(score::not_given(spec)),
            None => {}
        }
    }
    run.notes.extend(exec.take_notes());
    run
}

/// Runs one job and records it, as CrystalDiskMark's test `cdm_test` where given; `Err` stops
/// the suite, a skipped job is noted.
fn run_one(
    run: &mut SuiteRun,
    exec: &mut dyn Executor,
    mut spec: JobSpec,
    info: StepInfo,
    cdm_test: Option<&str>,
    on_job: &mut dyn FnMut(&JobResult),
) -> Result<(), String> {
    if exec.interrupted() {
        return Err("interrupted".into());
    }
    // Each job its own random sequence, as fio seeds each job of a file by its number: with
    // one seed for all, a round's reads hit exactly the offsets the write before them had
    // just written (a hard disk's write cache then served a SNIA PTS read round at 12,000
    // IOPS). Still the same for the same suite, so results repeat byte for byte.
    if spec.seed.is_none() {
        spec.seed = Some(run.jobs.len() as u64 + 1);
    }
    let name = spec.name.clone().unwrap_or_default();
    let mut result = match exec.run_job(spec) {
        Ok(r) => r,
        Err(SkipOrFail::Skip(why)) => {
            run.notes.push(format!("skipped job '{name}': {why}"));
            return Ok(());
        }
        Err(SkipOrFail::Fail(why)) => {
            return Err(format!("step '{}', job '{name}': {why}", info.step))
        }
    };
    result.test = cdm_test.and_then(|label| QuickTest::of_access(label, result.job.access));
    result.step = Some(info);
    on_job(&result);
    let stop = (!result.complete).then(|| {
        format!(
            "job '{name}': {}",
            result.stop_reason.as_deref().unwrap_or("stopped early")
        )
    });
    run.jobs.push(result);
    match stop {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn run_step(
    run: &mut SuiteRun,
    suite: &SuiteSpec,
    phase: &str,
    step: &StepSpec,
    scale: f64,
    exec: &mut dyn Executor,
    on_job: &mut dyn FnMut(&JobResult),
) -> Result<(), String> {
    if let Some(files) = &step.files {
        return run_file_step(run, phase, step, files, scale, exec, on_job);
    }
    let mut jobs = step_jobs(suite, step, scale).map_err(|e| e.to_string())?;
    if let Some(spans) = step.io_limit_spans {
        // "Write N × the capacity" (SNIA WSAT): a byte limit relative to the job's span.
        for j in &mut jobs {
            let span = j.spec.size.map_or(
                exec.target_bytes()
                    .saturating_sub(j.spec.offset.map_or(0, |o| o.0)),
                |s| s.0,
            );
            j.spec.io_limit = Some(ByteSize(((span as f64 * spans) as u64).max(4096)));
        }
    }
    let Some(ss) = &step.steady_state else {
        for j in jobs {
            let info = StepInfo {
                phase: phase.into(),
                step: step.name.clone(),
                chart: step.chart.clone(),
                sweep: j.sweep,
                round: None,
            };
            run_one(run, exec, j.spec, info, step.cdm_test.as_deref(), on_job)?;
        }
        return Ok(());
    };
    run_until_steady(run, phase, step, ss, &jobs, exec, on_job)
}

/// A step that makes or removes files (a file-system step): one file operation, its result
/// recorded under the step's name, or a note when the target cannot take it.
fn run_file_step(
    run: &mut SuiteRun,
    phase: &str,
    step: &StepSpec,
    files: &FilesSpec,
    scale: f64,
    exec: &mut dyn Executor,
    on_job: &mut dyn FnMut(&JobResult),
) -> Result<(), String> {
    let scaled = crate::plan::file_bytes(files, scale);
    let info = StepInfo {
        phase: phase.into(),
        step: step.name.clone(),
        chart: step.chart.clone(),
        ..StepInfo::default()
    };
    if exec.interrupted() {
        return Err("interrupted".into());
    }
    match exec.file_op(files, scaled) {
        Ok(mut r) => {
            r.name = step.name.clone();
            r.step = Some(info);
            on_job(&r);
            run.jobs.push(r);
            Ok(())
        }
        Err(SkipOrFail::Skip(why)) => {
            run.notes
                .push(format!("skipped step '{}': {why}", step.name));
            Ok(())
        }
        Err(SkipOrFail::Fail(why)) => Err(format!("step '{}': {why}", step.name)),
    }
}

/// A step with a steady-state rule: rounds of all its jobs until the tracked job's metric is
/// judged steady (or the rounds run out, a job fails, or the tracked job is skipped), then the
/// judgement recorded in the summary.
fn run_until_steady(
    run: &mut SuiteRun,
    phase: &str,
    step: &StepSpec,
    ss: &SteadySpec,
    jobs: &[PlannedJob],
    exec: &mut dyn Executor,
    on_job: &mut dyn FnMut(&JobResult),
) -> Result<(), String> {
    let tracked = jobs
        .iter()
        .position(|j| crate::plan::matches(&j.sweep, &ss.track))
        .unwrap_or(0);
    let mut values = Vec::new();
    let mut outcome = Ok(());
    let mut tracked_skipped = false;
    for round in 1..=ss.max_rounds {
        for (i, j) in jobs.iter().enumerate() {
            let info = StepInfo {
                phase: phase.into(),
                step: step.name.clone(),
                chart: step.chart.clone(),
                sweep: j.sweep.clone(),
                round: Some(round),
            };
            let mut spec = j.spec.clone();
            spec.name = Some(format!("{} round {round}", spec.name.unwrap_or_default()));
            let recorded = run.jobs.len();
            if let Err(e) = run_one(run, exec, spec, info, step.cdm_test.as_deref(), on_job) {
                outcome = Err(e);
                break;
            }
            if i == tracked {
                // A skipped job left no result: the last one is another job's (or the fill's).
                match run.jobs.get(recorded) {
                    Some(r) => values.push(r.metric(&ss.metric).unwrap_or(0.0)),
                    None => tracked_skipped = true,
                }
            }
        }
        // A job that does not fit the target is skipped in every round: nothing to judge.
        if outcome.is_err()
            || tracked_skipped
            || steady::judge(
                &step.name,
                &ss.metric,
                &values,
                ss.window as usize,
                ss.max_rounds,
            )
            .attained
        {
            break;
        }
    }
    let tracked_name = tracked_label(&jobs[tracked].sweep);
    let mut report: SteadyStateReport = steady::judge(
        &step.name,
        &ss.metric,
        &values,
        ss.window as usize,
        ss.max_rounds,
    );
    if !tracked_name.is_empty() {
        report.tracking = format!("{} of {}", ss.metric, tracked_name.join(" "));
    }
    if tracked_skipped {
        let which = if tracked_name.is_empty() {
            "job".to_string()
        } else {
            format!("tracked job ({})", tracked_name.join(" "))
        };
        run.notes.push(format!(
            "steady state of step '{}' not judged: its {which} was skipped",
            step.name
        ));
    }
    run.summary.steady_state.push(report);
    outcome
}

/// The tracked job's sweep point as a reader names it (`4K`, `qd=32`); empty for a step without
/// a sweep.
fn tracked_label(sweep: &[SweepValue]) -> Vec<String> {
    sweep
        .iter()
        .map(|s| {
            if s.key == "block_size" {
                size_label(s.value as u64)
            } else {
                format!("{}={}", s.key, s.value)
            }
        })
        .collect::<Vec<_>>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;
    use iolab_core::result::DirectionResult;

    /// Answers every job at once; write IOPS follow a script, so steady state can be steered.
    struct Scripted {
        write_iops: Vec<f64>,
        calls: usize,
        purges: usize,
        fail_at: Option<usize>,
    }

    impl Executor for Scripted {
        fn target_bytes(&self) -> u64 {
            1 << 30
        }
        fn run_job(&mut self, spec: JobSpec) -> Result<JobResult, SkipOrFail> {
            if spec.block_size == Some(ByteSize(512)) {
                return Err(SkipOrFail::Skip("512-byte transfers do not fit".into()));
            }
            if self.fail_at == Some(self.calls) {
                return Err(SkipOrFail::Fail("EIO".into()));
            }
            let job = spec
                .validate()
                .map_err(|e| SkipOrFail::Fail(e.to_string()))?;
            let iops = self.write_iops.get(self.calls).copied().unwrap_or(1000.0);
            self.calls += 1;
            Ok(JobResult {
                measured_ns: 1,
                write: DirectionResult {
                    iops,
                    ..DirectionResult::default()
                },
                ..JobResult::unmeasured(job)
            })
        }
        fn purge(&mut self) -> Result<String, String> {
            self.purges += 1;
            Ok("purged".into())
        }
        fn idle(&mut self, _: f64) {}
        fn interrupted(&self) -> bool {
            false
        }
    }

    const SUITE: &str = r#"
name = "t"
title = "t"
[[phase]]
name = "p"
prepare = { purge = true, fill_passes = 1 }
[[phase.step]]
name = "loop"
job = { access = "randwrite", duration_s = 1 }
sweep = [{ key = "block_size", values = ["512", "4k"] }]
steady_state = { metric = "write_iops", track = [{ key = "block_size", values = ["4k"] }], max_rounds = 8 }
[[phase.step]]
name = "after"
job = { access = "randread", duration_s = 1 }
"#;

    #[test]
    fn rounds_stop_at_steady_state_and_skips_are_noted() {
        let suite = SuiteSpec::parse(SUITE, "t").unwrap();
        // Call 0 is the fill; then one 4K job per round (the 512 B job is skipped).
        let script = vec![
            0.0, 5000.0, 3000.0, 2000.0, 2010.0, 1990.0, 2000.0, 2005.0, 9.0, 9.0,
        ];
        let mut exec = Scripted {
            write_iops: script,
            calls: 0,
            purges: 0,
            fail_at: None,
        };
        let run = run_suite(&suite, 1.0, &mut exec, &mut |_| {});
        assert_eq!(run.incomplete, None);
        assert_eq!(exec.purges, 1);
        let ss = &run.summary.steady_state[0];
        // Rounds 3–7 (2000, 2010, 1990, 2000, 2005) are the first steady window.
        assert!(ss.attained, "{ss:?}");
        assert_eq!(ss.rounds, 7);
        assert_eq!(
            ss.round_values,
            vec![5000.0, 3000.0, 2000.0, 2010.0, 1990.0, 2000.0, 2005.0]
        );
        assert!(run
            .notes
            .iter()
            .any(|n| n.contains("skipped") && n.contains("512")));
        let last = run.jobs.last().unwrap();
        assert_eq!(last.step.as_ref().unwrap().step, "after");
        assert_eq!(run.jobs.len(), 1 + 7 + 1);
        // Every job its own random sequence, the same again for the same suite.
        let seeds: Vec<u64> = run.jobs.iter().map(|j| j.job.seed).collect();
        assert_eq!(seeds, (1..=9).collect::<Vec<u64>>());
    }

    #[test]
    fn a_skipped_tracked_job_is_not_tracked_by_another_jobs_figures() {
        // The tracked 512 B job is skipped every round: the 4K job's IOPS (or the fill's)
        // were judged as its steady state, under its name.
        let text = SUITE.replace("values = [\"4k\"] }]", "values = [\"512\"] }]");
        let suite = SuiteSpec::parse(&text, "t").unwrap();
        let mut exec = Scripted {
            write_iops: vec![0.0, 2000.0, 2000.0, 2000.0, 2000.0, 2000.0, 2000.0],
            calls: 0,
            purges: 0,
            fail_at: None,
        };
        let run = run_suite(&suite, 1.0, &mut exec, &mut |_| {});
        let ss = &run.summary.steady_state[0];
        assert!(ss.round_values.is_empty(), "{ss:?}");
        assert!(!ss.attained);
        // A skip repeats every round: one round, then the next step.
        let loops = run
            .jobs
            .iter()
            .filter(|j| j.name.starts_with("loop"))
            .count();
        assert_eq!(loops, 1);
        assert!(
            run.notes.iter().any(|n| n
                == "steady state of step 'loop' not judged: its tracked job (512B) was skipped"),
            "{:?}",
            run.notes
        );
        assert_eq!(run.jobs.last().unwrap().name, "after");
    }

    #[test]
    fn a_fill_pass_covers_the_span_of_the_suites_jobs() {
        let text = SUITE.replace(
            "[[phase]]",
            "[job]\noffset = \"1m\"\nsize = \"64m\"\n[[phase]]",
        );
        let suite = SuiteSpec::parse(&text, "t").unwrap();
        let mut exec = Scripted {
            write_iops: vec![],
            calls: 0,
            purges: 0,
            fail_at: None,
        };
        for (scale, offset, span) in [(1.0, 1 << 20, 64 << 20), (0.5, 512 << 10, 32 << 20)] {
            exec.calls = 0;
            let run = run_suite(&suite, scale, &mut exec, &mut |_| {});
            let fill = &run.jobs[0].job;
            assert!(fill.name.contains("fill pass"), "{}", fill.name);
            // Scaled as the steps' jobs are, so a scaled run fills what it tests.
            assert_eq!(
                (fill.offset_bytes, fill.span()),
                (offset, span),
                "scale {scale}"
            );
        }
    }

    #[test]
    fn a_plan_invalid_at_the_runs_scale_runs_nothing() {
        let mut suite = SuiteSpec::parse(SUITE, "my.toml").unwrap();
        // Valid when parsed; a duration that scales to nothing is not (the scale is the run's).
        suite.phases[0].steps[1].job.duration_s = Some(1e-300);
        let mut exec = Scripted {
            write_iops: vec![],
            calls: 0,
            purges: 0,
            fail_at: None,
        };
        let run = run_suite(&suite, 1e-300, &mut exec, &mut |_| {});
        let why = run.incomplete.unwrap_or_default();
        assert!(
            why.starts_with("nothing ran: my.toml: step 'after', key job.duration_s"),
            "{why}"
        );
        assert_eq!((exec.calls, exec.purges, run.jobs.len()), (0, 0, 0));
    }

    #[test]
    fn a_failing_job_stops_the_suite_and_keeps_what_finished() {
        let suite = SuiteSpec::parse(SUITE, "t").unwrap();
        let mut exec = Scripted {
            write_iops: vec![],
            calls: 0,
            purges: 0,
            fail_at: Some(3),
        };
        let run = run_suite(&suite, 1.0, &mut exec, &mut |_| {});
        assert!(
            run.incomplete.as_deref().is_some_and(|w| w.contains("EIO")),
            "{:?}",
            run.incomplete
        );
        assert_eq!(run.jobs.len(), 3);
        assert!(!run.summary.steady_state[0].attained);
    }

    #[test]
    fn the_cdm_suites_tests_are_carried_by_their_results() {
        use iolab_core::quick::{TestAccess, TestDirection};
        let suite = crate::load("cdm").unwrap();
        let mut exec = Scripted {
            write_iops: Vec::new(),
            calls: 0,
            purges: 0,
            fail_at: None,
        };
        let run = run_suite(&suite, 0.001, &mut exec, &mut |_| {});
        assert_eq!(run.incomplete, None);
        let test = |name: &str| {
            let j = run.jobs.iter().find(|j| j.name == name).unwrap();
            j.test.clone()
        };
        let t = test("SEQ128K Q32T1 write").unwrap();
        assert_eq!(t.label, "SEQ128K Q32T1");
        assert_eq!(
            (t.access, t.direction),
            (TestAccess::Seq, TestDirection::Write)
        );
        let t = test("RND4K Q32T16 read").unwrap();
        assert_eq!(
            (t.access, t.direction),
            (TestAccess::Rnd, TestDirection::Read)
        );
        // The fill and the mix (a step of its own in reports) are no test of the grid.
        assert_eq!(test("RND4K Q1T1 R70/W30"), None);
        assert_eq!(run.jobs.iter().filter(|j| j.test.is_some()).count(), 12);
    }
}
