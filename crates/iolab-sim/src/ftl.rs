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
//! GC O(1) per victim and memory at one `u32` per LPN (the SSD 750 1.2 TB needs 1.1 GiB for its
//! map, no reverse map) — MQSim keeps per-page structures and needs 2 GB for 512 GiB
//! (simulators-and-interfaces.md §1.7).
//!
//! A GC node may take a victim's pages beyond one block's worth (its footprint then spans into
//! the next physical block of the GC stream); victims are chosen by valid/footprint ratio, so
//! greedy's choice and the write amplification it causes are preserved.
//!
//! Space is counted in *units*: 4 KiB without compression, 512 B with SandForce-style
//! compression (each LPN then stores its compressed size).

/// Sentinel for an LPN that holds no data (never written or trimmed). Zero, so that the map of
/// a fresh drive is a zeroed allocation the OS hands out lazily (a 1.2 TB drive's 1.1 GiB map
/// costs nothing until written).
pub const UNMAPPED: u32 = 0;

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
    map: Vec<u32>,
    sizes: Vec<u8>,
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
            map: vec![0u32; lpns as usize],
            sizes: if compressed {
                vec![0u8; lpns as usize]
            } else {
                Vec::new()
            },
            nodes: Vec::new(),
            dies: vec![DieFtl::default(); dies as usize],
            block_units,
            unit_bytes,
            lpn_units: 4096 / unit_bytes,
            die_units,
            gc_low_units: gc_free_blocks as u64 * block_units as u64,
            mapped: 0,
            counters: FtlCounters::default(),
        };
        // The map is read at a random LPN on every I/O: huge pages spare the TLB misses.
        iolab_engine::sys::advise_huge_pages(&mut f.map);
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
    }

    /// Number of LPNs.
    pub fn lpns(&self) -> u64 {
        self.map.len() as u64
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
    fn find(&mut self, mut n: u32) -> u32 {
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
        if self.sizes.is_empty() {
            1
        } else {
            self.sizes[lpn as usize] as u32
        }
    }

    /// The die holding `lpn`, or `None` when it holds no data.
    #[inline]
    pub fn die_of(&mut self, lpn: u64) -> Option<u32> {
        self.block_of(lpn).map(|(_, die)| die)
    }

    /// The node holding `lpn` (its written block, or the collection block its data was moved
    /// into; ids are reused only when the FTL is filled or erased anew) and its die, or `None`
    /// when it holds no data.
    #[inline]
    pub fn block_of(&mut self, lpn: u64) -> Option<(u32, u32)> {
        let n = self.map[lpn as usize];
        if n == UNMAPPED {
            return None;
        }
        let r = self.find(n);
        self.map[lpn as usize] = r;
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

    /// Starts loading an LPN's map entry into the cache (it will be looked up soon).
    #[inline]
    pub fn prefetch(&self, lpn: u64) {
        if let Some(entry) = self.map.get(lpn as usize) {
            iolab_engine::sys::prefetch(entry);
        }
    }

    /// Starts loading the block node an LPN's map entry names (its entry should be cached).
    #[inline]
    pub fn prefetch_node(&self, lpn: u64) {
        let n = self.map.get(lpn as usize).copied().unwrap_or(UNMAPPED);
        if let Some(node) = self.nodes.get(n as usize).filter(|_| n != UNMAPPED) {
            iolab_engine::sys::prefetch(node);
        }
    }

    /// Drops an LPN's data (overwrite or TRIM).
    #[inline]
    pub fn invalidate(&mut self, lpn: u64) {
        let n = self.map[lpn as usize];
        if n == UNMAPPED {
            return;
        }
        let r = self.find(n);
        let u = self.units_of(lpn);
        let node = &mut self.nodes[r as usize];
        debug_assert!(node.valid >= u, "valid count underflow");
        node.valid -= u;
        self.map[lpn as usize] = UNMAPPED;
        self.mapped -= 1;
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
        self.invalidate(lpn);
        if !self.sizes.is_empty() {
            self.sizes[lpn as usize] = units as u8;
        }
        let d = &mut self.dies[die as usize];
        let open = d.host_open;
        d.free_units = d.free_units.saturating_sub(units as u64);
        let node = &mut self.nodes[open as usize];
        node.valid += units;
        node.foot += units;
        self.map[lpn as usize] = open;
        self.mapped += 1;
        self.counters.host_units += units as u64;
        if node.foot >= self.block_units {
            self.dies[die as usize].sealed.push(open);
            let n = self.new_node(die);
            self.dies[die as usize].host_open = n;
        }
        self.dies[die as usize].free_units < self.gc_low_units
    }

    /// Greedy GC on a die until one block above the threshold is free (or nothing can be
    /// reclaimed). Returns what it moved and erased, for timing.
    pub fn collect(&mut self, die: u32) -> GcCost {
        let mut cost = GcCost::default();
        let target = self.gc_low_units + self.block_units as u64;
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

    /// The die an LPN lands on when the whole drive is written in LPN order, striping
    /// `stripe_lpns` consecutive LPNs per die round-robin (what a controller does with a
    /// sequential fill), and its position among that die's LPNs.
    #[inline]
    fn stripe(lpn: u64, stripe_lpns: u64, dies: u64) -> (u32, u64) {
        let k = lpn / stripe_lpns;
        let die = (k % dies) as u32;
        let pos = (k / dies) * stripe_lpns + lpn % stripe_lpns;
        (die, pos)
    }

    /// Puts the drive in the state a full sequential fill leaves (every LPN valid, blocks full,
    /// the spare area free), analytically: no write is simulated.
    pub fn fill_sequential(&mut self, stripe_lpns: u64) {
        self.fill_with(stripe_lpns, |_, _| 1.0);
    }

    /// Puts the drive in the steady state of uniform random writes under greedy GC,
    /// analytically (MQSim's approach, after Van Houdt, SIGMETRICS'13): in the mean-field limit
    /// a block's valid share decays exponentially with its age, ages are uniform over a GC
    /// cycle, so block `i` of `n` (oldest last) holds `u^(i/(n−1))` of a block, where the
    /// victim share `u` makes the valid total equal the user data. Write amplification then
    /// starts at its steady value `1/(1−u)`.
    pub fn fill_steady(&mut self, stripe_lpns: u64) {
        self.fill_with(stripe_lpns, |n, want| {
            // Bisection on u: Σ u^(i/(n−1)) = want (in blocks).
            let total = |u: f64| -> f64 {
                if n <= 1 {
                    return 1.0;
                }
                (0..n).map(|i| u.powf(i as f64 / (n - 1) as f64)).sum()
            };
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if total(mid) < want {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        });
    }

    /// Shared analytic fill: `victim_share(n, want_blocks)` gives the valid share of the
    /// emptiest of `n` blocks (1.0 = all blocks full).
    fn fill_with(&mut self, stripe_lpns: u64, victim_share: impl Fn(u64, f64) -> f64) {
        self.reset_dies();
        let dies = self.dies.len() as u64;
        let lpns = self.map.len() as u64;
        let lpn_units = self.lpn_units;
        if !self.sizes.is_empty() {
            self.sizes.fill(lpn_units as u8);
        }
        let bu = self.block_units as u64;
        for d in 0..dies as u32 {
            // LPNs on this die: every `dies`-th stripe.
            let stripes_before = d as u64;
            let per_die = {
                let full = lpns / (stripe_lpns * dies);
                let rem = lpns % (stripe_lpns * dies);
                full * stripe_lpns
                    + rem
                        .saturating_sub(stripes_before * stripe_lpns)
                        .min(stripe_lpns)
            };
            let want_units = per_die * lpn_units as u64;
            // Blocks available for data: all but the GC reserve. The open host and GC blocks
            // are written from that reserve, so free space sits at the GC threshold and the
            // steady state's GC runs from the first write (leaving two more blocks free would
            // let a short run see no GC at all).
            let usable_blocks = (self.die_units / bu).saturating_sub(self.gc_low_units / bu);
            let full_blocks = want_units.div_ceil(bu);
            let share = victim_share(usable_blocks, want_units as f64 / bu as f64);
            let n = if share >= 1.0 {
                full_blocks
            } else {
                usable_blocks
            };
            // Valid units per block, oldest (emptiest) last; the rounding remainder goes to the
            // first blocks so the total is exact.
            let mut valid: Vec<u64> = (0..n)
                .map(|i| {
                    if share >= 1.0 {
                        bu
                    } else {
                        (bu as f64 * share.powf(i as f64 / (n.max(2) - 1) as f64)).floor() as u64
                    }
                })
                .collect();
            let mut sum: u64 = valid.iter().sum();
            let mut i = 0usize;
            while sum < want_units && !valid.is_empty() {
                let add = (bu - valid[i]).min(want_units - sum);
                valid[i] += add;
                sum += add;
                i = (i + 1) % valid.len();
            }
            while sum > want_units {
                let last = valid.len() - 1 - (i % valid.len());
                let cut = valid[last].min(sum - want_units);
                valid[last] -= cut;
                sum -= cut;
                i += 1;
            }
            for v in valid {
                let id = self.new_node(d);
                let node = &mut self.nodes[id as usize];
                node.valid = v as u32;
                node.foot = bu as u32;
                self.dies[d as usize].sealed.push(id);
                self.dies[d as usize].free_units -= bu;
            }
        }
        // Hand each die's LPNs to its blocks in order, each block taking its valid count.
        let mut cursor: Vec<(usize, u32)> = vec![(0, 0); dies as usize];
        for lpn in 0..lpns {
            let (d, _) = Self::stripe(lpn, stripe_lpns, dies);
            let die = &self.dies[d as usize];
            let (ref mut bi, ref mut used) = cursor[d as usize];
            while self.nodes[die.sealed[*bi] as usize].valid <= *used {
                *bi += 1;
                *used = 0;
            }
            self.map[lpn as usize] = die.sealed[*bi];
            *used += lpn_units;
        }
        self.mapped = lpns;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Ftl {
        // 4 dies × 64 blocks × 64 units; 80 % of raw is user space.
        let lpns = 4 * 64 * 64 * 8 / 10;
        Ftl::new(lpns, 4, 64 * 4096, 64, 2, false)
    }

    #[test]
    fn random_overwrites_keep_counts_exact_and_amplify() {
        let mut f = small();
        let mut rng = iolab_core::rng::Rng::new(3);
        let lpns = f.lpns();
        for i in 0..lpns * 6 {
            let lpn = if i < lpns { i } else { rng.below(lpns) };
            let die = (i % 4) as u32;
            if f.write(lpn, die, 1) {
                f.collect(die);
            }
        }
        assert_eq!(f.valid_units(), lpns);
        assert_eq!(f.mapped_lpns(), lpns);
        let wa =
            (f.counters.host_units + f.counters.gc_units) as f64 / f.counters.host_units as f64;
        assert!(wa > 1.3 && wa < 4.0, "write amplification {wa}");
    }

    #[test]
    fn steady_fill_matches_user_data_and_needs_gc_at_once() {
        let mut f = small();
        f.fill_steady(8);
        assert_eq!(f.valid_units(), f.lpns());
        for l in 0..f.lpns() {
            assert!(f.die_of(l).is_some());
        }
        let mut rng = iolab_core::rng::Rng::new(5);
        let lpns = f.lpns();
        let mut gc_runs = 0;
        for i in 0..2000u64 {
            let die = (i % 4) as u32;
            if f.write(rng.below(lpns), die, 1) {
                f.collect(die);
                gc_runs += 1;
            }
        }
        assert!(gc_runs > 0);
        assert_eq!(f.valid_units(), lpns);
    }

    #[test]
    fn trim_frees_valid_units() {
        let mut f = small();
        f.fill_sequential(8);
        for l in 0..100 {
            f.invalidate(l);
        }
        assert_eq!(f.valid_units(), f.lpns() - 100);
        assert_eq!(f.mapped_lpns(), f.lpns() - 100);
        f.invalidate(5); // already unmapped: no change
        assert_eq!(f.mapped_lpns(), f.lpns() - 100);
        assert_eq!(f.die_of(5), None);
    }
}
