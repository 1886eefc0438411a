//! Opening what a job runs on: a regular file (created and fully written before use, never
//! sparse) or a block device (used as it is, behind the [`crate::guard`]).
//!
//! [`prepare_target`] runs once per job and does everything that may refuse or fail — checks,
//! creation, filling, span resolution — before a single measured I/O. [`PreparedTarget::open_worker`]
//! then gives each worker thread its own descriptor and its own io_uring (or the psync fallback).

use crate::buf::HUGE_PAGE;
use crate::guard::{self, GuardError};
use crate::psync::PsyncTarget;
use crate::sys;
use crate::sys::uring::UringTarget;
use crate::target::{Capabilities, Target, TargetKind};
use iolab_core::data::DataGenerator;
use iolab_core::job::{Job, JobError};
use iolab_core::size::{format_size, human_size};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Smallest block for which a blocking engine puts its buffers on huge pages.
const HUGE_BUFFER_MIN_BLOCK: u64 = 64 << 10;
/// Most memory a job's threads may take in huge-page buffers beyond what they need.
const HUGE_BUFFER_BUDGET: usize = 256 << 20;

/// Which I/O engine to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// io_uring, or psync with a note when io_uring is unavailable.
    #[default]
    Auto,
    /// io_uring or fail.
    Uring,
    /// Positional read/write, one I/O at a time per thread (fio's psync): the job's threads
    /// are its only queue.
    Psync,
    /// Positional read/write on one thread per queue slot, so the job's queue depth is kept by
    /// blocking threads. Chosen by `Auto` where io_uring would block or is missing.
    PsyncPerSlot,
}

impl EngineChoice {
    /// Every choice with its name, as `--engine` takes it and results show it.
    pub const NAMES: [(&'static str, EngineChoice); 4] = [
        ("auto", EngineChoice::Auto),
        ("io_uring", EngineChoice::Uring),
        ("psync", EngineChoice::Psync),
        ("psync-per-slot", EngineChoice::PsyncPerSlot),
    ];

    /// The name `--engine` takes and results show.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, e)| *e == self)
            .map_or("auto", |(n, _)| n)
    }
}

/// What the user allowed.
#[derive(Clone, Debug, Default)]
pub struct WritePolicy {
    /// The one device the user offered for destruction (`--destroy-data=DEVICE`).
    pub destroy_data: Option<PathBuf>,
    /// Overwrite an existing regular file iolab did not create (`--overwrite`).
    pub overwrite: bool,
}

/// Why a target cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The job does not fit the target.
    #[error(transparent)]
    Job(#[from] JobError),
    /// The safety guard refused.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// A file iolab did not create would be overwritten.
    #[error(
        "{0} exists and was not created by iolab; this job would overwrite it. Pass --overwrite \
         if its content may be destroyed, or name a new file"
    )]
    NotOurs(PathBuf),
    /// A file that does not exist, and no size to create it with.
    #[error("{0} does not exist; give the job a size (e.g. --size 1g) to create it")]
    NeedSize(PathBuf),
    /// Not a file or block device.
    #[error("{0} is {1}; give a regular file or a block device")]
    Unsupported(PathBuf, &'static str),
    /// The file would not fit in its filesystem's free space.
    #[error(
        "{} needs {needed} more bytes ({}), written in full since iolab never leaves a test \
         file sparse, and its filesystem has {available} bytes ({}) free; give a smaller size\
         {}, or free space",
        path.display(),
        human_size(*needed),
        human_size(*available),
        if *offset > 0 { " or offset" } else { "" }
    )]
    NoSpace {
        /// The file to be created or grown.
        path: PathBuf,
        /// Bytes it would add.
        needed: u64,
        /// Bytes free for it.
        available: u64,
        /// The job's starting offset: only a job that has one is told to lower it (quick and
        /// trace replay have none to give).
        offset: u64,
    },
    /// Ctrl-C while the file was being written.
    #[error("interrupted while writing {}; {undone}", path.display())]
    Interrupted {
        /// The file.
        path: PathBuf,
        /// What became of the partial file.
        undone: String,
    },
    /// A TRIM job on a block device that does not take discards.
    #[error(
        "{0} does not support discard (TRIM): its queue/discard_max_bytes is 0; TRIM jobs \
         (trim, randtrim, trimwrite) need a device that discards, or a regular file"
    )]
    NoDiscard(PathBuf),
    /// io_uring was demanded and is unavailable.
    #[error("io_uring is unavailable here ({0}); use --engine psync or auto")]
    NoUring(io::Error),
    /// Any other I/O failure, with what was being done.
    // The cause is part of the message and deliberately not a `source()`, so `{:#}` chains do
    // not print it twice.
    #[error("{what} {path}: {cause}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        cause: io::Error,
    },
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> OpenError + 'a {
    move |cause| OpenError::Io {
        what,
        path: path.to_path_buf(),
        cause,
    }
}

