//! A replay's measured latencies as the storage-bench metrics: data rate, average service
//! time, the share of slow I/Os, and the time the target was busy.

use serde::{Deserialize, Serialize};

/// Latency thresholds of the storage-bench metrics, in ns.
const OVER_10MS_NS: u64 = 10_000_000;
const OVER_100MS_NS: u64 = 100_000_000;

/// The storage-bench results of a replay (SSD 750 review): data rate, average service
/// time and the share of slow I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReplayMetrics {
    /// I/Os measured.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Time the data rate is taken over, in ns (see [`replay_metrics`]).
    pub elapsed_ns: u64,
    /// Bytes / elapsed, in MB/s (10^6 bytes per second); 0 when `elapsed_ns` is 0.
    pub data_rate_mb_per_s: f64,
    /// Mean latency in µs; 0 without I/Os.
    pub avg_latency_us: f64,
    /// I/Os that took longer than 10 ms, in percent of all.
    pub pct_over_10ms: f64,
    /// I/Os that took longer than 100 ms, in percent of all.
    pub pct_over_100ms: f64,
}

/// Accumulates per-I/O results in constant memory (mergeable across threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsAcc {
    ios: u64,
    bytes: u64,
    lat_sum_ns: u128,
    over_10ms: u64,
    over_100ms: u64,
}

impl MetricsAcc {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one completed I/O.
    pub fn add(&mut self, len_bytes: u64, latency_ns: u64) {
        self.ios += 1;
        self.bytes = self.bytes.saturating_add(len_bytes);
        self.lat_sum_ns += u128::from(latency_ns);
        self.over_10ms += u64::from(latency_ns > OVER_10MS_NS);
        self.over_100ms += u64::from(latency_ns > OVER_100MS_NS);
    }

    /// Adds another accumulator's I/Os.
    pub fn merge(&mut self, o: &MetricsAcc) {
        self.ios += o.ios;
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.lat_sum_ns += o.lat_sum_ns;
        self.over_10ms += o.over_10ms;
        self.over_100ms += o.over_100ms;
    }

    /// The metrics, with the data rate taken over `elapsed_ns`.
    pub fn finish(&self, elapsed_ns: u64) -> ReplayMetrics {
        let pct = |k: u64| {
            if self.ios == 0 {
                0.0
            } else {
                k as f64 * 100.0 / self.ios as f64
            }
        };
        ReplayMetrics {
            ios: self.ios,
            bytes: self.bytes,
            elapsed_ns,
            data_rate_mb_per_s: if elapsed_ns == 0 {
                0.0
            } else {
                // bytes / (ns / 1e9) / 1e6 = bytes * 1e3 / ns
                self.bytes as f64 * 1e3 / elapsed_ns as f64
            },
            avg_latency_us: if self.ios == 0 {
                0.0
            } else {
                self.lat_sum_ns as f64 / self.ios as f64 / 1e3
            },
            pct_over_10ms: pct(self.over_10ms),
            pct_over_100ms: pct(self.over_100ms),
        }
    }
}

/// The storage-bench metrics of a replay from its per-I/O latencies (ns), the bytes it
/// moved and the time to take the data rate over. "Over 10 ms" means strictly longer.
///
/// `elapsed_ns` is the caller's choice: the replay's wall time, or — closer to how the
/// storage bench is understood to report its data rate, excluding idle time (not
/// confirmed by a primary text) — the time at least one I/O was outstanding, which
/// [`busy_time_ns`] computes from issue and completion times.
pub fn replay_metrics(latencies_ns: &[u64], bytes: u64, elapsed_ns: u64) -> ReplayMetrics {
    let mut acc = MetricsAcc::new();
    for &l in latencies_ns {
        acc.add(0, l);
    }
    acc.bytes = bytes;
    acc.finish(elapsed_ns)
}

/// Total time covered by at least one of the `(start_ns, end_ns)` intervals (the union of
/// the I/Os' service intervals: the target's busy time). Sorts the slice in place;
/// intervals with `end < start` count as empty.
pub fn busy_time_ns(intervals: &mut [(u64, u64)]) -> u64 {
    intervals.sort_unstable();
    let mut total = 0u64;
    let mut cur: Option<(u64, u64)> = None;
    for &(s, e) in intervals.iter() {
        let e = e.max(s);
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total = total.saturating_add(ce - cs);
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    if let Some((cs, ce)) = cur {
        total = total.saturating_add(ce - cs);
    }
    total
}
