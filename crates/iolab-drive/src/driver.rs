//! The driver: keeps every worker's queue full, stamps and records every I/O.
//!
//! One driver loop serves one or more workers over one [`Target`]. The real runner gives each
//! thread its own target (its own ring) and one worker; a model runs all workers through one
//! driver over one simulated target in virtual time. Either way the loop is the same:
//!
//! 1. top up each worker to its queue depth with requests whose intended time has come,
//! 2. submit them as one batch, stamped once,
//! 3. reap at least one completion (or wait for the next intended start), stamped once per batch,
//! 4. record each completion's latency unless it finished during the ramp.
//!
//! Latency runs from submission, or — for paced workloads (rate limits, trace timestamps) —
//! from the intended start, so a stalled device shows up in the latency instead of silently
//! lowering the offered load (no coordinated omission).

use crate::clock::Clock;
use crate::target::{Completion, IoReq, Target};
use iolab_core::data::DataGenerator;
use iolab_core::job::{byte_share, Direction, Job, VerifyMode};
use iolab_core::lat_target::{DepthSearch, LatencyTarget, Step};
use iolab_core::prio::Priorities;
use iolab_core::rng::Rng;
use iolab_core::stats::RunStats;
use iolab_core::sync::{SyncCall, SyncPolicy, SyncSummary};
use iolab_core::workload::{worker_seed, IoGenerator, IoRequest};
use iolab_verify::verifier::JobVerifier;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A request and the time it is meant to start (ns on the driver's clock), if paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The request.
    pub req: IoRequest,
    /// Intended start; `None` means "as soon as a queue slot is free".
    pub at_ns: Option<u64>,
}

/// Where a worker's requests come from: a job's generator, or a trace.
pub trait RequestSource {
    /// The next request, or `None` when the source is exhausted.
    fn next_planned(&mut self) -> Option<Planned>;
    /// Schedules paced requests from `t_ns` on (the moment the worker actually starts): the
    /// source's intended times are offsets from it.
    fn start_at(&mut self, t_ns: u64) {
        let _ = t_ns;
    }
    /// Whether requests carry intended start times (rate limits, timed replay).
    fn paced(&self) -> bool {
        false
    }
}

/// A job's requests for one worker, with its share of the job's limits and rate.
#[derive(Clone, Debug)]
pub struct JobSource {
    gen: IoGenerator,
    ios_left: Option<u64>,
    bytes_left: Option<u64>,
    /// Nanoseconds between intended starts when paced by I/O rate.
    ns_per_io: Option<f64>,
    /// Nanoseconds per byte when paced by bandwidth.
    ns_per_byte: Option<f64>,
    /// How long after the job's start this worker's paced schedule begins.
    stagger_ns: f64,
    next_at: f64,
    /// Draws the exponential gaps of Poisson arrivals, where the job asks for them.
    poisson: Option<Rng>,
}

impl RequestSource for JobSource {
    fn paced(&self) -> bool {
        self.ns_per_io.is_some() || self.ns_per_byte.is_some()
    }

    fn start_at(&mut self, t_ns: u64) {
        self.next_at = t_ns as f64 + self.stagger_ns;
    }

    // Always inlined: returned through memory, the request was written field by field and
    // read back 16 bytes at a time, a store-forwarding stall per request (perf).
    #[inline(always)]
    fn next_planned(&mut self) -> Option<Planned> {
        if self.ios_left == Some(0) || self.bytes_left == Some(0) {
            return None;
        }
        let mut req = self.gen.next_request();
        // A TRIM that a write of the same range follows (fio's trimwrite) is not charged:
        // the budget counts the bytes written, so one pass trims and writes the whole span.
        let charged = !(req.dir == Direction::Trim && self.gen.trims_then_writes());
        if let Some(left) = self.bytes_left.as_mut() {
            // The last I/O of a byte budget is the largest of the job's blocks that fits what
            // is left; when none does, the budget is spent (a remainder is not issued: a cut
            // block would not be one of the job's, and a device may refuse it).
            if req.len > *left {
                match self.gen.largest_within(*left) {
                    Some(len) => {
                        req.len = len;
                        self.gen.shrink_pending(len);
                    }
                    None => {
                        *left = 0;
                        return None;
                    }
                }
            }
            if charged {
                *left -= req.len;
            }
        }
        if let Some(left) = self.ios_left.as_mut() {
            *left -= 1;
        }
        let at_ns = if self.ns_per_io.is_some() || self.ns_per_byte.is_some() {
            let at = self.next_at;
            // Both caps hold: the tighter one spaces this request from the next.
            let gap = self
                .ns_per_io
                .unwrap_or(0.0)
                .max(self.ns_per_byte.unwrap_or(0.0) * req.len as f64);
            // A Poisson process: exponential gaps of the same mean (1 − u is never 0).
            let scale = self
                .poisson
                .as_mut()
                .map_or(1.0, |r| -(1.0 - r.unit()).ln());
            self.next_at += gap * scale;
            Some(at as u64)
        } else {
            None
        };
        Some(Planned { req, at_ns })
    }
}

/// One worker of a job: its request source, data and queue depth.
pub struct Worker<S = JobSource> {
    /// Worker index within the job.
    pub index: u32,
    /// Its requests.
    pub source: S,
    /// Fills its write buffers.
    pub data: DataGenerator,
    /// I/Os it keeps in flight.
    pub queue_depth: u32,
}

