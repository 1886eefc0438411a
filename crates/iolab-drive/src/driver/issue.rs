//! The submission side of a drive: tops each worker up to its queue depth with requests whose
//! time has come, fills their buffers, and submits them as one batch, stamped once.

use super::options::DriveOptions;
use super::source::{Planned, RequestSource};
use super::state::{InFlight, WorkerState, UNSTAMPED};
use crate::clock::Clock;
use crate::target::{IoReq, Target};
use iolab_core::job::Direction;
use iolab_core::schedule::ThinkAfter;

/// How soon a job held back by its flow (with no `flow_sleep`) looks again.
const FLOW_RETRY_NS: u64 = 20_000;

/// How long a verified write waits before it tries again for a block another write holds.
const VERIFY_RETRY_NS: u64 = 20_000;

/// The target's queue: what is in flight in each slot, the batch being built, and what this
/// turn's top-up found out (when to wake, whether a sync is due).
pub(super) struct Queue<'d, T: ?Sized, C: ?Sized> {
    pub(super) target: &'d mut T,
    clock: &'d C,
    pub(super) opts: &'d DriveOptions<'d>,
    /// The target moves data (its buffers are filled and read).
    pub(super) needs_data: bool,
    /// How many requests per worker are planned ahead (and hinted to the target).
    plan_ahead: usize,
    /// Per slot (tag), the I/O in flight in it.
    pub(super) table: Vec<InFlight>,
    /// Per slot, how many leading bytes hold the constant data (zeros) already, so a constant
    /// pattern is written into a buffer once rather than for every write. A read into the slot
    /// overwrites it with what it read: the count goes back to 0, or the next writes would
    /// carry the data just read (`--data zeros` wrote non-zero blocks in a mix).
    const_filled: Vec<u32>,
    batch: Vec<IoReq>,
    /// I/Os in flight, all workers.
    pub(super) inflight_total: u32,
    /// Some request carried an intended start: latency counts from it.
    pub(super) paced: bool,
    /// No worker keeps more in flight (a latency-target search's depth; `u32::MAX` without).
    pub(super) depth_cap: u32,
    /// The earliest intended start or end of a pause not reached this turn.
    pub(super) next_wake: Option<u64>,
    /// When a verified write held back for its block may try again: no hurry, so with
    /// nothing in flight the thread sleeps rather than spins, and with I/Os in flight it
    /// waits for one to complete (most likely what frees the block).
    pub(super) verify_retry: Option<u64>,
    /// Sync after this many writes (the job's `fsync`).
    sync_every: Option<u64>,
    writes_since_sync: u64,
    /// A sync is due: no more I/O until the writes in flight complete and it ran.
    pub(super) sync_due: bool,
}

impl<'d, T, C> Queue<'d, T, C>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
{
    /// An empty queue of `total_slots` slots.
    pub(super) fn new(
        target: &'d mut T,
        clock: &'d C,
        opts: &'d DriveOptions<'d>,
        total_slots: u32,
        needs_data: bool,
        plan_ahead: usize,
        depth_cap: u32,
    ) -> Self {
        Queue {
            target,
            clock,
            opts,
            needs_data,
            plan_ahead,
            table: vec![InFlight::EMPTY; total_slots as usize],
            const_filled: vec![0u32; total_slots as usize],
            batch: Vec::with_capacity(total_slots as usize),
            inflight_total: 0,
            paced: false,
            depth_cap,
            next_wake: None,
            verify_retry: None,
            sync_every: opts.sync.and_then(|p| p.every_writes),
            writes_since_sync: 0,
            sync_due: false,
        }
    }

    /// Forgets what the last turn's top-up found out.
    #[inline]
    pub(super) fn begin_turn(&mut self) {
        self.next_wake = None;
        self.verify_retry = None;
    }

    /// Wakes no later than `at`.
    #[inline]
    fn wake_at(&mut self, at: u64) {
        self.next_wake = Some(self.next_wake.map_or(at, |w| w.min(at)));
    }

