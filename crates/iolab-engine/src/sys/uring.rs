//! The io_uring target: one ring per thread, the file registered (fixed file 0), every slot in
//! one registered buffer region, submissions batched into the reap's `io_uring_enter`, and
//! completions read from the shared CQ without a system call.
//!
//! One `io_uring_enter` hands over at most [`UringTarget::with_submit_batch`] requests: where the
//! device's request queue is full, the kernel may block inside the call for every request it
//! issues (a file's direct I/O waits for a block-layer tag), and completions cannot be reaped
//! meanwhile. Handed over in one call, 4096 requests kept completions unstamped for hundreds of
//! milliseconds, and those that finished before the end of a timed run were not counted.
//!
//! Direct I/O that the device can queue whole goes out unplugged: at most
//! [`UNPLUGGED_PER_ENTER`] requests per `io_uring_enter`. Handed three or more at a time, the
//! kernel holds them in a block plug until the call ends and then issues them together; on a
//! virtio disk under mq-deadline, 4K random reads at QD32 then ran in lock-step waves (the
//! device completing ~31 requests at once, the ring resubmitting ~31 at once: the block layer's
//! `block_plug`/`block_unplug` trace events showed 2,612 plugs for 28,863 requests) and reached
//! 0.83x fio's IOPS, which submits one request per call and so never plugs. Unplugged, the same
//! job matched fio. Buffered I/O (served from the page cache, nothing to plug) and a device
//! queue overrun (see below) keep whole batches, which cost fewer system calls.
//!
//! Setup tries the cheapest flags first (`SINGLE_ISSUER | DEFER_TASKRUN`, then `COOP_TASKRUN`)
//! and falls back on EINVAL, as fio does; registration failures fall back to unregistered ops.
//!
//! The ring's own descriptor is registered too (`IORING_REGISTER_RING_FDS`), as fio's
//! `t/io_uring` does: every `io_uring_enter` then names the ring by its index in the thread's
//! table, and the kernel skips looking the descriptor up and counting a reference to it
//! (`fget`/`fput`, which a process with more than one thread pays atomically). At QD1 on a virtio
//! disk those two were 1.7 % of the run's CPU samples, about 0.4 µs per request.

use crate::buf::SlotBuffers;
use crate::target::{Capabilities, Completion, IoReq, Target, TargetKind};
use io_uring::{opcode, types, EnterFlags, IoUring};
use iolab_core::job::Direction;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// io_uring on one open file or device.
pub struct UringTarget {
    // Field order matters for drop: the ring goes before the buffers it points into.
    ring: Option<IoUring>,
    bufs: SlotBuffers,
    file: File,
    caps: Capabilities,
    fixed_file: bool,
    fixed_bufs: bool,
    /// SQE flags for every request: IOSQE_ASYNC where the file cannot do non-blocking I/O.
    sqe_flags: io_uring::squeue::Flags,
    queued: usize,
    /// Most requests handed to the kernel per `io_uring_enter`.
    submit_batch: usize,
    /// Hand requests over at most [`UNPLUGGED_PER_ENTER`] per call (see the module's
    /// documentation).
    unplugged: bool,
    /// See [`UringTarget::filling_ahead`].
    fills_ahead: bool,
    /// Flags the ring was set up with, for results.
    pub setup: &'static str,
    /// Per tag, the length and offset of the TRIM in flight on it (length 0: none): a TRIM
    /// completes with 0, which becomes its length, as a read's or write's byte count.
    trims: Vec<(u32, u64)>,
    /// How many of `trims` are in flight: a reap looks them up only then, so reads and writes
    /// pay one comparison per reap.
    trims_in_flight: usize,
    /// How `io_uring_enter` names the ring: see [`RingRef`].
    ring_ref: RingRef,
}