/// A target ready for a job: checked, created or filled, with the job's span resolved.
#[derive(Debug)]
pub struct PreparedTarget {
    /// The path as given.
    pub path: PathBuf,
    /// File or block device.
    pub kind: TargetKind,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Logical block size (O_DIRECT alignment).
    pub logical_block_bytes: u64,
    /// True when this run created the file (the caller may remove it afterwards).
    pub created: bool,
    /// The engine every worker uses.
    pub engine: EngineChoice,
    /// The engine for paced jobs (rate limits, timed replay): io_uring where `engine` is
    /// psync-per-slot only because the target blocks, since one thread per worker waiting for
    /// the next intended start is punctual, and hundreds of slot threads are not.
    pub paced_engine: EngineChoice,
    /// Things the results should say (fallbacks, warnings).
    pub notes: Vec<String>,
    /// The target cannot take non-blocking I/O (probed once, for io_uring's sake).
    blocks: bool,
    /// Requests the device under the target queues at once (`queue/nr_requests`), if known.
    queue_slots: Option<u64>,
    /// Held with O_EXCL while a write job runs on a block device, so nobody mounts it meanwhile.
    exclusive: Option<File>,
}

/// Checks and prepares `path` for `job`, resolving the job's span against it. A file that is
/// created or grown is written in full first; `stop` (Ctrl-C) ends that, and the file is
/// then removed, or returned to its size, as it is when the writing fails.
pub fn prepare_target(
    path: &Path,
    job: &mut Job,
    policy: &WritePolicy,
    engine: EngineChoice,
    stop: Option<&AtomicBool>,
) -> Result<PreparedTarget, OpenError> {
    let mut notes = Vec::new();
    let found = match fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => prepare_new_file(path, job, stop)?,
        Err(e) => return Err(io_err("cannot inspect", path)(e)),
        Ok(m) if m.is_file() => prepare_file(path, &m, job, policy, stop, &mut notes)?,
        Ok(m) if m.file_type().is_block_device() => prepare_block(path, job, policy)?,
        Ok(m) if m.is_dir() => {
            return Err(OpenError::Unsupported(path.to_path_buf(), "a directory"))
        }
        Ok(_) => {
            return Err(OpenError::Unsupported(
                path.to_path_buf(),
                "neither a regular file nor a block device",
            ))
        }
    };
    job.resolve_span(found.size_bytes)?;
    job.check_alignment(found.logical)?;
    // One probe for the whole job: it decides `auto` and io_uring's submission flags.
    let blocks = matches!(engine, EngineChoice::Auto | EngineChoice::Uring)
        && blocks_io_uring(path, job.direct, found.logical);
    let (engine, paced_engine) = choose_engine(path, job, engine, blocks, &mut notes)?;
    let queue_slots = device_queue_slots(path);
    note_queue_overflow(job, queue_slots, &mut notes);
    Ok(PreparedTarget {
        path: path.to_path_buf(),
        kind: found.kind,
        size_bytes: found.size_bytes,
        logical_block_bytes: found.logical,
        created: found.created,
        engine,
        paced_engine,
        notes,
        blocks,
        queue_slots,
        exclusive: found.exclusive,
    })
}

