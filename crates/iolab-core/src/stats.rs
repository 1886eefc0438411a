//! Per-run accumulators the drivers fill, and the pure summaries they turn into.
//!
//! A driver owns one [`RunStats`] per worker, records every completed I/O into it, and merges
//! the workers' stats at the end; [`RunStats::direction_summary`] and [`RunStats::series`] turn
//! them into the result schema. No clock is read here: times are passed in.

use crate::hist::Histogram;
use crate::job::Direction;
use crate::result::{DirectionResult, ErrorCount, LatencySummary, SeriesResult};
use std::collections::BTreeMap;

const NS_PER_S: f64 = 1e9;

/// The most bins a time series keeps: 36 hours of 1 s bins. A longer run (a model's virtual
/// days, a slow rate limit) has its bins merged in pairs, each time it would need more, so its
/// memory and its result stay bounded (a million virtual seconds once made a 95 MB result, and
/// the 10^8 s a job may last ran out of memory).
pub const MAX_SERIES_BINS: usize = 1 << 17;

/// The latency above which [`DirectionStats::over_10ms`] counts an I/O: 10 ms, in ns.
pub const OVER_10MS_NS: u64 = 10_000_000;
/// The latency above which [`DirectionStats::over_100ms`] counts an I/O: 100 ms, in ns.
pub const OVER_100MS_NS: u64 = 100_000_000;

/// Counts and latencies of one direction.
///
/// **Slow I/Os are counted exactly, beside the histogram.** The storage bench's shares of
/// I/Os over 10 ms and over 100 ms were read from the histogram, but its buckets cannot
/// answer "longer than 10 ms": the one holding 10 ms spans 9.961–10.027 ms (and the one
/// holding 100 ms 99.615–100.139 ms), so a 10.013 ms read counted as not over. Two counters,
/// bumped as each I/O is recorded, give the exact count for these fixed thresholds at the
/// cost of one compare per I/O (a second only for the rare I/O over 10 ms) and no memory;
/// they merge by addition, as the histogram does. (`examples/record_speed.rs`: recording an
/// I/O took the same 4–6 ns with them as without, on a shared machine's noise; only latencies
/// straddling 10 ms at random, a disk's, pay a mispredicted branch, a few ns on I/Os of ms.) The alternatives cost more for less:
/// keeping every latency grows with the run; a finer histogram still straddles thresholds
/// (log-linear buckets cannot fall on decimal milliseconds) and is bigger to merge and
/// store; thresholds kept inside [`Histogram`] would make every histogram (the service
/// time's too) carry the storage bench's figures.
#[derive(Clone, Debug, Default)]
pub struct DirectionStats {
    /// Completed I/Os.
    pub ios: u64,
    /// Completed bytes.
    pub bytes: u64,
    /// Latency of every completed I/O (from the intended start for paced I/Os).
    pub latency: Histogram,
    /// For paced I/Os only: from submission to completion (the device's service time).
    pub service_latency: Option<Histogram>,
    /// I/Os whose latency (as `latency`'s) was longer than [`OVER_10MS_NS`]: exact.
    pub over_10ms: u64,
    /// I/Os whose latency was longer than [`OVER_100MS_NS`]: exact.
    pub over_100ms: u64,
}

impl DirectionStats {
    fn merge(&mut self, other: &DirectionStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.over_10ms += other.over_10ms;
        self.over_100ms += other.over_100ms;
        self.latency.merge(&other.latency);
        if let Some(theirs) = &other.service_latency {
            self.service_latency
                .get_or_insert_with(Histogram::new)
                .merge(theirs);
        }
    }
}

/// One per-interval bin of the time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SeriesBin {
    /// Reads completed in the interval.
    pub read_ios: u64,
    /// Writes completed in the interval.
    pub write_ios: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// TRIMs completed in the interval.
    pub trim_ios: u64,
    /// Bytes trimmed.
    pub trim_bytes: u64,
    /// Sum of the latencies of the I/Os completed in the interval.
    pub lat_sum_ns: u128,
}

impl SeriesBin {
    fn add(&mut self, other: &SeriesBin) {
        self.read_ios += other.read_ios;
        self.write_ios += other.write_ios;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.trim_ios += other.trim_ios;
        self.trim_bytes += other.trim_bytes;
        self.lat_sum_ns += other.lat_sum_ns;
    }
}

