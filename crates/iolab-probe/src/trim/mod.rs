//! trimcheck on Linux: does a TRIM issued by the filesystem reach the drive?
//!
//! 1. Write 32 MiB of random padding, a unique random block, and 32 MiB more, with `O_DIRECT`
//!    (random padding defeats deduplicating drives; direct I/O puts the data on the device).
//! 2. Find the block's physical location with FIEMAP (`FIEMAP_FLAG_SYNC`), rejecting unreliable
//!    extents, and add the partition's start to address the whole disk.
//! 3. Read it there once to prove the mapping (trimcheck v0.4 dropped its read-back because it
//!    stopped TRIM on some setups; `verify_location: false` skips it, at the cost of trusting
//!    FIEMAP blindly).
//! 4. Delete the file, commit the filesystem, FITRIM the mount (what `fstrim` does).
//! 5. Read the raw device at the spot: all 0x00/0xFF → WORKING; the block → NOT WORKING (or not
//!    yet); anything else → INDETERMINATE. Optionally wait and read again.
//!
//! Filesystems where FIEMAP or FITRIM cannot be trusted are refused with a reason, never given
//! a verdict.

mod classify;
mod extents;
mod io;
mod refuse;

pub use classify::{Readback, Verdict};

use crate::error::TrimError;
use crate::model::{DeviceKind, Probe};
use crate::sys;
use iolab_core::rng::Rng;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to run trimcheck.
#[derive(Clone, Debug)]
pub struct TrimOptions {
    /// Random padding before and after the test block, bytes (trimcheck: 32 MiB).
    pub padding_bytes: u64,
    /// Size of the test block; `None` = max(16 KiB, filesystem block, physical sector).
    pub block_bytes: Option<u64>,
    /// If the first read says NOT WORKING, wait this long and read again (drives may trim
    /// lazily; trimcheck's README suggests about 20 s).
    pub wait: Option<Duration>,
    /// Read the block from the device before deleting it, to prove the mapping.
    pub verify_location: bool,
}

impl Default for TrimOptions {
    fn default() -> Self {
        TrimOptions {
            padding_bytes: 32 << 20,
            block_bytes: None,
            wait: None,
            verify_location: true,
        }
    }
}

/// One read of the device at the block's location.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reading {
    /// Seconds after FITRIM returned.
    pub after_s: f64,
    /// What was there.
    pub readback: Readback,
    /// What it means.
    pub verdict: Verdict,
}

/// What trimcheck found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrimReport {
    /// The directory the test file was written in.
    pub directory: PathBuf,
    /// Filesystem type.
    pub fs_type: String,
    /// The device node read.
    pub device: PathBuf,
    /// Byte offset of the block on that device (partition start included).
    pub device_offset_bytes: u64,
    /// Test block size.
    pub block_bytes: u64,
    /// Bytes FITRIM reported trimmed, if it ran.
    pub fitrim_trimmed_bytes: Option<u64>,
    /// FITRIM's error, if it failed.
    pub fitrim_error: Option<String>,
    /// Every read after the trim, first to last.
    pub readings: Vec<Reading>,
    /// The final verdict.
    pub verdict: Verdict,
    /// Why, in a sentence or two.
    pub reason: String,
    /// Preconditions and caveats noticed on the way.
    pub notes: Vec<String>,
}