/// The workers of a job whose span is resolved. `start_ns` is when the run begins on the
/// driver's clock (paced requests are scheduled from it).
pub fn plan_workers(job: &Job, start_ns: u64) -> Vec<Worker> {
    let n = job.threads;
    // Budgets in whole granules: a share that is not a multiple of every block size ends in
    // a short I/O, which a device opened with O_DIRECT refuses (EINVAL) and a model would
    // count as a full one.
    let granule = job.granule();
    // The job's rate as one schedule: worker `i` starts `i` intervals of the job's late, so
    // the workers' requests interleave instead of leaving together.
    let by_ios = job.rate_iops.map(|r| 1e9 / r);
    let by_bytes = job
        .rate_bytes_per_s
        .map(|r| 1e9 * granule as f64 / r as f64);
    let job_interval_ns = match (by_ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    (0..n)
        .map(|i| {
            let gen = IoGenerator::new(job, i);
            // Without a duration or a limit a job makes one pass over its span.
            let default_bytes = if job.one_pass() {
                Some(if job.zones {
                    let (lo, hi) = gen.range();
                    byte_share(hi - lo, granule, 1, 0)
                } else {
                    byte_share(job.span(), granule, n, i)
                })
            } else {
                None
            };
            let per_worker_rate = |r: f64| r / n as f64;
            let stagger_ns = job_interval_ns.map_or(0.0, |d| d * i as f64);
            Worker {
                index: i,
                source: JobSource {
                    gen,
                    // I/Os are shared as bytes in granules of one.
                    ios_left: job.ios_limit.map(|t| byte_share(t, 1, n, i)),
                    bytes_left: job
                        .io_limit_bytes
                        .map(|t| byte_share(t, granule, n, i))
                        .or(default_bytes),
                    ns_per_io: job.rate_iops.map(|r| 1e9 / per_worker_rate(r)),
                    ns_per_byte: job
                        .rate_bytes_per_s
                        .map(|r| 1e9 / per_worker_rate(r as f64)),
                    stagger_ns,
                    next_at: start_ns as f64 + stagger_ns,
                    poisson: job
                        .rate_poisson
                        .then(|| Rng::new(worker_seed(job.seed, i) ^ 0x9015_5011)),
                },
                data: DataGenerator::new(job, worker_seed(job.seed, i)),
                queue_depth: job.queue_depth,
            }
        })
        .collect()
}

/// Shared counters a progress display reads while a run goes on.
#[derive(Debug, Default)]
pub struct Progress {
    /// Completed I/Os so far (all workers, ramp included).
    pub ios: AtomicU64,
    /// Completed bytes so far.
    pub bytes: AtomicU64,
    /// Measured I/Os so far (after the ramp), whose latencies `lat_ns` adds up.
    pub measured_ios: AtomicU64,
    /// Sum of the measured I/Os' latencies, ns (a steady-state stop on latency samples it).
    pub lat_ns: AtomicU64,
}

/// How a drive ends.
pub struct DriveOptions<'a> {
    /// When the run starts on the clock (threads of one job share it, so they measure one
    /// window); `None`: when the drive begins.
    pub start_ns: Option<u64>,
    /// Ramp time from the start, excluded from statistics.
    pub ramp_ns: u64,
    /// Measured time after the ramp; `None` runs until every source is exhausted.
    pub duration_ns: Option<u64>,
    /// Width of the series bins.
    pub interval_ns: u64,
    /// Stop issuing when set (Ctrl-C); what completed is kept.
    pub stop: Option<&'a AtomicBool>,
    /// Stop issuing when set because another worker of the same job failed.
    pub abort: Option<&'a AtomicBool>,
    /// Live counters, if someone is watching.
    pub progress: Option<&'a Progress>,
    /// Count I/O errors and go on.
    pub continue_on_error: bool,
    /// Stamps writes and checks them read back (the job's `verify`).
    pub verify: Option<&'a JobVerifier>,
    /// Stop issuing when set, as if the job's time were up (another job's end ends this one:
    /// fio's `exitall`); the job is complete, not interrupted.
    pub end: Option<&'a AtomicBool>,
    /// Pauses between I/Os (the job's `think_s`).
    pub think: Option<iolab_core::schedule::Think>,
    /// The job's place in a flow shared with jobs running beside it.
    pub flow: Option<&'a crate::flow::FlowMember>,
    /// The job's I/O priorities, where it sets any.
    pub priorities: Option<&'a Priorities>,
    /// An earlier end of the measured time, set while the job runs (a steady-state stop);
    /// `u64::MAX` until then. The job ends there complete, as at the end of its duration.
    pub end_at: Option<&'a AtomicU64>,
    /// Search the deepest queue that meets this latency target (fio's latency-target mode).
    pub latency_target: Option<&'a LatencyTarget>,
    /// Sync written data every N writes and at the end (fio's `fsync`, `end_fsync`).
    pub sync: Option<&'a SyncPolicy>,
}

/// What a drive measured.
#[derive(Debug)]
pub struct DriveOutcome {
    /// Statistics of the measured period.
    pub stats: RunStats,
    /// Length of the measured period in ns.
    pub measured_ns: u64,
    /// Ramp actually excluded, in ns.
    pub ramp_ns: u64,
    /// False when stopped early (interrupt or error).
    pub complete: bool,
    /// Why it stopped early.
    pub stopped_by: Option<String>,
    /// Whether latency counted from intended starts.
    pub paced: bool,
    /// Where a latency-target search got to.
    pub depth_search: Option<DepthSearch>,
    /// The syncs issued, where the job asks for them.
    pub syncs: Option<SyncSummary>,
}

#[derive(Clone, Copy)]
struct InFlight {
    worker: u32,
    dir: Direction,
    offset: u64,
    len: u32,
    /// Latency origin: submission or intended start.
    origin_ns: u64,
    /// When it was submitted.
    submit_ns: u64,
    /// The generation a verified write carries, or that its inline read-back expects (0: not
    /// verified).
    generation: u64,
    /// An inline read-back of a verified write: checked, not counted.
    check: bool,
}

struct WorkerState<S> {
    w: Worker<S>,
    inflight: u32,
    /// Planned, not yet submitted, oldest first.
    pending: VecDeque<Planned>,
    /// The source has nothing more to plan.
    exhausted: bool,
    free_tags: Vec<u32>,
    /// Verified writes waiting for their inline read-back: offset, length, generation.
    rechecks: VecDeque<(u64, u32, u64)>,
    /// I/Os counted towards the next think pause.
    think_count: u32,
    /// Issues nothing before this time (a think pause, or held back by its flow).
    hold_until: u64,
    /// Draws which I/Os go at which priority.
    prio_rng: Rng,
}

impl<S> WorkerState<S> {
    /// Nothing left to submit.
    fn drained(&self) -> bool {
        self.exhausted && self.pending.is_empty()
    }
}

