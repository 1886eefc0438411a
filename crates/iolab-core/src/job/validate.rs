//! [`JobSpec::validate`]: the checks of a spec, one concern per method, run in a fixed order
//! (the order decides which error a spec with several faults reports, so it is kept as is):
//! the read/write mix, block sizes, concurrency and offset, timing, content, budgets, verify,
//! the offset distribution, pacing, sequential and random offsets, strides; then the job is
//! built (with its schedule) and its sections and span are checked.

use super::{
    parse_bssplit_rw, Access, BufferedHint, DataKind, Job, JobError, JobSpec, SizeShare, Stride,
    VerifyMode, MAX_SECONDS, MIN_DIRECT_ALIGN, MIN_RATE_IOPS,
};
use crate::size::format_size;
use crate::skew::Distribution;

/// Checks every rule of `spec` and resolves its defaults, suggesting buffered I/O for an
/// unaligned size as `hint` says.
pub(super) fn validate(spec: &JobSpec, hint: BufferedHint) -> Result<Job, JobError> {
    let check = Check {
        spec,
        name: spec.name.clone().unwrap_or_else(|| "job".to_string()),
        hint,
    };
    let (access, read_pct) = check.mix()?;
    check.trims(access)?;
    let sizes = check.sizes()?;
    let (queue_depth, threads, offset_bytes) = check.concurrency(sizes.direct)?;
    let timing = check.timing()?;
    let content = check.content(access)?;
    check.budgets(&sizes.block_sizes)?;
    check.verify(read_pct, &sizes.block_sizes)?;
    let distribution = check.distribution()?;
    let (start_delay_s, rate_poisson) = check.pacing(timing.rate_iops)?;
    let (random_run, seq_skip, block_align) = check.offsets(sizes.direct)?;
    let stride = check.stride(&sizes, &distribution)?;
    let name = check.name.clone();
    let mut job = Job {
        name: name.clone(),
        access,
        read_pct,
        random_pct: content.random_pct,
        block_sizes: sizes.block_sizes,
        write_block_sizes: sizes.write_block_sizes,
        queue_depth,
        threads,
        offset_bytes,
        span_bytes: None,
        zones: spec.zones.unwrap_or(false),
        duration_s: timing.duration_s,
        ramp_s: timing.ramp_s,
        io_limit_bytes: spec.io_limit.map(|b| b.0),
        ios_limit: spec.ios_limit,
        direct: sizes.direct,
        data: content.data,
        pattern: content.pattern,
        compress_pct: content.compress_pct,
        dedupe_pct: content.dedupe_pct,
        rate_iops: timing.rate_iops,
        rate_bytes_per_s: spec.rate_bytes_per_s.map(|b| b.0),
        seed: spec.seed.unwrap_or(1),
        continue_on_error: spec.continue_on_error.unwrap_or(false),
        random_map: spec.random_map.unwrap_or(false),
        drain_end: spec.drain_end.unwrap_or(false),
        verify: spec.verify.unwrap_or_default(),
        distribution,
        start_delay_s,
        rate_poisson,
        seq_skip,
        random_run,
        stride,
        block_align,
        schedule: crate::schedule::Schedule::of(spec, &name)?,
        steady_stop: spec.steady_stop.clone(),
        io_priority: spec.io_priority.clone(),
        latency_target: spec.latency_target.clone(),
        sync: spec.sync.clone(),
        dedupe_set: spec.dedupe_set.clone(),
        sprandom: spec.sprandom.clone(),
        thread_offset: spec.thread_offset.map_or(0, |b| b.0),
        zoned: spec.zoned.clone(),
    };
    check.sections(&job)?;
    check.span(&mut job)?;
    Ok(job)
}

/// One validation: the spec, the job's name (for errors) and the hint for unaligned sizes.
struct Check<'a> {
    spec: &'a JobSpec,
    name: String,
    hint: BufferedHint,
}

/// The block sizes as resolved, and whether I/O is direct (which decides what they must align to).
struct Sizes {
    block_sizes: Vec<SizeShare>,
    write_block_sizes: Vec<SizeShare>,
    direct: bool,
}

/// How long a job runs and how fast it may issue.
struct Timing {
    duration_s: Option<f64>,
    rate_iops: Option<f64>,
    ramp_s: f64,
}

