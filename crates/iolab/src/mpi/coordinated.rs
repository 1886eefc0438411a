//! `iolab run` as one job of many ranks.
//!
//! Steps, each agreed by every rank before the next (a refusal anywhere stops all, named):
//! who is where (host, local rank, pid); the job file and flags; each rank's share checked by its
//! safety guard before any rank writes (and rank 0's output checked); the share opened (a shared
//! target by rank 0 first, which lays it out); clock offsets to rank 0 by ping-pong. Then each
//! job starts on every rank at one instant rank 0 sets (on each rank's clock, its offset
//! removed); while it runs, rank 0 hears each rank's progress and end, and tells every rank when
//! to stop: when all are done, when the first is done (`--stonewall`), or when one failed.
//! Rank 0 gathers the ranks' results and writes one result, store record and report.
//!
//! **Faults.** A rank whose job fails (an I/O error, a target that went away) makes rank 0
//! stop the others; they report what they measured, and the result names the rank, its host and
//! the reason, marked incomplete. A rank that is killed or crashes cannot report: Open MPI then
//! ends the job, sending every other rank SIGTERM (and SIGKILL after `odls_base_sigkill_timeout`
//! seconds). Rank 0 answers SIGTERM by writing what it has: every earlier job in full, its own
//! result of the current one, and the other ranks' last progress counts (sent every 250 ms),
//! naming the ranks of its host whose process is gone; the other ranks linger briefly so that
//! they are not taken for gone. If rank 0 itself is killed, nothing is written.

use super::comm::{tag, Comm};
use super::outcome::{assemble, interrupted_result, lost_ranks, save, take_reports};
use super::share::{cut_zone, rank_target, RankPlace, Share};
use crate::cmd::run::{open_subject, plan, Plan, RunArgs, SafetyFlags};
use crate::output::Rules;
use crate::session;
use crate::subject::Subject;
use anyhow::{anyhow, Context, Result};
use iolab_core::job::Job;
use iolab_core::result::JobResult;
use iolab_core::scale::{RankFault, RankInfo, RankProgress, StonewallWindow};
use iolab_engine::driver::Progress;
use iolab_engine::runner::{unix_now_ns, JobRun, RunControl};
use iolab_engine::sys::INTERRUPTED;
use mpi::traits::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// From rank 0 setting a job's start to the start: time for every rank to hear it and set up
/// its threads, rings and buffers.
pub(super) const START_LEAD: Duration = Duration::from_millis(250);
/// How often a rank tells rank 0 its running count.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// How long a rank other than 0 waits after SIGTERM before it exits, so that rank 0, looking
/// for the rank whose process is gone, does not take it for one.
pub(super) const LINGER_ON_SIGNAL: Duration = Duration::from_millis(800);

/// Where a rank runs.
#[derive(Serialize, Deserialize)]
struct Identity {
    host: String,
    pid: u32,
}

/// Every rank's place, known to all.
#[derive(Serialize, Deserialize)]
pub(super) struct Roster {
    pub(super) hosts: Vec<String>,
    pub(super) local_ranks: Vec<u32>,
    pub(super) pids: Vec<u32>,
}

/// What a rank tells rank 0 once it is set up.
#[derive(Serialize, Deserialize)]
pub(super) struct RankSetup {
    pub(super) target: String,
    pub(super) clock_offset_ns: i64,
    pub(super) clock_rtt_ns: u64,
}

/// Rank 0's word to each rank while a job runs: one per rank and job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Stop {
    /// Every rank is done: go on.
    Release,
    /// Rank `first` finished first: stop now.
    Stonewall { first: u32 },
    /// Rank `rank` failed: stop now, and stop the run after this job.
    Fault { rank: u32, reason: String },
}

/// A rank's end of a job.
#[derive(Serialize, Deserialize)]
struct Done {
    failure: Option<String>,
}

/// A rank's report of one job.
#[derive(Serialize, Deserialize)]
pub(super) struct JobReport {
    pub(super) result: Option<JobResult>,
    pub(super) error: Option<String>,
    /// When its I/O started, ns since the epoch on rank 0's clock.
    pub(super) started_ns: Option<i64>,
}

/// How a job's watch ended.
pub(super) struct Watch {
    pub(super) interrupted: bool,
    pub(super) stop: Option<Stop>,
}

