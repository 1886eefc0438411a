//! iolab-sim: drives and host paths modelled in virtual time.
//!
//! `sim:DRIVE@PLATFORM[/PORT]` names a drive from the catalog attached to a port of a platform
//! (`sim:ssd750-1200@z97/cpu`). [`open`] builds the model; [`SimSetup::run_job`] runs any job
//! through the shared driver (iolab-drive) over a [`SimTarget`] and a [`VirtualClock`], so results
//! have the same schema as a real run and are marked modelled. The drive's state (FTL mapping,
//! GC pools) persists across the jobs of one setup, so a fill followed by a measurement works
//! as on a real drive.
//!
//! ```text
//!  Job ─▶ driver (iolab-drive) ─▶ SimTarget ─▶ World: driver latency → RAID/tier split →
//!        links (DMI, PCIe, SATA) → HBA → SSD (cores, buffer, FTL+GC, channels × dies) | HDD
//! ```
//!
//! Everything is deterministic for a seed: one thread, integer nanoseconds, events ordered by
//! `(time, sequence)`, every random choice from a seeded generator.
//!
//! ```no_run
//! use iolab_core::job::JobSpec;
//! let mut sim = iolab_sim::open("sim:ssd750-1200@z97", None).unwrap();
//! sim.precondition_fill();
//! let job = toml::from_str::<JobSpec>("access = \"randread\"\nqueue_depth = 32\nduration_s = 1")
//!     .unwrap()
//!     .validate()
//!     .unwrap();
//! let run = sim.run_job(&job, None).unwrap();
//! println!("{:.0} IOPS", run.result.read.iops);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod buffered;
mod build;
mod calib;
pub mod catalog;
mod describe;
mod earliest;
pub mod figures;
pub mod ftl;
mod lpn_map;
pub mod model;
pub mod power_loss;
mod run_target;
mod target;
mod timeq;

pub use calib::{calibrate, validate, CalibrationRow, Selection};
pub use describe::explain;
pub use target::SimTarget;

