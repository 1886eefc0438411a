//! A drive's state and its loop: set the workers' queues and slots up, run turns until nothing
//! is left to do, and sum up what was measured.

use super::control::{sync_target, LatencySearch};
use super::issue::Queue;
use super::options::{DriveOptions, DriveOutcome};
use super::source::{Planned, RequestSource, Worker};
use crate::clock::Clock;
use crate::target::{Completion, Target};
use iolab_core::job::Direction;
use iolab_core::rng::Rng;
use iolab_core::stats::RunStats;
use iolab_core::sync::{SyncCall, SyncSummary};
use std::collections::VecDeque;

/// Marks an in-flight entry whose latency origin is the coming submission stamp.
pub(super) const UNSTAMPED: u64 = u64::MAX;

/// What is in flight in one queue slot (one tag).
#[derive(Clone, Copy)]
pub(super) struct InFlight {
    pub(super) worker: u32,
    pub(super) dir: Direction,
    pub(super) offset: u64,
    pub(super) len: u32,
    /// Latency origin: submission or intended start.
    pub(super) origin_ns: u64,
    /// When it was submitted.
    pub(super) submit_ns: u64,
    /// The generation a verified write carries, or that its inline read-back expects (0: not
    /// verified).
    pub(super) generation: u64,
    /// An inline read-back of a verified write: checked, not counted.
    pub(super) check: bool,
}

impl InFlight {
    /// A free slot.
    pub(super) const EMPTY: InFlight = InFlight {
        worker: 0,
        dir: Direction::Read,
        offset: 0,
        len: 0,
        origin_ns: 0,
        submit_ns: 0,
        generation: 0,
        check: false,
    };
}

/// One worker as the drive keeps it: its queue, its planned requests and its pauses.
pub(super) struct WorkerState<S> {
    pub(super) w: Worker<S>,
    pub(super) inflight: u32,
    /// Planned, not yet submitted, oldest first.
    pub(super) pending: VecDeque<Planned>,
    /// The source has nothing more to plan.
    pub(super) exhausted: bool,
    /// Free tags whose buffers hold nothing of use.
    pub(super) free_tags: Vec<u32>,
    /// Free tags whose buffers hold the next write's data already (filled ahead), each with
    /// its content seed, in the order they were filled.
    pub(super) filled_tags: VecDeque<(u32, u64)>,
    /// Verified writes waiting for their inline read-back: offset, length, generation.
    pub(super) rechecks: VecDeque<(u64, u32, u64)>,
    /// I/Os counted towards the next think pause.
    pub(super) think_count: u32,
    /// Issues nothing before this time (a think pause, or held back by its flow).
    pub(super) hold_until: u64,
    /// Draws which I/Os go at which priority.
    pub(super) prio_rng: Rng,
}

impl<S> WorkerState<S> {
    /// Nothing left to submit.
    #[inline]
    pub(super) fn drained(&self) -> bool {
        self.exhausted && self.pending.is_empty()
    }

    /// A free tag for an I/O whose buffer's content does not matter before it runs (a read,
    /// a TRIM, a write of constant data): one that holds nothing of use, else one filled
    /// ahead. There is always one: a worker issues only below its queue depth.
    #[inline]
    pub(super) fn take_tag(&mut self) -> u32 {
        self.free_tags
            .pop()
            .or_else(|| self.filled_tags.pop_back().map(|(tag, _)| tag))
            .expect("a free tag per queue slot")
    }

    /// A free tag for a write of generated data, and the content seed of the data its buffer
    /// holds already if it was filled ahead (`None`: the buffer still has to be filled).
    #[inline]
    pub(super) fn take_write_tag(&mut self) -> (u32, Option<u64>) {
        match self.filled_tags.pop_front() {
            Some((tag, seed)) => (tag, Some(seed)),
            None => (self.take_tag(), None),
        }
    }

    /// Whether it has spare buffers left to fill ahead.
    #[inline]
    pub(super) fn wants_fill(&self) -> bool {
        self.filled_tags.len() < self.w.spare_slots as usize && !self.free_tags.is_empty()
    }
}

