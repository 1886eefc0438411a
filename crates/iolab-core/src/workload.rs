//! Turning a [`Job`] into a stream of I/O requests: one [`IoGenerator`] per worker thread.
//!
//! Pure and seeded: the same job, worker index and seed always give the same requests, which
//! is what makes a run repeatable and a real and a modelled run comparable I/O for I/O. The
//! one exception: the threads of a zoned job that share a span share its write pointers, so
//! where their writes land also depends on the order in which they ask.

use crate::job::{byte_share_start, Direction, Job, SizeShare, Stride, TrimKind};
use crate::rng::{splitmix64, Permutation, Rng};
use crate::skew::Skew;
use crate::sprandom::SpRandomOrder;
use crate::zbd::{SharedZones, ZoneTable};

/// One request as the workload decides it: direction, byte offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// Read or write.
    pub dir: Direction,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// Produces the requests of one worker.
#[derive(Clone, Debug)]
pub struct IoGenerator {
    rng: Rng,
    /// Share of I/Os at random offsets (1.0: all, 0.0: none).
    random_frac: f64,
    read_frac: f64,
    /// The block-size split, by cumulative weight.
    sizes: Vec<BlockSize>,
    /// The writes' own split, where they have one.
    write_sizes: Option<Vec<BlockSize>>,
    start: u64,
    end: u64,
    align: u64,
    seq_pos: u64,
    /// Bytes between one sequential I/O's end and the next one's start (negative: backwards).
    seq_skip: i64,
    /// I/Os per random jump, and how many of the current run are left.
    random_run: u32,
    run_left: u32,
    /// Strided access: the window the worker is in, if the job asks for windows.
    window: Option<Window>,
    /// A random job's one pass, which visits every block once instead of drawing.
    pass: Option<Pass>,
    /// Skewed draws of the block (in units of `align`), where the job asks for them.
    skew: Option<Skew>,
    /// The SPRandom order of blocks, where the job asks for it.
    sprandom: Option<SpRandomOrder>,
    /// Whether the job TRIMs: only, or each TRIM then a write of the same range.
    trim: TrimKind,
    /// The write that follows the last TRIM, where TRIMs are followed by writes.
    pending_write: Option<(u64, u64)>,
    /// Zones with write pointers, where the job asks for them (shared by the threads of a
    /// span).
    zoned: Option<SharedZones>,
}

/// A strided job's current window: `[at, at + range)`, clipped to the worker's range.
#[derive(Clone, Debug)]
struct Window {
    stride: Stride,
    at: u64,
    /// Bytes done in it so far.
    done: u64,
}

/// Where a random one-pass worker is in the pass's order of blocks.
#[derive(Clone, Debug)]
struct Pass {
    order: Permutation,
    next: u64,
}

/// One block size of a worker's split.
#[derive(Clone, Copy, Debug)]
struct BlockSize {
    /// Cumulative weight up to and including this size.
    cum: f64,
    /// Length in bytes.
    len: u64,
    /// Aligned offsets a random I/O of this size can start at, worked out once: dividing for
    /// it on every request cost 17 instructions per I/O of a modelled run.
    random_slots: u64,
}

