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
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, Ordering};

/// Asks the system to back memory not yet touched with huge pages (the engine's
/// `sys::advise_huge_pages`; this crate makes no system calls of its own).
pub type AdviseHugePages = fn(&mut [MaybeUninit<AtomicU64>]);

/// A transparent huge page, the unit a table's storage is aligned to when advised.
const HUGE_PAGE: usize = 2 << 20;

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
    /// The cells from `start` on; the ones before only align the table to a huge page.
    storage: Vec<AtomicU64>,
    start: usize,
}

impl Table {
    /// A table for `len` bytes from `base`, in granules of `granule` bytes; `None` when that
    /// is more than [`MAX_GRANULES`]. With `huge_pages`, a table of a huge page or more starts
    /// on one and is advised before its pages are first touched: a write's claim reads one word
    /// at a random place of it, and with 4 KiB pages over a large span that is a TLB miss and a
    /// page walk per write (under virtualisation, a walk of two page tables).
    pub fn new(
        base: u64,
        len: u64,
        granule: u64,
        huge_pages: Option<AdviseHugePages>,
    ) -> Option<Table> {
        let n = len.div_ceil(granule);
        if n > MAX_GRANULES {
            return None;
        }
        let (storage, start) = zeroed_cells(n as usize, huge_pages);
        Some(Table {
            base,
            granule,
            storage,
            start,
        })
    }

    #[inline]
    fn cells(&self) -> &[AtomicU64] {
        &self.storage[self.start..]
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
        // Clamped to the table, so a stretch beyond it is empty rather than a slicing panic.
        let end = end.min(self.cells().len());
        first.min(end)..end
    }

    /// The state word of the granule holding `offset` (for a prefetch: a write's claim reads
    /// it, and over a large span that is a cache miss per write).
    pub fn state_word(&self, offset: u64) -> &AtomicU64 {
        let i = ((offset.saturating_sub(self.base)) / self.granule) as usize;
        &self.cells()[i.min(self.cells().len() - 1)]
    }

    /// Claims the granules of a write; false (nothing claimed) when a write is in flight on
    /// any of them.
    pub fn claim(&self, offset: u64, len: u64) -> bool {
        let r = self.range(offset, len);
        let cells = self.cells();
        for i in r.clone() {
            if cells[i].fetch_or(BUSY, Ordering::Acquire) & BUSY != 0 {
                for cell in &cells[r.start..i] {
                    cell.fetch_and(!BUSY, Ordering::Release);
                }
                return false;
            }
        }
        true
    }

    /// Records that the write of `generation` at `offset` landed; `release` frees its granules.
    pub fn record(&self, offset: u64, len: u64, generation: u64, release: bool) {
        let r = self.range(offset, len);
        let keep = if release { 0 } else { BUSY };
        for (i, cell) in self.cells()[r].iter().enumerate() {
            let delta = i as u64 & DELTA_MASK;
            cell.store(
                keep | (generation & GEN_MASK) << DELTA_BITS | delta,
                Ordering::Release,
            );
        }
    }

    /// Frees the granules of a write without changing what they should hold.
    pub fn release(&self, offset: u64, len: u64) {
        for cell in &self.cells()[self.range(offset, len)] {
            cell.fetch_and(!BUSY, Ordering::Release);
        }
    }

    /// Forgets what the granules should hold (a write that failed: its content is unknown).
    pub fn forget(&self, offset: u64, len: u64) {
        for cell in &self.cells()[self.range(offset, len)] {
            cell.store(0, Ordering::Release);
        }
    }

    /// The (generation, block offset) granule `i` should hold, if written.
    fn cell(&self, i: usize) -> Option<(u64, u64)> {
        let v = self.cells()[i].load(Ordering::Acquire);
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
        let end = ((to.saturating_sub(self.base)).div_ceil(self.granule) as usize)
            .min(self.cells().len());
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
        self.base + self.cells().len() as u64 * self.granule
    }
}

/// `n` zeroed cells from the returned index on; aligned to a huge page and advised first when
/// `huge_pages` is given and they fill at least one.
fn zeroed_cells(n: usize, huge_pages: Option<AdviseHugePages>) -> (Vec<AtomicU64>, usize) {
    const PER_PAGE: usize = HUGE_PAGE / std::mem::size_of::<AtomicU64>();
    let Some(advise) = huge_pages.filter(|_| n >= PER_PAGE) else {
        return ((0..n).map(|_| AtomicU64::new(0)).collect(), 0);
    };
    let mut storage: Vec<AtomicU64> = Vec::with_capacity(n + PER_PAGE);
    let misalign = storage.as_ptr() as usize % HUGE_PAGE;
    let start = (HUGE_PAGE - misalign) % HUGE_PAGE / std::mem::size_of::<AtomicU64>();
    let end = (start + n.next_multiple_of(PER_PAGE)).min(storage.capacity());
    advise(&mut storage.spare_capacity_mut()[start..end]);
    storage.extend((0..start + n).map(|_| AtomicU64::new(0)));
    (storage, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_granule_in_flight_cannot_be_claimed_twice() {
        let t = Table::new(0, 1 << 20, 4096, None).unwrap();
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
    fn an_advised_table_starts_on_a_huge_page_and_is_advised_before_use() {
        use std::sync::atomic::AtomicUsize;
        static ADVISED: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
        fn record(cells: &mut [MaybeUninit<AtomicU64>]) {
            ADVISED[0].store(cells.as_ptr() as usize, Ordering::SeqCst);
            ADVISED[1].store(cells.len(), Ordering::SeqCst);
        }
        // Under one huge page of cells: nothing to gain, not advised.
        let small = Table::new(0, 1 << 20, 4096, Some(record)).unwrap();
        assert_eq!(ADVISED[0].load(Ordering::SeqCst), 0);
        assert_eq!(small.cells().len(), 256);
        let t = Table::new(4096, 3 << 30, 4096, Some(record)).unwrap();
        let first = t.cells().as_ptr() as usize;
        assert_eq!(first % HUGE_PAGE, 0);
        assert_eq!(ADVISED[0].load(Ordering::SeqCst), first);
        assert_eq!(ADVISED[1].load(Ordering::SeqCst) * 8, 3 * HUGE_PAGE);
        assert_eq!(t.cells().len(), 3 << 18);
        assert_eq!(t.end(), 4096 + (3 << 30));
        assert!(t.cells().iter().all(|c| c.load(Ordering::Relaxed) == 0));
        assert!(t.claim(4096 + (2 << 30), 8192));
        t.record(4096 + (2 << 30), 8192, 5, true);
        let s = t.stretches_between(1, 4096 + (2 << 30), 4096 + (2 << 30) + 8192, 1 << 20);
        assert_eq!((s.len(), s[0].len, s[0].generation), (1, 8192, 5));
    }

    #[test]
    fn stretches_follow_the_last_write_on_each_granule() {
        let t = Table::new(0, 64 << 10, 4096, None).unwrap();
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
