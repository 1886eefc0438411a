//! Where a worker's requests come from: a job's generator with its share of the job's limits
//! and rate, or any other [`RequestSource`] (a trace).

use iolab_core::data::DataGenerator;
use iolab_core::job::{byte_share, DataKind, Direction, Job, TrimKind};
use iolab_core::rng::Rng;
use iolab_core::workload::{worker_seed, IoGenerator, IoRequest};

/// A request and the time it is meant to start (ns on the driver's clock), if paced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The request.
    pub req: IoRequest,
    /// Intended start; `None` means "as soon as a queue slot is free".
    pub at_ns: Option<u64>,
}

/// Where a worker's requests come from: a job's generator, or a trace.
pub trait RequestSource {
    /// The next request, or `None` when the source is exhausted.
    fn next_planned(&mut self) -> Option<Planned>;
    /// Schedules paced requests from `t_ns` on (the moment the worker actually starts): the
    /// source's intended times are offsets from it.
    fn start_at(&mut self, t_ns: u64) {
        let _ = t_ns;
    }
    /// Whether requests carry intended start times (rate limits, timed replay).
    fn paced(&self) -> bool {
        false
    }
}

/// A job's requests for one worker, with its share of the job's limits and rate.
#[derive(Clone, Debug)]
pub struct JobSource {
    gen: IoGenerator,
    ios_left: Option<u64>,
    bytes_left: Option<u64>,
    /// Nanoseconds between intended starts when paced by I/O rate.
    ns_per_io: Option<f64>,
    /// Nanoseconds per byte when paced by bandwidth.
    ns_per_byte: Option<f64>,
    /// How long after the job's start this worker's paced schedule begins.
    stagger_ns: f64,
    next_at: f64,
    /// Draws the exponential gaps of Poisson arrivals, where the job asks for them.
    poisson: Option<Rng>,
}

impl RequestSource for JobSource {
    fn paced(&self) -> bool {
        self.ns_per_io.is_some() || self.ns_per_byte.is_some()
    }

    fn start_at(&mut self, t_ns: u64) {
        self.next_at = t_ns as f64 + self.stagger_ns;
    }

    // Always inlined: returned through memory, the request was written field by field and
    // read back 16 bytes at a time, a store-forwarding stall per request (perf).
    #[inline(always)]
    fn next_planned(&mut self) -> Option<Planned> {
        if self.ios_left == Some(0) || self.bytes_left == Some(0) {
            return None;
        }
        let mut req = self.gen.next_request();
        // A TRIM that a write of the same range follows (fio's trimwrite) is not charged:
        // the budget counts the bytes written, so one pass trims and writes the whole span.
        let charged = !(req.dir == Direction::Trim && self.gen.trims_then_writes());
        if let Some(left) = self.bytes_left.as_mut() {
            // The last I/O of a byte budget is the largest of the job's blocks that fits what
            // is left; when none does, the budget is spent (a remainder is not issued: a cut
            // block would not be one of the job's, and a device may refuse it).
            if req.len > *left {
                match self.gen.largest_within(*left) {
                    Some(len) => {
                        req.len = len;
                        self.gen.shrink_pending(len);
                    }
                    None => {
                        *left = 0;
                        return None;
                    }
                }
            }
            if charged {
                *left -= req.len;
            }
        }
        if let Some(left) = self.ios_left.as_mut() {
            *left -= 1;
        }
        let at_ns = if self.ns_per_io.is_some() || self.ns_per_byte.is_some() {
            let at = self.next_at;
            // Both caps hold: the tighter one spaces this request from the next.
            let gap = self
                .ns_per_io
                .unwrap_or(0.0)
                .max(self.ns_per_byte.unwrap_or(0.0) * req.len as f64);
            // A Poisson process: exponential gaps of the same mean (1 − u is never 0).
            let scale = self
                .poisson
                .as_mut()
                .map_or(1.0, |r| -(1.0 - r.unit()).ln());
            self.next_at += gap * scale;
            Some(at as u64)
        } else {
            None
        };
        Some(Planned { req, at_ns })
    }
}

/// One worker of a job: its request source, data and queue depth.
pub struct Worker<S = JobSource> {
    /// Worker index within the job.
    pub index: u32,
    /// Its requests.
    pub source: S,
    /// Fills its write buffers.
    pub data: DataGenerator,
    /// I/Os it keeps in flight.
    pub queue_depth: u32,
    /// Buffers beyond its queue depth, filled with the next writes' data while the device
    /// works (see [`fill_ahead_slots`]); the target is prepared with `queue_depth + spare_slots`
    /// slots for it. 0: buffers are filled as the writes are issued.
    pub spare_slots: u32,
}