/// The seed of worker `index` of a job seeded with `seed`: distinct per worker, fixed per seed.
pub fn worker_seed(seed: u64, index: u32) -> u64 {
    let mut s = seed ^ (index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix64(&mut s)
}

impl IoGenerator {
    /// The generator for worker `index` of `job` (whose span must be resolved); a zoned job's
    /// worker gets a zone table of its own range.
    pub fn new(job: &Job, index: u32) -> Self {
        Self::with_zones(job, index, None)
    }

    /// As [`IoGenerator::new`], the worker using `shared` as its zone table where given (the
    /// one table of the zones the job's threads share: see `plan_workers`), instead of
    /// building one of its own range.
    pub fn with_zones(job: &Job, index: u32, shared: Option<SharedZones>) -> Self {
        let (start, end) = job.worker_range(index);
        let align = job.align();
        let table = |split: &[SizeShare]| {
            let mut acc = 0.0;
            split
                .iter()
                .map(|&SizeShare { bytes, weight }| {
                    acc += weight;
                    BlockSize {
                        cum: acc,
                        len: bytes,
                        random_slots: (end - start).saturating_sub(bytes) / align + 1,
                    }
                })
                .collect::<Vec<_>>()
        };
        let sizes = table(&job.block_sizes);
        let write_sizes =
            (!job.write_block_sizes.is_empty()).then(|| table(&job.write_block_sizes));
        // Sequential workers sharing one span start at staggered points, so that T threads read
        // T different places rather than the same blocks T times (which a cache would serve):
        // where their shares of a one-pass budget begin, so that one pass covers the span once.
        let seq_pos = if job.separate_ranges() || job.threads == 1 {
            start
        } else {
            start + byte_share_start(end - start, job.granule(), job.threads, index)
        };
        // A random job's one pass visits every block of the span once, in an order chosen by
        // the seed, as fio's random map does: drawn with replacement, a pass of n I/Os
        // reaches only 1 − 1/e (63 %) of the blocks and reads some two or three times. The
        // threads of a shared span split one order, each taking the part of it that its share
        // of the pass's bytes gives; with zones each thread has its zone's own order. Timed
        // and budget-limited jobs still draw with replacement (Iometer's way, which the
        // calibrated model's review figures were measured with) unless `random_map` says
        // otherwise, and so do a partly random job
        // and a split of several sizes, whose blocks do not tile the span.
        // `random_map` asks for the same order in a timed or budget-limited job, which starts
        // the order again once it has gone through it.
        // A skewed draw repeats hot blocks by design: no pass (fio drops its random map too).
        let skew = Skew::new(
            &job.distribution,
            (end - start) / align,
            align,
            // The job's seed, not the worker's: threads of one job share one hot set.
            job.seed,
        );
        let sprandom = job
            .sprandom
            .as_ref()
            .map(|spr| SpRandomOrder::new(spr, (end - start) / align, align, job.seed));
        let pass = ((job.one_pass() || job.random_map)
            && sprandom.is_none()
            && skew.is_none()
            && job.stride.is_none()
            && job.random_run <= 1
            && job.random_pct >= 100.0
            && job.all_block_sizes().all(|s| s.bytes == align))
        .then(|| {
            let blocks = (end - start) / align;
            let (first, seed) = if job.separate_ranges() {
                (0, worker_seed(job.seed, index))
            } else {
                let first = byte_share_start(end - start, job.granule(), job.threads, index);
                (first / align, job.seed)
            };
            Pass {
                order: Permutation::new(blocks, seed ^ 0x0F_A55E_ED05),
                next: first % blocks.max(1),
            }
        });
        IoGenerator {
            rng: Rng::new(worker_seed(job.seed, index)),
            random_frac: job.random_pct / 100.0,
            read_frac: job.read_pct / 100.0,
            sizes,
            write_sizes,
            start,
            end,
            align,
            seq_pos,
            seq_skip: job.seq_skip,
            random_run: job.random_run.max(1),
            run_left: 0,
            window: job.stride.map(|stride| Window {
                stride,
                at: start,
                done: 0,
            }),
            pass,
            skew,
            sprandom,
            trim: job.access.trims(),
            pending_write: None,
            zoned: shared.or_else(|| ZoneTable::for_range(job, (start, end))),
        }
    }

    /// Whether the job's TRIMs are each followed by a write of the same range (fio's
    /// `trimwrite`): its byte budget counts the writes only.
    pub fn trims_then_writes(&self) -> bool {
        self.trim == TrimKind::ThenWrite
    }

    /// The largest block size of the split that is at most `bytes`, if any: what the last
    /// request of a byte budget shrinks to, so that it is still one of the job's blocks.
    pub fn largest_within(&self, bytes: u64) -> Option<u64> {
        self.sizes
            .iter()
            .chain(self.write_sizes.iter().flatten())
            .map(|s| s.len)
            .filter(|&l| l <= bytes)
            .max()
    }

    /// The byte range this worker stays in.
    pub fn range(&self) -> (u64, u64) {
        (self.start, self.end)
    }

    /// The next request.
    // Always inlined, for the reason given at the driver's `next_planned`.
    #[inline(always)]
    pub fn next_request(&mut self) -> IoRequest {
        if self.trim != TrimKind::None {
            return self.next_trim_or_write();
        }
        self.next_read_or_write(None)
    }

    /// Shortens the write that follows the last TRIM to `len`, as the TRIM was (the last
    /// request of a byte budget).
    pub fn shrink_pending(&mut self, len: u64) {
        if let Some(w) = self.pending_write.as_mut() {
            w.1 = len;
        }
    }

    /// A TRIM job's next request: a TRIM, or the write of the range the last one trimmed.
    #[cold]
    fn next_trim_or_write(&mut self) -> IoRequest {
        if let Some((offset, len)) = self.pending_write.take() {
            return IoRequest {
                dir: Direction::Write,
                offset,
                len,
            };
        }
        // A TRIM that a write follows takes the writes' block sizes.
        let as_dir = match self.trim {
            TrimKind::ThenWrite => Direction::Write,
            _ => Direction::Read,
        };
        let mut req = self.next_read_or_write(Some(as_dir));
        if self.trim == TrimKind::ThenWrite {
            self.pending_write = Some((req.offset, req.len));
        }
        req.dir = Direction::Trim;
        req
    }

    /// The next read or write (`forced`: of that direction, whatever the job's mix).
    #[inline(always)]
    fn next_read_or_write(&mut self, forced: Option<Direction>) -> IoRequest {
        let dir = if let Some(d) = forced {
            d
        } else if self.read_frac >= 1.0
            || (self.read_frac > 0.0 && self.rng.unit() < self.read_frac)
        {
            Direction::Read
        } else {
            Direction::Write
        };
        let sizes = match (&self.write_sizes, dir) {
            (Some(w), Direction::Write) => w,
            _ => &self.sizes,
        };
        let size = if sizes.len() == 1 {
            sizes[0]
        } else {
            let u = self.rng.unit();
            *sizes
                .iter()
                .find(|s| u < s.cum)
                .unwrap_or(&sizes[sizes.len() - 1])
        };
        let len = size.len;
        let mut random = self.random_frac >= 1.0
            || (self.random_frac > 0.0 && self.rng.unit() < self.random_frac);
        if random && self.random_run > 1 {
            // A run of I/Os after each jump continues sequentially from it.
            if self.run_left > 0 {
                self.run_left -= 1;
                random = false;
            } else {
                self.run_left = self.random_run - 1;
            }
        }
        if self.window.is_some() {
            return self.in_window(dir, len, random);
        }
        let offset = if let Some(spr) = self.sprandom.as_mut() {
            // Past the pass's end (its budget stops the job first): the span's start.
            self.start + spr.next_block().unwrap_or(0) * self.align
        } else if random {
            match self.pass.as_mut() {
                Some(pass) => {
                    if pass.next >= pass.order.len() {
                        pass.next = 0;
                    }
                    pass.next += 1;
                    self.start + pass.order.at(pass.next - 1) * self.align
                }
                None => match &self.skew {
                    // The drawn block, moved back where a large block would run past the end.
                    Some(skew) => {
                        let slot = skew.next(&mut self.rng).min(size.random_slots - 1);
                        self.start + slot * self.align
                    }
                    None => self.start + self.rng.below(size.random_slots) * self.align,
                },
            }
        } else {
            let past_end = self.seq_pos.checked_add(len).is_none_or(|e| e > self.end);
            if self.seq_pos < self.start || past_end {
                // Past either end: walking backwards starts again from the last block.
                self.seq_pos = if self.seq_skip < 0 {
                    self.start + (self.end - self.start - len) / self.align * self.align
                } else {
                    self.start
                };
            }
            self.seq_pos
        };
        if let Some(zones) = &self.zoned {
            let (dir, offset, len) = crate::zbd::lock(zones).place(dir, offset, len, random);
            self.seq_pos = offset + len;
            return IoRequest { dir, offset, len };
        }
        // The next sequential I/O continues where this one ends, random or not (Iometer),
        // after the skip, if any (which may take it below the start: wrapped above).
        self.seq_pos = (offset + len).wrapping_add_signed(self.seq_skip);
        IoRequest { dir, offset, len }
    }

    /// The offset of a strided job's request: in the current window, which moves on once
    /// `io_bytes` were done in it (back to the start past the end).
    #[cold]
    fn in_window(&mut self, dir: Direction, len: u64, random: bool) -> IoRequest {
        let Some(w) = self.window.as_mut() else {
            unreachable!("in_window without a window")
        };
        let step = w.stride.range_bytes + w.stride.skip_bytes;
        if w.done >= w.stride.io_bytes {
            w.done = 0;
            w.at += step;
            self.seq_pos = w.at;
        }
        if w.at.checked_add(len).is_none_or(|e| e > self.end) {
            w.at = self.start;
            self.seq_pos = w.at;
        }
        let (lo, hi) = (w.at, (w.at + w.stride.range_bytes).min(self.end));
        w.done += len;
        let offset = if random {
            lo + self.rng.below((hi - lo - len) / self.align + 1) * self.align
        } else {
            if self.seq_pos < lo || self.seq_pos + len > hi {
                self.seq_pos = lo;
            }
            self.seq_pos
        };
        self.seq_pos = offset + len;
        IoRequest { dir, offset, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobSpec;

    fn job(text: &str, span: u64) -> Job {
        let mut job = toml::from_str::<JobSpec>(text).unwrap().validate().unwrap();
        job.set_span(span).unwrap();
        job
    }

    #[test]
    fn random_offsets_stay_in_span_and_aligned() {
        let mut j = job(
            "access = \"randread\"\nbssplit = \"4k/50:64k/50\"",
            10 << 20,
        );
        j.offset_bytes = 1 << 20;
        let mut g = IoGenerator::new(&j, 0);
        for _ in 0..100_000 {
            let r = g.next_request();
            assert!(r.offset >= 1 << 20);
            assert!(r.offset + r.len <= (1 << 20) + (10 << 20));
            assert_eq!(r.offset % 4096, 0);
        }
    }

    #[test]
    fn zoned_workers_never_leave_their_zone() {
        let j = job(
            "access = \"randwrite\"\nzones = true\nthreads = 4\nblock_size = \"8k\"",
            64 << 20,
        );
        let mut seen = Vec::new();
        for w in 0..4 {
            let mut g = IoGenerator::new(&j, w);
            let (lo, hi) = g.range();
            for _ in 0..20_000 {
                let r = g.next_request();
                assert!(r.offset >= lo && r.offset + r.len <= hi, "worker {w}");
            }
            seen.push((lo, hi));
        }
        for pair in seen.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "zones overlap: {seen:?}");
        }
    }

    #[test]
    fn threads_of_one_span_use_the_zone_table_they_are_given() {
        let j = job(
            "access = \"randwrite\"\nthreads = 4\nzoned = { zone_size = \"1m\" }",
            16 << 20,
        );
        let shared = ZoneTable::for_range(&j, j.worker_range(0)).unwrap();
        let table = |g: &IoGenerator| g.zoned.clone().expect("a zoned job's worker has zones");
        for w in 0..4 {
            let g = IoGenerator::with_zones(&j, w, Some(shared.clone()));
            assert!(std::sync::Arc::ptr_eq(&table(&g), &shared), "worker {w}");
        }
        // Without one, a worker builds the table of its own range.
        let own = IoGenerator::new(&j, 0);
        assert!(!std::sync::Arc::ptr_eq(&table(&own), &shared));
    }

    #[test]
    fn mix_and_split_shares_match_within_tolerance() {
        let j = job(
            "access = \"randrw\"\nread_pct = 70\nbssplit = \"512/10:4k/60:64k/30\"",
            1 << 30,
        );
        let mut g = IoGenerator::new(&j, 0);
        let n = 200_000;
        let (mut reads, mut small, mut mid, mut big) = (0, 0, 0, 0);
        for _ in 0..n {
            let r = g.next_request();
            reads += (r.dir == Direction::Read) as u32;
            match r.len {
                512 => small += 1,
                4096 => mid += 1,
                65536 => big += 1,
                other => panic!("unexpected size {other}"),
            }
        }
        let share = |c: u32| c as f64 / n as f64 * 100.0;
        assert!((share(reads) - 70.0).abs() < 1.0, "reads {}", share(reads));
        assert!((share(small) - 10.0).abs() < 1.0);
        assert!((share(mid) - 60.0).abs() < 1.0);
        assert!((share(big) - 30.0).abs() < 1.0);
    }

    #[test]
    fn reads_and_writes_take_their_own_splits() {
        let j = job(
            "access = \"randrw\"\nread_pct = 70\nbssplit = \"4k/50:8k/50,64k/100\"",
            1 << 30,
        );
        let mut g = IoGenerator::new(&j, 0);
        let (mut small, mut mid) = (0u32, 0u32);
        for _ in 0..100_000 {
            let r = g.next_request();
            match (r.dir, r.len) {
                (Direction::Read, 4096) => small += 1,
                (Direction::Read, 8192) => mid += 1,
                (Direction::Write, 65536) => {}
                other => panic!("{other:?}"),
            }
            assert_eq!(r.offset % 4096, 0);
        }
        let share = small as f64 / (small + mid) as f64;
        assert!((share - 0.5).abs() < 0.01, "{share}");
    }

    #[test]
    fn partly_random_mixes_jumps_and_continuations() {
        let j = job(
            "access = \"rw\"\nrandom_pct = 80\nblock_size = \"8k\"",
            1 << 30,
        );
        let mut g = IoGenerator::new(&j, 0);
        let mut prev_end = g.next_request();
        let mut follows = 0;
        let n = 100_000;
        for _ in 0..n {
            let r = g.next_request();
            follows += (r.offset == prev_end.offset + prev_end.len) as u32;
            prev_end = r;
        }
        // 20 % continue sequentially (plus the rare random draw that lands right after).
        let share = follows as f64 / n as f64 * 100.0;
        assert!((share - 20.0).abs() < 1.0, "{share}");
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let j = job("access = \"read\"\nblock_size = \"1m\"", 4 << 20);
        let mut g = IoGenerator::new(&j, 0);
        let offsets: Vec<u64> = (0..6).map(|_| g.next_request().offset).collect();
        assert_eq!(offsets, vec![0, 1 << 20, 2 << 20, 3 << 20, 0, 1 << 20]);
    }

    #[test]
    fn sequential_skips_leave_holes_or_walk_backwards() {
        let offsets = |text: &str, n: usize| {
            let mut g = IoGenerator::new(&job(text, 64 << 10), 0);
            (0..n)
                .map(|_| g.next_request().offset >> 10)
                .collect::<Vec<_>>()
        };
        // fio's rw=read:4k with bs=4k: every other block.
        assert_eq!(
            offsets("access = \"read\"\nseq_skip = 4096", 10),
            [0, 8, 16, 24, 32, 40, 48, 56, 0, 8]
        );
        // fio's backwards-read example: rw=read:-8k with bs=4k.
        assert_eq!(
            offsets("access = \"read\"\nseq_skip = -8192", 18)[..18],
            [0, 60, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 60]
        );
        // rw=randread:4: a jump, then three that follow it.
        let mut g = IoGenerator::new(
            &job(
                "access = \"randread\"\nrandom_run = 4\nduration_s = 1",
                1 << 30,
            ),
            0,
        );
        let r: Vec<_> = (0..8).map(|_| g.next_request().offset).collect();
        for run in r.chunks(4) {
            assert_eq!(run[1..], [run[0] + 4096, run[0] + 8192, run[0] + 12288]);
        }
        assert_ne!(r[4], r[3] + 4096);
    }

    #[test]
    fn strided_jobs_work_in_windows_and_skip_between_them() {
        // fio's disk-zone-profile: 64k reads, 256k of each window, windows 1m apart.
        let text = "access = \"read\"\nblock_size = \"64k\"\nstride_io = \"256k\"\n\
                    stride_skip = \"768k\"";
        let mut g = IoGenerator::new(&job(text, 4 << 20), 0);
        let kib: Vec<u64> = (0..20).map(|_| g.next_request().offset >> 10).collect();
        assert_eq!(
            kib,
            [
                0, 64, 128, 192, 1024, 1088, 1152, 1216, 2048, 2112, 2176, 2240, 3072, 3136, 3200,
                3264, 0, 64, 128, 192
            ]
        );
        // Random in a window wider than what is done in it.
        let text = "access = \"randread\"\nduration_s = 1\nstride_io = \"64k\"\n\
                    stride_range = \"1m\"\nstride_skip = \"1m\"";
        let mut g = IoGenerator::new(&job(text, 8 << 20), 0);
        for i in 0..400u64 {
            let r = g.next_request();
            let window = (i / 16 % 4) * (2 << 20);
            assert!(
                r.offset >= window && r.offset + r.len <= window + (1 << 20),
                "{i}"
            );
        }
    }

    #[test]
    fn same_seed_same_requests() {
        let j = job("access = \"randrw\"", 1 << 30);
        let a: Vec<_> = {
            let mut g = IoGenerator::new(&j, 2);
            (0..1000).map(|_| g.next_request()).collect()
        };
        let mut g = IoGenerator::new(&j, 2);
        let b: Vec<_> = (0..1000).map(|_| g.next_request()).collect();
        assert_eq!(a, b);
        let mut other = IoGenerator::new(&j, 3);
        assert_ne!(
            a[0..10],
            (0..10).map(|_| other.next_request()).collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn a_skewed_job_concentrates_on_hot_blocks_in_its_span() {
        let blocks = 10_000u64;
        let text = "access = \"randread\"\nduration_s = 1\ndistribution = \"zoned:90/10:10/90\"";
        let mut j = job(text, blocks * 4096);
        j.offset_bytes = 1 << 20;
        let mut g = IoGenerator::new(&j, 0);
        let n = 100_000;
        let mut hot = 0;
        for _ in 0..n {
            let r = g.next_request();
            assert!(r.offset >= 1 << 20 && r.offset + r.len <= (1 << 20) + blocks * 4096);
            assert_eq!(r.offset % 4096, 0);
            hot += u32::from(r.offset < (1 << 20) + blocks * 4096 / 10);
        }
        let share = hot as f64 / n as f64;
        assert!((share - 0.9).abs() < 0.01, "{share}");
        // Zipf's hottest block is the same for both threads of a job, and moves with the seed.
        let hottest = |seed: u64, w: u32| {
            let text = format!(
                "access = \"randread\"\nthreads = 2\nduration_s = 1\nseed = {seed}\n\
                 distribution = \"zipf:1.5\""
            );
            let mut g = IoGenerator::new(&job(&text, 1 << 30), w);
            let mut counts = std::collections::HashMap::new();
            for _ in 0..20_000 {
                *counts.entry(g.next_request().offset).or_insert(0u32) += 1;
            }
            counts.into_iter().max_by_key(|&(_, c)| c).unwrap().0
        };
        assert_eq!(hottest(1, 0), hottest(1, 1));
        assert_ne!(hottest(1, 0), hottest(2, 0));
    }

    #[test]
    fn a_timed_job_with_the_random_map_visits_every_block_before_any_again() {
        let blocks = 4096u64;
        let distinct = |text: &str| {
            let mut g = IoGenerator::new(&job(text, blocks * 4096), 0);
            let mut seen = std::collections::HashSet::new();
            for _ in 0..blocks {
                seen.insert(g.next_request().offset);
            }
            seen.len() as u64
        };
        let timed = "access = \"randread\"\nduration_s = 10";
        assert_eq!(distinct(&format!("{timed}\nrandom_map = true")), blocks);
        // Drawn with replacement, a span's worth of I/Os reaches about 1 - 1/e of the blocks.
        let drawn = distinct(timed) as f64 / blocks as f64;
        assert!((drawn - 0.632).abs() < 0.03, "{drawn}");
    }
}