/// Deletes the test file if trimcheck stops early.
struct TestFile {
    path: PathBuf,
    armed: bool,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The device node for a kernel block-device name whose number is `dev` (`MAJ:MIN`).
fn device_node(name: &str, dev: &str) -> Option<PathBuf> {
    [
        Path::new("/dev").join(name),
        Path::new("/dev/block").join(dev),
    ]
    .into_iter()
    .find(|p| {
        fs::metadata(p).is_ok_and(|m| {
            m.file_type().is_block_device() && crate::resolve::dev_string(m.rdev()) == dev
        })
    })
}

/// Checks that the method can work on the probed path; returns the device to read, the offset
/// of the filesystem's device on it, and notes.
fn preconditions(path: &Path, p: &Probe) -> Result<(PathBuf, u64, Vec<String>), TrimError> {
    let unsupported = |reason: String| TrimError::Unsupported {
        path: path.to_path_buf(),
        reason,
    };
    let Some(m) = &p.filesystem else {
        return Err(unsupported("no mounted filesystem found for it".into()));
    };
    if let Some(why) = refuse::filesystem(&m.fs_type) {
        return Err(unsupported(why));
    }
    if m.has_option("ro") {
        return Err(unsupported(format!(
            "{} is mounted read-only; the test must write and delete a file",
            m.mount_point.display()
        )));
    }
    let Some(disk) = &p.disk else {
        return Err(unsupported(format!(
            "{} on {} has no block device (source '{}')",
            m.fs_type,
            m.mount_point.display(),
            m.source
        )));
    };
    let mut notes = Vec::new();
    if disk.discard.supported == Some(false) {
        notes.push(format!(
            "{} reports no discard support (queue/discard_max_bytes = 0): TRIM cannot pass",
            disk.name
        ));
    }
    match disk.kind {
        DeviceKind::DeviceMapper | DeviceKind::Md => notes.push(format!(
            "{} is {}: the read goes through it, so the verdict is about what it returns, not \
             about the drives below",
            disk.name,
            disk.kind.label()
        )),
        DeviceKind::Virtio | DeviceKind::Xen => notes.push(format!(
            "{} is a virtual disk: WORKING means the hypervisor honoured the discard, not \
             necessarily the physical drive",
            disk.name
        )),
        _ => {}
    }
    if let Some(s) = &p.sata {
        if s.deterministic_read_after_trim == Some(false) {
            notes.push(
                "the drive does not promise deterministic reads after TRIM: old data may read \
                 back even when TRIM works (NOT WORKING would then be wrong; treat it as 'not \
                 proven')"
                    .into(),
            );
        }
    }
    let (name, dev, base) = match &p.partition {
        Some(part) => {
            let Some(start) = part.start_sectors else {
                return Err(unsupported(format!(
                    "the start of partition {} is unknown (no sysfs 'start')",
                    part.name
                )));
            };
            (disk.name.clone(), disk.dev.clone(), start * 512)
        }
        None => (disk.name.clone(), disk.dev.clone(), 0),
    };
    let node = device_node(&name, &dev).ok_or_else(|| {
        unsupported(format!(
            "no device node for {name} ({dev}) in /dev; the raw device must be readable"
        ))
    })?;
    Ok((node, base, notes))
}

/// The directory to test in: `path` itself, or the directory of an existing regular file.
/// Anything else (missing paths, block devices, special files) is an error that says what to
/// give instead.
fn test_directory(path: &Path) -> Result<PathBuf, TrimError> {
    let meta = fs::metadata(path).map_err(|e| TrimError::io("examining", path, e))?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Ok(path.to_path_buf());
    }
    if ft.is_file() {
        return Ok(path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf());
    }
    let unsupported = |reason: String| TrimError::Unsupported {
        path: path.to_path_buf(),
        reason,
    };
    if ft.is_block_device() {
        // Where is it mounted? The probe finds a filesystem whose device is this one.
        let mounted = crate::probe(path)
            .ok()
            .and_then(|p| p.filesystem)
            .map(|m| m.mount_point);
        return Err(unsupported(match mounted {
            Some(mp) => format!(
                "it is a block device; trimcheck works through a filesystem on it: run it on a \
                 directory of that filesystem, e.g. '{}'",
                mp.display()
            ),
            None => "it is a block device and no filesystem on it is mounted; trimcheck works \
                     through a filesystem: mount one from it and give a directory there"
                .to_string(),
        }));
    }
    Err(unsupported(
        "it is neither a directory nor a regular file; give a directory on the filesystem to \
         check"
            .to_string(),
    ))
}

/// What trimcheck needs from the process and the filesystem before it writes anything: the
/// right to trim, read access to the raw device, room for the test file.
fn access_checks(
    path: &Path,
    dir: &Path,
    device: &Path,
    needed_bytes: u64,
) -> Result<File, TrimError> {
    let unsupported = |reason: String| TrimError::Unsupported {
        path: path.to_path_buf(),
        reason,
    };
    if sys::has_cap_sys_admin() == Some(false) {
        return Err(unsupported(
            "trimming a filesystem (FITRIM) needs CAP_SYS_ADMIN: run trimcheck as root".into(),
        ));
    }
    let dev = io::open_device(device).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => unsupported(format!(
            "no access to the raw device {}: {e}. trimcheck must read it: run as root, outside \
             a container that hides the device",
            device.display()
        )),
        _ => TrimError::io("opening (O_DIRECT)", device, e),
    })?;
    let dir_file = File::open(dir).map_err(|e| TrimError::io("opening", dir, e))?;
    let free = sys::free_bytes(&dir_file).map_err(|e| TrimError::io("statvfs on", dir, e))?;
    // Leave the filesystem some room: a full filesystem makes the test itself fail.
    let margin = 8 << 20;
    if free < needed_bytes.saturating_add(margin) {
        return Err(unsupported(refuse::no_room(needed_bytes, free, dir)));
    }
    Ok(dev)
}

