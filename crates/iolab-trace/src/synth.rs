//! `iolab trace synth`: a trace whose analysis reproduces a [`Profile`].
//!
//! How each statistic is met:
//! - **counts**: reads and writes per size bucket are fixed up front and drawn without
//!   replacement, so totals and the size breakdown are exact (up to rounding);
//! - **volumes**: listed sizes are exact; the free buckets (`<4K`, `other`, `>128K`) take
//!   sizes whose mean brings the total to the target, and reads are placed in larger or
//!   smaller buckets to bring the read volume to its target (both within what the
//!   breakdown allows; [`Synth::plan`] tells what was reached);
//! - **queue depth**: requests come in *runs*. A run with window `k` issues requests so
//!   that each completes exactly when the request `k` places later is issued; its first
//!   `k-1` requests see depths 1..k-1 and the rest see exactly `k`. Runs are planned from
//!   the deepest bucket down, so the ramps of deep runs are counted in the shallower
//!   buckets. Where a bucket's runs sit inside it is free, and is set so the mean depth
//!   comes near the profile's average: without one, at each bucket's lowest depth; with
//!   one, lower or higher in the buckets, and the open-ended bucket's runs deeper (the
//!   published averages need a long tail past 32; [`Plan`] tells what was reached);
//! - **sequential share**: a running accumulator makes exactly that share of requests
//!   start where the previous one ended; the others start at random 4 KiB-aligned offsets
//!   within the footprint.
//!
//! Memory is proportional to the number of runs (about one per 32 requests), not to the
//! trace; records are generated as they are consumed.

use std::collections::VecDeque;

use serde::Serialize;

use crate::analyze::buckets::{QD_RANGES, SIZE_LABELS};
use crate::error::{Result, TraceError};
use crate::profile::Profile;
use crate::record::{Op, TraceRecord};
use crate::Rng;

const K: u64 = 1024;
/// Requests at the run's full depth, at most, per run (longer runs would clump the trace).
const MAX_RUN_EXCESS: u64 = 256;
/// Length of depth-1 runs is drawn from 1..=this.
const MAX_SERIAL_RUN: u64 = 64;

/// Synthesis settings.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// Multiplies the profile's counts and volumes.
    pub scale: f64,
    /// Total requests, overriding `scale` (volumes follow proportionally).
    pub requests: Option<u64>,
    /// Random seed; the same seed gives the same trace.
    pub seed: u64,
    /// Time of the first request, in ns.
    pub start_ns: u64,
    /// Device number of every record.
    pub device: u32,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            scale: 1.0,
            requests: None,
            seed: 1,
            start_ns: 0,
            device: 0,
        }
    }
}

/// What the plan reaches against the profile's targets.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Profile name.
    pub profile: String,
    /// Requests to generate.
    pub requests: u64,
    /// Reads to generate.
    pub reads: u64,
    /// Writes to generate.
    pub writes: u64,
    /// Target bytes read at this scale.
    pub target_bytes_read: u64,
    /// Planned bytes read (mean sizes × counts).
    pub planned_bytes_read: u64,
    /// Target bytes written at this scale.
    pub target_bytes_written: u64,
    /// Planned bytes written.
    pub planned_bytes_written: u64,
    /// Requests per size bucket, in [`SIZE_LABELS`] order.
    pub size_counts: Vec<u64>,
    /// Runs planned (a measure of how interleaved the depth pattern is).
    pub runs: u64,
    /// The profile's average queue depth, if it gives one.
    pub target_avg_qd: Option<f64>,
    /// Mean depth on arrival the planned runs give.
    pub planned_avg_qd: f64,
}

/// How one size bucket's sizes are drawn.
#[derive(Debug, Clone, Copy)]
enum Sizes {
    /// Always this size.
    Fixed(u64),
    /// Cycles 512, 1024, …, 3584 (mean 2 KiB).
    Small,
    /// `lo` or `hi`, with `hi` for the given fraction of requests.
    Mix { lo: u64, hi: u64, frac_hi: f64 },
}

