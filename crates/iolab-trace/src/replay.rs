//! Replay planning: turns trace records into the requests a replay issues, and a replay's
//! measured latencies into the storage-bench metrics. Pure code: no I/O, no clock, no
//! engine (the adaptor that drives a target lives in the binary crate).
//!
//! ```
//! use iolab_trace::replay::{Replay, ReplayOptions, Timing};
//! use iolab_trace::{Op, TraceRecord};
//!
//! let rec = |t: u64, off: u64| TraceRecord {
//!     time_ns: t, device: 0, op: Op::Read, offset_bytes: off, len_bytes: 3000,
//!     completion_ns: None,
//! };
//! // 1 s of idle in the trace, capped at 25 ms, replayed twice as fast.
//! let trace = vec![rec(5_000_000_000, 0), rec(6_000_000_000, 1 << 40)];
//! let opts = ReplayOptions {
//!     timing: Timing::Timestamps { scale: 2.0, idle_cap_ns: Some(25_000_000) },
//!     ..ReplayOptions::new(0, 1 << 30)
//! };
//! let ios: Vec<_> = Replay::new(trace.into_iter().map(Ok), opts)
//!     .unwrap()
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(ios[1].at_ns, Some(12_500_000));
//! assert_eq!(ios[1].len, 4096); // rounded up to the 4 KiB alignment
//! assert!(ios[1].offset + ios[1].len <= 1 << 30); // inside the target span
//! ```
//!
//! # What a replay issues
//!
//! Reads and writes only: trims and flushes are left out and counted, as the AnandTech
//! storage bench does ("TRIM and flush commands are excluded"). Records dropped by the
//! read/write or device filters are counted too; every other record gives exactly one
//! [`ReplayIo`], in input order. The input must be in time order: wrap an unsorted reader
//! in [`crate::Reorder`] first (records that are still earlier than their predecessor are
//! issued with no gap and counted in [`ReplayStats::late`]).
//!
//! # Time
//!
//! [`Timing::Timestamps`] keeps the trace's timing: the first planned request is due at 0
//! and each later one after the gap since the previous *planned* request. Gaps longer
//! than `idle_cap_ns` are shortened to it **before** scaling, in the trace's own time (a
//! 25 ms cap is 25 ms of trace time, 12.5 ms of replay at scale 2); then every due time is
//! divided by `scale` (2.0 replays twice as fast). Without a cap this is exactly
//! `(t − t0) / scale`. [`Timing::AsFastAsPossible`] gives no due times: the caller keeps a
//! fixed number of requests outstanding, usually [`recorded_queue_depth`]'s
//! [`RecordedQd::suggested`].
//!
//! # Space
//!
//! Offsets are remapped into `[span_start, span_start + span_len)`: wrapped modulo the
//! usable span ([`Remap::Wrap`]) or scaled from the trace's address range ([`Remap::Scale`]),
//! then aligned down to `align`; lengths are rounded up to `align` (a zero-length read or
//! write becomes one `align` unit), cut to the usable span if longer, and a request that
//! would run past the end is moved down to end at it. So every request lies inside the
//! span and its offset and length are multiples of `align` (with `span_start` aligned).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::error::{Result, TraceError};
use crate::record::{Op, TraceRecord};

/// The idle-gap cap the AnandTech storage bench is remembered to use (25 ms). The primary text
/// is not available: the figure is as reviewers' descriptions of the bench recall it.
pub const STORAGE_BENCH_IDLE_CAP_NS: u64 = 25_000_000;

/// One request of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReplayIo {
    /// When to issue it, in ns from the start of the replay; `None` in as-fast-as-possible
    /// mode (issue as soon as the queue has room).
    pub at_ns: Option<u64>,
    /// A write (otherwise a read).
    pub write: bool,
    /// Byte offset on the target, inside the span and aligned.
    pub offset: u64,
    /// Length in bytes, a non-zero multiple of the alignment.
    pub len: u64,
}

/// When requests are issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Timing {
    /// Timestamp-faithful: request `i` is due at `(t_i − t_0) / scale` ns, with every gap
    /// between consecutive requests first capped at `idle_cap_ns` (in trace time).
    Timestamps {
        /// Speed-up: 1.0 is real time, 2.0 twice as fast, 0.5 half as fast.
        scale: f64,
        /// Longest gap kept between consecutive requests (trace time, before scaling).
        idle_cap_ns: Option<u64>,
    },
    /// As fast as possible: no due times; the caller keeps a queue depth.
    AsFastAsPossible,
}