impl UringTarget {
    /// Wraps an open file; the ring is created in [`Target::prepare`] once the depth is known.
    /// `blocks`: the file cannot do non-blocking I/O (see [`crate::open::blocks_io_uring`]), so
    /// every request goes straight to io-wq. Fails when io_uring is unavailable.
    pub fn new(file: File, mut caps: Capabilities, blocks: bool) -> io::Result<Self> {
        // Probe now, so a kernel without io_uring is detected before the run starts.
        drop(IoUring::new(2)?);
        caps.engine = "io_uring";
        let sqe_flags = if blocks {
            io_uring::squeue::Flags::ASYNC
        } else {
            io_uring::squeue::Flags::empty()
        };
        Ok(UringTarget {
            ring: None,
            bufs: SlotBuffers::default(),
            file,
            caps,
            fixed_file: false,
            fixed_bufs: false,
            sqe_flags,
            queued: 0,
            submit_batch: usize::MAX,
            unplugged: false,
            fills_ahead: false,
            setup: "",
            trims: Vec::new(),
            trims_in_flight: 0,
            ring_ref: RingRef::default(),
        })
    }

    /// Hands the kernel at most `n` (at least 1) requests per system call, and reaps what has
    /// completed between two such calls (see the module's documentation). Unlimited by default.
    pub fn with_submit_batch(mut self, n: usize) -> Self {
        self.submit_batch = n.max(1);
        self
    }

    /// Lets the driver fill spare buffers while the device works ([`Target::fills_ahead`]):
    /// for direct I/O, whose requests wait for a device. Buffered I/O is mostly a copy into
    /// the page cache, done inside the call that hands it over, so there is nothing to
    /// overlap and a push would only add a system call per turn. Off by default.
    pub fn filling_ahead(mut self, on: bool) -> Self {
        self.fills_ahead = on;
        self
    }

    /// Hands requests to the kernel at most [`UNPLUGGED_PER_ENTER`] per system call, so that
    /// they reach the device one by one as fio's do, not in plugged batches (see the module's
    /// documentation). Off by default.
    pub fn unplugged(mut self, on: bool) -> Self {
        self.unplugged = on;
        self
    }

    fn build_ring(entries: u32) -> io::Result<(IoUring, &'static str)> {
        if let Ok(r) = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_clamp()
            .build(entries)
        {
            return Ok((r, "single_issuer+defer_taskrun"));
        }
        if let Ok(r) = IoUring::builder()
            .setup_coop_taskrun()
            .setup_clamp()
            .build(entries)
        {
            return Ok((r, "coop_taskrun"));
        }
        Ok((IoUring::builder().setup_clamp().build(entries)?, "plain"))
    }

    fn ring(&mut self) -> &mut IoUring {
        self.ring
            .as_mut()
            .expect("prepare() creates the ring before any I/O")
    }
}

