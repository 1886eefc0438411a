//! `iolab trace analyze`: one streaming pass that summarises a trace per device and overall.
//!
//! Definitions (the review's, where it has one):
//! - size and queue-depth breakdowns count reads and writes only (AnandTech excludes TRIM
//!   and flush); the depth of a request is the number of data requests outstanding on its
//!   device when it arrives, itself included; it needs completion times, so it is reported
//!   only for formats that have them;
//! - `avg_qd_busy` is Little's law over the time the device had work (sum of service
//!   times / busy time); `avg_qd_at_arrival` is the mean of the per-request depths;
//! - a request is sequential when it starts where the previous data request on the same
//!   device ended;
//! - footprint is the number of distinct 4 KiB blocks touched by reads and writes;
//!   skew is the share of data requests that land in the hottest 1 % / 10 % of the touched
//!   1 MiB extents (a request counts for the extent holding its first byte).
//!
//! Memory grows with the touched extents and devices, not with the number of requests.

pub mod buckets;
mod extents;
pub mod html;
pub mod text;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::record::{Op, TraceRecord};
use crate::reorder::Reorder;
use buckets::*;
use extents::{ExtentTable, Slot};

/// Extent size for skew (and the unit of the footprint bitmap).
pub const EXTENT_BYTES: u64 = 1 << 20;
/// Footprint granularity.
pub const BLOCK_BYTES: u64 = 4096;
const BLOCKS_PER_EXTENT: u64 = EXTENT_BYTES / BLOCK_BYTES;

/// Requests tracked as outstanding per device, at most (see `Acc::per_device`).
const MAX_INFLIGHT: usize = 1 << 16;

/// Extent updates merged at a time (see `ExtentTable::merge_batch`).
const EXTENT_BATCH: usize = 64;

/// Most extents one request counts towards the footprint (64 GiB), so that a corrupt
/// length cannot stall the pass.
const MAX_TOUCH_EXTENTS: u64 = 1 << 16;

/// Sets bits `lo..=hi` of a small bitmap, a word at a time.
fn set_bits(words: &mut [u64], lo: usize, hi: usize) {
    for (w, word) in words.iter_mut().enumerate().take(hi / 64 + 1).skip(lo / 64) {
        let from = if w == lo / 64 { lo % 64 } else { 0 };
        let to = if w == hi / 64 { hi % 64 } else { 63 };
        let mask = (u64::MAX >> (63 - to)) & (u64::MAX << from);
        *word |= mask;
    }
}

/// Analysis settings.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Records held to put unsorted input in time order (0: trust the file order).
    pub reorder_window: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            reorder_window: crate::reorder::DEFAULT_WINDOW,
        }
    }
}

/// One row of a breakdown.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bucket {
    /// Bucket label (`4K`, `4-5`, …).
    pub label: String,
    /// Requests in the bucket.
    pub count: u64,
    /// Share of the breakdown's requests, in percent.
    pub pct: f64,
}

/// Summary of one device (or of the whole trace when `device` is `None`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceReport {
    /// Device number as the reader gives it; `None` for the total.
    pub device: Option<u32>,
    /// All requests (any operation).
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim/discard requests.
    pub trims: u64,
    /// Flush requests.
    pub flushes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes trimmed.
    pub bytes_trimmed: u64,
    /// Bytes read in GB (10^9).
    pub gb_read: f64,
    /// Bytes written in GB (10^9).
    pub gb_written: f64,
    /// Reads per write (by count); `None` without writes.
    pub read_write_ratio: Option<f64>,
    /// Reads as a percentage of reads + writes.
    pub read_pct: f64,
    /// IO-size breakdown of reads and writes (review buckets).
    pub size_breakdown: Vec<Bucket>,
    /// Power-of-two size distribution of reads and writes.
    pub size_distribution: Vec<Bucket>,
    /// Mean request size in bytes.
    pub mean_size_bytes: f64,
    /// Queue-depth breakdown (only when completion times exist).
    pub qd_breakdown: Option<Vec<Bucket>>,
    /// Mean depth seen at arrival.
    pub avg_qd_at_arrival: Option<f64>,
    /// Time-averaged depth while busy (Little's law).
    pub avg_qd_busy: Option<f64>,
    /// Service-time distribution (only when completion times exist).
    pub latency_distribution: Option<Vec<Bucket>>,
    /// Mean service time in µs.
    pub mean_latency_us: Option<f64>,
    /// Sequential reads and writes, in percent of reads + writes.
    pub sequential_pct: f64,
    /// Distribution of the gaps between consecutive arrivals.
    pub interarrival_distribution: Vec<Bucket>,
    /// Mean gap between arrivals in µs.
    pub mean_interarrival_us: Option<f64>,
    /// Time from first to last arrival in seconds.
    pub duration_s: f64,
    /// Distinct 4 KiB blocks touched, in bytes.
    pub footprint_bytes: u64,
    /// Highest end minus lowest start of data requests, in bytes.
    pub span_bytes: u64,
    /// Distinct 1 MiB extents touched.
    pub touched_extents: u64,
    /// Share of data requests to the hottest 1 % of touched extents, in percent.
    pub skew_top1_pct: f64,
    /// Share of data requests to the hottest 10 % of touched extents, in percent.
    pub skew_top10_pct: f64,
}

