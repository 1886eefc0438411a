//! What a measuring command runs its jobs on: a real file or block device, or a model of a
//! drive on a platform (`sim:DRIVE@PLATFORM[/PORT]`). This is the command line's side of the
//! `Target`/`Clock` seam (iolab-drive): after [`Subject::open`], `quick`, `run`, `suite` and
//! `trace replay` do exactly the same for both, running jobs through the one run API both
//! implement ([`RunTarget`]); what only one side has (the guard's purge, a test file to remove,
//! a model's power cut and state) stays here.

use crate::cmd::run::SafetyFlags;
use crate::session;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use iolab_core::job::{Job, JobError};
use iolab_core::result::{RunResult, TargetInfo};
use iolab_core::size::{format_size, human_size};
use iolab_drive::run::{JobRun, RunControl, RunTarget};
use iolab_engine::driver::{RequestSource, Worker};
use iolab_engine::open::{prepare_target, OpenError, PreparedTarget};
use iolab_engine::sys::INTERRUPTED;
use iolab_sim::SimSetup;
use std::path::{Path, PathBuf};

/// The longest idle spell [`Subject::idle`] waits: a day (a suite's `idle_s` and `quick
/// --interval` are refused above it).
pub const MAX_IDLE_S: f64 = 86_400.0;

/// `seconds` as a wait that can be honoured: NaN and negatives are none, the rest at most
/// [`MAX_IDLE_S`] (`Duration::from_secs_f64` panics on what it cannot hold).
fn idle_seconds(seconds: f64) -> f64 {
    if seconds > 0.0 {
        seconds.min(MAX_IDLE_S)
    } else {
        0.0
    }
}

/// Sleeps `seconds` in short steps, ending early on Ctrl-C: a pause of minutes between tests
/// must not hold up saving what was measured.
pub fn sleep_unless_interrupted(seconds: f64) {
    iolab_drive::clock::sleep_unless_stopped(idle_seconds(seconds), Some(&INTERRUPTED));
}

/// The state a modelled drive starts in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ModelState {
    /// Secure-erased: nothing mapped, every block free (a new drive, or a review's start).
    Fresh,
    /// Every LBA written once sequentially (what a real test file or a used drive gives).
    #[default]
    Full,
    /// The steady state of full-span 4 KiB random writes (the reviews' "torture").
    Steady,
}

/// Options that only matter for a model target (`sim:…`).
#[derive(Args, Clone, Debug, Default)]
pub struct ModelFlags {
    /// For a `sim:` target: extra catalog entries (`drives/*.toml`, `platforms/*.toml`) beside
    /// the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub catalog: Option<PathBuf>,
    /// For a `sim:` target: the drive's state before the first job (suites prepare their own).
    #[arg(long, value_enum)]
    pub model_state: Option<ModelState>,
}

/// How a job run from the command line is watched: stopped by Ctrl-C, with `progress` (a real
/// target's live line) and the `journal` of verified writes.
fn watched<'a>(
    progress: Option<&'a iolab_drive::driver::Progress>,
    journal: Option<&'a std::sync::Arc<iolab_verify::journal::JournalWriter>>,
) -> RunControl<'a> {
    RunControl {
        stop: Some(&INTERRUPTED),
        progress,
        journal,
        ..RunControl::default()
    }
}

/// A real target or a model, ready to run jobs.
pub enum Subject {
    /// A file or block device, checked by the safety guard.
    Real {
        /// The prepared target.
        target: PreparedTarget,
        /// Remove the test file when done (only if this run created it).
        remove_created: bool,
        /// The journal of verified writes (`--verify-journal`).
        journal: Option<std::sync::Arc<iolab_verify::journal::JournalWriter>>,
    },
    /// A drive and host path modelled in virtual time.
    Model(Box<SimSetup>),
}