/// Runs `workers` over `target` until their sources end, the duration passes, `stop` is set or
/// an error stops it.
pub fn drive<T, C, S>(
    target: &mut T,
    clock: &C,
    workers: Vec<Worker<S>>,
    opts: &DriveOptions,
) -> std::io::Result<DriveOutcome>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
    S: RequestSource,
{
    let needs_data = target.capabilities().needs_data;
    let plan_ahead = target.plan_ahead().max(1);
    let total_slots: u32 = workers.iter().map(|w| w.queue_depth).sum();
    let mut states: Vec<WorkerState<S>> = Vec::with_capacity(workers.len());
    let mut next_tag = 0u32;
    for (position, mut w) in workers.into_iter().enumerate() {
        let prio_rng = Rng::new(0x7072_696f ^ u64::from(w.index));
        // From here on a worker is known by its position, so completions find it in O(1).
        w.index = position as u32;
        let tags = (next_tag..next_tag + w.queue_depth).rev().collect();
        next_tag += w.queue_depth;
        states.push(WorkerState {
            w,
            inflight: 0,
            pending: VecDeque::with_capacity(plan_ahead),
            exhausted: false,
            free_tags: tags,
            rechecks: VecDeque::new(),
            think_count: 0,
            hold_until: 0,
            prio_rng,
        });
    }
    let mut table = vec![
        InFlight {
            worker: 0,
            dir: Direction::Read,
            offset: 0,
            len: 0,
            origin_ns: 0,
            submit_ns: 0,
            generation: 0,
            check: false,
        };
        total_slots as usize
    ];
    let start_ns = opts.start_ns.unwrap_or_else(|| clock.now_ns());
    if let Some(v) = opts.verify {
        v.set_clock(clock.now_ns(), crate::clock::unix_now_ns() / 1000);
    }
    let mut measure_start = start_ns + opts.ramp_ns;
    let mut end_ns = opts.duration_ns.map(|d| measure_start + d);
    let mut stats = RunStats::new(opts.interval_ns);
    let mut batch: Vec<IoReq> = Vec::with_capacity(total_slots as usize);
    let mut done: Vec<Completion> = Vec::with_capacity(total_slots as usize);
    let mut inflight_total = 0u32;
    let mut stopped_by: Option<String> = None;
    // Ended by another job (`end`): measured up to then, as a timed job up to its end.
    let mut ended = false;
    let mut last_done_ns = measure_start;
    let mut paced = false;
    // Per slot, how many leading bytes hold the constant data (zeros) already, so a constant
    // pattern is written into a buffer once rather than for every write. A read into the slot
    // overwrites it with what it read: the count goes back to 0, or the next writes would
    // carry the data just read (`--data zeros` wrote non-zero blocks in a mix).
    let mut const_filled = vec![0u32; total_slots as usize];
    let max_depth = states.iter().map(|s| s.w.queue_depth).max().unwrap_or(1);
    let mut search = opts.latency_target.map(|t| LatencySearch {
        search: DepthSearch::new(t, max_depth),
        target_ns: (t.target_us * 1e3) as u64,
        window_ns: (t.window_s * 1e9) as u64,
        window_start: start_ns,
        ios: 0,
        over: 0,
        quiescing: None,
    });
    let mut depth_cap = search.as_ref().map_or(u32::MAX, |s| s.search.depth());
    let mut syncs = opts.sync.map(|p| SyncSummary {
        call: if p.data_only {
            SyncCall::Fdatasync
        } else {
            SyncCall::Fsync
        },
        ..SyncSummary::default()
    });
    let sync_every = opts.sync.and_then(|p| p.every_writes);
    let (mut writes_since_sync, mut sync_due) = (0u64, false);

    loop {
        if let Some(at) = opts.end_at.map(|a| a.load(Ordering::Relaxed)) {
            if at != u64::MAX {
                end_ns = Some(end_ns.map_or(at, |e| e.min(at)));
            }
        }
        let now = clock.now_ns();
        if let Some(s) = search.as_mut() {
            if s.quiescing.is_some() && inflight_total == 0 {
                // Drained: the next window counts only I/Os issued at its depth.
                let last = s.quiescing.take() == Some(true);
                (s.window_start, s.ios, s.over) = (now, 0, 0);
                depth_cap = s.search.depth();
                if last {
                    // The job's figures are this last window's, at the depth found.
                    if now > measure_start {
                        measure_start = now;
                        stats = RunStats::new(opts.interval_ns);
                        last_done_ns = now;
                    }
                    let end = measure_start + s.window_ns;
                    end_ns = Some(end_ns.map_or(end, |e| e.min(end)));
                }
            } else if s.quiescing.is_none() && now >= s.window_start + s.window_ns {
                let before = depth_cap;
                match s.search.window(s.ios, s.over) {
                    // Deeper: go on at once. Shallower, or the last window: let the deeper
                    // queue drain first (as fio does), or its latencies count against the
                    // shallower one.
                    Step::Try(d) if d >= before => {
                        depth_cap = d;
                        (s.window_start, s.ios, s.over) = (now, 0, 0);
                    }
                    Step::Try(_) => (s.quiescing, depth_cap) = (Some(false), 0),
                    Step::FinalWindow(_) => (s.quiescing, depth_cap) = (Some(true), 0),
                    Step::Done => {}
                }
            }
        }
        if sync_due && inflight_total == 0 {
            // The writes before it have all completed: the sync covers exactly them.
            sync_due = false;
            if let Err(e) = sync_target(target, clock, opts.sync, &mut syncs) {
                if !opts.continue_on_error && stopped_by.is_none() {
                    stopped_by = Some(format!("sync failed: {e}"));
                }
            }
        }
        ended |= opts.end.is_some_and(|e| e.load(Ordering::Relaxed));
        let issuing = stopped_by.is_none() && !ended && end_ns.is_none_or(|e| now < e);
        if stopped_by.is_none() && opts.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            stopped_by = Some("interrupted".into());
        }
        if stopped_by.is_none() && opts.abort.is_some_and(|s| s.load(Ordering::Relaxed)) {
            stopped_by = Some("stopped because another thread of the job failed".into());
        }
        let mut next_wake: Option<u64> = None;
        // When a verified write held back for its block may try again: no hurry, so with
        // nothing in flight the thread sleeps rather than spins, and with I/Os in flight it
        // waits for one to complete (most likely what frees the block).
        let mut verify_retry: Option<u64> = None;
        // Inline read-backs first, and also once the job's time is up: a write is checked
        // before its block may be written again, and none is left unchecked at the end.
        if opts.verify.is_some() && stopped_by.is_none() {
            for st in states.iter_mut() {
                while st.inflight < st.w.queue_depth {
                    let Some((offset, len, generation)) = st.rechecks.pop_front() else {
                        break;
                    };
                    let tag = st.free_tags.pop().expect("a free tag per queue slot");
                    const_filled[tag as usize] = 0;
                    table[tag as usize] = InFlight {
                        worker: st.w.index,
                        dir: Direction::Read,
                        offset,
                        len,
                        origin_ns: UNSTAMPED,
                        submit_ns: 0,
                        generation,
                        check: true,
                    };
                    batch.push(IoReq {
                        tag,
                        dir: Direction::Read,
                        offset,
                        len,
                        ioprio: opts.priorities.map_or(0, |p| p.default),
                    });
                    st.inflight += 1;
                }
            }
        }
        if issuing && stopped_by.is_none() {
            for st in states.iter_mut() {
                if let Some(t) = opts.think {
                    if st.think_count >= t.blocks {
                        if st.inflight > 0 {
                            // The pause starts once the thread's I/Os in flight are done.
                            continue;
                        }
                        st.think_count = 0;
                        clock.spin_until_ns(now.saturating_add(t.spin_ns));
                        st.hold_until = now.saturating_add(t.pause_ns);
                    }
                }
                if st.hold_until > now && !st.drained() {
                    next_wake = Some(next_wake.map_or(st.hold_until, |w| w.min(st.hold_until)));
                    continue;
                }
                while !sync_due && st.inflight < st.w.queue_depth.min(depth_cap) && !st.drained() {
                    if opts.think.is_some_and(|t| {
                        t.after == iolab_core::schedule::ThinkAfter::Issue
                            && st.think_count >= t.blocks
                    }) {
                        break;
                    }
                    if let Some(f) = opts.flow {
                        if !f.try_issue() {
                            // Ahead of its share of the flow: look again shortly.
                            st.hold_until = now.saturating_add(f.sleep_ns.max(FLOW_RETRY_NS));
                            next_wake =
                                Some(next_wake.map_or(st.hold_until, |w| w.min(st.hold_until)));
                            break;
                        }
                    }
                    let planned = match st.pending.pop_front() {
                        Some(p) => p,
                        None => match st.w.source.next_planned() {
                            Some(p) => p,
                            None => {
                                st.exhausted = true;
                                break;
                            }
                        },
                    };
                    // Unpaced I/Os count from submission, stamped below once the batch is built.
                    let origin = match planned.at_ns {
                        Some(at) => {
                            paced = true;
                            if at > now {
                                next_wake = Some(next_wake.map_or(at, |w: u64| w.min(at)));
                                st.pending.push_front(planned);
                                break;
                            }
                            at
                        }
                        None => UNSTAMPED,
                    };
                    // A verified write waits while another write to its block is in flight:
                    // which of two would land last is the device's choice.
                    let mut generation = 0;
                    if let (Some(v), Direction::Write) = (opts.verify, planned.req.dir) {
                        match v.begin_write(planned.req.offset, planned.req.len) {
                            Some(g) => generation = g,
                            None => {
                                st.pending.push_front(planned);
                                verify_retry = Some(now.saturating_add(VERIFY_RETRY_NS));
                                break;
                            }
                        }
                    }
                    let tag = st.free_tags.pop().expect("a free tag per queue slot");
                    let len = planned.req.len as u32;
                    // A TRIM moves no data: its slot's buffer is left as it is.
                    if needs_data && planned.req.dir != Direction::Trim {
                        let filled = &mut const_filled[tag as usize];
                        if planned.req.dir == Direction::Read {
                            *filled = 0;
                        } else if let (Some(v), true) = (opts.verify, generation != 0) {
                            let buf = &mut target.buffer_mut(tag)[..len as usize];
                            let seed = st.w.data.fill(buf);
                            v.stamp(buf, planned.req.offset, generation, seed, now);
                            *filled = 0;
                        } else if !st.w.data.is_constant() || *filled < len {
                            st.w.data.fill(&mut target.buffer_mut(tag)[..len as usize]);
                            *filled = len;
                        }
                    }
                    table[tag as usize] = InFlight {
                        worker: st.w.index,
                        dir: planned.req.dir,
                        offset: planned.req.offset,
                        len,
                        origin_ns: origin,
                        submit_ns: 0,
                        generation,
                        check: false,
                    };
                    if planned.req.dir == Direction::Write {
                        writes_since_sync += 1;
                        if sync_every.is_some_and(|n| writes_since_sync >= n) {
                            // No more I/O until the writes in flight complete and the sync ran.
                            (writes_since_sync, sync_due) = (0, true);
                        }
                    }
                    let ioprio = opts.priorities.map_or(0, |p| {
                        p.pick(planned.req.dir, planned.req.len, st.prio_rng.unit())
                    });
                    batch.push(IoReq {
                        tag,
                        dir: planned.req.dir,
                        offset: planned.req.offset,
                        len,
                        ioprio,
                    });
                    st.inflight += 1;
                    if opts
                        .think
                        .is_some_and(|t| t.after == iolab_core::schedule::ThinkAfter::Issue)
                    {
                        st.think_count += 1;
                    }
                }
                // Plan ahead and tell the target: a model prefetches the mappings of the
                // next requests while this batch is processed (cache misses hidden). Refilled
                // by halves, so that the hints go out back to back and their misses overlap.
                if st.pending.len() <= plan_ahead / 2 {
                    while st.pending.len() < plan_ahead && !st.exhausted {
                        match st.w.source.next_planned() {
                            Some(p) => {
                                target.upcoming(p.req.offset);
                                if let (Some(v), Direction::Write) = (opts.verify, p.req.dir) {
                                    // The claim's state word is a cache miss over a large span.
                                    target.cache_hint().prefetch(v.claim_word(p.req.offset));
                                }
                                st.pending.push_back(p);
                            }
                            None => st.exhausted = true,
                        }
                    }
                }
            }
        }
        if !batch.is_empty() {
            // One stamp per batch, taken after the buffers are filled: generating data is the
            // tool's work, not the device's, and must not show up as latency.
            let submit_ns = clock.now_ns();
            for r in &batch {
                let f = &mut table[r.tag as usize];
                f.submit_ns = submit_ns;
                if f.origin_ns == UNSTAMPED {
                    f.origin_ns = submit_ns;
                }
            }
            target.submit(&batch)?;
            inflight_total += batch.len() as u32;
            batch.clear();
        }
        if inflight_total == 0 {
            let all_done = states.iter().all(|s| s.drained());
            if stopped_by.is_some() || !issuing || all_done {
                break;
            }
            if let Some(at) = next_wake {
                // Never past the job's end: a slow rate's next I/O may be due long after it
                // (1 MiB at 100 kB/s is 10 s), and the run would be held that long. Never long
                // without looking at the stop flags either, so that Ctrl-C ends a paced job
                // waiting minutes for its next I/O at once.
                let wake = at
                    .min(end_ns.unwrap_or(u64::MAX))
                    .min(now.saturating_add(STOP_POLL_NS));
                match verify_retry {
                    Some(retry) if retry < wake => clock.pause_until_ns(retry),
                    _ => clock.sleep_until_ns(wake),
                }
            } else if let Some(retry) = verify_retry {
                clock.pause_until_ns(retry);
            }
            continue;
        }
        // Wait for a completion, but no later than just before the next intended start; the
        // last stretch is polled (a zero timeout) so the next paced I/O leaves on time.
        let timeout = next_wake.map(|at| {
            at.saturating_sub(clock.now_ns())
                .saturating_sub(clock.wake_early_ns())
        });
        target.reap(1, timeout, &mut done)?;
        if done.is_empty() {
            continue;
        }
        let stamp = clock.now_ns();
        let mut done_bytes = 0u64;
        let (mut measured_ios, mut lat_sum) = (0u64, 0u64);
        let n_done = done.len() as u64;
        for c in done.drain(..) {
            let f = table[c.tag as usize];
            let st = &mut states[f.worker as usize];
            st.inflight -= 1;
            st.free_tags.push(c.tag);
            inflight_total -= 1;
            let at = c.done_ns.unwrap_or(stamp);
            let ok = c.result >= 0 && c.result as u64 == f.len as u64;
            if let (Some(v), true) = (opts.verify, f.check || f.generation != 0) {
                let len = f.len as u64;
                if f.check {
                    // A read-back is the tool's work: checked, never counted as the job's I/O.
                    let data = ok.then(|| &target.buffer_mut(c.tag)[..f.len as usize]);
                    v.checked_inline(f.offset, len, f.generation, data);
                    if ok {
                        continue;
                    }
                } else {
                    v.write_done(f.offset, len, f.generation, ok, at);
                    if ok && v.inline() {
                        st.rechecks.push_back((f.offset, f.len, f.generation));
                    }
                }
            } else if let (Some(v), Direction::Read, true) = (opts.verify, f.dir, ok) {
                if needs_data && v.mode() == VerifyMode::Reads {
                    v.check_read(f.offset, &target.buffer_mut(c.tag)[..f.len as usize]);
                }
            }
            if !ok {
                // A short transfer is an error too: the data did not all move.
                let errno = if c.result < 0 {
                    (-c.result) as i32
                } else {
                    SHORT_TRANSFER
                };
                if at >= measure_start {
                    stats.record_error(errno, f.offset);
                }
                if !opts.continue_on_error && stopped_by.is_none() {
                    stopped_by = Some(format!(
                        "{} error {} at offset {} ({} bytes): {}",
                        match f.dir {
                            Direction::Read => "read",
                            Direction::Write => "write",
                            Direction::Trim => "trim",
                        },
                        iolab_core::stats::errno_name(errno),
                        f.offset,
                        f.len,
                        describe_errno(errno)
                    ));
                }
                continue;
            }
            done_bytes += f.len as u64;
            if opts
                .think
                .is_some_and(|t| t.after == iolab_core::schedule::ThinkAfter::Complete)
            {
                st.think_count += 1;
            }
            if let Some(s) = search.as_mut() {
                s.ios += 1;
                s.over += u64::from(at.saturating_sub(f.origin_ns) > s.target_ns);
            }
            let counted = at >= measure_start && end_ns.is_none_or(|e| at <= e);
            if counted {
                let latency = at.saturating_sub(f.origin_ns);
                measured_ios += 1;
                lat_sum += latency;
                if f.origin_ns == f.submit_ns {
                    stats.record(f.dir, f.len as u64, latency, at - measure_start);
                } else {
                    // Paced: also keep the device's own service time, comparable with tools
                    // that count from submission.
                    stats.record_paced(
                        f.dir,
                        f.len as u64,
                        latency,
                        at.saturating_sub(f.submit_ns),
                        at - measure_start,
                    );
                }
                last_done_ns = last_done_ns.max(at);
            }
        }
        if let Some(p) = opts.progress {
            p.ios.fetch_add(n_done, Ordering::Relaxed);
            p.bytes.fetch_add(done_bytes, Ordering::Relaxed);
            p.measured_ios.fetch_add(measured_ios, Ordering::Relaxed);
            p.lat_ns.fetch_add(lat_sum, Ordering::Relaxed);
        }
    }
    if let Some(v) = opts.verify {
        // Read-backs a stop left undone: their blocks are free again.
        for st in &mut states {
            for (offset, len, _) in st.rechecks.drain(..) {
                v.abandon_inline(offset, len as u64);
            }
        }
    }
    let finished = clock.now_ns();
    if sync_due || opts.sync.is_some_and(|p| p.at_end) {
        // After the measured time: the last sync is the job's end, not part of its rates.
        if let Err(e) = sync_target(target, clock, opts.sync, &mut syncs) {
            if stopped_by.is_none() {
                stopped_by = Some(format!("sync at the end failed: {e}"));
            }
        }
    }
    let measured_ns = match (end_ns, &stopped_by) {
        // Cut short, or ended by another job: everything measured up to the stop counts.
        (end, Some(_)) => finished
            .min(end.unwrap_or(u64::MAX))
            .saturating_sub(measure_start),
        (end, None) if ended => finished
            .min(end.unwrap_or(u64::MAX))
            .saturating_sub(measure_start),
        // Timed: the full duration, unless the sources ran out first.
        (Some(end), None) if finished >= end => end - measure_start,
        _ => last_done_ns.saturating_sub(measure_start),
    };
    Ok(DriveOutcome {
        stats,
        measured_ns,
        ramp_ns: opts.ramp_ns.min(finished.saturating_sub(start_ns)),
        complete: stopped_by.is_none(),
        stopped_by,
        paced,
        depth_search: search.map(|s| s.search),
        syncs,
    })
}