/// The workers' states, each with its own range of tags (queue slots).
fn worker_states<S>(workers: Vec<Worker<S>>, plan_ahead: usize) -> Vec<WorkerState<S>> {
    let mut states = Vec::with_capacity(workers.len());
    let mut next_tag = 0u32;
    for (position, mut w) in workers.into_iter().enumerate() {
        let prio_rng = Rng::new(0x7072_696f ^ u64::from(w.index));
        // From here on a worker is known by its position, so completions find it in O(1).
        w.index = position as u32;
        let slots = w.queue_depth + w.spare_slots;
        let tags = (next_tag..next_tag + slots).rev().collect();
        next_tag += slots;
        states.push(WorkerState {
            w,
            inflight: 0,
            pending: VecDeque::with_capacity(plan_ahead),
            exhausted: false,
            free_tags: tags,
            filled_tags: VecDeque::new(),
            rechecks: VecDeque::new(),
            think_count: 0,
            hold_until: 0,
            prio_rng,
        });
    }
    states
}

/// One drive under way: the workers, the target's queue, and the measured window.
pub(super) struct Drive<'d, T: ?Sized, C: ?Sized, S> {
    pub(super) clock: &'d C,
    pub(super) opts: &'d DriveOptions<'d>,
    pub(super) workers: Vec<WorkerState<S>>,
    /// The submission side: the target, its slots, the batch being built.
    pub(super) io: Queue<'d, T, C>,
    /// Room for the completions of one reap.
    total_slots: usize,
    /// When the run started on the clock.
    pub(super) start_ns: u64,
    /// Where the measured window starts (after the ramp; later for a latency-target search's
    /// last window).
    pub(super) measure_start: u64,
    /// Where it ends, once known (the duration, a steady-state stop, the search's last window).
    pub(super) end_ns: Option<u64>,
    pub(super) stats: RunStats,
    /// The last counted completion.
    pub(super) last_done_ns: u64,
    /// Why the drive stopped early (interrupt, error).
    pub(super) stopped_by: Option<String>,
    /// Ended by another job (`end`): measured up to then, as a timed job up to its end.
    pub(super) ended: bool,
    pub(super) search: Option<LatencySearch>,
    pub(super) syncs: Option<SyncSummary>,
}

