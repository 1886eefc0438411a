//! A page-mapped FTL with per-die block pools, greedy GC and analytic preconditioning.
//!
//! ```text
//!  map: LPN (4 KiB) ──▶ node ──parent──▶ … ──▶ root node { die, valid units, footprint }
//! ```
//!
//! A *node* is the content of one written block (host writes fill one node per block). When
//! greedy GC picks a victim it copies the victim's valid pages into the die's GC block: instead
//! of rewriting one map entry per moved page, the victim node is *linked* to the GC node
//! (union–find), so every LPN that lived in the victim now resolves to the GC node. That keeps
//! GC O(1) per victim and memory at most one `u32` per LPN, no reverse map (MQSim keeps per-page
//! structures and needs 2 GB for 512 GiB). The map stores only the entries written since the
//! last analytic fill ([`crate::lpn_map`]): the rest follow from the fill's block table, so a
//! short job on a filled 1.2 TB drive needs megabytes, not the 1.1 GiB of a full map.
//!
//! A GC node may take a victim's pages beyond one block's worth (its footprint then spans into
//! the next physical block of the GC stream); victims are chosen by valid/footprint ratio, so
//! greedy's choice and the write amplification it causes are preserved.
//!
//! Links leave dead nodes behind, and the live ones end up scattered among them: after an hour
//! of random writes to the SSD 750 1.2 TB, 70 thousand of 391 thousand nodes still hold data,
//! so most cache lines of the node table carry one live node and the live set no longer fits
//! the cache, and map entries not looked up for a while reach their node through links. When
//! the table has grown by half since it was last compacted ([`Compaction::DEFAULT`]), the FTL
//! compacts it: every map entry is pointed at the node now holding its data, and the nodes
//! that hold data are renumbered densely. A walk over the 1.2 TB drive's map takes about 0.3 s.
//!
//! Space is counted in *units*: 4 KiB without compression, 512 B with SandForce-style
//! compression (each LPN then stores its compressed size).

/// Sentinel for an LPN that holds no data (never written or trimmed).
pub const UNMAPPED: u32 = 0;

use crate::lpn_map::{LpnMap, Order, Slots};
use iolab_drive::hint::CacheHint;

#[derive(Clone, Copy, Debug)]
struct Node {
    parent: u32,
    valid: u32,
    foot: u32,
    die: u32,
}

#[derive(Clone, Debug, Default)]
struct DieFtl {
    free_units: u64,
    host_open: u32,
    gc_open: u32,
    sealed: Vec<u32>,
}

/// When the FTL compacts its node table: when the table holds `growth` times the nodes its
/// last compaction (or fill) kept, and at least `min_nodes` more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compaction {
    /// Growth of the table, as a multiple of what was kept.
    pub growth: f64,
    /// The smallest growth worth a walk over the map.
    pub min_nodes: usize,
}

impl Compaction {
    /// Chosen on the SSD 750 1.2 TB's hour of random writes (`sim_speed`), two growths run
    /// side by side: 1.5 took 117 s against 127 s for 1.25 (more walks over the map), and
    /// 130 s against 140 s for 2.0 (a sparser table between walks).
    pub const DEFAULT: Compaction = Compaction {
        growth: 1.5,
        min_nodes: 1024,
    };
}

/// How [`Ftl::compact`] renumbered the nodes, for the ids held outside the FTL.
#[derive(Debug)]
pub struct Renumbering {
    /// Old id → new id of the node now holding what it held (itself, or the collection node
    /// its data moved into); [`UNMAPPED`] when that holds nothing any more.
    holder: Vec<u32>,
    /// Old id → its own new id when it was kept, else [`UNMAPPED`].
    same: Vec<u32>,
}

impl Renumbering {
    /// The new id of the node holding what node `old` held: what [`Ftl::root_node`] of `old`
    /// gave before.
    pub fn holder(&self, old: u32) -> u32 {
        self.holder[old as usize]
    }