/// How soon a job held back by its flow (with no `flow_sleep`) looks again.
const FLOW_RETRY_NS: u64 = 20_000;

/// Syncs `target` as `policy` says, timing it into `syncs`.
fn sync_target<T: Target + ?Sized, C: Clock + ?Sized>(
    target: &mut T,
    clock: &C,
    policy: Option<&SyncPolicy>,
    syncs: &mut Option<SyncSummary>,
) -> std::io::Result<()> {
    let t0 = clock.now_ns();
    let r = target.sync(policy.is_some_and(|p| p.data_only));
    if let Some(s) = syncs.as_mut() {
        s.record(clock.now_ns().saturating_sub(t0), r.is_ok());
    }
    r
}

/// A latency-target search under way: the current window's counts.
struct LatencySearch {
    search: DepthSearch,
    target_ns: u64,
    window_ns: u64,
    window_start: u64,
    ios: u64,
    over: u64,
    /// Waiting for the queue to drain before the next window (`Some(true)`: the last one).
    quiescing: Option<bool>,
}

/// The longest the driver sleeps, with nothing in flight, before it looks at the stop flags
/// again (a person's Ctrl-C is answered within it).
pub const STOP_POLL_NS: u64 = 50_000_000;

/// How long a verified write waits before it tries again for a block another write holds.
const VERIFY_RETRY_NS: u64 = 20_000;

