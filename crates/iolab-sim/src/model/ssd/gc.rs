//! Garbage collection on each die: page copies then erases, booked as separate NAND
//! operations, and the collections in progress carried over an analytic steady state.
//!
//! A copy goes through the controller, not the die's on-chip COPYBACK: the page is read (tR),
//! clocked out over the channel to the controller's ECC, clocked back in and programmed. NAND
//! datasheets warn that copyback bypasses the external ECC, so bit errors from charge loss
//! are carried over uncorrected and the number of copybacks of the same data should be
//! limited (ST NAND128-A/NAND01G-A and Numonyx NAND01G-B2B datasheets, "Copy Back Program";
//! Hynix H9TA4GH2GDMCPR, "Copy-Back Program"); a page an SSD relocates again and again under
//! random writes would accumulate them. MQSim ships with `Use_Copyback_for_GC` false (its
//! ssdconfig.xml), so its collections read and write through the channel too. Each copied
//! program unit therefore holds its die for tR + data-out + data-in + tPROG and its channel
//! for the two transfers, which the channel's other dies' host programs wait for.

use super::*;
use crate::ftl::GcCost;
use crate::model::power::Energy;
use crate::model::resource::{Res, ResId};

/// About how long one booking of a collection's channel transfers lasts (see
/// [`Ssd::book_copy_transfers`]): a modelling granularity, not a drive's parameter. One booking
/// per copy would put a few thousand bookings per channel in the queue every program load
/// searches while a drive collects flat out; a millisecond's worth (six copies of 16 KiB
/// two-plane units on a 400 MT/s channel, one on a SandForce's slow asynchronous bus) holds
/// a host read's data-out no longer than a few host program loads would.
pub(super) const COPY_SLICE_NS: u64 = 1_000_000;

/// Garbage collection booked on one die: page copies (tR, two transfers, tPROG each), then
/// erases. They are separate NAND operations, so a host read waits for the one in progress,
/// not for the whole collection, and so does a host program while the die has room for it
/// ([`Ssd::program_may_start`]); every read or program taken in between pushes the rest of the
/// collection back.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::model) struct GcWork {
    /// Start of the first copy (moved back by the reads and programs taken in between).
    pub(super) start: u64,
    /// One copy: tR, its data-out and data-in over the channel, tPROG.
    pub(super) copy_ns: u64,
    /// End of the copies; the erases follow.
    pub(super) copies_end: u64,
    /// One erase.
    pub(super) erase_ns: u64,
    /// End of the collection.
    pub(in crate::model) end: u64,
    /// Carried from an analytic steady state: charged as it runs ([`Ssd::charge_carried`]),
    /// not when booked.
    pub(super) carried: bool,
    /// FTL units the collection gives back (erased less copied): the FTL counts them free
    /// when it books the collection, the die has them as the collection runs (taken as
    /// linear in its time, see [`GcWork::unreclaimed`]).
    pub(super) reclaim_units: u64,
}

impl GcWork {
    /// When the operation in progress at `t` ends (`t` itself if no collection runs then).
    pub(super) fn op_end(&self, t: u64) -> u64 {
        if t < self.start || t >= self.end {
            return t;
        }
        let (from, op) = if t < self.copies_end {
            (self.start, self.copy_ns)
        } else {
            (self.copies_end, self.erase_ns)
        };
        if op == 0 {
            return t;
        }
        (from + (t - from).div_ceil(op) * op).min(self.end)
    }

    /// The units of [`GcWork::reclaim_units`] the die does not have yet at `t`.
    pub(super) fn unreclaimed(&self, t: u64) -> u64 {
        if t <= self.start {
            return self.reclaim_units;
        }
        if t >= self.end {
            return 0;
        }
        let left = (self.end - t) as u128;
        (self.reclaim_units as u128 * left).div_ceil((self.end - self.start) as u128) as u64
    }