/// How trace offsets are mapped into the target span (before alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Remap {
    /// `offset mod usable_span`: offsets that fit stay where they are (relative to
    /// `span_start`); larger ones wrap around.
    Wrap,
    /// Linear: `[from_start, from_start + from_len)` of the trace is stretched or shrunk onto
    /// the span (keeps locality and the hot/cold layout on a smaller target); offsets
    /// outside that range wrap.
    Scale {
        /// Lowest trace offset (e.g. 0, or the analysis' lowest offset).
        from_start: u64,
        /// Trace range mapped onto the span (e.g. the device size or the analysis' span).
        from_len: u64,
    },
}

/// How to turn records into replay requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayOptions {
    /// Timestamp-faithful or as fast as possible.
    pub timing: Timing,
    /// First byte of the target area (a multiple of `align`).
    pub span_start: u64,
    /// Size of the target area in bytes (at least `align`; rounded down to it).
    pub span_len: u64,
    /// Alignment of offsets and lengths in bytes (e.g. 4096 for O_DIRECT); at least 1.
    pub align: u64,
    /// How offsets are mapped into the span.
    pub remap: Remap,
    /// Replay the trace's reads.
    pub reads: bool,
    /// Replay the trace's writes.
    pub writes: bool,
    /// Replay only these devices (as the reader numbers them); `None` replays all.
    pub devices: Option<Vec<u32>>,
    /// The longest request issued (the replayer's buffer per request); longer ones are cut to
    /// it. Rounded down to `align`.
    pub max_len: u64,
}

impl ReplayOptions {
    /// Real-time timestamps without a gap cap, 4 KiB alignment, offsets wrapped into
    /// `[span_start, span_start + span_len)`, reads and writes of every device.
    pub fn new(span_start: u64, span_len: u64) -> Self {
        ReplayOptions {
            timing: Timing::Timestamps {
                scale: 1.0,
                idle_cap_ns: None,
            },
            span_start,
            span_len,
            align: 4096,
            remap: Remap::Wrap,
            reads: true,
            writes: true,
            devices: None,
            max_len: u64::MAX,
        }
    }
}

/// What planning did with the records it saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayStats {
    /// Records seen.
    pub records: u64,
    /// Requests planned (one per kept record).
    pub planned: u64,
    /// Trims and flushes left out.
    pub not_data: u64,
    /// Reads or writes left out by the read/write filter.
    pub filtered_op: u64,
    /// Records left out by the device filter.
    pub filtered_device: u64,
    /// Gaps shortened to the idle cap.
    pub gaps_capped: u64,
    /// Trace time removed by the cap, in ns (before scaling).
    pub idle_removed_ns: u64,
    /// Requests longer than the usable span or `max_len`, cut to it.
    pub clamped: u64,
    /// Records earlier than their predecessor (issued with no gap).
    pub late: u64,
    /// Requests not placed at the trace's offset: beyond the usable span (wrapped modulo it,
    /// or outside the range [`Remap::Scale`] maps) or running past its end (moved down).
    pub moved: u64,
    /// Planned requests with the same trace time as the planned request before them (issued
    /// together: with coarse timestamps, a burst the recorded workload may not have had).
    pub same_time: u64,
    /// The most planned requests in a row sharing one trace time.
    pub largest_same_time_run: u64,
}

/// The planner: feed records in time order with [`ReplayPlanner::plan`].
#[derive(Debug, Clone)]
pub struct ReplayPlanner {
    opts: ReplayOptions,
    /// `span_len` rounded down to the alignment.
    usable: u64,
    /// Trace time of the latest planned request.
    prev_t: Option<u64>,
    /// Capped trace time since the first planned request.
    virt_ns: u64,
    /// Trace time of the previous planned request and how many in a row have had it.
    same_time_run: (Option<u64>, u64),
    stats: ReplayStats,
}

fn bad(msg: impl Into<String>) -> TraceError {
    TraceError::Replay(msg.into())
}