/// `bins` of `from_ns` each regrouped into bins of `to_ns` (not narrower).
fn regroup(bins: &[SeriesBin], from_ns: u64, to_ns: u64) -> Vec<SeriesBin> {
    let mut out: Vec<SeriesBin> = Vec::new();
    for (j, b) in bins.iter().enumerate() {
        let i = (j as u128 * from_ns as u128 / to_ns as u128) as usize;
        if i >= out.len() {
            out.resize(i + 1, SeriesBin::default());
        }
        out[i].add(b);
    }
    out
}

/// Everything one worker (or a merge of workers) measured.
#[derive(Clone, Debug)]
pub struct RunStats {
    /// Reads.
    pub read: DirectionStats,
    /// Writes.
    pub write: DirectionStats,
    /// TRIMs.
    pub trim: DirectionStats,
    /// Per-interval bins, indexed by completion time since measuring started.
    pub bins: Vec<SeriesBin>,
    /// Width of a bin: the width asked for, doubled each time the bins would outgrow
    /// [`MAX_SERIES_BINS`].
    pub interval_ns: u64,
    /// I/O errors by errno: count and the offset of the first.
    pub errors: BTreeMap<i32, (u64, u64)>,
    /// The bin the last I/O went to and the times it covers, `[from, to)`: completions come
    /// in time order, so most land in it without a division (a tenth of the cost of recording
    /// a modelled I/O).
    last_bin: (usize, u64, u64),
}

impl RunStats {
    /// Empty stats with series bins of `interval_ns` (1 s is the usual).
    pub fn new(interval_ns: u64) -> Self {
        RunStats {
            read: DirectionStats::default(),
            write: DirectionStats::default(),
            trim: DirectionStats::default(),
            bins: Vec::new(),
            interval_ns: interval_ns.max(1),
            errors: BTreeMap::new(),
            last_bin: (0, 1, 0), // covers no time
        }
    }

    /// Records one completed I/O that finished `at_ns` after measuring started.
    #[inline]
    pub fn record(&mut self, dir: Direction, bytes: u64, latency_ns: u64, at_ns: u64) {
        let d = match dir {
            Direction::Read => &mut self.read,
            Direction::Write => &mut self.write,
            Direction::Trim => &mut self.trim,
        };
        d.ios += 1;
        d.bytes += bytes;
        d.latency.record(latency_ns);
        // "Over" is strictly longer. One compare for the usual fast I/O (see DirectionStats).
        if latency_ns > OVER_10MS_NS {
            d.over_10ms += 1;
            d.over_100ms += u64::from(latency_ns > OVER_100MS_NS);
        }
        let (mut idx, from, to) = self.last_bin;
        if at_ns < from || at_ns >= to {
            while at_ns / self.interval_ns >= MAX_SERIES_BINS as u64 {
                self.widen_bins();
            }
            let i = at_ns / self.interval_ns;
            idx = i as usize;
            let from = i * self.interval_ns;
            self.last_bin = (idx, from, from.saturating_add(self.interval_ns));
        }
        if idx >= self.bins.len() {
            self.bins.resize(idx + 1, SeriesBin::default());
        }
        let bin = &mut self.bins[idx];
        match dir {
            Direction::Read => {
                bin.read_ios += 1;
                bin.read_bytes += bytes;
            }
            Direction::Write => {
                bin.write_ios += 1;
                bin.write_bytes += bytes;
            }
            Direction::Trim => {
                bin.trim_ios += 1;
                bin.trim_bytes += bytes;
            }
        }
        bin.lat_sum_ns += latency_ns as u128;
    }