    /// Queues `st`'s inline read-backs of verified writes, as far as its queue has room.
    pub(super) fn queue_rechecks<S>(&mut self, st: &mut WorkerState<S>) {
        while st.inflight < st.w.queue_depth {
            let Some((offset, len, generation)) = st.rechecks.pop_front() else {
                break;
            };
            let tag = st.take_tag();
            self.const_filled[tag as usize] = 0;
            self.table[tag as usize] = InFlight {
                worker: st.w.index,
                dir: Direction::Read,
                offset,
                len,
                origin_ns: UNSTAMPED,
                submit_ns: 0,
                generation,
                check: true,
            };
            self.batch.push(IoReq {
                tag,
                dir: Direction::Read,
                offset,
                len,
                ioprio: self.opts.priorities.map_or(0, |p| p.default),
            });
            st.inflight += 1;
        }
    }

    /// Tops `st` up to its queue depth with the requests whose time has come, unless it is
    /// thinking or held back, and plans its next requests ahead.
    #[inline]
    pub(super) fn top_up<S: RequestSource>(&mut self, st: &mut WorkerState<S>, now: u64) {
        if let Some(t) = self.opts.think {
            if st.think_count >= t.blocks {
                if st.inflight > 0 {
                    // The pause starts once the thread's I/Os in flight are done.
                    return;
                }
                st.think_count = 0;
                self.clock.spin_until_ns(now.saturating_add(t.spin_ns));
                st.hold_until = now.saturating_add(t.pause_ns);
            }
        }
        if st.hold_until > now && !st.drained() {
            self.wake_at(st.hold_until);
            return;
        }
        while !self.sync_due && st.inflight < st.w.queue_depth.min(self.depth_cap) && !st.drained()
        {
            let Some((planned, origin, generation)) = self.next_due(st, now) else {
                break;
            };
            self.issue(st, planned, origin, generation, now);
        }
        self.plan_ahead(st);
    }

    /// `st`'s next request if it may leave now, with its latency origin and the generation of
    /// a verified write; `None` when it may not (thinking, held back by its flow, not yet due,
    /// its block held by another write, or its source exhausted).
    #[inline(always)]
    fn next_due<S: RequestSource>(
        &mut self,
        st: &mut WorkerState<S>,
        now: u64,
    ) -> Option<(Planned, u64, u64)> {
        if self
            .opts
            .think
            .is_some_and(|t| t.after == ThinkAfter::Issue && st.think_count >= t.blocks)
        {
            return None;
        }
        if let Some(f) = self.opts.flow {
            if !f.try_issue() {
                // Ahead of its share of the flow: look again shortly.
                st.hold_until = now.saturating_add(f.sleep_ns.max(FLOW_RETRY_NS));
                self.wake_at(st.hold_until);
                return None;
            }
        }
        let planned = match st.pending.pop_front() {
            Some(p) => p,
            None => match st.w.source.next_planned() {
                Some(p) => p,
                None => {
                    st.exhausted = true;
                    return None;
                }
            },
        };
        // Unpaced I/Os count from submission, stamped once the batch is built.
        let origin = match planned.at_ns {
            Some(at) => {
                self.paced = true;
                if at > now {
                    self.wake_at(at);
                    st.pending.push_front(planned);
                    return None;
                }
                at
            }
            None => UNSTAMPED,
        };
        // A verified write waits while another write to its block is in flight: which of two
        // would land last is the device's choice.
        let mut generation = 0;
        if let (Some(v), Direction::Write) = (self.opts.verify, planned.req.dir) {
            match v.begin_write(planned.req.offset, planned.req.len) {
                Some(g) => generation = g,
                None => {
                    st.pending.push_front(planned);
                    self.verify_retry = Some(now.saturating_add(VERIFY_RETRY_NS));
                    return None;
                }
            }
        }
        Some((planned, origin, generation))
    }

