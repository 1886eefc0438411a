//! The queue depth a trace was recorded at, from its completion times: what an
//! as-fast-as-possible replay keeps outstanding.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::record::TraceRecord;

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
