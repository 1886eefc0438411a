//! A mergeable log-linear latency histogram over integer nanoseconds.
//!
//! Layout (HdrHistogram's idea, fio's `stat.h` scheme with finer groups):
//! - values below 256 ns get one bucket per nanosecond (exact);
//! - above that, each power of two `[2^k, 2^(k+1))` is split into 128 equal buckets.
//!
//! **Error bound.** A bucket's width is at most 1/128 of its lower edge, and a percentile is
//! reported as the bucket's midpoint, so a reported value is within **±1/256 (0.39 %)** of the
//! true sample (exact below 256 ns). **Range:** every `u64` — about 584 years, far above one
//! hour. **Size:** 7,424 counters (58 KiB), fixed, so recording never allocates.
//! Merging adds counters, so percentiles of merged histograms are exactly those of the
//! combined samples (to the same bound).

use serde::{Deserialize, Serialize};

const LINEAR: u64 = 256;
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Number of buckets.
pub const BUCKETS: usize = (LINEAR + 56 * SUB) as usize;

/// Latency histogram; see the module docs for resolution and range.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: f64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Index of the bucket holding `v`.
#[inline]
pub fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let group = msb - SUB_BITS; // ≥ 1
    (LINEAR + (group as u64 - 1) * SUB + ((v >> group) - SUB)) as usize
}

/// The lowest value that falls in bucket `i`, and the bucket's width.
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < LINEAR {
        return (i, 1);
    }
    let group = (i - LINEAR) / SUB + 1;
    let sub = (i - LINEAR) % SUB + SUB;
    (sub << group, 1 << group)
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: vec![0u64; BUCKETS]
                .into_boxed_slice()
                .try_into()
                .expect("length is BUCKETS"),
            total: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0.0,
        }
    }

    /// Records one sample.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.total += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.sum_sq += (ns as f64) * (ns as f64);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Smallest sample (exact), or 0 when empty.
    pub fn min(&self) -> u64 {
        if self.total == 0 {
            0
        } else {
            self.min
        }
    }

    /// Largest sample (exact).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Mean of the samples (exact).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// Population standard deviation of the samples.
    pub fn stddev(&self) -> f64 {
        if self.total < 2 {
            return 0.0;
        }
        let mean = self.mean();
        (self.sum_sq / self.total as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }

    /// The value at percentile `p` (0–100): the smallest recorded bucket below which at least
    /// `p` % of samples lie, reported at its midpoint and clamped to [min, max].
    pub fn percentile(&self, p: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_bounds(i);
                let mid = lo + (width - 1) / 2;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The histogram a result kept: its buckets (`sparse`) with the exact minimum and maximum
    /// and the mean and standard deviation of its summary. Bucket counts, minimum and maximum
    /// come back exactly, so percentiles of histograms rebuilt and merged are those of the
    /// combined samples; the sum and sum of squares come back to within the `f64` rounding of
    /// the mean and deviation. Used to merge results of separate processes (MPI ranks).
    pub fn from_summary(
        sparse: &SparseHistogram,
        min: u64,
        max: u64,
        mean: f64,
        stddev: f64,
    ) -> Self {
        let mut h = Histogram::new();
        for &(low, count) in &sparse.bucket_low_ns_and_count {
            h.counts[bucket_of(low)] += count;
            h.total += count;
        }
        if h.total > 0 {
            h.min = min;
            h.max = max;
            let n = h.total as f64;
            h.sum = (mean * n).round().max(0.0) as u128;
            h.sum_sq = n * (stddev * stddev + mean * mean);
        }
        h
    }

    /// Non-empty buckets as `(lowest value, count)` pairs: the compact, mergeable form stored in
    /// results.
    pub fn to_sparse(&self) -> SparseHistogram {
        SparseHistogram {
            bucket_low_ns_and_count: self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (bucket_bounds(i).0, c))
                .collect(),
        }
    }
}

/// A histogram's non-empty buckets, as stored in JSON results for later merging.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SparseHistogram {
    /// `(bucket's lowest value in ns, samples)` pairs in ascending order.
    pub bucket_low_ns_and_count: Vec<(u64, u64)>,
}

impl SparseHistogram {
    /// Samples above `ns`: those in buckets that start above it, so a sample within the
    /// bucket holding `ns` (at most 1/128 of it wide) counts as not above. An approximation:
    /// the exact counts over 10 ms and 100 ms are kept beside the histogram
    /// (`JobResult::ios_over_10ms`).
    pub fn count_above(&self, ns: u64) -> u64 {
        self.bucket_low_ns_and_count
            .iter()
            .filter(|(low, _)| *low > ns)
            .map(|(_, c)| c)
            .sum()
    }

    /// All samples.
    pub fn count(&self) -> u64 {
        self.bucket_low_ns_and_count.iter().map(|(_, c)| c).sum()
    }

