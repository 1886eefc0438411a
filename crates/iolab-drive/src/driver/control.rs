//! What decides a drive's course between turns: the stop flags and an earlier end, the syncs a
//! job asks for, and a latency-target search's queue depth.

use super::state::Drive;
use super::RequestSource;
use crate::clock::Clock;
use crate::target::Target;
use iolab_core::lat_target::{DepthSearch, LatencyTarget, Step};
use iolab_core::stats::RunStats;
use iolab_core::sync::{SyncPolicy, SyncSummary};
use std::sync::atomic::Ordering;

/// A latency-target search under way: the current window's counts.
pub(super) struct LatencySearch {
    pub(super) search: DepthSearch,
    pub(super) target_ns: u64,
    pub(super) window_ns: u64,
    pub(super) window_start: u64,
    pub(super) ios: u64,
    pub(super) over: u64,
    /// Waiting for the queue to drain before the next window (`Some(true)`: the last one).
    pub(super) quiescing: Option<bool>,
}

impl LatencySearch {
    /// A search for `target` up to `max_depth`, its first window from `start_ns`.
    pub(super) fn new(target: &LatencyTarget, max_depth: u32, start_ns: u64) -> Self {
        LatencySearch {
            search: DepthSearch::new(target, max_depth),
            target_ns: (target.target_us * 1e3) as u64,
            window_ns: (target.window_s * 1e9) as u64,
            window_start: start_ns,
            ios: 0,
            over: 0,
            quiescing: None,
        }
    }
}

/// Syncs `target` as `policy` says, timing it into `syncs`.
pub(super) fn sync_target<T: Target + ?Sized, C: Clock + ?Sized>(
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

impl<T, C, S> Drive<'_, T, C, S>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
    S: RequestSource,
{
    /// Follows an earlier end of the measured time set while the job runs (a steady-state
    /// stop).
    #[inline]
    pub(super) fn follow_end_at(&mut self) {
        if let Some(at) = self.opts.end_at.map(|a| a.load(Ordering::Relaxed)) {
            if at != u64::MAX {
                self.end_ns = Some(self.end_ns.map_or(at, |e| e.min(at)));
            }
        }
    }

    /// Moves a latency-target search on: once a window is over, to the next depth; once a
    /// shallower queue has drained, to its window; the last window becomes the measured one.
    #[inline]
    pub(super) fn steer_latency_search(&mut self, now: u64) {
        let Some(s) = self.search.as_mut() else {
            return;
        };
        if s.quiescing.is_some() && self.io.inflight_total == 0 {
            // Drained: the next window counts only I/Os issued at its depth.
            let last = s.quiescing.take() == Some(true);
            (s.window_start, s.ios, s.over) = (now, 0, 0);
            self.io.depth_cap = s.search.depth();
            if last {
                // The job's figures are this last window's, at the depth found.
                if now > self.measure_start {
                    self.measure_start = now;
                    self.stats = RunStats::new(self.opts.interval_ns);
                    self.last_done_ns = now;
                }
                let end = self.measure_start + s.window_ns;
                self.end_ns = Some(self.end_ns.map_or(end, |e| e.min(end)));
            }
        } else if s.quiescing.is_none() && now >= s.window_start + s.window_ns {
            let before = self.io.depth_cap;
            match s.search.window(s.ios, s.over) {
                // Deeper: go on at once. Shallower, or the last window: let the deeper queue
                // drain first (as fio does), or its latencies count against the shallower one.
                Step::Try(d) if d >= before => {
                    self.io.depth_cap = d;
                    (s.window_start, s.ios, s.over) = (now, 0, 0);
                }
                Step::Try(_) => (s.quiescing, self.io.depth_cap) = (Some(false), 0),
                Step::FinalWindow(_) => (s.quiescing, self.io.depth_cap) = (Some(true), 0),
                Step::Done => {}
            }
        }
    }

    /// Runs a sync that is due once the writes before it have all completed: it covers
    /// exactly them.
    #[inline]
    pub(super) fn sync_when_drained(&mut self) {
        if !(self.io.sync_due && self.io.inflight_total == 0) {
            return;
        }
        self.io.sync_due = false;
        if let Err(e) = sync_target(
            &mut *self.io.target,
            self.clock,
            self.opts.sync,
            &mut self.syncs,
        ) {
            if !self.opts.continue_on_error && self.stopped_by.is_none() {
                self.stopped_by = Some(format!("sync failed: {e}"));
            }
        }
    }

    /// Looks at the flags: whether the drive may still issue (not stopped, not ended by
    /// another job, its time not up), and whether Ctrl-C or another worker's failure stops it.
    #[inline]
    pub(super) fn check_stops(&mut self, now: u64) -> bool {
        self.ended |= self.opts.end.is_some_and(|e| e.load(Ordering::Relaxed));
        let issuing =
            self.stopped_by.is_none() && !self.ended && self.end_ns.is_none_or(|e| now < e);
        if self.stopped_by.is_none() && self.opts.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            self.stopped_by = Some("interrupted".into());
        }
        if self.stopped_by.is_none() && self.opts.abort.is_some_and(|s| s.load(Ordering::Relaxed)) {
            self.stopped_by = Some("stopped because another thread of the job failed".into());
        }
        issuing
    }
}