/// What [`prepare_target`] found (or made) at the path, before the engine is chosen.
struct FoundTarget {
    kind: TargetKind,
    size_bytes: u64,
    logical: u64,
    created: bool,
    exclusive: Option<File>,
}

/// Creates the job's file, filled, where there is none.
fn prepare_new_file(
    path: &Path,
    job: &mut Job,
    stop: Option<&AtomicBool>,
) -> Result<FoundTarget, OpenError> {
    let span = job
        .span_bytes
        .ok_or_else(|| OpenError::NeedSize(path.to_path_buf()))?;
    let size = job.offset_bytes + span;
    // Checked before the file is made, so a refused job leaves nothing behind.
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let logical = file_logical_block(dir);
    job.resolve_span(size)?;
    job.check_alignment(logical)?;
    create_filled(path, size, job, 0, stop)?;
    Ok(FoundTarget {
        kind: TargetKind::File,
        size_bytes: size,
        logical,
        created: true,
        exclusive: None,
    })
}

/// Checks an existing file for the job (writing it needs it to be iolab's or --overwrite), and
/// grows it, filled, when the job's span reaches past its end.
fn prepare_file(
    path: &Path,
    m: &fs::Metadata,
    job: &mut Job,
    policy: &WritePolicy,
    stop: Option<&AtomicBool>,
    notes: &mut Vec<String>,
) -> Result<FoundTarget, OpenError> {
    let needed = job.span_bytes.map(|s| job.offset_bytes + s).unwrap_or(0);
    let grows = needed > m.len();
    if job.writes() || grows {
        let file = File::open(path).map_err(io_err("cannot open", path))?;
        // First what --overwrite does not override (a loop device's file, active
        // swap): asking for --overwrite first would only lead to this refusal.
        guard::check_file_in_use(path)?;
        if !policy.overwrite && !sys::is_marked_created(&file) {
            return Err(OpenError::NotOurs(path.to_path_buf()));
        }
        guard::check_file_opens_for_writing(path)?;
    }
    if grows {
        // Checked before the file grows, so a refused job leaves it as it was.
        job.resolve_span(needed)?;
        job.check_alignment(file_logical_block(path))?;
        create_filled(path, needed, job, m.len(), stop)?;
    } else if m.blocks() * 512 < m.len() && job.reads() {
        notes.push(format!(
            "{} is sparse: reads of its holes never reach the device and look too fast",
            path.display()
        ));
    }
    Ok(FoundTarget {
        kind: TargetKind::File,
        size_bytes: m.len().max(needed),
        logical: file_logical_block(path),
        created: false,
        exclusive: None,
    })
}

/// Checks a block device for the job; a write job holds it with O_EXCL while it runs.
fn prepare_block(path: &Path, job: &Job, policy: &WritePolicy) -> Result<FoundTarget, OpenError> {
    let name = guard::block_name(path).map_err(io_err("cannot resolve", path))?;
    let size = read_sys_u64(&format!("/sys/class/block/{name}/size")).map(|s| s * 512);
    let size = size.ok_or_else(|| OpenError::Io {
        what: "cannot read the size of",
        path: path.to_path_buf(),
        cause: io::Error::other("no size in sysfs"),
    })?;
    if job.access.trims() != iolab_core::job::TrimKind::None && !supports_discard(&name) {
        return Err(OpenError::NoDiscard(path.to_path_buf()));
    }
    let mut exclusive = None;
    if job.writes() {
        guard::check_block_write(path, policy.destroy_data.as_deref())?;
        exclusive = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(path)
            .ok();
    }
    Ok(FoundTarget {
        kind: TargetKind::Block,
        size_bytes: size,
        logical: block_logical_block(&name),
        created: false,
        exclusive,
    })
}