/// Marks an in-flight entry whose latency origin is the coming submission stamp.
const UNSTAMPED: u64 = u64::MAX;

/// Pseudo-errno recorded for a transfer shorter than requested.
pub const SHORT_TRANSFER: i32 = 0;

/// A readable description of an errno.
pub fn describe_errno(errno: i32) -> String {
    if errno == SHORT_TRANSFER {
        return "short transfer (fewer bytes than requested; past the end of the target?)".into();
    }
    std::io::Error::from_raw_os_error(errno).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    fn job(text: &str) -> Job {
        let mut job = JobSpec::from_toml(text, "test.toml")
            .unwrap()
            .validate()
            .unwrap();
        if job.span_bytes.is_none() {
            job.resolve_span(1 << 30).unwrap();
        }
        job
    }

    /// Every request of every worker, in each worker's order.
    fn requests(job: &Job) -> Vec<Vec<Planned>> {
        plan_workers(job, 0)
            .into_iter()
            .map(|mut w| std::iter::from_fn(|| w.source.next_planned()).collect())
            .collect()
    }

    #[test]
    fn poisson_arrivals_keep_the_rate_with_exponential_gaps() {
        let starts = |text: &str| -> Vec<f64> {
            let planned = &requests(&job(text))[0];
            planned
                .windows(2)
                .map(|w| (w[1].at_ns.unwrap() - w[0].at_ns.unwrap()) as f64)
                .collect()
        };
        let even = starts(
            "rate_iops = 1000
ios_limit = 20000",
        );
        assert!(
            even.iter().all(|&g| (g - 1e6).abs() < 2.0),
            "{:?}",
            &even[..5]
        );
        let gaps = starts(
            "rate_iops = 1000
ios_limit = 20000
rate_poisson = true",
        );
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean / 1e6 - 1.0).abs() < 0.03, "mean gap {mean}");
        // Exponential: the standard deviation equals the mean, and e^-1 of gaps exceed it.
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.05, "sd {sd} mean {mean}");
        let longer = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
        assert!((longer - (-1f64).exp()).abs() < 0.02, "{longer}");
    }

    #[test]
    fn byte_budgets_are_issued_in_whole_blocks() {
        // 1 MiB over 3 threads is 349,525.3 bytes each: a short last read per thread, which
        // O_DIRECT refuses, unless the shares are cut in whole blocks.
        let pass = requests(&job("access = \"read\"\nthreads = 3\nsize = \"1m\""));
        let lens: Vec<u64> = pass.iter().flatten().map(|p| p.req.len).collect();
        assert!(lens.iter().all(|&l| l == 4096), "{lens:?}");
        assert_eq!(lens.len(), 256);
        let limited = requests(&job("access = \"write\"\nio_limit = 10000"));
        let lens: Vec<u64> = limited.iter().flatten().map(|p| p.req.len).collect();
        assert_eq!(
            lens,
            [4096, 4096],
            "what is left of the budget is not issued"
        );
        // Every request of a mix is one of its sizes, the last of a budget too.
        for (split, sizes) in [
            ("8k/50:12k/50", [8192, 12288]),
            ("4k/50:64k/50", [4096, 65536]),
            ("12k/50:20k/50", [12288, 20480]),
        ] {
            for limit in [
                "io_limit = 100000\nthreads = 3",
                "size = \"1m\"\nthreads = 3",
            ] {
                let text = format!("access = \"write\"\nbssplit = \"{split}\"\n{limit}");
                for p in requests(&job(&text)).iter().flatten() {
                    assert!(sizes.contains(&p.req.len), "{split}: {}", p.req.len);
                }
            }
        }
    }

    #[test]
    fn one_pass_covers_every_block_of_the_span_once() {
        // 70 blocks over 3 threads (24 + 23 + 23), with zones or without: each thread's
        // share begins where the previous one ends (a thread used to start at 23 blocks in
        // and read block 23 twice and block 69 never; zones left the tail unwritten).
        for zones in ["", "zones = true\n"] {
            let text = format!(
                "access = \"write\"\nblock_size = \"1m\"\nthreads = 3\n{zones}size = \"70m\""
            );
            let mut offsets: Vec<u64> = requests(&job(&text))
                .iter()
                .flatten()
                .map(|p| p.req.offset >> 20)
                .collect();
            offsets.sort_unstable();
            assert_eq!(offsets, (0..70).collect::<Vec<_>>(), "{zones}");
        }
    }

    #[test]
    fn a_random_one_pass_visits_every_block_once() {
        // A random pass used to draw with replacement and reach about 63 % of the blocks
        // (1 − 1/e), some of them two or three times. 1,000 blocks of 4 KiB (one thread's
        // share not a whole number of blocks of the others' with 3 and 7 threads), and 70
        // blocks of 1 MiB in zones.
        for (text, blocks, shift) in [
            ("size = \"4000k\"", 1000, 12),
            ("block_size = \"1m\"\nsize = \"70m\"", 70, 20),
        ] {
            for access in ["randread", "randwrite", "randrw"] {
                for threads in [
                    "",
                    "threads = 3\n",
                    "threads = 7\n",
                    "threads = 3\nzones = true\n",
                ] {
                    let text = format!("access = \"{access}\"\n{threads}{text}");
                    let pass = requests(&job(&text));
                    let mut offsets: Vec<u64> = pass
                        .iter()
                        .flatten()
                        .map(|p| p.req.offset >> shift)
                        .collect();
                    offsets.sort_unstable();
                    let issued = offsets.len();
                    offsets.dedup();
                    assert_eq!(
                        (issued, offsets.len()),
                        (blocks as usize, blocks as usize),
                        "{text}: I/Os issued and distinct blocks reached, of {blocks}"
                    );
                    assert_eq!(offsets.last(), Some(&(blocks - 1)), "{text}");
                    // Each thread in a random order, not its share walked in sequence.
                    for w in &pass {
                        let steps = w.windows(2).filter(|p| p[1].req.offset > p[0].req.offset);
                        assert!(steps.count() < w.len() * 3 / 4 + 1, "{text}");
                    }
                }
            }
        }
        // The order is the seed's: the same seed gives the same, another seed another.
        let order = |seed: u64| requests(&job(&format!("seed = {seed}\nsize = \"4m\"")));
        assert_eq!(order(3), order(3));
        assert_ne!(order(3), order(4));
    }

    #[test]
    fn timed_and_budgeted_random_jobs_still_draw_with_replacement() {
        // The calibrated model's figures come from jobs like these (Iometer's uniform draws):
        // a budget of one span's worth of I/Os reaches about 63 % of its blocks. So does a
        // split of several sizes, whose blocks do not tile the span, in one pass.
        for text in [
            "ios_limit = 1000\nsize = \"4000k\"",
            "io_limit = \"4000k\"\nsize = \"4000k\"",
        ] {
            let mut blocks: Vec<u64> = requests(&job(text))[0]
                .iter()
                .map(|p| p.req.offset >> 12)
                .collect();
            assert_eq!(blocks.len(), 1000);
            blocks.sort_unstable();
            blocks.dedup();
            assert!(
                (580..=680).contains(&blocks.len()),
                "{text}: {}",
                blocks.len()
            );
        }
        let mut g = IoGenerator::new(&job("duration_s = 10\nsize = \"4000k\""), 0);
        let mut blocks: Vec<u64> = (0..1000).map(|_| g.next_request().offset >> 12).collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert!(
            (580..=680).contains(&blocks.len()),
            "timed: {}",
            blocks.len()
        );
    }

    /// Virtual time that sets `stop` (a Ctrl-C) once it reaches `at_ns`.
    struct InterruptAt<'a> {
        clock: crate::clock::VirtualClock,
        at_ns: u64,
        stop: &'a AtomicBool,
    }

    impl Clock for InterruptAt<'_> {
        fn now_ns(&self) -> u64 {
            self.clock.now_ns()
        }
        fn sleep_until_ns(&self, t_ns: u64) {
            self.clock.sleep_until_ns(t_ns);
            if t_ns >= self.at_ns {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    fn drive_on_null(job: &Job, clock: &dyn Clock, stop: Option<&AtomicBool>) -> DriveOutcome {
        let mut target = crate::null::NullTarget::new(job.span());
        target
            .prepare(job.queue_depth, job.max_block() as usize)
            .unwrap();
        let opts = DriveOptions {
            start_ns: None,
            ramp_ns: 0,
            duration_ns: job.duration_s.map(|d| (d * 1e9) as u64),
            interval_ns: 1_000_000_000,
            stop,
            abort: None,
            progress: None,
            continue_on_error: false,
            verify: None,
            end: None,
            think: job.schedule.think,
            flow: None,
            end_at: None,
            priorities: None,
            latency_target: None,
            sync: None,
        };
        drive(&mut target, clock, plan_workers(job, 0), &opts).unwrap()
    }

    #[test]
    fn a_thinking_job_pauses_after_every_so_many_ios() {
        // 10 I/Os, a pause of 1 ms after every 2: counted as issued, 5 bursts of 2 and 4
        // pauses between them; counted as completed with 4 in flight, bursts of 4, 4 and 2
        // (the pause waits for the burst's I/Os), so 2 pauses.
        for (after, pauses) in [("issue", 4), ("complete", 2)] {
            let j = job(&format!(
                "ios_limit = 10\nqueue_depth = 4\nthink_s = 0.001\nthink_blocks = 2\n\
                 think_after = \"{after}\""
            ));
            let clock = crate::clock::VirtualClock::new();
            let out = drive_on_null(&j, &clock, None);
            assert_eq!(out.stats.read.ios, 10);
            assert_eq!(out.measured_ns, pauses * 1_000_000, "{after}");
        }
    }

    #[test]
    fn a_job_ended_by_another_stops_issuing_and_is_complete() {
        let j = job("duration_s = 60");
        let end = AtomicBool::new(true);
        let mut target = crate::null::NullTarget::new(j.span());
        target.prepare(1, 4096).unwrap();
        let opts = DriveOptions {
            start_ns: None,
            ramp_ns: 0,
            duration_ns: Some(60_000_000_000),
            interval_ns: 1_000_000_000,
            stop: None,
            abort: None,
            progress: None,
            continue_on_error: false,
            verify: None,
            end: Some(&end),
            think: None,
            flow: None,
            end_at: None,
            priorities: None,
            latency_target: None,
            sync: None,
        };
        let clock = crate::clock::VirtualClock::new();
        let out = drive(&mut target, &clock, plan_workers(&j, 0), &opts).unwrap();
        assert!(out.complete && out.stopped_by.is_none());
        assert_eq!(out.stats.read.ios, 0);
        assert_eq!(out.measured_ns, 0);
    }

    #[test]
    fn a_paced_job_waiting_for_its_next_io_ends_with_its_duration() {
        // One I/O every 20 s for 1 s: the next one is due 19 s after the end, and the driver
        // used to sleep until then (a 2 s job of 1 MiB at 100 kB/s took 10 s).
        let j = job("rate_iops = 0.05\nduration_s = 1");
        let clock = crate::clock::VirtualClock::new();
        let out = drive_on_null(&j, &clock, None);
        assert_eq!(clock.now_ns(), 1_000_000_000, "ran past the end");
        assert_eq!(out.measured_ns, 1_000_000_000);
        assert_eq!(out.stats.read.ios, 1);
        assert!(out.complete);
    }

    #[test]
    fn a_paced_job_waiting_for_its_next_io_stops_soon_after_ctrl_c() {
        // Three I/Os 20 s apart, no duration; Ctrl-C at 1 s. It used to take effect only at
        // the next I/O, 19 s later, or (with a duration) never.
        for duration in ["", "duration_s = 60\n"] {
            let j = job(&format!("rate_iops = 0.05\nios_limit = 3\n{duration}"));
            let stop = AtomicBool::new(false);
            let clock = InterruptAt {
                clock: crate::clock::VirtualClock::new(),
                at_ns: 1_000_000_000,
                stop: &stop,
            };
            let out = drive_on_null(&j, &clock, Some(&stop));
            assert_eq!(out.stopped_by.as_deref(), Some("interrupted"), "{duration}");
            let t = clock.now_ns();
            assert!(
                (1_000_000_000..=1_000_000_000 + STOP_POLL_NS).contains(&t),
                "{duration}: stopped at {t} ns"
            );
            assert_eq!(out.stats.read.ios, 1);
            assert_eq!(out.measured_ns, t);
        }
    }

    /// A target in virtual time whose `n`-th request takes `latencies_ns[n]`.
    struct Scripted {
        inner: crate::null::NullTarget,
        clock: crate::clock::VirtualClock,
        latencies_ns: Vec<u64>,
        submitted: usize,
        /// (due time, completion)
        pending: Vec<(u64, Completion)>,
    }

    impl Target for Scripted {
        fn capabilities(&self) -> &crate::target::Capabilities {
            self.inner.capabilities()
        }
        fn prepare(&mut self, slots: u32, slot_bytes: usize) -> std::io::Result<()> {
            self.inner.prepare(slots, slot_bytes)
        }
        fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
            self.inner.buffer_mut(tag)
        }
        fn submit(&mut self, reqs: &[IoReq]) -> std::io::Result<()> {
            for r in reqs {
                let due = self.clock.now_ns() + self.latencies_ns[self.submitted];
                self.submitted += 1;
                let c = Completion {
                    tag: r.tag,
                    result: r.len as i64,
                    done_ns: Some(due),
                };
                self.pending.push((due, c));
            }
            Ok(())
        }
        fn reap(
            &mut self,
            _min: usize,
            timeout_ns: Option<u64>,
            out: &mut Vec<Completion>,
        ) -> std::io::Result<()> {
            let limit = timeout_ns.map_or(u64::MAX, |t| self.clock.now_ns().saturating_add(t));
            self.pending.sort_by_key(|p| std::cmp::Reverse(p.0));
            match self.pending.last() {
                Some(&(due, c)) if due <= limit => {
                    self.pending.pop();
                    self.clock.advance_to(due);
                    out.push(c);
                }
                _ => self.clock.advance_to(limit),
            }
            Ok(())
        }
    }

    #[test]
    fn every_io_longer_than_10_ms_or_100_ms_is_counted_exactly() {
        // The histogram's bucket holding 10 ms spans 9.961–10.027 ms, the one holding 100 ms
        // 99.615–100.139 ms: only exact counts put 10.013 ms over 10 ms and 100.1 ms over 100.
        let latencies_ns = vec![
            9_000_000,
            10_000_000,
            10_000_001,
            10_013_000,
            10_026_000,
            99_999_000,
            100_000_000,
            100_100_000,
            40_000,
        ];
        let n = latencies_ns.len();
        let j = job(&format!("queue_depth = 1\nios_limit = {n}"));
        let clock = crate::clock::VirtualClock::new();
        let mut target = Scripted {
            inner: crate::null::NullTarget::new(j.span()),
            clock: clock.clone(),
            latencies_ns,
            submitted: 0,
            pending: Vec::new(),
        };
        target.prepare(1, j.max_block() as usize).unwrap();
        let opts = DriveOptions {
            start_ns: None,
            ramp_ns: 0,
            duration_ns: None,
            interval_ns: 1_000_000_000,
            stop: None,
            abort: None,
            progress: None,
            continue_on_error: false,
            verify: None,
            end: None,
            think: None,
            flow: None,
            end_at: None,
            priorities: None,
            latency_target: None,
            sync: None,
        };
        let out = drive(&mut target, &clock, plan_workers(&j, 0), &opts).unwrap();
        let r = out
            .stats
            .direction_summary(Direction::Read, out.measured_ns);
        assert_eq!(r.ios, n as u64);
        assert_eq!((r.ios_over_10ms, r.ios_over_100ms), (Some(6), Some(1)));
    }

    #[test]
    fn two_rate_caps_hold_together_and_workers_share_one_schedule() {
        // 1000 IOPS and 1 MiB/s of 4 KiB reads: the byte cap is the tighter (256 IOPS).
        let both = requests(&job(
            "rate_iops = 1000\nrate_bytes_per_s = \"1m\"\nios_limit = 3",
        ));
        let at: Vec<u64> = both[0].iter().map(|p| p.at_ns.unwrap()).collect();
        assert_eq!(at, [0, 3_906_250, 7_812_500]);
        // 7 workers at 1000 IOPS in all: each issues every 7 ms, one after another 1 ms
        // apart, not all seven at once.
        let workers = requests(&job("rate_iops = 1000\nthreads = 7\nios_limit = 14"));
        let firsts: Vec<u64> = workers.iter().map(|w| w[0].at_ns.unwrap()).collect();
        assert_eq!(firsts, (0..7).map(|i| i * 1_000_000).collect::<Vec<_>>());
        assert_eq!(workers[3][1].at_ns, Some(10_000_000));
    }
}
