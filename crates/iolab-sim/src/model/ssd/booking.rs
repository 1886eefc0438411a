//! Time booked on dies and channels: programs and loads booked ahead, where a read fits
//! between them, and how far ahead the drive's NAND work is booked.

use super::*;
use crate::model::power::Energy;
use crate::model::resource::{occupy, Res, ResId};
use std::collections::VecDeque;

/// How much of `[start, end)` lies after `now`.
pub(super) fn part_after((start, end): (u64, u64), now: u64) -> u64 {
    end.saturating_sub(start.max(now))
}

/// Work booked on an SSD's NAND to run after some moment: the share of its energy and busy
/// time that was counted when it was booked but has not run yet (see [`Ssd::booked_ahead`]).
#[derive(Debug, Default)]
pub struct Ahead {
    /// Die time by kind.
    pub energy: Energy,
    /// Busy time per resource (dies and channels).
    pub busy: Vec<(ResId, u64)>,
}

/// The earliest start at or after `t` for `dur` that overlaps none of `booked` (intervals in
/// start order: a channel's program data loads); forgets those over by `now`. A load booked
/// for a die still collecting, far ahead, leaves gaps that later loads for other dies take.
#[inline]
pub(super) fn fit_before_booked(
    booked: &mut VecDeque<(u64, u64)>,
    now: u64,
    t: u64,
    dur: u64,
) -> u64 {
    forget_over(booked, now);
    // Bookings do not overlap, so their ends rise with their starts: those over by `t` cannot
    // hold it up (a channel's loads run dozens ahead in steady state).
    if booked.back().is_none_or(|&(_, e)| e <= t) {
        return t;
    }
    let first = booked.partition_point(|&(_, e)| e <= t);
    let mut start = t;
    for &(s, e) in booked.range(first..) {
        if start + dur <= s {
            break;
        }
        start = start.max(e);
    }
    start
}

/// When a read arriving at `at`, free to start at `ready`, starts on a die (or its data-out on
/// a channel): after the program (load) in progress when it arrived, not after those queued
/// behind it, which it goes ahead of. Firmware serves reads first, as MQSim's transaction
/// scheduler does (its TSU gives reads priority): a read waiting for every program a full
/// write buffer had queued on its die took 28 ms on an SSD 750 writing sequentially.
pub(super) fn after_the_one_in_progress(
    booked: &mut VecDeque<(u64, u64)>,
    at: u64,
    ready: u64,
) -> u64 {
    forget_over(booked, at);
    // Bookings do not overlap: only the first left can be in progress at `at`.
    match booked.front() {
        Some(&(start, end)) if start <= at => ready.max(end),
        _ => ready,
    }
}

/// `t`, or the end of the booking in progress at `t` (the bookings over by then kept: they
/// may still be in progress for work that arrives before `t`).
pub(super) fn past_the_one_in_progress_at(booked: &VecDeque<(u64, u64)>, t: u64) -> u64 {
    // Bookings are in start order and do not overlap: only the last to start by `t` can be
    // in progress.
    let started = booked.partition_point(|&(start, _)| start <= t);
    match started.checked_sub(1).map(|i| booked[i]) {
        Some((_, end)) => t.max(end),
        None => t,
    }
}

/// Books `dur` of a read from `start` on resource `id`, ahead of the `booked` work queued
/// behind it: that work keeps its times (it is already promised elsewhere), and the resource's
/// later bookings start `dur` later, so the read's time is not lost. Returns the read's end.
pub(super) fn go_ahead(
    res: &mut [Res],
    id: ResId,
    booked: &VecDeque<(u64, u64)>,
    start: u64,
    dur: u64,
) -> u64 {
    if booked.back().is_some_and(|&(_, end)| end > start) {
        let r = &mut res[id as usize];
        r.busy_until += dur;
        r.busy_ns += dur;
        start + dur
    } else {
        occupy(res, id, start, dur)
    }
}

/// Drops the bookings over by `now`: they cannot hold up anything that arrives later.
pub(super) fn forget_over(booked: &mut VecDeque<(u64, u64)>, now: u64) {
    while booked.front().is_some_and(|&(_, end)| end <= now) {
        booked.pop_front();
    }
}

impl Ssd {
    /// The NAND work booked to run after `now`: programs (their data loads on the channels
    /// apart) and collections, less those carried from an analytic steady state (charged as
    /// they run). Work is counted when it is booked, up to a second ahead behind a die's
    /// collection; a report of what ran during a job takes this off at both of its ends,
    /// or a short job would report the energy of programs it left queued (a 1 s job at the
    /// SSD 750's 25 W limit reported 28 W). Host reads are not counted: one held by a power limit
    /// starts no further ahead than the budget time of the reads the host has in flight.
    pub fn booked_ahead(&self, now: u64) -> Ahead {
        let mut ahead = Ahead::default();
        let (read_ns, program_ns) = (mean_of(self.read_ns), mean_of(self.program_ns));
        let load_ns = self.unit_load_ns();
        let collection = |ahead: &mut Ahead, gc: &GcWork| {
            if gc.carried {
                return 0;
            }
            let (copies, erases) = gc.after(now);
            let copy_ns = gc.copy_ns.max(1);
            ahead.energy.read_ns += copies * read_ns / copy_ns;
            ahead.energy.program_ns += copies * program_ns / copy_ns;
            ahead.energy.erase_ns += erases;
            copies + erases
        };
        for (d, &die) in self.dies.iter().enumerate() {
            let mut busy = collection(&mut ahead, &self.gc[d]);
            for &(start, end) in self.programs_booked[d].iter().rev() {
                if end <= now {
                    break;
                }
                busy += part_after((start, end), now);
                // The die programs after its data is loaded (a full unit's load assumed).
                let program_from = (start + load_ns).min(end);
                ahead.energy.program_ns += part_after((program_from, end), now);
            }
            for (_, gc) in self.gc_replaced.iter().filter(|(g, _)| *g == d as u32) {
                busy += collection(&mut ahead, gc);
            }
            if busy > 0 {
                ahead.busy.push((die, busy));
            }
        }
        for (c, &chan) in self.chans.iter().enumerate() {
            let busy: u64 = self.loads_booked[c]
                .iter()
                .rev()
                .take_while(|&&(_, end)| end > now)
                .map(|&b| part_after(b, now))
                .sum();
            if busy > 0 {
                ahead.busy.push((chan, busy));
            }
        }
        ahead
    }
}
