//! SPRandom preconditioning (fio's `sprandom`): one pass of random writes over a drive's
//! physical capacity, ordered so that when it ends each of `regions` equal parts of what was
//! written holds the share of overwritten (invalid) blocks a drive has at steady state under
//! random writes with over-provisioning `op`.
//!
//! The model is Desnoyers' (ACM ToS 8(2), 2012): at steady state the fraction of the drive
//! made of blocks with validity v is proportional to 1/v, down to the validity of the block
//! greedy garbage collection picks, 1 − 1/WA, with WA ≈ 0.5/op + 0.7. That curve is resampled
//! at equal region sizes. Writing proceeds region by region, each `region_writes` blocks: new
//! blocks in a random order that visits every logical block once; each write is kept, with
//! the region's invalid share as probability, to be written again at the start of the next
//! region — the rewrite invalidates the copy in the region before. The pass ends after the
//! last region or when every logical block was written once and no rewrite is due: the same
//! order and ending as fio's (its LFSR is replaced by iolab's seeded permutation).

use crate::rng::{Permutation, Rng};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The job key: `sprandom = { op = 0.15, regions = 100 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpRandom {
    /// Over-provisioning, as a fraction of the logical capacity (fio's `spr_op`, default 0.15).
    #[serde(default = "default_op")]
    pub op: f64,
    /// Regions the written capacity is divided into (fio's `spr_num_regions`, default 100).
    #[serde(default = "default_regions")]
    pub regions: u32,
}

fn default_op() -> f64 {
    0.15
}
fn default_regions() -> u32 {
    100
}

/// Precision of the invalid shares (as fio's, in 1/10000).
const PRECISION: u32 = 10_000;

impl SpRandom {
    /// What is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        if !(self.op > 0.0 && self.op < 1.0) {
            return Err(format!("op {} is not in (0, 1)", self.op));
        }
        if self.regions == 0 {
            return Err("regions must be at least 1".into());
        }
        Ok(())
    }

    /// The physical capacity for `logical` bytes: logical plus the over-provisioning, in whole
    /// blocks of `bs`.
    pub fn physical_bytes(&self, logical: u64, bs: u64) -> u64 {
        let size = logical + (logical as f64 * self.op).ceil() as u64;
        size - size % bs
    }

    /// The invalid share of each region, in 1/10000, first region first.
    fn invalid_shares(&self) -> Vec<u32> {
        let n = self.regions as usize;
        let wa = 0.5 / self.op + 0.7;
        let gc_validity = 1.0 - 1.0 / wa;
        let validity = linspace(1.0, gc_validity, n);
        // The curve: x the accumulated relative size of regions of falling validity.
        let mut acc = 0.0;
        let xs: Vec<f64> = validity
            .iter()
            .map(|v| {
                acc += 1.0 / v;
                acc
            })
            .collect();
        let mut resampled: Vec<f64> = linspace(xs[0], xs[n - 1], n)
            .into_iter()
            .map(|x| interpolate(x, &xs, &validity))
            .collect();
        resampled.reverse();
        resampled
            .iter()
            .map(|v| ((1.0 - v) * f64::from(PRECISION)).round() as u32)
            .collect()
    }
}

fn linspace(a: f64, b: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![a];
    }
    let step = (b - a) / (n as f64 - 1.0);
    (0..n).map(|i| a + i as f64 * step).collect()
}

/// Linear interpolation of y at `x` over increasing `xs`, clamped at the ends.
fn interpolate(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    let last = xs.len() - 1;
    if x >= xs[last] {
        return ys[last];
    }
    let i = xs.partition_point(|&p| p <= x).clamp(1, last);
    let (x1, x2, y1, y2) = (xs[i - 1], xs[i], ys[i - 1], ys[i]);
    if (x2 - x1).abs() < 1e-9 {
        return y1;
    }
    y1 + (y2 - y1) * (x - x1) / (x2 - x1)
}

/// The block order of one SPRandom pass over `blocks` logical blocks.
#[derive(Clone, Debug)]
pub struct SpRandomOrder {
    order: Permutation,
    next_new: u64,
    invalid: Vec<u32>,
    region: usize,
    region_writes: u64,
    left_in_region: u64,
    /// Rewrites due at the start of the next region, and those being written now.
    staged: Vec<u64>,
    due: VecDeque<u64>,
    rng: Rng,
    done: bool,
}

impl SpRandomOrder {
    /// The order for `blocks` logical blocks of `bs` bytes, seeded with `seed`.
    pub fn new(spr: &SpRandom, blocks: u64, bs: u64, seed: u64) -> Self {
        let physical_blocks = spr.physical_bytes(blocks * bs, bs) / bs;
        let region_writes = (physical_blocks / u64::from(spr.regions)).max(1);
        SpRandomOrder {
            order: Permutation::new(blocks, seed ^ 0x5C_A4D1_5C00),
            next_new: 0,
            invalid: spr.invalid_shares(),
            region: 0,
            region_writes,
            left_in_region: region_writes,
            staged: Vec::new(),
            due: VecDeque::new(),
            rng: Rng::new(seed ^ 0x5C_A4D1_5C01),
            done: false,
        }
    }

    /// Keeps `block` for a rewrite with the current region's invalid share as probability.
    fn maybe_stage(&mut self, block: u64) {
        let share = self.invalid[self.region.min(self.invalid.len() - 1)];
        if self.rng.below(u64::from(PRECISION) + 1) <= u64::from(share) {
            self.staged.push(block);
        }
    }

    /// The next block to write, or `None` once the pass is over.
    pub fn next_block(&mut self) -> Option<u64> {
        if self.done {
            return None;
        }
        if let Some(b) = self.due.pop_front() {
            self.maybe_stage(b);
            return Some(b);
        }
        if self.left_in_region == 0 {
            if self.region + 1 >= self.invalid.len() {
                self.done = true;
                return None;
            }
            self.region += 1;
            self.left_in_region = self.region_writes.saturating_sub(self.staged.len() as u64);
            self.due.extend(self.staged.drain(..));
            if let Some(b) = self.due.pop_front() {
                self.maybe_stage(b);
                return Some(b);
            }
        }
        if self.next_new >= self.order.len() {
            self.done = true;
            return None;
        }
        let b = self.order.at(self.next_new);
        self.next_new += 1;
        self.left_in_region -= 1;
        self.maybe_stage(b);
        Some(b)
    }

    /// How many writes the whole pass makes (by running it).
    pub fn total_writes(mut self) -> u64 {
        let mut n = 0;
        while self.next_block().is_some() {
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spr(op: f64, regions: u32) -> SpRandom {
        SpRandom { op, regions }
    }

    #[test]
    fn shares_fall_from_the_gc_block_to_none() {
        let s = spr(0.15, 100).invalid_shares();
        assert_eq!(s.len(), 100);
        // The first region is the oldest data: most invalid, as the block GC would pick
        // (1/WA of it invalid, WA = 0.5/0.15 + 0.7); the last is all valid.
        let wa: f64 = 0.5 / 0.15 + 0.7;
        assert_eq!(s[0], (10_000.0 / wa).round() as u32);
        assert_eq!(s[99], 0);
        assert!(s.windows(2).all(|w| w[0] >= w[1]), "{s:?}");
    }

    #[test]
    fn the_pass_writes_every_block_and_leaves_each_region_its_invalid_share() {
        let spr = spr(0.15, 10);
        let blocks = 20_000;
        let mut order = SpRandomOrder::new(&spr, blocks, 4096, 7);
        let shares = spr.invalid_shares();
        let mut written = Vec::new();
        while let Some(b) = order.next_block() {
            assert!(b < blocks);
            written.push(b);
        }
        let mut seen = vec![false; blocks as usize];
        for &b in &written {
            seen[b as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "every logical block written");
        let physical = spr.physical_bytes(blocks * 4096, 4096) / 4096;
        assert!(written.len() as u64 <= physical);
        // A write is invalid when the same block is written again later; per region of
        // region_writes writes, the share invalid is near the model's.
        let per = (physical / 10) as usize;
        let mut last = vec![0usize; blocks as usize];
        for (i, &b) in written.iter().enumerate() {
            last[b as usize] = i;
        }
        for (r, &share) in shares.iter().enumerate().take(written.len() / per) {
            let invalid = (r * per..(r + 1) * per)
                .filter(|&i| last[written[i] as usize] != i)
                .count();
            let got = invalid as f64 / per as f64;
            let want = f64::from(share) / 10_000.0;
            assert!((got - want).abs() < 0.03, "region {r}: {got} vs {want}");
        }
        assert_eq!(
            SpRandomOrder::new(&spr, blocks, 4096, 7).total_writes(),
            written.len() as u64
        );
    }
}