/// Result of an analysis.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// Bumped when fields change meaning.
    pub schema_version: u32,
    /// Input name.
    pub file: String,
    /// Input format.
    pub format: String,
    /// Bad lines skipped (with `skip_bad`).
    pub bad_records: u64,
    /// Records that arrived later than the reorder window could fix.
    pub out_of_order: u64,
    /// The whole trace.
    pub total: DeviceReport,
    /// One entry per device, in ascending device order.
    pub devices: Vec<DeviceReport>,
}

/// Counters shared by a device and the total.
#[derive(Clone)]
struct Acc {
    count: [u64; 4],
    bytes: [u64; 4],
    size: [u64; SIZE_LABELS.len()],
    log2: [u64; LOG2_BUCKETS],
    qd: [u64; QD_LABELS.len()],
    qd_sum: u64,
    qd_n: u64,
    lat: [u64; TIME_LABELS.len()],
    lat_sum: u128,
    lat_n: u64,
    inflight: BinaryHeap<Reverse<u64>>,
    busy: bool,
    busy_start: u64,
    busy_end: u64,
    busy_total: u128,
    seq: u64,
    last_end: Option<u64>,
    first_time: Option<u64>,
    max_time: u64,
    gaps: Gaps,
    min_off: u64,
    max_end: u64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            count: [0; 4],
            bytes: [0; 4],
            size: [0; SIZE_LABELS.len()],
            log2: [0; LOG2_BUCKETS],
            qd: [0; QD_LABELS.len()],
            qd_sum: 0,
            qd_n: 0,
            lat: [0; TIME_LABELS.len()],
            lat_sum: 0,
            lat_n: 0,
            inflight: BinaryHeap::new(),
            busy: false,
            busy_start: 0,
            busy_end: 0,
            busy_total: 0,
            seq: 0,
            last_end: None,
            first_time: None,
            max_time: 0,
            gaps: Gaps::default(),
            min_off: u64::MAX,
            max_end: 0,
        }
    }
}

/// Gaps between consecutive arrivals.
#[derive(Clone, Default)]
struct Gaps {
    last: Option<u64>,
    hist: [u64; TIME_LABELS.len()],
    sum: u128,
    n: u64,
}

impl Gaps {
    fn add(&mut self, t: u64) {
        if let Some(prev) = self.last {
            // Out-of-order records (late beyond the reorder window) have no gap.
            if let Some(gap) = t.checked_sub(prev) {
                self.hist[time_bucket(gap)] += 1;
                self.sum += u128::from(gap);
                self.n += 1;
            }
        }
        self.last = Some(t.max(self.last.unwrap_or(0)));
    }
}

fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Flush => 3,
    }
}

impl Acc {
    /// Counts, sizes, arrivals and latencies: the parts that add up across devices.
    fn common(&mut self, r: &TraceRecord) {
        let i = op_index(r.op);
        self.count[i] += 1;
        self.bytes[i] = self.bytes[i].saturating_add(r.len_bytes);
        self.gaps.add(r.time_ns);
        self.first_time.get_or_insert(r.time_ns);
        self.max_time = self.max_time.max(r.time_ns);
        if !r.op.moves_data() {
            return;
        }
        self.size[size_bucket(r.len_bytes)] += 1;
        self.log2[log2_bucket(r.len_bytes)] += 1;
        self.min_off = self.min_off.min(r.offset_bytes);
        self.max_end = self.max_end.max(r.end_bytes());
        if let Some(l) = r.latency_ns() {
            self.lat[time_bucket(l)] += 1;
            self.lat_sum += u128::from(l);
            self.lat_n += 1;
        }
    }