    /// The new id of node `old` itself; [`UNMAPPED`] when it was not kept (it had been
    /// collected into another, or erased), so it can no longer match a node the FTL names.
    pub fn same(&self, old: u32) -> u32 {
        self.same[old as usize]
    }
}

/// Counters of what the FTL did, for write amplification and power.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FtlCounters {
    /// Units written by the host (after compression).
    pub host_units: u64,
    /// Units written by GC.
    pub gc_units: u64,
    /// Blocks erased (fractional footprints are summed in units).
    pub erased_units: u64,
}

/// What one GC pass cost on a die.
#[derive(Clone, Copy, Debug, Default)]
pub struct GcCost {
    /// Units copied.
    pub moved_units: u64,
    /// Units erased.
    pub erased_units: u64,
}

/// The FTL of one SSD.
#[derive(Clone, Debug)]
pub struct Ftl {
    map: LpnMap,
    compressed: bool,
    nodes: Vec<Node>,
    dies: Vec<DieFtl>,
    /// Units per multi-plane block.
    pub block_units: u32,
    /// Bytes per unit.
    pub unit_bytes: u32,
    /// Units of a full (incompressible) LPN.
    pub lpn_units: u32,
    die_units: u64,
    gc_low_units: u64,
    /// LPNs that hold data.
    mapped: u64,
    /// Counters.
    pub counters: FtlCounters,
    /// When the node table is compacted.
    compaction: Compaction,
    /// Node count at which [`Ftl::wants_compaction`] says so.
    compact_at: usize,
    /// Compactions so far.
    pub compactions: u64,
}

impl Ftl {
    /// An empty (secure-erased) FTL.
    pub fn new(
        lpns: u64,
        dies: u32,
        block_bytes: u64,
        blocks_per_die: u64,
        gc_free_blocks: u32,
        compressed: bool,
    ) -> Ftl {
        let unit_bytes: u32 = if compressed { 512 } else { 4096 };
        let block_units = (block_bytes / unit_bytes as u64) as u32;
        let die_units = blocks_per_die * block_units as u64;
        let mut f = Ftl {
            map: LpnMap::new(lpns, compressed),
            compressed,
            nodes: Vec::new(),
            dies: vec![DieFtl::default(); dies as usize],
            block_units,
            unit_bytes,
            lpn_units: 4096 / unit_bytes,
            die_units,
            gc_low_units: gc_free_blocks as u64 * block_units as u64,
            mapped: 0,
            counters: FtlCounters::default(),
            compaction: Compaction::DEFAULT,
            compact_at: 0,
            compactions: 0,
        };
        f.reset_dies();
        f
    }