/// Runs `args` as one coordinated job of every rank mpirun started.
pub fn run(args: RunArgs) -> Result<i32> {
    let (_universe, comm) = super::comm::start()?;
    // Every rank has the same outcome (agreed on, or rank 0's code broadcast); rank 0 says it.
    comm.exit_with(coordinate(&comm, &args))
}

/// What rank 0 keeps of the run as it goes.
pub(super) struct Gathered {
    pub(super) ranks: Vec<RankInfo>,
    pub(super) aggregates: Vec<JobResult>,
    pub(super) windows: Vec<StonewallWindow>,
    pub(super) faults: Vec<RankFault>,
    pub(super) skew_ns: u64,
}

fn coordinate(comm: &Comm, args: &RunArgs) -> Result<i32> {
    let roster = roster(comm)?;
    let hosts = &roster.hosts;
    let planned = plan(args).and_then(|p| {
        if let Some(j) = p.jobs.iter().skip(1).find(|j| j.schedule.together) {
            anyhow::bail!(
                "job '{}': together: jobs at the same time are not coordinated across ranks \
                 yet; under mpirun run them in turn (drop together, or add stonewall)",
                j.name
            );
        }
        if args.journal.power_loss_at.is_some() {
            anyhow::bail!(
                "--power-loss-at is not coordinated across ranks yet; run it without mpirun \
                 (--verify and --verify-journal work under mpirun)"
            );
        }
        if let Some(j) = &args.journal.verify_journal {
            if comm.size > 1 && !j.to_string_lossy().contains("{rank}") {
                anyhow::bail!(
                    "--verify-journal {}: under mpirun each rank keeps its own journal; put \
                     {{rank}} in its name (--verify-journal {}.{{rank}})",
                    j.display(),
                    j.display()
                );
            }
        }
        Ok(p)
    });
    let mut plan = comm.agree(hosts, planned)?;
    let opened = open_rank(comm, &roster, args, &mut plan)?;
    let RankOpened {
        mut subject,
        full_jobs,
        target,
        share,
        journal,
    } = opened;
    let (clock_offset_ns, clock_rtt_ns) = comm.clock_offset();
    let setup = RankSetup {
        target: describe_share(&target, share, &plan.jobs),
        clock_offset_ns,
        clock_rtt_ns,
    };
    let setups = comm.gather(&setup)?;
    let mut frame = if comm.is_root() {
        Some(subject.new_result("run", !args.safety.no_probe))
    } else {
        None
    };
    let mut gathered = setups.as_ref().map(|s| Gathered {
        ranks: rank_infos(&roster, s),
        aggregates: Vec::new(),
        windows: Vec::new(),
        faults: Vec::new(),
        skew_ns: 0,
    });
    let mut last_progress: Vec<Option<RankProgress>> = vec![None; comm.size as usize];
    for (j, job) in plan.jobs.iter().enumerate() {
        let t0: u64 = comm.broadcast(Some(&(unix_now_ns() + START_LEAD.as_nanos() as u64)))?;
        let (run, started, watch) = run_one(
            comm,
            &mut subject,
            |s, ctl| s.run_job_with(job, ctl),
            j,
            t0,
            clock_offset_ns,
            args.scale.stonewall,
            &mut last_progress,
        )?;
        if watch.interrupted {
            if let (Some(g), Some(frame)) = (gathered.as_mut(), frame.take()) {
                let own = run.ok().map(|r| r.result);
                let note = lost_ranks(&roster, comm.size);
                let mut result = assemble(frame, g, &plan, share, args, hosts);
                interrupted_result(&mut result, &full_jobs[j], j, own, &last_progress, note);
                let code = save(&result, args, setups.as_deref().unwrap_or_default(), true);
                // Peers are gone or going: MPI cannot be finalised with them.
                std::process::exit(code);
            }
            std::thread::sleep(LINGER_ON_SIGNAL);
            std::process::exit(session::EXIT_INTERRUPTED);
        }
        let mut run = run;
        if let (Ok(r), Some(j)) = (run.as_mut(), journal.as_deref()) {
            super::journal::name_in(&mut r.result, j);
        }
        let report = job_report(run, &watch, started, clock_offset_ns, hosts);
        let reports = comm.gather(&report)?;
        if let (Some(g), Some(reports)) = (gathered.as_mut(), reports) {
            take_reports(g, &full_jobs[j], reports, t0, &watch, hosts);
        }
        if matches!(watch.stop, Some(Stop::Fault { .. })) {
            break;
        }
    }
    let code = match (gathered.as_mut(), frame) {
        (Some(g), Some(frame)) => {
            let mut result = assemble(frame, g, &plan, share, args, hosts);
            super::journal::note(args, &mut result);
            subject.describe_into(&mut result);
            Some(save(
                &result,
                args,
                setups.as_deref().unwrap_or_default(),
                false,
            ))
        }
        _ => None,
    };
    comm.broadcast(code.as_ref())
}