/// The job's engine and its engine for paced jobs, from the one asked for (`blocks`: the
/// target cannot take non-blocking I/O); notes say why where `auto` or psync change what the
/// job gets.
fn choose_engine(
    path: &Path,
    job: &Job,
    engine: EngineChoice,
    blocks: bool,
    notes: &mut Vec<String>,
) -> Result<(EngineChoice, EngineChoice), OpenError> {
    let mut paced_engine = None;
    let engine = match engine {
        EngineChoice::Auto => match io_uring::IoUring::new(2) {
            Err(e) => {
                notes.push(format!(
                    "engine psync-per-slot: io_uring is unavailable ({e}); the queue depth is \
                     kept by one thread per queue slot"
                ));
                EngineChoice::PsyncPerSlot
            }
            Ok(_) if blocks => {
                notes.push(format!(
                    "engine psync-per-slot: {} cannot take I/O without blocking (no NOWAIT \
                     support, as with zram and other bio-based drivers), so io_uring would hand \
                     every I/O to a kernel worker thread; one thread per queue slot keeps the same \
                     queue depth at less CPU per I/O (paced jobs keep io_uring, whose one \
                     thread per worker starts each I/O on time). --engine io_uring forces io_uring",
                    path.display()
                ));
                paced_engine = Some(EngineChoice::Uring);
                EngineChoice::PsyncPerSlot
            }
            Ok(_) => EngineChoice::Uring,
        },
        EngineChoice::Uring => {
            io_uring::IoUring::new(2).map_err(OpenError::NoUring)?;
            EngineChoice::Uring
        }
        other => other,
    };
    if engine == EngineChoice::Psync && job.queue_depth > 1 {
        notes.push(format!(
            "engine psync: one I/O in flight per thread, as fio's psync, so the job's queue \
             depth of {} is not kept; --engine psync-per-slot keeps it with a thread per slot",
            job.queue_depth
        ));
    }
    Ok((engine, paced_engine.unwrap_or(engine)))
}

/// Notes when the job keeps far more I/Os in flight than the device queues (`queue_slots`).
fn note_queue_overflow(job: &Job, queue_slots: Option<u64>, notes: &mut Vec<String>) {
    let in_flight = u64::from(job.queue_depth) * u64::from(job.threads);
    if let Some(slots) = queue_slots.filter(|&n| in_flight > 4 * n) {
        notes.push(format!(
            "{in_flight} I/Os in flight ({} threads x queue depth {}) against a device that \
             queues {slots} (its queue/nr_requests): the rest wait their turn in the kernel or in \
             iolab's submission queue, so latencies are mostly that wait (about I/Os in flight / \
             IOPS), not the device's service time; keep threads x depth near {slots} to measure \
             that",
            job.threads, job.queue_depth
        ));
    }
}

impl PreparedTarget {
    /// A fresh descriptor on `engine` (`engine` or `paced_engine`) for one of the job's
    /// `threads` worker threads.
    pub fn open_worker(
        &self,
        job: &Job,
        engine: EngineChoice,
        threads: usize,
    ) -> io::Result<Box<dyn Target + Send>> {
        let mut opts = OpenOptions::new();
        opts.read(true).write(job.writes());
        if job.direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        let file = opts.open(&self.path)?;
        let caps = Capabilities {
            kind: self.kind,
            engine: "psync",
            size_bytes: self.size_bytes,
            logical_block_bytes: self.logical_block_bytes,
            needs_data: true,
            modelled: false,
        };
        Ok(match engine {
            EngineChoice::Psync | EngineChoice::PsyncPerSlot => {
                // Large blocks pin many pages per I/O; a huge page makes that one pin. Worth its
                // memory (at most 2 MiB a thread) only then, and within a budget.
                let huge = job.direct
                    && job.max_block() >= HUGE_BUFFER_MIN_BLOCK
                    && threads * HUGE_PAGE <= HUGE_BUFFER_BUDGET;
                Box::new(PsyncTarget::new(file, caps, huge))
            }
            EngineChoice::Uring | EngineChoice::Auto => {
                let batch = submit_batch(self.queue_slots, threads, job.queue_depth);
                let unplugged = submits_unplugged(self.queue_slots, threads, job);
                Box::new(
                    UringTarget::new(file, caps, self.blocks)?
                        .with_submit_batch(batch)
                        .unplugged(unplugged)
                        .filling_ahead(job.direct),
                )
            }
        })
    }

