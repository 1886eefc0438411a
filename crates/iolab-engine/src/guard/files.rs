//! The guard's checks on regular files: a loop device bound to one, active swap, a file the
//! kernel will not let anyone write.

use super::stacks::System;
use super::GuardError;
use iolab_host::mountinfo::unescape;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Refuses a write to the regular file `path` while a loop device is bound to it: the loop
/// device's users (a filesystem mounted from it, a VM's disk) would see its bytes change under
/// them, and a mounted one is corrupted. iolab's own test files are no exception. Refuses it
/// too while it is active swap, and while the kernel refuses to open it for writing (ETXTBSY):
/// reads run first in `quick`, so without this the run would meet that refusal only at its
/// first write, after minutes of reading.
pub fn check_file_write(path: &Path) -> Result<(), GuardError> {
    check_file_in_use(path)?;
    check_file_opens_for_writing(path)
}

/// The part of [`check_file_write`] that only looks (sysfs, `/proc/swaps`): a loop device
/// bound to the file, or the file active swap. Neither is overridden by `--overwrite`, so it is
/// said before a refusal that asks for it.
pub fn check_file_in_use(path: &Path) -> Result<(), GuardError> {
    let inspect = |e| GuardError::Inspect(path.to_path_buf(), e);
    let meta = fs::metadata(path).map_err(inspect)?;
    let sys = System::read().map_err(inspect)?;
    let devices = sys.loops_bound_to(meta.dev(), meta.ino());
    if !devices.is_empty() {
        return Err(GuardError::LoopBacked {
            file: path.to_path_buf(),
            devices,
        });
    }
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    let stat = |p: &str| fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    if let Some(swap) = swap_file_of(&swaps, (meta.dev(), meta.ino()), stat) {
        return Err(GuardError::SwapFile {
            file: path.to_path_buf(),
            swap,
        });
    }
    Ok(())
}

/// The part of [`check_file_write`] that opens the file for writing, as the run will, to find
/// what the kernel refuses to let anyone write (ETXTBSY: swap under a name that is gone, a
/// running program). Opening changes nothing (no O_TRUNC, no O_CREAT), but watchers see a
/// writer close it, so it is done only for a file the user gave up to be written.
pub fn check_file_opens_for_writing(path: &Path) -> Result<(), GuardError> {
    match OpenOptions::new().write(true).open(path) {
        Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => Err(GuardError::WriteBusy {
            file: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The path under which a `/proc/swaps` text lists the file `(st_dev, st_ino)` as active swap,
/// each swap file's path looked up with `stat`. Swap files the kernel shows as deleted are
/// not looked up (their path may name another file now).
pub(super) fn swap_file_of(
    text: &str,
    file: (u64, u64),
    stat: impl Fn(&str) -> Option<(u64, u64)>,
) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let mut fields = line.split_whitespace();
        let (path, kind) = (fields.next()?, fields.next()?);
        let path = unescape(path);
        (kind == "file" && !path.ends_with(" (deleted)") && stat(&path) == Some(file))
            .then_some(path)
    })
}