use catalog::Catalog;
use iolab_core::job::Job;
use iolab_core::result::CpuResult;
use iolab_drive::clock::{Clock, VirtualClock};
use iolab_drive::driver::{drive, plan_workers, DriveOptions, RequestSource, Worker};
use iolab_drive::hint::CacheHint;
use iolab_drive::run::{job_result, JobRun, SERIES_INTERVAL_NS};
use model::{Dev, ResKind, World};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Why a model could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The target spec is not `sim:DRIVE@PLATFORM[/PORT]`.
    #[error("'{spec}' is not a model target: use sim:DRIVE@PLATFORM[/PORT], e.g. sim:ssd750-1200@z97/cpu")]
    Spec {
        /// What was given.
        spec: String,
    },
    /// A catalog file does not parse.
    #[error("{file}: {message}")]
    Parse {
        /// The file.
        file: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A catalog entry is inconsistent.
    #[error("{file}: {key}: {message}")]
    Catalog {
        /// The file.
        file: String,
        /// The key at fault.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A catalog directory could not be read.
    // The cause is part of the message and deliberately not a `source()`, so `{:#}` chains do
    // not print it twice.
    #[error("reading {path}: {cause}")]
    Io {
        /// The path.
        path: String,
        /// The cause.
        cause: std::io::Error,
    },
    /// No such drive.
    #[error("unknown drive '{name}'; the catalog has: {known}")]
    UnknownDrive {
        /// Asked for.
        name: String,
        /// Known drives.
        known: String,
    },
    /// No such platform.
    #[error("unknown platform '{name}'; the catalog has: {known}")]
    UnknownPlatform {
        /// Asked for.
        name: String,
        /// Known platforms.
        known: String,
    },
    /// No such port.
    #[error("platform '{platform}' has no port '{name}'; its ports: {known}")]
    UnknownPort {
        /// Platform.
        platform: String,
        /// Asked for.
        name: String,
        /// Known ports.
        known: String,
    },
    /// The drive cannot attach to the port.
    #[error("drive '{drive}' cannot be used here: {message}")]
    Incompatible {
        /// The drive.
        drive: String,
        /// Why.
        message: String,
    },
}

/// What one job did to the model: power and the busiest resource (the result's own type).
pub use iolab_core::model_info::ModelTest as TestReport;

/// A built model, ready to run jobs.
pub struct SimSetup {
    spec: String,
    drive: String,
    platform: String,
    port: String,
    driver: String,
    catalog: Catalog,
    world: World,
    clock: VirtualClock,
    tests: Vec<TestReport>,
    state: String,
    power_cut: Option<power_loss::PowerCut>,
    /// The host's prefetch, which the engine supplies ([`SimSetup::set_cache_hint`]).
    cache_hint: CacheHint,
}

/// Parses `sim:DRIVE@PLATFORM[/PORT]` (the `sim:` prefix is optional).
pub fn parse_spec(spec: &str) -> Result<(String, String, Option<String>), SimError> {
    let s = spec.strip_prefix("sim:").unwrap_or(spec);
    let err = || SimError::Spec {
        spec: spec.to_string(),
    };
    let (drive, rest) = s.split_once('@').ok_or_else(err)?;
    let (platform, port) = match rest.split_once('/') {
        Some((p, port)) => (p, Some(port.to_string())),
        None => (rest, None),
    };
    if drive.is_empty() || platform.is_empty() || port.as_deref() == Some("") {
        return Err(err());
    }
    Ok((drive.to_string(), platform.to_string(), port))
}

/// Builds the model named by `spec` from the built-in catalog plus the TOML files under
/// `catalog_dir` (`drives/*.toml`, `platforms/*.toml`).
pub fn open(spec: &str, catalog_dir: Option<&Path>) -> Result<SimSetup, SimError> {
    let catalog = Catalog::load(catalog_dir)?;
    open_with(spec, catalog)
}

/// [`open`] with an already loaded catalog.
pub fn open_with(spec: &str, catalog: Catalog) -> Result<SimSetup, SimError> {
    let (drive, platform, port) = parse_spec(spec)?;
    let built = build::build(&catalog, &drive, &platform, port.as_deref(), 0x5EED)?;
    let has_ssd = built
        .world
        .leaves
        .iter()
        .any(|l| matches!(l.dev, Dev::Ssd(_)));
    Ok(SimSetup {
        spec: format!("sim:{drive}@{platform}/{}", built.port),
        drive,
        platform,
        port: built.port,
        driver: built.driver,
        catalog,
        world: built.world,
        clock: VirtualClock::new(),
        tests: Vec::new(),
        state: if has_ssd {
            "empty (secure-erased)"
        } else {
            NO_SSD_STATE
        }
        .into(),
        power_cut: None,
        cache_hint: CacheHint::NONE,
    })
}

/// The state of a model without an SSD: a hard disk runs the same whatever it holds, so no
/// state is set (a result said "steady state of random writes (analytic)" of a hard disk).
const NO_SSD_STATE: &str = "hard disk: runs the same whatever it holds (no SSD state to set)";

#[derive(Clone, Default)]
struct Snapshot {
    t: u64,
    busy: Vec<u64>,
    /// Resources that may be busy with work no host I/O waits for (a power budget spent on
    /// reads it never holds, an actuator destaging the write cache), each with a count of the
    /// times host work did wait for it: a job during which that count did not move was not
    /// limited by it, however busy it was.
    host_waits: Vec<(usize, u64)>,
    energy_j: f64,
    host_bytes: u64,
    nand_bytes: u64,
    ssd_read_bytes: u64,
    buffer_read_bytes: u64,
}

impl SimSetup {
    /// Bytes the host sees.
    pub fn size_bytes(&self) -> u64 {
        self.world.size()
    }

    /// Logical block size.
    pub fn logical_block_bytes(&self) -> u64 {
        512
    }

    /// The canonical spec (`sim:DRIVE@PLATFORM/PORT`).
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The model as a [`Target`](iolab_drive::target::Target) on its own virtual clock, for
    /// callers that drive the seam themselves (the target contract tests).
    pub fn target(&mut self, needs_data: bool) -> SimTarget<'_> {
        let size = self.world.size();
        SimTarget::new(&mut self.world, self.clock.clone(), size, needs_data)
            .with_cache_hint(self.cache_hint)
    }

    /// Prefetches with `hint` from now on (the engine's prefetch instruction, which the
    /// command line gives every model it opens): the same results, sooner on a large drive.
    pub fn set_cache_hint(&mut self, hint: CacheHint) {
        self.cache_hint = hint;
    }

    /// Whether the model looks at written data (compression).
    pub fn needs_data(&self) -> bool {
        self.world.needs_data()
    }

    /// Reports of the jobs run so far.
    pub fn tests(&self) -> &[TestReport] {
        &self.tests
    }

    /// Whether the model has an SSD (a drive, a member or a tier's), whose state the
    /// preconditioning sets.
    fn has_ssd(&self) -> bool {
        self.world
            .leaves
            .iter()
            .any(|l| matches!(l.dev, Dev::Ssd(_)))
    }

    /// Whether garbage collection has moved valid data on any SSD of the model since it was
    /// opened: write figures from then on come from the regime the validation set checks least
    /// well ([`figures::steady_state_validation`]).
    pub fn has_collected(&self) -> bool {
        self.world
            .leaves
            .iter()
            .any(|l| matches!(&l.dev, Dev::Ssd(s) if s.ftl.counters.gc_units > 0))
    }

    /// Puts every SSD in the state a full sequential fill leaves, analytically (seconds, not
    /// hours): every LBA holds data, blocks are full, only the spare area is free.
    pub fn precondition_fill(&mut self) {
        if !self.has_ssd() {
            return;
        }
        // What an earlier steady state carried is not the next job's.
        self.charge_carried(u64::MAX);
        for l in &mut self.world.leaves {
            if let Dev::Ssd(s) = &mut l.dev {
                let stripe = s.stripe_lpns();
                s.ftl.fill_sequential(stripe);
                s.reset_buffer();
            }
        }
        self.state = "full (sequential fill, analytic)".into();
    }

    /// Puts every SSD in the steady state of full-span 4 KiB random writes under greedy GC,
    /// analytically (the valid-page distribution of the mean-field model), with its dies at
    /// different points of their collection cycle, as writing would have left them.
    pub fn precondition_steady(&mut self) {
        if !self.has_ssd() {
            return;
        }
        // What an earlier steady state carried is not the next job's.
        self.charge_carried(u64::MAX);
        let now = self.clock.now_ns();
        let World { leaves, res, .. } = &mut self.world;
        for l in leaves {
            if let Dev::Ssd(s) = &mut l.dev {
                let stripe = s.stripe_lpns();
                s.ftl.fill_steady(stripe);
                s.reset_buffer();
                s.stagger_collections(res, now);
            }
        }
        self.state = "steady state of random writes (analytic)".into();
    }

    /// TRIMs the whole drive (secure erase on drives without TRIM pass-through is modelled
    /// the same way) and says what it did: a hard disk, or an SSD without TRIM, keeps its data.
    pub fn trim_all(&mut self) -> String {
        let (trimmed, kept) = self.world.trim_all();
        match (trimmed.is_empty(), kept.is_empty()) {
            (false, true) => {
                self.state = "empty (trimmed)".into();
                "TRIM of the whole modelled drive".into()
            }
            (true, _) => format!(
                "nothing to TRIM: {} keeps its data (a hard disk, or an SSD without TRIM)",
                kept.join(", ")
            ),
            (false, false) => {
                self.state = format!(
                    "{} trimmed; {} as before",
                    trimmed.join(", "),
                    kept.join(", ")
                );
                format!(
                    "TRIM of {}; {} has no TRIM and keeps its data",
                    trimmed.join(", "),
                    kept.join(", ")
                )
            }
        }
    }

    /// Records the state a job left the drive in (e.g. a fill run as a job), for the results.
    pub fn set_state(&mut self, state: impl Into<String>) {
        self.state = state.into();
    }

    /// Charges every SSD's carried collection work that has run by `now`.
    fn charge_carried(&mut self, now: u64) {
        let World { leaves, res, .. } = &mut self.world;
        for l in leaves {
            if let Dev::Ssd(s) = &mut l.dev {
                s.charge_carried(res, now);
            }
        }
    }

    /// The counters at this moment. Work booked to run later is not in them yet: a report
    /// of the job between two snapshots holds the work that ran during the job.
    fn snapshot(&self) -> Snapshot {
        let now = self.clock.now_ns();
        let mut busy: Vec<u64> = self.world.res.iter().map(|r| r.busy_ns).collect();
        let mut energy = 0.0;
        let mut host = 0;
        let mut nand = 0;
        let (mut ssd_read, mut buffer_read) = (0, 0);
        let mut host_waits = Vec::new();
        for l in &self.world.leaves {
            match &l.dev {
                Dev::Ssd(s) => {
                    if let Some(limit) = s.power_limit() {
                        host_waits.push((limit.resource() as usize, limit.held));
                    }
                    let ahead = s.booked_ahead(now);
                    for &(r, ns) in &ahead.busy {
                        busy[r as usize] = busy[r as usize].saturating_sub(ns);
                    }
                    let p = &s.power;
                    energy += p.joules(s.energy.less(ahead.energy))
                        + (s.awake.ns_at(now) as f64 * p.active_w
                            + s.controller_busy(&self.world.res) as f64 * p.controller_w
                            + s.channel_busy(&busy) as f64 * p.channel_w)
                            / 1e9;
                    host += s.host_bytes;
                    ssd_read += s.read_bytes;
                    buffer_read += s.buffer_read_bytes;
                    nand += (s.ftl.counters.host_units + s.ftl.counters.gc_units)
                        * s.ftl.unit_bytes as u64
                        + s.parity_bytes;
                }
                Dev::Hdd(h) => {
                    host_waits.push((h.actuator() as usize, h.host_waits));
                    let (r, ahead) = h.booked_ahead(&self.world.res, now);
                    busy[r as usize] = busy[r as usize].saturating_sub(ahead);
                    energy += h.busy_ns.saturating_sub(ahead) as f64 * h.power.seek_w / 1e9;
                }
            }
        }
        Snapshot {
            t: now,
            busy,
            host_waits,
            energy_j: energy,
            host_bytes: host,
            nand_bytes: nand,
            ssd_read_bytes: ssd_read,
            buffer_read_bytes: buffer_read,
        }
    }

    fn idle_w(&self) -> f64 {
        self.world
            .leaves
            .iter()
            .map(|l| match &l.dev {
                Dev::Ssd(s) => s.power.idle_w,
                Dev::Hdd(h) => h.power.idle_w,
            })
            .sum()
    }

    /// What ran between snapshots `a` and `b` of job `job`, which kept up to `slots` I/Os
    /// in flight.
    fn report(&self, job: &str, a: &Snapshot, b: &Snapshot, slots: u32) -> TestReport {
        let dt = (b.t - a.t).max(1) as f64;
        // Utilisation per resource group: busy time over elapsed time and group size.
        let mut groups: std::collections::BTreeMap<&str, (f64, u32, ResKind)> = Default::default();
        let waited_on = |i: usize| {
            let count = |s: &Snapshot| s.host_waits.iter().find(|w| w.0 == i).map(|w| w.1);
            count(b).is_none_or(|n| count(a) != Some(n))
        };
        for (i, r) in self.world.res.iter().enumerate() {
            let e = groups.entry(r.group.as_str()).or_insert((0.0, 0, r.kind));
            if waited_on(i) {
                e.0 += (b.busy[i] - a.busy.get(i).copied().unwrap_or(0)) as f64;
            }
            e.1 += 1;
        }
        let (name, util) = groups
            .iter()
            .map(|(g, (busy, n, _))| (g.to_string(), busy / dt / *n as f64))
            .fold(("none".to_string(), 0.0), |best, x| {
                if x.1 > best.1 {
                    x
                } else {
                    best
                }
            });
        let wa = (b.host_bytes > a.host_bytes)
            .then(|| (b.nand_bytes - a.nand_bytes) as f64 / (b.host_bytes - a.host_bytes) as f64);
        let queue = self.world.max_outstanding;
        let bottleneck = if util == 0.0 {
            // No resource did any work: the job was stopped before its first I/O (Ctrl-C),
            // which no latency bounded.
            "none: nothing ran".to_string()
        } else if util >= 0.7 {
            name
        } else if slots > queue {
            // More would help but the path takes no more: not a latency the job could hide.
            format!("host queue limit of {queue} (busiest: {name})")
        } else {
            format!("latency-bound (busiest: {name})")
        };
        TestReport {
            job: job.to_string(),
            avg_power_w: self.idle_w() + (b.energy_j - a.energy_j) / (dt / 1e9),
            bottleneck,
            bottleneck_utilisation: util.min(1.0),
            write_amplification: wa,
            reads_from_buffer: (b.ssd_read_bytes > a.ssd_read_bytes).then(|| {
                (b.buffer_read_bytes - a.buffer_read_bytes) as f64
                    / (b.ssd_read_bytes - a.ssd_read_bytes) as f64
            }),
        }
    }

    /// Runs `job` on the model in virtual time. The job's span is resolved against the model's
    /// size here. `stop` ends issuing early (Ctrl-C), keeping what completed.
    pub fn run_job(&mut self, job: &Job, stop: Option<&AtomicBool>) -> std::io::Result<JobRun> {
        let mut job = job.clone();
        if job.span_bytes.is_none() || job.offset_bytes + job.span() > self.size_bytes() {
            job.resolve_span(self.size_bytes()).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
            })?;
        }
        let workers = plan_workers(&job, self.clock.now_ns());
        self.run_workers(&job, workers, stop)
    }

    /// Runs `workers` (requests from any source, e.g. a trace being replayed) on the model;
    /// `job` gives the limits, ramp, duration and data, and must already have its span resolved.
    pub fn run_workers<S: RequestSource>(
        &mut self,
        job: &Job,
        mut workers: Vec<Worker<S>>,
        stop: Option<&AtomicBool>,
    ) -> std::io::Result<JobRun> {
        // The stop samples the job's figures on the wall clock across its threads; the
        // model has one queue and no priorities.
        for (set, key, instead) in [
            (
                job.steady_stop.is_some(),
                "steady_stop",
                "give the job a duration instead",
            ),
            (job.io_priority.is_some(), "io_priority", "leave it out"),
            (
                job.latency_target.is_some(),
                "latency_target",
                "sweep queue_depth instead",
            ),
            (
                job.sync.is_some(),
                "sync",
                "a model keeps no page cache to sync; leave it out",
            ),
        ] {
            if set {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "job '{}': {key} is not supported on a model; {instead}",
                        job.name
                    ),
                ));
            }
        }
        // Paced requests are scheduled from now, as the real runner does: a source planned
        // before a fill would otherwise count the fill's time in every latency.
        for w in &mut workers {
            w.source.start_at(self.clock.now_ns());
        }
        // Collections an analytic steady state left running are charged as they run: what ran
        // before this job (an idle spell) is not the job's, what runs during it is.
        self.charge_carried(self.clock.now_ns());
        let before = self.snapshot();
        let needs_data = self.world.needs_data();
        let size = self.size_bytes();
        let clock = self.clock.clone();
        let cut_ns = self
            .power_cut
            .map(|c| clock.now_ns() + (c.after_s * 1e9) as u64);
        let verifier = power_loss::verifier(job, cut_ns)?;
        let opts = DriveOptions {
            start_ns: None,
            ramp_ns: (job.ramp_s * 1e9) as u64,
            duration_ns: power_loss::duration_ns(job, self.power_cut),
            drain_end: job.drain_end,
            interval_ns: SERIES_INTERVAL_NS,
            stop,
            abort: None,
            progress: None,
            continue_on_error: job.continue_on_error,
            verify: verifier.as_ref(),
            end: None,
            think: job.schedule.think,
            flow: None,
            end_at: None,
            priorities: None,
            latency_target: None,
            sync: None,
        };
        let slots: u32 = workers.iter().map(|w| w.queue_depth).sum();
        let out = {
            let mut target = SimTarget::new(&mut self.world, clock.clone(), size, needs_data)
                .with_cache_hint(self.cache_hint);
            iolab_drive::target::Target::prepare(&mut target, slots, job.max_block() as usize)?;
            drive(&mut target, &clock, workers, &opts)?
        };
        self.charge_carried(self.clock.now_ns());
        let after = self.snapshot();
        let mut rep = self.report(&job.name, &before, &after, slots);
        if out.stats.write.ios == 0 {
            // A job that wrote nothing has no write amplification, even when a tier's own
            // copies wrote to its SSD meanwhile.
            rep.write_amplification = None;
        }
        self.tests.push(rep);
        let mut result = job_result(
            job,
            &out.stats,
            out.measured_ns,
            out.ramp_ns,
            out.paced,
            out.stopped_by,
            // Virtual time: host CPU time of the simulation is not the modelled host's, and a
            // varying figure would break byte-identical results for a seed.
            CpuResult::default(),
        );
        if let Some(v) = &verifier {
            result.verify = Some(power_loss::check(&self.world, v, self.power_cut, cut_ns));
        }
        Ok(JobRun {
            result,
            stats: out.stats,
        })
    }

    /// Cuts the power `after_s` seconds into each job to come (`--power-loss-at`); the drive's
    /// catalog entry says whether it has power-loss protection. Refused, with the reason, where
    /// the model cannot lose power.
    pub fn set_power_loss_at(&mut self, after_s: f64) -> Result<(), String> {
        if let Some(why) = power_loss::unsupported(&self.world) {
            return Err(why.into());
        }
        let plp = self
            .catalog
            .drives
            .get(&self.drive)
            .and_then(|(_, d)| d.buffer.as_ref())
            .is_some_and(|b| b.plp);
        self.power_cut = Some(power_loss::PowerCut { after_s, plp });
        Ok(())
    }

    /// Whether a power cut is planned.
    pub fn power_cut(&self) -> Option<power_loss::PowerCut> {
        self.power_cut
    }

    /// Lets the drive sit idle for `seconds` of virtual time (background work drains).
    pub fn idle(&mut self, seconds: f64) {
        let now = self.clock.now_ns();
        let t = now + (seconds * 1e9) as u64;
        self.world.settle(now, t);
        self.clock.advance_to(t);
    }

    /// The catalog the model was built from (the built-in one, with a user's entries).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }
}
