//! Commands of many steps under mpirun (`suite`, `quick`): every rank opens its share once,
//! then runs each step's job together with the others, as `run` runs each job of a job file
//! (a common start, the watch, stonewalling, faults), and every rank gets the step's aggregate
//! back. The commands decide what to do next from results every rank holds byte for byte
//! alike (rank 0's broadcast), so their loops (a suite's steady state, quick's stops) take the
//! same turns on every rank, judged on the aggregate. Rank 0 keeps each rank's part for the
//! result's ranks and hosts.

use super::comm::Comm;
use super::coordinated::{
    describe_share, job_report, precheck, rank_infos, roster, run_one, settle_own, Gathered,
    JobReport, RankSetup, Roster, Watch, LINGER_ON_SIGNAL, START_LEAD,
};
use super::outcome::{add_scale, interrupted_result, lost_ranks, take_reports};
use super::share::{cut_zone, rank_target, RankPlace, Share};
use crate::cmd::run::SafetyFlags;
use crate::session;
use crate::subject::{ModelState, Subject};
use anyhow::{anyhow, Context, Result};
use iolab_core::job::Job;
use iolab_core::result::{JobResult, RunResult};
use iolab_core::scale::RankProgress;
use iolab_engine::runner::{unix_now_ns, JobRun, RunControl};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How a command opens its target on every rank.
pub(super) struct Opening<'a> {
    /// The target as given (a pattern, a directory, a file, a device or a model).
    pub target: &'a Path,
    /// The target is this rank's own already (a default test file named by its pid).
    pub own: bool,
    /// The job the target is opened for (the first that writes, if any).
    pub first: Job,
    /// The size of the file a rank makes when its target does not exist yet (its span of
    /// `first` then; an existing one is taken whole).
    pub size_if_new: Option<u64>,
    pub safety: &'a SafetyFlags,
    pub state: ModelState,
    pub remove_created: bool,
    pub stonewall: bool,
    /// Rank 0's checks of where its result goes, made with every rank's guard.
    pub check_outputs: &'a dyn Fn() -> Result<()>,
}

/// Whether a step may run: agreed by every rank before it starts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Ready {
    Go,
    /// The step does not fit (every rank skips it).
    Skip(String),
    /// The step cannot run (every rank stops).
    Fail(String),
}

/// One rank's part of a coordinated command of many steps.
pub(super) struct Steps {
    pub comm: Comm,
    roster: Roster,
    pub share: Share,
    pub subject: Subject,
    given: PathBuf,
    clock_offset_ns: i64,
    stonewall: bool,
    setups: Option<Vec<RankSetup>>,
    gathered: Option<Gathered>,
    last_progress: Vec<Option<RankProgress>>,
    /// Steps started so far (the index progress messages carry).
    started_steps: usize,
    /// A signal stopped a step: the other ranks are gone or going (rank 0 only; the others
    /// exit at once).
    pub cut_off: bool,
}

/// One step's run on this rank.
pub(super) struct RankRun {
    pub run: Result<JobRun>,
    pub watch: Watch,
    /// When its I/O started, this rank's clock (0 if it never did).
    pub started: u64,
    /// The common start, rank 0's clock.
    pub t0: u64,
}