    /// Queue depth and sequentiality: only meaningful per device.
    fn per_device(&mut self, r: &TraceRecord) {
        if !r.op.moves_data() {
            return;
        }
        if self.last_end == Some(r.offset_bytes) {
            self.seq += 1;
        }
        self.last_end = Some(r.end_bytes());
        let Some(c) = r.completion_ns else {
            return;
        };
        let t = r.time_ns;
        while let Some(&Reverse(done)) = self.inflight.peek() {
            if done > t {
                break;
            }
            self.inflight.pop();
        }
        if self.inflight.is_empty() && self.busy {
            self.busy_total += u128::from(self.busy_end.saturating_sub(self.busy_start));
            self.busy = false;
        }
        if !self.busy {
            self.busy = true;
            self.busy_start = t;
            self.busy_end = t;
        }
        if self.inflight.len() >= MAX_INFLIGHT {
            // Completions far in the future (corrupt input) must not grow memory with the
            // trace: forget the earliest; depths this deep all land in the last bucket.
            self.inflight.pop();
        }
        let depth = self.inflight.len() as u64 + 1;
        self.qd[qd_bucket(depth)] += 1;
        self.qd_sum += depth;
        self.qd_n += 1;
        let c = c.max(t);
        self.busy_end = self.busy_end.max(c);
        self.inflight.push(Reverse(c));
    }

    fn close_busy(&mut self) {
        if self.busy {
            self.busy_total += u128::from(self.busy_end.saturating_sub(self.busy_start));
            self.busy = false;
        }
        self.inflight.clear();
    }

    /// Adds a device's counters into a total (gaps are kept by the caller: they are
    /// between arrivals on any device).
    fn merge(&mut self, d: &Acc) {
        let add = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        add(&mut self.count, &d.count);
        for (x, y) in self.bytes.iter_mut().zip(d.bytes) {
            *x = x.saturating_add(y);
        }
        add(&mut self.size, &d.size);
        add(&mut self.log2, &d.log2);
        add(&mut self.qd, &d.qd);
        add(&mut self.lat, &d.lat);
        self.qd_sum += d.qd_sum;
        self.qd_n += d.qd_n;
        self.lat_sum += d.lat_sum;
        self.lat_n += d.lat_n;
        self.busy_total += d.busy_total;
        self.seq += d.seq;
        self.first_time = match (self.first_time, d.first_time) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_time = self.max_time.max(d.max_time);
        self.min_off = self.min_off.min(d.min_off);
        self.max_end = self.max_end.max(d.max_end);
    }
}

/// Streaming analyser: feed records with [`Analyzer::add`], then call [`Analyzer::finish`].
/// Records must come in time order for depth, sequentiality and gaps to mean anything
/// (see [`analyze`], which puts them in order).
#[derive(Default)]
pub struct Analyzer {
    /// Gaps between arrivals on any device (everything else of the total is summed from
    /// the devices at the end, so each record is counted once).
    total_gaps: Gaps,
    devices: Vec<(u32, Acc)>,
    /// Device number → index in `devices` (traces of thousands of volumes, such as
    /// Tencent CBS or Alibaba, interleave them line by line).
    index: HashMap<u32, usize>,
    last_dev: usize,
    extents: ExtentTable,
    /// Updates to the extent touched last, not yet merged into `extents`: sequential
    /// requests hit the same extent again and again, and skipping the table lookup (a
    /// cache miss on large footprints) for them saves most of the footprint's cost.
    pending: Option<((u32, u64), Slot)>,
    /// Extent updates waiting to be merged into `extents` as one batch.
    batch: Vec<(u32, u64, Slot)>,
}

impl Analyzer {
    /// A fresh analyser.
    pub fn new() -> Self {
        Self::default()
    }

