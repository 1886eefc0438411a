//! Loop devices over sparse files in temp dirs.

use crate::cmd::{is_root, missing_tool, run};
use crate::retry;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why loop-device tests cannot run here (not root, no `/dev/loop-control`, no `losetup`), or
/// `None`.
pub fn loop_skip_reason() -> Option<String> {
    if !is_root() {
        return Some("not root (loop devices need root)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control (loop driver missing?)".into());
    }
    missing_tool(&["losetup"])
}

/// A loop device over a sparse backing file in its own temp dir; detached (and the file removed)
/// on drop.
///
/// The device accepts `O_DIRECT` (512-byte aligned). It is attached with `--direct-io=on` when
/// the backing filesystem allows, so its I/O does not go through the page cache twice. Discards
/// reach the backing file as hole punches (the loop driver's `fallocate`), so a trimmed range
/// reads back as zeroes.
#[derive(Debug)]
pub struct LoopDevice {
    /// The device node, e.g. `/dev/loop3`.
    pub path: PathBuf,
    backing: PathBuf,
    discards_disabled: bool,
    // Last: removed after the device is detached.
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    /// A loop device of `size_bytes` (a multiple of 512) over a file in a new temp dir under
    /// the default temp directory.
    pub fn new(size_bytes: u64) -> Result<LoopDevice, String> {
        LoopDevice::new_in(&std::env::temp_dir(), size_bytes)
    }

    /// As [`LoopDevice::new`], with the backing file's temp dir under `parent` (e.g. a tmpfs
    /// [`Mount`](crate::Mount), to keep the data off the machine's disk).
    pub fn new_in(parent: &Path, size_bytes: u64) -> Result<LoopDevice, String> {
        if size_bytes == 0 || size_bytes % 512 != 0 {
            return Err(format!(
                "loop device size {size_bytes} B is not a positive multiple of 512"
            ));
        }
        let dir = tempfile::Builder::new()
            .prefix("iolab-loop-")
            .tempdir_in(parent)
            .map_err(|e| format!("temp dir under {}: {e}", parent.display()))?;
        let backing = dir.path().join("disk.img");
        let f = fs::File::create(&backing).map_err(|e| format!("{}: {e}", backing.display()))?;
        f.set_len(size_bytes)
            .map_err(|e| format!("sizing {}: {e}", backing.display()))?;
        drop(f);
        let file = backing
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", backing.display()))?;
        let dev = run("losetup", &["-f", "--show", "--direct-io=on", file])
            .or_else(|_| run("losetup", &["-f", "--show", file]))?;
        if !dev.starts_with("/dev/loop") {
            return Err(format!("losetup printed {dev:?}, not a loop device"));
        }
        Ok(LoopDevice {
            path: PathBuf::from(dev),
            backing,
            discards_disabled: false,
            _dir: dir,
        })
    }

    /// The kernel name, e.g. `loop3`.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The backing file.
    pub fn backing_file(&self) -> &Path {
        &self.backing
    }

    /// Whether the loop driver uses direct I/O on the backing file (`loop/dio`).
    pub fn direct_io(&self) -> bool {
        fs::read_to_string(format!("/sys/block/{}/loop/dio", self.name()))
            .is_ok_and(|s| s.trim() == "1")
    }

    /// Makes the device drop discards, as a stack that does not pass TRIM down would: sets
    /// `queue/discard_max_bytes` to 0, so the block layer reports no discard support and
    /// FITRIM fails with `EOPNOTSUPP`. Call before [`Mount::ext4`](crate::Mount::ext4).
    ///
    /// Kernel 6.x keeps that limit after the device is detached and refuses to raise it again,
    /// so on drop the device is also removed and re-created through `/dev/loop-control`, giving
    /// the next user fresh queue limits.
    pub fn disable_discards(&mut self) -> Result<(), String> {
        let knob = format!("/sys/block/{}/queue/discard_max_bytes", self.name());
        self.discards_disabled = true;
        fs::write(&knob, "0").map_err(|e| format!("writing 0 to {knob}: {e}"))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let dev = self.path.to_string_lossy().into_owned();
        // Busy only if the caller still has it open or mounted; `losetup -d` then sets
        // autoclear, which detaches on last close.
        if let Err(e) = retry(10, Duration::from_millis(100), || {
            run("losetup", &["-d", &dev])
        }) {
            eprintln!("iolab-testkit: cleanup: {e}");
            return;
        }
        if self.discards_disabled {
            let r = retry(20, Duration::from_millis(100), || {
                recreate_loop(&dev).map_err(|e| e.to_string())
            });
            if let Err(e) = r {
                eprintln!(
                    "iolab-testkit: cleanup: could not re-create {dev} (discards stay off on it): {e}"
                );
            }
        }
    }
}

/// Removes the detached loop device and adds it back, so the next user gets fresh queue limits.
fn recreate_loop(dev: &str) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const LOOP_CTL_ADD: libc::c_ulong = 0x4C80;
    const LOOP_CTL_REMOVE: libc::c_ulong = 0x4C81;
    let n: libc::c_ulong = dev
        .trim_start_matches("/dev/loop")
        .parse()
        .map_err(|_| std::io::Error::other(format!("{dev} is not a loop device name")))?;
    let ctl = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")?;
    // SAFETY: loop-control ioctls take the device number by value; `ctl` is open for the call.
    // REMOVE fails with EBUSY while the device is still bound (autoclear pending, or someone
    // bound it meanwhile); the caller retries.
    if unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_REMOVE as _, n) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::ioctl(ctl.as_raw_fd(), LOOP_CTL_ADD as _, n) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