/// A job a model can run: it models the drive and its path, not the host's page cache, so a
/// buffered job would be reported as if it had bypassed the cache. A [`JobError`] on `direct`,
/// so that a job file's refusal names the line.
fn model_can_run(job: &Job) -> std::result::Result<(), JobError> {
    if job.direct {
        return Ok(());
    }
    Err(JobError {
        job: job.name.clone(),
        key: "direct",
        message: "a model has no page cache: --buffered (direct = false) needs a file or \
                  device; leave it out to model the drive"
            .into(),
    })
}

/// Refuses a job on a file or device whose I/O buffers (one slot of the largest block per I/O
/// in flight, in every thread) could not fit in the machine's memory: the allocation would
/// fail, or the system would swap and the job measure that. Said up front, naming the options
/// to lower. A model is checked once opened ([`Subject::check_job`]): it keeps no data per I/O
/// unless it compresses.
pub fn check_buffer_memory(target: &Path, job: &Job) -> Result<()> {
    if is_model(target) {
        return Ok(());
    }
    check_buffers_fit_memory(job)
}

/// [`check_buffer_memory`] whatever the target: the job's buffers against this machine's memory.
fn check_buffers_fit_memory(job: &Job) -> Result<()> {
    static MEMORY_BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let memory = *MEMORY_BYTES.get_or_init(|| iolab_engine::host::host_info().memory_bytes);
    check_buffer_bytes(job.max_block(), job.queue_depth, job.threads, memory)
}

/// [`check_buffer_memory`] for `memory_bytes` of memory (0: unknown, nothing refused).
fn check_buffer_bytes(block: u64, queue_depth: u32, threads: u32, memory_bytes: u64) -> Result<()> {
    let needed = u128::from(block) * u128::from(queue_depth) * u128::from(threads);
    if memory_bytes > 0 && needed > u128::from(memory_bytes) {
        let shown = u64::try_from(needed).map_or_else(|_| format!("{needed} bytes"), human_size);
        anyhow::bail!(
            "--bs {} × --qd {queue_depth} × --threads {threads} needs {shown} of I/O buffers, \
             more than this machine's {} of memory; lower the block size, queue depth or \
             threads",
            format_size(block),
            human_size(memory_bytes)
        );
    }
    Ok(())
}

/// A missing target is a test file to create, except where that is surely a mistake: a
/// symbolic link to nothing (the file would appear at the link's far end, and removing the
/// test file afterwards would remove the link), a path under /dev, which names a device
/// that does not exist (a mistyped partition, say), not a file to keep in that RAM filesystem,
/// and a model's name without its `sim:` (`iolab quick ssd750-400@z97` measured a new 1 GiB
/// file of that name on the disk at hand).
pub fn refuse_unlikely_new_file(target: &Path) -> Result<()> {
    if target.exists() {
        return Ok(());
    }
    if let Some(spec) = model_spec_without_prefix(target) {
        // A name with a directory in it (a port) is no file to create here.
        let as_file = if spec.contains('/') {
            String::new()
        } else {
            format!(
                " (for a new test file of that name, write ./{})",
                target.display()
            )
        };
        anyhow::bail!(
            "target {} does not exist, and it names a model: write sim:{spec} to run on the \
             model{as_file}",
            target.display(),
        );
    }
    if let Ok(to) = std::fs::read_link(target) {
        anyhow::bail!(
            "target {} is a symbolic link to {}, which does not exist; name an existing file or \
             device, or a new file's own path",
            target.display(),
            to.display()
        );
    }
    let absolute = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    if absolute.starts_with("/dev") {
        anyhow::bail!(
            "target {} does not exist: there is no such device (lsblk lists them), and iolab \
             does not create test files under /dev",
            target.display()
        );
    }
    Ok(())
}