    fn device(&mut self, dev: u32) -> &mut Acc {
        // Most traces have one device or long runs of one: check the last one first.
        if self.devices.get(self.last_dev).is_none_or(|d| d.0 != dev) {
            let next = self.devices.len();
            self.last_dev = *self.index.entry(dev).or_insert(next);
            if self.last_dev == next {
                self.devices.push((dev, Acc::default()));
            }
        }
        &mut self.devices[self.last_dev].1
    }

    /// Adds one record.
    pub fn add(&mut self, r: &TraceRecord) {
        self.total_gaps.add(r.time_ns);
        let d = self.device(r.device);
        d.common(r);
        d.per_device(r);
        if r.op.moves_data() && r.len_bytes > 0 {
            self.touch(r);
        }
    }

    fn touch(&mut self, r: &TraceRecord) {
        let first = r.offset_bytes / BLOCK_BYTES;
        // Absurd lengths (corrupt input) must not stall the pass: count at most
        // MAX_TOUCH_EXTENTS extents of one request towards the footprint.
        let last = ((r.end_bytes() - 1) / BLOCK_BYTES)
            .min(first.saturating_add(MAX_TOUCH_EXTENTS * BLOCKS_PER_EXTENT - 1));
        let mut block = first;
        let mut counted = false;
        while block <= last {
            let ext = block / BLOCKS_PER_EXTENT;
            let key = (r.device, ext);
            if self.pending.as_ref().is_none_or(|p| p.0 != key) {
                self.flush_pending();
                self.pending = Some((key, Slot::default()));
            }
            let Some((_, e)) = self.pending.as_mut() else {
                break;
            };
            if !counted {
                e.ios += 1;
                counted = true;
            }
            let ext_last = last.min(ext.saturating_mul(BLOCKS_PER_EXTENT) + BLOCKS_PER_EXTENT - 1);
            set_bits(
                &mut e.blocks,
                (block % BLOCKS_PER_EXTENT) as usize,
                (ext_last % BLOCKS_PER_EXTENT) as usize,
            );
            if ext_last == u64::MAX {
                break;
            }
            block = ext_last + 1;
        }
    }

    fn flush_pending(&mut self) {
        if let Some(((dev, ext), p)) = self.pending.take() {
            self.batch.push((dev, ext, p));
            if self.batch.len() >= EXTENT_BATCH {
                self.extents.merge_batch(&self.batch);
                self.batch.clear();
            }
        }
    }