    /// When at least `units` of what is unreclaimed at `t` has been reclaimed (`t` or later).
    pub(super) fn reclaimed_by(&self, t: u64, units: u64) -> u64 {
        let have = self.unreclaimed(t);
        if units == 0 || have == 0 {
            return t;
        }
        if units >= have {
            return self.end.max(t);
        }
        // unreclaimed(x) = reclaim * (end - x) / span <= have - units
        let span = (self.end - self.start) as u128;
        let left = ((have - units) as u128 * span / self.reclaim_units as u128) as u64;
        (self.end - left).max(t)
    }

    /// How long work on the die from `start` to `end` holds up what is left of the
    /// collection: work between two of its operations (or just before its first) pushes the
    /// rest back by its length; work outside it, not at all.
    pub(super) fn overlap(&self, start: u64, end: u64) -> u64 {
        if start < self.end && end > self.start {
            end - start.max(self.start)
        } else {
            0
        }
    }

    /// Moves what is left of the collection back by `ns`.
    pub(super) fn delay(&mut self, ns: u64) {
        self.start += ns;
        self.copies_end += ns;
        self.end += ns;
    }

    /// Its copy time and erase time after `now` (still to run).
    pub(super) fn after(&self, now: u64) -> (u64, u64) {
        let left = |from: u64, to: u64| to.saturating_sub(from.max(now));
        (
            left(self.start, self.copies_end),
            left(self.copies_end, self.end),
        )
    }
}

/// The copies a collection books (from its start).
pub(super) fn copies_of(gc: &GcWork) -> u64 {
    (gc.copies_end - gc.start) / gc.copy_ns.max(1)
}

/// Collections in progress at an analytic steady state (see [`Ssd::stagger_collections`]):
/// the share still to run of each, as busy time from `from`, and the energy and pages moved
/// and erased of them all, charged as their time passes ([`Ssd::charge_carried`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Carried {
    pub(super) from: u64,
    pub(super) die_busy: Vec<(ResId, u64)>,
    pub(super) energy: Energy,
    pub(super) gc_units: u64,
    pub(super) erased_units: u64,
    /// Charged up to this time.
    pub(super) charged_to: u64,
}

impl Carried {
    /// Die time of the carried collections run by `t`.
    pub(super) fn done_by(&self, t: u64) -> u64 {
        let elapsed = t.saturating_sub(self.from);
        self.die_busy.iter().map(|&(_, ns)| ns.min(elapsed)).sum()
    }
}

impl Ssd {
    /// The booking of a collection that moves and erases `cost`, from `start`: each moved
    /// program unit read, carried through the controller and programmed (see the module
    /// comment), then the erases. Moved pages are as many lower as upper pages: the mean
    /// times apply. Also returns its die time for power (its channel time is booked apart, by
    /// [`Ssd::book_copy_transfers`]).
    pub(super) fn collection(&self, cost: &GcCost, start: u64) -> (GcWork, Energy) {
        let ub = self.ftl.unit_bytes as u64;
        let ops = (cost.moved_units * ub).div_ceil(self.unit_bytes);
        let erases = (cost.erased_units * ub).div_ceil(self.block_bytes);
        let (read_ns, program_ns) = (mean_of(self.read_ns), mean_of(self.program_ns));
        // With a parity die, each copy carries its share of its new stripe's parity program
        // (load and tPROG), booked here on the collecting die.
        let (parity_load_ns, parity_program_ns) = match self.parity_every as u64 {
            0 => (0, 0),
            n => (self.unit_load_ns() / n, program_ns / n),
        };
        let copy_ns =
            read_ns + self.copy_transfer_ns() + program_ns + parity_load_ns + parity_program_ns;
        let gc = GcWork {
            start,
            copy_ns,
            copies_end: start + ops * copy_ns,
            erase_ns: self.erase_ns,
            end: start + ops * copy_ns + erases * self.erase_ns,
            carried: false,
            reclaim_units: cost.erased_units.saturating_sub(cost.moved_units),
        };
        let energy = Energy {
            read_ns: ops * read_ns,
            program_ns: ops * (program_ns + parity_program_ns),
            erase_ns: erases * self.erase_ns,
        };
        (gc, energy)
    }

