//! The safety guard: iolab never destroys data the user did not offer.
//!
//! Before a job writes to a block device, [`check_block_write`] looks for every sign that the
//! device holds something: a mount (of it or of a partition on it), active swap, partitions,
//! holders (device-mapper, MD RAID, LVM, bcache stacked on it or on a partition), loop devices
//! that read and write its data (on it, on a partition, on the same backing file), an on-disk
//! signature (partition tables, filesystems, RAID, LVM, Stratis, VDO, swap, LUKS, BitLocker),
//! or an exclusive opener.
//! Any of them refuses the write with the reason, unless the user named that exact device to
//! `--destroy-data`. A device whose data is mounted or swap, directly or through any device in
//! its stack, is refused even then: writing under a live filesystem corrupts it, and
//! unmounting first is always possible.
//!
//! Reads are always allowed. Regular files are guarded in [`crate::open`], and refused here
//! ([`check_file_write`]) while a loop device is bound to them.
//!
//! The room is split by what each part reads: `stacks` the kernel's view of devices stacked on
//! each other (sysfs, swap, loop devices), `mounts` the mount table, `signatures` the device's
//! own bytes, `files` the checks on regular files; what they read of the machine comes from
//! `iolab-host`, which the host-path probe shares.

mod files;
mod mounts;
mod signatures;
mod stacks;
#[cfg(test)]
mod tests;

pub use files::{check_file_in_use, check_file_opens_for_writing, check_file_write};
pub use iolab_host::devnum::{major, minor, DevNum};
pub use mounts::mount_points;
pub use signatures::{read_signature, signature_in, signature_in_image, Probe};

use stacks::{stack_hazards, System};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One reason a device must not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// The device, a partition on it, or a device stacked on it or sharing its data (a loop
    /// device on it or on the same file), is mounted at this place.
    Mounted(String),
    /// The device, a partition on it, or a device stacked on it or sharing its data, is active
    /// swap.
    Swap(String),
    /// The device has partitions (their names).
    Partitions(Vec<String>),
    /// Something is stacked on the device (dm, md, bcache; names from `holders/`).
    Holders(Vec<String>),
    /// An on-disk signature was found.
    Signature(&'static str),
    /// Other block devices read and write its data: loop devices on it (or on one of its
    /// partitions), on the same backing file, or on the device it is a loop device on (each
    /// with how).
    InUse(Vec<String>),
    /// Someone holds the device open exclusively (O_EXCL gave EBUSY).
    Busy,
    /// Held open exclusively while active swap areas sit on device nodes that are gone (their
    /// `/proc/swaps` paths): it may be one of them.
    MaybeSwap(Vec<String>),
}

impl Hazard {
    /// Whether `--destroy-data` may override it.
    pub fn overridable(&self) -> bool {
        !matches!(
            self,
            Hazard::Mounted(_) | Hazard::Swap(_) | Hazard::MaybeSwap(_)
        )
    }
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hazard::Mounted(at) => write!(f, "it is mounted ({at})"),
            Hazard::Swap(dev) => write!(f, "it is active swap ({dev})"),
            Hazard::Partitions(p) => write!(f, "it has partitions ({})", p.join(", ")),
            Hazard::Holders(h) => write!(
                f,
                "it is in use by {} (device-mapper, RAID or LVM)",
                h.join(", ")
            ),
            Hazard::InUse(users) => write!(f, "it is in use by {}", users.join(", ")),
            Hazard::Signature(what) => write!(f, "it carries a {what} signature"),
            Hazard::Busy => write!(f, "another program holds it open exclusively"),
            Hazard::MaybeSwap(lost) => write!(
                f,
                "it is held open exclusively, as swap holds its device, while active swap ({}) \
                 sits on a device node that is gone: it may be that swap",
                lost.join(", ")
            ),
        }
    }
}

