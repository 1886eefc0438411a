//! The one record type every reader produces and every writer consumes.

use serde::{Deserialize, Serialize};

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Reads `len_bytes` at `offset_bytes`.
    Read,
    /// Writes `len_bytes` at `offset_bytes`.
    Write,
    /// Discards (TRIM/UNMAP/DISCARD) a range.
    Trim,
    /// Flushes the device cache; offset and length are usually 0.
    Flush,
}

impl Op {
    /// Short lower-case name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }

    /// True for reads and writes, the operations that move data.
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// One block request, in the units every format is converted to (nanoseconds and bytes).
///
/// Times are kept as the file gives them (converted to ns), not rebased to zero, so
/// a record written back to its own format is unchanged; consumers use differences.
/// A replay driver should subtract the first record's `time_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceRecord {
    /// When the request was issued (or queued, or completed: see the reader), in ns.
    pub time_ns: u64,
    /// Device or volume number; its meaning depends on the format (disk number, ASU,
    /// volume ID, `dev_t` as `major << 20 | minor`, or the order in which a fio file appeared).
    pub device: u32,
    /// What the request does.
    pub op: Op,
    /// Start of the range, in bytes from the start of the device.
    pub offset_bytes: u64,
    /// Length of the range in bytes (0 for most flushes).
    pub len_bytes: u64,
    /// When the request completed, in ns on the same clock as `time_ns`, where the format
    /// records it (MSR and SYSTOR response times, blktrace issue/complete pairs).
    pub completion_ns: Option<u64>,
}

/// The longest read or write a record may ask for: 1 GiB. No block device takes a request
/// anywhere near it (Linux splits at `max_hw_sectors_kb`, a few MiB; NVMe's MDTS and SCSI's
/// transfer limits are of that order), so a longer one is a corrupt field or a wrong unit (a
/// 2^64 − 1 size was replayed as a 64 MiB read). Trims and flushes are not held to it: a
/// discard of a whole device is one record.
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

impl TraceRecord {
    /// Why the record's size cannot be a real read or write (see [`MAX_REQUEST_BYTES`]).
    pub(crate) fn check_len(&self) -> Result<(), String> {
        if self.op.moves_data() && self.len_bytes > MAX_REQUEST_BYTES {
            return Err(format!(
                "a {} of {} bytes is longer than any block request (at most {} GiB here): the \
                 size field is corrupt or in another unit",
                self.op.name(),
                self.len_bytes,
                MAX_REQUEST_BYTES >> 30
            ));
        }
        Ok(())
    }

    /// End of the range (`offset + len`), saturating rather than wrapping on absurd input.
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes.saturating_add(self.len_bytes)
    }

    /// Service time in ns when the completion is known and not before the issue.
    pub fn latency_ns(&self) -> Option<u64> {
        self.completion_ns.and_then(|c| c.checked_sub(self.time_ns))
    }
}
