//! `mpirun -np N iolab quick TARGET`: CrystalDiskMark's tests on every rank's share together.
//! Each run of a test (its warm-up, each counted run) starts on every rank at once and stops as
//! `run`'s jobs do (stonewalling, a fault); each rank takes the mean of its own counted runs,
//! and rank 0 merges the ranks' means into the test's figure, which every rank gets back, so
//! that all stop where one process would. Rank 0 writes the one result.

use super::coordinated::Watch;
use super::steps::{Opening, Steps};
use super::suite::rules_for;
use super::QuickStart;
use crate::cmd::quick::{run_tests, QuickRunner};
use crate::subject::ModelState;
use anyhow::{bail, Result};
use iolab_core::job::Job;
use iolab_core::result::JobResult;
use iolab_engine::runner::{mean_of_repeats, JobRun};
use iolab_engine::sys::INTERRUPTED;
use std::sync::atomic::Ordering;

/// Quick's runs as coordinated steps of every rank.
struct RankRunner<'a> {
    steps: &'a mut Steps,
    /// The current test's last run: its common start, this rank's start, and how it stopped
    /// (the test's start and stonewall, as reported).
    last_run: Option<(u64, u64, Watch)>,
}

impl QuickRunner for RankRunner<'_> {
    fn size_bytes(&self) -> u64 {
        self.steps.subject.size_bytes()
    }

    fn prepare(&self, job: &mut Job) -> Result<()> {
        let subject = &self.steps.subject;
        let mine = job
            .resolve_span(subject.size_bytes())
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(job.check_alignment(subject.logical_block_bytes())?));
        self.steps.comm.agree(self.steps.hosts(), mine)
    }

    fn idle(&mut self, seconds: f64) {
        self.steps.subject.idle(seconds);
    }

    fn interrupted(&self) -> bool {
        self.steps.any(INTERRUPTED.load(Ordering::Relaxed))
    }

    fn run(&mut self, job: &Job, _label: &str, _expected_s: Option<f64>) -> Result<JobRun> {
        let mine = self.steps.share_of(job)?;
        let r = self.steps.start(&mine)?;
        if self.steps.cut_off {
            bail!("interrupted: the ranks were stopped by a signal");
        }
        self.last_run = Some((r.t0, r.started, r.watch));
        r.run
    }

    fn combine(&mut self, job: &Job, runs: &[JobRun]) -> Option<JobResult> {
        let mean = mean_of_repeats(job, runs).ok_or_else(|| "no counted run".to_string());
        let (t0, started, watch) = self.last_run.take().unwrap_or((
            0,
            0,
            Watch {
                interrupted: false,
                stop: None,
            },
        ));
        let report = self.steps.report_of(mean, started);
        match self.steps.gather(job, report, t0, &watch) {
            Ok(Ok(aggregate)) => Some(aggregate),
            _ => None,
        }
    }
}

/// Runs `iolab quick` of `start` as one coordinated run of every rank mpirun started.
pub fn run(start: QuickStart) -> Result<i32> {
    let (_universe, comm) = super::comm::start()?;
    let root = comm.is_root();
    let args = start.args;
    let outputs_checked = || Ok(());
    let opening = Opening {
        target: start.target,
        own: start.own,
        first: start.first,
        size_if_new: None,
        safety: &args.safety,
        state: ModelState::Full,
        remove_created: !args.keep,
        stonewall: args.mpi.stonewall,
        check_outputs: &outputs_checked,
    };
    let mut steps = match Steps::open(comm, opening) {
        Ok(s) => s,
        // Every rank has the same error (it was agreed on); rank 0 says it.
        Err(e) => return super::comm::exit_with(root, Err(e)),
    };
    let frame = root.then(|| steps.subject.new_result("quick", !args.safety.no_probe));
    let mut runner = RankRunner {
        steps: &mut steps,
        last_run: None,
    };
    let outcome = run_tests(args, &mut runner);
    let code = frame.map(|mut result| {
        let saved = outcome.and_then(|outcome| {
            outcome.into_result(&mut result);
            steps.subject.describe_into(&mut result);
            steps.describe_into(&mut result);
            let targets = steps.targets();
            let rules = rules_for(&[], &targets, args.safety.overwrite);
            crate::cmd::quick::finish(&mut result, args, &rules)
        });
        saved.unwrap_or_else(|e| {
            say!("Error: {e:#}");
            2
        })
    });
    steps.end(code)
}