/// A rank's share, opened once every rank's guard agreed, with its journal.
struct RankOpened {
    subject: Subject,
    /// The jobs with their whole spans (before a zone was cut out of them).
    full_jobs: Vec<Job>,
    target: PathBuf,
    share: Share,
    journal: Option<PathBuf>,
}

/// Every rank's guard and output checks, before any rank writes (a rank's new file is made
/// only once all agree); then each rank's share opened and its journal made.
fn open_rank(comm: &Comm, roster: &Roster, args: &RunArgs, plan: &mut Plan) -> Result<RankOpened> {
    let hosts = &roster.hosts;
    let rank = comm.rank;
    let place = RankPlace {
        rank,
        host: &hosts[rank as usize],
        local_rank: roster.local_ranks[rank as usize],
    };
    let checked = rank_target(&plan.target, &place).and_then(|(target, share)| {
        precheck(&target, &plan.jobs, &args.safety)
            .with_context(|| format!("target {}", target.display()))?;
        let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
        if comm.is_root() {
            let rules = Rules::new(&inputs, args.safety.overwrite);
            session::check_output(args.safety.json.as_deref(), &rules)?;
        }
        let journal = super::journal::check(args, &place, &target, &inputs)?;
        Ok((target, share, journal))
    });
    let (target, share, journal) = comm.agree(hosts, checked)?;
    iolab_engine::sys::install_interrupt_handler();
    let (mut subject, full_jobs) = open_in_turn(comm, hosts, plan, &target, share, args)?;
    let opened = super::journal::open(args, journal.as_deref(), &target, &mut subject);
    let made = opened.as_ref().is_ok_and(|made| *made);
    if let Err(e) = comm.agree(hosts, opened) {
        // A refused run leaves no test file or journal behind on any rank.
        subject.remove_created_on_drop();
        super::journal::remove(journal.as_deref().filter(|_| made));
        return Err(e);
    }
    Ok(RankOpened {
        subject,
        full_jobs,
        target,
        share,
        journal,
    })
}

/// Every rank's place, known to all.
pub(super) fn roster(comm: &Comm) -> Result<Roster> {
    let me = Identity {
        host: iolab_engine::host::host_info().hostname,
        pid: std::process::id(),
    };
    let roster = comm.gather(&me)?.map(|all| roster_of(&all));
    comm.broadcast(roster.as_ref())
}

/// Every rank's host, its rank among its host's, and its pid.
fn roster_of(all: &[Identity]) -> Roster {
    let mut local_ranks = Vec::with_capacity(all.len());
    for (r, id) in all.iter().enumerate() {
        local_ranks.push(all[..r].iter().filter(|o| o.host == id.host).count() as u32);
    }
    Roster {
        hosts: all.iter().map(|i| i.host.clone()).collect(),
        local_ranks,
        pids: all.iter().map(|i| i.pid).collect(),
    }
}

/// The safety guard's checks for writing to `target`, without opening it for writing or
/// creating it: run by every rank before any rank writes.
pub(super) fn precheck(target: &Path, jobs: &[Job], safety: &SafetyFlags) -> Result<()> {
    if crate::subject::is_model(target) {
        return Ok(());
    }
    use iolab_engine::guard;
    use std::os::unix::fs::FileTypeExt;
    guard::check_destroy_data_names_target(target, safety.destroy_data.as_deref())?;
    crate::subject::refuse_unlikely_new_file(target)?;
    let writes = jobs.iter().any(Job::writes);
    match std::fs::metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow!("cannot inspect {}: {e}", target.display())),
        Ok(m) if m.is_file() && writes => {
            guard::check_file_in_use(target)?;
            let file = std::fs::File::open(target)?;
            if !safety.overwrite && !iolab_engine::sys::is_marked_created(&file) {
                return Err(iolab_engine::open::OpenError::NotOurs(target.to_path_buf()).into());
            }
            guard::check_file_opens_for_writing(target)?;
            Ok(())
        }
        Ok(m) if m.file_type().is_block_device() && writes => {
            guard::check_block_write(target, safety.destroy_data.as_deref())?;
            Ok(())
        }
        Ok(_) => Ok(()),
    }
}

