//! `iolab quick [TARGET]`: CrystalDiskMark's default tests in under a minute.
//!
//! Decisions, where CrystalDiskMark and this issue differ: figures are the **mean** of the
//! counted runs (CDM shows the maximum; KDiskMark's default profile the mean), each test gets
//! one uncounted warm-up run, and the defaults (3 runs of 1.5 s, 1 s warm-up, no pause between
//! tests) fit the eight tests in about 45 s instead of CDM's ~5 minutes. All reads run first,
//! then all writes, as in CDM.

use crate::cmd::run::SafetyFlags;
use crate::leftover;
use crate::output::Rules;
use crate::session;
use crate::subject::{ModelState, Subject};
use anyhow::Result;
use clap::Args;
use iolab_core::job::{Access, DataKind, Job, JobSpec};
use iolab_core::result::{JobResult, RunResult};
use iolab_core::size::{format_size, ByteSize};
use iolab_engine::runner::{mean_of_repeats, JobRun};
use iolab_engine::sys::INTERRUPTED;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// The stem of the test file `quick` creates when no target is given: `iolab-quick.PID.iolab-tmp`
/// (removed afterwards), or `iolab-quick.iolab-tmp` with `--keep` (see [`crate::leftover`]).
pub const TEST_FILE_STEM: &str = "iolab-quick";

/// The longest warm-up, run or pause `quick` accepts: a day. Anything longer is a typo (or
/// `inf`), and would otherwise stall the run or overflow the sleep that waits it out.
pub const MAX_SECONDS: f64 = 86_400.0;

/// Refuses a timing option that is not a number of seconds `quick` can wait out, naming it.
/// `zero_ok` says whether 0 means "none" (warm-up, interval) rather than nothing to measure.
fn check_seconds(option: &str, value: f64, zero_ok: bool) -> Result<()> {
    let range = if zero_ok {
        "from 0 (none)"
    } else {
        "more than 0,"
    };
    anyhow::ensure!(
        value.is_finite() && value <= MAX_SECONDS && (value > 0.0 || (zero_ok && value == 0.0)),
        "{option} {value} is not a usable number of seconds: give {range} up to {MAX_SECONDS} \
         (a day)"
    );
    Ok(())
}

/// `iolab quick`.
#[derive(Args, Debug)]
pub struct QuickArgs {
    /// File, block device or a model (`sim:DRIVE@PLATFORM[/PORT]`); default: a test file
    /// created in the current directory and removed afterwards.
    pub target: Option<PathBuf>,
    /// CrystalDiskMark's "NVMe SSD" preset: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1.
    #[arg(long)]
    pub nvme: bool,
    /// Add CrystalDiskMark's mixed test (random 4K, 70 % reads, Q1T1).
    #[arg(long)]
    pub mix: bool,
    /// Written data: random (incompressible, fresh per write) or zeros.
    #[arg(long, default_value = "random")]
    pub data: DataKind,
    /// Counted runs per test (their mean is reported).
    #[arg(long, default_value_t = 3)]
    pub count: u32,
    /// Time per counted run: seconds, or with a unit (5s, 1m).
    #[arg(long, default_value_t = 1.5, value_parser = iolab_core::time::parse_seconds)]
    pub duration: f64,
    /// The uncounted warm-up run before each test, seconds or with a unit (0: none).
    #[arg(long, default_value_t = 1.0, value_parser = iolab_core::time::parse_seconds)]
    pub warmup: f64,
    /// Pause between tests, seconds or with a unit (CrystalDiskMark's "interval").
    #[arg(long, default_value_t = 0.0, value_parser = iolab_core::time::parse_seconds)]
    pub interval: f64,
    /// Test span: the test file's size, or the first SIZE bytes of a device.
    #[arg(long, default_value = "1g")]
    pub size: ByteSize,
    /// Only the read tests (nothing is written; fine on any device or file).
    #[arg(long)]
    pub read_only: bool,
    /// Keep the test file iolab created (as iolab-quick.iolab-tmp, which later runs use, and
    /// keep).
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub safety: SafetyFlags,
    #[command(flatten)]
    pub mpi: crate::mpi::ScaleFlags,
}

/// One CrystalDiskMark test as quick plans it; its results carry it as a
/// [`iolab_core::quick::QuickTest`].
struct PlannedTest {
    label: &'static str,
    random: bool,
    block: u64,
    qd: u32,
    threads: u32,
}

fn tests(nvme: bool) -> Vec<PlannedTest> {
    let t = |label, random, block, qd, threads| PlannedTest {
        label,
        random,
        block,
        qd,
        threads,
    };
    if nvme {
        vec![
            t("SEQ1M Q8T1", false, 1 << 20, 8, 1),
            t("SEQ128K Q32T1", false, 128 << 10, 32, 1),
            t("RND4K Q32T16", true, 4096, 32, 16),
            t("RND4K Q1T1", true, 4096, 1, 1),
        ]
    } else {
        vec![
            t("SEQ1M Q8T1", false, 1 << 20, 8, 1),
            t("SEQ1M Q1T1", false, 1 << 20, 1, 1),
            t("RND4K Q32T1", true, 4096, 32, 1),
            t("RND4K Q1T1", true, 4096, 1, 1),
        ]
    }
}

