//! A target that completes every request at once without touching anything: measures the
//! driver's own cost, and serves the seam's contract tests.

use crate::target::{Capabilities, Completion, IoReq, Target, TargetKind};
use std::io;

/// EINVAL (Linux value), what a device answers for an I/O past its end.
const EINVAL: i64 = 22;

/// Completes every request at once without touching anything: measures the driver's own cost.
pub struct NullTarget {
    caps: Capabilities,
    /// Each slot's buffer, back to back (nothing is read or written through them, so they
    /// need no alignment).
    bufs: Vec<u8>,
    slot_bytes: usize,
    done: Vec<Completion>,
}

impl NullTarget {
    /// A null target of `size_bytes`.
    pub fn new(size_bytes: u64) -> Self {
        NullTarget {
            caps: Capabilities {
                kind: TargetKind::Null,
                engine: "null",
                size_bytes,
                logical_block_bytes: 512,
                needs_data: false,
                modelled: false,
            },
            bufs: Vec::new(),
            slot_bytes: 0,
            done: Vec::new(),
        }
    }
}

impl Target for NullTarget {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }
    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
        // A page per slot whatever the block, as the engine's page-rounded slot buffers of at
        // most a page each gave: no data goes anywhere.
        let _ = slot_bytes;
        self.slot_bytes = 4096;
        self.bufs = vec![0; slots as usize * self.slot_bytes];
        Ok(())
    }
    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        let start = tag as usize * self.slot_bytes;
        &mut self.bufs[start..start + self.slot_bytes]
    }
    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        let size = self.caps.size_bytes;
        self.done.extend(reqs.iter().map(|r| Completion {
            tag: r.tag,
            // Past the end fails as on a device, so the null target keeps the seam's contract.
            result: if r.offset + u64::from(r.len) > size {
                -EINVAL
            } else {
                i64::from(r.len)
            },
            done_ns: None,
        }));
        Ok(())
    }
    fn reap(
        &mut self,
        _min: usize,
        _timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