    /// Returns the whole target to "never written" (a suite's purge): hole punching for a file,
    /// a discard for a block device — the latter only when the user offered that device with
    /// `--destroy-data`, since a discard destroys everything on it. `Err` says why not.
    ///
    /// The write checks are made here again, whatever job the target was opened for: a target
    /// opened for a read-only job was never checked as a writer's (a mounted device, a user's
    /// file), and a purge destroys all of it.
    pub fn purge(&self, policy: &WritePolicy) -> Result<String, String> {
        let file = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(|e| format!("cannot open {}: {e}", self.path.display()))?;
        match self.kind {
            TargetKind::File if !policy.overwrite && !sys::is_marked_created(&file) => {
                Err(OpenError::NotOurs(self.path.clone()).to_string())
            }
            TargetKind::File => {
                guard::check_file_write(&self.path).map_err(|e| e.to_string())?;
                self.purge_checked(&file, policy)
            }
            TargetKind::Block if self.exclusive.is_none() => {
                guard::check_block_write(&self.path, policy.destroy_data.as_deref())
                    .map_err(|e| e.to_string())?;
                self.purge_checked(&file, policy)
            }
            _ => self.purge_checked(&file, policy),
        }
    }

    /// [`PreparedTarget::purge`] once the target is known to be writable.
    fn purge_checked(&self, file: &File, policy: &WritePolicy) -> Result<String, String> {
        match self.kind {
            TargetKind::File => {
                sys::punch_hole(file, 0, self.size_bytes)
                    .map_err(|e| format!("hole punching failed on {}: {e}", self.path.display()))?;
                Ok(format!(
                    "punched a hole over all {} of the file",
                    format_size(self.size_bytes)
                ))
            }
            TargetKind::Block => {
                let offered = policy
                    .destroy_data
                    .as_deref()
                    .is_some_and(|d| guard::same_device(d, &self.path));
                if !offered {
                    return Err(format!(
                        "a discard destroys everything on {dev}; allow it with --destroy-data={dev}",
                        dev = self.path.display()
                    ));
                }
                sys::discard(file, 0, self.size_bytes)
                    .map_err(|e| format!("discard failed on {}: {e}", self.path.display()))?;
                Ok(format!(
                    "discarded all {} of the device",
                    format_size(self.size_bytes)
                ))
            }
            _ => Err("nothing to purge".into()),
        }
    }

    /// Removes the file if this run created it.
    pub fn remove_if_created(&self) -> io::Result<()> {
        if self.created {
            fs::remove_file(&self.path)?;
        }
        Ok(())
    }
}

/// Refuses to create or grow `path` by `needed` bytes where its filesystem has only
/// `available` bytes free (`None`: unknown, not refused). A 1 TiB offset once filled a disk.
fn check_room(
    path: &Path,
    needed: u64,
    available: Option<u64>,
    offset: u64,
) -> Result<(), OpenError> {
    match available {
        Some(available) if needed > available => Err(OpenError::NoSpace {
            path: path.to_path_buf(),
            needed,
            available,
            offset,
        }),
        _ => Ok(()),
    }
}