impl Sizes {
    fn mean(self) -> f64 {
        match self {
            Sizes::Fixed(s) => s as f64,
            Sizes::Small => 2048.0,
            Sizes::Mix { lo, hi, frac_hi } => lo as f64 + (hi - lo) as f64 * frac_hi,
        }
    }
}

/// Splits `total` into integer parts proportional to `weights` (largest remainder).
fn apportion(total: u64, weights: &[f64]) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 {
        return vec![0; weights.len()];
    }
    let exact: Vec<f64> = weights.iter().map(|w| total as f64 * w / sum).collect();
    let mut out: Vec<u64> = exact.iter().map(|e| e.floor() as u64).collect();
    let mut left = total.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = exact[a] - exact[a].floor();
        let fb = exact[b] - exact[b].floor();
        fb.total_cmp(&fa)
    });
    for &i in order.iter().cycle().take(weights.len() * 2) {
        if left == 0 {
            break;
        }
        if weights[i] > 0.0 {
            out[i] += 1;
            left -= 1;
        }
    }
    out
}

/// Candidate sizes (multiples of 4 KiB) of a free bucket.
fn allowed(bucket: usize) -> Vec<u64> {
    match SIZE_LABELS[bucket] {
        "other" => (2..32u64)
            .map(|i| i * 4 * K)
            .filter(|s| !s.is_power_of_two())
            .collect(),
        ">128K" => (33..=4096u64).map(|i| i * 4 * K).collect(),
        _ => Vec::new(),
    }
}

/// Sizes whose mean is as close to `mean` as the bucket allows.
fn mix_for(bucket: usize, mean: f64) -> Sizes {
    let c = allowed(bucket);
    let (first, last) = match (c.first(), c.last()) {
        (Some(&f), Some(&l)) => (f, l),
        _ => return Sizes::Fixed(4 * K),
    };
    if mean <= first as f64 {
        return Sizes::Fixed(first);
    }
    if mean >= last as f64 {
        return Sizes::Fixed(last);
    }
    let hi_i = c
        .iter()
        .position(|&s| s as f64 >= mean)
        .unwrap_or(c.len() - 1);
    let (lo, hi) = (c[hi_i.saturating_sub(1)], c[hi_i]);
    if hi == lo {
        return Sizes::Fixed(lo);
    }
    Sizes::Mix {
        lo,
        hi,
        frac_hi: (mean - lo as f64) / (hi - lo) as f64,
    }
}

/// The sizes of each bucket (by [`SIZE_LABELS`]): the fixed ones as labelled, and the free
/// bucket ("other" when it has requests, else ">128K") a mix sized so that all `counts`
/// requests together move `target_bytes`.
fn bucket_sizes(counts: &[u64], target_bytes: f64) -> Vec<Sizes> {
    let mut sizes: Vec<Sizes> = SIZE_LABELS
        .iter()
        .map(|l| match *l {
            "<4K" => Sizes::Small,
            "4K" => Sizes::Fixed(4 * K),
            "8K" => Sizes::Fixed(8 * K),
            "16K" => Sizes::Fixed(16 * K),
            "32K" => Sizes::Fixed(32 * K),
            "64K" => Sizes::Fixed(64 * K),
            "128K" => Sizes::Fixed(128 * K),
            ">128K" => Sizes::Fixed(256 * K),
            _ => Sizes::Fixed(12 * K),
        })
        .collect();
    let other = SIZE_LABELS.iter().position(|l| *l == "other").unwrap_or(8);
    let large = SIZE_LABELS.iter().position(|l| *l == ">128K").unwrap_or(7);
    let fixed_bytes: f64 = (0..sizes.len())
        .filter(|&b| b != other && b != large)
        .map(|b| counts[b] as f64 * sizes[b].mean())
        .sum();
    let rest = target_bytes - fixed_bytes;
    let free = if counts[other] > 0 { other } else { large };
    let held = if free == other {
        counts[large] as f64 * sizes[large].mean()
    } else {
        0.0
    };
    if counts[free] > 0 {
        sizes[free] = mix_for(free, (rest - held) / counts[free] as f64);
    }
    sizes
}