/// The model `target` names when it is a built-in `DRIVE@PLATFORM[/PORT]` written without
/// its lower-case `sim:` (left out, or `SIM:`), as it would be given to `sim:`.
fn model_spec_without_prefix(target: &Path) -> Option<String> {
    let text = target.to_str()?;
    let spec = match text.get(..4) {
        Some(p) if p.eq_ignore_ascii_case("sim:") => &text[4..],
        _ => text,
    };
    let (drive, platform, _) = iolab_sim::parse_spec(spec).ok()?;
    let catalog = iolab_sim::catalog::Catalog::load(None).ok()?;
    (catalog.drives.contains_key(&drive) && catalog.platforms.contains_key(&platform))
        .then(|| spec.to_string())
}

/// Whether a target argument names a model rather than a path.
pub fn is_model(target: &Path) -> bool {
    target.to_str().is_some_and(|t| t.starts_with("sim:"))
}

impl Subject {
    /// Opens `target` for `first` (the job that writes, if any, so that the guard checks the
    /// target as a writer's; it also creates a missing test file). A model starts in
    /// `default_state` unless `--model-state` says otherwise.
    pub fn open(
        target: &Path,
        first: &mut Job,
        flags: &SafetyFlags,
        default_state: ModelState,
        remove_created: bool,
    ) -> Result<Subject> {
        if is_model(target) {
            // The model runs every job as io_uring would, with its queue depth kept; an engine
            // that blocks (psync: one I/O per thread) would measure something else.
            anyhow::ensure!(
                flags.engine == iolab_engine::open::EngineChoice::Auto,
                "--engine chooses how a file or device is driven; a model target ({}) has no \
                 engine, so leave --engine out",
                target.display()
            );
            // --destroy-data gives a real device up to be written; naming it for a model is a
            // mistake worth saying (a mistyped device path, say), not ignoring. --overwrite
            // also lets the JSON result replace a file of the user's, so it stays allowed.
            anyhow::ensure!(
                flags.destroy_data.is_none(),
                "--destroy-data allows writing over a device; a model target ({}) has no data \
                 to lose, so leave --destroy-data out",
                target.display()
            );
            // Also checked for every job it runs; here so that the mistake is said before
            // seconds of analytic preconditioning.
            model_can_run(first)?;
            let spec = target.to_str().unwrap_or_default();
            let mut sim = iolab_sim::open(spec, flags.model.catalog.as_deref())?;
            sim.set_cache_hint(iolab_engine::sys::CACHE_HINT);
            for replaced in sim.catalog().replaced_builtins() {
                say!("note: {replaced}");
            }
            match flags.model.model_state.unwrap_or(default_state) {
                ModelState::Fresh => {}
                ModelState::Full => sim.precondition_fill(),
                ModelState::Steady => sim.precondition_steady(),
            }
            first.resolve_span(sim.size_bytes())?;
            return Ok(Subject::Model(Box::new(sim)));
        }
        // A model's options on a real target are a mistake (a mistyped `sim:` spec, say), not
        // something to ignore while the run writes to the file or device.
        for (given, flag) in [
            (flags.model.model_state.is_some(), "--model-state"),
            (flags.model.catalog.is_some(), "--catalog"),
        ] {
            anyhow::ensure!(
                !given,
                "{flag} applies to a model target (sim:DRIVE@PLATFORM[/PORT]), and {} is a \
                 file or device; leave {flag} out, or name a model",
                target.display()
            );
        }
        iolab_engine::guard::check_destroy_data_names_target(
            target,
            flags.destroy_data.as_deref(),
        )?;
        refuse_unlikely_new_file(target)?;
        let prepared = prepare_target(
            target,
            first,
            &flags.policy(),
            flags.engine,
            Some(&INTERRUPTED),
        )
        .map_err(|e| match e {
            // The engine refuses to grow a file it did not create as it refuses to write
            // one; for a job that only reads, growing is all that is refused.
            OpenError::NotOurs(path) if !first.writes() => {
                let len = std::fs::metadata(&path).map_or(0, |m| m.len());
                let end = first.offset_bytes.saturating_add(first.span());
                anyhow::anyhow!(
                    "{} is {}, and job '{}' reads up to {} (offset + size): the file would \
                         have to be grown, and iolab writes only to files it created (reading \
                         is always allowed). Read within the file (a smaller size, or none in \
                         `run` to read all of it), or pass --overwrite to let iolab grow it \
                         (the {} in it are kept)",
                    path.display(),
                    format_size(len),
                    first.name,
                    format_size(end),
                    format_size(len)
                )
            }
            e => e.into(),
        })
        .with_context(|| format!("target {}", target.display()))?;
        Ok(Subject::Real {
            target: prepared,
            remove_created,
            journal: None,
        })
    }