/// Opens each rank's share: a shared target by rank 0 first (it lays out a new file), then the
/// others; every rank's own target at once. Returns the subject and the jobs with their whole
/// spans (before a zone was cut out of them).
fn open_in_turn(
    comm: &Comm,
    hosts: &[String],
    plan: &mut Plan,
    target: &Path,
    share: Share,
    args: &RunArgs,
) -> Result<(Subject, Vec<Job>)> {
    let first_round = |r: u32| share != Share::Zones || r == 0;
    let mut opened: Option<(Subject, Vec<Job>)> = None;
    for round in 0..2 {
        let step = if (round == 0) == first_round(comm.rank) {
            open_share(plan, target, share, args, comm).map(|s| {
                opened = Some(s);
            })
        } else {
            Ok(())
        };
        if let Err(e) = comm.agree(hosts, step) {
            // A refused run leaves no test file behind on any rank.
            if let Some((s, _)) = opened.as_mut() {
                s.remove_created_on_drop();
            }
            return Err(e);
        }
    }
    opened.ok_or_else(|| anyhow!("rank {} opened nothing", comm.rank))
}

fn open_share(
    plan: &mut Plan,
    target: &Path,
    share: Share,
    args: &RunArgs,
    comm: &Comm,
) -> Result<(Subject, Vec<Job>)> {
    let shared_device = share == Share::Zones
        && comm.rank > 0
        && std::fs::metadata(target).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_block_device()
        });
    let safety = plan.safety.clone();
    let mut subject = open_subject(plan, target, &safety).map_err(|e| {
        if shared_device && plan.jobs.iter().any(Job::writes) && args.safety.destroy_data.is_none()
        {
            // Each writer of a device holds it exclusively, so the ranks of one host see each
            // other as "another program".
            e.context(format!(
                "several ranks of one host writing zones of {} see each other hold it \
                 exclusively: pass --destroy-data={} to let them share it",
                target.display(),
                target.display()
            ))
        } else {
            e
        }
    })?;
    let full = plan.jobs.clone();
    if share == Share::Zones {
        let sector = subject.logical_block_bytes();
        for job in &mut plan.jobs {
            let align = job.max_block().max(sector);
            if let Err(e) = cut_zone(job, comm.rank, comm.size, align) {
                subject.remove_created_on_drop();
                return Err(e);
            }
        }
    }
    Ok((subject, full))
}

/// What a rank measures, as its result says: its target, or its zone of the shared one.
pub(super) fn describe_share(target: &Path, share: Share, jobs: &[Job]) -> String {
    let path = if crate::subject::is_model(target) {
        target.display().to_string()
    } else {
        session::canonical_path(target)
    };
    match (share, jobs.first()) {
        (Share::Zones, Some(j)) => format!(
            "{path} bytes {}..{}",
            j.offset_bytes,
            j.offset_bytes + j.span()
        ),
        _ => path,
    }
}

pub(super) fn rank_infos(roster: &Roster, setups: &[RankSetup]) -> Vec<RankInfo> {
    setups
        .iter()
        .enumerate()
        .map(|(r, s)| RankInfo {
            rank: r as u32,
            host: roster.hosts[r].clone(),
            local_rank: roster.local_ranks[r],
            pid: roster.pids[r],
            target: s.target.clone(),
            clock_offset_ns: s.clock_offset_ns,
            clock_rtt_ns: s.clock_rtt_ns,
            ..RankInfo::default()
        })
        .collect()
}