/// Reads per bucket: between proportional and all-in-the-largest (or smallest) buckets,
/// interpolated to meet the read volume `target_r`; never more than a bucket's requests.
/// `n` is the trace's request count.
fn reads_per_bucket(counts: &[u64], means: &[f64], n: u64, reads: u64, target_r: f64) -> Vec<u64> {
    let prop: Vec<f64> = counts
        .iter()
        .map(|&c| c as f64 * reads as f64 / n as f64)
        .collect();
    let prop_bytes: f64 = prop.iter().zip(means).map(|(r, m)| r * m).sum();
    let mut order: Vec<usize> = (0..counts.len()).collect();
    if target_r > prop_bytes {
        order.sort_by(|&a, &b| means[b].total_cmp(&means[a]));
    } else {
        order.sort_by(|&a, &b| means[a].total_cmp(&means[b]));
    }
    let mut ext = vec![0.0; counts.len()];
    let mut left = reads as f64;
    for &b in &order {
        let take = left.min(counts[b] as f64);
        ext[b] = take;
        left -= take;
    }
    let ext_bytes: f64 = ext.iter().zip(means).map(|(r, m)| r * m).sum();
    let t = if (ext_bytes - prop_bytes).abs() < 1.0 {
        0.0
    } else {
        ((target_r - prop_bytes) / (ext_bytes - prop_bytes)).clamp(0.0, 1.0)
    };
    let want: Vec<f64> = prop
        .iter()
        .zip(&ext)
        .map(|(p, e)| p + (e - p) * t)
        .collect();
    let mut read_counts = apportion(reads, &want);
    for (r, &c) in read_counts.iter_mut().zip(counts) {
        *r = (*r).min(c);
    }
    // Rounding and clamping may leave reads short; give them to buckets with room.
    let mut short = reads.saturating_sub(read_counts.iter().sum());
    for (r, &c) in read_counts.iter_mut().zip(counts) {
        let room = (c - *r).min(short);
        *r += room;
        short -= room;
    }
    read_counts
}

/// A planned run: `window` deep, `len` requests in all.
#[derive(Debug, Clone, Copy)]
struct Run {
    window: u32,
    len: u64,
}

/// Streaming generator of a synthetic trace (an iterator of records in time order).
pub struct Synth {
    plan: Plan,
    rng: Rng,
    /// Remaining requests per (bucket, op): index `bucket * 2 + (0 read | 1 write)`.
    cells: Vec<u64>,
    remaining: u64,
    sizes: Vec<Sizes>,
    mix_acc: Vec<f64>,
    small_next: u64,
    runs: Vec<Run>,
    next_run: usize,
    out: VecDeque<TraceRecord>,
    seq_share: f64,
    seq_acc: f64,
    cursor: u64,
    footprint_blocks: u64,
    now: u64,
    device: u32,
}