    /// Channel time of one program unit's load into a die: a host write's, a copy's second
    /// half.
    pub(super) fn unit_load_ns(&self) -> u64 {
        (self.unit_bytes as f64 * self.chan_load_ns_per_byte) as u64
    }

    /// Channel time of one copied program unit: its data-out to the controller and its
    /// data-in back to the die.
    pub(super) fn copy_transfer_ns(&self) -> u64 {
        (self.unit_bytes as f64 * self.chan_ns_per_byte) as u64 + self.unit_load_ns()
    }

    /// Books the channel transfers of the copies `gc` runs on die `die` from `from` on: a
    /// collection's copies share the channel with the other dies' program loads and
    /// read data-outs. They are booked in slices of about [`COPY_SLICE_NS`] (whole copies,
    /// at least one), each within its copies' span at the die's turn among the channel's dies
    /// (or in the first gap after it), so loads for other dies fit between them as they would
    /// between single copies. Returns the channel time booked.
    pub(super) fn book_copy_transfers(
        &mut self,
        res: &mut [Res],
        die: u32,
        gc: &GcWork,
        from: u64,
    ) -> u64 {
        let per_copy = self.copy_transfer_ns();
        let from = from.max(gc.start);
        if per_copy == 0 || gc.copy_ns == 0 || gc.copies_end <= from {
            return 0;
        }
        let copies = (gc.copies_end - from).div_ceil(gc.copy_ns);
        let chan = self.chan_of(die);
        let per_slice = (COPY_SLICE_NS / per_copy).max(1);
        // The dies of a channel take turns within a slice's span: collections that start
        // together (those an analytic steady state leaves running) would otherwise stack their
        // first slices on the channel while real transfers interleave copy by copy.
        let ways = self.dies.len().div_ceil(self.chans.len()).max(1) as u64;
        let way = die as u64 / self.chans.len() as u64;
        let mut left = copies;
        let mut t = from;
        while left > 0 {
            let n = left.min(per_slice);
            let turn = way * (n * gc.copy_ns - n * per_copy) / ways;
            // Nothing is forgotten here (`at` 0): the collection may be booked well ahead of
            // the write that started it, and later loads keep the bookings apart.
            self.load_channel(res, chan, 0, t + turn, n * per_copy);
            t += n * gc.copy_ns;
            left -= n;
        }
        copies * per_copy
    }