/// What a job writes, and how much of its access is random.
struct Content {
    compress_pct: f64,
    random_pct: f64,
    dedupe_pct: f64,
    data: DataKind,
    pattern: Option<Vec<u8>>,
}

impl Check<'_> {
    /// The error for `key`.
    fn fail(&self, key: &'static str, message: String) -> JobError {
        JobError {
            job: self.name.clone(),
            key,
            message,
        }
    }

    /// `v` if it is a positive number (or not given).
    fn positive(&self, key: &'static str, v: Option<f64>) -> Result<Option<f64>, JobError> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Err(self.fail(key, format!("{x} must be a positive number")))
            }
            _ => Ok(v),
        }
    }

    /// `v` (0 if not given) if it is a percentage.
    fn pct(&self, key: &'static str, v: Option<f64>) -> Result<f64, JobError> {
        let v = v.unwrap_or(0.0);
        if (0.0..=100.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.fail(key, format!("{v} is outside 0–100")))
        }
    }

    /// The access and its read share.
    fn mix(&self) -> Result<(Access, f64), JobError> {
        let access = self.spec.access.unwrap_or(Access::RandRead);
        let read_pct = match (access.fixed_read_pct(), self.spec.read_pct) {
            (Some(fixed), None) => fixed,
            (Some(fixed), Some(p)) if (p - fixed).abs() < 1e-9 => fixed,
            (Some(_), Some(_)) => {
                return Err(self.fail(
                    "read_pct",
                    format!(
                        "only mixed access (rw, randrw) takes a read share; access is {access:?}"
                    ),
                ))
            }
            (None, p) => p.unwrap_or(50.0),
        };
        if !(0.0..=100.0).contains(&read_pct) {
            return Err(self.fail("read_pct", format!("{read_pct} is outside 0–100")));
        }
        Ok((access, read_pct))
    }

    /// The block sizes of reads and of writes (`block_size` or `bssplit`), resolved.
    fn sizes(&self) -> Result<Sizes, JobError> {
        let (read_split, write_split) = match (&self.spec.block_size, &self.spec.bssplit) {
            (Some(_), Some(_)) => {
                return Err(self.fail(
                    "bssplit",
                    "give either block_size or bssplit, not both".into(),
                ))
            }
            (None, Some(split)) => parse_bssplit_rw(split).map_err(|e| self.fail("bssplit", e))?,
            (bs, None) => (
                Some(vec![SizeShare {
                    bytes: bs.map_or(4096, |b| b.0),
                    weight: 100.0,
                }]),
                None,
            ),
        };
        let key = if self.spec.bssplit.is_some() {
            "bssplit"
        } else {
            "block_size"
        };
        let direct = self.spec.direct.unwrap_or(true);
        let default = || {
            vec![SizeShare {
                bytes: 4096,
                weight: 100.0,
            }]
        };
        let block_sizes = resolve_split(read_split.unwrap_or_else(default), direct, self.hint)
            .map_err(|e| self.fail(key, e))?;
        let write_block_sizes = match write_split {
            Some(w) => resolve_split(w, direct, self.hint).map_err(|e| self.fail(key, e))?,
            None => Vec::new(),
        };
        Ok(Sizes {
            block_sizes,
            write_block_sizes,
            direct,
        })
    }

    /// The queue depth, the threads and the offset the span starts at.
    fn concurrency(&self, direct: bool) -> Result<(u32, u32, u64), JobError> {
        let queue_depth = self.spec.queue_depth.unwrap_or(1);
        if queue_depth == 0 || queue_depth > 4096 {
            return Err(self.fail("queue_depth", format!("{queue_depth} is outside 1–4096")));
        }
        let threads = self.spec.threads.unwrap_or(1);
        if threads == 0 || threads > 1024 {
            return Err(self.fail("threads", format!("{threads} is outside 1–1024")));
        }
        let offset_bytes = self.spec.offset.map_or(0, |o| o.0);
        if direct && offset_bytes % MIN_DIRECT_ALIGN != 0 {
            return Err(self.fail("offset", format!("{offset_bytes} is not sector-aligned (multiple of {MIN_DIRECT_ALIGN}) as O_DIRECT needs")));
        }
        Ok((queue_depth, threads, offset_bytes))
    }

    /// The duration, the ramp and the I/O rate.
    fn timing(&self) -> Result<Timing, JobError> {
        let duration_s = self.positive("duration_s", self.spec.duration_s)?;
        let rate_iops = self.positive("rate_iops", self.spec.rate_iops)?;
        if let Some(r) = rate_iops.filter(|&r| r < MIN_RATE_IOPS) {
            // Slower has no use, and far slower cannot be scheduled: 1e-320 IOPS spaces the
            // I/Os an infinite time apart, and the schedule became NaN.
            return Err(self.fail(
                "rate_iops",
                format!(
                    "{r:e} is below the slowest rate a job can be paced at, one I/O per hour \
                     ({MIN_RATE_IOPS:.6}); raise it, or drop rate_iops"
                ),
            ));
        }
        let ramp_s = self.spec.ramp_s.unwrap_or(0.0);
        if !(ramp_s.is_finite() && ramp_s >= 0.0) {
            return Err(self.fail("ramp_s", format!("{ramp_s} must be zero or more seconds")));
        }
        for (key, seconds) in [
            ("duration_s", duration_s.unwrap_or(0.0)),
            ("ramp_s", ramp_s),
        ] {
            if seconds > MAX_SECONDS {
                // 1e308 written out is 309 digits: past the limit, a power of ten reads better.
                let given = if seconds < 1e12 {
                    format!("{seconds}")
                } else {
                    format!("{seconds:e}")
                };
                return Err(self.fail(
                    key,
                    format!("{given} s is more than the {MAX_SECONDS} s a run may last"),
                ));
            }
        }
        if self.spec.drain_end == Some(true) && duration_s.is_none() {
            return Err(self.fail(
                "drain_end",
                "only a timed job has an end to drain: set duration_s, or drop drain_end".into(),
            ));
        }
        if ramp_s > 0.0 && duration_s.is_none() {
            // The ramp's I/Os would come out of the budget it is meant to measure (a ramp
            // longer than the job left nothing measured).
            return Err(self.fail(
                "ramp_s",
                "a ramp needs a timed job: set duration_s, or drop ramp_s from a job that \
                 ends by io_limit, ios_limit or one pass over its span"
                    .into(),
            ));
        }
        if ramp_s > 0.0 && (self.spec.io_limit.is_some() || self.spec.ios_limit.is_some()) {
            // The same with a duration too: the budget counts the ramp's I/Os, so a ramp
            // that spends it leaves nothing measured (0.00 s measured, "complete").
            let key = if self.spec.ios_limit.is_some() {
                "ios_limit"
            } else {
                "io_limit"
            };
            return Err(self.fail(
                key,
                format!(
                    "a budget of I/Os is spent from the start, ramp_s included, so the ramp \
                     could leave nothing to measure: drop {key}, or drop ramp_s"
                ),
            ));
        }
        Ok(Timing {
            duration_s,
            rate_iops,
            ramp_s,
        })
    }

    /// What a TRIM job cannot do: verify, whose stamps a TRIM drops unchecked (fio refuses
    /// verify with trims too).
    fn trims(&self, access: Access) -> Result<(), JobError> {
        if access.trims() != super::TrimKind::None && self.spec.verify.is_some_and(|v| !v.is_off())
        {
            return Err(self.fail(
                "verify",
                format!(
                    "access {access:?} TRIMs, which drops blocks verify would check; verify a \
                     write job (write, randwrite, rw, randrw) instead"
                ),
            ));
        }
        Ok(())
    }

    /// The data written (kind, compressibility, duplicates, pattern) and the random share.
    fn content(&self, access: Access) -> Result<Content, JobError> {
        let compress_pct = self.pct("compress_pct", self.spec.compress_pct)?;
        let random_pct = match self.spec.random_pct {
            Some(_) => self.pct("random_pct", self.spec.random_pct)?,
            None if access.is_random() => 100.0,
            None => 0.0,
        };
        let dedupe_pct = self.pct("dedupe_pct", self.spec.dedupe_pct)?;
        let data = self.spec.data.unwrap_or_default();
        if data == DataKind::Zeros && (compress_pct > 0.0 || dedupe_pct > 0.0) {
            return Err(self.fail("data", "zeros are already fully compressible and duplicate; drop compress_pct/dedupe_pct or use data = \"random\"".into()));
        }
        let pattern = match &self.spec.pattern {
            Some(p) => Some(crate::pattern::parse(p).map_err(|e| self.fail("pattern", e))?),
            None => None,
        };
        if pattern.is_some() && (compress_pct > 0.0 || dedupe_pct > 0.0 || self.spec.data.is_some())
        {
            return Err(self.fail("pattern", "a pattern is the whole content of every block; drop data, compress_pct and dedupe_pct".into()));
        }
        Ok(Content {
            compress_pct,
            random_pct,
            dedupe_pct,
            data,
            pattern,
        })
    }

    /// The byte and I/O budgets and the byte rate: each must let the job issue something.
    fn budgets(&self, block_sizes: &[SizeShare]) -> Result<(), JobError> {
        let smallest = block_sizes.iter().map(|s| s.bytes).min().unwrap_or(4096);
        if let Some(limit) = self.spec.io_limit.filter(|b| b.0 < smallest) {
            return Err(self.fail(
                "io_limit",
                format!(
                    "{} is less than one block of {}; make it at least the block size",
                    format_size(limit.0),
                    format_size(smallest)
                ),
            ));
        }
        if self.spec.ios_limit == Some(0) {
            return Err(self.fail("ios_limit", "0 I/Os would issue nothing".into()));
        }
        if self.spec.rate_bytes_per_s.is_some_and(|b| b.0 == 0) {
            return Err(self.fail(
                "rate_bytes_per_s",
                "a rate of 0 would issue nothing; give at least 1 byte per second".into(),
            ));
        }
        Ok(())
    }

    /// `verify` against the job's mix and block sizes.
    fn verify(&self, read_pct: f64, block_sizes: &[SizeShare]) -> Result<(), JobError> {
        let verify = self.spec.verify;
        if verify == Some(VerifyMode::Reads) && read_pct < 100.0 {
            return Err(self.fail(
                "verify",
                "`reads` checks what a read-only job reads; this job writes too: use end or \
                 inline to check its own writes"
                    .into(),
            ));
        }
        if verify.is_some_and(|v| !v.is_off()) {
            if read_pct >= 100.0 && verify != Some(VerifyMode::Reads) {
                return Err(self.fail(
                    "verify",
                    "this job only reads, and verify checks what a job writes; give a write \
                     access (write, randwrite, rw, randrw), verify = \"reads\" to check what it \
                     reads, or `iolab verify TARGET` to check what an earlier run wrote"
                        .into(),
                ));
            }
            if let Some(b) = block_sizes.iter().find(|s| s.bytes % 512 != 0) {
                return Err(self.fail(
                    "verify",
                    format!(
                        "block size {} is not a multiple of 512 bytes, and verify stamps every \
                         512-byte sector; use whole sectors",
                        b.bytes
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The distribution of random offsets.
    fn distribution(&self) -> Result<Distribution, JobError> {
        let distribution: Distribution = match &self.spec.distribution {
            Some(d) => d.parse().map_err(|e| self.fail("distribution", e))?,
            None => Distribution::Uniform,
        };
        if !distribution.is_uniform() && self.spec.random_map == Some(true) {
            // A skewed draw repeats hot blocks by design; a map that forbids repeats undoes it.
            return Err(self.fail(
                "distribution",
                format!(
                    "{distribution} hits some blocks more often than others, which the random \
                     map (random_map = true) forbids; drop random_map"
                ),
            ));
        }
        Ok(distribution)
    }

    /// The start delay and whether arrivals are Poisson.
    fn pacing(&self, rate_iops: Option<f64>) -> Result<(f64, bool), JobError> {
        let start_delay_s = self.spec.start_delay_s.unwrap_or(0.0);
        if !(start_delay_s.is_finite() && (0.0..=86_400.0).contains(&start_delay_s)) {
            return Err(self.fail(
                "start_delay_s",
                format!("{start_delay_s} must be zero or more seconds, at most a day (86400)"),
            ));
        }
        let rate_poisson = self.spec.rate_poisson.unwrap_or(false);
        if rate_poisson && rate_iops.is_none() && self.spec.rate_bytes_per_s.is_none() {
            return Err(self.fail(
                "rate_poisson",
                "Poisson arrivals pace a rate: set rate_iops or rate_bytes_per_s, or drop \
                 rate_poisson"
                    .into(),
            ));
        }
        Ok((start_delay_s, rate_poisson))
    }

    /// The I/Os per random jump, the sequential skip and the random offsets' alignment.
    fn offsets(&self, direct: bool) -> Result<(u32, i64, u64), JobError> {
        let random_run = self.spec.random_run.unwrap_or(1);
        if random_run == 0 {
            return Err(self.fail(
                "random_run",
                "0 I/Os per random jump; give 1 or more".into(),
            ));
        }
        let seq_skip = self.spec.seq_skip.unwrap_or(0);
        if direct && seq_skip % MIN_DIRECT_ALIGN as i64 != 0 {
            return Err(self.fail(
                "seq_skip",
                format!(
                    "{seq_skip} bytes is not a multiple of {MIN_DIRECT_ALIGN}, the sector size, \
                     which O_DIRECT needs; {}",
                    self.hint.fix(MIN_DIRECT_ALIGN)
                ),
            ));
        }
        let block_align = self.spec.block_align.map_or(0, |a| a.0);
        if self.spec.block_align.is_some()
            && (block_align == 0 || (direct && block_align % MIN_DIRECT_ALIGN != 0))
        {
            return Err(self.fail(
                "block_align",
                format!(
                    "{block_align} bytes: random offsets need a positive alignment, a multiple \
                     of {MIN_DIRECT_ALIGN} for O_DIRECT"
                ),
            ));
        }
        Ok((random_run, seq_skip, block_align))
    }

    /// Strided access: windows that must hold a block, start on sectors and draw uniformly.
    fn stride(
        &self,
        sizes: &Sizes,
        distribution: &Distribution,
    ) -> Result<Option<Stride>, JobError> {
        let spec = self.spec;
        let (io, range, skip) = match (spec.stride_io, spec.stride_range, spec.stride_skip) {
            (None, None, None) => return Ok(None),
            (None, _, _) => {
                let key = if spec.stride_range.is_some() {
                    "stride_range"
                } else {
                    "stride_skip"
                };
                return Err(self.fail(
                    key,
                    "strided access needs stride_io, the bytes done in each window".into(),
                ));
            }
            (Some(io), range, skip) => (io, range, skip),
        };
        let stride = Stride {
            io_bytes: io.0,
            range_bytes: range.map_or(io.0, |r| r.0),
            skip_bytes: skip.map_or(0, |s| s.0),
        };
        let largest = sizes
            .block_sizes
            .iter()
            .chain(&sizes.write_block_sizes)
            .map(|s| s.bytes)
            .max()
            .unwrap_or(4096);
        if stride.io_bytes == 0 || stride.range_bytes < largest {
            return Err(self.fail(
                "stride_range",
                format!(
                    "a window of {} bytes with {} bytes done in it cannot hold a block of {}; \
                     make both at least the block size",
                    stride.range_bytes,
                    stride.io_bytes,
                    format_size(largest)
                ),
            ));
        }
        if sizes.direct && (stride.range_bytes + stride.skip_bytes) % MIN_DIRECT_ALIGN != 0 {
            return Err(self.fail(
                "stride_skip",
                format!(
                    "windows {} bytes apart do not start on {MIN_DIRECT_ALIGN}-byte sectors, \
                     which O_DIRECT needs",
                    stride.range_bytes + stride.skip_bytes
                ),
            ));
        }
        if !distribution.is_uniform() {
            return Err(self.fail(
                "distribution",
                "a skewed distribution spans the whole span; strided access draws uniformly \
                 in its window: drop one of them"
                    .into(),
            ));
        }
        Ok(Some(stride))
    }

    /// The sections (sprandom, dedupe_set, sync, latency_target, io_priority, steady_stop),
    /// each against its own rules and SPRandom against the built job.
    fn sections(&self, job: &Job) -> Result<(), JobError> {
        let spec = self.spec;
        if let Some(spr) = &spec.sprandom {
            spr.check().map_err(|e| self.fail("sprandom", e))?;
            let single = job.access == Access::RandWrite
                && job.random_pct >= 100.0
                && job.threads == 1
                && job.all_block_sizes().count() == 1
                && job.stride.is_none()
                && job.random_run <= 1
                && job.distribution.is_uniform();
            if !single {
                return Err(self.fail(
                    "sprandom",
                    "SPRandom is one thread of random writes of one block size, uniform and \
                     not strided; use access = \"randwrite\", threads = 1 and one block size"
                        .into(),
                ));
            }
        }
        if job.thread_offset > 0 {
            if job.zones {
                return Err(self.fail(
                    "thread_offset",
                    "zones = true already lays the threads' spans side by side: drop one".into(),
                ));
            }
            if job.direct && job.thread_offset % MIN_DIRECT_ALIGN != 0 {
                return Err(self.fail(
                    "thread_offset",
                    format!(
                        "{} bytes apart, the threads' spans do not start on                          {MIN_DIRECT_ALIGN}-byte sectors, which O_DIRECT needs",
                        job.thread_offset
                    ),
                ));
            }
        }
        if let Some(z) = &job.zoned {
            z.check(job).map_err(|e| self.fail("zoned", e))?;
        }
        if let Some(d) = &spec.dedupe_set {
            d.check().map_err(|e| self.fail("dedupe_set", e))?;
        }
        if let Some(s) = &spec.sync {
            s.check().map_err(|e| self.fail("sync", e))?;
        }
        if let Some(t) = &spec.latency_target {
            t.check().map_err(|e| self.fail("latency_target", e))?;
        }
        if let Some(p) = &spec.io_priority {
            p.priorities().map_err(|e| self.fail("io_priority", e))?;
        }
        if let Some(stop) = &spec.steady_stop {
            stop.check().map_err(|e| self.fail("steady_stop", e))?;
        }
        Ok(())
    }

    /// The span (`size`), whose end must be a byte count too: past 2^64 it would wrap to a
    /// small one.
    fn span(&self, job: &mut Job) -> Result<(), JobError> {
        if let Some(size) = self.spec.size {
            let offset_bytes = job.offset_bytes;
            if offset_bytes.checked_add(size.0).is_none() {
                return Err(self.fail(
                    "size",
                    format!(
                        "offset {offset_bytes} + size {} is past the largest byte count \
                         (2^64 - 1); shrink size or offset",
                        size.0
                    ),
                ));
            }
            job.set_span(size.0)?;
        }
        Ok(())
    }
}

/// Checks a split's sizes and weights, drops sizes of no weight and normalises the weights.
fn resolve_split(
    mut sizes: Vec<SizeShare>,
    direct: bool,
    hint: BufferedHint,
) -> Result<Vec<SizeShare>, String> {
    let total_weight: f64 = sizes.iter().map(|s| s.weight).sum();
    if sizes
        .iter()
        .any(|s| !(s.weight.is_finite() && s.weight >= 0.0))
        || !(total_weight.is_finite() && total_weight > 0.0)
    {
        return Err("weights must be finite numbers, none negative, not all zero".into());
    }
    // A size of no weight is never issued, so it must not decide anything either: the
    // smallest size sets the offsets' alignment and the granule budgets are cut in.
    sizes.retain(|s| s.weight > 0.0);
    for s in &sizes {
        if s.bytes == 0 {
            return Err("a block size of 0 bytes cannot be issued; use e.g. 4k".into());
        }
        if s.bytes > (1 << 30) {
            return Err(format!(
                "{} is above the 1 GiB limit per I/O",
                format_size(s.bytes)
            ));
        }
        if direct && s.bytes % MIN_DIRECT_ALIGN != 0 {
            return Err(format!(
                "{} bytes is not a multiple of {MIN_DIRECT_ALIGN}, the sector size, which \
                 O_DIRECT needs; {}",
                s.bytes,
                hint.fix(MIN_DIRECT_ALIGN)
            ));
        }
    }
    Ok(sizes
        .into_iter()
        .map(|s| SizeShare {
            bytes: s.bytes,
            weight: s.weight / total_weight,
        })
        .collect())
}
