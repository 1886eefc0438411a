//! The FTL's LPN → node map, in memory proportional to what a job touches.
//!
//! ```text
//!  LPN ─▶ chunk (4096 LPNs = 16 MiB of drive)
//!          ├─ Analytic: where the last analytic fill put it (a formula over the fill's blocks)
//!          ├─ Runs:     entries written in order since, as runs naming one node; the rest analytic
//!          ├─ Sparse:   the entries written since, in a small hash table; the rest analytic
//!          └─ Dense:    every entry stored (a chunk written over more than an eighth)
//! ```
//!
//! A fill (sequential or steady state) decides where every LPN lives with a formula: which
//! die by stripe, which of the die's blocks by position, or a golden-ratio scatter over all
//! blocks. Storing the outcome took one `u32` per LPN (1.1 GiB for the SSD 750 1.2 TB) even
//! for a job of 32 I/Os; here an untouched LPN is computed from the fill's block table when
//! looked up, and only LPNs written or trimmed since are stored. What an LPN resolves to is
//! the same either way, so the model's results do not change.

use crate::ftl::UNMAPPED;
use iolab_drive::hint::CacheHint;
use runs::Runs;

mod runs;

/// Marks a range-table entry that spans blocks (the rest is its first block's index).
const SPANS: u32 = 1 << 31;

/// LPNs per chunk, as a power of two.
const CHUNK_BITS: u32 = 12;
const CHUNK_LPNS: usize = 1 << CHUNK_BITS;
/// A sparse chunk turns dense past this many stored entries (an eighth of its LPNs): its
/// table (8 bytes a slot, at most half full) would then take half of a dense chunk.
const SPARSE_MAX: usize = CHUNK_LPNS / 8;

/// One stored entry of a sparse chunk.
#[derive(Clone, Copy, Debug)]
struct Entry {
    offset: u16,
    size: u8,
    node: u32,
}

/// The offset of an empty slot of a sparse chunk's table.
const EMPTY: u16 = u16::MAX;

/// A sparse chunk's entries: open addressing by offset, linear probing, at most half full.
/// A sorted list took three binary searches over cold memory per write (its entries of all
/// chunks exceed the caches): random writes over a filled 1.2 TB drive ran 3x slower than
/// with the stored map; one probe here is one cache miss, as a stored entry is.
#[derive(Clone, Debug)]
struct Sparse {
    slots: Vec<Entry>,
    len: usize,
}

impl Sparse {
    fn new() -> Sparse {
        Sparse {
            slots: vec![
                Entry {
                    offset: EMPTY,
                    size: 0,
                    node: UNMAPPED
                };
                16
            ],
            len: 0,
        }
    }

    /// The slot holding `offset` (`Ok`), or the empty slot it would take (`Err`).
    #[inline]
    fn find(&self, offset: u16) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = offset as usize & mask;
        loop {
            match self.slots[i].offset {
                EMPTY => return Err(i),
                o if o == offset => return Ok(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    #[inline]
    fn get(&self, offset: u16) -> Option<&Entry> {
        self.find(offset).ok().map(|i| &self.slots[i])
    }

    fn put(&mut self, e: Entry) {
        match self.find(e.offset) {
            Ok(i) => self.slots[i] = e,
            Err(i) => {
                self.slots[i] = e;
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    let old = std::mem::take(&mut self.slots);
                    self.slots = vec![
                        Entry {
                            offset: EMPTY,
                            size: 0,
                            node: UNMAPPED
                        };
                        old.len() * 2
                    ];
                    for e in old.into_iter().filter(|e| e.offset != EMPTY) {
                        let Err(i) = self.find(e.offset) else {
                            unreachable!("offsets are unique")
                        };
                        self.slots[i] = e;
                    }
                }
            }
        }
    }

    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.slots.iter().filter(|e| e.offset != EMPTY)
    }

    fn entries_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.slots.iter_mut().filter(|e| e.offset != EMPTY)
    }
}

#[derive(Clone, Debug)]
struct Dense {
    nodes: Box<[u32]>,
    /// Stored units per LPN; empty without compression.
    sizes: Box<[u8]>,
}

#[derive(Clone, Debug)]
enum Chunk {
    Analytic,
    Runs(Runs),
    Sparse(Sparse),
    Dense(Box<Dense>),
}

