//! The FTL's LPN → node map, in memory proportional to what a job touches.
//!
//! ```text
//!  LPN ─▶ chunk (4096 LPNs = 16 MiB of drive)
//!          ├─ Analytic: where the last analytic fill put it (a formula over the fill's blocks)
//!          ├─ Sparse:   the entries written since, sorted; the rest analytic
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

/// LPNs per chunk, as a power of two.
const CHUNK_BITS: u32 = 12;
const CHUNK_LPNS: usize = 1 << CHUNK_BITS;
/// A sparse chunk turns dense past this many stored entries (an eighth of its LPNs): its
/// sorted entries (8 bytes each) would then take a quarter of a dense chunk and cost more to
/// insert into than a dense chunk costs to fill.
const SPARSE_MAX: usize = CHUNK_LPNS / 8;

/// One stored entry of a sparse chunk.
#[derive(Clone, Copy, Debug)]
struct Entry {
    offset: u16,
    size: u8,
    node: u32,
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
    Sparse(Vec<Entry>),
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
    /// For each range of 2^shift slots, the first block it reaches.
    first: Vec<u32>,
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
        let table_bits = (64 - (blocks.len() as u64 * 4).leading_zeros()).max(1);
        let shift = (64 - n.max(1).leading_zeros()).saturating_sub(table_bits);
        let first: Vec<u32> = if n == 0 {
            Vec::new()
        } else {
            (0..=(n - 1) >> shift)
                .map(|k| blocks.partition_point(|&(e, _)| e <= k << shift) as u32)
                .collect()
        };
        Slots {
            order,
            n,
            blocks,
            first,
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

    #[inline]
    fn block_of_slot(&self, slot: u64) -> usize {
        let mut b = self.first[(slot >> self.shift) as usize] as usize;
        while self.blocks[b].0 <= slot {
            b += 1;
        }
        b
    }

    #[inline]
    fn node(&self, lpn: u64) -> u32 {
        self.blocks[self.block_of_slot(self.slot_of(lpn))].1
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
            Chunk::Sparse(v) => match v.binary_search_by_key(&(o as u16), |e| e.offset) {
                Ok(i) => v[i].node,
                Err(_) => self.analytic(lpn),
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
            Chunk::Sparse(v) => match v.binary_search_by_key(&(o as u16), |e| e.offset) {
                Ok(i) => v[i].size,
                Err(_) => self.fill_size,
            },
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
        let (old, old_size) = (self.get(lpn), self.size(lpn));
        let entry = Entry {
            offset: o as u16,
            size: size.unwrap_or(old_size),
            node,
        };
        let chunk = std::mem::replace(&mut self.chunks[c], Chunk::Analytic);
        self.chunks[c] = match chunk {
            Chunk::Analytic => Chunk::Sparse(vec![entry]),
            Chunk::Sparse(mut v) => {
                match v.binary_search_by_key(&entry.offset, |e| e.offset) {
                    Ok(i) => v[i] = entry,
                    Err(i) => v.insert(i, entry),
                }
                if v.len() > SPARSE_MAX {
                    self.densify(c, &v)
                } else {
                    Chunk::Sparse(v)
                }
            }
            Chunk::Dense(_) => unreachable!("dense chunks are written in place"),
        };
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
                if let Ok(i) = v.binary_search_by_key(&(o as u16), |e| e.offset) {
                    v[i].node = node;
                }
            }
            Chunk::Analytic => {}
        }
    }

    /// Starts loading an LPN's entry, if it is stored densely.
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        let (c, o) = Self::split(lpn);
        if let Some(Chunk::Dense(d)) = self.chunks.get(c) {
            iolab_engine::sys::prefetch(&d.nodes[o]);
        }
    }

    /// The node a densely stored entry names, without computing an analytic one (for
    /// prefetching).
    #[inline]
    pub fn peek(&self, lpn: u64) -> u32 {
        let (c, o) = Self::split(lpn);
        match self.chunks.get(c) {
            Some(Chunk::Dense(d)) => d.nodes[o],
            _ => UNMAPPED,
        }
    }

    /// Renames every node id held, stored or analytic, through `rename`.
    pub fn renumber(&mut self, rename: impl Fn(u32) -> u32) {
        for chunk in &mut self.chunks {
            match chunk {
                Chunk::Dense(d) => d.nodes.iter_mut().for_each(|n| *n = rename(*n)),
                Chunk::Sparse(v) => v.iter_mut().for_each(|e| e.node = rename(e.node)),
                Chunk::Analytic => {}
            }
        }
        if let Some(s) = &mut self.slots {
            for b in &mut s.blocks {
                b.1 = rename(b.1);
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
                Chunk::Sparse(v) => v.iter().map(|e| e.offset as usize).collect(),
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
                Chunk::Sparse(v) => v.iter_mut().for_each(|e| e.node = UNMAPPED),
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
                Chunk::Sparse(v) => v.clone(),
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
                Chunk::Sparse(v) => v.len(),
                Chunk::Dense(_) => CHUNK_LPNS,
            })
            .sum()
    }
}