/// Runs trimcheck in directory `path` (an existing regular file means its directory). Needs
/// root: it trims the filesystem and reads the raw device. Writes `2 × padding + block` bytes.
///
/// Refuses with [`TrimError::Unsupported`] (the method cannot work here, and why) before
/// anything is written; fails with [`TrimError::Unmappable`] when the test block's location on
/// the device cannot be trusted. Neither is a verdict.
pub fn trimcheck(path: &Path, opts: &TrimOptions) -> Result<TrimReport, TrimError> {
    let dir = test_directory(path)?;
    let p = crate::probe(&dir)?;
    let (device, base, mut notes) = preconditions(path, &p)?;
    let fs_type = p
        .filesystem
        .as_ref()
        .map(|m| m.fs_type.clone())
        .unwrap_or_default();
    let (block_bytes, total) = test_sizes(path, &dir, &p, opts)?;
    let dev = access_checks(path, &dir, &device, total)?;

    // 1. The file.
    let file_path = dir.join(format!(".iolab-trimcheck-{}.bin", std::process::id()));
    let mut guard = TestFile {
        path: file_path.clone(),
        armed: false,
    };
    let mut f = io::create_direct(&file_path)
        .map_err(|e| TrimError::io("creating (O_DIRECT)", &file_path, e))?;
    guard.armed = true;
    let block = write_test_file(&mut f, &file_path, opts, block_bytes, total)?;

    // 2. Where is the block?
    let extents = sys::fiemap(&f, opts.padding_bytes, block_bytes, 64)
        .map_err(|e| TrimError::io("FIEMAP on", &file_path, e))?;
    let ranges =
        extents::map_range(&extents, opts.padding_bytes, block_bytes).map_err(|reason| {
            TrimError::Unmappable {
                path: file_path.clone(),
                reason,
            }
        })?;
    drop(f);
    let read_block = || -> std::io::Result<Vec<u8>> {
        let mut out = vec![0u8; block_bytes as usize];
        for r in &ranges {
            let got = io::read_direct(&dev, base + r.fs_dev_offset, r.len as usize)?;
            let at = r.block_offset as usize;
            out[at..at + got.len()].copy_from_slice(&got);
        }
        Ok(out)
    };

    // 3. Prove the mapping before relying on it.
    if opts.verify_location {
        let before = read_block().map_err(|e| TrimError::io("reading", &device, e))?;
        if before != block.as_slice() {
            return Err(TrimError::Unmappable {
                path: file_path,
                reason: format!(
                    "{} does not hold the block where FIEMAP says (offset {}); the filesystem's \
                     addresses do not map 1:1 to this device",
                    device.display(),
                    base + ranges[0].fs_dev_offset
                ),
            });
        }
    } else {
        notes.push("location not verified before deletion (--no-verify)".into());
    }

    // 4. Delete, commit, trim.
    let (fitrim_trimmed_bytes, fitrim_error) = delete_and_trim(&mut guard, &dir)?;
    let trimmed_at = Instant::now();

    // 5. Read back.
    let mut readings = Vec::new();
    let read_once = |readings: &mut Vec<Reading>| -> Result<Verdict, TrimError> {
        let got = read_block().map_err(|e| TrimError::io("reading", &device, e))?;
        let (readback, verdict) = classify::classify(&got, block.as_slice());
        readings.push(Reading {
            after_s: trimmed_at.elapsed().as_secs_f64(),
            readback,
            verdict,
        });
        Ok(verdict)
    };
    let mut verdict = read_once(&mut readings)?;
    if let (Verdict::NotWorking, Some(wait)) = (verdict, opts.wait) {
        std::thread::sleep(wait);
        verdict = read_once(&mut readings)?;
    }
    let reason = explain(
        verdict,
        &readings,
        fitrim_error.as_deref(),
        opts.wait.is_some(),
    );
    Ok(TrimReport {
        directory: dir,
        fs_type,
        device,
        device_offset_bytes: base + ranges[0].fs_dev_offset,
        block_bytes,
        fitrim_trimmed_bytes,
        fitrim_error,
        readings,
        verdict,
        reason,
        notes,
    })
}