impl Steps {
    /// Every rank's guard, then its share opened (a shared target by rank 0 first, which lays
    /// it out), clock offsets measured: a refusal on any rank stops all, before any writes.
    pub fn open(comm: Comm, o: Opening) -> Result<Steps> {
        let roster = roster(&comm)?;
        let hosts = roster.hosts.clone();
        let place = RankPlace {
            rank: comm.rank,
            host: &hosts[comm.rank as usize],
            local_rank: roster.local_ranks[comm.rank as usize],
        };
        let checked = if o.own {
            Ok((o.target.to_path_buf(), Share::OwnTarget))
        } else {
            rank_target(o.target, &place)
        }
        .and_then(|(target, share)| {
            precheck(&target, std::slice::from_ref(&o.first), o.safety)
                .with_context(|| format!("target {}", target.display()))?;
            if comm.is_root() {
                (o.check_outputs)()?;
            }
            Ok((target, share))
        });
        let (target, share) = comm.agree(&hosts, checked)?;
        iolab_engine::sys::install_interrupt_handler();
        let mut opened: Option<Subject> = None;
        let my_round = usize::from(share == Share::Zones && comm.rank > 0);
        for round in 0..2 {
            let step = if round == my_round {
                let mut first = o.first.clone();
                let new = !target.exists() && !crate::subject::is_model(&target);
                if let Some(size) = o.size_if_new.filter(|_| new) {
                    first.set_span(size)?;
                }
                Subject::open(&target, &mut first, o.safety, o.state, o.remove_created)
                    .map(|s| opened = Some(s))
            } else {
                Ok(())
            };
            if let Err(e) = comm.agree(&hosts, step) {
                // A refused run leaves no test file behind on any rank.
                if let Some(s) = opened.as_mut() {
                    s.remove_created_on_drop();
                }
                return Err(e);
            }
        }
        let subject = opened.ok_or_else(|| anyhow!("rank {} opened nothing", comm.rank))?;
        let mut shown = o.first.clone();
        shown.resolve_span(subject.size_bytes()).ok();
        if share == Share::Zones {
            let align = shown.max_block().max(subject.logical_block_bytes());
            cut_zone(&mut shown, comm.rank, comm.size, align).ok();
        }
        let (clock_offset_ns, clock_rtt_ns) = comm.clock_offset();
        let setup = RankSetup {
            target: describe_share(&target, share, std::slice::from_ref(&shown)),
            clock_offset_ns,
            clock_rtt_ns,
        };
        let setups = comm.gather(&setup)?;
        let gathered = setups.as_ref().map(|s| Gathered {
            ranks: rank_infos(&roster, s),
            aggregates: Vec::new(),
            windows: Vec::new(),
            faults: Vec::new(),
            skew_ns: 0,
        });
        let size = comm.size as usize;
        Ok(Steps {
            comm,
            roster,
            share,
            subject,
            given: o.target.to_path_buf(),
            clock_offset_ns,
            stonewall: o.stonewall,
            setups,
            gathered,
            last_progress: vec![None; size],
            started_steps: 0,
            cut_off: false,
        })
    }

    pub fn hosts(&self) -> &[String] {
        &self.roster.hosts
    }

    pub fn is_root(&self) -> bool {
        self.comm.is_root()
    }

    /// Every rank's targets, as inputs the result must not overwrite (rank 0).
    pub fn targets(&self) -> Vec<PathBuf> {
        self.setups
            .iter()
            .flatten()
            .map(|s| PathBuf::from(s.target.split(" bytes ").next().unwrap_or_default()))
            .collect()
    }

    /// This rank's part of `job` (whole-target, span resolved): its zone of a shared target.
    /// A step's byte and I/O limits are of the whole target (a suite's "write the drive
    /// twice"), so each zone takes its part of them.
    pub fn share_of(&self, job: &Job) -> Result<Job> {
        let mut mine = job.clone();
        if self.share == Share::Zones {
            let align = mine.max_block().max(self.subject.logical_block_bytes());
            cut_zone(&mut mine, self.comm.rank, self.comm.size, align)?;
            let ranks = u64::from(self.comm.size);
            mine.io_limit_bytes = mine.io_limit_bytes.map(|b| b.div_ceil(ranks));
            mine.ios_limit = mine.ios_limit.map(|n| n.div_ceil(ranks));
        }
        Ok(mine)
    }

    /// Whether a step may run: a failure on any rank stops all, else a skip on any skips all.
    pub fn agree_ready(&self, mine: Ready) -> Result<Ready> {
        let all = self.comm.gather(&mine)?;
        let verdict = all.map(|all| decide(self.hosts(), &all));
        self.comm.broadcast(verdict.as_ref())
    }

    /// Whether any rank says yes (a signal seen between steps, say).
    pub fn any(&self, mine: bool) -> bool {
        if self.cut_off {
            return true;
        }
        let all = self.comm.gather(&mine).ok().flatten();
        let any = all.map(|a| a.iter().any(|b| *b));
        self.comm.broadcast(any.as_ref()).unwrap_or(true)
    }

    /// Runs this rank's part `mine` of a step from a common start, watched; a rank other than
    /// 0 that a signal stopped exits here (rank 0 is then cut off and saves what it has).
    pub fn start(&mut self, mine: &Job) -> Result<RankRun> {
        self.start_with(|s, ctl| s.run_job_with(mine, ctl))
    }

