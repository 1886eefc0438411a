//! Running a job on a prepared real target: one thread per worker, each with its own descriptor
//! and ring, all on one wall-clock time base, merged into one [`JobResult`].

use crate::clock::{Clock, WallClock};
use crate::driver::{
    drive, fill_ahead_slots, plan_workers, DriveOptions, DriveOutcome, Planned, Progress,
    RequestSource, Worker,
};
use crate::open::{EngineChoice, PreparedTarget};
use crate::sys;
use crate::target::Target;
use iolab_core::job::Job;
use iolab_core::lat_target::{DepthSearch, LatencyTargetOutcome};
use iolab_core::prio::Priorities;
use iolab_core::result::{CpuReading, CpuResult, JobResult, RepeatFigures};
use iolab_core::steady_stop::SteadyStopOutcome;
pub use iolab_drive::clock::unix_now_ns;
pub use iolab_drive::run::{job_result, JobRun, RunControl, SERIES_INTERVAL_NS};
use iolab_verify::verifier::JobVerifier;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, Once, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant, SystemTime};

/// Runs `job` (span resolved by [`crate::open::prepare_target`]) on `target`.
pub fn run_job(target: &PreparedTarget, job: &Job, ctl: RunControl) -> io::Result<JobRun> {
    run_workers(target, job, plan_workers(job, 0), ctl)
}

/// Runs `workers` (one thread each, requests from any [`RequestSource`], e.g. a trace) on
/// `target`; `job` gives the limits, ramp, duration, data and error policy.
pub fn run_workers<S: RequestSource + Send>(
    target: &PreparedTarget,
    job: &Job,
    workers: Vec<Worker<S>>,
    ctl: RunControl,
) -> io::Result<JobRun> {
    let verifier = crate::verify::job_verifier(target, job, ctl.journal)?;
    let mut run = run_engine(target, job, workers, ctl, verifier.as_ref())?;
    if let Some(v) = &verifier {
        run.result.verify = Some(crate::verify::finish(target, job, v, ctl.stop));
    }
    Ok(run)
}

/// Runs `workers` on the job's engine.
fn run_engine<S: RequestSource + Send>(
    target: &PreparedTarget,
    job: &Job,
    mut workers: Vec<Worker<S>>,
    ctl: RunControl,
    verify: Option<&JobVerifier>,
) -> io::Result<JobRun> {
    let engine = match job.schedule.engine.as_deref() {
        // A job of its own engine (a fio file whose jobs name different ones); `auto` is the
        // run's choice for this target.
        Some(name) if name != "auto" => EngineChoice::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(target.engine, |(_, e)| *e),
        _ if workers.iter().any(|w| w.source.paced()) => target.paced_engine,
        _ => target.engine,
    };
    match engine {
        EngineChoice::Psync => {
            // A synchronous target completes each I/O inside submit: deeper queues would only
            // serialise behind each other and inflate latency.
            for w in &mut workers {
                w.queue_depth = 1;
            }
            run_threads(target, engine, job, workers, ctl, verify, &sys::cpu_reading)
        }
        EngineChoice::PsyncPerSlot => {
            // Each worker's queue slots become threads that take turns at its request source,
            // so offsets, limits and pacing stay the worker's while each I/O blocks its own
            // thread: the I/O is done by the thread that times it, with no hand-off.
            let mut slots = Vec::new();
            let shared: Vec<SharedSource<S>> = workers
                .into_iter()
                .enumerate()
                .map(|(position, w)| {
                    let mut data = w.data;
                    for _ in 1..w.queue_depth {
                        slots.push((position, w.index, data.fork()));
                    }
                    slots.push((position, w.index, data));
                    SharedSource {
                        source: Mutex::new(w.source),
                        started: Once::new(),
                    }
                })
                .collect();
            let threads = slots
                .into_iter()
                .map(|(position, index, data)| Worker {
                    index,
                    source: SlotSource(&shared[position]),
                    data,
                    queue_depth: 1,
                    spare_slots: 0,
                })
                .collect();
            run_threads(target, engine, job, threads, ctl, verify, &sys::cpu_reading)
        }
        EngineChoice::Uring | EngineChoice::Auto => {
            run_threads(target, engine, job, workers, ctl, verify, &sys::cpu_reading)
        }
    }
}

/// One worker's request source, shared by the threads that serve its queue slots.
struct SharedSource<S> {
    source: Mutex<S>,
    started: Once,
}

/// A queue slot's view of its worker's [`SharedSource`].
struct SlotSource<'a, S>(&'a SharedSource<S>);