    /// Spreads the dies over the garbage-collection cycle of the steady state. An analytic
    /// steady state leaves every die at its collection threshold at once, so the first writes
    /// would start a collection on every die together and stall the drive for the length of
    /// one (over a second on the SSD 750), a synchronised start no drive that reached its
    /// steady state by writing has. Die `d` takes phase `d × 0.618…` (mod 1) of its cycle: a
    /// collection (of the cost its next one has) for the share of the cycle collections take
    /// when the drive writes flat out, then the writing of the room it gave back. A die in its
    /// collection has the FTL state of the collection done and the rest of it booked from
    /// `now`, its cost carried to the next job ([`Ssd::charge_carried`]); a die writing has
    /// part of that room taken.
    pub fn stagger_collections(&mut self, res: &mut [Res], now: u64) {
        let block_units = self.ftl.block_units as u64;
        let block_write_ns = self.block_bytes / self.unit_bytes * mean_of(self.program_ns);
        self.carried = Carried {
            from: now,
            charged_to: now,
            ..Carried::default()
        };
        // Channel time of the carried copies' transfers, drawn with their dies' work.
        let mut carried_chan_ns = 0u64;
        for d in 0..self.dies.len() {
            let cost = self.ftl.collect(d as u32);
            let (full, energy) = self.collection(&cost, 0);
            let gc_ns = full.end as f64;
            // The host writes what the collection gave back before the die collects again.
            let given_back = cost.erased_units.saturating_sub(cost.moved_units);
            let write_ns = block_write_ns as f64 * given_back as f64 / block_units as f64;
            let in_gc = gc_ns / (gc_ns + write_ns);
            let phase = (d as f64 * 0.618_033_988_749_895).fract();
            if phase < in_gc {
                // The tail of the collection: its last copies, then its erases.
                let share = (in_gc - phase) / in_gc;
                let end = now + (share * gc_ns) as u64;
                let c = &mut self.carried;
                c.die_busy.push((self.dies[d], end - now));
                c.energy.add(energy.share(share));
                let part = |x: u64| (x as f64 * share) as u64;
                c.gc_units += part(cost.moved_units);
                c.erased_units += part(cost.erased_units);
                // Counted when charged, not now.
                self.ftl.counters.gc_units -= part(cost.moved_units);
                self.ftl.counters.erased_units -= part(cost.erased_units);
                self.replace_register_at(d as u32, now);
                let gc = GcWork {
                    start: now,
                    copies_end: end.saturating_sub(full.end - full.copies_end).max(now),
                    end,
                    carried: true,
                    reclaim_units: part(full.reclaim_units),
                    ..full
                };
                self.gc[d] = gc;
                carried_chan_ns += self.book_copy_transfers(res, d as u32, &gc, now);
                let r = &mut res[self.dies[d] as usize];
                r.busy_until = r.busy_until.max(end);
                self.die_free.raise(d, end);
            } else {
                let taken = (phase - in_gc) / (1.0 - in_gc) * given_back as f64;
                self.ftl.take_free(d as u32, taken as u64);
            }
        }
        if let Some(l) = &mut self.power_limit {
            // The dies draw it evenly until their collections end.
            let c = &self.carried;
            let die_ns: u64 = c.die_busy.iter().map(|&(_, ns)| ns).sum();
            let joules =
                self.power.joules(c.energy) + carried_chan_ns as f64 * self.power.channel_w / 1e9;
            let watts = joules * 1e9 / die_ns.max(1) as f64;
            for &(_, ns) in &c.die_busy {
                l.add_background(now, now + ns, watts);
            }
        }
    }

    /// Charges the part of the collection work carried from an analytic steady state that has
    /// run by `now` (`u64::MAX`: all of it): the dies' busy time, energy, and the pages moved
    /// and erased (write amplification). A job's report then holds what ran during the job: a
    /// job shorter than the carried collections would otherwise take all of their energy and
    /// pages (a 100-write job reported 7.7 kW and a write amplification of 2,500).
    pub fn charge_carried(&mut self, res: &mut [Res], now: u64) {
        let c = &mut self.carried;
        let total = c.done_by(u64::MAX);
        if total == 0 || now <= c.charged_to {
            return;
        }
        let (before, after) = (c.done_by(c.charged_to), c.done_by(now));
        let elapsed = |t: u64| t.saturating_sub(c.from);
        for &(die, ns) in &c.die_busy {
            res[die as usize].busy_ns += ns.min(elapsed(now)) - ns.min(elapsed(c.charged_to));
        }
        // Each total in proportion to the die time run; the last charge gives exactly the rest.
        let part = |x: u64| {
            let by = |done: u64| (x as u128 * done as u128 / total as u128) as u64;
            by(after) - by(before)
        };
        self.energy.add(Energy {
            read_ns: part(c.energy.read_ns),
            program_ns: part(c.energy.program_ns),
            erase_ns: part(c.energy.erase_ns),
        });
        self.ftl.counters.gc_units += part(c.gc_units);
        self.ftl.counters.erased_units += part(c.erased_units);
        c.charged_to = now;
        if after == total {
            self.carried = Carried::default();
        }
    }
}