    /// The bins at `interval_ns` (this width or a wider one): borrowed when it is this width.
    fn bins_of(&self, interval_ns: u64) -> std::borrow::Cow<'_, [SeriesBin]> {
        if interval_ns == self.interval_ns {
            std::borrow::Cow::Borrowed(&self.bins)
        } else {
            std::borrow::Cow::Owned(regroup(&self.bins, self.interval_ns, interval_ns))
        }
    }

    /// Merges the bins in pairs: twice the width, half the count.
    fn widen_bins(&mut self) {
        let wider = self.interval_ns.saturating_mul(2);
        self.bins = regroup(&self.bins, self.interval_ns, wider);
        self.interval_ns = wider;
        self.last_bin = (0, 1, 0);
    }

    /// Records one paced I/O: `latency_ns` from its intended start, `service_ns` from its
    /// submission.
    pub fn record_paced(
        &mut self,
        dir: Direction,
        bytes: u64,
        latency_ns: u64,
        service_ns: u64,
        at_ns: u64,
    ) {
        self.record(dir, bytes, latency_ns, at_ns);
        let d = match dir {
            Direction::Read => &mut self.read,
            Direction::Write => &mut self.write,
            Direction::Trim => &mut self.trim,
        };
        d.service_latency
            .get_or_insert_with(Histogram::new)
            .record(service_ns);
    }

    /// Records a failed I/O.
    pub fn record_error(&mut self, errno: i32, offset: u64) {
        let e = self.errors.entry(errno).or_insert((0, offset));
        e.0 += 1;
    }

    /// Total I/O errors.
    pub fn error_count(&self) -> u64 {
        self.errors.values().map(|e| e.0).sum()
    }

    /// Adds another worker's stats.
    pub fn merge(&mut self, other: &RunStats) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.trim.merge(&other.trim);
        // Bins of different widths (one worker's widened, another's not yet) meet at the wider.
        while self.interval_ns < other.interval_ns {
            self.widen_bins();
        }
        let theirs = other.bins_of(self.interval_ns);
        if theirs.len() > self.bins.len() {
            self.bins.resize(theirs.len(), SeriesBin::default());
        }
        for (a, b) in self.bins.iter_mut().zip(theirs.iter()) {
            a.add(b);
        }
        for (errno, (count, first)) in &other.errors {
            let e = self.errors.entry(*errno).or_insert((0, *first));
            e.0 += count;
        }
    }

    /// Summary of one direction over `measured_ns` of measuring.
    pub fn direction_summary(&self, dir: Direction, measured_ns: u64) -> DirectionResult {
        let d = match dir {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
            Direction::Trim => &self.trim,
        };
        summarize(d, measured_ns)
    }

    /// The TRIMs' summary over `measured_ns`, where the run issued any (results of runs
    /// without them leave the key out).
    pub fn trim_summary(&self, measured_ns: u64) -> Option<DirectionResult> {
        (self.trim.ios > 0).then(|| summarize(&self.trim, measured_ns))
    }

    /// The time series, cut to `measured_ns` (a last partial bin is scaled by its length).
    pub fn series(&self, measured_ns: u64) -> SeriesResult {
        // A long quiet end (no completions to widen the bins) is widened here.
        let mut interval_ns = self.interval_ns;
        while measured_ns.div_ceil(interval_ns) > MAX_SERIES_BINS as u64 {
            interval_ns = interval_ns.saturating_mul(2);
        }
        let bins = self.bins_of(interval_ns);
        let full_bins = (measured_ns / interval_ns) as usize;
        let partial_ns = measured_ns % interval_ns;
        let n = if partial_ns > 0 {
            full_bins + 1
        } else {
            full_bins
        };
        // TRIM series only where the run trimmed: results without TRIMs read as before.
        let trims = self.trim.ios > 0;
        let mut out = SeriesResult {
            interval_ms: interval_ns as f64 / 1e6,
            ..SeriesResult::default()
        };
        for i in 0..n {
            let b = bins.get(i).copied().unwrap_or_default();
            let secs = if i == full_bins {
                partial_ns as f64 / NS_PER_S
            } else {
                interval_ns as f64 / NS_PER_S
            };
            let ios = b.read_ios + b.write_ios + b.trim_ios;
            out.t_end_s
                .push((i as f64 * interval_ns as f64) / NS_PER_S + secs);
            out.read_iops.push(b.read_ios as f64 / secs);
            out.write_iops.push(b.write_ios as f64 / secs);
            out.read_bytes_per_s.push(b.read_bytes as f64 / secs);
            out.write_bytes_per_s.push(b.write_bytes as f64 / secs);
            if trims {
                out.trim_iops.push(b.trim_ios as f64 / secs);
            }
            out.mean_lat_ns.push(if ios == 0 {
                0.0
            } else {
                b.lat_sum_ns as f64 / ios as f64
            });
        }
        out
    }

    /// Errors in result form, with readable names.
    pub fn error_list(&self) -> Vec<ErrorCount> {
        self.errors
            .iter()
            .map(|(&errno, &(count, first))| ErrorCount {
                errno,
                name: errno_name(errno).to_string(),
                count,
                first_offset_bytes: first,
            })
            .collect()
    }
}

