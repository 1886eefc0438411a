//! `iolab run [JOB.toml] [TARGET] [flags]`: any workload, from a job file, from flags, or both
//! (flags override the file's keys for every job in it).

use crate::jobfile::{is_job_file, JobFile};
use crate::output::{self, Rules};
use crate::session;
use crate::subject::{ModelState, Subject};
use anyhow::{bail, Result};
use clap::Args;
use iolab_core::job::{Access, BufferedHint, DataKind, Job, JobError, JobSpec, VerifyMode};
use iolab_core::size::ByteSize;
use iolab_engine::open::{EngineChoice, OpenError, WritePolicy};
use std::path::{Path, PathBuf};

/// The workload flags: each one sets the job key of the same name.
#[derive(Args, Clone, Debug, Default)]
pub struct JobFlags {
    /// read, write, randread, randwrite, rw or randrw [key: access].
    #[arg(long)]
    pub access: Option<Access>,
    /// Percent of reads for rw/randrw [key: read_pct].
    #[arg(long)]
    pub read_pct: Option<f64>,
    /// Percent of I/Os at random offsets, the rest sequential [key: random_pct].
    #[arg(long)]
    pub random_pct: Option<f64>,
    /// Block size, e.g. 4k, 1m [key: block_size].
    #[arg(long = "bs")]
    pub block_size: Option<ByteSize>,
    /// Weighted block sizes in fio's form, e.g. 4k/60:64k/40; a blank share (4k/50:64k/) is an
    /// even part of the rest of 100; READ,WRITE gives each its own [key: bssplit].
    #[arg(long)]
    pub bssplit: Option<String>,
    /// I/Os in flight per thread [key: queue_depth].
    #[arg(long = "qd")]
    pub queue_depth: Option<u32>,
    /// Worker threads [key: threads].
    #[arg(long)]
    pub threads: Option<u32>,
    /// Start of the span [key: offset].
    #[arg(long)]
    pub offset: Option<ByteSize>,
    /// Length of the span; creates a file of this size if it does not exist [key: size].
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// Give each thread its own zone of the span [key: zones].
    #[arg(long)]
    pub zones: bool,
    /// Measured time: seconds, or with a unit (30s, 1m, 2h) [key: duration_s].
    #[arg(long = "duration", value_parser = iolab_core::time::parse_seconds)]
    pub duration_s: Option<f64>,
    /// Ramp-up excluded from results: seconds, or with a unit (30s, 1m) [key: ramp_s].
    #[arg(long = "ramp", value_parser = iolab_core::time::parse_seconds)]
    pub ramp_s: Option<f64>,
    /// Stop after this many bytes [key: io_limit].
    #[arg(long)]
    pub io_limit: Option<ByteSize>,
    /// Stop after this many I/Os [key: ios_limit].
    #[arg(long)]
    pub ios_limit: Option<u64>,
    /// Go through the page cache instead of O_DIRECT [key: direct = false].
    #[arg(long)]
    pub buffered: bool,
    /// Written data: random (fresh incompressible content per write) or zeros [key: data].
    #[arg(long)]
    pub data: Option<DataKind>,
    /// Percent of each written block that compresses away [key: compress_pct].
    #[arg(long)]
    pub compress_pct: Option<f64>,
    /// Percent of written blocks that repeat an earlier one [key: dedupe_pct].
    #[arg(long)]
    pub dedupe_pct: Option<f64>,
    /// Cap on I/Os per second for the job [key: rate_iops].
    #[arg(long)]
    pub rate_iops: Option<f64>,
    /// Cap on bytes per second for the job, e.g. 100m [key: rate_bytes_per_s].
    #[arg(long = "rate-bw")]
    pub rate_bytes_per_s: Option<ByteSize>,
    /// Seed of every random choice [key: seed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Timed random jobs visit every block once before any again, as fio's random map does,
    /// instead of drawing offsets with replacement [key: random_map].
    #[arg(long)]
    pub random_map: bool,
    /// At the end of a timed job, count the I/Os still in flight as they complete, over the
    /// time to the last of them, as fio does [key: drain_end].
    #[arg(long)]
    pub drain_end: bool,
    /// Count I/O errors and go on [key: continue_on_error].
    #[arg(long)]
    pub continue_on_error: bool,
    /// Stamp every written block and check it read back: --verify (after the job's I/O),
    /// --verify=inline (after each write), --verify=stamp (stamped only), --verify=reads (a
    /// read job checks what it reads by its stamps), --verify=off [key: verify].
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "end",
        value_name = "MODE"
    )]
    pub verify: Option<VerifyMode>,
    /// Skewed random offsets: random, zipf:THETA, pareto:H, normal:SIGMA%,
    /// zoned:ACCESS%/SPAN%:…, zoned_abs:ACCESS%/SIZE:… [key: distribution].
    #[arg(long)]
    pub distribution: Option<String>,
    /// Paced I/Os arrive as a Poisson process (random gaps of the rate's mean) instead of
    /// evenly spaced [key: rate_poisson].
    #[arg(long)]
    pub rate_poisson: bool,
    /// Bytes added after each sequential I/O: holes, or negative, a walk backwards
    /// [key: seq_skip].
    #[arg(long, allow_hyphen_values = true)]
    pub seq_skip: Option<i64>,
    /// Random offsets are multiples of this (default: the smallest block size)
    /// [key: block_align].
    #[arg(long)]
    pub block_align: Option<ByteSize>,
    /// Strided access: bytes done in each window before moving to the next [key: stride_io].
    #[arg(long)]
    pub stride_io: Option<ByteSize>,
    /// Length of a stride window (default: stride_io) [key: stride_range].
    #[arg(long)]
    pub stride_range: Option<ByteSize>,
    /// Gap between stride windows [key: stride_skip].
    #[arg(long)]
    pub stride_skip: Option<ByteSize>,
    /// I/Os per random jump; the others follow on sequentially [key: random_run].
    #[arg(long)]
    pub random_run: Option<u32>,
    /// Wait before the job starts: seconds, or with a unit (500ms, 1m) [key: start_delay_s].
    #[arg(long = "start-delay", value_parser = iolab_core::time::parse_seconds)]
    pub start_delay_s: Option<f64>,
}