/// How an analytic fill ordered the LPNs over its blocks' slots (blocks laid end to end, dies
/// in order, each block as many slots as LPNs it holds).
#[derive(Clone, Debug)]
pub enum Order {
    /// `stripe` consecutive LPNs per die round-robin, each die's LPNs filling its blocks in
    /// order; `die_base[d]` is the first slot of die `d`.
    InOrder {
        /// LPNs per stripe.
        stripe: u64,
        /// First slot of each die.
        die_base: Vec<u64>,
    },
    /// LPN `k` takes slot `k·a mod n`.
    Scattered {
        /// The stride, prime to the slot count.
        a: u64,
    },
}

/// An analytic fill's placement: which block each slot is in.
#[derive(Clone, Debug)]
pub struct Slots {
    order: Order,
    /// Slot count.
    n: u64,
    /// Per block: its end slot (exclusive) and the node now holding its data.
    blocks: Vec<(u64, u32)>,
    /// For each range of 2^shift slots: the node holding it when the range lies in one
    /// block (the common case, one look-up as a stored map entry is), else [`SPANS`] | the
    /// first block it reaches.
    ranges: Vec<u32>,
    shift: u32,
}

impl Slots {
    /// A placement over `blocks` (`(node, LPNs)`, laid end to end) in `order`.
    pub fn new(order: Order, blocks: &[(u32, u64)]) -> Slots {
        let mut end = 0u64;
        let blocks: Vec<(u64, u32)> = blocks
            .iter()
            .map(|&(node, count)| {
                end += count;
                (end, node)
            })
            .collect();
        let n = end;
        // 16 ranges per block on average: most lie within one block.
        let table_bits = (64 - (blocks.len() as u64 * 16).leading_zeros()).max(1);
        let shift = (64 - n.max(1).leading_zeros()).saturating_sub(table_bits);
        let ranges: Vec<u32> = if n == 0 {
            Vec::new()
        } else {
            (0..=(n - 1) >> shift)
                .map(|k| {
                    let (start, end) = (k << shift, ((k + 1) << shift).min(n));
                    let b = blocks.partition_point(|&(e, _)| e <= start);
                    if blocks[b].0 >= end {
                        blocks[b].1
                    } else {
                        SPANS | b as u32
                    }
                })
                .collect()
        };
        Slots {
            order,
            n,
            blocks,
            ranges,
            shift,
        }
    }

    #[inline]
    fn slot_of(&self, lpn: u64) -> u64 {
        match &self.order {
            Order::InOrder { stripe, die_base } => {
                let dies = die_base.len() as u64;
                let s = lpn / stripe;
                die_base[(s % dies) as usize] + (s / dies) * stripe + lpn % stripe
            }
            // Below 2^32 slots the product fits 64 bits (a 1.2 TB drive has 2^28.1): a
            // 64-bit division instead of a 128-bit one.
            Order::Scattered { a } => match lpn.checked_mul(*a) {
                Some(p) => p % self.n,
                None => ((lpn as u128 * *a as u128) % self.n as u128) as u64,
            },
        }
    }

    /// The first block a range of slots reaches (for a range within one block, found by
    /// its end: rare, only where a whole LPN count is needed).
    #[inline]
    fn first_block(&self, range: usize) -> usize {
        let e = self.ranges[range];
        if e & SPANS != 0 {
            (e & !SPANS) as usize
        } else {
            let start = (range as u64) << self.shift;
            self.blocks.partition_point(|&(end, _)| end <= start)
        }
    }

    #[inline]
    fn block_of_slot(&self, slot: u64) -> usize {
        let mut b = self.first_block((slot >> self.shift) as usize);
        while self.blocks[b].0 <= slot {
            b += 1;
        }
        b
    }

    #[inline]
    fn node(&self, lpn: u64) -> u32 {
        let slot = self.slot_of(lpn);
        let e = self.ranges[(slot >> self.shift) as usize];
        if e & SPANS == 0 {
            return e;
        }
        let mut b = (e & !SPANS) as usize;
        while self.blocks[b].0 <= slot {
            b += 1;
        }
        self.blocks[b].1
    }

    /// The range-table entry an LPN's look-up starts from.
    #[inline]
    fn range_entry(&self, lpn: u64) -> &u32 {
        &self.ranges[(self.slot_of(lpn) >> self.shift) as usize]
    }
}