impl ReplayPlanner {
    /// Checks the options: `align ≥ 1`, `span_start` a multiple of it, `span_len ≥ align`,
    /// `span_start + span_len` within `u64`, a finite positive scale, a non-empty device
    /// filter and a non-zero `from_len`.
    pub fn new(opts: ReplayOptions) -> Result<Self> {
        if opts.align == 0 {
            return Err(bad("the alignment must be at least 1 byte"));
        }
        if opts.span_start % opts.align != 0 {
            return Err(bad(format!(
                "the span start {} is not a multiple of the alignment {}; align it or lower \
                 the alignment",
                opts.span_start, opts.align
            )));
        }
        if opts.max_len < opts.align {
            return Err(bad(format!(
                "the longest request ({} bytes) is shorter than the alignment ({} bytes)",
                opts.max_len, opts.align
            )));
        }
        if opts.span_len < opts.align {
            return Err(bad(format!(
                "the span ({} bytes) is smaller than the alignment ({} bytes)",
                opts.span_len, opts.align
            )));
        }
        if opts.span_start.checked_add(opts.span_len).is_none() {
            return Err(bad("span start + length overflows 64 bits"));
        }
        if let Timing::Timestamps { scale, .. } = opts.timing {
            if !(scale.is_finite() && scale > 0.0) {
                return Err(bad(format!(
                    "the time scale must be a positive number, not {scale}"
                )));
            }
        }
        if !opts.reads && !opts.writes {
            return Err(bad("neither reads nor writes are selected"));
        }
        if opts.devices.as_ref().is_some_and(Vec::is_empty) {
            return Err(bad("the device filter is empty"));
        }
        if let Remap::Scale { from_len: 0, .. } = opts.remap {
            return Err(bad("the trace range to scale from is empty"));
        }
        let usable = opts.span_len - opts.span_len % opts.align;
        Ok(ReplayPlanner {
            opts,
            usable,
            prev_t: None,
            virt_ns: 0,
            same_time_run: (None, 0),
            stats: ReplayStats::default(),
        })
    }

    /// Counters so far.
    pub fn stats(&self) -> ReplayStats {
        self.stats
    }

    /// The options in force.
    pub fn options(&self) -> &ReplayOptions {
        &self.opts
    }

    /// The request for `rec`, or `None` when it is left out (see [`ReplayStats`]).
    pub fn plan(&mut self, rec: &TraceRecord) -> Option<ReplayIo> {
        self.stats.records += 1;
        let write = match rec.op {
            Op::Read => false,
            Op::Write => true,
            Op::Trim | Op::Flush => {
                self.stats.not_data += 1;
                return None;
            }
        };
        if let Some(devs) = &self.opts.devices {
            if !devs.contains(&rec.device) {
                self.stats.filtered_device += 1;
                return None;
            }
        }
        if (write && !self.opts.writes) || (!write && !self.opts.reads) {
            self.stats.filtered_op += 1;
            return None;
        }
        let at_ns = self.time(rec.time_ns);
        let (offset, len) = self.place(rec.offset_bytes, rec.len_bytes);
        self.stats.planned += 1;
        let run = match self.same_time_run {
            (Some(t), n) if t == rec.time_ns => {
                self.stats.same_time += 1;
                n + 1
            }
            _ => 1,
        };
        self.same_time_run = (Some(rec.time_ns), run);
        self.stats.largest_same_time_run = self.stats.largest_same_time_run.max(run);
        Some(ReplayIo {
            at_ns,
            write,
            offset,
            len,
        })
    }

    fn time(&mut self, t: u64) -> Option<u64> {
        let (scale, cap) = match self.opts.timing {
            Timing::Timestamps { scale, idle_cap_ns } => (scale, idle_cap_ns),
            Timing::AsFastAsPossible => (1.0, None),
        };
        if let Some(prev) = self.prev_t {
            let gap = match t.checked_sub(prev) {
                Some(g) => g,
                None => {
                    self.stats.late += 1;
                    0
                }
            };
            let kept = match cap {
                Some(c) if gap > c => {
                    self.stats.gaps_capped += 1;
                    self.stats.idle_removed_ns = self.stats.idle_removed_ns.saturating_add(gap - c);
                    c
                }
                _ => gap,
            };
            self.virt_ns = self.virt_ns.saturating_add(kept);
        }
        self.prev_t = Some(self.prev_t.map_or(t, |p| p.max(t)));
        match self.opts.timing {
            Timing::AsFastAsPossible => None,
            // Exact in integers at scale 1; f64 keeps ns precision up to 2^53 ns (104 days).
            Timing::Timestamps { .. } if scale == 1.0 => Some(self.virt_ns),
            Timing::Timestamps { .. } => Some((self.virt_ns as f64 / scale).round() as u64),
        }
    }