impl JobFlags {
    /// The job keys the flags set.
    pub fn to_spec(&self) -> JobSpec {
        let on = |flag: bool| flag.then_some(true);
        JobSpec {
            access: self.access,
            read_pct: self.read_pct,
            random_pct: self.random_pct,
            block_size: self.block_size,
            bssplit: self.bssplit.clone(),
            queue_depth: self.queue_depth,
            threads: self.threads,
            offset: self.offset,
            size: self.size,
            zones: on(self.zones),
            duration_s: self.duration_s,
            ramp_s: self.ramp_s,
            io_limit: self.io_limit,
            ios_limit: self.ios_limit,
            direct: self.buffered.then_some(false),
            data: self.data,
            compress_pct: self.compress_pct,
            dedupe_pct: self.dedupe_pct,
            rate_iops: self.rate_iops,
            rate_bytes_per_s: self.rate_bytes_per_s,
            seed: self.seed,
            continue_on_error: on(self.continue_on_error),
            random_map: on(self.random_map),
            drain_end: on(self.drain_end),
            verify: self.verify,
            distribution: self.distribution.clone(),
            start_delay_s: self.start_delay_s,
            rate_poisson: on(self.rate_poisson),
            seq_skip: self.seq_skip,
            random_run: self.random_run,
            block_align: self.block_align,
            stride_io: self.stride_io,
            stride_range: self.stride_range,
            stride_skip: self.stride_skip,
            ..JobSpec::default()
        }
    }

    /// Sets every key the flags name on `spec`.
    pub fn apply(&self, spec: &mut JobSpec) {
        spec.overlay(&self.to_spec());
    }
}