/// At most this many bytes of spare buffers per worker.
const FILL_AHEAD_BYTES: u64 = 64 << 20;

/// How many spare buffers a worker of `job` keeps filled ahead on a target that
/// [fills ahead](crate::target::Target::fills_ahead).
///
/// Generating a write's data takes time (a 4 KiB block of random bytes, about half a
/// microsecond). Done as the writes are issued, it sits between the completions a reap
/// returns and the submission of their successors: on a disk that completes requests in
/// bursts, each write of a burst waited for the whole burst's data, and the device saw about
/// one request fewer in flight at a queue depth of 32. Filled while the device works, the
/// data is ready when the slots free up. Only for a job that writes generated data (not
/// zeros or a pattern, which are written into a buffer once) of one block size (a buffer
/// filled for one size would be filled again for another), up to a queue depth's worth of
/// buffers and [`FILL_AHEAD_BYTES`].
pub fn fill_ahead_slots(job: &Job) -> u32 {
    let one_size = job.all_block_sizes().all(|s| s.bytes == job.max_block());
    let generated = job.data != DataKind::Zeros && job.pattern.is_none();
    let writes = job.writes() && job.access.trims() != TrimKind::Only;
    if !(one_size && generated && writes) {
        return 0;
    }
    let by_bytes = (FILL_AHEAD_BYTES / job.max_block().max(1)).max(1);
    by_bytes.min(u64::from(job.queue_depth)) as u32
}

/// The workers of a job whose span is resolved. `start_ns` is when the run begins on the
/// driver's clock (paced requests are scheduled from it).
pub fn plan_workers(job: &Job, start_ns: u64) -> Vec<Worker> {
    let n = job.threads;
    // Budgets in whole granules: a share that is not a multiple of every block size ends in
    // a short I/O, which a device opened with O_DIRECT refuses (EINVAL) and a model would
    // count as a full one.
    let granule = job.granule();
    // The job's rate as one schedule: worker `i` starts `i` intervals of the job's late, so
    // the workers' requests interleave instead of leaving together.
    let by_ios = job.rate_iops.map(|r| 1e9 / r);
    let by_bytes = job
        .rate_bytes_per_s
        .map(|r| 1e9 * granule as f64 / r as f64);
    let job_interval_ns = match (by_ios, by_bytes) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    // The threads of one span share its zones' write pointers.
    let shared_zones = if job.separate_ranges() {
        None
    } else {
        iolab_core::zbd::ZoneTable::for_range(job, job.worker_range(0))
    };
    (0..n)
        .map(|i| {
            let gen = IoGenerator::with_zones(job, i, shared_zones.clone());
            // Without a duration or a limit a job makes one pass over its span; a zoned job
            // that only reads below write pointers has nothing to read.
            let default_bytes = if job.nothing_to_read() {
                Some(0)
            } else if job.one_pass() {
                Some(if job.separate_ranges() {
                    let (lo, hi) = gen.range();
                    byte_share(hi - lo, granule, 1, 0)
                } else {
                    byte_share(job.span(), granule, n, i)
                })
            } else {
                None
            };
            let per_worker_rate = |r: f64| r / n as f64;
            let stagger_ns = job_interval_ns.map_or(0.0, |d| d * i as f64);
            Worker {
                index: i,
                source: JobSource {
                    gen,
                    // I/Os are shared as bytes in granules of one.
                    ios_left: job.ios_limit.map(|t| byte_share(t, 1, n, i)),
                    bytes_left: job
                        .io_limit_bytes
                        .map(|t| byte_share(t, granule, n, i))
                        .filter(|_| !job.nothing_to_read())
                        .or(default_bytes),
                    ns_per_io: job.rate_iops.map(|r| 1e9 / per_worker_rate(r)),
                    ns_per_byte: job
                        .rate_bytes_per_s
                        .map(|r| 1e9 / per_worker_rate(r as f64)),
                    stagger_ns,
                    next_at: start_ns as f64 + stagger_ns,
                    poisson: job
                        .rate_poisson
                        .then(|| Rng::new(worker_seed(job.seed, i) ^ 0x9015_5011)),
                },
                data: DataGenerator::new(job, worker_seed(job.seed, i)),
                queue_depth: job.queue_depth,
                spare_slots: 0,
            }
        })
        .collect()
}