    fn place(&mut self, offset: u64, len: u64) -> (u64, u64) {
        let (align, usable) = (self.opts.align, self.usable);
        let rel = match self.opts.remap {
            Remap::Wrap => {
                if offset >= usable {
                    self.stats.moved += 1;
                }
                offset % usable
            }
            Remap::Scale {
                from_start,
                from_len,
            } => {
                let from = offset.wrapping_sub(from_start);
                if from >= from_len {
                    self.stats.moved += 1;
                }
                let d = from % from_len;
                // d < from_len, so the quotient is < usable and fits in u64.
                (u128::from(d) * u128::from(usable) / u128::from(from_len)) as u64
            }
        };
        let mut off = rel - rel % align;
        let mut len = match len % align {
            0 if len > 0 => len,
            r => len.saturating_add(align - r),
        };
        let longest = usable.min(self.opts.max_len - self.opts.max_len % align);
        if len > longest || len % align != 0 {
            // Longer than the span or a request may be (or rounding saturated): cut to that.
            self.stats.clamped += 1;
            len = longest;
        }
        if off > usable - len {
            // Counted once: a request both wrapped and moved down is one request moved.
            if self.opts.remap == Remap::Wrap && offset < usable
                || matches!(self.opts.remap, Remap::Scale { from_start, from_len }
                    if offset.wrapping_sub(from_start) < from_len)
            {
                self.stats.moved += 1;
            }
            off = usable - len;
        }
        (self.opts.span_start + off, len)
    }
}

/// Streaming adaptor: records in, replay requests out (see the module docs).
pub struct Replay<I> {
    input: I,
    planner: ReplayPlanner,
}

impl<I: Iterator<Item = Result<TraceRecord>>> Replay<I> {
    /// Wraps `input` (in time order: see [`crate::Reorder`]); fails on invalid options.
    pub fn new(input: I, opts: ReplayOptions) -> Result<Self> {
        Ok(Replay {
            input,
            planner: ReplayPlanner::new(opts)?,
        })
    }

    /// Counters so far (complete once the iterator is exhausted).
    pub fn stats(&self) -> ReplayStats {
        self.planner.stats()
    }
}

impl<I: Iterator<Item = Result<TraceRecord>>> Iterator for Replay<I> {
    type Item = Result<ReplayIo>;
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.input.next()? {
                Err(e) => return Some(Err(e)),
                Ok(r) => {
                    if let Some(io) = self.planner.plan(&r) {
                        return Some(Ok(io));
                    }
                }
            }
        }
    }
}

/// Most requests tracked as outstanding by [`recorded_queue_depth`]; corrupt completion
/// times (far in the future) cannot make it hold more. Depths beyond it are reported as it.
pub const MAX_TRACKED_OUTSTANDING: usize = 1 << 16;

/// The queue depth a trace was recorded at, for as-fast-as-possible replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecordedQd {
    /// Whether the figures come from the trace's completion times (otherwise every
    /// figure is the caller's default).
    pub measured: bool,
    /// Requests that had a completion time.
    pub requests_with_completion: u64,
    /// Time-averaged number of outstanding requests while at least one was outstanding
    /// (Little's law: total service time / busy time).
    pub mean_busy: f64,
    /// Mean number outstanding as each request arrived, itself included.
    pub mean_at_arrival: f64,
    /// Largest number outstanding at any arrival, itself included.
    pub max: u32,
}

impl RecordedQd {
    /// The depth to keep in as-fast-as-possible mode: the time-averaged depth while busy,
    /// rounded to the nearest integer, at least 1.
    pub fn suggested(&self) -> u32 {
        (self.mean_busy.round() as u32).max(1)
    }
}