impl Synth {
    /// Plans a trace for `profile`.
    pub fn new(profile: &Profile, opts: &SynthOptions) -> Result<Synth> {
        let err = |msg: String| TraceError::Profile {
            name: profile.name.clone(),
            msg,
        };
        let full = (profile.reads + profile.writes) as f64;
        let n = match opts.requests {
            Some(n) => n,
            None => {
                if !(opts.scale.is_finite() && opts.scale > 0.0) {
                    return Err(err(format!("scale must be > 0, found {}", opts.scale)));
                }
                (full * opts.scale).round() as u64
            }
        };
        if n == 0 {
            return Err(err(
                "the scale gives no requests; raise --scale or --requests".into(),
            ));
        }
        let factor = n as f64 / full;
        let reads = ((profile.reads as f64 * factor).round() as u64).min(n);
        let unit = profile.gb_unit.bytes();
        let target_r = profile.gb_read * unit * factor;
        let target_w = profile.gb_written * unit * factor;

        // Sizes: counts per bucket, then free buckets sized to hit the total volume.
        let counts = apportion(n, &profile.size_vector());
        let sizes = bucket_sizes(&counts, target_r + target_w);
        let means: Vec<f64> = sizes.iter().map(|s| s.mean()).collect();

        let read_counts = reads_per_bucket(&counts, &means, n, reads, target_r);
        let mut cells = Vec::with_capacity(counts.len() * 2);
        for (&c, &r) in counts.iter().zip(&read_counts) {
            cells.push(r);
            cells.push(c - r);
        }
        let planned_r: f64 = read_counts
            .iter()
            .zip(&means)
            .map(|(r, m)| *r as f64 * m)
            .sum();
        let planned_all: f64 = counts.iter().zip(&means).map(|(c, m)| *c as f64 * m).sum();

        let mut rng = Rng::new(opts.seed);
        let (runs, planned_avg_qd) =
            plan_runs(n, &profile.qd_vector(), profile.avg_qd, &mut rng).map_err(err)?;
        let plan = Plan {
            profile: profile.name.clone(),
            requests: n,
            reads,
            writes: n - reads,
            target_bytes_read: target_r as u64,
            planned_bytes_read: planned_r as u64,
            target_bytes_written: target_w as u64,
            planned_bytes_written: (planned_all - planned_r).max(0.0) as u64,
            size_counts: counts,
            runs: runs.len() as u64,
            target_avg_qd: profile.avg_qd,
            planned_avg_qd,
        };
        let footprint_blocks =
            ((profile.footprint_gib * (1u64 << 30) as f64) as u64 / (4 * K)).max(1);
        Ok(Synth {
            plan,
            rng,
            remaining: n,
            cells,
            mix_acc: vec![0.0; sizes.len()],
            sizes,
            small_next: 0,
            runs,
            next_run: 0,
            out: VecDeque::new(),
            seq_share: profile.sequential_pct / 100.0,
            seq_acc: 0.0,
            cursor: 0,
            footprint_blocks,
            now: opts.start_ns,
            device: opts.device,
        })
    }

    /// What will be generated, against the targets.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Draws the (op, size) of the next request without replacement.
    fn draw(&mut self) -> (Op, u64) {
        let mut u = self.rng.below(self.remaining);
        let mut cell = 0;
        for (i, &c) in self.cells.iter().enumerate() {
            if u < c {
                cell = i;
                break;
            }
            u -= c;
        }
        self.cells[cell] = self.cells[cell].saturating_sub(1);
        self.remaining = self.remaining.saturating_sub(1);
        let bucket = cell / 2;
        let op = if cell % 2 == 0 { Op::Read } else { Op::Write };
        let size = match self.sizes[bucket] {
            Sizes::Fixed(s) => s,
            Sizes::Small => {
                self.small_next = self.small_next % 7 + 1;
                self.small_next * 512
            }
            Sizes::Mix { lo, hi, frac_hi } => {
                self.mix_acc[bucket] += frac_hi;
                if self.mix_acc[bucket] >= 1.0 {
                    self.mix_acc[bucket] -= 1.0;
                    hi
                } else {
                    lo
                }
            }
        };
        (op, size)
    }

    fn offset(&mut self, len: u64) -> u64 {
        self.seq_acc += self.seq_share;
        let blocks = len.div_ceil(4 * K);
        let fp = self.footprint_blocks * 4 * K;
        let off = if self.seq_acc >= 1.0 && self.cursor + len <= fp {
            self.seq_acc -= 1.0;
            self.cursor
        } else {
            self.rng
                .below(self.footprint_blocks.saturating_sub(blocks).max(1))
                * 4
                * K
        };
        self.cursor = off + len;
        off
    }