impl<S: RequestSource> RequestSource for SlotSource<'_, S> {
    fn paced(&self) -> bool {
        lock(&self.0.source).paced()
    }

    fn next_planned(&mut self) -> Option<Planned> {
        lock(&self.0.source).next_planned()
    }

    fn start_at(&mut self, t_ns: u64) {
        // The first slot to start schedules the worker's paced requests, once.
        self.0
            .started
            .call_once(|| lock(&self.0.source).start_at(t_ns));
    }
}

/// Locks a source; a thread that panicked holding it leaves it usable (its panic is reported).
fn lock<S>(m: &Mutex<S>) -> std::sync::MutexGuard<'_, S> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stack of a worker thread: the driver keeps its state on the heap, and a job on the
/// psync-per-slot engine may start hundreds of threads.
const WORKER_STACK_BYTES: usize = 256 << 10;

/// CPU time so far: the process's and the machine's (tests count something else).
type CpuSeconds<'a> = dyn Fn() -> CpuReading + Sync + 'a;

/// How often the spawning thread looks whether a job's threads all ended while it waits for
/// the end of their ramp.
const RAMP_WATCH: Duration = Duration::from_millis(20);

/// Runs each worker on a thread of its own, with its own descriptor and engine; `cpu` reads
/// the CPU time charged to the job over its measured window.
fn run_threads<S: RequestSource + Send>(
    target: &PreparedTarget,
    engine: EngineChoice,
    job: &Job,
    workers: Vec<Worker<S>>,
    ctl: RunControl,
    verify: Option<&JobVerifier>,
    cpu: &CpuSeconds<'_>,
) -> io::Result<JobRun> {
    // Open every descriptor before starting, so a failure refuses the job before any I/O.
    let targets = open_worker_targets(target, engine, job, workers.len())?;
    let shared = SharedRun::new(job, ctl, verify, workers.len())?;
    let (cpu_before, outcomes, steady) = std::thread::scope(|scope| {
        let handles = shared.spawn(scope, targets, workers);
        // Starts the threads together once all are ready, or releases them to quit.
        let clock = WallClock::with_origin(shared.origin);
        let start = shared
            .gate
            .open(handles.iter().all(Result::is_ok), clock, ctl.start_at);
        if let (Some(_), Some(started)) = (start, ctl.started_unix_ns) {
            started.store(unix_now_ns(), Ordering::Relaxed);
        }
        // CPU is counted over the measured window only, as fio resets its accounting after
        // ramp_time: it is divided by the measured I/Os, and the ramp's CPU made the figure
        // 2.5 times too high with `--ramp 3 --duration 2`. Setting up rings and buffers is
        // not counted either.
        if let Some(start) = start.filter(|_| shared.ramp_ns > 0) {
            wait_for_ramp_end(&handles, start.saturating_add(shared.ramp_ns), &clock);
        }
        let cpu_before = cpu();
        let steady = start.and_then(|start| shared.watch_steady(&handles, start, &clock));
        let outcomes: Vec<io::Result<DriveOutcome>> = handles
            .into_iter()
            .map(|h| {
                h?.join()
                    .unwrap_or_else(|_| Err(io::Error::other("worker thread panicked")))
            })
            .collect();
        (cpu_before, outcomes, steady)
    });
    let cpu = CpuResult::between(cpu_before, cpu());
    let mut run = merge_outcomes(job, outcomes, cpu)?;
    run.result.steady_stop = steady;
    Ok(run)
}

/// Opens one descriptor (and engine) per worker thread; the error names the thread and, when
/// the process ran out of descriptors, what to do.
fn open_worker_targets(
    target: &PreparedTarget,
    engine: EngineChoice,
    job: &Job,
    threads: usize,
) -> io::Result<Vec<Box<dyn Target + Send>>> {
    if threads > 64 {
        sys::raise_open_file_limit();
    }
    (0..threads)
        .map(|i| {
            target.open_worker(job, engine, threads).map_err(|e| {
                let hint = if e.raw_os_error() == Some(libc::EMFILE) {
                    "; raise the limit on open files (ulimit -n) or use --engine io_uring"
                } else {
                    ""
                };
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot open {} for worker thread {} of {threads} (engine {}): {e}{hint}",
                        target.path.display(),
                        i + 1,
                        engine.name()
                    ),
                )
            })
        })
        .collect()
}

/// A worker thread's handle, or why it could not be started.
type WorkerHandle<'scope> = io::Result<ScopedJoinHandle<'scope, io::Result<DriveOutcome>>>;