/// A refused write, with every reason found and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    /// The device.
    pub device: PathBuf,
    /// Why.
    pub hazards: Vec<Hazard>,
    /// What `--destroy-data` named, where that is not this device (so it did not apply):
    /// `"--destroy-data=/dev/loop1 names another device than the target"`.
    pub destroy_data_elsewhere: Option<String>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dev = self.device.display();
        let reasons = self
            .hazards
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        write!(f, "refusing to write to {dev}: {reasons}")?;
        if let Some(elsewhere) = &self.destroy_data_elsewhere {
            write!(
                f,
                ". {elsewhere}, so it does not apply here: it allows writing over the one device \
                 it names"
            )?;
        }
        if self.hazards.iter().all(Hazard::overridable) {
            write!(
                f,
                ". Writing would destroy what is on it. If you really mean to, name the device \
                 again with --destroy-data={dev}"
            )
        } else {
            write!(
                f,
                ". Unmount it (or swapoff) first; --destroy-data does not override this"
            )
        }
    }
}

/// The kernel's name of a block device node (`/dev/loop3` → `loop3`), following symlinks.
pub fn block_name(dev: &Path) -> io::Result<String> {
    let meta = fs::metadata(dev)?;
    if !meta.file_type().is_block_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a block device", dev.display()),
        ));
    }
    let rdev = meta.rdev();
    let link = fs::read_link(format!("/sys/dev/block/{}:{}", major(rdev), minor(rdev)))?;
    Ok(link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default())
}

/// Whether `a` and `b` name the same block device (by device number, so `/dev/disk/by-id/…`
/// links match the node they point to).
pub fn same_device(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => {
            x.file_type().is_block_device()
                && y.file_type().is_block_device()
                && x.rdev() == y.rdev()
        }
        _ => false,
    }
}

/// Every hazard of writing to block device `dev`; empty means safe to write.
pub fn hazards(dev: &Path) -> io::Result<Vec<Hazard>> {
    let name = block_name(dev)?;
    let sys = System::read()?;
    let mut found = stack_hazards(&sys, &name);
    if let Some(sig) = read_signature(dev)? {
        found.push(Hazard::Signature(sig));
    }
    // A mounted device is also busy; say it once.
    if !found
        .iter()
        .any(|h| matches!(h, Hazard::Mounted(_) | Hazard::Holders(_) | Hazard::Swap(_)))
    {
        match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(dev)
        {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                found.push(exclusive_holder(&sys.lost_swaps));
            }
            _ => {}
        }
    }
    Ok(found)
}

/// What an exclusive opener of a device that is not mounted, swap or held by a volume means:
/// just another program, unless some active swap area sits on a device node that is gone
/// (`lost_swaps`), whose device then cannot be told apart from this one. Swap holds its device
/// exclusively, so it may be this one, and writing to active swap must be refused like a mount.
fn exclusive_holder(lost_swaps: &[String]) -> Hazard {
    if lost_swaps.is_empty() {
        Hazard::Busy
    } else {
        Hazard::MaybeSwap(lost_swaps.to_vec())
    }
}

/// Refuses a write to `dev` unless it is safe or the user named it to `--destroy-data`.
pub fn check_block_write(dev: &Path, destroy_data: Option<&Path>) -> Result<(), GuardError> {
    let found = hazards(dev).map_err(|e| GuardError::Inspect(dev.to_path_buf(), e))?;
    if found.is_empty() {
        return Ok(());
    }
    let allowed = destroy_data.is_some_and(|d| same_device(d, dev));
    if allowed && found.iter().all(Hazard::overridable) {
        return Ok(());
    }
    Err(GuardError::Refused(Refusal {
        device: dev.to_path_buf(),
        hazards: found,
        destroy_data_elsewhere: destroy_data.filter(|_| !allowed).map(|named| {
            format!(
                "--destroy-data={} {}",
                named.display(),
                DestroyDataTarget::of(named, dev).says()
            )
        }),
    }))
}

/// What `--destroy-data` names, against the target it was given with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DestroyDataTarget {
    /// The target's own device (by device number, so any link to it counts).
    TheTarget,
    /// Another block device.
    AnotherDevice,
    /// Something that is not a block device (a file, a directory).
    NotADevice,
    /// Nothing: no such path.
    Nothing,
}

impl DestroyDataTarget {
    fn of(named: &Path, target: &Path) -> DestroyDataTarget {
        match fs::metadata(named) {
            Err(_) => DestroyDataTarget::Nothing,
            Ok(m) if !m.file_type().is_block_device() => DestroyDataTarget::NotADevice,
            Ok(_) if same_device(named, target) => DestroyDataTarget::TheTarget,
            Ok(_) => DestroyDataTarget::AnotherDevice,
        }
    }