    /// Removes the test file this run created when the subject is dropped, as for a run
    /// refused after opening (a file it did not create is left alone).
    pub fn remove_created_on_drop(&mut self) {
        if let Subject::Real { remove_created, .. } = self {
            *remove_created = true;
        }
    }

    /// What runs the jobs: the prepared file or device, or the model.
    fn run_target(&self) -> &dyn RunTarget {
        match self {
            Subject::Real { target, .. } => target,
            Subject::Model(sim) => &**sim,
        }
    }

    /// [`Subject::run_target`], to run on.
    fn run_target_mut(&mut self) -> &mut dyn RunTarget {
        match self {
            Subject::Real { target, .. } => target,
            Subject::Model(sim) => &mut **sim,
        }
    }

    /// Bytes the target offers.
    pub fn size_bytes(&self) -> u64 {
        self.run_target().size_bytes()
    }

    /// The logical block size (alignment of every I/O).
    pub fn logical_block_bytes(&self) -> u64 {
        self.run_target().logical_block_bytes()
    }

    /// A new result frame for a run of `kind` (a model is never probed: there is no host path).
    pub fn new_result(&self, kind: &str, probe: bool) -> RunResult {
        match self {
            Subject::Real { target, .. } => session::new_result(kind, target, probe),
            Subject::Model(sim) => {
                let info = TargetInfo {
                    path: sim.spec().to_string(),
                    kind: "sim".into(),
                    size_bytes: sim.size_bytes(),
                    logical_block_bytes: sim.logical_block_bytes(),
                    engine: "sim".into(),
                    modelled: true,
                    model: Some(sim.describe()),
                    path_summary: Some(sim.path().join("; ")),
                    ..TargetInfo::default()
                };
                let mut notes = vec![
                    "modelled in virtual time by iolab-sim: figures are what the model predicts, not measurements".into(),
                ];
                notes.extend(
                    sim.catalog()
                        .replaced_builtins()
                        .iter()
                        .map(|r| r.to_string()),
                );
                session::new_result_for(kind, info, notes, false)
            }
        }
    }

    /// Refuses a job this subject cannot honour (a buffered job on a model, buffers larger
    /// than the machine's memory).
    pub fn check_job(&self, job: &Job) -> Result<()> {
        match self {
            Subject::Real { target, .. } => check_buffer_memory(&target.path, job)
                .with_context(|| format!("job '{}'", job.name))?,
            Subject::Model(sim) => {
                model_can_run(job)?;
                if !job.verify.is_off() && sim.power_cut().is_none() {
                    return Err(JobError {
                        job: job.name.clone(),
                        key: "verify",
                        message: "a model keeps no data to read back: verify needs a file or \
                                  a device, or --power-loss-at T to count what a power cut \
                                  loses"
                            .into(),
                    }
                    .into());
                }
                // A model that compresses reads each written block, so it keeps a buffer per
                // I/O in flight as a file's engine does.
                if sim.needs_data() {
                    check_buffers_fit_memory(job).with_context(|| format!("job '{}'", job.name))?;
                }
            }
        }
        Ok(())
    }

    /// Journals the verified writes of the jobs to come in `journal` (a real target only).
    pub fn set_journal(&mut self, journal: std::sync::Arc<iolab_verify::journal::JournalWriter>) {
        if let Subject::Real { journal: j, .. } = self {
            *j = Some(journal);
        }
    }