/// Whether every started thread of the job has ended.
fn all_ended(handles: &[WorkerHandle<'_>]) -> bool {
    handles
        .iter()
        .all(|h| h.as_ref().map_or(true, |h| h.is_finished()))
}

/// Waits until `measure_start` on `clock` (the end of the ramp), or until every thread ended.
fn wait_for_ramp_end(handles: &[WorkerHandle<'_>], measure_start: u64, clock: &WallClock) {
    loop {
        let now = clock.now_ns();
        if now >= measure_start || all_ended(handles) {
            break;
        }
        std::thread::sleep(RAMP_WATCH.min(Duration::from_nanos(measure_start - now)));
    }
}

/// What a job's threads share while it runs: the job's limits and controls, the start gate,
/// the abort flag and one time base. Set up once per job, before any thread starts.
struct SharedRun<'a> {
    job: &'a Job,
    ctl: RunControl<'a>,
    verify: Option<&'a JobVerifier>,
    /// Where the job's threads and buffers live (NUMA), refused before any thread starts.
    placement: Option<crate::numa::Placement>,
    slot_bytes: usize,
    gate: StartGate,
    /// Set by a thread that failed or ended incomplete, to stop the others.
    abort: AtomicBool,
    origin: Instant,
    ramp_ns: u64,
    /// The job's counters when the caller does not watch them (see [`SharedRun::progress`]).
    own_progress: Progress,
    end_at: AtomicU64,
    priorities: Option<Priorities>,
}

impl<'a> SharedRun<'a> {
    fn new(
        job: &'a Job,
        ctl: RunControl<'a>,
        verify: Option<&'a JobVerifier>,
        threads: usize,
    ) -> io::Result<Self> {
        let placement = crate::numa::Placement::of(job)?;
        let priorities = match &job.io_priority {
            Some(p) => Some(p.priorities().map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidInput, format!("io_priority: {e}"))
            })?),
            None => None,
        };
        Ok(SharedRun {
            job,
            ctl,
            verify,
            placement,
            slot_bytes: job.max_block() as usize,
            gate: StartGate::new(threads),
            abort: AtomicBool::new(false),
            origin: Instant::now(),
            ramp_ns: (job.ramp_s * 1e9) as u64,
            own_progress: Progress::default(),
            end_at: AtomicU64::new(u64::MAX),
            priorities,
        })
    }

    /// The job's live counters: the caller's, or its own when a steady-state stop samples
    /// them (they exist only when someone watches).
    fn progress(&self) -> Option<&Progress> {
        self.ctl
            .progress
            .or(self.job.steady_stop.as_ref().map(|_| &self.own_progress))
    }

    /// Starts one thread per worker; stops at the first thread that cannot be started (its
    /// error is the last handle).
    fn spawn<'scope, S: RequestSource + Send + 'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        targets: Vec<Box<dyn Target + Send>>,
        workers: Vec<Worker<S>>,
    ) -> Vec<WorkerHandle<'scope>> {
        let mut handles = Vec::with_capacity(workers.len());
        for (i, (t, w)) in targets.into_iter().zip(workers).enumerate() {
            let spawned = std::thread::Builder::new()
                .stack_size(WORKER_STACK_BYTES)
                .spawn_scoped(scope, move || self.worker_thread(i, t, w));
            match spawned {
                Ok(h) => handles.push(Ok(h)),
                Err(e) => {
                    let n = handles.len();
                    handles.push(Err(io::Error::new(
                        e.kind(),
                        format!("cannot start worker thread {} of the job: {e}", n + 1),
                    )));
                    break;
                }
            }
        }
        handles
    }

    /// One worker thread: sets up its engine, waits at the gate, drives its worker.
    fn worker_thread<S: RequestSource>(
        &self,
        index: usize,
        mut t: Box<dyn Target + Send>,
        mut worker: Worker<S>,
    ) -> io::Result<DriveOutcome> {
        sys::tighten_timer_slack();
        // Placed before its buffers are allocated, so they follow the policy.
        let placed = self.placement.as_ref().map_or(Ok(()), |p| p.apply(index));
        // The ring is built on the thread that uses it (SINGLE_ISSUER).
        if t.fills_ahead() {
            worker.spare_slots = fill_ahead_slots(self.job);
        }
        let slots = worker.queue_depth + worker.spare_slots;
        let prepared = placed.and_then(|()| t.prepare(slots, self.slot_bytes));
        let start = self.gate.ready_then_wait();
        prepared?;
        let Some(start_ns) = start else {
            return Err(io::Error::other("the job's other threads did not start"));
        };
        let clock = WallClock::with_origin(self.origin);
        worker.source.start_at(start_ns);
        let job = self.job;
        let opts = DriveOptions {
            start_ns: Some(start_ns),
            ramp_ns: self.ramp_ns,
            duration_ns: job.duration_s.map(|d| (d * 1e9) as u64),
            drain_end: job.drain_end,
            interval_ns: SERIES_INTERVAL_NS,
            stop: self.ctl.stop,
            abort: Some(&self.abort),
            progress: self.progress(),
            continue_on_error: job.continue_on_error,
            verify: self.verify,
            end: self.ctl.end,
            think: job.schedule.think,
            flow: self.ctl.flow,
            end_at: Some(&self.end_at),
            priorities: self.priorities.as_ref(),
            latency_target: job.latency_target.as_ref(),
            sync: job.sync.as_ref(),
        };
        let out = drive(&mut t, &clock, vec![worker], &opts);
        if out.as_ref().map_or(true, |o| !o.complete) {
            self.abort.store(true, Ordering::Relaxed);
        }
        out
    }

    /// Watches a steady-state stop, if the job has one, until it ends the job or every thread
    /// ended.
    fn watch_steady(
        &self,
        handles: &[WorkerHandle<'_>],
        start: u64,
        clock: &WallClock,
    ) -> Option<SteadyStopOutcome> {
        let (stop, progress) = (self.job.steady_stop.as_ref()?, self.progress()?);
        let ss_ramp_ns = (stop.ramp_s.unwrap_or(0.0) * 1e9) as u64;
        crate::steady::watch(
            stop,
            progress,
            start,
            start + self.ramp_ns.max(ss_ramp_ns),
            clock,
            &self.end_at,
            &|| all_ended(handles),
        )
    }
}

