//! What every granule of a span should hold: the generation and block of the last write that
//! landed on it, shared by a job's threads.
//!
//! One `u64` per granule (the job's smallest block unit), packed: bit 63 marks a write in
//! flight on the granule, bits 24..63 the generation (0: never written in this run), bits
//! 0..24 how many granules back its block starts. A write claims its granules before it is
//! submitted and releases them when it completes (or, verified inline, once read back), so no
//! two writes to one block are ever in flight together: with two in flight the device may
//! complete them in either order and the expected content would be unknowable (fio's
//! `serialize_overlap`).

use crate::check::Expected;
use std::sync::atomic::{AtomicU64, Ordering};

const BUSY: u64 = 1 << 63;
const DELTA_BITS: u32 = 24;
const DELTA_MASK: u64 = (1 << DELTA_BITS) - 1;
const GEN_MASK: u64 = (1 << 39) - 1;

/// The most granules a table may track (8 bytes each: 1 GiB of memory).
pub const MAX_GRANULES: u64 = 1 << 27;

/// Expected state of a span, granule by granule.
#[derive(Debug)]
pub struct Table {
    base: u64,
    granule: u64,
    cells: Vec<AtomicU64>,
}

impl Table {
    /// A table for `len` bytes from `base`, in granules of `granule` bytes; `None` when that
    /// is more than [`MAX_GRANULES`].
    pub fn new(base: u64, len: u64, granule: u64) -> Option<Table> {
        let n = len.div_ceil(granule);
        if n > MAX_GRANULES {
            return None;
        }
        Some(Table {
            base,
            granule,
            cells: (0..n).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// The first byte the table covers.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Granule size in bytes.
    pub fn granule(&self) -> u64 {
        self.granule
    }

    fn range(&self, offset: u64, len: u64) -> std::ops::Range<usize> {
        let first = ((offset - self.base) / self.granule) as usize;
        let end = ((offset + len - self.base).div_ceil(self.granule)) as usize;
        first..end.min(self.cells.len())
    }

    /// The state word of the granule holding `offset` (for a prefetch: a write's claim reads
    /// it, and over a large span that is a cache miss per write).
    pub fn state_word(&self, offset: u64) -> &AtomicU64 {
        let i = ((offset.saturating_sub(self.base)) / self.granule) as usize;
        &self.cells[i.min(self.cells.len() - 1)]
    }

    /// Claims the granules of a write; false (nothing claimed) when a write is in flight on
    /// any of them.
    pub fn claim(&self, offset: u64, len: u64) -> bool {
        let r = self.range(offset, len);
        for i in r.clone() {
            if self.cells[i].fetch_or(BUSY, Ordering::Acquire) & BUSY != 0 {
                for j in r.start..i {
                    self.cells[j].fetch_and(!BUSY, Ordering::Release);
                }
                return false;
            }
        }
        true
    }

    /// Records that the write of `generation` at `offset` landed; `release` frees its granules.
    pub fn record(&self, offset: u64, len: u64, generation: u64, release: bool) {
        let r = self.range(offset, len);
        let first = r.start;
        for i in r {
            let keep = if release { 0 } else { BUSY };
            let delta = (i - first) as u64 & DELTA_MASK;
            self.cells[i].store(
                keep | (generation & GEN_MASK) << DELTA_BITS | delta,
                Ordering::Release,
            );
        }
    }

    /// Frees the granules of a write without changing what they should hold.
    pub fn release(&self, offset: u64, len: u64) {
        for i in self.range(offset, len) {
            self.cells[i].fetch_and(!BUSY, Ordering::Release);
        }
    }

    /// Forgets what the granules should hold (a write that failed: its content is unknown).
    pub fn forget(&self, offset: u64, len: u64) {
        for i in self.range(offset, len) {
            self.cells[i].store(0, Ordering::Release);
        }
    }

    /// The (generation, block offset) granule `i` should hold, if written.
    fn cell(&self, i: usize) -> Option<(u64, u64)> {
        let v = self.cells[i].load(Ordering::Acquire);
        let generation = (v >> DELTA_BITS) & GEN_MASK;
        (generation != 0).then(|| {
            let block = self.base + (i as u64 - (v & DELTA_MASK)) * self.granule;
            (generation, block)
        })
    }

    /// Every written stretch, in offset order: runs of granules of one write, cut at
    /// `max_len` bytes.
    pub fn stretches(&self, run_id: u32, max_len: u64) -> Vec<Expected> {
        self.stretches_between(run_id, self.base, u64::MAX, max_len)
    }

    /// The written stretches of the granules from the one holding `from` up to `to`.
    pub fn stretches_between(
        &self,
        run_id: u32,
        from: u64,
        to: u64,
        max_len: u64,
    ) -> Vec<Expected> {
        let first = (from.saturating_sub(self.base) / self.granule) as usize;
        let end =
            ((to.saturating_sub(self.base)).div_ceil(self.granule) as usize).min(self.cells.len());
        let mut out: Vec<Expected> = Vec::new();
        for i in first.min(end)..end {
            let Some((generation, block_offset)) = self.cell(i) else {
                continue;
            };
            let start = self.base + i as u64 * self.granule;
            if let Some(last) = out.last_mut() {
                if last.generation == generation
                    && last.block_offset == block_offset
                    && last.start + last.len == start
                    && last.len + self.granule <= max_len
                {
                    last.len += self.granule;
                    continue;
                }
            }
            out.push(Expected {
                run_id,
                block_offset,
                start,
                len: self.granule,
                generation,
                floor: generation,
                after_crash: false,
            });
        }
        out
    }

    /// The end of the bytes the table covers.
    pub fn end(&self) -> u64 {
        self.base + self.cells.len() as u64 * self.granule
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granule_in_flight_cannot_be_claimed_twice() {
        let t = Table::new(0, 1 << 20, 4096).unwrap();
        assert!(t.claim(8192, 8192));
        assert!(!t.claim(12288, 8192), "overlaps the write in flight");
        assert!(
            t.claim(16384, 4096),
            "the claim that failed left nothing behind"
        );
        t.release(16384, 4096);
        t.record(8192, 8192, 7, true);
        assert!(t.claim(12288, 8192));
    }

    #[test]
    fn stretches_follow_the_last_write_on_each_granule() {
        let t = Table::new(0, 64 << 10, 4096).unwrap();
        t.record(0, 16384, 1, true);
        t.record(4096, 4096, 2, true);
        let s: Vec<(u64, u64, u64, u64)> = t
            .stretches(9, 1 << 20)
            .iter()
            .map(|e| (e.start, e.len, e.block_offset, e.generation))
            .collect();
        assert_eq!(
            s,
            [(0, 4096, 0, 1), (4096, 4096, 4096, 2), (8192, 8192, 0, 1)]
        );
        t.forget(0, 4096);
        assert_eq!(t.stretches(9, 1 << 20).len(), 2);
    }
}