    /// Puts `planned` in one of `st`'s free slots, its buffer filled, and adds it to the batch.
    #[inline(always)]
    fn issue<S>(
        &mut self,
        st: &mut WorkerState<S>,
        planned: Planned,
        origin: u64,
        generation: u64,
        now: u64,
    ) {
        let (tag, filled_ahead) = if planned.req.dir == Direction::Write && st.w.spare_slots > 0 {
            st.take_write_tag()
        } else {
            (st.take_tag(), None)
        };
        let len = planned.req.len as u32;
        // A TRIM moves no data: its slot's buffer is left as it is.
        if self.needs_data && planned.req.dir != Direction::Trim {
            let filled = &mut self.const_filled[tag as usize];
            if planned.req.dir == Direction::Read {
                *filled = 0;
            } else if let (Some(v), true) = (self.opts.verify, generation != 0) {
                let buf = &mut self.target.buffer_mut(tag)[..len as usize];
                let seed = filled_ahead.unwrap_or_else(|| st.w.data.fill(buf));
                v.stamp(buf, planned.req.offset, generation, seed, now);
                *filled = 0;
            } else if filled_ahead.is_some() {
                // The data is in the buffer already.
            } else if !st.w.data.is_constant() || *filled < len {
                st.w.data
                    .fill(&mut self.target.buffer_mut(tag)[..len as usize]);
                *filled = len;
            }
        }
        self.table[tag as usize] = InFlight {
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
            self.writes_since_sync += 1;
            if self.sync_every.is_some_and(|n| self.writes_since_sync >= n) {
                // No more I/O until the writes in flight complete and the sync ran.
                (self.writes_since_sync, self.sync_due) = (0, true);
            }
        }
        let ioprio = self.opts.priorities.map_or(0, |p| {
            p.pick(planned.req.dir, planned.req.len, st.prio_rng.unit())
        });
        self.batch.push(IoReq {
            tag,
            dir: planned.req.dir,
            offset: planned.req.offset,
            len,
            ioprio,
        });
        st.inflight += 1;
        if self
            .opts
            .think
            .is_some_and(|t| t.after == ThinkAfter::Issue)
        {
            st.think_count += 1;
        }
    }

    /// Plans `st`'s next requests ahead and tells the target: a model prefetches the mappings
    /// of the next requests while this batch is processed (cache misses hidden). Refilled by
    /// halves, so that the hints go out back to back and their misses overlap.
    #[inline]
    fn plan_ahead<S: RequestSource>(&mut self, st: &mut WorkerState<S>) {
        if st.pending.len() > self.plan_ahead / 2 {
            return;
        }
        while st.pending.len() < self.plan_ahead && !st.exhausted {
            match st.w.source.next_planned() {
                Some(p) => {
                    self.target.upcoming(p.req.offset);
                    if let (Some(v), Direction::Write) = (self.opts.verify, p.req.dir) {
                        // The claim's state word is a cache miss over a large span.
                        self.target
                            .cache_hint()
                            .prefetch(v.claim_word(p.req.offset));
                    }
                    st.pending.push_back(p);
                }
                None => st.exhausted = true,
            }
        }
    }

    /// Fills the workers' spare buffers with their next writes' data, after handing this
    /// turn's requests to the device so that it works on them meanwhile (see
    /// [`super::fill_ahead_slots`]).
    pub(super) fn fill_ahead<S>(&mut self, workers: &mut [WorkerState<S>]) -> std::io::Result<()> {
        if !(self.needs_data && workers.iter().any(WorkerState::wants_fill)) {
            return Ok(());
        }
        self.target.push()?;
        for st in workers {
            while st.wants_fill() {
                let tag = st.free_tags.pop().expect("wants_fill saw a free tag");
                let seed = st.w.data.fill(self.target.buffer_mut(tag));
                self.const_filled[tag as usize] = 0;
                st.filled_tags.push_back((tag, seed));
            }
        }
        Ok(())
    }

    /// Submits the batch, stamped once: after the buffers are filled, since generating data is
    /// the tool's work, not the device's, and must not show up as latency.
    #[inline]
    pub(super) fn submit_batch(&mut self) -> std::io::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let submit_ns = self.clock.now_ns();
        for r in &self.batch {
            let f = &mut self.table[r.tag as usize];
            f.submit_ns = submit_ns;
            if f.origin_ns == UNSTAMPED {
                f.origin_ns = submit_ns;
            }
        }
        self.target.submit(&self.batch)?;
        self.inflight_total += self.batch.len() as u32;
        self.batch.clear();
        Ok(())
    }
}
