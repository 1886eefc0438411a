//! `mpirun -np N iolab suite filecopy DIR`: a file-set suite (it times whole files: create,
//! read, copy near and far) with every rank in directories of its own under the directory
//! given (`iolab-SUITE-PID-rankR.iolab-tmp`, PID rank 0's), or under its own directory from a
//! pattern (`/mnt/{host}/scratch`). Each step starts on every rank at one instant (clock
//! offsets measured and removed, as for `run`), each rank's figures are gathered at rank 0, and
//! the step's aggregate adds the ranks' files and bytes over the common window (from the
//! common start to the last rank's end). A step that fails on a rank is kept, names the rank
//! and its host, and ends the suite; a step runs to its end on each rank (whole files), so `--stonewall`
//! is refused. Rank 0 writes the one result.

use super::comm::Comm;
use super::coordinated::START_LEAD;
use super::coordinated::{rank_infos, roster, Gathered, JobReport, RankSetup, Stop, Watch};
use super::outcome::{add_scale, take_reports};
use super::share::{rank_target, RankPlace, Share};
use super::suite::rules_for;
use crate::cmd::suite::{check_directory_target, check_file_room, RemoveDirsOnDrop, SuiteArgs};
use crate::session;
use anyhow::{bail, Context, Result};
use iolab_core::result::{JobResult, TargetInfo};
use iolab_engine::fileset::{run_file_op, FileOp, FileSet};
use iolab_engine::runner::unix_now_ns;
use iolab_engine::sys::INTERRUPTED;
use iolab_suite::{run_suite, Executor, SkipOrFail, SuiteSpec};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A rank's directories: where its sets are made and copied near, and where they are copied
/// far; removed when dropped unless kept.
struct RankDirs {
    root: PathBuf,
    far: PathBuf,
    cleanup: RemoveDirsOnDrop,
}

/// Runs the file-set suite of `args` as one coordinated run of every rank mpirun started.
pub fn run(
    args: &SuiteArgs,
    suite: &SuiteSpec,
    notes: Vec<String>,
    inputs: Vec<PathBuf>,
) -> Result<i32> {
    let (_universe, comm) = super::comm::start()?;
    // Every rank has the same outcome (agreed on, or rank 0's code broadcast); rank 0 says it.
    comm.exit_with(coordinate(&comm, args, suite, notes, &inputs))
}

fn coordinate(
    comm: &Comm,
    args: &SuiteArgs,
    suite: &SuiteSpec,
    notes: Vec<String>,
    inputs: &[PathBuf],
) -> Result<i32> {
    let roster = roster(comm)?;
    let hosts = &roster.hosts;
    let place = RankPlace {
        rank: comm.rank,
        host: &hosts[comm.rank as usize],
        local_rank: roster.local_ranks[comm.rank as usize],
    };
    let tag: String = comm.broadcast(Some(&format!("{}-{}", suite.name, std::process::id())))?;
    // Every rank's checks and directories, agreed: a refusal anywhere removes them all.
    let made = make_dirs(args, suite, &place, &tag, comm.size);
    let mut dirs = comm.agree(hosts, made)?;
    if args.keep {
        dirs.cleanup.0.clear();
    }
    iolab_engine::sys::install_interrupt_handler();
    let (clock_offset_ns, clock_rtt_ns) = comm.clock_offset();
    let setup = RankSetup {
        target: session::canonical_path(&dirs.root),
        clock_offset_ns,
        clock_rtt_ns,
    };
    let setups = comm.gather(&setup)?;
    let given = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    let share = if given.to_string_lossy().contains('{') {
        Share::OwnTarget
    } else {
        Share::OwnDirectory
    };
    let mut exec = RankDirs::executor(comm, &roster.hosts, &dirs, clock_offset_ns);
    exec.gathered = setups.as_ref().map(|s| Gathered {
        ranks: rank_infos(&roster, s),
        aggregates: Vec::new(),
        windows: Vec::new(),
        faults: Vec::new(),
        skew_ns: 0,
    });
    let outcome = run_suite(suite, args.scale, &mut exec, &mut |_| {});
    let code = exec.gathered.take().map(|g| {
        let info = TargetInfo {
            path: given.display().to_string(),
            kind: "directory".into(),
            engine: "filesystem".into(),
            ..TargetInfo::default()
        };
        let kind = format!("suite:{}", suite.name);
        let mut result = session::new_result_for(&kind, info, notes, !args.safety.no_probe);
        let result = crate::cmd::suite::result_from(&mut result, outcome);
        add_scale(result, &g, share, false, hosts);
        let rules = rules_for(inputs, &[], args.safety.overwrite);
        crate::cmd::suite::finish(result, args, &rules).unwrap_or_else(|e| {
            say!("Error: {e:#}");
            2
        })
    });
    drop(dirs);
    comm.broadcast(code.as_ref())
}