/// The map.
#[derive(Clone, Debug)]
pub struct LpnMap {
    lpns: u64,
    compressed: bool,
    chunks: Vec<Chunk>,
    /// The last analytic fill's placement; `None`: untouched LPNs hold no data.
    slots: Option<Slots>,
    /// Stored units of an untouched LPN (what the last fill wrote; 0 on a fresh drive).
    fill_size: u8,
}

impl LpnMap {
    /// A map of `lpns` LPNs holding no data.
    pub fn new(lpns: u64, compressed: bool) -> LpnMap {
        LpnMap {
            lpns,
            compressed,
            chunks: vec![Chunk::Analytic; (lpns as usize).div_ceil(CHUNK_LPNS)],
            slots: None,
            fill_size: 0,
        }
    }

    /// Number of LPNs.
    pub fn lpns(&self) -> u64 {
        self.lpns
    }

    /// Forgets every stored entry: each LPN is where `slots` puts it, `size` units.
    pub fn reset(&mut self, slots: Option<Slots>, size: u8) {
        debug_assert!(slots.as_ref().is_none_or(|s| s.n == self.lpns));
        self.chunks.fill(Chunk::Analytic);
        self.slots = slots;
        self.fill_size = size;
    }

    #[inline]
    fn analytic(&self, lpn: u64) -> u32 {
        self.slots.as_ref().map_or(UNMAPPED, |s| s.node(lpn))
    }

    #[inline]
    fn split(lpn: u64) -> (usize, usize) {
        (
            (lpn >> CHUNK_BITS) as usize,
            (lpn as usize) & (CHUNK_LPNS - 1),
        )
    }

    /// The node an LPN's entry names (not resolved through links).
    #[inline]
    pub fn get(&self, lpn: u64) -> u32 {
        let (c, o) = Self::split(lpn);
        match &self.chunks[c] {
            Chunk::Dense(d) => d.nodes[o],
            Chunk::Sparse(v) => match v.get(o as u16) {
                Some(e) => e.node,
                None => self.analytic(lpn),
            },
            Chunk::Runs(r) => match r.get(o as u16) {
                Some((node, _)) => node,
                None => self.analytic(lpn),
            },
            Chunk::Analytic => self.analytic(lpn),
        }
    }

    /// Stored units of an LPN (its last written size; kept when trimmed).
    #[inline]
    pub fn size(&self, lpn: u64) -> u8 {
        let (c, o) = Self::split(lpn);
        match &self.chunks[c] {
            Chunk::Dense(d) => d.sizes.get(o).copied().unwrap_or(self.fill_size),
            Chunk::Sparse(v) => v.get(o as u16).map_or(self.fill_size, |e| e.size),
            Chunk::Runs(r) => r.get(o as u16).map_or(self.fill_size, |(_, size)| size),
            Chunk::Analytic => self.fill_size,
        }
    }

    /// Points an LPN's entry at `node` (its size set to `size`, or kept), storing it; returns
    /// the node it named.
    #[inline]
    pub fn replace(&mut self, lpn: u64, node: u32, size: Option<u8>) -> u32 {
        let (c, o) = Self::split(lpn);
        if let Chunk::Dense(d) = &mut self.chunks[c] {
            if let (Some(s), Some(slot)) = (size, d.sizes.get_mut(o)) {
                *slot = s;
            }
            return std::mem::replace(&mut d.nodes[o], node);
        }
        self.replace_slow(lpn, node, size)
    }