/// Turns one direction's stats into its result over `measured_ns`.
pub fn summarize(d: &DirectionStats, measured_ns: u64) -> DirectionResult {
    let secs = measured_ns as f64 / NS_PER_S;
    let rate = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    let h = &d.latency;
    DirectionResult {
        service_lat_ns: d.service_latency.as_ref().map(latency_summary),
        ios: d.ios,
        bytes: d.bytes,
        iops: rate(d.ios),
        bw_bytes_per_s: rate(d.bytes),
        bw_mb_per_s: rate(d.bytes) / 1e6,
        bw_mib_per_s: rate(d.bytes) / (1u64 << 20) as f64,
        lat_ns: latency_summary(h),
        lat_histogram: h.to_sparse(),
        ios_over_10ms: Some(d.over_10ms),
        ios_over_100ms: Some(d.over_100ms),
    }
}

/// The summary figures of a latency histogram.
pub fn latency_summary(h: &Histogram) -> LatencySummary {
    LatencySummary {
        min: h.min(),
        mean: h.mean(),
        stddev: h.stddev(),
        max: h.max(),
        p50: h.percentile(50.0),
        p90: h.percentile(90.0),
        p99: h.percentile(99.0),
        p99_9: h.percentile(99.9),
        p99_99: h.percentile(99.99),
    }
}

