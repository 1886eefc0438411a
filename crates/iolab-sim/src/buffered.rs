//! Which LPNs an SSD holds only in its DRAM write buffer: written by the host, in a program
//! unit that is still open or whose program has not ended. A read of such an LPN cannot come
//! from NAND (the data is not there yet) and is served from DRAM instead.
//!
//! ```text
//!  slots: lpn ──hash──▶ (lpn, unit seq)      units: seq ──ring──▶ (seq, program end)
//! ```
//!
//! Both tables are fixed-size and direct-mapped, so a write costs one store and a read one or
//! two loads. They are sized well beyond what the buffer can hold; when two buffered LPNs
//! still meet in one slot, the older is forgotten and a read of it goes to NAND, as every read
//! did before this index (the error is one-sided and rare). The open unit's own LPNs are also
//! kept in a short list, which every write checks for a rewrite it can merge.

use iolab_drive::hint::CacheHint;

/// A unit sequence number that no unit has.
const NO_UNIT: u64 = u64::MAX;

/// The index of an SSD's buffered LPNs.
#[derive(Clone, Debug)]
pub struct BufferedLpns {
    /// `(lpn, seq)` of the last LPN written into each slot; `seq` is [`NO_UNIT`] when empty.
    slots: Vec<(u64, u64)>,
    /// `(seq, end)`: when each programmed unit's program ends and its data leaves the buffer.
    units: Vec<(u64, u64)>,
    /// The unit being filled, or [`NO_UNIT`].
    open: u64,
    /// The LPNs written into it: a handful (a unit's worth), checked on every write without
    /// touching the slots.
    open_lpns: Vec<u64>,
    /// Bit `lpn % 64` of every LPN in `open_lpns`: most writes touch none of them, which the
    /// mask tells without scanning the list (the scan cost 24 instructions per random write).
    open_mask: u64,
    /// Units opened so far (the next one's seq).
    opened: u64,
    /// The latest program end booked: nothing is buffered from then on (unless a unit is open).
    last_end: u64,
}

impl BufferedLpns {
    /// An index for a buffer of `buffer_bytes` filled `min_lpn_bytes` at a time at the least
    /// (a compressed LPN can take a single 512-byte unit), in program units of `unit_bytes`.
    pub fn new(buffer_bytes: u64, unit_bytes: u64, min_lpn_bytes: u64) -> BufferedLpns {
        // Four slots per LPN the buffer can hold keep collisions rare; the cap keeps a
        // buffer of gigabytes from costing as much: a collision only costs a NAND read.
        let lpns = buffer_bytes / min_lpn_bytes.max(1);
        let slots = (4 * lpns).clamp(64, 1 << 20).next_power_of_two() as usize;
        // Units in the buffer at once, and the open one.
        let units = (2 * buffer_bytes / unit_bytes.max(1) + 2)
            .clamp(16, 1 << 16)
            .next_power_of_two() as usize;
        BufferedLpns {
            slots: vec![(0, NO_UNIT); slots],
            units: vec![(NO_UNIT, 0); units],
            open: NO_UNIT,
            open_lpns: Vec::with_capacity((unit_bytes / min_lpn_bytes.max(1)) as usize),
            open_mask: 0,
            opened: 0,
            last_end: 0,
        }
    }