/// Runs job `j` on this rank from `t0` (rank 0's clock) by `work` (a job file's job, a trace's
/// requests), under the control it is given, while watching the others; returns the job's
/// outcome, when its I/O started (this rank's clock, ns since the epoch; 0 if it never did)
/// and how the watch ended.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_one(
    comm: &Comm,
    subject: &mut Subject,
    work: impl FnOnce(&mut Subject, RunControl) -> Result<JobRun>,
    j: usize,
    t0: u64,
    clock_offset_ns: i64,
    stonewall: bool,
    last_progress: &mut [Option<RankProgress>],
) -> Result<(Result<JobRun>, u64, Watch)> {
    let local_start = (i128::from(t0) - i128::from(clock_offset_ns)).max(0) as u64;
    let stop = AtomicBool::new(false);
    let progress = Progress::default();
    let started = AtomicU64::new(0);
    let finished: Mutex<Option<Option<String>>> = Mutex::new(None);
    // The job runs on this thread (a model's state stays on the thread that made it); the
    // watch, the only MPI caller meanwhile, on its own (MPI_THREAD_SERIALIZED).
    let (rank, size) = (comm.rank, comm.size);
    let (run, watch) = std::thread::scope(|s| {
        let (stop, finished, progress) = (&stop, &finished, &progress);
        let watcher = s.spawn(move || {
            let comm = Comm::new(mpi::topology::SimpleCommunicator::world());
            debug_assert_eq!((comm.rank, comm.size), (rank, size));
            let ctx = WatchContext {
                comm: &comm,
                job: j as u32,
                stonewall,
                stop,
                finished,
                progress,
            };
            let watch = if comm.is_root() {
                ctx.watch_as_root(last_progress)
            } else {
                ctx.watch_as_rank()
            };
            if watch.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            watch
        });
        let ctl = RunControl {
            stop: Some(stop),
            progress: Some(progress),
            start_at: Some(UNIX_EPOCH + Duration::from_nanos(local_start)),
            started_unix_ns: Some(&started),
            // This rank's own journal, if any, is the subject's (`Subject::run_job_with`).
            journal: None,
            ..RunControl::default()
        };
        let run = work(subject, ctl);
        *lock(finished) = Some(failure_of(&run, stop));
        let watch = watcher
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the watch of the job panicked")));
        (run, watch)
    });
    Ok((run, started.load(Ordering::Relaxed), watch?))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why this rank's job failed, if it did: an error, or a stop it was not told to make.
fn failure_of(run: &Result<JobRun>, stop: &AtomicBool) -> Option<String> {
    match run {
        Err(e) => Some(format!("{e:#}")),
        Ok(r) if !r.result.complete && !stop.load(Ordering::Relaxed) => Some(
            r.result
                .stop_reason
                .clone()
                .unwrap_or_else(|| "stopped early".into()),
        ),
        Ok(_) => None,
    }
}

/// What the watch of one job needs.
struct WatchContext<'a> {
    comm: &'a Comm,
    job: u32,
    stonewall: bool,
    stop: &'a AtomicBool,
    finished: &'a Mutex<Option<Option<String>>>,
    progress: &'a Progress,
}