/// Creates (or extends from `from`) a regular file to `size` bytes, writing every byte with the
/// job's data so that nothing is sparse, then drops it from the page cache. Refused up front
/// when the filesystem lacks the room; when the writing fails or `stop` is set, what was
/// written is undone (a created file removed, a grown one cut back to `from` bytes).
fn create_filled(
    path: &Path,
    size: u64,
    job: &Job,
    from: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), OpenError> {
    let fs_of = if from > 0 {
        path
    } else {
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    check_room(
        path,
        size - from,
        sys::free_bytes(fs_of).ok(),
        job.offset_bytes,
    )?;
    let file = if from == 0 {
        // create_new: the file undone on failure is certainly the one made here.
        OpenOptions::new().write(true).create_new(true).open(path)
    } else {
        OpenOptions::new().write(true).open(path)
    }
    .map_err(io_err("cannot create", path))?;
    if from == 0 {
        // Best effort: on filesystems without user xattrs the file is just not recognised later.
        let _ = sys::mark_created(&file);
    }
    let filled = fill(&file, path, size, job, from, stop);
    if let Err(e) = filled {
        let undone = if from == 0 {
            fs::remove_file(path).map(|()| "the partial file was removed".to_string())
        } else {
            file.set_len(from)
                .map(|()| format!("it was cut back to its former {}", format_size(from)))
        }
        .unwrap_or_else(|u| format!("undoing it failed ({u}): remove it by hand"));
        return Err(match e {
            OpenError::Interrupted { path, .. } => OpenError::Interrupted { path, undone },
            OpenError::Io { what, path, cause } => OpenError::Io {
                what,
                path,
                cause: io::Error::new(cause.kind(), format!("{cause}; {undone}")),
            },
            other => other,
        });
    }
    sys::drop_cached_pages(&file);
    Ok(())
}

/// Writes `[from, size)` of `file` with the job's data and syncs it; stops when `stop` is set.
fn fill(
    mut file: &File,
    path: &Path,
    size: u64,
    job: &Job,
    from: u64,
    stop: Option<&AtomicBool>,
) -> Result<(), OpenError> {
    let mut data = DataGenerator::new(job, job.seed ^ 0xF111);
    let mut chunk = vec![0u8; 1 << 20];
    let mut at = from;
    use std::io::Seek;
    file.seek(io::SeekFrom::Start(from))
        .map_err(io_err("cannot seek in", path))?;
    while at < size {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(OpenError::Interrupted {
                path: path.to_path_buf(),
                undone: String::new(),
            });
        }
        let n = ((size - at) as usize).min(chunk.len());
        for block in chunk[..n].chunks_mut(64 * 1024) {
            data.fill(block);
        }
        file.write_all(&chunk[..n]).map_err(|e| OpenError::Io {
            what: "cannot fill",
            path: path.to_path_buf(),
            cause: io::Error::new(e.kind(), format!("{e} after {}", format_size(at))),
        })?;
        at += n as u64;
    }
    file.sync_all().map_err(io_err("cannot sync", path))
}

/// Whether io_uring would have to punt every I/O on `path` to its worker threads: the target,
/// opened with or without O_DIRECT (`direct`), refuses non-blocking I/O. Unknown counts as "no".
pub fn blocks_io_uring(path: &Path, direct: bool, logical_block_bytes: u64) -> bool {
    let mut opts = OpenOptions::new();
    opts.read(true);
    if direct {
        opts.custom_flags(libc::O_DIRECT);
    }
    opts.open(path)
        .is_ok_and(|f| !sys::supports_nowait(&f, logical_block_bytes as usize))
}

/// Whether block device `name` takes discards: its queue's `discard_max_bytes` (a partition's
/// is its disk's). Unknown (no such file) counts as yes: the TRIM's own error then says.
fn supports_discard(name: &str) -> bool {
    let own = format!("/sys/class/block/{name}/queue/discard_max_bytes");
    let disk = format!("/sys/class/block/{name}/../queue/discard_max_bytes");
    read_sys_u64(&own)
        .or_else(|| read_sys_u64(&disk))
        .is_none_or(|max| max > 0)
}