    /// Cuts a model's power `after_s` seconds into each job (`--power-loss-at`).
    pub fn set_power_loss_at(&mut self, after_s: f64) -> Result<()> {
        match self {
            Subject::Real { .. } => anyhow::bail!(
                "--power-loss-at cuts the power of a model (sim:…) in virtual time; on a real \
                 drive cut it yourself during a run with --verify-journal, then run \
                 iolab verify TARGET --journal FILE"
            ),
            Subject::Model(sim) => sim
                .set_power_loss_at(after_s)
                .map_err(|e| anyhow::anyhow!("--power-loss-at: {e}")),
        }
    }

    /// Runs `job` (span resolved), with live progress on a real target.
    pub fn run_job(&mut self, job: &Job, label: &str, expected_s: Option<f64>) -> Result<JobRun> {
        self.check_job(job)?;
        // The job's start delay (fio's startdelay): the target idles, a model in its own time.
        if job.start_delay_s > 0.0 {
            self.idle(job.start_delay_s);
        }
        match self {
            Subject::Real {
                target, journal, ..
            } => session::with_progress(label, expected_s, |progress| {
                target.run_job(job, watched(Some(progress), journal.as_ref()))
            }),
            // Virtual time runs faster than a wall-clock progress line could say anything.
            Subject::Model(sim) => RunTarget::run_job(&mut **sim, job, watched(None, None)),
        }
        .with_context(|| format!("job '{}'", job.name))
    }

    /// Runs `job` (span resolved) under `ctl` and without a progress line: a job one of several
    /// coordinated processes runs (a model takes only the stop flag).
    #[cfg(feature = "mpi")]
    pub fn run_job_with(&mut self, job: &Job, ctl: RunControl) -> Result<JobRun> {
        self.check_job(job)?;
        // This rank's journal of verified writes (`--verify-journal` with `{rank}`).
        let own = match self {
            Subject::Real { journal, .. } => journal.clone(),
            Subject::Model(_) => None,
        };
        let ctl = RunControl {
            journal: ctl.journal.or(own.as_ref()),
            ..ctl
        };
        self.run_target_mut()
            .run_job(job, ctl)
            .with_context(|| format!("job '{}'", job.name))
    }

    /// Runs `workers` (a trace's requests) under `job`'s limits and `ctl`, without a progress
    /// line: one rank's part of a coordinated replay (a model takes only the stop flag).
    #[cfg(feature = "mpi")]
    pub fn run_workers_with<S: RequestSource + Send>(
        &mut self,
        job: &Job,
        workers: Vec<Worker<S>>,
        ctl: RunControl,
    ) -> Result<JobRun> {
        self.check_job(job)?;
        match self {
            Subject::Real { target, .. } => target.run_workers(job, workers, ctl),
            Subject::Model(sim) => RunTarget::run_workers(&mut **sim, job, workers, ctl),
        }
        .with_context(|| format!("job '{}'", job.name))
    }

    /// The prepared file or device and the journal of verified writes, for jobs run beside
    /// each other on it; `None` for a model.
    pub fn real_target(
        &self,
    ) -> Option<(
        &PreparedTarget,
        Option<&std::sync::Arc<iolab_verify::journal::JournalWriter>>,
    )> {
        match self {
            Subject::Real {
                target, journal, ..
            } => Some((target, journal.as_ref())),
            Subject::Model(_) => None,
        }
    }

    /// Runs `workers` (e.g. a trace's requests) under `job`'s limits.
    pub fn run_workers<S: RequestSource + Send>(
        &mut self,
        job: &Job,
        workers: Vec<Worker<S>>,
    ) -> Result<JobRun> {
        self.check_job(job)?;
        match self {
            Subject::Real { target, .. } => session::with_progress(&job.name, None, |progress| {
                target.run_workers(job, workers, watched(Some(progress), None))
            }),
            Subject::Model(sim) => {
                RunTarget::run_workers(&mut **sim, job, workers, watched(None, None))
            }
        }
        .with_context(|| format!("job '{}'", job.name))
    }

