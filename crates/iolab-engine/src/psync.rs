//! The portable fallback: positional `pread`/`pwrite`, one I/O at a time per thread.
//! Used where io_uring is unavailable (old kernels, seccomp'd containers); queue depth then
//! comes only from threads, and results say so.

use crate::buf::SlotBuffers;
use crate::target::{Capabilities, Completion, IoReq, Target, TargetKind};
use iolab_core::job::Direction;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Synchronous positional I/O on an open file or device.
pub struct PsyncTarget {
    file: File,
    caps: Capabilities,
    bufs: SlotBuffers,
    huge_buffers: bool,
    done: Vec<Completion>,
    /// The priority this thread's I/O goes at now (set with the first request that has one).
    ioprio: u16,
}

impl PsyncTarget {
    /// Wraps an open file; `huge_buffers` puts the buffers on huge pages (see
    /// [`SlotBuffers::on_huge_pages`]).
    pub fn new(file: File, mut caps: Capabilities, huge_buffers: bool) -> Self {
        caps.engine = "psync";
        PsyncTarget {
            file,
            caps,
            bufs: SlotBuffers::default(),
            huge_buffers,
            done: Vec::new(),
            ioprio: 0,
        }
    }
}

impl Target for PsyncTarget {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }
    fn cache_hint(&self) -> iolab_drive::hint::CacheHint {
        crate::sys::CACHE_HINT
    }

    fn sync(&mut self, data_only: bool) -> io::Result<()> {
        if data_only {
            self.file.sync_data()
        } else {
            self.file.sync_all()
        }
    }

    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
        self.bufs = if self.huge_buffers {
            SlotBuffers::on_huge_pages(slots as usize, slot_bytes)?
        } else {
            SlotBuffers::try_new(slots as usize, slot_bytes)?
        };
        Ok(())
    }

    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        self.bufs.slot_mut(tag)
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        for r in reqs {
            let len = r.len as usize;
            if r.ioprio != self.ioprio {
                // A synchronous I/O goes at its thread's priority.
                crate::sys::set_thread_ioprio(r.ioprio)?;
                self.ioprio = r.ioprio;
            }
            let res = match r.dir {
                Direction::Read => self
                    .file
                    .read_at(&mut self.bufs.slot_mut(r.tag)[..len], r.offset),
                Direction::Write => self.file.write_at(&self.bufs.slot(r.tag)[..len], r.offset),
                // fio's sync engines' TRIM: BLKDISCARD on a device, a hole punched in a file.
                Direction::Trim => match self.caps.kind {
                    TargetKind::Block => crate::sys::discard(&self.file, r.offset, len as u64),
                    _ => crate::sys::punch_hole(&self.file, r.offset, len as u64),
                }
                .map(|()| len),
            };
            let result = match res {
                Ok(n) => n as i64,
                Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            };
            self.done.push(Completion {
                tag: r.tag,
                result,
                done_ns: None,
            });
        }
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

pub use iolab_drive::null::NullTarget;