/// This rank's directories under its parent (the directory given, or its own from a pattern),
/// made once the checks pass: the target and `--far` are directories, and hold every rank's
/// sets (each rank checks room for all of them).
fn make_dirs(
    args: &SuiteArgs,
    suite: &SuiteSpec,
    place: &RankPlace,
    tag: &str,
    ranks: u32,
) -> Result<RankDirs> {
    if let Some(far) = args
        .far
        .as_deref()
        .filter(|f| f.to_string_lossy().contains('{'))
    {
        bail!(
            "--far {}: a pattern is for the target; give --far one directory (each rank copies \
             into its own directory there)",
            far.display()
        );
    }
    let given = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    let parent = if given.to_string_lossy().contains('{') {
        rank_target(&given, place)?.0
    } else {
        given
    };
    check_directory_target(suite, &parent, args.far.as_deref())?;
    let far_parent = args.far.clone().unwrap_or_else(|| parent.clone());
    check_file_room(suite, args.scale, &parent, &far_parent, u64::from(ranks))?;
    let r = place.rank;
    let mut dirs = RankDirs {
        root: parent.join(format!("iolab-{tag}-rank{r}.iolab-tmp")),
        far: far_parent.join(format!("iolab-{tag}-rank{r}-far.iolab-tmp")),
        cleanup: RemoveDirsOnDrop(Vec::new()),
    };
    // Each directory is removed as soon as it exists, so a failure to make the next one (or
    // another rank's refusal) leaves nothing behind.
    for d in [dirs.root.clone(), dirs.far.clone()] {
        std::fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
        dirs.cleanup.0.push(d);
    }
    Ok(dirs)
}

impl RankDirs {
    fn executor<'a>(
        comm: &'a Comm,
        hosts: &'a [String],
        dirs: &'a RankDirs,
        clock_offset_ns: i64,
    ) -> RankExecutor<'a> {
        RankExecutor {
            comm,
            hosts,
            dirs,
            clock_offset_ns,
            seed: 1,
            gathered: None,
            failed: None,
        }
    }
}

/// Runs a file-set suite's steps as coordinated steps of every rank.
struct RankExecutor<'a> {
    comm: &'a Comm,
    hosts: &'a [String],
    dirs: &'a RankDirs,
    clock_offset_ns: i64,
    seed: u64,
    /// What rank 0 keeps of the ranks' steps.
    gathered: Option<Gathered>,
    /// Why an earlier step failed on a rank (the suite stops after it, its figures kept).
    failed: Option<String>,
}