    /// Generates the next run into `out`.
    fn fill(&mut self) -> bool {
        let Some(run) = self.runs.get(self.next_run).copied() else {
            return false;
        };
        self.next_run += 1;
        let m = run.len as usize;
        let k = run.window as usize;
        let mut reqs = Vec::with_capacity(m);
        // Issue times: spacing grows with size (about 2 GB/s plus 8 µs).
        let mut times = Vec::with_capacity(m + 1);
        let mut t = self.now;
        for _ in 0..m {
            if self.remaining == 0 {
                break;
            }
            let (op, len) = self.draw();
            times.push(t);
            t += 8_000 + len / 2;
            reqs.push((op, len));
        }
        times.push(t);
        let m = reqs.len();
        for (i, (op, len)) in reqs.into_iter().enumerate() {
            let offset = self.offset(len);
            // Completes exactly when the request k places later is issued (see module docs).
            let done = times[(i + k).min(m)];
            self.out.push_back(TraceRecord {
                time_ns: times[i],
                device: self.device,
                op,
                offset_bytes: offset,
                len_bytes: len,
                completion_ns: Some(done),
            });
        }
        // Idle gap before the next run: 20–220 µs after the last completion.
        self.now = times[m] + 20_000 + self.rng.below(200_000);
        true
    }
}

impl Iterator for Synth {
    type Item = TraceRecord;
    fn next(&mut self) -> Option<TraceRecord> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Some(r);
            }
            if !self.fill() {
                return None;
            }
        }
    }
}

/// Deepest window the open-ended depth bucket (>32) is given when reaching for the profile's
/// average depth: a bound on the search, not on hosts (NVMe allows 64K per queue).
pub const MAX_OPEN_WINDOW: u32 = 1024;

/// Where each depth bucket's runs put their window (the depth their requests reach).
#[derive(Debug, Clone, Copy)]
struct Placement {
    /// 0 puts a bounded bucket's runs at its lowest depth, 1 at its highest; in between, the
    /// windows alternate between two neighbouring depths so their mean is that far up.
    spread: f64,
    /// Window of the open-ended bucket's runs (at least 33).
    open: u32,
}

/// The runs at depth 2 and deeper for one placement.
struct DeepRuns {
    runs: Vec<Run>,
    /// Requests in them (the rest of the trace runs at depth 1).
    requests: u64,
    /// Sum of the depths their requests see on arrival.
    depth_sum: f64,
}

impl DeepRuns {
    /// Mean depth on arrival over `n` requests, the rest at depth 1.
    fn mean_over(&self, n: u64) -> f64 {
        (self.depth_sum + n.saturating_sub(self.requests) as f64) / n.max(1) as f64
    }
}

/// Plans the deep runs, deepest bucket first, so that the ramps of deep runs are counted in
/// the shallower buckets (and a run's own ramp in its own bucket).
fn plan_deep(targets: &[u64], at: Placement) -> DeepRuns {
    let mut covered = vec![0u64; QD_RANGES.len()];
    let mut out = DeepRuns {
        runs: Vec::new(),
        requests: 0,
        depth_sum: 0.0,
    };
    for b in (1..QD_RANGES.len()).rev() {
        let (lo, hi) = QD_RANGES[b];
        let need = targets[b].saturating_sub(covered[b]);
        if need == 0 {
            continue;
        }
        let rise = if hi == u32::MAX {
            f64::from(at.open.max(lo) - lo)
        } else {
            at.spread * f64::from(hi - lo)
        };
        let count = need.div_ceil(MAX_RUN_EXCESS + rise.ceil() as u64);
        for i in 0..count {
            // Split evenly: the first (need % count) runs get one more.
            let share = need / count + u64::from(i < need % count);
            // Alternating floor/ceil of `rise` keeps the windows' mean at lo + rise; a run
            // reaches its window only if at least one request is left at full depth.
            let step = (rise * (i + 1) as f64).floor() - (rise * i as f64).floor();
            let window = (u64::from(lo) + step as u64).min(u64::from(lo) + share - 1);
            let at_full = share - (window - u64::from(lo));
            out.runs.push(Run {
                window: window as u32,
                len: window - 1 + at_full,
            });
            out.requests += window - 1 + at_full;
            out.depth_sum += (window * (window - 1) / 2 + at_full * window) as f64;
            // The ramp passes each depth 1..window-1 once.
            for (c, &(blo, bhi)) in covered.iter_mut().zip(&QD_RANGES).take(b) {
                let top = u64::from(bhi).min(window - 1);
                *c += (top + 1).saturating_sub(u64::from(blo));
            }
        }
    }
    out
}