impl WatchContext<'_> {
    fn own_end(&self) -> Option<Option<String>> {
        lock(self.finished).clone()
    }

    /// Rank 0: hears every rank's progress and end, and sends each rank one [`Stop`].
    fn watch_as_root(&self, last_progress: &mut [Option<RankProgress>]) -> Result<Watch> {
        let comm = self.comm;
        let mut running: Vec<u32> = (1..comm.size).collect();
        let (mut first_done, mut fault, mut sent) = (None, None, None::<Stop>);
        let mut own_done = false;
        loop {
            if INTERRUPTED.load(Ordering::Relaxed) {
                self.stop.store(true, Ordering::Relaxed);
                return Ok(Watch {
                    interrupted: true,
                    stop: sent,
                });
            }
            // Each rank's messages in the order it sent them: its progress, then its end
            // (after which it may already send its report, which is not for here).
            let mut ended = Vec::new();
            for &r in &running {
                while let Some(status) = comm
                    .world
                    .process_at_rank(r as i32)
                    .immediate_probe()
                    .filter(|s| s.tag() != tag::GATHER)
                {
                    let (bytes, _) = comm
                        .world
                        .process_at_rank(r as i32)
                        .receive_vec_with_tag::<u8>(status.tag());
                    if status.tag() == tag::PROGRESS {
                        last_progress[r as usize] = serde_json::from_slice(&bytes).ok();
                    } else if status.tag() == tag::DONE {
                        let done: Done = serde_json::from_slice(&bytes)?;
                        first_done.get_or_insert(r);
                        if let Some(why) = done.failure {
                            fault.get_or_insert((r, why));
                        }
                        ended.push(r);
                        break;
                    }
                }
            }
            running.retain(|r| !ended.contains(r));
            if !own_done {
                if let Some(end) = self.own_end() {
                    own_done = true;
                    first_done.get_or_insert(0);
                    if let Some(why) = end {
                        fault.get_or_insert((0, why));
                    }
                }
            }
            if sent.is_none() {
                let word = match (&fault, first_done) {
                    (Some((rank, reason)), _) => Some(Stop::Fault {
                        rank: *rank,
                        reason: reason.clone(),
                    }),
                    (None, Some(first)) if self.stonewall => Some(Stop::Stonewall { first }),
                    _ if running.is_empty() && own_done => Some(Stop::Release),
                    _ => None,
                };
                if let Some(word) = word {
                    for r in 1..comm.size {
                        comm.send_json(r, tag::STOP, &word);
                    }
                    if !matches!(word, Stop::Release) {
                        self.stop.store(true, Ordering::Relaxed);
                    }
                    sent = Some(word);
                }
            }
            if sent.is_some() && running.is_empty() && own_done {
                return Ok(Watch {
                    interrupted: false,
                    stop: sent,
                });
            }
            Comm::pause();
        }
    }

    /// A rank other than 0: sends its progress and its end, and obeys rank 0's [`Stop`].
    fn watch_as_rank(&self) -> Result<Watch> {
        let comm = self.comm;
        let (mut done_sent, mut told) = (false, None::<Stop>);
        let mut last = Instant::now();
        loop {
            if INTERRUPTED.load(Ordering::Relaxed) {
                self.stop.store(true, Ordering::Relaxed);
                return Ok(Watch {
                    interrupted: true,
                    stop: told,
                });
            }
            if !done_sent {
                if let Some(failure) = self.own_end() {
                    comm.send_json(0, tag::DONE, &Done { failure });
                    done_sent = true;
                } else if last.elapsed() >= PROGRESS_EVERY {
                    let p = RankProgress {
                        job: self.job,
                        ios: self.progress.ios.load(Ordering::Relaxed),
                        bytes: self.progress.bytes.load(Ordering::Relaxed),
                    };
                    comm.send_json(0, tag::PROGRESS, &p);
                    last = Instant::now();
                }
            }
            if told.is_none() {
                if let Some(bytes) = comm.try_receive_from(0, tag::STOP) {
                    let word: Stop = serde_json::from_slice(&bytes)?;
                    if !matches!(word, Stop::Release) {
                        self.stop.store(true, Ordering::Relaxed);
                    }
                    told = Some(word);
                }
            }
            if done_sent && told.is_some() {
                return Ok(Watch {
                    interrupted: false,
                    stop: told,
                });
            }
            Comm::pause();
        }
    }
}

/// This rank's report of a job: a stop it was told to make is no failure of its own.
pub(super) fn job_report(
    run: Result<JobRun>,
    watch: &Watch,
    started: u64,
    clock_offset_ns: i64,
    hosts: &[String],
) -> JobReport {
    let started_ns = (started > 0).then(|| started as i64 + clock_offset_ns);
    match run {
        Err(e) => JobReport {
            result: None,
            error: Some(format!("{e:#}")),
            started_ns,
        },
        Ok(run) => {
            let mut r = run.result;
            settle_own(&mut r, watch, hosts);
            JobReport {
                result: Some(r),
                error: None,
                started_ns,
            }
        }
    }
}

/// A rank's own result of a job once the watch ended: a stonewall's stop completes it, a stop
/// for another rank's fault says whose.
pub(super) fn settle_own(r: &mut JobResult, watch: &Watch, hosts: &[String]) {
    let told_to_stop = r.stop_reason.as_deref() == Some("interrupted");
    match &watch.stop {
        Some(Stop::Stonewall { .. }) if told_to_stop => {
            r.complete = true;
            r.stop_reason = None;
        }
        Some(Stop::Fault { rank, .. }) if told_to_stop => {
            let host = hosts.get(*rank as usize).map_or("?", String::as_str);
            r.stop_reason = Some(format!("stopped because rank {rank} on {host} failed"));
        }
        _ => {}
    }
}