/// What may be written, and how.
#[derive(Args, Clone, Debug, Default)]
pub struct SafetyFlags {
    /// Allow writing to this block device although it holds data (partitions, a filesystem,
    /// RAID/LVM/swap signatures). Name the same device as the target.
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Allow replacing an existing regular file that iolab did not create: the target, and the
    /// JSON result (and a suite's report beside it).
    #[arg(long)]
    pub overwrite: bool,
    /// I/O engine: auto (io_uring; psync-per-slot where io_uring is missing or the target cannot
    /// take I/O without blocking, like zram), io_uring, psync (one I/O per thread, as fio's),
    /// psync-per-slot (one blocking thread per queue slot).
    #[arg(long, default_value = "auto", value_parser = session::parse_engine)]
    pub engine: EngineChoice,
    /// Write the JSON result here (`-` for standard output) instead of a new file in the results
    /// directory. The run is recorded in the results store ($IOLAB_DB) either way.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Also write the result in fio's JSON layout (fio 3.x `--output-format=json`) here, for
    /// fio's tooling such as fio-plot (`-` for standard output). iolab's own JSON is saved too.
    #[arg(long, value_name = "PATH")]
    pub fio_json: Option<PathBuf>,
    /// Do not probe the host path (drive, links, ceiling) for the result.
    #[arg(long)]
    pub no_probe: bool,
    #[command(flatten)]
    pub model: crate::subject::ModelFlags,
}

impl SafetyFlags {
    /// The document that takes standard output, if one does (`--json -` or `--fio-json -`):
    /// the tables then go to standard error, so a pipe gets one document it can parse.
    pub fn stdout_document(&self) -> Option<&std::path::Path> {
        let dash = std::path::Path::new("-");
        if self.fio_json.as_deref() == Some(dash) {
            Some(dash)
        } else {
            self.json.as_deref()
        }
    }

    /// The guard's policy.
    pub fn policy(&self) -> WritePolicy {
        WritePolicy {
            destroy_data: self.destroy_data.clone(),
            overwrite: self.overwrite,
        }
    }
}

/// `iolab run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A job file (`*.toml`, or a fio job file: `*.fio` or any file in fio's `[section]`
    /// form) and/or the target (file, block device or a model `sim:DRIVE@PLATFORM[/PORT]`), in
    /// any order.
    #[arg(value_name = "JOB.toml|JOB.fio|TARGET", num_args = 0..=2)]
    pub inputs: Vec<PathBuf>,
    /// For a fio job file: warn about options iolab cannot honour and run without them
    /// (listed in the result's notes) instead of refusing the file.
    #[arg(long)]
    pub fio_lenient: bool,
    /// Print the jobs as an iolab job file (TOML; a fio job file translated) and exit.
    #[arg(long)]
    pub print_job: bool,
    /// Job name for one-off jobs.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub job: JobFlags,
    #[command(flatten)]
    pub safety: SafetyFlags,
    #[command(flatten)]
    pub journal: crate::cmd::verify::JournalFlags,
    #[command(flatten)]
    pub scale: crate::mpi::ScaleFlags,
}

/// Where a job's name came from, for errors.
#[derive(Clone, Copy, PartialEq)]
enum NameFrom {
    File,
    Flag,
    Default,
}

/// Names every job: its own `name`, else `--name`, else `job1`, `job2`, … by position. Refuses
/// an empty name and a name two jobs share, naming the file and the jobs: results, reports and
/// `results compare` tell a run's jobs apart by name, and a report drew only the first of a
/// repeated name.
fn name_jobs(specs: &mut [JobSpec], file: Option<&JobFile>, flag: Option<&str>) -> Result<()> {
    let place = |i: usize| file.map_or_else(String::new, |f| format!("{}: ", f.place(i, "name")));
    if flag.is_some_and(|n| n.trim().is_empty()) {
        bail!("--name is empty; give the job a name, or leave --name out");
    }
    let mut from = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter_mut().enumerate() {
        let (name, source) = match (spec.name.take(), flag) {
            (Some(n), _) => (n, NameFrom::File),
            (None, Some(n)) => (n.to_string(), NameFrom::Flag),
            (None, None) => (format!("job{}", i + 1), NameFrom::Default),
        };
        if name.trim().is_empty() {
            bail!(
                "{}job {} has an empty name; give it a name, or leave `name` out for job{}",
                place(i),
                i + 1,
                i + 1
            );
        }
        spec.name = Some(name);
        from.push(source);
    }
    for (i, spec) in specs.iter().enumerate() {
        let name = spec.name.as_deref().unwrap_or_default();
        let Some(first) = specs[..i]
            .iter()
            .position(|s| s.name.as_deref() == Some(name))
        else {
            continue;
        };
        if from[i] == NameFrom::Flag && from[first] == NameFrom::Flag {
            let unnamed = from.iter().filter(|f| **f == NameFrom::Flag).count();
            bail!(
                "--name {name} would name all {unnamed} jobs of {} that have no name of their \
                 own (jobs {} and {} among them); give each job its own `name` in the file, \
                 or leave --name out",
                file.map_or_else(|| "the job file".into(), |f| f.path.display().to_string()),
                first + 1,
                i + 1
            );
        }
        let given: Vec<String> = [first, i]
            .iter()
            .filter_map(|&k| match from[k] {
                NameFrom::File => None,
                NameFrom::Flag => Some(format!("job {} by --name", k + 1)),
                NameFrom::Default => Some(format!("job {} by default", k + 1)),
            })
            .collect();
        let given = if given.is_empty() {
            String::new()
        } else {
            format!(" ({})", given.join(", "))
        };
        bail!(
            "{}jobs {} and {} are both named '{name}'{given}; give each job its own `name`: \
             results and reports tell jobs apart by name",
            place(i),
            first + 1,
            i + 1
        );
    }
    Ok(())
}