    /// As [`Steps::start`], the step's I/O made by `work` (a trace's requests, say).
    pub fn start_with(
        &mut self,
        work: impl FnOnce(&mut Subject, RunControl) -> Result<JobRun>,
    ) -> Result<RankRun> {
        let j = self.started_steps;
        self.started_steps += 1;
        let t0: u64 = self
            .comm
            .broadcast(Some(&(unix_now_ns() + START_LEAD.as_nanos() as u64)))?;
        let (mut run, started, watch) = run_one(
            &self.comm,
            &mut self.subject,
            work,
            j,
            t0,
            self.clock_offset_ns,
            self.stonewall,
            &mut self.last_progress,
        )?;
        if watch.interrupted {
            if !self.is_root() {
                std::thread::sleep(LINGER_ON_SIGNAL);
                std::process::exit(session::EXIT_INTERRUPTED);
            }
            self.cut_off = true;
        }
        if let Ok(r) = run.as_mut() {
            settle_own(&mut r.result, &watch, &self.roster.hosts);
        }
        Ok(RankRun {
            run,
            watch,
            started,
            t0,
        })
    }

    /// Gathers every rank's `report` of step `full_job` (started at `t0`) at rank 0, which
    /// keeps the parts and merges them; every rank gets the aggregate, or why no rank had a
    /// result.
    pub fn gather(
        &mut self,
        full_job: &Job,
        report: JobReport,
        t0: u64,
        watch: &Watch,
    ) -> Result<Result<JobResult, String>> {
        if self.cut_off {
            return Ok(Err(
                "interrupted: the ranks were stopped by a signal before they \
                           could report this step"
                    .into(),
            ));
        }
        let reports = self.comm.gather(&report)?;
        let aggregate = match (self.gathered.as_mut(), reports) {
            (Some(g), Some(reports)) => {
                let none: Vec<String> = reports
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.result.is_none())
                    .map(|(r, rep)| {
                        let host = self.roster.hosts.get(r).map_or("?", String::as_str);
                        let why = rep.error.as_deref().unwrap_or("no result");
                        format!("rank {r} on {host}: {why}")
                    })
                    .collect();
                let all_failed = none.len() == reports.len();
                take_reports(g, full_job, reports, t0, watch, &self.roster.hosts);
                Some(if all_failed {
                    Err(none.join("; "))
                } else {
                    g.aggregates.last().cloned().ok_or_else(String::new)
                })
            }
            _ => None,
        };
        self.comm.broadcast(aggregate.as_ref())
    }

    /// Runs step `full_job` (span resolved against this rank's target) on every rank's share
    /// together; every rank gets the aggregate (incomplete, naming the rank, if one failed).
    pub fn run(&mut self, full_job: &Job) -> Result<JobResult> {
        let mine = self.share_of(full_job)?;
        let r = self.start(&mine)?;
        self.finish(full_job, r)
    }

    /// Reports this rank's run `r` of step `full_job` and gathers the step's aggregate, which
    /// every rank gets (incomplete, naming the rank, if one failed).
    pub fn finish(&mut self, full_job: &Job, r: RankRun) -> Result<JobResult> {
        let report = job_report(
            r.run,
            &r.watch,
            r.started,
            self.clock_offset_ns,
            &self.roster.hosts,
        );
        self.gather(full_job, report, r.t0, &r.watch)?
            .map_err(|why| anyhow!(why))
    }

    /// Rank 0 cut off by a signal during the last step (`full_job`): `result` keeps the
    /// steps gathered, its own part `own` of this one, the others' last counts, and names the
    /// ranks of its host whose process is gone.
    pub fn interrupted_into(&self, result: &mut RunResult, full_job: &Job, own: Option<JobResult>) {
        let Some(g) = &self.gathered else { return };
        result.jobs = g.aggregates.clone();
        add_scale(result, g, self.share, self.stonewall, self.hosts());
        let lost = lost_ranks(&self.roster, self.comm.size);
        let j = self.started_steps.saturating_sub(1);
        interrupted_result(result, full_job, j, own, &self.last_progress, lost);
    }

    /// This rank's report of a step it combined itself (quick's mean of runs).
    pub fn report_of(&self, result: Result<JobResult, String>, started: u64) -> JobReport {
        let started_ns = (started > 0).then(|| started as i64 + self.clock_offset_ns);
        match result {
            Ok(r) => JobReport {
                result: Some(r),
                error: None,
                started_ns,
            },
            Err(e) => JobReport {
                result: None,
                error: Some(e),
                started_ns,
            },
        }
    }

    /// Returns every rank's target to "never written": each its own, or a shared one once by
    /// rank 0. Rank 0's word, or the ranks that could not.
    pub fn purge(&mut self, safety: &SafetyFlags) -> Result<String, String> {
        if self.cut_off {
            return Err("interrupted".into());
        }
        let mine = if self.share != Share::Zones || self.is_root() {
            self.subject.purge(safety)
        } else {
            Ok("by rank 0".into())
        };
        let all = self.comm.gather(&mine).ok().flatten();
        let word = all.map(|all| {
            let failed: Vec<String> = all
                .iter()
                .enumerate()
                .filter_map(|(r, p)| p.as_ref().err().map(|e| format!("rank {r}: {e}")))
                .collect();
            match (&all[0], failed.is_empty()) {
                (Ok(done), true) if self.share == Share::Zones => {
                    Ok(format!("{done} (the shared target, once, by rank 0)"))
                }
                (Ok(done), true) => Ok(format!("{done} (each rank its own; rank 0's shown)")),
                _ => Err(failed.join("; ")),
            }
        });
        self.comm
            .broadcast(word.as_ref())
            .unwrap_or_else(|e| Err(format!("{e:#}")))
    }

    /// Rank 0: the ranks and hosts into `result` (whose jobs are the steps' aggregates).
    pub fn describe_into(&self, result: &mut RunResult) {
        let Some(g) = &self.gathered else { return };
        if self.share != Share::Zones {
            result.target.path = self.given.display().to_string();
        }
        add_scale(result, g, self.share, self.stonewall, self.hosts());
    }

    /// Ends the command with rank 0's exit `code` (see [`Comm::exit_with`]); rank 0 cut off by
    /// a signal exits at once (MPI cannot be finalised with the others gone).
    pub fn end(self, code: Option<i32>) -> Result<i32> {
        if self.cut_off {
            std::process::exit(code.unwrap_or(session::EXIT_INTERRUPTED));
        }
        let code = self.comm.broadcast(code.as_ref());
        self.comm.exit_with(code)
    }
}