impl<'d, T, C, S> Drive<'d, T, C, S>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
    S: RequestSource,
{
    /// Sets a drive up: the workers' tags, the slots, the measured window, the search and the
    /// sync counts. Starts the clock of a verifier.
    #[inline(always)]
    pub(super) fn new(
        target: &'d mut T,
        clock: &'d C,
        workers: Vec<Worker<S>>,
        opts: &'d DriveOptions<'d>,
    ) -> Self {
        let needs_data = target.capabilities().needs_data;
        let plan_ahead = target.plan_ahead().max(1);
        let total_slots: u32 = workers.iter().map(|w| w.queue_depth + w.spare_slots).sum();
        let workers = worker_states(workers, plan_ahead);
        let start_ns = opts.start_ns.unwrap_or_else(|| clock.now_ns());
        if let Some(v) = opts.verify {
            v.set_clock(clock.now_ns(), crate::clock::unix_now_ns() / 1000);
        }
        let measure_start = start_ns + opts.ramp_ns;
        let max_depth = workers.iter().map(|s| s.w.queue_depth).max().unwrap_or(1);
        let search = opts
            .latency_target
            .map(|t| LatencySearch::new(t, max_depth, start_ns));
        let depth_cap = search.as_ref().map_or(u32::MAX, |s| s.search.depth());
        let syncs = opts.sync.map(|p| SyncSummary {
            call: if p.data_only {
                SyncCall::Fdatasync
            } else {
                SyncCall::Fsync
            },
            ..SyncSummary::default()
        });
        Drive {
            clock,
            opts,
            workers,
            io: Queue::new(
                target,
                clock,
                opts,
                total_slots,
                needs_data,
                plan_ahead,
                depth_cap,
            ),
            total_slots: total_slots as usize,
            start_ns,
            measure_start,
            end_ns: opts.duration_ns.map(|d| measure_start + d),
            stats: RunStats::new(opts.interval_ns),
            last_done_ns: measure_start,
            stopped_by: None,
            ended: false,
            search,
            syncs,
        }
    }

    /// Runs turns until the sources end, the time is up or a stop ends the drive: each turn
    /// looks at the flags, queues read-backs, tops the queues up, submits, and reaps (or waits
    /// for the next intended start).
    // Always inlined into `drive`, so that the state is a local of the caller whose fields the
    // compiler keeps in registers, as it did the locals of the one long function this was.
    #[inline(always)]
    pub(super) fn run(mut self) -> std::io::Result<DriveOutcome> {
        // A local, not a field: handed to the target on every reap, it would make the whole
        // state's address escape.
        let mut done: Vec<Completion> = Vec::with_capacity(self.total_slots);
        loop {
            self.follow_end_at();
            let now = self.clock.now_ns();
            self.steer_latency_search(now);
            self.sync_when_drained();
            let issuing = self.check_stops(now);
            self.io.begin_turn();
            // Inline read-backs first, and also once the job's time is up: a write is checked
            // before its block may be written again, and none is left unchecked at the end.
            if self.opts.verify.is_some() && self.stopped_by.is_none() {
                for st in self.workers.iter_mut() {
                    self.io.queue_rechecks(st);
                }
            }
            if issuing && self.stopped_by.is_none() {
                for st in self.workers.iter_mut() {
                    self.io.top_up(st, now);
                }
            }
            self.io.submit_batch()?;
            self.io.fill_ahead(&mut self.workers)?;
            if self.io.inflight_total == 0 {
                if self.idle(now, issuing) {
                    break;
                }
                continue;
            }
            self.reap(&mut done)?;
        }
        Ok(self.finish())
    }

    /// After the loop: frees the blocks of read-backs left undone, runs the last sync, and
    /// sums up the measured window.
    fn finish(mut self) -> DriveOutcome {
        if let Some(v) = self.opts.verify {
            // Read-backs a stop left undone: their blocks are free again.
            for st in &mut self.workers {
                for (offset, len, _) in st.rechecks.drain(..) {
                    v.abandon_inline(offset, len as u64);
                }
            }
        }
        let finished = self.clock.now_ns();
        if self.io.sync_due || self.opts.sync.is_some_and(|p| p.at_end) {
            // After the measured time: the last sync is the job's end, not part of its rates.
            if let Err(e) = sync_target(
                &mut *self.io.target,
                self.clock,
                self.opts.sync,
                &mut self.syncs,
            ) {
                if self.stopped_by.is_none() {
                    self.stopped_by = Some(format!("sync at the end failed: {e}"));
                }
            }
        }
        let measure_start = self.measure_start;
        let measured_ns = match (self.end_ns, &self.stopped_by) {
            // Cut short, or ended by another job: everything measured up to the stop counts.
            (end, Some(_)) => finished
                .min(end.unwrap_or(u64::MAX))
                .saturating_sub(measure_start),
            (end, None) if self.ended => finished
                .min(end.unwrap_or(u64::MAX))
                .saturating_sub(measure_start),
            // Timed: the full duration, unless the sources ran out first; drained, up to the
            // last of the I/Os in flight at the end (fio's way).
            (Some(end), None) if finished >= end && !self.opts.drain_end => end - measure_start,
            (Some(end), None) if finished >= end => {
                self.last_done_ns.max(end).saturating_sub(measure_start)
            }
            _ => self.last_done_ns.saturating_sub(measure_start),
        };
        DriveOutcome {
            stats: self.stats,
            measured_ns,
            ramp_ns: self
                .opts
                .ramp_ns
                .min(finished.saturating_sub(self.start_ns)),
            complete: self.stopped_by.is_none(),
            stopped_by: self.stopped_by,
            paced: self.io.paced,
            depth_search: self.search.map(|s| s.search),
            syncs: self.syncs,
        }
    }
}