/// The end of `job`'s span, where its size is known before the target is.
fn span_end(job: &Job) -> Option<u64> {
    job.span_bytes.map(|s| job.offset_bytes.saturating_add(s))
}

/// The job the target is opened for: the first job that writes, if any, so that the guard
/// checks the target as a writer's, and its data fills a new file. A new file is made (or a
/// file of iolab's grown) to the end of the job that reaches furthest, as fio lays a job's file
/// out to its size, so the layout takes that job's span and name (errors then name it).
fn layout_job(jobs: &[Job]) -> Job {
    let base = jobs.iter().find(|j| j.writes()).unwrap_or(&jobs[0]);
    let mut layout = base.clone();
    let furthest = jobs.iter().fold(
        base,
        |far, j| {
            if span_end(j) > span_end(far) {
                j
            } else {
                far
            }
        },
    );
    if !std::ptr::eq(furthest, base) {
        layout.name.clone_from(&furthest.name);
        // Its offset where the layout's alignment check is the one that job gets itself (a
        // buffered job's offset need not be sector-aligned, a writer's direct check would
        // refuse it); else the same end from 0.
        let end = span_end(furthest).unwrap_or(0);
        layout.offset_bytes = if furthest.direct || !layout.direct {
            furthest.offset_bytes
        } else {
            0
        };
        layout.span_bytes = Some(end - layout.offset_bytes);
    }
    layout
}

/// Checks every job against the size a file target will have once `layout` has made or grown
/// it, before it is: a job that cannot fit (an offset past the end) must not leave a new file
/// behind. Devices and models are checked once open, which changes nothing on them.
/// Returns the index of the job at fault with the error.
fn check_spans_before_layout(
    target: &Path,
    layout: &Job,
    jobs: &[Job],
) -> Result<(), (usize, JobError)> {
    if crate::subject::is_model(target) {
        return Ok(());
    }
    let now = match std::fs::metadata(target) {
        Ok(m) if m.is_file() => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        _ => return Ok(()),
    };
    let size = now.max(span_end(layout).unwrap_or(0));
    // No size at all: opening says that the file needs one.
    if size == 0 {
        return Ok(());
    }
    for (i, job) in jobs.iter().enumerate() {
        job.clone().resolve_span(size).map_err(|e| (i, e))?;
    }
    Ok(())
}

