//! The seam between the workload and whatever serves it: a real file or device, or a model.
//!
//! Everything above this trait (queue keeping, rate limits, ramp, statistics, suites) is shared
//! and cannot tell a real target from a simulated one. Modelled on fio's engine ops table, kept
//! small: capabilities, buffers, submit, reap.

use iolab_core::job::Direction;
use std::io;

/// One I/O handed to a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoReq {
    /// Buffer slot (`0..slots` from [`Target::prepare`]); returned in the completion.
    pub tag: u32,
    /// Read or write.
    pub dir: Direction,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes (at most the slot size).
    pub len: u32,
    /// I/O priority (`ioprio`: class << 13 | hint << 3 | level; 0: the thread's own).
    pub ioprio: u16,
}

/// A finished I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The request's tag.
    pub tag: u32,
    /// Bytes transferred, or `-errno`.
    pub result: i64,
    /// Completion time on the target's clock when the target knows it exactly (a model does);
    /// `None` lets the driver stamp it from its clock.
    pub done_ns: Option<u64>,
}

/// What kind of thing a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file.
    File,
    /// A block device.
    Block,
    /// A modelled drive.
    Sim,
    /// Discards everything (engine self-test).
    Null,
}

impl TargetKind {
    /// Lower-case name used in results.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Block => "block",
            TargetKind::Sim => "sim",
            TargetKind::Null => "null",
        }
    }
}

/// Fixed facts about an open target.
#[derive(Clone, Debug, PartialEq)]
pub struct Capabilities {
    /// What it is.
    pub kind: TargetKind,
    /// Engine name for results (`io_uring`, `psync`, `sim`, `null`).
    pub engine: &'static str,
    /// Usable size in bytes.
    pub size_bytes: u64,
    /// Logical block size: O_DIRECT offsets and lengths must be multiples of it.
    pub logical_block_bytes: u64,
    /// Whether the content of written buffers matters (false lets the driver skip filling them).
    pub needs_data: bool,
    /// Whether results are modelled rather than measured: the model's one fact the seam carries,
    /// typed (what the model did goes into the result from the model's own setup).
    pub modelled: bool,
}

/// A file, device or model that serves I/O.
///
/// Protocol: [`prepare`](Target::prepare) once, then any interleaving of
/// [`submit`](Target::submit) and [`reap`](Target::reap). A target may hold submitted requests
/// until the next `reap` (io_uring batches them into one system call there).
pub trait Target {
    /// The target's fixed facts.
    fn capabilities(&self) -> &Capabilities;

    /// Allocates `slots` buffers of `slot_bytes` each; requests use tags `0..slots`.
    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()>;

    /// The buffer of slot `tag`, for the driver to fill before a write.
    fn buffer_mut(&mut self, tag: u32) -> &mut [u8];

    /// Queues requests; each tag must not be in flight already.
    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()>;

    /// Pushes queued requests to the device and appends completions to `out`, waiting until at
    /// least `min` have arrived or `timeout_ns` has passed (`None`: no timeout).
    fn reap(
        &mut self,
        min: usize,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()>;

    /// A hint that a request at `offset` will be submitted soon: a model starts fetching its
    /// mapping so that the submission does not wait on memory. Real targets ignore it.
    fn upcoming(&mut self, offset: u64) {
        let _ = offset;
    }

    /// Whether the target can hand queued requests to the device without waiting
    /// ([`Target::push`]), so that spare buffers pay: the driver then fills the next writes'
    /// buffers while the device works, instead of between a completion and the next
    /// submission.
    fn fills_ahead(&self) -> bool {
        false
    }

    /// Hands the queued requests to the device now, without waiting for completions (only
    /// called where [`Target::fills_ahead`]).
    fn push(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Requests per worker the driver should plan ahead and announce with
    /// [`Target::upcoming`]: more than one only where the hint pays.
    fn plan_ahead(&self) -> usize {
        1
    }

    /// How the driver starts loading memory it will soon touch (a verifier's claim word): the
    /// host's prefetch instruction, which a real target's engine supplies. None by default.
    fn cache_hint(&self) -> crate::hint::CacheHint {
        crate::hint::CacheHint::NONE
    }

    /// Makes what was written stable (fsync; fdatasync where `data_only`), once every write
    /// submitted has completed. Targets without a page cache or a file have nothing to do.
    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        let _ = data_only;
        Ok(())
    }
}

impl<T: Target + ?Sized> Target for Box<T> {
    fn capabilities(&self) -> &Capabilities {
        (**self).capabilities()
    }
    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
        (**self).prepare(slots, slot_bytes)
    }
    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        (**self).buffer_mut(tag)
    }
    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        (**self).submit(reqs)
    }
    fn reap(
        &mut self,
        min: usize,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        (**self).reap(min, timeout_ns, out)
    }
    fn fills_ahead(&self) -> bool {
        (**self).fills_ahead()
    }
    fn push(&mut self) -> io::Result<()> {
        (**self).push()
    }
    fn upcoming(&mut self, offset: u64) {
        (**self).upcoming(offset)
    }
    fn plan_ahead(&self) -> usize {
        (**self).plan_ahead()
    }
    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        (**self).sync(data_only)
    }
    fn cache_hint(&self) -> crate::hint::CacheHint {
        (**self).cache_hint()
    }
}