impl Target for UringTarget {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }
    fn cache_hint(&self) -> iolab_drive::hint::CacheHint {
        super::CACHE_HINT
    }

    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
        let entries = slots.next_power_of_two().max(8);
        let (ring, setup) = Self::build_ring(entries)?;
        self.setup = setup;
        self.ring_ref.unregister(self.ring.as_ref());
        self.ring = None;
        self.bufs = SlotBuffers::try_new(slots as usize, slot_bytes)?;
        self.trims = vec![(0, 0); slots as usize];
        self.trims_in_flight = 0;
        self.fixed_file = ring
            .submitter()
            .register_files(&[self.file.as_raw_fd()])
            .is_ok();
        let region = self.bufs.region_mut();
        let iov = libc::iovec {
            iov_base: region.as_mut_ptr().cast(),
            iov_len: region.len(),
        };
        // SAFETY: the region lives in `self.bufs`, which is neither moved nor freed while the
        // ring exists (the ring field drops first and `prepare` replaces both together).
        self.fixed_bufs = unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok();
        self.ring_ref = RingRef::register(&ring);
        self.ring = Some(ring);
        Ok(())
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        if data_only {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        }
    }

    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        self.bufs.slot_mut(tag)
    }

    fn fills_ahead(&self) -> bool {
        self.fills_ahead
    }

    fn push(&mut self) -> io::Result<()> {
        // Handed over as a reap would, none waited for: unplugged (the device queues them all),
        // a couple per call; otherwise one batch, and what is beyond it goes with the reap,
        // which stops handing over once something completed.
        let (per_call, calls) = if self.unplugged {
            (UNPLUGGED_PER_ENTER.min(self.submit_batch), usize::MAX)
        } else {
            (self.submit_batch, 1)
        };
        let ring = self
            .ring
            .as_mut()
            .expect("prepare() creates the ring before any I/O");
        let unsent = hand_over(ring, self.ring_ref, per_call, 0, calls)?;
        self.queued = unsent;
        Ok(())
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        let (fixed_file, fixed_bufs) = (self.fixed_file, self.fixed_bufs);
        for r in reqs {
            let ptr = self.bufs.slot_mut(r.tag).as_mut_ptr();
            let entry = match (r.dir, fixed_file, fixed_bufs) {
                (Direction::Trim, fixed, _) => {
                    self.trims[r.tag as usize] = (r.len, r.offset);
                    self.trims_in_flight += 1;
                    trim_entry(self.caps.kind, fixed, fd, r)
                }
                (Direction::Read, true, true) => {
                    opcode::ReadFixed::new(types::Fixed(0), ptr, r.len, 0)
                        .offset(r.offset)
                        .ioprio(r.ioprio)
                        .build()
                }
                (Direction::Write, true, true) => {
                    opcode::WriteFixed::new(types::Fixed(0), ptr, r.len, 0)
                        .offset(r.offset)
                        .ioprio(r.ioprio)
                        .build()
                }
                (Direction::Read, true, false) => opcode::Read::new(types::Fixed(0), ptr, r.len)
                    .offset(r.offset)
                    .ioprio(r.ioprio)
                    .build(),
                (Direction::Write, true, false) => opcode::Write::new(types::Fixed(0), ptr, r.len)
                    .offset(r.offset)
                    .ioprio(r.ioprio)
                    .build(),
                (Direction::Read, false, true) => {
                    opcode::ReadFixed::new(types::Fd(fd), ptr, r.len, 0)
                        .offset(r.offset)
                        .ioprio(r.ioprio)
                        .build()
                }
                (Direction::Write, false, true) => {
                    opcode::WriteFixed::new(types::Fd(fd), ptr, r.len, 0)
                        .offset(r.offset)
                        .ioprio(r.ioprio)
                        .build()
                }
                (Direction::Read, false, false) => opcode::Read::new(types::Fd(fd), ptr, r.len)
                    .offset(r.offset)
                    .ioprio(r.ioprio)
                    .build(),
                (Direction::Write, false, false) => opcode::Write::new(types::Fd(fd), ptr, r.len)
                    .offset(r.offset)
                    .ioprio(r.ioprio)
                    .build(),
            }
            .user_data(r.tag as u64)
            .flags(self.sqe_flags);
            let ring_ref = self.ring_ref;
            let ring = self.ring();
            loop {
                // SAFETY: the entry points into slot `r.tag` of the registered region, which
                // stays valid and untouched by the driver until this tag's completion is reaped.
                let pushed = unsafe { ring.submission().push(&entry) };
                if pushed.is_ok() {
                    break;
                }
                // The SQ is sized for every slot, so this only happens if the kernel has not
                // consumed earlier entries yet: hand them over and retry.
                let queued = ring.submission().len() as u32;
                ring_ref.enter(ring, queued, 0, EnterFlags::empty(), None)?;
            }
            self.queued += 1;
        }
        Ok(())
    }

    fn reap(
        &mut self,
        min: usize,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let batch = self.submit_batch;
        let ring_ref = self.ring_ref;
        let ring = self
            .ring
            .as_mut()
            .expect("prepare() creates the ring before any I/O");
        let mut unsent = ring.submission().len();
        if self.unplugged {
            // Everything but the last few now, without waiting; those go with the wait below.
            let per_call = UNPLUGGED_PER_ENTER.min(batch);
            unsent = hand_over(ring, ring_ref, per_call, per_call, usize::MAX)?;
        }
        // More than a batch queued: hand it over a batch at a time, and stop as soon as
        // something completed, so that it is stamped now and its slot reused; the rest go with
        // the next reap. Waiting is only ever done with at most a batch left to hand over.
        while unsent > batch {
            let sent = ring_ref.enter(ring, batch as u32, 0, EnterFlags::GETEVENTS, None);
            match sent {
                Ok(_) => {}
                Err(e) if is_transient(&e) => break,
                Err(e) => return Err(e),
            }
            unsent = ring.submission().len();
            if !ring.completion().is_empty() {
                break;
            }
        }
        let ready = ring.completion().len();
        let want = if ready >= min { 0 } else { min };
        let res = if unsent == 0 && want == 0 {
            // Everything handed over already (a push) and enough completed: no system call.
            Ok(0)
        } else if unsent <= batch {
            // Hand over the rest, and wait if nothing has completed yet. (Without a wait and
            // without GETEVENTS, as the io-uring crate's `submit` does: with DEFER_TASKRUN that
            // leaves completions to the next wait rather than running them in this call; but
            // completions the kernel holds back from a full CQ are only flushed by GETEVENTS.)
            let flags = if want > 0 || ring.submission().cq_overflow() {
                EnterFlags::GETEVENTS
            } else {
                EnterFlags::empty()
            };
            match timeout_ns {
                Some(ns) if want > 0 => {
                    let ts = timespec(ns);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    ring_ref.enter(ring, unsent as u32, want as u32, flags, Some(&args))
                }
                _ => ring_ref.enter(ring, unsent as u32, want as u32, flags, None),
            }
        } else if want > 0 {
            // The kernel took no more for now and nothing has completed: wait for a
            // completion without handing over more, briefly, then try again.
            let ts = timespec(timeout_ns.unwrap_or(u64::MAX).min(RETRY_WAIT_NS));
            let args = types::SubmitArgs::new().timespec(&ts);
            ring_ref.enter(ring, 0, want as u32, EnterFlags::GETEVENTS, Some(&args))
        } else {
            Ok(0)
        };
        match res {
            Ok(_) => {}
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e),
        }
        self.queued = ring.submission().len();
        let from = out.len();
        for cqe in ring.completion() {
            out.push(Completion {
                tag: cqe.user_data() as u32,
                result: cqe.result() as i64,
                done_ns: None,
            });
        }
        if self.trims_in_flight > 0 {
            for c in &mut out[from..] {
                let (len, offset) = std::mem::take(&mut self.trims[c.tag as usize]);
                if len == 0 {
                    continue;
                }
                self.trims_in_flight -= 1;
                // A kernel before 6.12 has no discard command: BLKDISCARD instead, as fio's
                // io_uring engine falls back to its synchronous TRIM.
                let no_command =
                    c.result == -(libc::EOPNOTSUPP as i64) || c.result == -(libc::EINVAL as i64);
                if no_command && self.caps.kind == TargetKind::Block {
                    c.result = match super::discard(&self.file, offset, len as u64) {
                        Ok(()) => 0,
                        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    };
                }
                if c.result == 0 {
                    c.result = len as i64;
                }
            }
        }
        Ok(())
    }
}