/// Merges the threads' outcomes into the job's result (the first error refuses it).
fn merge_outcomes(
    job: &Job,
    outcomes: Vec<io::Result<DriveOutcome>>,
    cpu: CpuResult,
) -> io::Result<JobRun> {
    let mut merged: Option<DriveOutcome> = None;
    let mut searches = Vec::new();
    let mut syncs: Option<iolab_core::sync::SyncSummary> = None;
    let mut stopped_by: Option<String> = None;
    for o in outcomes {
        let mut o = o?;
        searches.extend(o.depth_search.take());
        if let Some(s) = o.syncs.take() {
            match syncs.as_mut() {
                Some(all) => all.merge(&s),
                None => syncs = Some(s),
            }
        }
        // The first real reason wins over "another thread failed".
        if stopped_by
            .as_deref()
            .is_none_or(|s| s.starts_with("stopped because"))
        {
            if let Some(reason) = &o.stopped_by {
                stopped_by = Some(reason.clone());
            }
        }
        merged = Some(match merged {
            None => o,
            Some(mut m) => {
                m.stats.merge(&o.stats);
                m.measured_ns = m.measured_ns.max(o.measured_ns);
                m.ramp_ns = m.ramp_ns.max(o.ramp_ns);
                m.paced |= o.paced;
                m
            }
        });
    }
    let m = merged.expect("a job has at least one thread");
    let mut result = job_result(
        job,
        &m.stats,
        m.measured_ns,
        m.ramp_ns,
        m.paced,
        stopped_by,
        cpu,
    );
    result.syncs = syncs;
    result.latency_target = job.latency_target.as_ref().map(|t| LatencyTargetOutcome {
        target_us: t.target_us,
        percentile: t.percentile.unwrap_or(100.0),
        depth: searches.iter().map(DepthSearch::settled).collect(),
        tried: searches.into_iter().map(|s| s.tried).collect(),
    });
    Ok(JobRun {
        result,
        stats: m.stats,
    })
}

/// Holds a job's threads until every one has set up its engine, so that no thread's set-up
/// overlaps another's measured I/O, then gives them one start time (a thread the scheduler runs
/// late still measures the job's window, not a later one of its own); or lets them quit if not
/// all of them could be started.
struct StartGate {
    /// Threads ready so far, and the verdict once given (`Some(start)`: go).
    state: Mutex<(usize, Option<Option<u64>>)>,
    /// Wakes the opener as threads get ready (threads never wake each other: with hundreds of
    /// slot threads, one shared condition would wake every waiter for every arrival).
    ready: Condvar,
    /// Wakes the threads when the verdict is given.
    verdict: Condvar,
    expected: usize,
}

