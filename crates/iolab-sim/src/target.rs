//! The model behind the engine's [`Target`] seam.

use crate::model::{stored_share, World};
use iolab_core::job::Direction;
use iolab_drive::clock::VirtualClock;
use iolab_drive::hint::CacheHint;
use iolab_drive::target::{Capabilities, Completion, IoReq, Target, TargetKind};
use std::io;

/// A [`World`] as a target: `submit` reserves the path for each request at the clock's now,
/// `reap` processes events in time order and moves the shared clock to each completion.
pub struct SimTarget<'a> {
    world: &'a mut World,
    clock: VirtualClock,
    caps: Capabilities,
    bufs: Vec<u8>,
    slot_bytes: usize,
    lens: Vec<u32>,
    /// Completions known at submit time (requests past the end of the model).
    failed: Vec<Completion>,
    /// The host's prefetch, for the mappings of upcoming requests.
    hint: CacheHint,
}

impl<'a> SimTarget<'a> {
    /// A target over `world` sharing `clock` with the driver.
    pub fn new(world: &'a mut World, clock: VirtualClock, size: u64, needs_data: bool) -> Self {
        SimTarget {
            world,
            clock,
            caps: Capabilities {
                kind: TargetKind::Sim,
                engine: "sim",
                size_bytes: size,
                logical_block_bytes: 512,
                needs_data,
                modelled: true,
            },
            bufs: Vec::new(),
            slot_bytes: 0,
            lens: Vec::new(),
            failed: Vec::new(),
            hint: CacheHint::NONE,
        }
    }

    /// The target, prefetching upcoming requests' mappings with `hint` (the engine's prefetch
    /// instruction; without one the model computes the same, only slower on a large drive).
    pub fn with_cache_hint(mut self, hint: CacheHint) -> Self {
        self.hint = hint;
        self
    }

    /// At least `min` completions (or none after the timeout), moving the clock to each.
    fn reap_due(&mut self, min: usize, timeout_ns: Option<u64>, out: &mut Vec<Completion>) {
        if !self.failed.is_empty() {
            out.append(&mut self.failed);
        }
        let now = iolab_drive::clock::Clock::now_ns(&self.clock);
        let limit = timeout_ns.map_or(u64::MAX, |d| now.saturating_add(d));
        while out.len() < min.max(1) {
            match self.world.next_completion(limit) {
                Some((tag, t)) => {
                    self.clock.advance_to(t);
                    out.push(self.completion(tag, t));
                }
                None => {
                    if limit != u64::MAX {
                        self.clock.advance_to(limit);
                    }
                    break;
                }
            }
        }
    }

    /// The completions due at the same instant as the last one reaped.
    #[inline]
    fn reap_same_instant(&mut self, out: &mut Vec<Completion>) {
        if let Some(t) = out.last().and_then(|c| c.done_ns) {
            while let Some((tag, t)) = self.world.next_completion_at(t) {
                out.push(self.completion(tag, t));
            }
        }
    }

    /// The completion of request `tag` at `t`: every byte moved.
    fn completion(&self, tag: u32, t: u64) -> Completion {
        Completion {
            tag,
            result: self.lens[tag as usize] as i64,
            done_ns: Some(t),
        }
    }
}

impl Target for SimTarget<'_> {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
        self.slot_bytes = slot_bytes;
        // Buffers only matter when the model reads the data (compression); otherwise one slot
        // is enough to satisfy the seam.
        let n = if self.caps.needs_data {
            slots as usize
        } else {
            1
        };
        self.bufs = zeroed_buffers(n, slot_bytes)?;
        self.lens = vec![0; slots as usize];
        let now = iolab_drive::clock::Clock::now_ns(&self.clock);
        self.world.prepare(slots, now);
        Ok(())
    }

    fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
        let i = if self.caps.needs_data {
            tag as usize
        } else {
            0
        };
        &mut self.bufs[i * self.slot_bytes..(i + 1) * self.slot_bytes]
    }

    fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
        let now = iolab_drive::clock::Clock::now_ns(&self.clock);
        for r in reqs {
            self.lens[r.tag as usize] = r.len;
            if r.offset + r.len as u64 > self.caps.size_bytes || r.len == 0 {
                self.failed.push(Completion {
                    tag: r.tag,
                    result: -(libc_einval()),
                    done_ns: Some(now),
                });
                continue;
            }
            if self.caps.needs_data && r.dir == Direction::Write {
                let s = r.tag as usize * self.slot_bytes;
                self.world.stored_share[r.tag as usize] =
                    stored_share(&self.bufs[s..s + r.len as usize]);
            }
            self.world.submit(r.tag, r.dir, r.offset, r.len as u64, now);
        }
        Ok(())
    }

    fn reap(
        &mut self,
        min: usize,
        timeout_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        self.reap_due(min, timeout_ns, out);
        // Those of the same instant too (writes admitted as one program frees the buffer):
        // one turn of the driver's loop for them all saved 11 % of the instructions of a
        // steady-state 4 KiB random write (callgrind).
        self.reap_same_instant(out);
        Ok(())
    }

    fn upcoming(&mut self, offset: u64) {
        self.world.prefetch(offset, self.hint);
    }

    fn cache_hint(&self) -> CacheHint {
        self.hint
    }

    /// Far enough ahead that a few I/Os of simulation hide the memory latency of the mapping
    /// (a random LPN of a 1.2 TB drive misses every cache and the TLB), in batches of twelve
    /// whose misses overlap. Measured on the SSD 750's steady-state 4K random write, side by
    /// side: 16 ahead 12-15 % faster than 4 (one at a time), 24 and 32 no faster than 16
    /// while the map was loaded in two stages; 24 for three (chunk, entry, node; see
    /// `World::prefetch`).
    fn plan_ahead(&self) -> usize {
        24
    }
}