/// The placement whose mean depth on arrival comes nearest `target`: windows low in their
/// buckets to go below the middle; the open bucket's runs deeper to go above it, then the
/// bounded buckets' windows higher. Placements needing more than `n` requests are too deep.
fn place_for_mean(n: u64, targets: &[u64], target: f64) -> Placement {
    let mean = |at: Placement| {
        let deep = plan_deep(targets, at);
        if deep.requests > n {
            f64::INFINITY
        } else {
            deep.mean_over(n)
        }
    };
    // Finds x in [lo, hi] (mean rising with x) whose mean is nearest the target.
    let search = |lo: f64, hi: f64, at: &dyn Fn(f64) -> Placement| {
        let (mut a, mut b) = (lo, hi);
        for _ in 0..40 {
            let mid = (a + b) / 2.0;
            if mean(at(mid)) < target {
                a = mid;
            } else {
                b = mid;
            }
        }
        let (ma, mb) = (mean(at(a)), mean(at(b)));
        if (ma - target).abs() <= (mb - target).abs() {
            at(a)
        } else {
            at(b)
        }
    };
    let middle = Placement {
        spread: 0.5,
        open: 33,
    };
    if mean(middle) >= target {
        return search(0.0, 0.5, &|s| Placement {
            spread: s,
            open: 33,
        });
    }
    let open = search(33.0, f64::from(MAX_OPEN_WINDOW), &|o| Placement {
        spread: 0.5,
        open: o.round() as u32,
    })
    .open;
    search(0.5, 1.0, &|s| Placement { spread: s, open })
}

/// Plans the runs that realise the depth breakdown over `n` requests (shuffled), placing the
/// windows inside each bucket so the mean depth comes near `avg_qd` when one is given (at
/// each bucket's lowest depth otherwise). Returns the runs and the mean depth they give.
fn plan_runs(
    n: u64,
    qd_pct: &[f64],
    avg_qd: Option<f64>,
    rng: &mut Rng,
) -> std::result::Result<(Vec<Run>, f64), String> {
    let targets = apportion(n, qd_pct);
    let lowest = Placement {
        spread: 0.0,
        open: 33,
    };
    let at = match avg_qd {
        Some(t) if t.is_finite() && plan_deep(&targets, lowest).requests <= n => {
            place_for_mean(n, &targets, t)
        }
        _ => lowest,
    };
    let deep = plan_deep(&targets, at);
    if deep.requests > n {
        return Err(format!(
            "{n} requests are too few for this queue-depth breakdown (the deep runs alone need \
             {}); raise --scale or --requests",
            deep.requests
        ));
    }
    let mean = deep.mean_over(n);
    let mut runs = deep.runs;
    let mut serial = n - deep.requests;
    while serial > 0 {
        let len = (1 + rng.below(MAX_SERIAL_RUN)).min(serial);
        runs.push(Run { window: 1, len });
        serial -= len;
    }
    for i in (1..runs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        runs.swap(i, j);
    }
    Ok((runs, mean))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportion_keeps_the_total() {
        assert_eq!(apportion(10, &[1.0, 1.0, 1.0]).iter().sum::<u64>(), 10);
        assert_eq!(apportion(7, &[0.0, 1.0]), vec![0, 7]);
        assert_eq!(apportion(5, &[0.0, 0.0]), vec![0, 0]);
    }

    #[test]
    fn mixes_hit_the_mean() {
        let m = mix_for(8, 30_000.0);
        assert!((m.mean() - 30_000.0).abs() < 1.0, "{m:?}");
        assert!(matches!(mix_for(8, 1.0), Sizes::Fixed(12288)));
    }
}