impl StartGate {
    fn new(expected: usize) -> Self {
        StartGate {
            state: Mutex::new((0, None)),
            ready: Condvar::new(),
            verdict: Condvar::new(),
            expected,
        }
    }

    /// Called by each thread when set up; returns the start time, or `None` to quit.
    fn ready_then_wait(&self) -> Option<u64> {
        let mut s = lock(&self.state);
        s.0 += 1;
        if s.0 == self.expected {
            self.ready.notify_one();
        }
        loop {
            if let Some(verdict) = s.1 {
                return verdict;
            }
            s = self.verdict.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Called once by the spawning thread: with `go`, waits until every thread is ready (and
    /// the wall clock reaches `at`, if given), then releases them all at `clock`'s now, which
    /// it returns; without, releases those started, to quit.
    fn open(&self, go: bool, clock: WallClock, at: Option<SystemTime>) -> Option<u64> {
        let mut s = lock(&self.state);
        while go && s.0 < self.expected {
            s = self.ready.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        if let Some(at) = at.filter(|_| go) {
            wait_until(at);
        }
        let start = go.then(|| clock.now_ns());
        s.1 = Some(start);
        self.verdict.notify_all();
        start
    }
}

/// Waits until the wall clock reaches `at`: asleep until shortly before, then yielding, so
/// that processes waiting for one instant leave within microseconds of it.
fn wait_until(at: SystemTime) {
    const SPIN: Duration = Duration::from_micros(300);
    while let Ok(left) = at.duration_since(SystemTime::now()) {
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::thread::yield_now();
        }
    }
}

/// Combines repeated runs of one job into one result whose rates are the **mean of the runs**
/// (CrystalDiskMark reports the maximum; KDiskMark's default profile and iolab the mean) and
/// whose latency statistics cover every counted I/O. Each run's figures stay in `repeats`.
pub fn mean_of_repeats(job: &Job, runs: &[JobRun]) -> Option<JobResult> {
    let first = runs.first()?;
    let mut stats = first.stats.clone();
    for r in &runs[1..] {
        stats.merge(&r.stats);
    }
    let n = runs.len() as f64;
    let measured_total: u64 = runs.iter().map(|r| r.result.measured_ns).sum();
    let stop_reason = runs.iter().find_map(|r| r.result.stop_reason.clone());
    let mut out = job_result(
        job,
        &stats,
        measured_total,
        runs.iter().map(|r| r.result.ramp_ns).sum(),
        runs.iter().any(|r| r.result.latency_from_intended_start),
        stop_reason,
        CpuResult::sum(runs.iter().map(|r| &r.result.cpu)),
    );
    // Each run weighs by the time it measured, so a last run cut short counts for the time it
    // ran, not as a whole run (equal runs: the plain mean, as KDiskMark's).
    let weight = |r: &JobRun| {
        if measured_total > 0 {
            r.result.measured_ns as f64 / measured_total as f64
        } else {
            1.0 / n
        }
    };
    let mean =
        |f: &dyn Fn(&JobResult) -> f64| runs.iter().map(|r| weight(r) * f(&r.result)).sum::<f64>();
    for (dir, pick) in [
        (
            &mut out.read,
            (|r: &JobResult| &r.read) as fn(&JobResult) -> &iolab_core::result::DirectionResult,
        ),
        (&mut out.write, |r: &JobResult| &r.write),
    ] {
        dir.iops = mean(&|r| pick(r).iops);
        dir.bw_bytes_per_s = mean(&|r| pick(r).bw_bytes_per_s);
        dir.bw_mb_per_s = dir.bw_bytes_per_s / 1e6;
        dir.bw_mib_per_s = dir.bw_bytes_per_s / (1u64 << 20) as f64;
    }
    // Merged bins would add runs second by second; lay the runs' series end to end instead.
    out.series = first.result.series.clone();
    out.series.t_end_s.clear();
    let mut t0 = 0.0;
    let s = &mut out.series;
    for (i, r) in runs.iter().enumerate() {
        let rs = &r.result.series;
        if i > 0 {
            s.read_iops.extend_from_slice(&rs.read_iops);
            s.write_iops.extend_from_slice(&rs.write_iops);
            s.read_bytes_per_s.extend_from_slice(&rs.read_bytes_per_s);
            s.write_bytes_per_s.extend_from_slice(&rs.write_bytes_per_s);
            s.mean_lat_ns.extend_from_slice(&rs.mean_lat_ns);
        }
        s.t_end_s.extend(rs.t_end_s.iter().map(|t| t0 + t));
        t0 += r.result.measured_ns as f64 / 1e9;
    }
    out.repeats = runs.iter().map(|r| RepeatFigures::of(&r.result)).collect();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open::{prepare_target, WritePolicy};
    use iolab_core::job::{Direction, JobSpec};
    use std::time::UNIX_EPOCH;

    /// The job `toml` describes, prepared on a new file in `dir` with `engine`.
    fn prepared(dir: &std::path::Path, toml: &str, engine: EngineChoice) -> (Job, PreparedTarget) {
        let path = dir.join("t.iolab-tmp");
        let mut job = JobSpec::from_toml(toml, "test.toml")
            .unwrap()
            .validate()
            .unwrap();
        let target =
            prepare_target(&path, &mut job, &WritePolicy::default(), engine, None).unwrap();
        (job, target)
    }

    fn run_on_file(toml: &str, engine: EngineChoice) -> JobResult {
        let dir = tempfile::tempdir().unwrap();
        let (job, target) = prepared(dir.path(), toml, engine);
        assert_eq!(target.engine, engine);
        run_job(&target, &job, RunControl::default())
            .unwrap()
            .result
    }

    #[test]
    fn a_run_counts_what_other_processes_did_on_the_machine_meanwhile() {
        // A busy loop in another process for the whole run: its user time is the others',
        // not the run's own. Ended on drop, also when the test fails.
        struct Busy(std::process::Child);
        impl Drop for Busy {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let busy = Busy(
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        );
        let r = run_on_file(
            "size = \"8m\"\nduration_s = 0.5\nqueue_depth = 1",
            EngineChoice::Uring,
        );
        drop(busy);
        assert!(r.complete, "{:?}", r.stop_reason);
        let others = r.cpu.others_user_s.expect("Linux has /proc/stat");
        assert!(r.cpu.steal_s.is_some());
        // Half a second at most; a tenth of it even on a crowded machine.
        assert!(
            (0.05..=1.0).contains(&others),
            "others' user time {others} s"
        );
    }

    /// A last run cut short counts for the time it ran: two runs of 1 s at 1000 and 2000
    /// IOPS and one of 0.1 s at 9000 had a mean of 4000 IOPS, as if the last were whole.
    #[test]
    fn repeated_runs_weigh_by_the_time_they_measured() {
        let dir = tempfile::tempdir().unwrap();
        let (job, target) = prepared(
            dir.path(),
            "size = \"1m\"\nios_limit = 8",
            EngineChoice::Psync,
        );
        let run = |iops: f64, ms: u64| {
            let mut r = run_job(&target, &job, RunControl::default()).unwrap();
            r.result.read.iops = iops;
            r.result.read.bw_bytes_per_s = iops * 4096.0;
            r.result.measured_ns = ms * 1_000_000;
            r
        };
        let runs = [run(1000.0, 1000), run(2000.0, 1000), run(9000.0, 100)];
        let mean = mean_of_repeats(&job, &runs).unwrap();
        let expected = (1000.0 + 2000.0 + 9000.0 * 0.1) / 2.1;
        assert!(
            (mean.read.iops - expected).abs() < 1e-6,
            "{}",
            mean.read.iops
        );
        assert!((mean.read.bw_bytes_per_s - expected * 4096.0).abs() < 1e-3);
        // Equal runs: the plain mean.
        let runs = [run(1000.0, 500), run(2000.0, 500)];
        let mean = mean_of_repeats(&job, &runs).unwrap();
        assert!((mean.read.iops - 1500.0).abs() < 1e-6, "{}", mean.read.iops);
    }

    #[test]
    fn psync_says_it_does_not_keep_a_queue() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iolab-tmp");
        let notes = |qd: u32| {
            let text = format!("size = \"1m\"\nqueue_depth = {qd}");
            let mut job = JobSpec::from_toml(&text, "test.toml")
                .unwrap()
                .validate()
                .unwrap();
            prepare_target(
                &path,
                &mut job,
                &WritePolicy::default(),
                EngineChoice::Psync,
                None,
            )
            .unwrap()
            .notes
        };
        assert!(
            notes(8)
                .iter()
                .any(|n| n.contains("queue depth of 8 is not kept")),
            "{:?}",
            notes(8)
        );
        assert!(notes(1).iter().all(|n| !n.contains("queue depth")));
    }

    #[test]
    fn the_gate_gives_every_thread_one_start_or_none() {
        for go in [true, false] {
            let gate = StartGate::new(4);
            let starts: Vec<Option<u64>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4).map(|_| s.spawn(|| gate.ready_then_wait())).collect();
                gate.open(go, WallClock::new(), None);
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(starts.iter().all(|s| *s == starts[0] && s.is_some() == go));
        }
    }

    #[test]
    fn a_job_given_a_start_time_starts_no_earlier_and_says_when() {
        let dir = tempfile::tempdir().unwrap();
        let (job, target) = prepared(
            dir.path(),
            "size = \"1m\"\nios_limit = 8",
            EngineChoice::Auto,
        );
        let at = SystemTime::now() + Duration::from_millis(120);
        let started = AtomicU64::new(0);
        let ctl = RunControl {
            start_at: Some(at),
            started_unix_ns: Some(&started),
            ..RunControl::default()
        };
        let r = run_job(&target, &job, ctl).unwrap().result;
        assert!(r.complete, "{:?}", r.stop_reason);
        let at_ns = at.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        let started = started.load(Ordering::Relaxed);
        assert!(started >= at_ns, "started {started} before {at_ns}");
    }

    #[test]
    fn zeros_in_a_mix_write_zeros_although_reads_reuse_the_buffers() {
        // A read into a slot's buffer used to leave the slot marked as holding zeros, so the
        // next writes from it carried the data just read: on a file of random content, a
        // 50/50 mix of 10,000 I/Os left about a third of the blocks it wrote non-zero.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.iolab-tmp");
        let policy = WritePolicy {
            overwrite: true,
            ..WritePolicy::default()
        };
        let job = |text: &str| {
            JobSpec::from_toml(text, "test.toml")
                .unwrap()
                .validate()
                .unwrap()
        };
        let cases = [
            (EngineChoice::Uring, 1),
            (EngineChoice::Uring, 16),
            (EngineChoice::Psync, 1),
            (EngineChoice::PsyncPerSlot, 4),
        ];
        for (engine, qd) in cases {
            // A file of random content (a fresh one each time: the last case wrote zeros).
            let _ = std::fs::remove_file(&path);
            let mut fill = job("size = \"4m\"");
            prepare_target(&path, &mut fill, &policy, engine, None).unwrap();
            let mut mix = job(&format!(
                "access = \"randrw\"\nread_pct = 50\ndata = \"zeros\"\nqueue_depth = {qd}\n\
                 ios_limit = 4000\nthreads = 2"
            ));
            let target = prepare_target(&path, &mut mix, &policy, engine, None).unwrap();
            let r = run_job(&target, &mix, RunControl::default())
                .unwrap()
                .result;
            assert!(r.complete, "{engine:?}: {:?}", r.stop_reason);
            assert_eq!(r.read.ios + r.write.ios, 4000);
            // The blocks the job wrote: its workers' requests, replayed from the seed.
            let mut written = std::collections::BTreeSet::new();
            for mut w in plan_workers(&mix, 0) {
                while let Some(p) = w.source.next_planned() {
                    if p.req.dir == Direction::Write {
                        written.insert(p.req.offset / 4096);
                    }
                }
            }
            let content = std::fs::read(&path).unwrap();
            let blocks: Vec<&[u8]> = content.chunks(4096).collect();
            let not_zero = written
                .iter()
                .filter(|&&b| blocks[b as usize].iter().any(|&x| x != 0))
                .count();
            assert_eq!(
                not_zero,
                0,
                "{engine:?} QD{qd}: {not_zero} of the {} blocks written hold non-zero data",
                written.len()
            );
            // The others still hold the random fill: the file did not start as zeros.
            assert!((0..blocks.len() as u64)
                .filter(|b| !written.contains(b))
                .all(|b| blocks[b as usize].iter().any(|&x| x != 0)));
        }
    }

    #[test]
    fn cpu_time_is_taken_over_the_measured_window_only() {
        // CPU read as 1 µs per completed I/O, the ramp's too: over the measured window that is
        // 1 µs per measured I/O. Taken from before the ramp, as it was, it came to
        // (ramp + duration) / duration = 5 µs, the ramp's CPU divided by I/Os it did not count.
        let dir = tempfile::tempdir().unwrap();
        let (job, target) = prepared(
            dir.path(),
            "size = \"8m\"\nramp_s = 1.0\nduration_s = 0.25",
            EngineChoice::Auto,
        );
        let progress = Progress::default();
        let ios_as_cpu = || CpuReading {
            user_s: progress.ios.load(Ordering::Relaxed) as f64 * 1e-6,
            ..CpuReading::default()
        };
        let ctl = RunControl {
            progress: Some(&progress),
            ..RunControl::default()
        };
        let workers = plan_workers(&job, 0);
        let r = run_threads(
            &target,
            target.engine,
            &job,
            workers,
            ctl,
            None,
            &ios_as_cpu,
        )
        .unwrap()
        .result;
        assert!(r.complete && r.read.ios > 0, "{:?}", r.stop_reason);
        let per_io = r.cpu.user_s * 1e6 / r.read.ios as f64;
        // A little either way: the window's edges are sampled by another thread.
        assert!((0.5..1.5).contains(&per_io), "{per_io:.2} µs per I/O");
    }

    #[test]
    fn a_steady_job_ends_early_and_complete_and_says_when() {
        // Any deviation under ten times the mean is met by the first full window of two
        // samples: the job ends long before its 30 s, complete, with the window it judged.
        let text = "size = \"4m\"\nthreads = 2\nduration_s = 30\n\
                    steady_stop = { criterion = \"iops:1000%\", window_s = 0.2, interval_s = 0.1 }";
        for engine in [EngineChoice::Uring, EngineChoice::Psync] {
            let r = run_on_file(text, engine);
            assert!(r.complete, "{:?}", r.stop_reason);
            let ss = r.steady_stop.expect("the stop's outcome");
            assert!(ss.attained, "{ss:?}");
            assert_eq!(ss.window.len(), 2);
            assert!(r.measured_ns < 30_000_000_000, "{}", r.measured_ns);
            assert!(r.read.ios > 0);
        }
        // A criterion never met: the job runs its duration and says it was not steady.
        let r = run_on_file(
            "size = \"4m\"\nduration_s = 0.5\n\
             steady_stop = { criterion = \"iops_slope:0.0000001\", window_s = 0.2, interval_s = 0.1 }",
            EngineChoice::Uring,
        );
        let ss = r.steady_stop.expect("the stop's outcome");
        assert!(!ss.attained && r.complete, "{ss:?}");
        assert_eq!(r.measured_ns, 500_000_000);
    }

    #[test]
    fn syncs_follow_every_n_writes_and_the_end_and_are_counted() {
        // 256 writes of 4 KiB, a sync every 16 and one at the end; reads never count.
        for engine in [EngineChoice::Uring, EngineChoice::Psync] {
            let r = run_on_file(
                "access = \"write\"\nsize = \"1m\"\nqueue_depth = 8\n\
                 sync = { every_writes = 16, data_only = true, at_end = true }",
                engine,
            );
            assert!(r.complete, "{:?}", r.stop_reason);
            let s = r.syncs.expect("the syncs");
            assert_eq!((s.count, s.failed), (17, 0), "{engine:?}");
            assert_eq!(s.call, iolab_core::sync::SyncCall::Fdatasync);
            assert!(s.max_ns > 0 && s.mean_ns <= s.max_ns as f64);
        }
        let r = run_on_file(
            "access = \"randrw\"\nsize = \"1m\"\nios_limit = 100\nread_pct = 100\n\
             sync = { every_writes = 4 }",
            EngineChoice::Uring,
        );
        assert_eq!(r.syncs.map(|s| s.count), Some(0));
    }

    #[test]
    fn slot_threads_share_their_workers_sequence() {
        // One pass over 4 MiB in 64 KiB reads by 2 workers of 4 slots each: if each slot made
        // its own pass, 4 times as much would be read.
        let r = run_on_file(
            "access = \"read\"\nblock_size = \"64k\"\nqueue_depth = 4\nthreads = 2\nsize = \"4m\"",
            EngineChoice::PsyncPerSlot,
        );
        assert!(r.complete, "{:?}", r.stop_reason);
        assert_eq!((r.read.ios, r.read.bytes), (64, 4 << 20));
    }

    #[test]
    fn slot_threads_keep_the_io_limit_and_the_mix() {
        let r = run_on_file(
            "access = \"randrw\"\nread_pct = 70\nqueue_depth = 8\nios_limit = 4000\nsize = \"8m\"",
            EngineChoice::PsyncPerSlot,
        );
        assert!(r.complete, "{:?}", r.stop_reason);
        assert_eq!(r.read.ios + r.write.ios, 4000);
        let read_share = r.read.ios as f64 / 4000.0;
        assert!((read_share - 0.7).abs() < 0.05, "read share {read_share}");
    }
}