    /// Builds the report.
    pub fn finish(
        mut self,
        file: &str,
        format: &str,
        bad_records: u64,
        out_of_order: u64,
    ) -> Report {
        self.flush_pending();
        self.extents.merge_batch(&self.batch);
        self.batch.clear();
        self.devices.sort_by_key(|d| d.0);
        let mut ext_by_dev: std::collections::HashMap<u32, Vec<&Slot>> = Default::default();
        for (dev, e) in self.extents.iter() {
            ext_by_dev.entry(dev).or_default().push(e);
        }
        let mut devices = Vec::new();
        for (dev, acc) in &mut self.devices {
            acc.close_busy();
            let mut ext = ext_by_dev.remove(dev).unwrap_or_default();
            devices.push(summarise(Some(*dev), acc, &mut ext));
        }
        // With one device the total's extents are that device's: skip a second sort.
        let mut all: Vec<&Slot> = if self.devices.len() > 1 {
            self.extents.iter().map(|(_, e)| e).collect()
        } else {
            Vec::new()
        };
        let mut total = Acc {
            gaps: self.total_gaps.clone(),
            ..Acc::default()
        };
        for (_, acc) in &self.devices {
            total.merge(acc);
        }
        let mut total = summarise(None, &total, &mut all);
        if let [only] = devices.as_slice() {
            total.footprint_bytes = only.footprint_bytes;
            total.touched_extents = only.touched_extents;
            total.skew_top1_pct = only.skew_top1_pct;
            total.skew_top10_pct = only.skew_top10_pct;
        }
        Report {
            schema_version: 1,
            file: file.to_string(),
            format: format.to_string(),
            bad_records,
            out_of_order,
            total,
            devices,
        }
    }
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

fn breakdown<S: AsRef<str>>(labels: impl IntoIterator<Item = S>, counts: &[u64]) -> Vec<Bucket> {
    let n: u64 = counts.iter().sum();
    labels
        .into_iter()
        .zip(counts)
        .map(|(l, &c)| Bucket {
            label: l.as_ref().to_string(),
            count: c,
            pct: pct(c, n),
        })
        .collect()
}

fn summarise(device: Option<u32>, a: &Acc, extents: &mut [&Slot]) -> DeviceReport {
    let data = a.count[0] + a.count[1];
    let requests: u64 = a.count.iter().sum();
    extents.sort_unstable_by_key(|e| Reverse(e.ios));
    let touched = extents.len() as u64;
    let top = |share: u64| -> u64 {
        let k = touched.saturating_mul(share).div_ceil(100) as usize;
        extents.iter().take(k).map(|e| e.ios).sum()
    };
    let ext_ios: u64 = extents.iter().map(|e| e.ios).sum();
    let blocks: u64 = extents
        .iter()
        .map(|e| {
            e.blocks
                .iter()
                .map(|w| u64::from(w.count_ones()))
                .sum::<u64>()
        })
        .sum();
    let has_qd = a.qd_n > 0;
    DeviceReport {
        device,
        requests,
        reads: a.count[0],
        writes: a.count[1],
        trims: a.count[2],
        flushes: a.count[3],
        bytes_read: a.bytes[0],
        bytes_written: a.bytes[1],
        bytes_trimmed: a.bytes[2],
        gb_read: a.bytes[0] as f64 / 1e9,
        gb_written: a.bytes[1] as f64 / 1e9,
        read_write_ratio: (a.count[1] > 0).then(|| a.count[0] as f64 / a.count[1] as f64),
        read_pct: pct(a.count[0], data),
        size_breakdown: breakdown(SIZE_LABELS, &a.size),
        size_distribution: breakdown((0..LOG2_BUCKETS).map(log2_label), &a.log2),
        mean_size_bytes: if data == 0 {
            0.0
        } else {
            (a.bytes[0] as f64 + a.bytes[1] as f64) / data as f64
        },
        qd_breakdown: has_qd.then(|| breakdown(QD_LABELS, &a.qd)),
        avg_qd_at_arrival: has_qd.then(|| a.qd_sum as f64 / a.qd_n as f64),
        avg_qd_busy: (has_qd && a.busy_total > 0).then(|| a.lat_sum as f64 / a.busy_total as f64),
        latency_distribution: (a.lat_n > 0).then(|| breakdown(TIME_LABELS, &a.lat)),
        mean_latency_us: (a.lat_n > 0).then(|| a.lat_sum as f64 / a.lat_n as f64 / 1e3),
        sequential_pct: pct(a.seq, data),
        interarrival_distribution: breakdown(TIME_LABELS, &a.gaps.hist),
        mean_interarrival_us: (a.gaps.n > 0).then(|| a.gaps.sum as f64 / a.gaps.n as f64 / 1e3),
        duration_s: a
            .first_time
            .map_or(0.0, |f| a.max_time.saturating_sub(f) as f64 / 1e9),
        footprint_bytes: blocks * BLOCK_BYTES,
        span_bytes: a.max_end.saturating_sub(a.min_off.min(a.max_end)),
        touched_extents: touched,
        skew_top1_pct: pct(top(1), ext_ios),
        skew_top10_pct: pct(top(10), ext_ios),
    }
}

/// Analyses a stream of records, reordering it by time with `opts.reorder_window`.
/// Returns the report with `file`, `format` and the out-of-order count filled in;
/// the caller adds the reader's bad-line count.
pub fn analyze<I>(records: I, file: &str, format: &str, opts: &AnalyzeOptions) -> Result<Report>
where
    I: Iterator<Item = Result<TraceRecord>>,
{
    let mut a = Analyzer::new();
    if opts.reorder_window == 0 {
        // File order trusted: still counted when it is not time order, so the report warns
        // (a shuffled trace otherwise gave a 0.03 s "duration" with nothing said).
        let (mut latest, mut late) = (0u64, 0u64);
        for r in records {
            let r = r?;
            if r.time_ns < latest {
                late += 1;
            }
            latest = latest.max(r.time_ns);
            a.add(&r);
        }
        return Ok(a.finish(file, format, 0, late));
    }
    let mut sorted = Reorder::new(records, opts.reorder_window);
    for r in sorted.by_ref() {
        a.add(&r?);
    }
    let late = sorted.late();
    Ok(a.finish(file, format, 0, late))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t: u64, c: u64, off: u64, len: u64) -> TraceRecord {
        TraceRecord {
            time_ns: t,
            device: 0,
            op: Op::Read,
            offset_bytes: off,
            len_bytes: len,
            completion_ns: Some(c),
        }
    }