    /// Returns the target to "never written": hole punching or discard on a real target (as the
    /// guard allows), TRIM of the whole drive on a model.
    pub fn purge(&mut self, flags: &SafetyFlags) -> Result<String, String> {
        match self {
            Subject::Real { target, .. } => target.purge(&flags.policy()),
            Subject::Model(sim) => Ok(sim.trim_all()),
        }
    }

    /// Records the state a job left a model in (nothing for a real target).
    pub fn set_model_state(&mut self, state: &str) {
        if let Subject::Model(sim) = self {
            sim.set_state(state);
        }
    }

    /// Waits `seconds`: really, or in virtual time (background work on the model drains).
    /// Commands refuse a pause over a day up front; here a value no wait can honour (NaN,
    /// negative) waits nothing and a huge one is cut to [`MAX_IDLE_S`], never a panic.
    pub fn idle(&mut self, seconds: f64) {
        self.run_target_mut()
            .idle(idle_seconds(seconds), Some(&INTERRUPTED));
    }

    /// Puts what the model did (power, bottleneck and write amplification per job) into the
    /// result, with a note of how well the steady state is validated when its garbage
    /// collection moved data; nothing for a real target.
    pub fn describe_into(&self, result: &mut RunResult) {
        if let Subject::Model(sim) = self {
            result.target.model = Some(sim.describe());
            // Where the model is least checked, the result says so.
            if sim.has_collected() {
                let note = format!(
                    "garbage collection ran in the model: {}",
                    iolab_sim::figures::steady_state_validation()
                );
                if !result.notes.contains(&note) {
                    result.notes.push(note);
                }
            }
        }
    }

    /// Notes how well the model is validated replaying traces, for a replay on a model
    /// (nothing for a real target).
    pub fn note_replay_validation(&self, result: &mut RunResult) {
        if let Subject::Model(_) = self {
            result.notes.push(format!(
                "trace replayed on the model: {}",
                iolab_sim::figures::trace_replay_validation()
            ));
        }
    }
}

impl Drop for Subject {
    fn drop(&mut self) {
        // Also after an error or Ctrl-C: a test file this run created does not outlive it.
        if let Subject::Real {
            target,
            remove_created: true,
            ..
        } = self
        {
            if let Err(e) = target.remove_if_created() {
                say!(
                    "warning: could not remove the test file {}: {e}",
                    target.path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_seconds_never_asks_for_a_wait_that_cannot_be_held() {
        assert_eq!(idle_seconds(2.5), 2.5);
        assert_eq!(idle_seconds(1e30), MAX_IDLE_S);
        assert_eq!(idle_seconds(f64::INFINITY), MAX_IDLE_S);
        assert_eq!(idle_seconds(f64::NAN), 0.0);
        assert_eq!(idle_seconds(-1.0), 0.0);
        // What used to panic in Duration::from_secs_f64 returns at once.
        sleep_unless_interrupted(f64::NAN);
        sleep_unless_interrupted(-1e30);
    }

    #[test]
    fn buffers_larger_than_memory_are_refused_naming_the_options() {
        let gib = 1u64 << 30;
        // 64 MiB × 4096 × 1 = 256 GiB, on 8 GiB.
        let e = check_buffer_bytes(64 << 20, 4096, 1, 8 * gib)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--bs 64m × --qd 4096 × --threads 1 needs 256g"),
            "{e}"
        );
        check_buffer_bytes(1 << 20, 32, 4, 8 * gib).unwrap();
        // Unknown memory: nothing refused here (the allocation itself still fails cleanly).
        check_buffer_bytes(64 << 20, 4096, 1, 0).unwrap();
        // No overflow at the largest values.
        assert!(check_buffer_bytes(u64::MAX, u32::MAX, u32::MAX, 8 * gib).is_err());
    }
}