/// Computes the recorded queue depth from issue and completion times (MSR, SYSTOR,
/// blkparse/blktrace with `--event D`), counting reads and writes on all devices together
/// (a replay sends them to one target; filter the records first to narrow it: a replay of
/// the reads only wants the reads' own depth, the reads outstanding as each read arrived,
/// since the writes it leaves out hold no place in its queue). Records
/// must be in issue order. Formats without completion times give `default_qd` (at least 1)
/// for every figure with `measured` false.
pub fn recorded_queue_depth<I: IntoIterator<Item = TraceRecord>>(
    records: I,
    default_qd: u32,
) -> RecordedQd {
    let mut inflight: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let (mut n, mut depth_sum, mut max) = (0u64, 0u128, 0u32);
    let (mut lat_sum, mut busy_total) = (0u128, 0u128);
    let mut busy: Option<(u64, u64)> = None;
    for r in records {
        let Some(c) = r.completion_ns else { continue };
        if !r.op.moves_data() {
            continue;
        }
        let t = r.time_ns;
        while inflight.peek().is_some_and(|&Reverse(done)| done <= t) {
            inflight.pop();
        }
        if inflight.len() >= MAX_TRACKED_OUTSTANDING {
            inflight.pop();
        }
        match busy {
            Some((s, e)) if inflight.is_empty() => {
                busy_total += u128::from(e.saturating_sub(s));
                busy = Some((t, t));
            }
            None => busy = Some((t, t)),
            _ => {}
        }
        let depth = inflight.len() as u32 + 1;
        max = max.max(depth);
        depth_sum += u128::from(depth);
        n += 1;
        let c = c.max(t);
        lat_sum += u128::from(c - t);
        if let Some((_, e)) = busy.as_mut() {
            *e = (*e).max(c);
        }
        inflight.push(Reverse(c));
    }
    if let Some((s, e)) = busy {
        busy_total += u128::from(e.saturating_sub(s));
    }
    if n == 0 {
        let d = default_qd.max(1);
        return RecordedQd {
            measured: false,
            requests_with_completion: 0,
            mean_busy: f64::from(d),
            mean_at_arrival: f64::from(d),
            max: d,
        };
    }
    RecordedQd {
        measured: true,
        requests_with_completion: n,
        // Zero-length service times everywhere: nothing overlapped, depth 1.
        mean_busy: if busy_total == 0 {
            1.0
        } else {
            lat_sum as f64 / busy_total as f64
        },
        mean_at_arrival: depth_sum as f64 / n as f64,
        max,
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn rec(t: u64, op: Op, off: u64, len: u64) -> TraceRecord {
        TraceRecord {
            time_ns: t,
            device: 0,
            op,
            offset_bytes: off,
            len_bytes: len,
            completion_ns: None,
        }
    }

    fn plan_all(recs: &[TraceRecord], opts: ReplayOptions) -> (Vec<ReplayIo>, ReplayStats) {
        let mut r = Replay::new(recs.iter().copied().map(Ok), opts).unwrap();
        let ios = r.by_ref().collect::<Result<Vec<_>>>().unwrap();
        (ios, r.stats())
    }

    #[test]
    fn every_request_placed_away_from_its_offset_is_counted_once() {
        let mib = 1 << 20;
        let recs = [
            rec(0, Op::Read, 0, 4096),               // fits
            rec(1, Op::Read, 10 * mib, 4096),        // beyond a 1 MiB span: wrapped
            rec(2, Op::Read, mib - 4096, 8192),      // runs past the end: moved down
            rec(3, Op::Read, 10 * mib - 4096, 8192), // wrapped and moved down: once
        ];
        let (_, st) = plan_all(&recs, ReplayOptions::new(0, mib));
        assert_eq!(st.moved, 3);
        assert_eq!(st.clamped, 0);
    }

    #[test]
    fn requests_sharing_a_timestamp_are_counted_with_the_longest_run() {
        let s = 1_000_000_000;
        let recs = [
            rec(s, Op::Read, 0, 4096),
            rec(s, Op::Write, 0, 4096),
            rec(s, Op::Read, 0, 4096),
            rec(2 * s, Op::Read, 0, 4096),
            rec(2 * s, Op::Trim, 0, 4096), // not planned: not counted
            rec(2 * s, Op::Read, 0, 4096),
        ];
        let (_, st) = plan_all(&recs, ReplayOptions::new(0, 1 << 20));
        assert_eq!(st.same_time, 3);
        assert_eq!(st.largest_same_time_run, 3);
    }

    fn timed(scale: f64, cap: Option<u64>) -> ReplayOptions {
        ReplayOptions {
            timing: Timing::Timestamps {
                scale,
                idle_cap_ns: cap,
            },
            ..ReplayOptions::new(0, 1 << 40)
        }
    }

    #[test]
    fn faithful_timing_is_t_minus_t0_over_scale() {
        let t0 = 128_166_385_295_514_600;
        let recs: Vec<_> = [0u64, 100, 1_000, 50_000_000, 50_000_001]
            .iter()
            .map(|d| rec(t0 + d, Op::Read, 0, 4096))
            .collect();
        let (ios, _) = plan_all(&recs, timed(1.0, None));
        let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
        assert_eq!(at, vec![0, 100, 1_000, 50_000_000, 50_000_001]);
        let (ios, _) = plan_all(&recs, timed(4.0, None));
        let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
        assert_eq!(at, vec![0, 25, 250, 12_500_000, 12_500_000]);
        let (ios, _) = plan_all(&recs, timed(0.5, None));
        assert_eq!(ios[3].at_ns, Some(100_000_000));
    }

    #[test]
    fn gaps_are_capped_before_scaling() {
        // Gaps: 10 ms, 1 s, 25 ms exactly, 30 ms.
        let ms = 1_000_000;
        let recs: Vec<_> = [0, 10 * ms, 1010 * ms, 1035 * ms, 1065 * ms]
            .iter()
            .map(|&t| rec(t, Op::Write, 0, 4096))
            .collect();
        let (ios, st) = plan_all(&recs, timed(1.0, Some(25 * ms)));
        let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
        assert_eq!(at, vec![0, 10 * ms, 35 * ms, 60 * ms, 85 * ms]);
        assert_eq!(st.gaps_capped, 2);
        assert_eq!(st.idle_removed_ns, 975 * ms + 5 * ms);
        // The cap is in trace time: at scale 2 every due time halves.
        let (ios, _) = plan_all(&recs, timed(2.0, Some(25 * ms)));
        let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
        assert_eq!(at, vec![0, 5 * ms, 17_500_000, 30 * ms, 42_500_000]);
        // Gaps are between planned requests: with writes filtered out, none is left.
        let mixed = [
            rec(0, Op::Read, 0, 4096),
            rec(ms, Op::Write, 0, 4096),
            rec(2 * ms, Op::Read, 0, 4096),
        ];
        let opts = ReplayOptions {
            writes: false,
            ..timed(1.0, Some(ms / 2))
        };
        let (ios, st) = plan_all(&mixed, opts);
        assert_eq!(ios[1].at_ns, Some(ms / 2));
        assert_eq!(st.gaps_capped, 1);
    }

    #[test]
    fn late_records_get_no_gap() {
        let recs = [
            rec(100, Op::Read, 0, 4096),
            rec(50, Op::Read, 0, 4096),
            rec(150, Op::Read, 0, 4096),
        ];
        let (ios, st) = plan_all(&recs, timed(1.0, None));
        let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
        assert_eq!(at, vec![0, 0, 50]);
        assert_eq!(st.late, 1);
    }

    #[test]
    fn as_fast_as_possible_has_no_times() {
        let recs = [rec(0, Op::Read, 0, 512), rec(9, Op::Write, 512, 512)];
        let opts = ReplayOptions {
            timing: Timing::AsFastAsPossible,
            ..ReplayOptions::new(0, 1 << 20)
        };
        let (ios, _) = plan_all(&recs, opts);
        assert!(ios.iter().all(|i| i.at_ns.is_none()));
        assert_eq!(ios.len(), 2);
        assert!(ios[1].write && !ios[0].write);
    }

    #[test]
    fn remap_stays_in_span_and_aligned() {
        let mut rng = Rng::new(17);
        for (span_start, span_len, align) in [
            (0u64, 1u64 << 30, 4096u64),
            (1 << 20, 10_000_000, 4096),
            (4096 * 3, 8192, 4096),
            (512 * 7, 1_000_000, 512),
            (0, 4096, 4096),
            (1000, 12_345, 1),
        ] {
            for remap in [
                Remap::Wrap,
                Remap::Scale {
                    from_start: 1 << 20,
                    from_len: 1 << 40,
                },
            ] {
                let opts = ReplayOptions {
                    align,
                    remap,
                    ..ReplayOptions::new(span_start, span_len)
                };
                let mut p = ReplayPlanner::new(opts).unwrap();
                for i in 0..20_000u64 {
                    let off = match i % 4 {
                        0 => rng.next_u64(),
                        1 => rng.below(1 << 41),
                        2 => u64::MAX - rng.below(1 << 20),
                        _ => rng.below(span_len * 2),
                    };
                    let len = match i % 5 {
                        0 => 0,
                        1 => u64::MAX - rng.below(8),
                        2 => rng.below(1 << 32),
                        _ => rng.below(1 << 20),
                    };
                    let io = p.plan(&rec(i, Op::Read, off, len)).unwrap();
                    let end = span_start + span_len;
                    assert!(io.offset >= span_start, "{io:?}");
                    assert!(
                        io.offset + io.len <= end,
                        "{io:?} span {span_start}+{span_len}"
                    );
                    assert!(io.len > 0);
                    assert_eq!(io.offset % align, 0, "{io:?}");
                    assert_eq!(io.len % align, 0, "{io:?}");
                }
            }
        }
    }

    #[test]
    fn remap_details() {
        let opts = ReplayOptions::new(1 << 20, 1 << 20);
        let mut p = ReplayPlanner::new(opts).unwrap();
        // Fits: kept relative to the span start.
        let io = p.plan(&rec(0, Op::Read, 8192, 4096)).unwrap();
        assert_eq!((io.offset, io.len), ((1 << 20) + 8192, 4096));
        // Wraps, aligns down, rounds the length up.
        let io = p.plan(&rec(0, Op::Read, (1 << 20) + 5000, 100)).unwrap();
        assert_eq!((io.offset, io.len), ((1 << 20) + 4096, 4096));
        // Runs past the end: moved down to end at it.
        let io = p.plan(&rec(0, Op::Write, (1 << 20) - 4096, 8192)).unwrap();
        assert_eq!((io.offset, io.len), ((2 << 20) - 8192, 8192));
        // Longer than the span: cut to it.
        let io = p.plan(&rec(0, Op::Write, 0, 3 << 20)).unwrap();
        assert_eq!((io.offset, io.len), (1 << 20, 1 << 20));
        assert_eq!(p.stats().clamped, 1);
        // Longer than a request may be, even near u64::MAX: cut to the longest (aligned).
        let mut short = ReplayPlanner::new(ReplayOptions {
            max_len: 10_000,
            ..ReplayOptions::new(1 << 20, 1 << 20)
        })
        .unwrap();
        for len in [100_000_000, u64::MAX - 1] {
            let io = short.plan(&rec(0, Op::Write, 4096, len)).unwrap();
            assert_eq!((io.offset, io.len), ((1 << 20) + 4096, 8192), "{len}");
        }
        assert_eq!(short.stats().clamped, 2);
        // Scale: the trace's 1 TiB onto the 1 MiB span keeps relative position.
        let opts = ReplayOptions {
            remap: Remap::Scale {
                from_start: 0,
                from_len: 1 << 40,
            },
            ..ReplayOptions::new(0, 1 << 20)
        };
        let mut p = ReplayPlanner::new(opts).unwrap();
        let io = p.plan(&rec(0, Op::Read, 1 << 39, 4096)).unwrap();
        assert_eq!(io.offset, 1 << 19);
    }

    #[test]
    fn counts_match_the_trace_after_filtering() {
        let mut rng = Rng::new(5);
        let recs: Vec<_> = (0..10_000u64)
            .map(|i| TraceRecord {
                device: rng.below(3) as u32,
                ..rec(
                    i * 1000,
                    [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize],
                    rng.below(1 << 18) * 4096,
                    4096,
                )
            })
            .collect();
        for (reads, writes, devices) in [
            (true, true, None),
            (true, false, None),
            (false, true, Some(vec![1])),
            (true, true, Some(vec![0, 2])),
        ] {
            let opts = ReplayOptions {
                reads,
                writes,
                devices: devices.clone(),
                ..ReplayOptions::new(0, 1 << 30)
            };
            let (ios, st) = plan_all(&recs, opts);
            let want: Vec<_> = recs
                .iter()
                .filter(|r| (r.op == Op::Read && reads) || (r.op == Op::Write && writes))
                .filter(|r| devices.as_ref().is_none_or(|d| d.contains(&r.device)))
                .collect();
            assert_eq!(ios.len(), want.len());
            assert_eq!(st.planned as usize, want.len());
            assert_eq!(
                st.planned + st.not_data + st.filtered_op + st.filtered_device,
                recs.len() as u64
            );
            for (io, r) in ios.iter().zip(want) {
                assert_eq!(io.write, r.op == Op::Write);
                assert_eq!(io.offset, r.offset_bytes);
                assert_eq!(io.len, r.len_bytes);
            }
        }
    }

    #[test]
    fn bad_options_are_refused() {
        let ok = ReplayOptions::new(0, 1 << 20);
        assert!(ReplayPlanner::new(ok.clone()).is_ok());
        for bad in [
            ReplayOptions {
                align: 0,
                ..ok.clone()
            },
            ReplayOptions {
                span_start: 100,
                ..ok.clone()
            },
            ReplayOptions {
                span_len: 4095,
                ..ok.clone()
            },
            ReplayOptions {
                span_start: u64::MAX - 4095,
                ..ok.clone()
            },
            ReplayOptions {
                reads: false,
                writes: false,
                ..ok.clone()
            },
            ReplayOptions {
                devices: Some(vec![]),
                ..ok.clone()
            },
            ReplayOptions {
                timing: Timing::Timestamps {
                    scale: 0.0,
                    idle_cap_ns: None,
                },
                ..ok.clone()
            },
            ReplayOptions {
                timing: Timing::Timestamps {
                    scale: f64::NAN,
                    idle_cap_ns: None,
                },
                ..ok.clone()
            },
            ReplayOptions {
                remap: Remap::Scale {
                    from_start: 0,
                    from_len: 0,
                },
                ..ok.clone()
            },
        ] {
            let e = ReplayPlanner::new(bad.clone()).expect_err(&format!("{bad:?}"));
            assert!(e.to_string().starts_with("replay: "), "{e}");
        }
    }

    fn io_c(t: u64, c: u64) -> TraceRecord {
        TraceRecord {
            completion_ns: Some(c),
            ..rec(t, Op::Read, 0, 4096)
        }
    }

    #[test]
    fn recorded_depth_from_completions() {
        // 0..100, 10..50, 20..200 overlap; 300..310 alone (as the analysis test).
        let recs = [io_c(0, 100), io_c(10, 50), io_c(20, 200), io_c(300, 310)];
        let qd = recorded_queue_depth(recs, 7);
        assert!(qd.measured);
        assert_eq!(qd.requests_with_completion, 4);
        assert_eq!(qd.max, 3);
        assert!((qd.mean_at_arrival - 7.0 / 4.0).abs() < 1e-12);
        assert!(
            (qd.mean_busy - 330.0 / 210.0).abs() < 1e-12,
            "{}",
            qd.mean_busy
        );
        assert_eq!(qd.suggested(), 2);
        // A steady depth of 4: each request completes when the fourth after it arrives.
        let steady: Vec<_> = (0..1000u64).map(|i| io_c(i * 10, i * 10 + 40)).collect();
        let qd = recorded_queue_depth(steady, 1);
        assert_eq!(qd.max, 4);
        assert!((qd.mean_busy - 4.0).abs() < 0.02, "{}", qd.mean_busy);
        assert_eq!(qd.suggested(), 4);
        // No completions: the default.
        let none = [rec(0, Op::Read, 0, 4096)];
        let qd = recorded_queue_depth(none, 8);
        assert!(!qd.measured);
        assert_eq!((qd.max, qd.suggested()), (8, 8));
        assert_eq!(recorded_queue_depth([], 0).suggested(), 1);
        // Completions that never come do not grow memory without bound.
        let stuck = (0..(MAX_TRACKED_OUTSTANDING as u64 + 10)).map(|i| io_c(i, u64::MAX));
        let qd = recorded_queue_depth(stuck, 1);
        assert_eq!(qd.max as usize, MAX_TRACKED_OUTSTANDING);
    }

    #[test]
    fn storage_bench_metrics() {
        let ms = 1_000_000u64;
        // 10 I/Os: one at exactly 10 ms (not over), one at 50 ms, one at 150 ms.
        let mut lat = vec![100_000u64; 7];
        lat.extend([10 * ms, 50 * ms, 150 * ms]);
        let m = replay_metrics(&lat, 40_000_000, 2_000_000_000);
        assert_eq!(m.ios, 10);
        assert!((m.data_rate_mb_per_s - 20.0).abs() < 1e-9);
        let mean_us = (7.0 * 100.0 + 10_000.0 + 50_000.0 + 150_000.0) / 10.0;
        assert!((m.avg_latency_us - mean_us).abs() < 1e-9);
        assert!((m.pct_over_10ms - 20.0).abs() < 1e-9);
        assert!((m.pct_over_100ms - 10.0).abs() < 1e-9);
        // Empty and zero-time inputs give zeros, not NaN.
        let z = replay_metrics(&[], 0, 0);
        assert_eq!(
            (z.data_rate_mb_per_s, z.avg_latency_us, z.pct_over_10ms),
            (0.0, 0.0, 0.0)
        );
        // Accumulators merge to the same result.
        let (mut a, mut b) = (MetricsAcc::new(), MetricsAcc::new());
        for (i, &l) in lat.iter().enumerate() {
            let acc = if i % 2 == 0 { &mut a } else { &mut b };
            acc.add(4_000_000, l);
        }
        a.merge(&b);
        assert_eq!(a.finish(2_000_000_000), m);
    }

    #[test]
    fn busy_time_is_the_union() {
        let mut iv = vec![(50, 60), (0, 10), (5, 20), (30, 40), (35, 38), (70, 65)];
        assert_eq!(busy_time_ns(&mut iv), 20 + 10 + 10);
        assert_eq!(busy_time_ns(&mut []), 0);
    }
}
