//! Analytic preconditioning: the state a sequential or a steady random fill leaves, set
//! directly in the block table without simulating a write.

use super::*;

impl Ftl {
    /// Puts the drive in the state a full sequential fill leaves (every LPN valid, blocks full,
    /// the spare area free), analytically: no write is simulated.
    pub fn fill_sequential(&mut self, stripe_lpns: u64) {
        let blocks = self.fill_blocks(stripe_lpns, |_, _| 1.0);
        let mut die_base = Vec::with_capacity(blocks.len());
        let mut base = 0u64;
        for die in &blocks {
            die_base.push(base);
            base += die.iter().map(|&(_, c)| c).sum::<u64>();
        }
        let order = Order::InOrder {
            stripe: stripe_lpns,
            die_base,
        };
        self.place(order, &blocks);
    }

    /// Puts the drive in the steady state of uniform random writes under greedy GC,
    /// analytically (MQSim's approach, after Van Houdt, SIGMETRICS'13): in the mean-field limit
    /// a block's valid share decays exponentially with its age, ages are uniform over a GC
    /// cycle, so block `i` of `n` (oldest last) holds `u^(i/(n−1))` of a block, where the
    /// victim share `u` makes the valid total equal the user data. Write amplification then
    /// starts at its steady value `1/(1−u)`. Random writes leave every block holding LPNs from
    /// all over the drive, so the LPNs are scattered over the blocks (a golden-ratio scatter over the blocks).
    pub fn fill_steady(&mut self, stripe_lpns: u64) {
        let blocks = self.fill_blocks(stripe_lpns, |n, want| {
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
        let n = self.map.lpns();
        let mut a = ((n as f64 * 0.618_033_988_749_895) as u64).max(1);
        while gcd(a, n) != 1 {
            a += 1;
        }
        self.place(Order::Scattered { a }, &blocks);
    }

    /// Sets the map to the placement of a fill: every LPN where `order` puts it among
    /// `blocks`, each LPN the full (incompressible) size.
    fn place(&mut self, order: Order, blocks: &[Vec<(u32, u64)>]) {
        let flat: Vec<(u32, u64)> = blocks.iter().flatten().copied().collect();
        debug_assert_eq!(flat.iter().map(|&(_, c)| c).sum::<u64>(), self.map.lpns());
        let size = if self.compressed {
            self.lpn_units as u8
        } else {
            0
        };
        self.map.reset(Some(Slots::new(order, &flat)), size);
    }

    /// Shared analytic fill: seals each die's blocks holding as many LPNs as the die's share
    /// of a striped fill, `victim_share(n, want_blocks)` giving the valid share of the
    /// emptiest of `n` blocks (1.0 = all blocks full). Returns each die's blocks as
    /// `(node, LPNs)`; the map is left to a placement.
    fn fill_blocks(
        &mut self,
        stripe_lpns: u64,
        victim_share: impl Fn(u64, f64) -> f64,
    ) -> Vec<Vec<(u32, u64)>> {
        self.reset_dies();
        let dies = self.dies.len() as u64;
        let lpns = self.map.lpns();
        let lpn_units = self.lpn_units;
        let bu = self.block_units as u64;
        let block_lpns = bu / lpn_units as u64;
        let mut blocks = Vec::with_capacity(dies as usize);
        for d in 0..dies as u32 {
            // LPNs on this die: every `dies`-th stripe.
            let stripes_before = d as u64;
            let want = {
                let full = lpns / (stripe_lpns * dies);
                let rem = lpns % (stripe_lpns * dies);
                full * stripe_lpns
                    + rem
                        .saturating_sub(stripes_before * stripe_lpns)
                        .min(stripe_lpns)
            };
            // Blocks available for data: all but the GC reserve. The open host and GC blocks
            // are written from that reserve, so free space sits at the GC threshold and the
            // steady state's GC runs from the first write (leaving two more blocks free would
            // let a short run see no GC at all).
            let usable_blocks = (self.die_units / bu).saturating_sub(self.gc_low_units / bu);
            let full_blocks = want.div_ceil(block_lpns);
            let share = victim_share(usable_blocks, want as f64 / block_lpns as f64);
            let n = if share >= 1.0 {
                full_blocks
            } else {
                usable_blocks
            };
            // LPNs per block, oldest (emptiest) last; the rounding remainder goes to the first
            // blocks so the total is exact.
            let mut valid: Vec<u64> = (0..n)
                .map(|i| {
                    if share >= 1.0 {
                        block_lpns
                    } else {
                        (block_lpns as f64 * share.powf(i as f64 / (n.max(2) - 1) as f64)).floor()
                            as u64
                    }
                })
                .collect();
            let mut sum: u64 = valid.iter().sum();
            let mut i = 0usize;
            while sum < want && !valid.is_empty() {
                let add = (block_lpns - valid[i]).min(want - sum);
                valid[i] += add;
                sum += add;
                i = (i + 1) % valid.len();
            }
            while sum > want {
                let last = valid.len() - 1 - (i % valid.len());
                let cut = valid[last].min(sum - want);
                valid[last] -= cut;
                sum -= cut;
                i += 1;
            }
            let mut die_blocks = Vec::with_capacity(valid.len());
            for v in valid {
                let id = self.new_node(d);
                let node = &mut self.nodes[id as usize];
                node.valid = (v * lpn_units as u64) as u32;
                node.foot = bu as u32;
                self.dies[d as usize].sealed.push(id);
                self.dies[d as usize].free_units -= bu;
                die_blocks.push((id, v));
            }
            blocks.push(die_blocks);
        }
        self.mapped = lpns;
        self.set_compact_at();
        blocks
    }
}

/// Greatest common divisor.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