/// The job keys the command line's flags set (they override the job file's).
fn flag_keys(flags: &JobFlags) -> Vec<String> {
    match serde_json::to_value(flags.to_spec()) {
        Ok(serde_json::Value::Object(keys)) => keys.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The flag of `iolab run` that sets job key `key` (`ramp_s`: `--ramp`), if one does.
fn flag_of(key: &str) -> Option<String> {
    let id = if key == "direct" { "buffered" } else { key };
    let cmd = JobFlags::augment_args(clap::Command::new("run"));
    let long = cmd.get_arguments().find(|a| a.get_id() == id)?.get_long()?;
    Some(format!("--{long}"))
}

/// `err`, about a key a flag set, as the command line said it: the key with its flag
/// (`ramp_s (--ramp)`: the refusal said only `ramp_s`, which `--help` shows as a job key), and
/// so every other job key of the message that a flag sets, unless it already gives the flag.
fn said_by_flags(err: &JobError) -> String {
    let with_flag = |key: &str| match flag_of(key) {
        Some(flag) => format!("{key} ({flag})"),
        None => key.to_string(),
    };
    let head = match flag_of(err.key) {
        Some(flag) if err.message.contains(&format!("({flag})")) => err.key.to_string(),
        _ => with_flag(err.key),
    };
    // Words of the message that are job keys: those with an underscore (`duration_s`), as a
    // plain word (`size`, `data`) may be meant as English.
    let msg = &err.message;
    let mut out = String::new();
    let mut rest = msg.as_str();
    while let Some(start) = rest.find(|c: char| c.is_ascii_lowercase() || c == '_') {
        out.push_str(&rest[..start]);
        let word = &rest[start..];
        let end = word
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(word.len());
        let (token, after) = word.split_at(end);
        let keyed = token.contains('_') && !after.starts_with(" (--");
        // A word glued to what precedes it (`O_DIRECT`'s tail, a path) is not a key.
        let glued = out
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if keyed && !glued {
            out.push_str(&with_flag(token));
        } else {
            out.push_str(token);
        }
        rest = after;
    }
    out.push_str(rest);
    format!("job '{}': {head}: {out}", err.job)
}

/// The job error behind a failure to open the target (a model's span, a file's), if that is
/// what it is.
fn job_error(e: &anyhow::Error) -> Option<&JobError> {
    e.chain().find_map(|c| {
        c.downcast_ref::<JobError>()
            .or(match c.downcast_ref::<OpenError>() {
                Some(OpenError::Job(j)) => Some(j),
                _ => None,
            })
    })
}

/// A run's jobs, validated, and its target: what `iolab run` and a coordinated run (under
/// mpirun) share.
pub(crate) struct Plan {
    /// The target as given (for a coordinated run, perhaps a pattern with `{rank}`).
    pub target: PathBuf,
    /// The jobs, validated, in run order.
    pub jobs: Vec<Job>,
    /// Said on the terminal and kept in the result's notes.
    pub notes: Vec<String>,
    /// The safety flags, with the engine a fio job file asks for.
    pub safety: SafetyFlags,
    hint: BufferedHint,
    /// `--power-loss-at`: set on the model as it opens, since whether its jobs may verify
    /// depends on it.
    power_loss_at: Option<f64>,
    /// A job's refused value, with where the file or a flag sets it.
    locate: Box<Locate>,
}

/// Says where job `i`'s refused value was set (the job file's line, or a flag).
type Locate = dyn Fn(usize, &JobError) -> anyhow::Error;

impl Plan {
    /// Job `i`'s refused value `e`, with where the file or a flag sets it.
    pub fn locate(&self, i: usize, e: &JobError) -> anyhow::Error {
        (self.locate)(i, e)
    }
}

/// The jobs of `args` as written (the job file's, flags applied), before validation.
struct Written {
    specs: Vec<JobSpec>,
    file: Option<JobFile>,
    targets: Vec<PathBuf>,
    safety: SafetyFlags,
    notes: Vec<String>,
}

/// Reads the job file (TOML or fio's) and flags of `args`.
fn written(args: &RunArgs) -> Result<Written> {
    let (mut files, mut targets): (Vec<&PathBuf>, Vec<&PathBuf>) = (Vec::new(), Vec::new());
    for p in &args.inputs {
        if is_job_file(p) || crate::fiojob::is_fio_job(p) {
            files.push(p);
        } else {
            targets.push(p);
        }
    }
    if files.len() > 1 || targets.len() > 1 {
        bail!(
            "give at most one job file (*.toml or a fio job file) and one target; got {:?}",
            args.inputs
        );
    }
    let mut safety = args.safety.clone();
    // Said on the terminal and kept in the result's notes.
    let mut notes = Vec::new();
    let file = match files.first() {
        Some(f) if !is_job_file(f) => Some(crate::fiojob::read_for_run(
            f,
            targets.first().map(|t| t.as_path()),
            args.fio_lenient,
            &mut safety.engine,
            &mut notes,
        )?),
        Some(f) => Some(JobFile::read(f)?),
        None => None,
    };
    let mut specs = file
        .as_ref()
        .map_or_else(|| vec![JobSpec::default()], |f| f.specs.clone());
    name_jobs(&mut specs, file.as_ref(), args.name.as_deref())?;
    for spec in &mut specs {
        args.job.apply(spec);
        // A journal records verified writes: a job that does not say how to verify is checked
        // at its end (the flag's help says so).
        let wants_verify =
            args.journal.verify_journal.is_some() || args.journal.power_loss_at.is_some();
        if wants_verify && spec.verify.is_none() {
            spec.verify = Some(VerifyMode::End);
        }
    }
    Ok(Written {
        specs,
        file,
        targets: targets.into_iter().cloned().collect(),
        safety,
        notes,
    })
}

/// Reads the job file and flags of `args` into validated jobs and a target.
pub(crate) fn plan(args: &RunArgs) -> Result<Plan> {
    let Written {
        specs,
        file,
        targets,
        safety,
        mut notes,
    } = written(args)?;
    // A job's refused value, with where the file sets it.
    let flag_keys = flag_keys(&args.job);
    let locate = move |i: usize, e: &JobError| -> anyhow::Error {
        match (&file, flag_keys.iter().any(|k| k == e.key)) {
            (_, true) => {
                let whose = file.as_ref().map_or(String::new(), |f| {
                    format!(
                        " (`{}` set on the command line, for job {} of {})",
                        flag_of(e.key).unwrap_or_else(|| e.key.to_string()),
                        i + 1,
                        f.path.display()
                    )
                });
                anyhow::anyhow!("{}{whose}", said_by_flags(e))
            }
            (Some(f), false) => f.locate(i, e, &flag_keys),
            (None, false) => e.clone().into(),
        }
    };
    let target = match targets.first() {
        Some(t) => t.to_path_buf(),
        None => {
            let named: Vec<&String> = specs.iter().filter_map(|s| s.target.as_ref()).collect();
            match named.first() {
                Some(t) if named.iter().all(|x| x == t) => PathBuf::from(t),
                Some(_) => bail!("the jobs name different targets; one run measures one target"),
                None => bail!("no target: give a file or block device (e.g. iolab run --size 1g ./test.bin), or set `target` in the job file"),
            }
        }
    };
    // A block size O_DIRECT cannot issue: buffered I/O is a fix on a file or device (by the
    // job file's key or the flag), not on a model, which refuses it.
    let hint = if crate::subject::is_model(&target) {
        BufferedHint::Refused
    } else {
        BufferedHint::KeyAndFlag
    };
    let jobs: Vec<Job> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| s.validate_with(hint).map_err(|e| locate(i, &e)))
        .collect::<Result<_>>()?;
    for (spec, job) in specs.iter().zip(&jobs) {
        if let Some(note) = spec.bssplit_note() {
            let from = if args.job.bssplit.is_some() { "--" } else { "" };
            let note = format!("job '{}': {from}{note}", job.name);
            say!("warning: {note}");
            notes.push(note);
        }
    }
    crate::concurrent::check(&jobs, crate::subject::is_model(&target))?;
    if !crate::subject::is_model(&target) {
        crate::concurrent::check_placement(&jobs)?;
    }
    // Before the target is opened (and a test file created): bad input costs nothing.
    for job in &jobs {
        crate::subject::check_buffer_memory(&target, job)?;
    }
    if args.journal.power_loss_at.is_some() && !crate::subject::is_model(&target) {
        bail!(
            "--power-loss-at cuts the power of a model (sim:…) in virtual time; on a real drive \
             cut it yourself during a run with --verify-journal, then run iolab verify TARGET \
             --journal FILE"
        );
    }
    if args.journal.verify_journal.is_some() && crate::subject::is_model(&target) {
        bail!("--verify-journal: a model keeps no data to journal; give a file or device");
    }
    Ok(Plan {
        target,
        jobs,
        notes,
        safety,
        hint,
        power_loss_at: args.journal.power_loss_at,
        locate: Box::new(locate),
    })
}

/// Opens `target` for `plan`'s jobs (creating a test file they need) and resolves each job's
/// span on it; a refused job leaves no file it created behind.
pub(crate) fn open_subject(
    plan: &mut Plan,
    target: &Path,
    safety: &SafetyFlags,
) -> Result<Subject> {
    let mut layout = layout_job(&plan.jobs);
    check_spans_before_layout(target, &layout, &plan.jobs).map_err(|(i, e)| plan.locate(i, &e))?;
    let mut subject =
        Subject::open(target, &mut layout, safety, ModelState::Full, false).map_err(|e| {
            // The layout job carries the name of the job whose span it takes.
            let at = job_error(&e).and_then(|je| {
                let i = plan.jobs.iter().position(|j| j.name == je.job)?;
                Some(plan.locate(i, je))
            });
            at.unwrap_or(e)
        })?;
    if let Some(t) = plan.power_loss_at {
        subject.set_power_loss_at(t)?;
    }
    let hint = plan.hint;
    for i in 0..plan.jobs.len() {
        let job = &mut plan.jobs[i];
        let fits = job
            .resolve_span(subject.size_bytes())
            .and_then(|()| job.check_alignment_with(subject.logical_block_bytes(), hint));
        if let Err(e) = fits {
            // A file made for jobs that cannot run on it (a 4 KiB-sector device under it,
            // known only once it exists) goes again: a refused run leaves nothing behind.
            subject.remove_created_on_drop();
            return Err(plan.locate(i, &e));
        }
        // What only the opened target can judge (a model that compresses keeps buffers as a
        // file's engine does), said before any job runs rather than as a later job's failure.
        if let Err(e) = subject.check_job(job) {
            subject.remove_created_on_drop();
            let located = job_error(&e).map(|je| plan.locate(i, je));
            return Err(located.unwrap_or(e));
        }
    }
    Ok(subject)
}

/// Runs `iolab run`; returns the exit code.
pub fn run(args: RunArgs) -> Result<i32> {
    if args.print_job {
        let w = written(&args)?;
        print!("{}", crate::fiojob::jobs_as_toml(&w.specs, &w.notes)?);
        return Ok(0);
    }
    let mut plan = plan(&args)?;
    let target = plan.target.clone();
    let safety = plan.safety.clone();
    let mut inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    inputs.push(&target);
    let rules = Rules::new(&inputs, safety.overwrite);
    session::check_output(safety.json.as_deref(), &rules)?;
    crate::fio_out::check(&safety, &rules)?;
    if let Some(j) = &args.journal.verify_journal {
        // Checked before anything is written; created once the target is open.
        output::check("--verify-journal", j, &rules)?;
    }
    iolab_engine::sys::install_interrupt_handler();
    let mut subject = open_subject(&mut plan, &target, &safety)?;
    if let Some(j) = args.journal.open(&rules)? {
        subject.set_journal(j);
    }
    let mut result = subject.new_result("run", !safety.no_probe);
    result.notes.extend(plan.notes);
    let journal = &args.journal.verify_journal;
    let ran = crate::concurrent::run(&mut subject, &plan.jobs, &mut |job, r| {
        if let Some(v) = &mut r.verify {
            v.journal = journal.as_ref().map(|p| p.display().to_string());
            crate::cmd::verify::say_summary(Some(&job.name), v);
        }
    });
    result.jobs.extend(ran.results);
    result.notes.extend(ran.notes);
    if let Some(e) = ran.failed {
        result.complete = false;
        result.incomplete_reason = Some(e);
    }
    subject.describe_into(&mut result);
    session::settle(&mut result);
    session::show(
        &iolab_report::terminal::run_table(&result),
        safety.stdout_document(),
    );
    let saved = session::save(&result, safety.json.as_deref(), &rules)?;
    say!("result saved to {saved}");
    crate::fio_out::save(&result, &safety, &rules)?;
    Ok(session::exit_code(&result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_job_parses_and_validates() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/jobs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            for spec in JobFile::read(&path).unwrap().specs {
                spec.validate()
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                seen += 1;
            }
        }
        assert!(seen >= 4, "only {seen} example jobs");
    }

    #[test]
    fn flags_override_the_file_and_replace_the_other_size_key() {
        let mut spec = JobSpec {
            bssplit: Some("4k/50:8k/50".into()),
            queue_depth: Some(4),
            ..JobSpec::default()
        };
        let flags = JobFlags {
            block_size: Some(ByteSize(65536)),
            buffered: true,
            ..JobFlags::default()
        };
        flags.apply(&mut spec);
        assert_eq!(spec.block_size, Some(ByteSize(65536)));
        assert_eq!(spec.bssplit, None);
        assert_eq!(spec.queue_depth, Some(4));
        assert_eq!(spec.direct, Some(false));
    }
}