impl RankExecutor<'_> {
    /// Runs `op` on this rank's sets from a common start; returns its report.
    fn run_together(&mut self, set: &FileSet, op: FileOp) -> Result<(JobReport, u64)> {
        self.seed += 1;
        // Each rank's own data (seeded apart), as separate writers would have.
        let seed = self.seed + (u64::from(self.comm.rank) << 32);
        let t0: u64 = self
            .comm
            .broadcast(Some(&(unix_now_ns() + START_LEAD.as_nanos() as u64)))?;
        let local = (i128::from(t0) - i128::from(self.clock_offset_ns)).max(0) as u64;
        let now = unix_now_ns();
        if local > now {
            std::thread::sleep(Duration::from_nanos(local - now));
        }
        let started = unix_now_ns();
        let run = run_file_op(&self.dirs.root, &self.dirs.far, set, op, seed);
        let report = JobReport {
            error: run
                .as_ref()
                .err()
                .map(|e| format!("{op:?} in {}: {e}", self.dirs.root.display())),
            result: run.ok(),
            started_ns: Some(started as i64 + self.clock_offset_ns),
        };
        Ok((report, t0))
    }

    /// Rank 0: takes the ranks' reports of a step and returns its aggregate, or why every
    /// rank failed; a rank's failure makes the aggregate incomplete, naming it.
    fn take(&mut self, reports: Vec<JobReport>, t0: u64) -> Option<Result<JobResult, String>> {
        let g = self.gathered.as_mut()?;
        let fault = reports.iter().enumerate().find_map(|(r, rep)| {
            Some(Stop::Fault {
                rank: r as u32,
                reason: rep.error.clone()?,
            })
        });
        let failed: Vec<String> = reports
            .iter()
            .enumerate()
            .filter_map(|(r, rep)| {
                let host = self.hosts.get(r).map_or("?", String::as_str);
                Some(format!("rank {r} on {host}: {}", rep.error.as_deref()?))
            })
            .collect();
        let Some(job) = reports
            .iter()
            .find_map(|r| Some(r.result.as_ref()?.job.clone()))
        else {
            return Some(Err(failed.join("; ")));
        };
        let watch = Watch {
            interrupted: false,
            stop: fault,
        };
        take_reports(g, &job, reports, t0, &watch, self.hosts);
        Some(g.aggregates.last().cloned().ok_or_else(String::new))
    }
}

impl Executor for RankExecutor<'_> {
    fn target_bytes(&self) -> u64 {
        0
    }

    fn run_job(&mut self, _spec: iolab_core::job::JobSpec) -> Result<JobResult, SkipOrFail> {
        Err(SkipOrFail::Skip(
            "block-level jobs need a file or block device target, not a directory".into(),
        ))
    }

    fn file_op(
        &mut self,
        files: &iolab_suite::spec::FilesSpec,
        file_bytes: u64,
    ) -> Result<JobResult, SkipOrFail> {
        if let Some(why) = &self.failed {
            return Err(SkipOrFail::Fail(format!("not run: {why}")));
        }
        let op: FileOp = files.op.parse().map_err(SkipOrFail::Fail)?;
        let set = FileSet {
            name: files.set.clone(),
            count: files.count,
            file_bytes,
        };
        let fail = |e: anyhow::Error| SkipOrFail::Fail(format!("{e:#}"));
        let (report, t0) = self.run_together(&set, op).map_err(fail)?;
        let reports = self.comm.gather(&report).map_err(fail)?;
        let aggregate = reports.and_then(|reports| self.take(reports, t0));
        let aggregate: Result<JobResult, String> =
            self.comm.broadcast(aggregate.as_ref()).map_err(fail)?;
        let aggregate = aggregate.map_err(SkipOrFail::Fail)?;
        // A rank failed: the step is kept, and the suite stops after it.
        if !aggregate.complete {
            self.failed = aggregate.stop_reason.clone();
        }
        Ok(aggregate)
    }

    fn purge(&mut self) -> Result<String, String> {
        Err("a directory target is not purged".into())
    }

    fn idle(&mut self, seconds: f64) {
        crate::subject::sleep_unless_interrupted(seconds);
    }

    fn interrupted(&self) -> bool {
        let mine = INTERRUPTED.load(Ordering::Relaxed);
        let all = self.comm.gather(&mine).ok().flatten();
        let any = all.map(|a| a.iter().any(|b| *b));
        self.comm.broadcast(any.as_ref()).unwrap_or(true)
    }
}
