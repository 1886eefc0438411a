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
use iolab_engine::driver::Progress;
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
            // Writes only stamped are checked by none of this group's jobs.
            if a.verify.is_off() || a.verify == iolab_core::job::VerifyMode::Stamp {
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
            let s = &j.schedule;
            s.cpu_nodes.is_some() || s.cpus.is_some() || s.mem_policy.is_some()
        }) {
            bail!(
                "job '{}': cpus/cpu_nodes/mem_policy place a job's threads and buffers on this \
                 machine's CPUs and NUMA nodes; a model has neither: drop them",
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
        if stop_all {
            for &i in &group {
                out.notes.push(format!(
                    "job '{}' did not run: a job before it ended every job to come \
                     (ends_others = \"all\")",
                    jobs[i].name
                ));
            }
            continue;
        }
        if INTERRUPTED.load(Ordering::Relaxed) || out.failed.is_some() {
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
                    "job '{}' did not run: stopped before it started (by another job's end, \
                     ends_others, or by Ctrl-C)",
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
    // Every job of a flow joins it before any starts, or the first would run alone.
    let members = join_flows(jobs);
    let group = GroupRun {
        target,
        jobs,
        ctl,
        ends: jobs.iter().map(|_| AtomicBool::new(false)).collect(),
        ended: jobs.iter().map(|_| Ended::default()).collect(),
        stop_all: AtomicBool::new(false),
        failed: Mutex::new(None),
        start: SystemTime::now() + SET_UP_MARGIN,
    };
    let label = jobs
        .iter()
        .map(|j| j.name.as_str())
        .collect::<Vec<_>>()
        .join(" + ");
    let expected = jobs
        .iter()
        .filter_map(|j| j.duration_s.map(|d| d + j.ramp_s + j.start_delay_s))
        .reduce(f64::max);
    let mut runs = crate::session::with_progress(&label, expected, |progress| {
        std::thread::scope(|scope| {
            let group = &group;
            let handles: Vec<_> = members
                .into_iter()
                .enumerate()
                .map(|(i, member)| scope.spawn(move || group.run_one(i, member, progress)))
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
    if let Some(name) = group.failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // Cut short by another job's failure: said, not passed off as a whole run.
        for r in runs.iter_mut().flatten().flatten() {
            if r.result.complete && r.result.name != name {
                r.result.complete = false;
                r.result.stop_reason = Some(format!("stopped because job '{name}' failed"));
            }
        }
    }
    (runs, group.stop_all.load(Ordering::Relaxed))
}

/// Each job's place in its flow, if it has one (a flow's jobs share one group).
fn join_flows(jobs: &[&Job]) -> Vec<Option<FlowMember>> {
    let mut flows: BTreeMap<u32, std::sync::Arc<FlowGroup>> = BTreeMap::new();
    jobs.iter()
        .map(|j| {
            j.schedule.flow.map(|f| {
                let group = flows.entry(f.id).or_insert_with(FlowGroup::new);
                FlowMember::join(group, f.weight, f.sleep_ns)
            })
        })
        .collect()
}

/// What the jobs of a group share while they run.
struct GroupRun<'a> {
    target: &'a PreparedTarget,
    jobs: &'a [&'a Job],
    ctl: RunControl<'a>,
    /// Set to end each job as if its time were up.
    ends: Vec<AtomicBool>,
    /// Each job's end, for the jobs that wait for it.
    ended: Vec<Ended>,
    /// Set when a job's end stops every later group too.
    stop_all: AtomicBool,
    /// The job whose failure stopped the others, for their results.
    failed: Mutex<Option<String>>,
    /// When the group's jobs start (each plus its own delay).
    start: SystemTime,
}

impl GroupRun<'_> {
    /// Runs job `i` on a thread of its own: waits for its start (or the job it waits for),
    /// runs it, and stops the jobs its end or failure stops; `None` when it never started.
    fn run_one(
        &self,
        i: usize,
        member: Option<FlowMember>,
        progress: &Progress,
    ) -> Result<Option<JobRun>> {
        let job = self.jobs[i];
        let (ends, ended) = (&self.ends, &self.ended);
        let waits = job
            .schedule
            .wait_for
            .as_ref()
            .and_then(|n| self.jobs[..i].iter().position(|j| &j.name == n));
        let delay = Duration::from_secs_f64(job.start_delay_s);
        let start_at = match waits {
            Some(k) => {
                if !ended[k].wait(&ends[i]) {
                    ended[i].set();
                    return Ok(None);
                }
                SystemTime::now() + delay
            }
            None => self.start + delay,
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
            self.target,
            job,
            RunControl {
                stop: Some(&INTERRUPTED),
                progress: Some(progress),
                start_at: Some(start_at),
                end: Some(&ends[i]),
                flow: member.as_ref(),
                ..self.ctl
            },
        );
        // Out of the flow at once, so the others are not held for it.
        drop(member);
        match (&run, job.schedule.ends_others) {
            // A failure stops the jobs beside it (their results are kept).
            (Err(_), _) => {
                let mut f = self.failed.lock().unwrap_or_else(|e| e.into_inner());
                f.get_or_insert_with(|| job.name.clone());
                drop(f);
                self.stop_others(i, EndsOthers::Running);
            }
            (Ok(_), Some(scope)) => self.stop_others(i, scope),
            (Ok(_), None) => {}
        }
        ended[i].set();
        run.map(Some)
            .map_err(|e| anyhow::anyhow!("job '{}': {e}", job.name))
    }

    /// Stops the jobs job `i`'s end (or failure) stops.
    fn stop_others(&self, i: usize, scope: EndsOthers) {
        for (k, j) in self.jobs.iter().enumerate() {
            let hit = match scope {
                EndsOthers::Group => j.schedule.group == self.jobs[i].schedule.group,
                EndsOthers::Running | EndsOthers::All => true,
            };
            if hit && k != i {
                self.ends[k].store(true, Ordering::Relaxed);
            }
        }
        if scope == EndsOthers::All {
            self.stop_all.store(true, Ordering::Relaxed);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;
    use iolab_engine::open::{prepare_target, EngineChoice, WritePolicy};

    fn job(name: &str, toml: &str) -> Job {
        let mut spec = JobSpec::from_toml(toml, "t.toml").unwrap();
        spec.name = Some(name.into());
        let mut job = spec.validate().unwrap();
        job.resolve_span(4 << 20).unwrap();
        job
    }

    /// Runs `jobs` together on a new 4 MiB file.
    fn run_together(jobs: &[Job]) -> Vec<Result<Option<JobRun>>> {
        let dir = tempfile::tempdir().unwrap();
        let mut layout = jobs[0].clone();
        let target = prepare_target(
            &dir.path().join("t.bin"),
            &mut layout,
            &WritePolicy::default(),
            EngineChoice::Auto,
            None,
        )
        .unwrap();
        let refs: Vec<&Job> = jobs.iter().collect();
        run_group(&target, &refs, RunControl::default()).0
    }

    fn result(run: &Result<Option<JobRun>>) -> &JobResult {
        &run.as_ref().unwrap().as_ref().unwrap().result
    }

    #[test]
    fn jobs_of_a_flow_keep_their_weights_and_an_end_stops_the_others() {
        // a would read for a minute; b's end after 3000 I/Os ends it, and the flow kept it
        // at a third of b's I/Os.
        let jobs = [
            job(
                "a",
                "access = \"randread\"\nsize = \"4m\"\nduration_s = 60\nflow = 1",
            ),
            job(
                "b",
                "access = \"randread\"\nsize = \"4m\"\nios_limit = 3000\nflow = 3\n\
                 together = true\nends_others = \"running\"",
            ),
        ];
        let runs = run_together(&jobs);
        let (a, b) = (result(&runs[0]), result(&runs[1]));
        assert!(
            a.complete && b.complete,
            "{:?} {:?}",
            a.stop_reason,
            b.stop_reason
        );
        assert_eq!(b.read.ios, 3000);
        assert!(
            (900..=1100).contains(&a.read.ios),
            "a did {} I/Os",
            a.read.ios
        );
        assert!(a.measured_ns < 60_000_000_000);
    }

    #[test]
    fn a_failing_job_stops_the_others_which_keep_what_they_measured() {
        let jobs = [
            job("a", "access = \"randread\"\nsize = \"4m\"\nduration_s = 60"),
            // It fails once a has started (failing before, it would keep a from starting).
            job(
                "b",
                "together = true\nsize = \"4m\"\nmem_policy = \"bind:999\"\nstart_delay_s = 0.5",
            ),
        ];
        let runs = run_together(&jobs);
        let e = format!("{:#}", runs[1].as_ref().err().unwrap());
        assert!(e.contains("job 'b'") && e.contains("NUMA node 999"), "{e}");
        let a = result(&runs[0]);
        assert!(!a.complete);
        assert_eq!(
            a.stop_reason.as_deref(),
            Some("stopped because job 'b' failed")
        );
    }

    #[test]
    fn a_job_waits_for_the_one_it_names() {
        // c's end stops every job then running; b waits for a, so it never starts.
        let jobs = [
            job("a", "access = \"randread\"\nsize = \"4m\"\nduration_s = 60"),
            job("b", "together = true\nsize = \"4m\"\nwait_for = \"a\""),
            job(
                "c",
                "together = true\nsize = \"4m\"\nios_limit = 500\nends_others = \"running\"",
            ),
        ];
        let runs = run_together(&jobs);
        assert!(result(&runs[0]).read.ios > 0);
        assert!(runs[1].as_ref().unwrap().is_none(), "b ran");
        assert_eq!(result(&runs[2]).read.ios, 500);
    }

    #[test]
    fn reporting_groups_merge_and_groups_split_at_jobs_in_turn() {
        let mut a = job("a", "group = 0\ngroup_reporting = true");
        let mut b = job("b", "together = true\ngroup = 0\ngroup_reporting = true");
        let c = job("c", "together = true");
        let d = job("d", "size = \"4m\"");
        assert_eq!(
            groups(&[a.clone(), b.clone(), c.clone(), d.clone()]),
            [vec![0, 1, 2], vec![3]]
        );
        let part = |job: &Job, ios: u64| {
            let mut stats = iolab_core::stats::RunStats::new(1_000_000_000);
            for i in 0..ios {
                stats.record(iolab_core::job::Direction::Read, 4096, 1000 + i, i);
            }
            iolab_engine::runner::job_result(
                job,
                &stats,
                1_000_000_000,
                0,
                false,
                None,
                Default::default(),
            )
        };
        a.name = "a".into();
        b.name = "b".into();
        let jobs = [a.clone(), b.clone(), c.clone()];
        let mut notes = Vec::new();
        let out = merge_reporting_groups(
            &jobs,
            vec![(0, part(&a, 10)), (1, part(&b, 30)), (2, part(&c, 5))],
            &mut notes,
        );
        let names: Vec<&str> = out.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(out[0].read.ios, 40);
        assert!(notes[0].contains("jobs a, b"), "{notes:?}");
    }

    #[test]
    fn orders_that_cannot_be_honoured_are_refused() {
        let a = job("a", "size = \"4m\"");
        let e = check(&[a.clone(), job("b", "wait_for = \"z\"")], false).unwrap_err();
        assert!(e.to_string().contains("no job named 'z'"), "{e}");
        let b = job("b", "together = true\nsize = \"4m\"");
        let e = check(&[a.clone(), b.clone()], true).unwrap_err();
        assert!(
            e.to_string().contains("a model runs one job at a time"),
            "{e}"
        );
        check(&[a.clone(), b], false).unwrap();
        let v = job(
            "v",
            "together = true\naccess = \"randwrite\"\nverify = \"end\"\nsize = \"4m\"",
        );
        let w = job("w", "access = \"write\"\nsize = \"4m\"");
        let e = check(&[w.clone(), v.clone()], false).unwrap_err();
        assert!(
            e.to_string().contains("job 'v': verify: job 'w' writes"),
            "{e}"
        );
        let apart = job(
            "v",
            "together = true\naccess = \"randwrite\"\nverify = \"end\"\nsize = \"1m\"\n\
             offset = \"2m\"",
        );
        let w = job("w", "access = \"write\"\nsize = \"1m\"");
        check(&[w, apart], false).unwrap();
    }
}