    #[inline]
    fn slot(&self, lpn: u64) -> usize {
        // Fibonacci hashing: sequential LPNs spread over the table, and so do strided ones.
        (lpn.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & (self.slots.len() - 1)
    }

    /// Starts loading `lpn`'s slot into the cache (it will be looked up soon).
    #[inline]
    pub fn prefetch(&self, lpn: u64, hint: CacheHint) {
        hint.prefetch(&self.slots[self.slot(lpn)]);
    }

    /// A new unit opens for writes.
    #[inline]
    pub fn open_unit(&mut self) {
        self.forget_open_lpns();
        self.open = self.opened;
        self.opened += 1;
    }

    /// Empties the open unit's list of LPNs and its mask, which go together.
    #[inline]
    fn forget_open_lpns(&mut self) {
        self.open_lpns.clear();
        self.open_mask = 0;
    }

    /// `lpn` was written into the open unit.
    #[inline]
    pub fn written(&mut self, lpn: u64) {
        let s = self.slot(lpn);
        self.slots[s] = (lpn, self.open);
        self.open_lpns.push(lpn);
        self.open_mask |= 1 << (lpn % 64);
    }

    /// The open unit's program was booked to end at `end`, when its data leaves the buffer
    /// (a unit is programmed as soon as it is no longer the one being filled).
    #[inline]
    pub fn programmed(&mut self, end: u64) {
        let seq = self.open;
        let mask = self.units.len() as u64 - 1;
        self.units[(seq & mask) as usize] = (seq, end);
        self.open = NO_UNIT;
        self.forget_open_lpns();
        self.last_end = self.last_end.max(end);
    }

    /// Whether any LPN may be in the buffer at `at`: a unit is open or a program is still
    /// running (not so in a read-only run, which then skips [`BufferedLpns::holds`]).
    #[inline]
    pub fn any_at(&self, at: u64) -> bool {
        self.open != NO_UNIT || at < self.last_end
    }

    /// Whether the latest data of `lpn` is still only in the buffer at `at`.
    #[inline]
    pub fn holds(&self, lpn: u64, at: u64) -> bool {
        if !self.any_at(at) {
            return false;
        }
        let (slot_lpn, seq) = self.slots[self.slot(lpn)];
        if slot_lpn != lpn || seq == NO_UNIT {
            return false;
        }
        if seq == self.open {
            return true;
        }
        let mask = self.units.len() as u64 - 1;
        let (unit_seq, end) = self.units[(seq & mask) as usize];
        // A later unit in the ring slot: this one left the ring long ago (or, were the ring
        // too small, the read goes to NAND: the one-sided error above).
        unit_seq == seq && at < end
    }

    /// Whether any of LPNs `first..=last` was written into the unit still open, where a
    /// rewrite can replace it in the buffer.
    #[inline]
    pub fn in_open_unit(&self, first: u64, last: u64) -> bool {
        let n = last - first + 1;
        if n < 64 {
            let range = ((1u64 << n) - 1).rotate_left((first % 64) as u32);
            if self.open_mask & range == 0 {
                return false;
            }
        }
        self.open_lpns.iter().any(|&l| first <= l && l <= last)
    }

    /// Forgets everything (the buffer was emptied by an analytic fill).
    pub fn clear(&mut self) {
        self.slots.fill((0, NO_UNIT));
        self.units.fill((NO_UNIT, 0));
        self.open = NO_UNIT;
        self.forget_open_lpns();
        self.last_end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_lpn_is_buffered_from_its_write_until_its_unit_is_programmed() {
        let mut b = BufferedLpns::new(1 << 20, 32 << 10, 4096);
        assert!(!b.holds(7, 0), "nothing written yet");
        b.open_unit();
        b.written(7);
        b.written(8);
        assert!(
            b.holds(7, 1_000_000) && b.holds(8, 5),
            "open unit: held however late"
        );
        assert!(b.in_open_unit(7, 7) && b.in_open_unit(0, 7) && !b.in_open_unit(9, 100));
        assert!(!b.holds(9, 5), "never written");
        b.programmed(2_000);
        assert!(b.holds(7, 1_999), "program still running");
        assert!(!b.in_open_unit(7, 7), "its unit is no longer open");
        assert!(!b.holds(7, 2_000), "programmed: on NAND now");

        // A rewrite moves the LPN to the next unit, which is still open.
        b.open_unit();
        b.written(7);
        assert!(b.holds(7, 3_000) && !b.holds(8, 3_000));
        b.programmed(4_000);
        assert!(!b.holds(7, 4_000));

        b.open_unit();
        b.written(8);
        b.clear();
        assert!(!b.holds(8, 0), "cleared");
    }

    #[test]
    fn the_open_units_mask_only_rules_lpns_out() {
        let mut b = BufferedLpns::new(1 << 20, 32 << 10, 4096);
        b.open_unit();
        b.written(7);
        b.written(130); // bit 2
        assert!(b.in_open_unit(7, 7) && b.in_open_unit(130, 130));
        assert!(
            !b.in_open_unit(71, 71) && !b.in_open_unit(2, 2) && !b.in_open_unit(66, 70),
            "LPNs 64 apart share a bit of the mask: the list decides"
        );
        assert!(
            b.in_open_unit(126, 131) && !b.in_open_unit(124, 129) && !b.in_open_unit(8, 63),
            "ranges across the mask's wrap"
        );
        assert!(
            b.in_open_unit(100, 300) && !b.in_open_unit(8, 129),
            "ranges of 64 LPNs or more go to the list"
        );
        b.programmed(10);
        assert!(!b.in_open_unit(7, 7) && !b.in_open_unit(0, 1000));
    }

    #[test]
    fn a_unit_that_left_the_ring_is_not_taken_for_buffered() {
        let mut b = BufferedLpns::new(64 << 10, 32 << 10, 4096);
        let ring = b.units.len() as u64;
        b.open_unit();
        b.written(1);
        b.programmed(u64::MAX - 1); // its end is long, but the ring moves on
        for _ in 0..ring {
            b.open_unit();
            b.programmed(10);
        }
        assert!(!b.holds(1, 5), "its ring slot holds a later unit");
    }
}