/// `BLOCK_URING_CMD_DISCARD` (`_IO(0x12, 0)`, Linux 6.12): discards `addr3` bytes from `addr`.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// A TRIM's entry: a block device's discard command, or a file's hole punched (its size kept),
/// which is what fio's engines do.
fn trim_entry(kind: TargetKind, fixed: bool, fd: i32, r: &IoReq) -> io_uring::squeue::Entry {
    // The discard command takes the length where a 16-byte command's data starts (`addr3`).
    let mut cmd = [0u8; 16];
    cmd[..8].copy_from_slice(&(r.len as u64).to_ne_bytes());
    let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    match (kind == TargetKind::Block, fixed) {
        (true, true) => opcode::UringCmd16::new(types::Fixed(0), BLOCK_URING_CMD_DISCARD)
            .addr(Some(r.offset))
            .cmd(cmd)
            .build(),
        (true, false) => opcode::UringCmd16::new(types::Fd(fd), BLOCK_URING_CMD_DISCARD)
            .addr(Some(r.offset))
            .cmd(cmd)
            .build(),
        (false, true) => opcode::Fallocate::new(types::Fixed(0), r.len as u64)
            .offset(r.offset)
            .mode(punch)
            .build(),
        (false, false) => opcode::Fallocate::new(types::Fd(fd), r.len as u64)
            .offset(r.offset)
            .mode(punch)
            .build(),
    }
}

