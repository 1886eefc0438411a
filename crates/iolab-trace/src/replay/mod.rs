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

use serde::{Deserialize, Serialize};

use crate::error::{Result, TraceError};
use crate::record::{Op, TraceRecord};

mod depth;
mod metrics;
#[cfg(test)]
mod tests;

pub use depth::{recorded_queue_depth, RecordedQd, MAX_TRACKED_OUTSTANDING};
pub use metrics::{busy_time_ns, replay_metrics, MetricsAcc, ReplayMetrics};

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