    fn new_node(&mut self, die: u32) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            parent: id,
            valid: 0,
            foot: 0,
            die,
        });
        id
    }

    fn reset_dies(&mut self) {
        self.nodes.clear();
        // Node 0 is never used: id 0 is the UNMAPPED sentinel.
        self.nodes.push(Node {
            parent: 0,
            valid: 0,
            foot: 0,
            die: 0,
        });
        for d in 0..self.dies.len() {
            let h = self.new_node(d as u32);
            let g = self.new_node(d as u32);
            let die = &mut self.dies[d];
            die.free_units = self.die_units;
            die.host_open = h;
            die.gc_open = g;
            die.sealed.clear();
        }
        self.set_compact_at();
    }

    /// Sets when the node table is compacted (from now on).
    pub fn set_compaction(&mut self, compaction: Compaction) {
        self.compaction = compaction;
        self.set_compact_at();
    }

    /// Compaction is next due when the table has grown as [`Compaction`] says from now.
    fn set_compact_at(&mut self) {
        let now = self.nodes.len();
        let Compaction { growth, min_nodes } = self.compaction;
        self.compact_at = ((now as f64 * growth) as usize).max(now.saturating_add(min_nodes));
    }

    /// Number of LPNs.
    pub fn lpns(&self) -> u64 {
        self.map.lpns()
    }

    /// Number of LPNs that hold data (written and not trimmed).
    pub fn mapped_lpns(&self) -> u64 {
        self.mapped
    }

    /// Number of dies.
    pub fn dies(&self) -> u32 {
        self.dies.len() as u32
    }

    #[inline]
    fn find(&mut self, n: u32) -> u32 {
        // Most nodes looked up hold their data themselves (compaction points the map at them).
        if self.nodes[n as usize].parent == n {
            return n;
        }
        self.find_linked(n)
    }

    /// [`Ftl::find`] of a node whose data a collection moved: the root, with the path to it
    /// compressed.
    fn find_linked(&mut self, mut n: u32) -> u32 {
        let mut r = n;
        while self.nodes[r as usize].parent != r {
            r = self.nodes[r as usize].parent;
        }
        while self.nodes[n as usize].parent != r {
            let p = self.nodes[n as usize].parent;
            self.nodes[n as usize].parent = r;
            n = p;
        }
        r
    }

    /// Units stored for an LPN.
    #[inline]
    fn units_of(&self, lpn: u64) -> u32 {
        if self.compressed {
            self.map.size(lpn) as u32
        } else {
            1
        }
    }

    /// The die holding `lpn`, or `None` when it holds no data.
    #[inline]
    pub fn die_of(&mut self, lpn: u64) -> Option<u32> {
        self.block_of(lpn).map(|(_, die)| die)
    }

    /// The node holding `lpn` (its written block, or the collection block its data was moved
    /// into; ids change when the FTL is filled, erased or compacted) and its die, or `None`
    /// when it holds no data.
    #[inline]
    pub fn block_of(&mut self, lpn: u64) -> Option<(u32, u32)> {
        let n = self.map.get(lpn);
        if n == UNMAPPED {
            return None;
        }
        let r = self.find(n);
        if r != n {
            self.map.shortcut(lpn, r);
        }
        Some((r, self.nodes[r as usize].die))
    }

    /// The node now holding what block node `node` held (the collection block its data was
    /// moved into, or itself).
    #[inline]
    pub fn root_node(&mut self, node: u32) -> u32 {
        self.find(node)
    }

    /// Stored bytes of an LPN (compressed size, or 4096).
    #[inline]
    pub fn stored_bytes(&self, lpn: u64) -> u32 {
        self.units_of(lpn) * self.unit_bytes
    }

    /// Starts loading the part of the map that says where an LPN's entry is (its chunk).
    #[inline]
    pub fn prefetch_chunk(&self, lpn: u64, hint: CacheHint) {
        self.map.prefetch_chunk(lpn, hint);
    }

    /// Starts loading an LPN's map entry into the cache (it will be looked up soon; its
    /// chunk should be cached).
    #[inline]
    pub fn prefetch(&self, lpn: u64, hint: CacheHint) {
        if lpn < self.map.lpns() {
            self.map.prefetch(lpn, hint);
        }
    }

    /// Starts loading the block node an LPN's map entry names (its entry should be cached).
    #[inline]
    pub fn prefetch_node(&self, lpn: u64, hint: CacheHint) {
        let n = if lpn < self.map.lpns() {
            self.map.peek(lpn)
        } else {
            UNMAPPED
        };
        if let Some(node) = self.nodes.get(n as usize).filter(|_| n != UNMAPPED) {
            hint.prefetch(node);
        }
    }

    /// Drops an LPN's data (overwrite or TRIM).
    #[inline]
    pub fn invalidate(&mut self, lpn: u64) {
        if self.map.get(lpn) == UNMAPPED {
            return;
        }
        let u = self.units_of(lpn);
        let n = self.map.replace(lpn, UNMAPPED, None);
        let r = self.find(n);
        let node = &mut self.nodes[r as usize];
        debug_assert!(node.valid >= u, "valid count underflow");
        node.valid -= u;
        self.mapped -= 1;
    }

    /// Drops every LPN's data (TRIM of the whole drive): what [`Ftl::invalidate`] of each
    /// LPN does, with the LPNs the last analytic fill placed and nothing has touched since
    /// counted per block.
    pub fn invalidate_all(&mut self) {
        let mut map = std::mem::replace(&mut self.map, LpnMap::new(0, false));
        map.unmap_all(|n, units, lpns| {
            let r = self.find(n);
            let node = &mut self.nodes[r as usize];
            debug_assert!(node.valid >= units, "valid count underflow");
            node.valid -= units;
            self.mapped -= lpns;
        });
        self.map = map;
    }

    /// Takes `units` of a die's free space into its open host block as data written and
    /// since overwritten (nothing valid): a die part-way through filling its next block.
    pub fn take_free(&mut self, die: u32, units: u64) {
        let mut left = units.min(self.dies[die as usize].free_units);
        while left > 0 {
            let open = self.dies[die as usize].host_open;
            let node = &mut self.nodes[open as usize];
            let take = ((self.block_units - node.foot) as u64).min(left);
            node.foot += take as u32;
            self.dies[die as usize].free_units -= take;
            left -= take;
            if self.nodes[open as usize].foot >= self.block_units {
                self.dies[die as usize].sealed.push(open);
                let n = self.new_node(die);
                self.dies[die as usize].host_open = n;
            }
        }
    }

    /// Free space of a die in units.
    pub fn free_units(&self, die: u32) -> u64 {
        self.dies[die as usize].free_units
    }

    /// Writes `lpn` (`units` after compression) into the die's open host block. Returns true
    /// when the die has dropped below its GC threshold.
    #[inline]
    pub fn write(&mut self, lpn: u64, die: u32, units: u32) -> bool {
        let d = &mut self.dies[die as usize];
        let open = d.host_open;
        d.free_units = d.free_units.saturating_sub(units as u64);
        // The old copy is dropped and the new one mapped with one look at the entry (what
        // `invalidate` then a store would do).
        let old_units = if self.compressed {
            self.map.size(lpn) as u32
        } else {
            1
        };
        let size = self.compressed.then_some(units as u8);
        let old = self.map.replace(lpn, open, size);
        if old == UNMAPPED {
            self.mapped += 1;
        } else {
            let r = self.find(old);
            let node = &mut self.nodes[r as usize];
            debug_assert!(node.valid >= old_units, "valid count underflow");
            node.valid -= old_units;
        }
        let node = &mut self.nodes[open as usize];
        node.valid += units;
        node.foot += units;
        self.counters.host_units += units as u64;
        if node.foot >= self.block_units {
            self.dies[die as usize].sealed.push(open);
            let n = self.new_node(die);
            self.dies[die as usize].host_open = n;
        }
        self.dies[die as usize].free_units < self.gc_low_units
    }

    /// Greedy GC on a die: one victim block, or more while the victims give back too little
    /// to lift the die above its threshold (or nothing can be reclaimed). Returns what it
    /// moved and erased, for timing.
    ///
    /// One victim per collection, as MQSim issues one GC request per plane each time it finds
    /// the plane's pool below its threshold (`Check_gc_required` in
    /// src/ssd/GC_and_WL_Unit_Page_Level.cpp): the next write below the threshold books the
    /// next one. Collecting until a whole block above the threshold was free took nine victims
    /// at once on an SM951 whose victims were 88 % valid, 2.5-3.8 s of copies booked as one
    /// lump, and the host's programs, waiting for their room to come back from it, stalled
    /// for a second at a time (0 IOPS) as the spare area ran out.
    pub fn collect(&mut self, die: u32) -> GcCost {
        let mut cost = GcCost::default();
        let target = self.gc_low_units + 1;
        let mut guard = 0;
        while self.dies[die as usize].free_units < target && guard < 64 {
            guard += 1;
            // Greedy: the sealed node with the lowest valid/footprint ratio.
            let sealed = &self.dies[die as usize].sealed;
            let mut best: Option<(usize, u32, u32)> = None;
            for (i, &n) in sealed.iter().enumerate() {
                let nd = &self.nodes[n as usize];
                let better = match best {
                    None => true,
                    Some((_, v, f)) => {
                        (nd.valid as u64) * (f as u64) < (v as u64) * (nd.foot as u64)
                    }
                };
                if better {
                    best = Some((i, nd.valid, nd.foot));
                }
            }
            let Some((i, valid, foot)) = best else { break };
            if valid >= foot {
                break; // nothing to reclaim: every page of every block is valid
            }
            let victim = self.dies[die as usize].sealed.swap_remove(i);
            let g = self.dies[die as usize].gc_open;
            if valid > 0 {
                self.nodes[victim as usize].parent = g;
                let gn = &mut self.nodes[g as usize];
                gn.valid += valid;
                gn.foot += valid;
            }
            self.nodes[victim as usize].valid = 0;
            let d = &mut self.dies[die as usize];
            d.free_units = d.free_units + foot as u64 - valid as u64;
            cost.moved_units += valid as u64;
            cost.erased_units += foot as u64;
            if self.nodes[g as usize].foot >= self.block_units {
                self.dies[die as usize].sealed.push(g);
                let n = self.new_node(die);
                self.dies[die as usize].gc_open = n;
            }
        }
        self.counters.gc_units += cost.moved_units;
        self.counters.erased_units += cost.erased_units;
        cost
    }

    /// Whether the node table has grown enough since its last compaction to be worth
    /// [`Ftl::compact`].
    #[inline]
    pub fn wants_compaction(&self) -> bool {
        self.nodes.len() >= self.compact_at
    }

    /// Compacts the node table: keeps the nodes that hold data (a die's sealed and open
    /// blocks) and the roots of the `pinned` ids held outside the FTL, numbers them densely in
    /// their old order, and points every map entry at the node holding its data. Nothing the
    /// FTL decides changes (collection still scans each die's blocks in the same order); only
    /// the ids do, and the caller renumbers those it holds with the [`Renumbering`].
    pub fn compact(&mut self, pinned: impl IntoIterator<Item = u32>) -> Renumbering {
        let n = self.nodes.len();
        let mut keep = vec![false; n];
        for d in &self.dies {
            for &id in d.sealed.iter().chain([&d.host_open, &d.gc_open]) {
                keep[id as usize] = true;
            }
        }
        for id in pinned {
            if id != UNMAPPED {
                let root = self.find(id);
                keep[root as usize] = true;
            }
        }
        let mut same = vec![UNMAPPED; n];
        let mut nodes = Vec::with_capacity(n / 2);
        nodes.push(self.nodes[0]);
        for (old, &kept) in keep.iter().enumerate().skip(1) {
            if kept {
                debug_assert_eq!(self.nodes[old].parent, old as u32, "only roots hold data");
                let id = nodes.len() as u32;
                same[old] = id;
                nodes.push(Node {
                    parent: id,
                    ..self.nodes[old]
                });
            }
        }
        let mut holder = vec![UNMAPPED; n];
        for old in 1..n as u32 {
            holder[old as usize] = same[self.find(old) as usize];
        }
        self.map.renumber(|id| holder[id as usize]);
        for d in &mut self.dies {
            for id in d.sealed.iter_mut() {
                *id = same[*id as usize];
            }
            d.host_open = same[d.host_open as usize];
            d.gc_open = same[d.gc_open as usize];
        }
        self.nodes = nodes;
        self.set_compact_at();
        self.compactions += 1;
        Renumbering { holder, same }
    }

    /// Total valid units (for checks).
    pub fn valid_units(&self) -> u64 {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| *i > 0 && n.parent == *i as u32)
            .map(|(_, n)| n.valid as u64)
            .sum()
    }
}

mod fill;
#[cfg(test)]
mod tests;
