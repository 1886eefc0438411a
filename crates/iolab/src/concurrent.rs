//! Running a file's jobs as fio does: jobs marked `together` start at the same time as the job
//! before them (one group, up to the next job that is not `together`: fio's `stonewall`), each
//! with its own worker threads on the one target, sharing Ctrl-C; `wait_for` holds a job until
//! the named one ends; a job's end may stop others (`ends_others`: fio's `exitall`); jobs of
//! one `flow` share their progress; and `group_reporting` merges a group's results.

use crate::subject::{sleep_unless_interrupted, Subject};
use anyhow::{bail, Result};
use iolab_core::job::Job;
use iolab_core::result::JobResult;
use iolab_core::schedule::EndsOthers;
use iolab_engine::flow::{FlowGroup, FlowMember};
use iolab_engine::open::PreparedTarget;
use iolab_engine::runner::{run_job, JobRun, RunControl};
use iolab_engine::sys::INTERRUPTED;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

/// How long before the common start the jobs of a group are set up: opening descriptors and
/// rings takes milliseconds, so every job is ready and none starts ahead of the others.
const SET_UP_MARGIN: Duration = Duration::from_millis(150);

/// The groups of jobs that run at the same time, by index, in order.
pub fn groups(jobs: &[Job]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        match out.last_mut() {
            Some(g) if job.schedule.together => g.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

/// Refuses what the jobs' order cannot honour: a `wait_for` naming no job before it, and jobs
/// that run at the same time on a model.
pub fn check(jobs: &[Job], on_model: bool) -> Result<()> {
    for (i, job) in jobs.iter().enumerate() {
        if let Some(name) = &job.schedule.wait_for {
            if !jobs[..i].iter().any(|j| &j.name == name) {
                bail!(
                    "job '{}': wait_for: no job named '{name}' comes before it; name an \
                     earlier job",
                    job.name
                );
            }
        }
    }
    for group in groups(jobs) {
        for (n, &i) in group.iter().enumerate() {
            let a = &jobs[i];
            if a.verify.is_off() {
                continue;
            }
            let writer = group
                .iter()
                .take(n)
                .chain(group.iter().skip(n + 1))
                .map(|&k| &jobs[k])
                .find(|b| b.writes() && overlap(a, b));
            if let Some(b) = writer {
                bail!(
                    "job '{}': verify: job '{}' writes to the same blocks at the same time, and \
                     its writes would be counted as corruption; give them separate spans \
                     (offset and size), or run them in turn",
                    a.name,
                    b.name
                );
            }
        }
    }
    if on_model {
        if let Some(job) = jobs.iter().find(|j| {
            !j.schedule.is_default()
                && (j.schedule.cpu_nodes.is_some() || j.schedule.mem_policy.is_some())
        }) {
            bail!(
                "job '{}': cpu_nodes/mem_policy place a job's threads and buffers on this \
                 machine's NUMA nodes; a model has neither: drop them",
                job.name
            );
        }
        if let Some(job) = jobs.iter().skip(1).find(|j| j.schedule.together) {
            bail!(
                "job '{}': together: a model runs one job at a time in its virtual time, and \
                 jobs at the same time would each need the drive's time and queues to \
                 themselves; run them in turn (drop `together`, or add stonewall to a fio \
                 job), or on a file or device",
                job.name
            );
        }
        if let Some(job) = jobs.iter().find(|j| j.schedule.flow.is_some()) {
            bail!(
                "job '{}': flow: a flow ties jobs that run at the same time, which a model \
                 does not do; drop flow",
                job.name
            );
        }
    }
    Ok(())
}

/// Whether two jobs' spans may share blocks (unknown spans are taken to).
fn overlap(a: &Job, b: &Job) -> bool {
    match (a.span_bytes, b.span_bytes) {
        (Some(sa), Some(sb)) => {
            a.offset_bytes < b.offset_bytes.saturating_add(sb)
                && b.offset_bytes < a.offset_bytes.saturating_add(sa)
        }
        _ => true,
    }
}

/// Refuses a job placed on a NUMA node this machine does not have, before anything runs.
pub fn check_placement(jobs: &[Job]) -> Result<()> {
    for job in jobs {
        iolab_engine::numa::Placement::of(job)
            .map_err(|e| anyhow::anyhow!("job '{}': {e}", job.name))?;
    }
    Ok(())
}

/// What a run of the jobs gave.
#[derive(Default)]
pub struct Outcome {
    /// Results, in the jobs' order (a reporting group's merged into one).
    pub results: Vec<JobResult>,
    /// Notes for the result (jobs stopped before they started, groups merged).
    pub notes: Vec<String>,
    /// The first job that failed, and why; the jobs running beside it were stopped.
    pub failed: Option<String>,
}

/// Runs `jobs` on `subject`, group by group; `on_result` sees each job's result first (to add
/// to it and say it).
pub fn run(
    subject: &mut Subject,
    jobs: &[Job],
    on_result: &mut dyn FnMut(&Job, &mut JobResult),
) -> Outcome {
    let mut out = Outcome::default();
    let mut stop_all = false;
    for group in groups(jobs) {
        if INTERRUPTED.load(Ordering::Relaxed) || stop_all || out.failed.is_some() {
            break;
        }
        let members: Vec<&Job> = group.iter().map(|&i| &jobs[i]).collect();
        let runs: Vec<(usize, Result<Option<JobRun>>)> = if group.len() == 1 {
            let job = members[0];
            let expected = job.duration_s.map(|d| d + job.ramp_s);
            vec![(
                group[0],
                subject.run_job(job, &job.name, expected).map(Some),
            )]
        } else {
            match subject.real_target() {
                Some((target, journal)) => {
                    let ctl = RunControl {
                        journal,
                        ..RunControl::default()
                    };
                    let (runs, all) = run_group(target, &members, ctl);
                    out.notes.push(format!(
                        "jobs {} ran at the same time; the CPU time each reports is the whole \
                         process's over its window",
                        members
                            .iter()
                            .map(|j| format!("'{}'", j.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    stop_all |= all;
                    group.iter().copied().zip(runs).collect()
                }
                None => {
                    out.failed = Some(
                        "jobs that run at the same time need a file or device, not a model".into(),
                    );
                    break;
                }
            }
        };
        let mut finished: Vec<(usize, JobResult)> = Vec::new();
        for (i, run) in runs {
            let job = &jobs[i];
            match run {
                Ok(Some(mut r)) => {
                    on_result(job, &mut r.result);
                    if job.schedule.ends_others == Some(EndsOthers::All) && group.len() == 1 {
                        stop_all = true;
                    }
                    finished.push((i, r.result));
                }
                Ok(None) => out.notes.push(format!(
                    "job '{}' did not run: another job's end stopped it before it started \
                     (ends_others)",
                    job.name
                )),
                Err(e) => {
                    if out.failed.is_none() {
                        out.failed = Some(format!("{e:#}"));
                    }
                }
            }
        }
        out.results
            .extend(merge_reporting_groups(jobs, finished, &mut out.notes));
    }
    out
}

/// A group's results with those of each reporting group (`group_reporting`) merged into one,
/// named after its first job.
fn merge_reporting_groups(
    jobs: &[Job],
    finished: Vec<(usize, JobResult)>,
    notes: &mut Vec<String>,
) -> Vec<JobResult> {
    let mut out: Vec<JobResult> = Vec::new();
    let mut merged: BTreeMap<u32, Vec<(usize, JobResult)>> = BTreeMap::new();
    let mut order: Vec<Result<JobResult, u32>> = Vec::new();
    for (i, r) in finished {
        let s = &jobs[i].schedule;
        match s.group.filter(|_| s.group_reporting) {
            Some(g) => {
                if !merged.contains_key(&g) {
                    order.push(Err(g));
                }
                merged.entry(g).or_default().push((i, r));
            }
            None => order.push(Ok(r)),
        }
    }
    for item in order {
        match item {
            Ok(r) => out.push(r),
            Err(g) => {
                let parts = merged.remove(&g).unwrap_or_default();
                if parts.len() == 1 {
                    out.extend(parts.into_iter().map(|(_, r)| r));
                    continue;
                }
                let first = &jobs[parts[0].0];
                let results: Vec<&JobResult> = parts.iter().map(|(_, r)| r).collect();
                let mut one = iolab_core::scale::merge_job_results(first, &results);
                let names: Vec<&str> = parts.iter().map(|(i, _)| jobs[*i].name.as_str()).collect();
                notes.push(format!(
                    "job '{}': the results of jobs {} run at the same time, merged \
                     (group_reporting)",
                    first.name,
                    names.join(", ")
                ));
                one.name.clone_from(&first.name);
                out.push(one);
            }
        }
    }
    out
}

/// One job's end, for jobs that wait for it.
#[derive(Default)]
struct Ended {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Ended {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits for the end, or for `stop`; whether the end came.
    fn wait(&self, stop: &AtomicBool) -> bool {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            if stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
                return false;
            }
            done = self
                .cv
                .wait_timeout(done, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// Runs the jobs of one group at the same time on `target`; each job's run (`None`: stopped
/// before it started), and whether a job's end stopped every job to come (`ends_others =
/// "all"`).
fn run_group(
    target: &PreparedTarget,
    jobs: &[&Job],
    ctl: RunControl,
) -> (Vec<Result<Option<JobRun>>>, bool) {
    let ends: Vec<AtomicBool> = jobs.iter().map(|_| AtomicBool::new(false)).collect();
    let ended: Vec<Ended> = jobs.iter().map(|_| Ended::default()).collect();
    let stop_all = AtomicBool::new(false);
    // The job whose failure stopped the others, for their results.
    let failed: Mutex<Option<String>> = Mutex::new(None);
    // Every job of a flow joins it before any starts, or the first would run alone.
    let mut flows: BTreeMap<u32, std::sync::Arc<FlowGroup>> = BTreeMap::new();
    let members: Vec<Option<FlowMember>> = jobs
        .iter()
        .map(|j| {
            j.schedule.flow.map(|f| {
                let group = flows.entry(f.id).or_insert_with(FlowGroup::new);
                FlowMember::join(group, f.weight, f.sleep_ns)
            })
        })
        .collect();
    let start = SystemTime::now() + SET_UP_MARGIN;
    let label = jobs
        .iter()
        .map(|j| j.name.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let expected = jobs
        .iter()
        .filter_map(|j| j.duration_s.map(|d| d + j.ramp_s + j.start_delay_s))
        .reduce(f64::max);
    // Stops the jobs a job's end (or failure) stops.
    let stop_others = |i: usize, scope: EndsOthers| {
        for (k, j) in jobs.iter().enumerate() {
            let hit = match scope {
                EndsOthers::Group => j.schedule.group == jobs[i].schedule.group,
                EndsOthers::Running | EndsOthers::All => true,
            };
            if hit && k != i {
                ends[k].store(true, Ordering::Relaxed);
            }
        }
        if scope == EndsOthers::All {
            stop_all.store(true, Ordering::Relaxed);
        }
    };
    let runs = crate::session::with_progress(&label, expected, |progress| {
        std::thread::scope(|scope| {
            let handles: Vec<_> = members
                .into_iter()
                .enumerate()
                .map(|(i, member)| {
                    let (job, ends, ended, stop_others) = (jobs[i], &ends, &ended, &stop_others);
                    let failed = &failed;
                    let waits = job
                        .schedule
                        .wait_for
                        .as_ref()
                        .and_then(|n| jobs[..i].iter().position(|j| &j.name == n));
                    scope.spawn(move || {
                        let delay = Duration::from_secs_f64(job.start_delay_s);
                        let start_at = match waits {
                            Some(k) => {
                                if !ended[k].wait(&ends[i]) {
                                    ended[i].set();
                                    return Ok(None);
                                }
                                SystemTime::now() + delay
                            }
                            None => start + delay,
                        };
                        // Asleep until just before its start, ending early on a stop.
                        let early = start_at.checked_sub(SET_UP_MARGIN).unwrap_or(start_at);
                        if let Ok(left) = early.duration_since(SystemTime::now()) {
                            sleep_unless(left, &ends[i]);
                        }
                        if ends[i].load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
                            ended[i].set();
                            return Ok(None);
                        }
                        let run = run_job(
                            target,
                            job,
                            RunControl {
                                stop: Some(&INTERRUPTED),
                                progress: Some(progress),
                                start_at: Some(start_at),
                                end: Some(&ends[i]),
                                flow: member.as_ref(),
                                ..ctl
                            },
                        );
                        // Out of the flow at once, so the others are not held for it.
                        drop(member);
                        match (&run, job.schedule.ends_others) {
                            // A failure stops the jobs beside it (their results are kept).
                            (Err(_), _) => {
                                let mut f = failed.lock().unwrap_or_else(|e| e.into_inner());
                                f.get_or_insert_with(|| job.name.clone());
                                drop(f);
                                stop_others(i, EndsOthers::Running);
                            }
                            (Ok(_), Some(scope)) => stop_others(i, scope),
                            (Ok(_), None) => {}
                        }
                        ended[i].set();
                        run.map(Some)
                            .map_err(|e| anyhow::anyhow!("job '{}': {e}", job.name))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a job's thread panicked")))
                })
                .collect::<Vec<_>>()
        })
    });
    let mut runs = runs;
    if let Some(name) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // Cut short by another job's failure: said, not passed off as a whole run.
        for r in runs.iter_mut().flatten().flatten() {
            if r.result.complete && r.result.name != name {
                r.result.complete = false;
                r.result.stop_reason = Some(format!("stopped because job '{name}' failed"));
            }
        }
    }
    (runs, stop_all.load(Ordering::Relaxed))
}

/// Sleeps `d` in short steps, ending early when `stop` is set or on Ctrl-C.
fn sleep_unless(d: Duration, stop: &AtomicBool) {
    let end = std::time::Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let left = end.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        sleep_unless_interrupted(left.min(Duration::from_millis(100)).as_secs_f64());
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
    }
}