    #[test]
    fn out_of_order_records_are_counted_also_when_the_file_order_is_trusted() {
        let recs = [
            io(300, 310, 0, 512),
            io(100, 110, 512, 512),
            io(200, 210, 0, 512),
        ];
        let run = |window| {
            let opts = AnalyzeOptions {
                reorder_window: window,
            };
            analyze(recs.iter().cloned().map(Ok), "t", "msr", &opts)
                .unwrap()
                .out_of_order
        };
        assert_eq!(
            run(0),
            2,
            "trusted order, two records earlier than one before them"
        );
        assert_eq!(run(16), 0, "a window that holds them all sorts them");
    }

    #[test]
    fn thousands_of_interleaved_devices_are_kept_apart() {
        // Like a Tencent CBS hour: volumes interleaved line by line.
        let mut a = Analyzer::new();
        for i in 0..50_000u64 {
            let dev = (i * 7919 % 5000) as u32;
            a.add(&TraceRecord {
                time_ns: i * 1000,
                device: dev,
                op: if dev % 2 == 0 { Op::Read } else { Op::Write },
                offset_bytes: (i % 10) * 4096,
                len_bytes: 4096,
                completion_ns: None,
            });
        }
        let rep = a.finish("t", "test", 0, 0);
        assert_eq!(rep.devices.len(), 5000);
        assert!(rep.devices.windows(2).all(|w| w[0].device < w[1].device));
        assert!(rep.devices.iter().all(|d| d.requests == 10));
        assert!(rep
            .devices
            .iter()
            .all(|d| (d.reads == 10) == (d.device.unwrap() % 2 == 0)));
        assert_eq!(rep.total.requests, 50_000);
        assert_eq!(rep.total.reads, 25_000);
    }

    #[test]
    fn completions_that_never_come_do_not_grow_memory() {
        let mut a = Analyzer::new();
        for i in 0..(MAX_INFLIGHT as u64 + 100) {
            a.add(&io(i, u64::MAX, i * 4096, 4096));
        }
        assert!(a.devices[0].1.inflight.len() <= MAX_INFLIGHT);
        let rep = a.finish("t", "test", 0, 0);
        let qd = rep.total.qd_breakdown.unwrap();
        assert_eq!(qd[7].count, MAX_INFLIGHT as u64 + 100 - 32);
    }

    #[test]
    fn bit_ranges() {
        let mut w = [0u64; 4];
        set_bits(&mut w, 3, 3);
        assert_eq!(w, [8, 0, 0, 0]);
        set_bits(&mut w, 60, 130);
        assert_eq!(
            w[0].count_ones() + w[1].count_ones() + w[2].count_ones(),
            1 + 71
        );
        set_bits(&mut w, 0, 255);
        assert!(w.iter().all(|x| *x == u64::MAX));
    }

    #[test]
    fn depth_sequential_and_footprint() {
        // Three overlapping requests then one alone; second continues the first.
        let recs = [
            io(0, 100, 0, 4096),
            io(10, 50, 4096, 4096),
            io(20, 200, 1 << 30, 8192),
            io(300, 310, 0, 4096),
        ];
        let mut a = Analyzer::new();
        for r in &recs {
            a.add(r);
        }
        let rep = a.finish("t", "test", 0, 0);
        let qd: Vec<u64> = rep
            .total
            .qd_breakdown
            .unwrap()
            .iter()
            .map(|b| b.count)
            .collect();
        assert_eq!(qd, vec![2, 1, 1, 0, 0, 0, 0, 0]);
        assert_eq!(rep.total.sequential_pct, 25.0);
        assert_eq!(rep.total.footprint_bytes, 4 * 4096);
        assert_eq!(rep.total.touched_extents, 2);
        // Busy 0..200 and 300..310: latency sum 100+40+180+10 = 330 over 210 ns.
        let busy = rep.total.avg_qd_busy.unwrap();
        assert!((busy - 330.0 / 210.0).abs() < 1e-9, "{busy}");
    }
}