/// Most requests one `io_uring_enter` hands over unplugged: the kernel plugs a call's requests
/// only when it is handed more than two.
const UNPLUGGED_PER_ENTER: usize = 2;

/// The longest a reap waits for a completion when the kernel would not take more requests.
const RETRY_WAIT_NS: u64 = 1_000_000;

fn timespec(ns: u64) -> types::Timespec {
    types::Timespec::new()
        .sec(ns / 1_000_000_000)
        .nsec((ns % 1_000_000_000) as u32)
}

/// Hands queued requests to the kernel, `per_call` per `io_uring_enter` and at most `calls`
/// calls, without waiting for completions, until no more than `keep` are left queued or the
/// kernel takes no more for now; returns how many are left.
fn hand_over(
    ring: &mut IoUring,
    ring_ref: RingRef,
    per_call: usize,
    keep: usize,
    calls: usize,
) -> io::Result<usize> {
    let mut unsent = ring.submission().len();
    for _ in 0..calls {
        if unsent <= keep {
            break;
        }
        let n = per_call.min(unsent) as u32;
        let sent = ring_ref.enter(ring, n, 0, EnterFlags::empty(), None);
        match sent {
            Ok(0) => break,
            Ok(_) => {}
            // What the kernel did not take goes with the next call.
            Err(e) if is_transient(&e) => break,
            Err(e) => return Err(e),
        }
        unsent = ring.submission().len();
    }
    Ok(unsent)
}

/// An `io_uring_enter` failure that only means "not now": a timeout or signal ended the wait,
/// or the kernel could not take more requests yet (EAGAIN, or EBUSY while completions wait to
/// be reaped). The queued requests stay queued; the next reap tries again.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    )
}

/// How `io_uring_enter` names a ring: by its descriptor, or by the index the kernel gave it in
/// the calling thread's table of registered rings (`IORING_REGISTER_RING_FDS`, Linux 5.18).
/// That table belongs to the thread that registered, so the index is only used, and only
/// unregistered, on that thread; a thread's table is emptied when it exits. (A target is
/// prepared and driven on one worker thread, so elsewhere is only a safety net.)
#[derive(Clone, Copy, Default)]
struct RingRef {
    registered: Option<(u32, ThreadMark)>,
}

/// The calling thread, told apart from every other live thread by the address of a
/// thread-local: cheaper per call than `std::thread::current()`, which counts a reference.
type ThreadMark = usize;

fn thread_mark() -> ThreadMark {
    thread_local!(static MARK: u8 = const { 0 });
    MARK.with(|m| m as *const u8 as usize)
}

/// `IORING_REGISTER_RING_FDS` and `IORING_UNREGISTER_RING_FDS` (include/uapi/linux/io_uring.h).
const IORING_REGISTER_RING_FDS: libc::c_uint = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_uint = 21;

/// `struct io_uring_rsrc_update`: `offset` -1 asks the kernel for any free index, which it
/// writes back.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