    fn replace_slow(&mut self, lpn: u64, node: u32, size: Option<u8>) -> u32 {
        let (c, o) = Self::split(lpn);
        let offset = o as u16;
        let stored = match &self.chunks[c] {
            Chunk::Sparse(v) => v.get(offset).copied(),
            Chunk::Runs(r) => r
                .get(offset)
                .map(|(node, size)| Entry { offset, size, node }),
            _ => None,
        };
        let (old, old_size) = match stored {
            Some(e) => (e.node, e.size),
            None => (self.analytic(lpn), self.fill_size),
        };
        let entry = Entry {
            offset,
            size: size.unwrap_or(old_size),
            node,
        };
        match &mut self.chunks[c] {
            // A chunk's first write: runs, while writes continue it in order.
            Chunk::Analytic => {
                self.chunks[c] = Chunk::Runs(Runs::new(entry));
                return old;
            }
            Chunk::Runs(r) => {
                if r.append(entry) {
                    return old;
                }
                let mut entries: Vec<Entry> = r.entries().collect();
                if entries.len() >= SPARSE_MAX {
                    entries.retain(|e| e.offset != offset);
                    entries.push(entry);
                    self.chunks[c] = self.densify(c, &entries);
                    return old;
                }
                let mut sparse = Sparse::new();
                entries.into_iter().for_each(|e| sparse.put(e));
                self.chunks[c] = Chunk::Sparse(sparse);
            }
            _ => {}
        }
        let Chunk::Sparse(v) = &mut self.chunks[c] else {
            unreachable!("dense chunks are written in place")
        };
        v.put(entry);
        if v.len > SPARSE_MAX {
            let entries: Vec<Entry> = v.entries().copied().collect();
            self.chunks[c] = self.densify(c, &entries);
        }
        old
    }

    /// Chunk `c` with every entry stored: the analytic ones, then `stored` over them.
    fn densify(&self, c: usize, stored: &[Entry]) -> Chunk {
        let first = (c * CHUNK_LPNS) as u64;
        let len = CHUNK_LPNS.min((self.lpns - first) as usize);
        let mut nodes: Vec<u32> = (first..first + len as u64)
            .map(|l| self.analytic(l))
            .collect();
        nodes.resize(CHUNK_LPNS, UNMAPPED);
        let mut sizes = if self.compressed {
            vec![self.fill_size; CHUNK_LPNS]
        } else {
            Vec::new()
        };
        for e in stored {
            nodes[e.offset as usize] = e.node;
            if let Some(s) = sizes.get_mut(e.offset as usize) {
                *s = e.size;
            }
        }
        Chunk::Dense(Box::new(Dense {
            nodes: nodes.into_boxed_slice(),
            sizes: sizes.into_boxed_slice(),
        }))
    }

    /// Points a stored entry at `node` (path compression); an untouched LPN stays analytic.
    #[inline]
    pub fn shortcut(&mut self, lpn: u64, node: u32) {
        let (c, o) = Self::split(lpn);
        match &mut self.chunks[c] {
            Chunk::Dense(d) => d.nodes[o] = node,
            Chunk::Sparse(v) => {
                if let Ok(i) = v.find(o as u16) {
                    v.slots[i].node = node;
                }
            }
            Chunk::Runs(r) => r.shortcut(o as u16, node),
            Chunk::Analytic => {}
        }
    }

    /// Starts loading the chunk an LPN's entry is in (the address of its entries).
    #[inline]
    pub fn prefetch_chunk(&self, lpn: u64, hint: CacheHint) {
        if let Some(chunk) = self.chunks.get(Self::split(lpn).0) {
            hint.prefetch(chunk);
        }
    }

    /// Starts loading an LPN's entry: its stored entry, or the range-table entry its
    /// analytic look-up reads (for a sparse chunk both: most LPNs of a chunk written over
    /// less than an eighth are not in its table, and their look-up goes on to the analytic
    /// entry; before the table's slot was loaded too, its miss was a third of the time of
    /// random writes over a filled 1.2 TB drive).
    #[inline]
    pub fn prefetch(&self, lpn: u64, hint: CacheHint) {
        let (c, o) = Self::split(lpn);
        match self.chunks.get(c) {
            Some(Chunk::Dense(d)) => hint.prefetch(&d.nodes[o]),
            Some(Chunk::Sparse(v)) => {
                hint.prefetch(&v.slots[o & (v.slots.len() - 1)]);
                if let Some(s) = &self.slots {
                    hint.prefetch(s.range_entry(lpn));
                }
            }
            Some(Chunk::Analytic) => {
                if let Some(s) = &self.slots {
                    hint.prefetch(s.range_entry(lpn));
                }
            }
            _ => {}
        }
    }

    /// The node an entry names, where that takes no search beyond what [`LpnMap::prefetch`]
    /// loaded (a dense entry, a sparse chunk's, or an analytic one within a block), else
    /// [`UNMAPPED`]: for prefetching.
    #[inline]
    pub fn peek(&self, lpn: u64) -> u32 {
        let (c, o) = Self::split(lpn);
        let analytic = || match &self.slots {
            Some(s) => match *s.range_entry(lpn) {
                e if e & SPANS == 0 => e,
                _ => UNMAPPED,
            },
            None => UNMAPPED,
        };
        match self.chunks.get(c) {
            Some(Chunk::Dense(d)) => d.nodes[o],
            Some(Chunk::Sparse(v)) => v.get(o as u16).map_or_else(analytic, |e| e.node),
            Some(Chunk::Analytic) => analytic(),
            _ => UNMAPPED,
        }
    }