/// The symbolic name of common errnos (for readable results without libc).
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        0 => "SHORT_TRANSFER",
        1 => "EPERM",
        2 => "ENOENT",
        5 => "EIO",
        6 => "ENXIO",
        9 => "EBADF",
        11 => "EAGAIN",
        12 => "ENOMEM",
        13 => "EACCES",
        14 => "EFAULT",
        16 => "EBUSY",
        22 => "EINVAL",
        // Writing to a block device that is active swap.
        26 => "ETXTBSY",
        27 => "EFBIG",
        28 => "ENOSPC",
        30 => "EROFS",
        61 => "ENODATA",
        95 => "EOPNOTSUPP",
        110 => "ETIMEDOUT",
        121 => "EREMOTEIO",
        125 => "ECANCELED",
        _ => "E?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_longer_than_its_bins_allow_is_widened_and_loses_nothing() {
        const S: u64 = 1_000_000_000;
        let secs = 3 * MAX_SERIES_BINS as u64; // one read a second, three times too long
        let mut one = RunStats::new(S);
        for t in 0..secs {
            one.record(Direction::Read, 4096, 1000, t * S + S / 2);
        }
        assert_eq!(one.interval_ns, 4 * S);
        assert!(one.bins.len() <= MAX_SERIES_BINS);
        // A second worker that saw half of it, with narrower bins, merges at the wider width.
        let mut two = RunStats::new(S);
        for t in 0..secs / 2 {
            two.record(Direction::Write, 512, 3000, t * S + S / 2);
        }
        assert_eq!(two.interval_ns, 2 * S);
        two.merge(&one);
        assert_eq!(two.interval_ns, 4 * S);
        let series = two.series(secs * S);
        assert_eq!(series.interval_ms, 4000.0);
        assert_eq!(series.t_end_s.len(), (secs / 4) as usize);
        let total = |v: &[f64]| v.iter().sum::<f64>() * 4.0;
        assert_eq!(total(&series.read_iops), secs as f64);
        assert_eq!(total(&series.write_iops), (secs / 2) as f64);
        assert_eq!(series.mean_lat_ns[0], 2000.0); // 4 reads at 1 µs, 4 writes at 3 µs
        assert_eq!(series.mean_lat_ns.last(), Some(&1000.0));
        // A long quiet end: widened when the series is made.
        let quiet = RunStats::new(S).series(secs * S);
        assert!(
            quiet.t_end_s.len() <= MAX_SERIES_BINS,
            "{}",
            quiet.t_end_s.len()
        );
        assert_eq!(quiet.t_end_s.last(), Some(&(secs as f64)));
    }

    #[test]
    fn errnos_a_device_can_return_have_names() {
        // ETXTBSY: the kernel refuses writes to a block device that is active swap.
        for (errno, name) in [(26, "ETXTBSY"), (16, "EBUSY"), (5, "EIO"), (28, "ENOSPC")] {
            assert_eq!(errno_name(errno), name);
        }
        assert_eq!(errno_name(9999), "E?");
    }

    #[test]
    fn rates_and_series_from_recorded_ios() {
        let mut s = RunStats::new(1_000_000_000);
        for i in 0..2000u64 {
            // 1000 reads in second 0, 1000 writes in second 1.
            let (dir, at) = if i < 1000 {
                (Direction::Read, i * 1_000_000)
            } else {
                (Direction::Write, i * 1_000_000)
            };
            s.record(dir, 4096, 100_000, at);
        }
        let r = s.direction_summary(Direction::Read, 2_000_000_000);
        assert_eq!(r.ios, 1000);
        assert!((r.iops - 500.0).abs() < 1e-9);
        assert!((r.bw_mb_per_s - 500.0 * 4096.0 / 1e6).abs() < 1e-9);
        let series = s.series(2_000_000_000);
        assert_eq!(series.read_iops, vec![1000.0, 0.0]);
        assert_eq!(series.write_iops, vec![0.0, 1000.0]);
        assert_eq!(series.mean_lat_ns, vec![100_000.0, 100_000.0]);
    }

    #[test]
    fn ios_land_in_their_own_bin_in_any_order() {
        let mut s = RunStats::new(1_000);
        for at in [2_500, 2_999, 500, 3_000, 2_000, 0, 999, 1_000, 7_000] {
            s.record(Direction::Write, 1, 1, at);
        }
        let ios: Vec<u64> = s.bins.iter().map(|b| b.write_ios).collect();
        assert_eq!(ios, [3, 1, 3, 1, 0, 0, 0, 1]);
    }

    #[test]
    fn slow_ios_are_counted_exactly_at_10_and_100_ms() {
        // 10.013 ms and 10.02 ms share the histogram's bucket with 10 ms (9.961–10.027 ms),
        // as 100.1 ms does with 100 ms: they are over; exactly 10 ms and 100 ms are not.
        let (mut a, mut b) = (RunStats::new(1_000_000_000), RunStats::new(1_000_000_000));
        for (i, ns) in [
            5_000,
            9_999_999,
            10_000_000,
            10_000_001,
            10_013_000,
            10_020_000,
            100_000_000,
            100_100_000,
            250_000_000,
        ]
        .into_iter()
        .enumerate()
        {
            let s = if i % 2 == 0 { &mut a } else { &mut b };
            s.record(Direction::Write, 4096, ns, 0);
        }
        b.record_paced(Direction::Read, 4096, 10_000_001, 1_000, 0);
        a.merge(&b);
        let w = a.direction_summary(Direction::Write, 1_000_000_000);
        assert_eq!((w.ios_over_10ms, w.ios_over_100ms), (Some(6), Some(2)));
        // The histogram alone said 3 and 1: the bucket holding the threshold counted as not over.
        assert_eq!(w.lat_histogram.count_above(OVER_10MS_NS), 3);
        assert_eq!(w.lat_histogram.count_above(OVER_100MS_NS), 1);
        // A paced I/O counts by its latency from the intended start, as the histogram does.
        let r = a.direction_summary(Direction::Read, 1_000_000_000);
        assert_eq!((r.ios_over_10ms, r.ios_over_100ms), (Some(1), Some(0)));
    }

    #[test]
    fn merge_adds_workers() {
        let mut a = RunStats::new(1_000_000_000);
        let mut b = RunStats::new(1_000_000_000);
        a.record(Direction::Read, 4096, 10, 0);
        b.record(Direction::Read, 4096, 30, 1_500_000_000);
        b.record_error(5, 8192);
        a.merge(&b);
        assert_eq!(a.read.ios, 2);
        assert_eq!(a.bins.len(), 2);
        assert_eq!(a.error_list()[0].name, "EIO");
        assert_eq!(a.error_list()[0].first_offset_bytes, 8192);
    }
}
