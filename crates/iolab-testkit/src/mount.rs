//! Filesystems mounted on temp dirs.

use crate::cmd::{is_root, missing_tool, run};
use crate::retry;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why mount tests (ext4 via `mkfs.ext4`, tmpfs) cannot run here, or `None`.
pub fn mount_skip_reason() -> Option<String> {
    if !is_root() {
        return Some("not root (mounting needs root)".into());
    }
    missing_tool(&["mount", "umount", "mkfs.ext4"])
}

/// A filesystem mounted on a temp dir; unmounted (lazily if still busy) on drop, and the dir
/// removed.
#[derive(Debug)]
pub struct Mount {
    /// The mount point.
    pub dir: PathBuf,
    mounted: bool,
    // Last: removed after the unmount (kept if the unmount failed).
    tmp: Option<tempfile::TempDir>,
}

impl Mount {
    /// Makes a fresh ext4 on `dev` (`mkfs.ext4 -F -q`, which discards the whole device first
    /// when it supports discards) and mounts it.
    pub fn ext4(dev: &Path) -> Result<Mount, String> {
        Mount::ext4_with(dev, &[])
    }

    /// As [`Mount::ext4`] with mount options (e.g. `["discard"]`).
    pub fn ext4_with(dev: &Path, options: &[&str]) -> Result<Mount, String> {
        let dev_s = dev
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", dev.display()))?;
        run("mkfs.ext4", &["-F", "-q", dev_s])?;
        Mount::existing(dev, "ext4", options)
    }

    /// Mounts the filesystem already on `dev` (type `fs_type`, options as for `mount -o`).
    pub fn existing(dev: &Path, fs_type: &str, options: &[&str]) -> Result<Mount, String> {
        let dev_s = dev
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", dev.display()))?;
        let opts = options.join(",");
        let mut args = vec!["-t", fs_type];
        if !opts.is_empty() {
            args.extend(["-o", &opts]);
        }
        args.push(dev_s);
        Mount::mount_on_temp_dir(&args)
    }

    /// A tmpfs of `size_bytes`.
    pub fn tmpfs(size_bytes: u64) -> Result<Mount, String> {
        if size_bytes == 0 {
            return Err("a tmpfs of 0 bytes would be unlimited; give a size".into());
        }
        let size = format!("size={size_bytes}");
        Mount::mount_on_temp_dir(&["-t", "tmpfs", "-o", &size, "iolab-testkit"])
    }

    /// `mount ARGS… DIR` on a new temp dir.
    fn mount_on_temp_dir(args: &[&str]) -> Result<Mount, String> {
        let tmp = tempfile::Builder::new()
            .prefix("iolab-mnt-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        let dir = tmp.path().join("mnt");
        fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir_s = dir
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", dir.display()))?
            .to_string();
        let mut all = args.to_vec();
        all.push(&dir_s);
        run("mount", &all)?;
        Ok(Mount {
            dir,
            mounted: true,
            tmp: Some(tmp),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if !self.mounted {
            return;
        }
        let dir = self.dir.to_string_lossy().into_owned();
        if retry(10, Duration::from_millis(200), || run("umount", &[&dir])).is_err() {
            // Still busy (a file left open): detach now, the kernel finishes on last close.
            if let Err(e) = run("umount", &["-l", &dir]) {
                eprintln!("iolab-testkit: cleanup: {e}");
                // Do not let TempDir delete files on a filesystem that is still mounted.
                if let Some(tmp) = self.tmp.take() {
                    let _ = tmp.keep();
                }
            }
        }
    }
}
