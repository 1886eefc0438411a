//! From a path to a block device: file → filesystem (mountinfo) → `MAJ:MIN`.

use crate::error::ProbeError;
use crate::model::TargetKind;
use crate::sysfs::SysRoot;
use iolab_host::devnum;
use iolab_host::mountinfo::{self, Mount};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// `MAJ:MIN` of a `dev_t`, as sysfs and mountinfo write it.
pub(crate) fn dev_string(dev: u64) -> String {
    devnum::to_string(dev)
}

/// Where a target lives.
pub(crate) struct Resolved {
    pub kind: TargetKind,
    pub mount: Option<Mount>,
    /// The block device holding the data, `MAJ:MIN`.
    pub dev: Option<String>,
}

/// The nearest existing path at or above `path` (a result file that is not written yet lives
/// where its directory lives).
fn existing_ancestor(path: &Path) -> Result<(PathBuf, fs::Metadata), ProbeError> {
    let mut cur = path.to_path_buf();
    loop {
        match fs::metadata(&cur) {
            Ok(m) => return Ok((cur, m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = match cur.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ if cur.is_relative() => PathBuf::from("."),
                    _ => {
                        return Err(ProbeError::Target {
                            path: path.into(),
                            cause: e,
                        })
                    }
                };
                if parent == cur {
                    return Err(ProbeError::Target {
                        path: path.into(),
                        cause: e,
                    });
                }
                cur = parent;
            }
            Err(e) => {
                return Err(ProbeError::Target {
                    path: path.into(),
                    cause: e,
                })
            }
        }
    }
}

pub(crate) fn read_mounts(root: &SysRoot) -> Result<Vec<Mount>, ProbeError> {
    let text = fs::read_to_string(&root.mountinfo).map_err(|cause| ProbeError::MountTable {
        path: root.mountinfo.clone(),
        cause,
    })?;
    Ok(mountinfo::parse(&text))
}

/// Resolves a target to its filesystem and block device.
pub(crate) fn resolve(root: &SysRoot, path: &Path) -> Result<Resolved, ProbeError> {
    let (found, meta) = existing_ancestor(path)?;
    let ft = meta.file_type();
    let mounts = read_mounts(root)?;
    if ft.is_block_device() {
        let dev = dev_string(meta.rdev());
        let mount = mounts.iter().find(|m| m.dev == dev).cloned();
        return Ok(Resolved {
            kind: TargetKind::BlockDevice,
            mount,
            dev: Some(dev),
        });
    }
    let what = if ft.is_char_device() {
        Some("character device")
    } else if ft.is_fifo() {
        Some("FIFO")
    } else if ft.is_socket() {
        Some("socket")
    } else {
        None
    };
    if let Some(what) = what {
        return Err(ProbeError::NotStorage {
            path: path.into(),
            what,
        });
    }
    let kind = if ft.is_dir() && found == path {
        TargetKind::Directory
    } else {
        TargetKind::File
    };
    let canonical = found.canonicalize().unwrap_or(found);
    let st_dev = dev_string(meta.dev());
    let mount = mountinfo::find(&mounts, &canonical, Some(&st_dev)).cloned();
    // Filesystems without a block device of their own (btrfs, and also tmpfs, NFS, overlay)
    // report an anonymous 0:N; btrfs's source still names a real device.
    let dev = if devnum::major(meta.dev()) != 0 {
        Some(st_dev)
    } else {
        mount
            .as_ref()
            .filter(|m| m.source.starts_with('/'))
            .and_then(|m| fs::metadata(&m.source).ok())
            .filter(|m| m.file_type().is_block_device())
            .map(|m| dev_string(m.rdev()))
    };
    Ok(Resolved { kind, mount, dev })
}
