//! Where the probe reads the kernel's views, and the lenient readers it reads them with
//! (`iolab-host`'s, shared with the safety guard).

use std::path::PathBuf;

/// Where the kernel's views live. Tests point this at a fabricated tree.
#[derive(Clone, Debug)]
pub struct SysRoot {
    /// The sysfs mount, normally `/sys`.
    pub sys: PathBuf,
    /// The mount table, normally `/proc/self/mountinfo`.
    pub mountinfo: PathBuf,
    /// The device directory, normally `/dev` (used to name block devices).
    pub dev: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        SysRoot {
            sys: PathBuf::from("/sys"),
            mountinfo: PathBuf::from("/proc/self/mountinfo"),
            dev: PathBuf::from("/dev"),
        }
    }
}

pub(crate) use iolab_host::sysfs::{entries, flag, hex, link_name, num, read, selector};