impl RingRef {
    /// Registers `ring` for the calling thread; where the kernel refuses (too old, or the
    /// thread's table full), the ring is named by its descriptor as before.
    fn register(ring: &IoUring) -> Self {
        let mut up = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: ring.as_raw_fd() as u64,
        };
        // SAFETY: `up` is the one `io_uring_rsrc_update` the call reads and writes back.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                ring.as_raw_fd(),
                IORING_REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1,
            )
        };
        RingRef {
            registered: (rc == 1).then(|| (up.offset, thread_mark())),
        }
    }

    /// Gives the thread's table slot back (on the registering thread only; elsewhere its exit
    /// does): a thread holds at most 16. The call goes through `ring`, though it acts on the
    /// thread's table.
    fn unregister(&mut self, ring: Option<&IoUring>) {
        if let (Some((index, thread)), Some(ring)) = (self.registered.take(), ring) {
            if thread != thread_mark() {
                return;
            }
            let up = RsrcUpdate {
                offset: index,
                resv: 0,
                data: 0,
            };
            // SAFETY: `up` is the one `io_uring_rsrc_update` the call reads.
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    ring.as_raw_fd(),
                    IORING_UNREGISTER_RING_FDS,
                    &up as *const RsrcUpdate,
                    1,
                );
            }
        }
    }

    /// `io_uring_enter(ring, to_submit, min_complete, flags, args)`, with `EXT_ARG` where there
    /// are wait arguments.
    fn enter(
        self,
        ring: &IoUring,
        to_submit: u32,
        min_complete: u32,
        mut flags: EnterFlags,
        args: Option<&types::SubmitArgs<'_, '_>>,
    ) -> io::Result<usize> {
        let fd = match self.registered {
            Some((index, thread)) if thread == thread_mark() => {
                flags |= EnterFlags::REGISTERED_RING;
                index as i32
            }
            _ => ring.as_raw_fd(),
        };
        let (arg, size) = match args {
            Some(a) => {
                flags |= EnterFlags::EXT_ARG;
                (
                    (a as *const types::SubmitArgs<'_, '_>).cast::<libc::c_void>(),
                    std::mem::size_of::<types::SubmitArgs<'_, '_>>(),
                )
            }
            None => (std::ptr::null(), 0),
        };
        // SAFETY: `args`, where given, is the `io_uring_getevents_arg` EXT_ARG announces
        // (`SubmitArgs` is a transparent wrapper of it), alive for the call; the entries handed
        // over point into buffers that outlive their completions (see `Target::submit`).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                fd,
                to_submit,
                min_complete,
                flags.bits(),
                arg,
                size,
            )
        };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(rc as usize)
        }
    }
}

impl Drop for UringTarget {
    fn drop(&mut self) {
        self.ring_ref.unregister(self.ring.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::TargetKind;
    use std::io::Write;

    fn file_target(dir: &std::path::Path) -> UringTarget {
        let path = dir.join("ring.bin");
        let data: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(&data))
            .unwrap();
        let caps = Capabilities {
            kind: TargetKind::File,
            engine: "",
            size_bytes: 8192,
            logical_block_bytes: 512,
            needs_data: false,
            modelled: false,
        };
        UringTarget::new(File::open(&path).unwrap(), caps, false).unwrap()
    }

    #[test]
    fn a_ring_prepared_again_and_again_gives_its_registered_index_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = file_target(dir.path());
        t.prepare(1, 4096).unwrap();
        if t.ring_ref.registered.is_none() {
            eprintln!("skipped: this kernel does not register ring descriptors (Linux 5.18+)");
            return;
        }
        // A thread holds 16 registered rings at most: had each prepare kept its predecessor's
        // index, the 17th would have been refused.
        for round in 0..40 {
            t.prepare(1, 4096).unwrap();
            assert!(t.ring_ref.registered.is_some(), "prepare {round}");
            let req = IoReq {
                tag: 0,
                dir: Direction::Read,
                offset: 4096,
                len: 4096,
                ioprio: 0,
            };
            t.submit(&[req]).unwrap();
            let mut done = Vec::new();
            t.reap(1, None, &mut done).unwrap();
            assert_eq!(done.len(), 1, "prepare {round}");
            assert_eq!(done[0].result, 4096, "prepare {round}");
            assert_eq!(t.buffer_mut(0)[0], (4096 % 251) as u8, "prepare {round}");
        }
        // Dropped on its own thread, a target gives its index back too.
        drop(t);
        for _ in 0..40 {
            let mut t = file_target(dir.path());
            t.prepare(1, 4096).unwrap();
            assert!(t.ring_ref.registered.is_some());
        }
    }
}