/// The test block's size (the option, else at least 16 KiB, the filesystem's block and the
/// disk's physical block) and the file's total size with its padding on both sides.
fn test_sizes(
    path: &Path,
    dir: &Path,
    p: &Probe,
    opts: &TrimOptions,
) -> Result<(u64, u64), TrimError> {
    let disk = p.disk.as_ref();
    let dir_meta = fs::metadata(dir).map_err(|e| TrimError::io("examining", dir, e))?;
    let block_bytes = opts.block_bytes.unwrap_or_else(|| {
        let phys = disk.and_then(|d| d.physical_block_bytes).unwrap_or(512) as u64;
        (16 << 10).max(dir_meta.blksize()).max(phys)
    });
    let align = io::ALIGN as u64;
    if block_bytes == 0 || block_bytes % align != 0 || opts.padding_bytes % align != 0 {
        return Err(TrimError::Unsupported {
            path: path.into(),
            reason: format!(
                "block and padding sizes must be multiples of {align} bytes (and the block not 0)"
            ),
        });
    }
    opts.padding_bytes
        .checked_mul(2)
        .and_then(|p| p.checked_add(block_bytes))
        .filter(|&t| usize::try_from(t).is_ok())
        .ok_or_else(|| TrimError::Unsupported {
            path: path.into(),
            reason: format!("a padding of {} bytes is too large", opts.padding_bytes),
        })
        .map(|total| (block_bytes, total))
}

/// Writes random padding, a random test block and more padding to `f` with O_DIRECT and
/// syncs it; returns the block, to recognise it on the device.
fn write_test_file(
    f: &mut File,
    file_path: &Path,
    opts: &TrimOptions,
    block_bytes: u64,
    total: u64,
) -> Result<io::AlignedBuf, TrimError> {
    let mut rng = io::padding_rng().map_err(|e| TrimError::io("reading", "/dev/urandom", e))?;
    let mut block = io::AlignedBuf::new(block_bytes as usize);
    io::urandom(block.as_mut_slice()).map_err(|e| TrimError::io("reading", "/dev/urandom", e))?;
    let write = |f: &mut File, rng: &mut Rng, block: &io::AlignedBuf| -> std::io::Result<()> {
        use std::io::Write;
        io::write_padding(f, rng, opts.padding_bytes)?;
        f.write_all(block.as_slice())?;
        io::write_padding(f, rng, opts.padding_bytes)?;
        f.sync_all()
    };
    write(f, &mut rng, &block).map_err(|e| TrimError::io("writing (O_DIRECT)", file_path, e))?;
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    if size != total {
        return Err(TrimError::Unmappable {
            path: file_path.to_path_buf(),
            reason: format!("the file is {size} bytes after writing, not the expected size"),
        });
    }
    Ok(block)
}

/// Deletes the test file, commits the deletion and trims the filesystem: FITRIM's trimmed
/// bytes, or its error when it refused for a reason other than permission.
fn delete_and_trim(
    guard: &mut TestFile,
    dir: &Path,
) -> Result<(Option<u64>, Option<String>), TrimError> {
    fs::remove_file(&guard.path).map_err(|e| TrimError::io("deleting", &guard.path, e))?;
    guard.armed = false;
    let dir_file = File::open(dir).map_err(|e| TrimError::io("opening", dir, e))?;
    dir_file
        .sync_all()
        .map_err(|e| TrimError::io("syncing", dir, e))?;
    sys::syncfs(&dir_file).map_err(|e| TrimError::io("syncing", dir, e))?;
    let trimmed = match sys::fitrim(&dir_file) {
        Ok(n) => (Some(n), None),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
            return Err(TrimError::io("FITRIM on", dir, e));
        }
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(trimmed)
}

fn explain(
    verdict: Verdict,
    readings: &[Reading],
    fitrim_error: Option<&str>,
    waited: bool,
) -> String {
    let last = readings.last().map(|r| r.readback);
    match verdict {
        Verdict::Working => format!(
            "the deleted block now reads as all {} on the device: the discard reached it",
            if last == Some(Readback::Ones) {
                "0xFF"
            } else {
                "zeroes"
            }
        ),
        Verdict::NotWorking => {
            let mut s = "the deleted block is still on the device".to_string();
            match fitrim_error {
                Some(e) => s.push_str(&format!(
                    "; FITRIM failed ({e}): the filesystem or a layer below does not pass discards"
                )),
                None if waited => s.push_str(" even after waiting"),
                None => s.push_str(
                    " (or not yet: some drives trim lazily; try --wait 20, and note that drives \
                     without deterministic read-after-TRIM may return old data)",
                ),
            }
            s
        }
        Verdict::Indeterminate => "the spot holds other data: the drive returns non-deterministic \
                                   data after TRIM, or the space was reused before the read"
            .into(),
    }
}