impl QuickArgs {
    fn job(
        &self,
        name: String,
        access: Access,
        block: u64,
        qd: u32,
        threads: u32,
        secs: f64,
    ) -> Result<Job> {
        let spec = JobSpec {
            name: Some(name),
            access: Some(access),
            read_pct: matches!(access, Access::RandRw).then_some(70.0),
            block_size: Some(ByteSize(block)),
            queue_depth: Some(qd),
            threads: Some(threads),
            size: Some(self.size),
            duration_s: Some(secs),
            data: Some(self.data),
            ..JobSpec::default()
        };
        Ok(spec.validate()?)
    }

    /// Every (job name, access, test) in run order: reads, then writes, then the mix.
    fn plan(&self) -> Vec<(String, Access, PlannedTest)> {
        let mut plan = Vec::new();
        for t in tests(self.nvme) {
            let access = if t.random {
                Access::RandRead
            } else {
                Access::Read
            };
            plan.push((format!("{} read", t.label), access, t));
        }
        if !self.read_only {
            for t in tests(self.nvme) {
                let access = if t.random {
                    Access::RandWrite
                } else {
                    Access::Write
                };
                plan.push((format!("{} write", t.label), access, t));
            }
            if self.mix {
                let t = PlannedTest {
                    label: "RND4K Q1T1 R70/W30",
                    random: true,
                    block: 4096,
                    qd: 1,
                    threads: 1,
                };
                plan.push(("RND4K Q1T1 R70/W30 mix".to_string(), Access::RandRw, t));
            }
        }
        plan
    }
}

/// Runs `iolab quick`; returns the exit code.
pub fn run(args: QuickArgs) -> Result<i32> {
    let under_mpi = crate::mpi::coordinated("quick", &args.mpi)?;
    if args.count == 0 {
        anyhow::bail!("--count 0 would measure nothing; use 1 or more");
    }
    // Checked before the target is opened, so a typo costs no test file and no warm-up.
    check_seconds("--duration", args.duration, false)?;
    check_seconds("--warmup", args.warmup, true)?;
    check_seconds("--interval", args.interval, true)?;
    let target = match &args.target {
        Some(target) => target.clone(),
        None => leftover::default_test_file(TEST_FILE_STEM, args.keep),
    };
    let rules = Rules::new(&[&target], args.safety.overwrite);
    session::check_output(args.safety.json.as_deref(), &rules)?;
    crate::fio_out::check(&args.safety, &rules)?;
    let plan = args.plan();
    iolab_engine::sys::install_interrupt_handler();
    // The first writing test (if any) decides what the guard checks and creates the file.
    let (name, access, t) = plan
        .iter()
        .find(|(_, a, _)| !matches!(a, Access::Read | Access::RandRead))
        .unwrap_or(&plan[0]);
    let mut first = args.job(
        name.clone(),
        *access,
        t.block,
        t.qd,
        t.threads,
        args.duration,
    )?;
    if args.target.is_none() && !target.exists() {
        say!(
            "creating a {} test file {} ({})",
            format_size(args.size.0),
            target.display(),
            if args.keep {
                "kept afterwards: --keep"
            } else {
                "removed afterwards"
            }
        );
    }
    if under_mpi {
        let start = crate::mpi::QuickStart {
            args: &args,
            target: &target,
            own: args.target.is_none() && target != leftover::kept_test_file(TEST_FILE_STEM),
            first,
        };
        return crate::mpi::quick(start);
    }
    // CrystalDiskMark measures a test file it has just written: a model starts full.
    let mut subject = Subject::open(
        &target,
        &mut first,
        &args.safety,
        ModelState::Full,
        !args.keep,
    )?;
    let mut result = subject.new_result("quick", !args.safety.no_probe);
    let outcome = run_tests(&args, &mut OneProcess(&mut subject))?;
    outcome.into_result(&mut result);
    subject.describe_into(&mut result);
    finish(&mut result, &args, &rules)
}

/// Settles, prints and saves a quick result; returns the exit code.
pub(crate) fn finish(result: &mut RunResult, args: &QuickArgs, rules: &Rules) -> Result<i32> {
    session::settle(result);
    session::show(
        &iolab_report::terminal::quick_table(result),
        args.safety.stdout_document(),
    );
    let saved = session::save(result, args.safety.json.as_deref(), rules)?;
    say!("result saved to {saved}");
    crate::fio_out::save(result, &args.safety, rules)?;
    Ok(session::exit_code(result))
}

