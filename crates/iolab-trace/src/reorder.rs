//! Putting records in time order, for traces that are not sorted (Tencent, SYSTOR, merged
//! per-CPU blktrace files) and for consumers that need issue order (analysis, replay).
//!
//! [`Reorder`] is streaming: it holds at most `window` records and emits the earliest, so
//! any record displaced by fewer than `window` positions comes out in order. Records that
//! arrive later than that are emitted anyway and counted in [`Reorder::late`]. Already
//! sorted input costs one deque push and pop per record (no heap work).
//! [`sort_all`] sorts a whole trace in memory, for traces that fit.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::Result;
use crate::record::TraceRecord;

/// Default window of [`Reorder`]: 64 Ki records (about 3 MiB).
pub const DEFAULT_WINDOW: usize = 1 << 16;

/// Key that sorts by time, then by input position (so equal times keep file order).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key(u64, u64);

struct Held {
    key: Key,
    rec: TraceRecord,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Streaming re-orderer over any iterator of records (see the module docs).
pub struct Reorder<I> {
    input: I,
    window: usize,
    /// Records that arrived in order (times non-decreasing): the common, cheap path.
    run: VecDeque<Held>,
    /// Records that arrived out of order.
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    last_out: Option<u64>,
    late: u64,
    exhausted: bool,
}

impl<I: Iterator<Item = Result<TraceRecord>>> Reorder<I> {
    /// Wraps `input`; `window` is clamped to at least 1.
    pub fn new(input: I, window: usize) -> Self {
        Reorder {
            input,
            window: window.max(1),
            run: VecDeque::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            last_out: None,
            late: 0,
            exhausted: false,
        }
    }

    /// Records emitted earlier in time than a record already emitted (the window was too
    /// small for them). Zero means the output is sorted.
    pub fn late(&self) -> u64 {
        self.late
    }

    fn held(&self) -> usize {
        self.run.len() + self.heap.len()
    }

    fn push(&mut self, rec: TraceRecord) {
        let h = Held {
            key: Key(rec.time_ns, self.seq),
            rec,
        };
        self.seq += 1;
        if self.run.back().is_none_or(|b| b.key.0 <= rec.time_ns) {
            self.run.push_back(h);
        } else {
            self.heap.push(Reverse(h));
        }
    }

    fn pop(&mut self) -> Option<TraceRecord> {
        let from_heap = match (self.run.front(), self.heap.peek()) {
            (None, None) => return None,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some(a), Some(Reverse(b))) => b.key < a.key,
        };
        let rec = if from_heap {
            self.heap.pop().map(|Reverse(h)| h.rec)
        } else {
            self.run.pop_front().map(|h| h.rec)
        }?;
        if self.last_out.is_some_and(|t| rec.time_ns < t) {
            self.late += 1;
        } else {
            self.last_out = Some(rec.time_ns);
        }
        Some(rec)
    }
}

impl<I: Iterator<Item = Result<TraceRecord>>> Iterator for Reorder<I> {
    type Item = Result<TraceRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        while !self.exhausted && self.held() < self.window {
            match self.input.next() {
                Some(Ok(r)) => self.push(r),
                Some(Err(e)) => return Some(Err(e)),
                None => self.exhausted = true,
            }
        }
        self.pop().map(Ok)
    }
}

/// Reads a whole trace and sorts it by time (stable: equal times keep file order).
/// Memory grows with the trace; use [`Reorder`] for traces that do not fit.
pub fn sort_all<I: IntoIterator<Item = Result<TraceRecord>>>(input: I) -> Result<Vec<TraceRecord>> {
    let mut v = input.into_iter().collect::<Result<Vec<_>>>()?;
    v.sort_by_key(|r| r.time_ns);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Op;

    fn rec(t: u64) -> TraceRecord {
        TraceRecord {
            time_ns: t,
            device: 0,
            op: Op::Read,
            offset_bytes: t,
            len_bytes: 512,
            completion_ns: None,
        }
    }

    #[test]
    fn sorts_within_the_window_and_counts_the_rest() {
        let times = [5u64, 1, 3, 2, 9, 7, 8, 6, 4, 10];
        let it = times.iter().map(|&t| Ok(rec(t)));
        let mut r = Reorder::new(it, 16);
        let out: Vec<u64> = r.by_ref().map(|x| x.unwrap().time_ns).collect();
        assert_eq!(out, (1..=10).collect::<Vec<_>>());
        assert_eq!(r.late(), 0);

        let it = times.iter().map(|&t| Ok(rec(t)));
        let mut small = Reorder::new(it, 2);
        let out: Vec<u64> = small.by_ref().map(|x| x.unwrap().time_ns).collect();
        assert_eq!(out.len(), 10);
        assert!(small.late() > 0);
    }

    #[test]
    fn equal_times_keep_input_order() {
        let recs: Vec<_> = (0..5)
            .map(|i| TraceRecord {
                offset_bytes: i,
                ..rec(7)
            })
            .collect();
        let out: Vec<u64> = Reorder::new(recs.iter().copied().map(Ok), 3)
            .map(|r| r.unwrap().offset_bytes)
            .collect();
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
        assert_eq!(sort_all(recs.iter().copied().map(Ok)).unwrap(), recs);
    }
}
