//! `mpirun -np N iolab suite SUITE TARGET`: every rank runs the suite on its share, each step
//! one coordinated step (a common start, the watch, stonewalling, faults) whose aggregate every
//! rank gets back. Preparation is per rank (each fills its own share; a purge is each rank's of
//! its own target, or rank 0's once of a shared one); steady state, scores and stops are judged
//! on the aggregate, so every rank takes the same turns. Rank 0 writes the one result, store
//! record and report.

use super::steps::{Opening, Ready, Steps};
use super::SuiteStart;
use crate::cmd::run::SafetyFlags;
use crate::output::Rules;
use crate::subject::ModelState;
use anyhow::Result;
use iolab_core::job::{BufferedHint, JobSpec};
use iolab_core::result::JobResult;
use iolab_engine::sys::INTERRUPTED;
use iolab_suite::{run_suite, Executor, SkipOrFail};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Runs suite jobs as coordinated steps of every rank.
struct RankExecutor<'a> {
    steps: &'a mut Steps,
    safety: &'a SafetyFlags,
    notes: Vec<String>,
    buffered_hint: BufferedHint,
}

impl Executor for RankExecutor<'_> {
    fn target_bytes(&self) -> u64 {
        self.steps.subject.size_bytes()
    }

    fn run_job(&mut self, spec: JobSpec) -> Result<JobResult, SkipOrFail> {
        let local = crate::cmd::suite::prepare_job(
            &self.steps.subject,
            spec,
            self.buffered_hint,
            &mut self.notes,
        );
        let mine = match &local {
            Ok(_) => Ready::Go,
            Err(SkipOrFail::Skip(why)) => Ready::Skip(why.clone()),
            Err(SkipOrFail::Fail(why)) => Ready::Fail(why.clone()),
        };
        let verdict = self
            .steps
            .agree_ready(mine)
            .map_err(|e| SkipOrFail::Fail(format!("{e:#}")))?;
        let job = match (verdict, local) {
            (Ready::Go, Ok(job)) => job,
            (Ready::Skip(why), _) => return Err(SkipOrFail::Skip(why)),
            (Ready::Fail(why), _) => return Err(SkipOrFail::Fail(why)),
            (Ready::Go, Err(e)) => return Err(e),
        };
        self.steps
            .run(&job)
            .map_err(|e| SkipOrFail::Fail(format!("{e:#}")))
    }

    fn purge(&mut self) -> Result<String, String> {
        self.steps.purge(self.safety)
    }

    fn idle(&mut self, seconds: f64) {
        self.steps.subject.idle(seconds);
    }

    fn interrupted(&self) -> bool {
        self.steps.any(INTERRUPTED.load(Ordering::Relaxed))
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

/// Runs the suite of `start` as one coordinated run of every rank mpirun started.
pub fn run(start: SuiteStart) -> Result<i32> {
    let (_universe, comm) = super::comm::start()?;
    let root = comm.is_root();
    let args = start.args;
    // Where the result goes was checked by `iolab suite` already, on every rank.
    let outputs_checked = || Ok(());
    let opening = Opening {
        target: start.target,
        own: start.own,
        first: start.prep,
        size_if_new: None,
        safety: &args.safety,
        state: ModelState::Fresh,
        remove_created: !start.keep,
        stonewall: args.mpi.stonewall,
        check_outputs: &outputs_checked,
    };
    let mut steps = match Steps::open(comm, opening) {
        Ok(s) => s,
        // Every rank has the same error (it was agreed on); rank 0 says it.
        Err(e) => return super::comm::exit_with(root, Err(e)),
    };
    let frame = root.then(|| {
        let kind = format!("suite:{}", start.suite.name);
        steps.subject.new_result(&kind, !args.safety.no_probe)
    });
    let mut exec = RankExecutor {
        steps: &mut steps,
        safety: &args.safety,
        notes: Vec::new(),
        buffered_hint: start.suite.buffered_hint,
    };
    let outcome = run_suite(start.suite, args.scale, &mut exec, &mut |_| {});
    let code = frame.map(|mut result| {
        result.notes.extend(start.notes);
        steps.subject.describe_into(&mut result);
        let result = crate::cmd::suite::result_from(&mut result, outcome);
        steps.describe_into(result);
        let targets = steps.targets();
        let rules = rules_for(&start.inputs, &targets, args.safety.overwrite);
        crate::cmd::suite::finish(result, args, &rules).unwrap_or_else(|e| {
            say!("Error: {e:#}");
            2
        })
    });
    steps.end(code)
}

/// The output rules of rank 0's result: the inputs and every rank's target are not to be
/// overwritten.
pub(super) fn rules_for<'a>(
    inputs: &'a [PathBuf],
    targets: &'a [PathBuf],
    overwrite: bool,
) -> Rules<'a> {
    let all: Vec<&Path> = inputs.iter().chain(targets).map(PathBuf::as_path).collect();
    Rules::new(&all, overwrite)
}