/// Rank 0's verdict on whether a step may run, from every rank's.
fn decide(hosts: &[String], all: &[Ready]) -> Ready {
    let name = |kind: fn(&Ready) -> Option<&String>| -> Option<String> {
        let said: Vec<(usize, &String)> = all
            .iter()
            .enumerate()
            .filter_map(|(r, v)| Some((r, kind(v)?)))
            .collect();
        let (_, first) = said.first()?;
        if said.len() == all.len() && said.iter().all(|(_, w)| w == first) {
            return Some((*first).clone());
        }
        let host = |r: usize| hosts.get(r).map_or("?", String::as_str);
        let lines: Vec<String> = said
            .iter()
            .map(|(r, why)| format!("rank {r} on {}: {why}", host(*r)))
            .collect();
        Some(lines.join("; "))
    };
    if let Some(why) = name(|v| match v {
        Ready::Fail(w) => Some(w),
        _ => None,
    }) {
        return Ready::Fail(why);
    }
    if let Some(why) = name(|v| match v {
        Ready::Skip(w) => Some(w),
        _ => None,
    }) {
        return Ready::Skip(why);
    }
    Ready::Go
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_anywhere_outranks_a_skip_and_names_the_ranks() {
        let hosts = vec!["a".to_string(), "b".to_string(), "b".to_string()];
        let go = Ready::Go;
        let v = decide(
            &hosts,
            &[go.clone(), Ready::Skip("small".into()), go.clone()],
        );
        assert!(
            matches!(&v, Ready::Skip(w) if w == "rank 1 on b: small"),
            "{v:?}"
        );
        let v = decide(
            &hosts,
            &[
                Ready::Skip("x".into()),
                Ready::Fail("EIO".into()),
                go.clone(),
            ],
        );
        assert!(
            matches!(&v, Ready::Fail(w) if w == "rank 1 on b: EIO"),
            "{v:?}"
        );
        let same = Ready::Skip("512-byte blocks".into());
        let v = decide(&hosts, &[same.clone(), same.clone(), same]);
        assert!(
            matches!(&v, Ready::Skip(w) if w == "512-byte blocks"),
            "{v:?}"
        );
        assert!(matches!(
            decide(&hosts, &[go.clone(), go.clone(), go]),
            Ready::Go
        ));
    }
}
