//! The completion side of a drive: waits for completions (or, with nothing in flight, for the
//! next intended start), settles verified writes and read-backs, and records each completion's
//! latency unless it finished outside the measured window.

use super::issue::Queue;
use super::state::{Drive, InFlight, WorkerState};
use super::{describe_errno, RequestSource, SHORT_TRANSFER, STOP_POLL_NS};
use crate::clock::Clock;
use crate::target::{Completion, Target};
use iolab_core::job::{Direction, VerifyMode};
use iolab_core::schedule::ThinkAfter;
use std::sync::atomic::Ordering;

/// What one reap completed, for the progress counters.
#[derive(Default)]
struct Tally {
    bytes: u64,
    measured_ios: u64,
    lat_sum: u64,
}

impl<T, C, S> Drive<'_, T, C, S>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
    S: RequestSource,
{
    /// With nothing in flight: whether the drive is over and, if not, sleeps until the next
    /// intended start or end of a pause, or until a held-back verified write may try again.
    pub(super) fn idle(&mut self, now: u64, issuing: bool) -> bool {
        let all_done = self.workers.iter().all(|s| s.drained());
        if self.stopped_by.is_some() || !issuing || all_done {
            return true;
        }
        if let Some(at) = self.io.next_wake {
            // Never past the job's end: a slow rate's next I/O may be due long after it
            // (1 MiB at 100 kB/s is 10 s), and the run would be held that long. Never long
            // without looking at the stop flags either, so that Ctrl-C ends a paced job
            // waiting minutes for its next I/O at once.
            let wake = at
                .min(self.end_ns.unwrap_or(u64::MAX))
                .min(now.saturating_add(STOP_POLL_NS));
            match self.io.verify_retry {
                Some(retry) if retry < wake => self.clock.pause_until_ns(retry),
                _ => self.clock.sleep_until_ns(wake),
            }
        } else if let Some(retry) = self.io.verify_retry {
            self.clock.pause_until_ns(retry);
        }
        false
    }

    /// Waits for at least one completion, but no later than just before the next intended
    /// start (the last stretch is polled with a zero timeout, so the next paced I/O leaves on
    /// time), and records what completed.
    #[inline]
    pub(super) fn reap(&mut self, done: &mut Vec<Completion>) -> std::io::Result<()> {
        let timeout = self.io.next_wake.map(|at| {
            at.saturating_sub(self.clock.now_ns())
                .saturating_sub(self.clock.wake_early_ns())
        });
        self.io.target.reap(1, timeout, done)?;
        if done.is_empty() {
            return Ok(());
        }
        // One stamp per batch of completions.
        let stamp = self.clock.now_ns();
        let n_done = done.len() as u64;
        let mut tally = Tally::default();
        for c in done.drain(..) {
            self.complete(c, stamp, &mut tally);
        }
        if let Some(p) = self.opts.progress {
            p.ios.fetch_add(n_done, Ordering::Relaxed);
            p.bytes.fetch_add(tally.bytes, Ordering::Relaxed);
            p.measured_ios
                .fetch_add(tally.measured_ios, Ordering::Relaxed);
            p.lat_ns.fetch_add(tally.lat_sum, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Frees `c`'s slot and records it: a read-back checked, an error counted (and the drive
    /// stopped unless it goes on after errors), or a latency inside the measured window.
    #[inline(always)]
    fn complete(&mut self, c: Completion, stamp: u64, tally: &mut Tally) {
        let f = self.io.table[c.tag as usize];
        let st = &mut self.workers[f.worker as usize];
        st.inflight -= 1;
        st.free_tags.push(c.tag);
        self.io.inflight_total -= 1;
        let at = c.done_ns.unwrap_or(stamp);
        let ok = c.result >= 0 && c.result as u64 == f.len as u64;
        if self.opts.verify.is_some() && self.io.settle_verified(st, &f, c.tag, ok, at) {
            return;
        }
        if !ok {
            self.record_error(&f, c.result, at);
            return;
        }
        tally.bytes += f.len as u64;
        if self
            .opts
            .think
            .is_some_and(|t| t.after == ThinkAfter::Complete)
        {
            st.think_count += 1;
        }
        if let Some(s) = self.search.as_mut() {
            s.ios += 1;
            s.over += u64::from(at.saturating_sub(f.origin_ns) > s.target_ns);
        }
        let counted = at >= self.measure_start
            && (self.opts.drain_end || self.end_ns.is_none_or(|e| at <= e));
        if counted {
            let latency = at.saturating_sub(f.origin_ns);
            tally.measured_ios += 1;
            tally.lat_sum += latency;
            let since_start = at - self.measure_start;
            if f.origin_ns == f.submit_ns {
                self.stats.record(f.dir, f.len as u64, latency, since_start);
            } else {
                // Paced: also keep the device's own service time, comparable with tools that
                // count from submission.
                self.stats.record_paced(
                    f.dir,
                    f.len as u64,
                    latency,
                    at.saturating_sub(f.submit_ns),
                    since_start,
                );
            }
            self.last_done_ns = self.last_done_ns.max(at);
        }
    }

    /// Counts a failed completion (a short transfer is an error too: the data did not all
    /// move) and stops the drive unless it goes on after errors.
    #[cold]
    fn record_error(&mut self, f: &InFlight, result: i64, at: u64) {
        let errno = if result < 0 {
            (-result) as i32
        } else {
            SHORT_TRANSFER
        };
        if at >= self.measure_start {
            self.stats.record_error(errno, f.offset);
        }
        if !self.opts.continue_on_error && self.stopped_by.is_none() {
            self.stopped_by = Some(format!(
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
    }
}

impl<T, C> Queue<'_, T, C>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
{
    /// Settles a completion with the verifier: a read-back checked, a verified write done (and
    /// its read-back queued), a read checked against what was written. Whether it was a
    /// read-back that succeeded, which is the tool's work and never counted as the job's I/O.
    #[inline]
    fn settle_verified<S>(
        &mut self,
        st: &mut WorkerState<S>,
        f: &InFlight,
        tag: u32,
        ok: bool,
        at: u64,
    ) -> bool {
        let Some(v) = self.opts.verify else {
            return false;
        };
        if f.check || f.generation != 0 {
            let len = f.len as u64;
            if f.check {
                let data = ok.then(|| &self.target.buffer_mut(tag)[..f.len as usize]);
                v.checked_inline(f.offset, len, f.generation, data);
                return ok;
            }
            v.write_done(f.offset, len, f.generation, ok, at);
            if ok && v.inline() {
                st.rechecks.push_back((f.offset, f.len, f.generation));
            }
        } else if f.dir == Direction::Read && ok && self.needs_data && v.mode() == VerifyMode::Reads
        {
            v.check_read(f.offset, &self.target.buffer_mut(tag)[..f.len as usize]);
        }
        false
    }
}