/// Where quick's runs go: one process's target, or every rank's share together. Every call
/// is made at the same point of the tests on every rank.
pub(crate) trait QuickRunner {
    /// Bytes the target offers.
    fn size_bytes(&self) -> u64;
    /// Resolves `job`'s span against the target and checks its alignment.
    fn prepare(&self, job: &mut Job) -> Result<()>;
    /// Waits `seconds` between tests.
    fn idle(&mut self, seconds: f64);
    /// Whether to stop (Ctrl-C).
    fn interrupted(&self) -> bool;
    /// One run of a test (span resolved).
    fn run(&mut self, job: &Job, label: &str, expected_s: Option<f64>) -> Result<JobRun>;
    /// A test's figures from its counted runs (`None`: nothing measured).
    fn combine(&mut self, job: &Job, runs: &[JobRun]) -> Option<JobResult>;
}

/// Quick's runs on one process's target.
struct OneProcess<'a>(&'a mut Subject);

impl QuickRunner for OneProcess<'_> {
    fn size_bytes(&self) -> u64 {
        self.0.size_bytes()
    }

    fn prepare(&self, job: &mut Job) -> Result<()> {
        job.resolve_span(self.0.size_bytes())?;
        job.check_alignment(self.0.logical_block_bytes())?;
        Ok(())
    }

    fn idle(&mut self, seconds: f64) {
        self.0.idle(seconds);
    }

    fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }

    fn run(&mut self, job: &Job, label: &str, expected_s: Option<f64>) -> Result<JobRun> {
        self.0.run_job(job, label, expected_s)
    }

    fn combine(&mut self, job: &Job, runs: &[JobRun]) -> Option<JobResult> {
        mean_of_repeats(job, runs)
    }
}

/// What quick's tests measured, and why they stopped early if they did.
#[derive(Default)]
pub(crate) struct QuickOutcome {
    pub jobs: Vec<JobResult>,
    pub notes: Vec<String>,
    pub incomplete: Option<String>,
}

impl QuickOutcome {
    pub(crate) fn into_result(self, result: &mut RunResult) {
        result.jobs.extend(self.jobs);
        result.notes.extend(self.notes);
        if let Some(why) = self.incomplete {
            result.complete = false;
            result.incomplete_reason = Some(why);
        }
    }
}

/// Runs quick's tests on `runner`: each a warm-up and its counted runs, combined.
pub(crate) fn run_tests(args: &QuickArgs, runner: &mut dyn QuickRunner) -> Result<QuickOutcome> {
    let plan = args.plan();
    let mut out = QuickOutcome::default();
    let per_test = args.warmup + args.count as f64 * args.duration + args.interval;
    let mut left = per_test * plan.len() as f64;
    for (i, (name, access, t)) in plan.iter().enumerate() {
        if runner.interrupted() {
            break;
        }
        if i > 0 && args.interval > 0.0 {
            runner.idle(args.interval);
        }
        let mut runs = Vec::new();
        let mut error = None;
        // Why the warm-up was cut short, if it was: the test then has no counted run.
        let mut warmup_cut = None;
        let stages = (args.warmup > 0.0)
            .then_some(args.warmup)
            .into_iter()
            .chain(std::iter::repeat_n(args.duration, args.count as usize));
        for (stage, secs) in stages.enumerate() {
            if runner.interrupted() {
                break;
            }
            let warmup = stage == 0 && args.warmup > 0.0;
            let mut job = args.job(name.clone(), *access, t.block, t.qd, t.threads, secs)?;
            runner.prepare(&mut job)?;
            let label = if warmup {
                format!("{name} warm-up")
            } else {
                format!("{name} run {}/{}", runs.len() + 1, args.count)
            };
            let outcome = runner.run(&job, &label, Some(left));
            left -= secs;
            match outcome {
                Ok(run) if warmup => {
                    // A warm-up is never a counted run, least of all one cut short: its
                    // figure is of a device not yet warmed up, over part of the time.
                    if !run.result.complete {
                        warmup_cut = Some(
                            run.result
                                .stop_reason
                                .unwrap_or_else(|| "stopped early".into()),
                        );
                        break;
                    }
                }
                Ok(run) => {
                    let stop = !run.result.complete;
                    runs.push(run);
                    if stop {
                        break;
                    }
                }
                Err(e) => {
                    error = Some(format!("{e:#}"));
                    break;
                }
            }
        }
        let job = args.job(
            name.clone(),
            *access,
            t.block,
            t.qd,
            t.threads,
            args.duration,
        )?;
        if let Some(mut combined) = runner.combine(&job, &runs) {
            combined.job.span_bytes = Some(runner.size_bytes().min(args.size.0));
            combined.test = iolab_core::quick::QuickTest::of_access(t.label, *access);
            out.jobs.push(combined);
        }
        if let Some(why) = warmup_cut {
            say!("{name}: stopped during its warm-up ({why}); nothing measured");
            out.notes.push(format!(
                "{name}: stopped during its warm-up ({why}); nothing measured for this test"
            ));
            out.incomplete = Some(format!("job '{name}' warm-up: {why}"));
            break;
        }
        if let Some(e) = error {
            out.incomplete = Some(e);
            break;
        }
        if out.jobs.last().is_some_and(|j| !j.complete) {
            break;
        }
    }
    Ok(out)
}