    /// How the refusal says it, after `--destroy-data=NAMED`.
    fn says(self) -> &'static str {
        match self {
            DestroyDataTarget::TheTarget => "names the target",
            DestroyDataTarget::AnotherDevice => "names another device than the target",
            DestroyDataTarget::NotADevice => "names no block device",
            DestroyDataTarget::Nothing => "names nothing that exists",
        }
    }
}

/// Refuses a run whose `--destroy-data` names anything but `target`'s own device: the flag
/// gives up that one device's data, so naming another one (a mistyped `/dev/sdc` for `sdb`, a
/// disk for its partition) is a mistake to say before anything runs, not something to ignore
/// while the target is written, or refused for a reason the user thinks they overrode.
pub fn check_destroy_data_names_target(
    target: &Path,
    destroy_data: Option<&Path>,
) -> Result<(), GuardError> {
    let Some(named) = destroy_data else {
        return Ok(());
    };
    let found = DestroyDataTarget::of(named, target);
    if found == DestroyDataTarget::TheTarget {
        return Ok(());
    }
    Err(GuardError::DestroyDataElsewhere {
        named: named.to_path_buf(),
        target: target.to_path_buf(),
        says: found.says(),
        target_is_device: fs::metadata(target).is_ok_and(|m| m.file_type().is_block_device()),
    })
}

/// Why the guard stopped a write.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The device holds data (or is in use); the message says what and how to override.
    #[error("{0}")]
    Refused(Refusal),
    /// The device could not be inspected, so it is not written.
    #[error("cannot inspect {0} to make sure writing is safe: {1}; nothing was written")]
    Inspect(PathBuf, #[source] io::Error),
    /// `--destroy-data` names something else than the target's device, so it does not apply.
    #[error(
        "refusing to run on {}: --destroy-data={} {}, so it does not apply to this run: it \
         allows writing over the one device it names. {}",
        target.display(),
        named.display(),
        says,
        if *target_is_device {
            format!(
                "To give up the data on {} itself, name it: --destroy-data={}; otherwise leave \
                 the flag out",
                target.display(),
                target.display()
            )
        } else {
            "The target is no block device; leave the flag out (--overwrite allows writing \
             over a file iolab did not create)"
                .to_string()
        }
    )]
    DestroyDataElsewhere {
        /// What the flag named.
        named: PathBuf,
        /// The target.
        target: PathBuf,
        /// What the flag names, against the target.
        says: &'static str,
        /// Whether the target is a block device (else naming it would not help either).
        target_is_device: bool,
    },
    /// A regular file that a loop device reads and writes.
    #[error(
        "refusing to write to {}: {} reads and writes it, so whatever uses that device would \
         have its data changed underneath; detach it first (losetup -d); --overwrite does not \
         override this",
        file.display(),
        devices.join(", ")
    )]
    LoopBacked {
        /// The file.
        file: PathBuf,
        /// The loop devices bound to it, each with its mounts.
        devices: Vec<String>,
    },
    /// A regular file that is active swap: the kernel pages memory out to it, and refuses
    /// every write to it (ETXTBSY), which a run would meet in the middle.
    #[error(
        "refusing to write to {}: it is active swap ({} in /proc/swaps), and the kernel lets          nothing else write to it; swapoff {} first if you mean to test it; --overwrite does          not override this",
        file.display(),
        swap,
        swap
    )]
    SwapFile {
        /// The file as given.
        file: PathBuf,
        /// Its path as /proc/swaps lists it.
        swap: String,
    },
    /// A regular file the kernel will not let anyone write (ETXTBSY on opening it for
    /// writing): active swap not found by its path (a name that was deleted since), or a
    /// running program.
    #[error(
        "refusing to write to {}: the kernel lets nothing write to it (text file busy): it is          active swap or a running program; swapoff it (or stop the program) first;          --overwrite does not override this",
        file.display()
    )]
    WriteBusy {
        /// The file.
        file: PathBuf,
    },
}