fn read_sys_u64(path: &str) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Most requests one `io_uring_enter` of a job's thread hands over, for `threads` threads of
/// `queue_depth` on a device that queues `slots` requests: all of them while the device can
/// queue everything the job keeps in flight; where the job keeps more, a thread's share of the
/// device queue (at least [`MIN_SUBMIT_BATCH`]), since then each request may block the call
/// until another one finishes, and the completions that wait meanwhile are neither stamped nor
/// replaced (fio's `iodepth_batch_submit` bounds the same).
fn submit_batch(slots: Option<u64>, threads: usize, queue_depth: u32) -> usize {
    let in_flight = threads as u64 * u64::from(queue_depth);
    match slots {
        Some(slots) if in_flight > slots => (slots / threads.max(1) as u64)
            .max(MIN_SUBMIT_BATCH)
            .min(u64::from(queue_depth)) as usize,
        _ => queue_depth.max(1) as usize,
    }
}

/// Whether a job's requests go to the device one or two per `io_uring_enter`, never plugged
/// into batches (see [`crate::sys::uring`]): direct I/O where the device can queue all that the
/// job keeps in flight. Buffered I/O is mostly served from the page cache, and an overrun
/// device queue blocks the call anyway: both keep whole batches, which cost fewer calls.
fn submits_unplugged(slots: Option<u64>, threads: usize, job: &Job) -> bool {
    let in_flight = threads as u64 * u64::from(job.queue_depth);
    job.direct && slots.is_none_or(|slots| in_flight <= slots)
}

/// Fewest requests one `io_uring_enter` hands over where the device queue is overrun: fewer
/// cost CPU that the device's own threads may need. Measured with 16 threads x QD 4096 on a loop
/// device queueing 32, twice each: 2 per call took 4.3 µs of CPU per I/O and the device did
/// 2.09-2.18 M I/Os in 10 s; 8 per call, 3.4 µs and 2.38-2.44 M. Both were counted exactly.
const MIN_SUBMIT_BATCH: u64 = 8;

/// Logical block size of a block device (a partition answers with its disk's queue).
fn block_logical_block(name: &str) -> u64 {
    read_sys_u64(&format!("/sys/class/block/{name}/queue/logical_block_size"))
        .or_else(|| {
            read_sys_u64(&format!(
                "/sys/class/block/{name}/../queue/logical_block_size"
            ))
        })
        .unwrap_or(512)
}

/// How many requests the block device under `path` (itself, or the one under its filesystem)
/// queues at once (`queue/nr_requests`; a partition answers with its disk's). `None` for
/// bio-based devices without a request queue (zram) and filesystems without a device (tmpfs).
fn device_queue_slots(path: &Path) -> Option<u64> {
    let m = fs::metadata(path).ok()?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    queue_attribute(dev, "nr_requests").filter(|&n| n > 0)
}

/// A `queue/` attribute of block device `dev` (a device number), from its disk's queue when
/// `dev` is a partition.
fn queue_attribute(dev: u64, name: &str) -> Option<u64> {
    let base = format!("/sys/dev/block/{}:{}", guard::major(dev), guard::minor(dev));
    read_sys_u64(&format!("{base}/queue/{name}"))
        .or_else(|| read_sys_u64(&format!("{base}/../queue/{name}")))
}