/// `slots` zeroed buffers of `slot_bytes`, or an `OutOfMemory` error saying what was asked
/// (a deep queue of large blocks on a model that compresses), not an abort.
fn zeroed_buffers(slots: usize, slot_bytes: usize) -> io::Result<Vec<u8>> {
    let too_much = || {
        io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!(
                "cannot allocate the model's I/O buffers: {slots} in flight × {slot_bytes} bytes \
                 per block; lower the block size, queue depth or threads"
            ),
        )
    };
    let len = slots.checked_mul(slot_bytes).ok_or_else(too_much)?;
    let mut bufs = Vec::new();
    bufs.try_reserve_exact(len).map_err(|_| too_much())?;
    bufs.resize(len, 0);
    Ok(bufs)
}

/// EINVAL without a libc dependency (Linux value).
fn libc_einval() -> i64 {
    22
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::{Job, JobSpec};
    use iolab_drive::clock::Clock;
    use iolab_drive::driver::{drive, plan_workers, DriveOptions};

    /// A [`SimTarget`] that counts its reaps, and may hand out only the completions asked for.
    struct Counted<'a> {
        inner: SimTarget<'a>,
        same_instant: bool,
        reaps: u64,
        completions: u64,
    }

    impl Target for Counted<'_> {
        fn capabilities(&self) -> &Capabilities {
            self.inner.capabilities()
        }
        fn prepare(&mut self, slots: u32, slot_bytes: usize) -> io::Result<()> {
            self.inner.prepare(slots, slot_bytes)
        }
        fn buffer_mut(&mut self, tag: u32) -> &mut [u8] {
            self.inner.buffer_mut(tag)
        }
        fn submit(&mut self, reqs: &[IoReq]) -> io::Result<()> {
            self.inner.submit(reqs)
        }
        fn reap(
            &mut self,
            min: usize,
            timeout_ns: Option<u64>,
            out: &mut Vec<Completion>,
        ) -> io::Result<()> {
            let before = out.len();
            if self.same_instant {
                self.inner.reap(min, timeout_ns, out)?;
            } else {
                self.inner.reap_due(min, timeout_ns, out);
            }
            self.reaps += 1;
            self.completions += (out.len() - before) as u64;
            Ok(())
        }
        fn upcoming(&mut self, offset: u64) {
            self.inner.upcoming(offset);
        }
        fn plan_ahead(&self) -> usize {
            self.inner.plan_ahead()
        }
    }

    /// 4 KiB random writes at QD32 on an SSD 750 in steady state: what the driver measured,
    /// and the reaps and completions it took.
    fn steady_writes(same_instant: bool) -> (String, u64, u64) {
        let mut sim = crate::open("sim:ssd750-400@z97/cpu", None).unwrap();
        sim.precondition_steady();
        let size = sim.size_bytes();
        let mut job: Job = toml::from_str::<JobSpec>(
            "access = \"randwrite\"\nblock_size = \"4k\"\nqueue_depth = 32\nduration_s = 0.2",
        )
        .unwrap()
        .validate()
        .unwrap();
        job.set_span(size).unwrap();
        let clock = sim.clock.clone();
        let workers = plan_workers(&job, clock.now_ns());
        let mut target = Counted {
            inner: SimTarget::new(&mut sim.world, clock.clone(), size, false),
            same_instant,
            reaps: 0,
            completions: 0,
        };
        target.prepare(32, 4096).unwrap();
        let opts = DriveOptions {
            duration_ns: Some(200_000_000),
            interval_ns: 10_000_000,
            ..DriveOptions::default()
        };
        let out = drive(&mut target, &clock, workers, &opts).unwrap();
        let measured = format!("{:?} {}", out.stats, out.measured_ns);
        (measured, target.reaps, target.completions)
    }

    /// Buffers for every slot of a compressing model that no machine has are an error, as
    /// the engine's are for a file, not an abort of the process.
    #[test]
    fn buffers_beyond_memory_are_an_error() {
        let mut sim = crate::open("sim:force3-120@h67/sata", None).unwrap();
        let size = sim.size_bytes();
        let mut target = SimTarget::new(&mut sim.world, VirtualClock::new(), size, true);
        let err = target.prepare(u32::MAX, 1 << 30).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::OutOfMemory, "{err}");
        assert!(err.to_string().contains("lower the block size"), "{err}");
    }

    #[test]
    fn completions_of_one_instant_go_out_together_and_change_nothing() {
        let (batched, reaps, completions) = steady_writes(true);
        let (one_by_one, reaps_1, completions_1) = steady_writes(false);
        assert_eq!(reaps_1, completions_1, "one completion per reap");
        assert_eq!(completions, completions_1);
        assert!(
            reaps * 3 < completions * 2,
            "a program that frees the buffer admits several writes at once: {reaps} reaps for {completions} completions"
        );
        assert!(batched == one_by_one, "the same statistics either way");
    }
}