    /// The value at percentile `p` (0–100), as [`Histogram::percentile`] gives it: the
    /// bucket's midpoint, clamped to the samples' `[min, max]` (which the sparse form does
    /// not keep). 0 when empty.
    pub fn percentile(&self, p: f64, min: u64, max: u64) -> u64 {
        let total = self.count();
        if total == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for &(low, c) in &self.bucket_low_ns_and_count {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_bounds(bucket_of(low));
                return (lo + (width - 1) / 2).clamp(min, max.max(min));
            }
        }
        max
    }

    /// A sparse histogram of `(value in ns, samples)` pairs in any order (another tool's
    /// bins): each value counted in the bucket holding it.
    pub fn from_values(values: impl IntoIterator<Item = (u64, u64)>) -> SparseHistogram {
        let mut by_bucket: std::collections::BTreeMap<usize, u64> = Default::default();
        for (v, c) in values {
            if c > 0 {
                *by_bucket.entry(bucket_of(v)).or_default() += c;
            }
        }
        SparseHistogram {
            bucket_low_ns_and_count: by_bucket
                .into_iter()
                .map(|(i, c)| (bucket_bounds(i).0, c))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn exact_percentile(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    #[test]
    fn buckets_are_contiguous_and_invertible() {
        for i in 0..BUCKETS - 1 {
            let (lo, w) = bucket_bounds(i);
            let (next, _) = bucket_bounds(i + 1);
            assert_eq!(lo + w, next, "gap after bucket {i}");
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(lo + w - 1), i);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        // Above one hour in ns still resolves to a real bucket.
        assert!(bucket_of(3_600_000_000_000 * 10) < BUCKETS);
    }

    #[test]
    fn percentiles_match_exact_computation_within_bound() {
        let mut rng = Rng::new(42);
        let mut h = Histogram::new();
        let mut values = Vec::new();
        for _ in 0..100_000 {
            // Log-uniform latencies from 50 ns to ~5 s.
            let v = (50.0 * (1e8f64).powf(rng.unit())) as u64;
            h.record(v);
            values.push(v);
        }
        values.sort_unstable();
        for p in [50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let exact = exact_percentile(&values, p) as f64;
            let got = h.percentile(p) as f64;
            let err = (got - exact).abs() / exact;
            assert!(
                err <= 1.0 / 256.0 + 1e-9,
                "p{p}: exact {exact} got {got} err {err}"
            );
        }
        assert_eq!(h.min(), values[0]);
        assert_eq!(h.max(), *values.last().unwrap());
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        assert!((h.mean() - mean).abs() / mean < 1e-12);
    }

    #[test]
    fn merge_equals_recording_together() {
        let mut rng = Rng::new(1);
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for i in 0..10_000 {
            let v = rng.below(10_000_000);
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        for p in [1.0, 50.0, 99.0, 99.99] {
            assert_eq!(a.percentile(p), all.percentile(p));
        }
        assert_eq!(a.count(), all.count());
        assert_eq!(a.to_sparse(), all.to_sparse());
    }

    #[test]
    fn histograms_rebuilt_from_results_merge_as_recorded_together() {
        let mut rng = Rng::new(7);
        let (mut a, mut b, mut all) = (Histogram::new(), Histogram::new(), Histogram::new());
        for i in 0..20_000 {
            let v = 100 + rng.below(50_000_000);
            if i % 4 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        let rebuild = |h: &Histogram| {
            Histogram::from_summary(&h.to_sparse(), h.min(), h.max(), h.mean(), h.stddev())
        };
        let mut merged = rebuild(&a);
        merged.merge(&rebuild(&b));
        assert_eq!(merged.to_sparse(), all.to_sparse());
        assert_eq!((merged.min(), merged.max()), (all.min(), all.max()));
        for p in [50.0, 99.0, 99.99] {
            assert_eq!(merged.percentile(p), all.percentile(p));
        }
        assert!((merged.mean() - all.mean()).abs() / all.mean() < 1e-12);
        assert!((merged.stddev() - all.stddev()).abs() / all.stddev() < 1e-9);
        assert_eq!(rebuild(&Histogram::new()).count(), 0);
    }

    #[test]
    fn sparse_counts_above_a_threshold() {
        let mut h = Histogram::new();
        for v in [1_000, 9_000_000, 10_000_000, 11_000_000, 150_000_000] {
            h.record(v);
        }
        let s = h.to_sparse();
        assert_eq!(s.count(), 5);
        assert_eq!(s.count_above(10_000_000), 2);
        assert_eq!(s.count_above(100_000_000), 1);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let h = Histogram::new();
        assert_eq!(h.percentile(99.0), 0);
        assert_eq!(h.min(), 0);
        assert_eq!(h.mean(), 0.0);
    }

    #[test]
    fn the_sparse_form_gives_the_same_percentiles_and_takes_other_tools_bins() {
        let mut rng = Rng::new(7);
        let mut h = Histogram::new();
        for _ in 0..20_000 {
            h.record(100 + rng.next_u64() % 3_000_000);
        }
        let s = h.to_sparse();
        for p in [1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            assert_eq!(s.percentile(p, h.min(), h.max()), h.percentile(p), "p{p}");
        }
        assert_eq!(SparseHistogram::default().percentile(50.0, 0, 0), 0);
        // Bins keyed by any value in a bucket land in that bucket; order does not matter.
        let back = SparseHistogram::from_values(
            s.bucket_low_ns_and_count
                .iter()
                .rev()
                .map(|&(low, c)| (low + bucket_bounds(bucket_of(low)).1 / 2, c)),
        );
        assert_eq!(back, s);
    }
}