/// Logical block size of the device under a file's filesystem (512 when unknown, e.g. tmpfs).
fn file_logical_block(path: &Path) -> u64 {
    let Ok(m) = fs::metadata(path) else {
        return 512;
    };
    queue_attribute(m.dev(), "logical_block_size").unwrap_or(512)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    fn job(text: &str) -> Job {
        JobSpec::from_toml(text, "test.toml")
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn a_file_larger_than_the_free_space_is_refused_naming_it_and_the_bytes() {
        // `--offset 1t --size 1m` on a disk with 60 GiB free: it used to start writing.
        let path = Path::new("./new.bin");
        let e = check_room(path, (1 << 40) + (1 << 20), Some(60 << 30), 1 << 40).unwrap_err();
        let said = e.to_string();
        for part in [
            "./new.bin needs 1099512676352 more bytes",
            "has 64424509440 bytes (60g) free",
            "smaller size or offset, or free space",
        ] {
            assert!(said.contains(part), "{part}: {said}");
        }
        // A job with no offset (quick's, a replay's) is told only of its size.
        let said = check_room(path, 80 << 30, Some(60 << 30), 0)
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("give a smaller size, or free space"),
            "{said}"
        );
        assert!(!said.contains("offset"), "{said}");
        check_room(path, 60 << 30, Some(60 << 30), 0).unwrap();
        // Unknown free space (statvfs failed): not refused.
        check_room(path, u64::MAX, None, 0).unwrap();
    }

    #[test]
    fn the_free_space_is_that_of_the_files_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let free = sys::free_bytes(dir.path()).unwrap();
        assert!(free > 0);
        assert!(sys::free_bytes(&dir.path().join("not/there")).is_err());
    }

    #[test]
    fn ctrl_c_stops_the_writing_of_a_test_file_and_undoes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iolab-tmp");
        let stop = AtomicBool::new(true);
        let policy = WritePolicy::default();
        // A new file: stopped, and removed.
        let e = prepare_target(
            &path,
            &mut job("size = \"4m\""),
            &policy,
            EngineChoice::Psync,
            Some(&stop),
        )
        .unwrap_err();
        assert!(matches!(e, OpenError::Interrupted { .. }), "{e}");
        assert!(
            e.to_string().contains("the partial file was removed"),
            "{e}"
        );
        assert!(!path.exists());
        // A file grown from 1 MiB: stopped, and cut back to 1 MiB.
        prepare_target(
            &path,
            &mut job("size = \"1m\""),
            &policy,
            EngineChoice::Psync,
            None,
        )
        .unwrap();
        let e = prepare_target(
            &path,
            &mut job("size = \"4m\""),
            &policy,
            EngineChoice::Psync,
            Some(&stop),
        )
        .unwrap_err();
        assert!(e.to_string().contains("cut back to its former 1m"), "{e}");
        assert_eq!(fs::metadata(&path).unwrap().len(), 1 << 20);
    }

    #[test]
    fn far_more_in_flight_than_the_device_queues_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.iolab-tmp");
        let Some(slots) = device_queue_slots(dir.path()) else {
            println!("skipped: the temp dir's filesystem has no request queue to compare with");
            return;
        };
        let notes = |qd: u64| {
            let text = format!("size = \"1m\"\nqueue_depth = {qd}\nthreads = 2");
            let t = prepare_target(
                &path,
                &mut job(&text),
                &WritePolicy::default(),
                EngineChoice::Psync,
                None,
            )
            .unwrap();
            t.notes.join("\n")
        };
        let deep = notes(4 * slots);
        assert!(
            deep.contains(&format!("queues {slots} (its queue/nr_requests)")),
            "{deep}"
        );
        let near = notes(slots / 2);
        assert!(!near.contains("nr_requests"), "{near}");
    }

    #[test]
    fn submissions_are_batched_by_the_threads_share_of_an_overrun_device_queue() {
        // Within the device's queue, or with no queue known: one call for everything.
        assert_eq!(submit_batch(Some(256), 4, 64), 64);
        assert_eq!(submit_batch(None, 16, 4096), 4096);
        // Overrun: a thread's share of the queue, at least 8, at most its depth.
        assert_eq!(submit_batch(Some(1023), 4, 4096), 255);
        assert_eq!(submit_batch(Some(32), 16, 4096), 8);
        assert_eq!(submit_batch(Some(32), 64, 4), 4);
    }

    #[test]
    fn direct_io_goes_out_unplugged_unless_the_device_queue_is_overrun() {
        let job = |extra: &str| job(&format!("queue_depth = 32\n{extra}"));
        assert!(submits_unplugged(Some(256), 1, &job("")));
        assert!(submits_unplugged(None, 4, &job("")));
        assert!(submits_unplugged(Some(128), 4, &job("")));
        // Buffered: the page cache serves it, nothing to plug; fewer calls win.
        assert!(!submits_unplugged(Some(256), 1, &job("direct = false")));
        // More in flight than the device queues: calls block on its tags anyway.
        assert!(!submits_unplugged(Some(64), 4, &job("")));
    }
}
