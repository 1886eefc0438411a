//! Pairs issue (D) events with their completions (C) so records carry `completion_ns`,
//! while handing records out in issue order.
//!
//! Memory is bounded by the requests in flight: a request whose completion never comes
//! (the trace stopped, or the C event was lost) is released without one once more than
//! [`MAX_PENDING`] requests wait behind it.

use std::collections::{HashMap, VecDeque};

use crate::record::TraceRecord;

/// Requests held back waiting for their completion before the oldest is given up on.
pub(crate) const MAX_PENDING: usize = 1 << 16;

#[derive(Default)]
pub(crate) struct Pairer {
    /// Issued requests in issue order; `completion_ns` is set once complete.
    pending: VecDeque<TraceRecord>,
    /// Sequence number of `pending[0]`.
    base: u64,
    /// (device, sector) → sequence numbers of incomplete requests, oldest first.
    open: HashMap<(u32, u64), VecDeque<u64>>,
}

impl Pairer {
    pub(crate) fn issue(&mut self, rec: TraceRecord) {
        let seq = self.base + self.pending.len() as u64;
        self.open
            .entry((rec.device, rec.offset_bytes))
            .or_default()
            .push_back(seq);
        self.pending.push_back(rec);
    }

    /// Marks the oldest open request at (device, offset) complete. A completion with no
    /// matching issue (the trace began mid-flight) is ignored.
    pub(crate) fn complete(&mut self, device: u32, offset: u64, time_ns: u64) {
        let key = (device, offset);
        let Some(q) = self.open.get_mut(&key) else {
            return;
        };
        let seq = q.pop_front();
        if q.is_empty() {
            self.open.remove(&key);
        }
        if let Some(seq) = seq {
            if let Some(i) = seq.checked_sub(self.base) {
                if let Some(r) = self.pending.get_mut(i as usize) {
                    r.completion_ns = Some(time_ns.max(r.time_ns));
                }
            }
        }
    }

    /// The oldest request if it is complete, if too many wait behind it, or at `eof`.
    pub(crate) fn take_ready(&mut self, eof: bool) -> Option<TraceRecord> {
        let front = self.pending.front()?;
        if front.completion_ns.is_none() && !eof && self.pending.len() <= MAX_PENDING {
            return None;
        }
        let rec = self.pending.pop_front()?;
        let seq = self.base;
        self.base += 1;
        if rec.completion_ns.is_none() {
            // Forget the open entry so a late completion cannot land on a later request.
            let key = (rec.device, rec.offset_bytes);
            if let Some(q) = self.open.get_mut(&key) {
                q.retain(|&s| s != seq);
                if q.is_empty() {
                    self.open.remove(&key);
                }
            }
        }
        Some(rec)
    }
}