    /// Renames every node id held, stored or analytic, through `rename`.
    pub fn renumber(&mut self, rename: impl Fn(u32) -> u32) {
        for chunk in &mut self.chunks {
            match chunk {
                Chunk::Dense(d) => d.nodes.iter_mut().for_each(|n| *n = rename(*n)),
                Chunk::Sparse(v) => v.entries_mut().for_each(|e| e.node = rename(e.node)),
                Chunk::Runs(r) => r.renumber(&rename),
                Chunk::Analytic => {}
            }
        }
        if let Some(s) = &mut self.slots {
            for b in &mut s.blocks {
                b.1 = rename(b.1);
            }
            for e in s.ranges.iter_mut().filter(|e| **e & SPANS == 0) {
                *e = rename(*e);
            }
        }
    }

    /// Unmaps every LPN (keeping stored sizes) and calls `dropped(node, units, lpns)` for the
    /// data dropped: once per stored mapped entry, and once per fill block for the untouched
    /// LPNs it still holds (counted from the block table, not LPN by LPN).
    pub fn unmap_all(&mut self, mut dropped: impl FnMut(u32, u32, u64)) {
        let mut untouched: Vec<u64> = self.slots.as_ref().map_or_else(Vec::new, |s| {
            let mut start = 0;
            s.blocks
                .iter()
                .map(|&(end, _)| {
                    let count = end - start;
                    start = end;
                    count
                })
                .collect()
        });
        let fill_size = self.fill_size as u32;
        for c in 0..self.chunks.len() {
            let first = (c * CHUNK_LPNS) as u64;
            let len = CHUNK_LPNS.min((self.lpns - first) as usize);
            let stored: Vec<usize> = match &self.chunks[c] {
                Chunk::Analytic => continue,
                Chunk::Sparse(v) => v.entries().map(|e| e.offset as usize).collect(),
                Chunk::Runs(r) => r.entries().map(|e| e.offset as usize).collect(),
                Chunk::Dense(_) => (0..len).collect(),
            };
            for o in stored {
                let lpn = first + o as u64;
                if let Some(s) = &self.slots {
                    untouched[s.block_of_slot(s.slot_of(lpn))] -= 1;
                }
                let (node, size) = (self.get(lpn), self.size(lpn));
                if node != UNMAPPED {
                    let units = if self.compressed { size as u32 } else { 1 };
                    dropped(node, units, 1);
                }
            }
            match &mut self.chunks[c] {
                Chunk::Dense(d) => d.nodes.fill(UNMAPPED),
                Chunk::Sparse(v) => v.entries_mut().for_each(|e| e.node = UNMAPPED),
                Chunk::Runs(r) => r.renumber(|_| UNMAPPED),
                Chunk::Analytic => {}
            }
        }
        if let Some(s) = self.slots.take() {
            let units = if self.compressed { fill_size } else { 1 };
            for (&(_, node), &count) in s.blocks.iter().zip(&untouched) {
                if count > 0 {
                    dropped(node, units * count as u32, count);
                }
            }
        }
    }

    /// Stores every entry (what the map did before it was analytic), for checks that the
    /// analytic map resolves every LPN the same.
    #[cfg(test)]
    pub fn store_all(&mut self) {
        for c in 0..self.chunks.len() {
            let stored = match &self.chunks[c] {
                Chunk::Analytic => Vec::new(),
                Chunk::Sparse(v) => v.entries().copied().collect(),
                Chunk::Runs(r) => r.entries().collect(),
                Chunk::Dense(_) => continue,
            };
            self.chunks[c] = self.densify(c, &stored);
        }
    }

    /// Entries stored (for checks).
    #[cfg(test)]
    pub fn stored_entries(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| match c {
                Chunk::Analytic => 0,
                Chunk::Sparse(v) => v.len,
                Chunk::Runs(r) => r.len(),
                Chunk::Dense(_) => CHUNK_LPNS,
            })
            .sum()
    }
}
