//! Running a suite: preparation, steps and sweeps, steady-state rounds, scores. What actually
//! performs I/O is behind [`Executor`], so the same suite runs on a real target or a model.

use crate::plan::{size_label, step_jobs};
use crate::score;
use crate::spec::{StepSpec, SuiteSpec};
use iolab_core::job::{Access, JobSpec};
use iolab_core::result::{JobResult, SteadyStateReport, StepInfo, SuiteSummary};
use iolab_core::size::ByteSize;
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
                let block = prep.fill_block_size.as_deref().unwrap_or("128k");
                let spec = JobSpec {
                    name: Some(format!("{}: fill pass {pass}", phase.name)),
                    access: Some(Access::Write),
                    block_size: Some(block.parse::<ByteSize>().unwrap_or(ByteSize(128 << 10))),
                    queue_depth: Some(8),
                    ..JobSpec::default()
                };
                let info = StepInfo {
                    phase: phase.name.clone(),
                    step: format!("fill pass {pass}"),
                    chart: "table".into(),
                    ..StepInfo::default()
                };
                if let Err(why) = run_one(&mut run, exec, spec, info, on_job) {
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
    run.summary.scores = suite
        .scores
        .iter()
        .filter_map(|s| score::compute(s, &run.jobs, scale))
        .collect();
    run.notes.extend(exec.take_notes());
    run
}

/// Runs one job and records it; `Err` stops the suite, a skipped job is noted.
fn run_one(
    run: &mut SuiteRun,
    exec: &mut dyn Executor,
    spec: JobSpec,
    info: StepInfo,
    on_job: &mut dyn FnMut(&JobResult),
) -> Result<(), String> {
    if exec.interrupted() {
        return Err("interrupted".into());
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
    let mut jobs = step_jobs(suite, step, scale);
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
            run_one(run, exec, j.spec, info, on_job)?;
        }
        return Ok(());
    };
    let tracked = jobs
        .iter()
        .position(|j| crate::plan::matches(&j.sweep, &ss.track))
        .unwrap_or(0);
    let mut values = Vec::new();
    let mut outcome = Ok(());
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
            if let Err(e) = run_one(run, exec, spec, info, on_job) {
                outcome = Err(e);
                break;
            }
            if i == tracked {
                values.push(
                    run.jobs
                        .last()
                        .and_then(|r| r.metric(&ss.metric))
                        .unwrap_or(0.0),
                );
            }
        }
        if outcome.is_err()
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
    let tracked_name = jobs[tracked]
        .sweep
        .iter()
        .map(|s| {
            if s.key == "block_size" {
                size_label(s.value as u64)
            } else {
                format!("{}={}", s.key, s.value)
            }
        })
        .collect::<Vec<_>>();
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
    run.summary.steady_state.push(report);
    outcome
}
