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

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
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

/// Major number of a `dev_t` (glibc's encoding).
pub fn major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

/// Minor number of a `dev_t` (glibc's encoding).
pub fn minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
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

/// The active swap areas of a `/proc/swaps` text: `(device number, path)` of each (the number
/// by `resolve` of the unescaped path, none for a swap file), and the paths of the areas on a
/// block device whose node cannot be resolved: deleted (`"/dev/foo (deleted)"`; a node of
/// that name now may be another device) or gone. A swap file's filesystem is mounted, which
/// the mount check sees.
fn parse_swaps(
    text: &str,
    resolve: impl Fn(&str) -> Option<DevNum>,
) -> (Vec<(Option<DevNum>, String)>, Vec<String>) {
    let mut swaps = Vec::new();
    let mut lost = Vec::new();
    for line in text.lines().skip(1) {
        let mut fields = line.split_whitespace();
        let (Some(path), Some(kind)) = (fields.next(), fields.next()) else {
            continue;
        };
        let path = unescape_mount_field(path);
        let deleted = path.ends_with(" (deleted)");
        let devnum = if deleted { None } else { resolve(&path) };
        if devnum.is_none() && kind != "file" {
            lost.push(path.clone());
        }
        swaps.push((devnum, path));
    }
    (swaps, lost)
}

/// What the guard reads of the machine besides the device's own bytes: sysfs, the mounts and
/// the active swap areas. [`System::read`] takes the real ones; tests build one over a fake
/// sysfs tree.
#[derive(Clone, Debug, Default)]
struct System {
    /// The sysfs root (`/sys`).
    sysfs: PathBuf,
    /// `(device number, mount point)` of every mount (see [`mount_table`]).
    mounts: Vec<(DevNum, String)>,
    /// `(device number, path)` of every active swap area; no number where the path is not a
    /// block device node.
    swaps: Vec<(Option<DevNum>, String)>,
    /// Paths of active swap areas on a block device whose node is gone (see [`parse_swaps`]).
    lost_swaps: Vec<String>,
    /// Every bound loop device and what it reads and writes.
    loops: Vec<LoopDevice>,
}

/// A bound loop device (`/sys/class/block/loopN/loop/backing_file`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct LoopDevice {
    /// Its name, e.g. `loop3`.
    name: String,
    /// The backing file as sysfs shows it.
    file: String,
    /// What that file is.
    backing: Backing,
}

/// What a loop device's backing file is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Backing {
    /// A block device node: the loop device reads and writes that device.
    Device(DevNum),
    /// A regular file, by `(st_dev, st_ino)`.
    File(u64, u64),
    /// Cannot tell (deleted, or gone): known only by the path sysfs shows.
    Unknown,
}

impl Backing {
    /// What the backing file sysfs names as `file` is, by `stat`. The path of a file sysfs
    /// shows as deleted may now name another file, so it is not looked at.
    fn of(file: &str) -> Backing {
        if file.ends_with(" (deleted)") {
            return Backing::Unknown;
        }
        match fs::metadata(file) {
            Ok(m) if m.file_type().is_block_device() => {
                Backing::Device((major(m.rdev()), minor(m.rdev())))
            }
            Ok(m) => Backing::File(m.dev(), m.ino()),
            Err(_) => Backing::Unknown,
        }
    }
}

/// Every loop device bound under `sysfs`, its backing file resolved with `resolve`.
fn scan_loops(sysfs: &Path, resolve: impl Fn(&str) -> Backing) -> Vec<LoopDevice> {
    let class = sysfs.join("class/block");
    list_dir(&class)
        .into_iter()
        .filter_map(|name| {
            let file = fs::read_to_string(class.join(&name).join("loop/backing_file")).ok()?;
            let file = file.trim_end_matches('\n').to_string();
            let backing = resolve(&file);
            Some(LoopDevice {
                name,
                file,
                backing,
            })
        })
        .collect()
}

impl System {
    /// The machine's sysfs, mounts and swap areas, as this process sees them.
    fn read() -> io::Result<System> {
        let sysfs = PathBuf::from("/sys");
        let mounts = mounts(&sysfs)?;
        let (swaps, lost_swaps) = parse_swaps(
            &fs::read_to_string("/proc/swaps").unwrap_or_default(),
            |path| node_devnum(Path::new(path)),
        );
        let loops = scan_loops(&sysfs, Backing::of);
        Ok(System {
            sysfs,
            mounts,
            swaps,
            lost_swaps,
            loops,
        })
    }

    /// The sysfs directory of block device `name` (`/sys/class/block/NAME`).
    fn block(&self, name: &str) -> PathBuf {
        self.sysfs.join("class/block").join(name)
    }

    fn devnum(&self, name: &str) -> Option<DevNum> {
        parse_devnum(&fs::read_to_string(self.block(name).join("dev")).ok()?)
    }

    /// The partitions of block device `name`.
    fn partitions(&self, name: &str) -> Vec<String> {
        let dir = self.block(name);
        list_dir(&dir)
            .into_iter()
            .filter(|n| dir.join(n).join("partition").exists())
            .collect()
    }

    /// What is stacked directly on block device `name` (dm, md, bcache: its `holders/`).
    fn holders(&self, name: &str) -> Vec<String> {
        list_dir(&self.block(name).join("holders"))
    }

    /// The devices built directly on block device `name`, each with how it is built on it
    /// (`"which holds sda1"`) and whether it is a loop device.
    fn users(&self, name: &str) -> Vec<(String, String, bool)> {
        let mut users: Vec<(String, String, bool)> = self
            .holders(name)
            .into_iter()
            .map(|h| (h, format!("which holds {name}"), false))
            .collect();
        // Loop devices register no holder on their backing device.
        if let Some(devnum) = self.devnum(name) {
            users.extend(
                self.loops
                    .iter()
                    .filter(|l| l.backing == Backing::Device(devnum) && l.name != name)
                    .map(|l| (l.name.clone(), format!("a loop device on {name}"), true)),
            );
        }
        users
    }

    /// The other loop devices on the backing file of loop device `name` (the same file, or
    /// for a file sysfs shows as deleted, the same path): they read and write its data.
    /// The loop devices whose backing file is the file `(st_dev, st_ino)`, as `/dev/loopN`
    /// with where each is mounted.
    fn loops_bound_to(&self, dev: u64, ino: u64) -> Vec<String> {
        self.loops
            .iter()
            .filter(|l| l.backing == Backing::File(dev, ino))
            .map(|l| {
                let mounts = self.mount_points(&l.name);
                if mounts.is_empty() {
                    format!("/dev/{}", l.name)
                } else {
                    format!("/dev/{} (mounted at {})", l.name, mounts.join(", "))
                }
            })
            .collect()
    }

    fn loops_on_the_same_file(&self, name: &str) -> Vec<(String, String, bool)> {
        let Some(me) = self.loops.iter().find(|l| l.name == name) else {
            return Vec::new();
        };
        let same = |l: &LoopDevice| match (&me.backing, &l.backing) {
            (Backing::File(..), Backing::File(..)) => me.backing == l.backing,
            (Backing::Unknown, _) | (_, Backing::Unknown) => me.file == l.file,
            _ => false,
        };
        self.loops
            .iter()
            .filter(|l| l.name != name && same(l))
            .map(|l| {
                let how = format!("a loop device on the same file {}", me.file);
                (l.name.clone(), how, true)
            })
            .collect()
    }

    /// What block device `name` is part of, with how: its disk if it is a partition, its
    /// backing device if it is a loop device on one (then all of that device, partitions
    /// included, is `name`'s data: `true`).
    fn lower(&self, name: &str) -> Option<(String, String, bool)> {
        let dir = self.block(name);
        if dir.join("partition").exists() {
            let real = fs::canonicalize(&dir).ok()?;
            let disk = real.parent()?.file_name()?.to_string_lossy().into_owned();
            return Some((disk, format!("which {name} is a partition of"), false));
        }
        let me = self.loops.iter().find(|l| l.name == name)?;
        let Backing::Device(devnum) = me.backing else {
            return None;
        };
        let disk = list_dir(&self.sysfs.join("class/block"))
            .into_iter()
            .find(|n| self.devnum(n) == Some(devnum))?;
        Some((disk, format!("which loop device {name} is on"), true))
    }

    /// Where block device `name` is mounted.
    fn mount_points(&self, name: &str) -> Vec<String> {
        let Some(devnum) = self.devnum(name) else {
            return Vec::new();
        };
        let mut points: Vec<String> = self
            .mounts
            .iter()
            .filter(|(d, _)| *d == devnum)
            .map(|(_, p)| p.clone())
            .collect();
        points.dedup();
        points
    }

    /// The active swap areas on block device `name`, by path.
    fn swap_paths(&self, name: &str) -> Vec<String> {
        let devnum = self.devnum(name);
        self.swaps
            .iter()
            .filter(|(d, _)| d.is_some() && *d == devnum)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

/// The hazards that sysfs, the mounts and the swap areas show for writing to block device
/// `name`: everything but its contents and exclusive openers.
fn stack_hazards(sys: &System, name: &str) -> Vec<Hazard> {
    let mut found = Vec::new();
    let partitions = sys.partitions(name);
    // The device itself and its partitions.
    let mut family = vec![name.to_string()];
    family.extend(partitions.iter().cloned());
    for member in &family {
        for point in sys.mount_points(member) {
            if !found.contains(&Hazard::Mounted(point.clone())) {
                found.push(Hazard::Mounted(point));
            }
        }
    }
    for member in &family {
        found.extend(sys.swap_paths(member).into_iter().map(Hazard::Swap));
    }
    if !partitions.is_empty() {
        found.push(Hazard::Partitions(partitions));
    }
    // What is stacked on the device or on any of its partitions (a RAID member is usually a
    // partition, not the whole disk).
    let mut holders: Vec<String> = family.iter().flat_map(|m| sys.holders(m)).collect();
    holders.sort();
    holders.dedup();
    if !holders.is_empty() {
        found.push(Hazard::Holders(holders));
    }
    // Every other device that reads or writes the same data: what is stacked on the device or
    // its partitions, however deep (LVM on RAID on a partition; a loop device on it), the
    // other loop devices on its backing file, and, down the stack, the disk a partition is on
    // and the device a loop device is on, with everything on those. Mounted or swap, writing
    // would corrupt them live, as for a mount of the device itself; a loop device idle on its
    // data is still in use.
    let mut seen: Vec<String> = family.clone();
    // (device, how it relates, whether to name it when idle)
    let mut queue: Vec<(String, String, bool)> = family.iter().flat_map(|m| sys.users(m)).collect();
    queue.extend(sys.loops_on_the_same_file(name));
    let mut below = name.to_string();
    while let Some((lower, how, whole)) = sys.lower(&below) {
        if seen.contains(&lower) || seen.len() > MAX_STACK {
            break;
        }
        seen.push(lower.clone());
        for point in sys.mount_points(&lower) {
            found.push(Hazard::Mounted(format!("{point}, through {lower}, {how}")));
        }
        for path in sys.swap_paths(&lower) {
            found.push(Hazard::Swap(format!("{path}, {how}")));
        }
        if whole {
            for part in sys.partitions(&lower) {
                queue.push((part.clone(), format!("a partition of {lower}"), false));
            }
        }
        queue.extend(sys.users(&lower).into_iter().map(|(u, h, _)| (u, h, true)));
        queue.extend(sys.loops_on_the_same_file(&lower));
        below = lower;
    }
    let mut in_use = Vec::new();
    while let Some((user, how, name_it)) = queue.pop() {
        if seen.contains(&user) || seen.len() > MAX_STACK {
            continue;
        }
        seen.push(user.clone());
        let mut live = false;
        for point in sys.mount_points(&user) {
            found.push(Hazard::Mounted(format!("{point}, through {user}, {how}")));
            live = true;
        }
        for path in sys.swap_paths(&user) {
            found.push(Hazard::Swap(format!("{path}, {how}")));
            live = true;
        }
        if name_it && !live {
            in_use.push(format!("{user} ({how})"));
        }
        for part in sys.partitions(&user) {
            queue.push((part.clone(), format!("a partition of {user}"), false));
        }
        queue.extend(sys.users(&user).into_iter().map(|(u, h, _)| (u, h, false)));
    }
    if !in_use.is_empty() {
        in_use.sort();
        found.push(Hazard::InUse(in_use));
    }
    found
}

/// How many devices the walk up a stack looks at before it stops (a loop in sysfs would be a
/// kernel bug; this keeps it finite anyway).
const MAX_STACK: usize = 4096;

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
fn swap_file_of(
    text: &str,
    file: (u64, u64),
    stat: impl Fn(&str) -> Option<(u64, u64)>,
) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let mut fields = line.split_whitespace();
        let (path, kind) = (fields.next()?, fields.next()?);
        let path = unescape_mount_field(path);
        (kind == "file" && !path.ends_with(" (deleted)") && stat(&path) == Some(file))
            .then_some(path)
    })
}

fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A block device number, `(major, minor)`.
pub type DevNum = (u64, u64);

/// `MAJ:MIN` as sysfs and mountinfo write it.
fn parse_devnum(s: &str) -> Option<DevNum> {
    let (major, minor) = s.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The device number of a block device node (following symlinks), if `path` is one.
fn node_devnum(path: &Path) -> Option<DevNum> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| (major(meta.rdev()), minor(meta.rdev())))
}

/// One line of `/proc/self/mountinfo`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct MountLine {
    /// The device number the kernel reports: the filesystem's `s_dev`, which for btrfs (and
    /// other filesystems that can span devices) is an anonymous `0:NN`, not the device's.
    devnum: Option<DevNum>,
    /// The mount source (`/dev/loop1`, `tmpfs`, …), unescaped.
    source: String,
    /// Where it is mounted, unescaped.
    point: String,
}

/// Undoes the kernel's octal escapes in mountinfo fields (`\040` for a space, …).
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mounts of a mountinfo text (`proc(5)`: ID, parent, MAJ:MIN, root, mount point, options,
/// optional fields, `-`, type, source, super options).
fn parse_mountinfo(text: &str) -> Vec<MountLine> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let point = unescape_mount_field(fields.get(4)?);
            let dash = fields.iter().skip(6).position(|f| *f == "-")? + 6;
            let source = unescape_mount_field(fields.get(dash + 2)?);
            Some(MountLine {
                devnum: parse_devnum(fields[2]),
                source,
                point,
            })
        })
        .collect()
}

/// `(device number, mount point)` of every mount, listed under each device it sits on: the
/// number mountinfo reports, the number of its source when that is a block device node
/// (`resolve`), and for a mounted btrfs every member device (`/sys/fs/btrfs/UUID/devices`
/// under `sysfs`, which exists only while it is mounted).
fn mount_table(
    lines: &[MountLine],
    sysfs: &Path,
    resolve: impl Fn(&str) -> Option<DevNum>,
) -> Vec<(DevNum, String)> {
    let mut table = Vec::new();
    for m in lines {
        table.extend(m.devnum.map(|d| (d, m.point.clone())));
        if m.source.starts_with('/') {
            if let Some(d) = resolve(&m.source).filter(|d| Some(*d) != m.devnum) {
                table.push((d, m.point.clone()));
            }
        }
    }
    for fs_dir in list_dir(&sysfs.join("fs/btrfs")) {
        let members: Vec<DevNum> = list_dir(&sysfs.join("fs/btrfs").join(&fs_dir).join("devices"))
            .iter()
            .filter_map(|n| fs::read_to_string(sysfs.join("class/block").join(n).join("dev")).ok())
            .filter_map(|s| parse_devnum(&s))
            .collect();
        if members.is_empty() {
            continue; // `features` and other entries that are not filesystems
        }
        let mut points: Vec<String> = table
            .iter()
            .filter(|(d, _)| members.contains(d))
            .map(|(_, p)| p.clone())
            .collect();
        points.sort();
        points.dedup();
        if points.is_empty() {
            points.push(format!("btrfs filesystem {fs_dir}"));
        }
        for d in members {
            for p in &points {
                if !table.contains(&(d, p.clone())) {
                    table.push((d, p.clone()));
                }
            }
        }
    }
    table
}

/// `(device number, mount point)` of every mount this process can see (see [`mount_table`]).
fn mounts(sysfs: &Path) -> io::Result<Vec<(DevNum, String)>> {
    let text = fs::read_to_string("/proc/self/mountinfo")?;
    Ok(mount_table(&parse_mountinfo(&text), sysfs, |source| {
        node_devnum(Path::new(source))
    }))
}

/// Every mount point this process can see, as mountinfo lists them (a file bind-mounted over
/// another is one too): an output written there by rename would fail, or land in the mounted
/// file's place.
pub fn mount_points() -> io::Result<Vec<PathBuf>> {
    let text = fs::read_to_string("/proc/self/mountinfo")?;
    Ok(parse_mountinfo(&text)
        .into_iter()
        .map(|m| PathBuf::from(m.point))
        .collect())
}

/// The MD RAID superblock magic, 0xa92b4efc little-endian.
const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

/// bcache's superblock magic, at 4 KiB + 24 (libblkid bcache.c), which bcachefs wrote too before
/// it had its own (see [`old_bcachefs`]).
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];

/// bcachefs's own superblock magic, at 4 KiB + 24 like bcache's (libblkid bcache.c; bcachefs's
/// `BCHFS_MAGIC`).
const BCACHEFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

/// Whether the superblock at 4 KiB is a bcachefs one with bcache's magic, as bcachefs wrote
/// before it had its own (libblkid's bcachefs probe takes both). Both superblocks record the
/// sector they were written at, 8: bcache's in the 8 bytes at 8, bcachefs's in those at 104,
/// where bcache keeps its flags (8 for a cache with random replacement) and bcachefs has a
/// checksum at 8 (libblkid bcache.c checks the one of each). Little-endian.
fn old_bcachefs(probe: &Probe) -> bool {
    let sector_at = |at: u64| {
        let bytes = probe.get(4096 + at, 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    };
    probe.has(4096 + 24, &BCACHE_MAGIC) && sector_at(104) == Some(8) && sector_at(8) != Some(8)
}

/// On-disk signatures: (what, byte offset from the start, magic bytes). Offsets from libblkid's
/// probes and the formats' own headers; a format with copies at several fixed offsets has an
/// entry for each. Enough to recognise anything a user would miss; those that take more than a
/// magic at a fixed offset (swap, LVM, UDF, LUKS2's second header, NILFS2, HFS, BitLocker To
/// Go, bcachefs with bcache's magic, the GPT backup, MD RAID at the end) are in
/// [`signature_in`].
const SIGNATURES: &[(&str, u64, &[u8])] = &[
    // BitLocker's boot sectors (libblkid bitlocker.c): a jump and the OEM name "-FVE-FS-", which
    // only BitLocker writes (Vista's jump is 0x52, Windows 7's and later's 0x58). They carry
    // 0x55AA as well, so these come before the MBR rule; To Go's is in [`signature_in`].
    ("BitLocker encrypted volume", 0, b"\xeb\x52\x90-FVE-FS-"),
    ("BitLocker encrypted volume", 0, b"\xeb\x58\x90-FVE-FS-"),
    ("GPT partition table", 512, b"EFI PART"),
    ("GPT partition table (4K sectors)", 4096, b"EFI PART"),
    ("ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
    ("XFS filesystem", 0, b"XFSB"),
    ("btrfs filesystem", 0x10040, b"_BHRfS_M"),
    ("F2FS filesystem", 1024, &[0x10, 0x20, 0xF5, 0xF2]),
    ("NTFS filesystem", 3, b"NTFS    "),
    ("exFAT filesystem", 3, b"EXFAT   "),
    ("ISO 9660 filesystem", 32769, b"CD001"),
    ("squashfs filesystem", 0, b"hsqs"),
    ("squashfs filesystem (big-endian)", 0, b"sqsh"),
    // cramfs: its magic 0x28cd3d45 either way round, at the start or after the 512 bytes of
    // boot code `mkfs.cramfs -p` pads with (libblkid cramfs.c; the kernel's cramfs_fs.h).
    ("cramfs filesystem", 0, b"\x45\x3d\xcd\x28"),
    ("cramfs filesystem", 0, b"\x28\xcd\x3d\x45"),
    ("cramfs filesystem", 512, b"\x45\x3d\xcd\x28"),
    ("cramfs filesystem", 512, b"\x28\xcd\x3d\x45"),
    ("SCO BFS filesystem", 0, b"\xce\xfa\xad\x1b"),
    ("romfs filesystem", 0, b"-rom1fs-"),
    ("EROFS filesystem", 1024, &[0xe2, 0xe1, 0xf5, 0xe0]),
    // HFS+ and HFSX: the volume header at 1 KiB, its signature and then its version, 4 for HFS+
    // and 5 for HFSX, big-endian (libblkid hfs.c; Apple's TN1150). HFS is in [`signature_in`].
    ("HFS+ filesystem", 1024, b"H+\x00\x04"),
    ("HFSX filesystem", 1024, b"HX\x00\x05"),
    // APFS: the container superblock in block 0, its magic after the 32-byte object header
    // (libblkid apfs.c).
    ("APFS container", 32, b"NXSB"),
    ("JFS filesystem", 32 * 1024, b"JFS1"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsEr2Fs"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsEr3Fs"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsErFs"),
    ("ReiserFS filesystem", 8 * 1024 + 0x34, b"ReIsErFs"),
    ("ReiserFS filesystem", 8 * 1024 + 20, b"ReIsErFs"),
    ("Reiser4 filesystem", 64 * 1024, b"ReIsEr4"),
    (
        "TuxOnIce hibernation image",
        0,
        &[0xed, 0xc3, 0x02, 0xe9, 0x98, 0x56, 0xe5, 0x0c],
    ),
    ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
    ("MD RAID (v1.1) member", 0, &MD_MAGIC),
    ("MD RAID (v1.2) member", 4096, &MD_MAGIC),
    // bcachefs: its superblock at 4 KiB, the magic UUID at 24 of it (libblkid bcache.c). It
    // shares only its first four bytes with bcache's. A bcachefs formatted before it had this
    // magic carries bcache's, and is found in [`signature_in`].
    ("bcachefs filesystem", 4096 + 24, &BCACHEFS_MAGIC),
    (
        "bcache backing device",
        4096 + 24,
        &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca],
    ),
    // VDO (dm-vdo deduplicating volume): its geometry block at 0 opens with "dmvdo001"
    // (libblkid vdo.c).
    ("VDO volume", 0, b"dmvdo001"),
    // Stratis: two copies of its static header, in sectors 1 and 9, the magic after a 4-byte
    // CRC (libblkid stratis.c). Either one does, as when the other is damaged.
    ("Stratis pool member", 512 + 4, STRATIS_MAGIC),
    ("Stratis pool member", 9 * 512 + 4, STRATIS_MAGIC),
];

/// The magic of a Stratis static header (libblkid stratis.c).
const STRATIS_MAGIC: &[u8] = b"!Stra0tis\x86\xff\x02^Arh";

/// The magics at the end of the first page of a swap area (at page size - 10): swap, and a
/// hibernation image written into swap.
const SWAP_MAGICS: &[(&str, &[u8])] = &[
    ("swap", b"SWAPSPACE2"),
    ("swap", b"SWAP-SPACE"),
    ("hibernation image (in swap)", b"S1SUSPEND"),
    ("hibernation image (in swap)", b"S2SUSPEND"),
    ("hibernation image (in swap)", b"ULSUSPEND"),
    ("hibernation image (in swap)", b"LINHIB0001"),
];

/// Where LUKS2 keeps its second header (cryptsetup's and libblkid's list): found when the
/// first one is damaged or wiped.
const LUKS2_SECOND_HEADER: [u64; 9] = [
    0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x10_0000, 0x20_0000, 0x40_0000,
];

/// The ISO 13346 (UDF) volume structure descriptors that can open or fill the volume
/// recognition sequence, from 32 KiB on.
const UDF_DESCRIPTORS: [&[u8]; 6] = [b"BEA01", b"NSR02", b"NSR03", b"BOOT2", b"CDW02", b"TEA01"];

/// A BitLocker To Go boot sector's jump and OEM name (libblkid bitlocker.c). They are a FAT32
/// boot sector's too, so a To Go volume is told apart by the FVE metadata block it points to
/// (see [`bitlocker_to_go_metadata`]).
const BITLOCKER_TO_GO: &[u8] = b"\xeb\x58\x90MSWIN4.1";

/// The signature that opens a BitLocker FVE metadata block.
const FVE_SIGNATURE: &[u8] = b"-FVE-FS-";

/// Where the first FVE metadata block is, if sector 0 is a BitLocker To Go boot sector: the
/// offset from the start it keeps at 440 (little-endian; libblkid bitlocker.c, and libbde's
/// "BitLocker Drive Encryption (BDE) format"). Anywhere on the volume, so the probe reads it
/// separately (see [`Probe::further_ranges`]).
fn bitlocker_to_go_metadata(probe: &Probe) -> Option<u64> {
    if !probe.has(0, BITLOCKER_TO_GO) {
        return None;
    }
    let at = u64::from_le_bytes(probe.get(440, 8)?.try_into().ok()?);
    (at != 0).then_some(at)
}

/// What the signature check reads of a device: its size and some byte ranges of it (a whole
/// image in tests).
#[derive(Clone, Debug, Default)]
pub struct Probe {
    size: u64,
    /// `(offset, bytes)`, in any order.
    pieces: Vec<(u64, Vec<u8>)>,
}

impl Probe {
    /// The bytes the check looks at on a device of `size` bytes, as `(offset, length)`: the
    /// first 160 KiB, the last 128 KiB, a sector at each place LUKS2 may keep its second
    /// header beyond those, and the ZFS uberblock rings ([`zfs_rings`]).
    fn ranges(size: u64) -> Vec<(u64, u64)> {
        let mut ranges = vec![(0, HEAD_BYTES.min(size))];
        let mut tail_at = size;
        if size > HEAD_BYTES {
            let tail = TAIL_BYTES.min(size - HEAD_BYTES);
            tail_at = size - tail;
            ranges.push((tail_at, tail));
        }
        for at in LUKS2_SECOND_HEADER {
            if at >= HEAD_BYTES && at < tail_at && at + 512 <= size {
                ranges.push((at, 512));
            }
        }
        // The parts of the ZFS uberblock rings the head and tail leave out.
        for (at, len) in zfs_rings(size) {
            let end = (at + len).min(tail_at);
            if end > at.max(HEAD_BYTES) {
                ranges.push((at.max(HEAD_BYTES), end - at.max(HEAD_BYTES)));
            }
        }
        ranges
    }

    /// What the check must read besides [`Probe::ranges`], found in what those gave: the
    /// signature of the FVE metadata block a BitLocker To Go boot sector points to, which may
    /// be anywhere on the volume (without it, that boot sector is a FAT32 one). Nothing on a
    /// device without such a boot sector.
    fn further_ranges(&self) -> Vec<(u64, u64)> {
        let len = FVE_SIGNATURE.len();
        bitlocker_to_go_metadata(self)
            .filter(|&at| {
                at.checked_add(len as u64)
                    .is_some_and(|end| end <= self.size)
            })
            .filter(|&at| self.get(at, len).is_none())
            .map(|at| (at, len as u64))
            .into_iter()
            .collect()
    }

    /// Reads what the check looks at from an open device (or image file).
    pub fn read(f: &mut File) -> io::Result<Probe> {
        let size = f.seek(SeekFrom::End(0))?;
        let mut probe = Probe {
            size,
            pieces: Vec::new(),
        };
        for (at, len) in Probe::ranges(size) {
            probe.pieces.push((at, read_at(f, at, len)?));
        }
        for (at, len) in probe.further_ranges() {
            probe.pieces.push((at, read_at(f, at, len)?));
        }
        Ok(probe)
    }

    /// A whole device image held in memory.
    pub fn whole(image: &[u8]) -> Probe {
        Probe {
            size: image.len() as u64,
            pieces: vec![(0, image.to_vec())],
        }
    }

    /// `len` bytes at `at`, if the probe read them.
    fn get(&self, at: u64, len: usize) -> Option<&[u8]> {
        self.pieces.iter().find_map(|(start, bytes)| {
            let i = usize::try_from(at.checked_sub(*start)?).ok()?;
            bytes.get(i..i.checked_add(len)?)
        })
    }

    /// Whether `magic` is at `at`.
    fn has(&self, at: u64, magic: &[u8]) -> bool {
        self.get(at, magic.len()) == Some(magic)
    }
}

/// `len` bytes of `f` at `at`.
fn read_at(f: &mut File, at: u64, len: u64) -> io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(at))?;
    let mut bytes = vec![0u8; len as usize];
    f.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// How much of the start of a device the signature check reads.
const HEAD_BYTES: u64 = 160 * 1024;
/// How much of the end of a device the signature check reads.
const TAIL_BYTES: u64 = 128 * 1024;

/// The first signature found on `dev` (see [`signature_in`]).
pub fn read_signature(dev: &Path) -> io::Result<Option<&'static str>> {
    Ok(signature_in(&Probe::read(&mut File::open(dev)?)?))
}

/// The first signature in a whole device image, if any (pure; see [`signature_in`]).
pub fn signature_in_image(image: &[u8]) -> Option<&'static str> {
    signature_in(&Probe::whole(image))
}

/// A ZFS label is 256 KiB: four of them, two at the start of the device and two at its end
/// (the end rounded down to 256 KiB), each ending in a 128 KiB ring of uberblocks (the ZFS
/// on-disk format; libblkid zfs.c). `(offset, length)` of each ring that fits.
fn zfs_rings(size: u64) -> Vec<(u64, u64)> {
    const LABEL: u64 = 256 * 1024;
    const RING: u64 = 128 * 1024;
    if size < 4 * LABEL {
        return Vec::new();
    }
    let end = size / LABEL * LABEL;
    [0, LABEL, end - 2 * LABEL, end - LABEL]
        .into_iter()
        .map(|label| (label + LABEL - RING, RING))
        .collect()
}

/// A ZFS pool member: an uberblock in any label's ring. An uberblock slot is 1 KiB or the
/// pool's sector size, and which slots hold one depends on the transaction group, so every
/// 1 KiB step of each ring is looked at: its magic 0x00bab10c, as a 64-bit word of either byte
/// order, then an SPA version (1 to 5000) in the same order (libblkid zfs.c). Finding any
/// one refuses: a pool whose first label was overwritten still has three.
fn is_zfs_member(probe: &Probe) -> bool {
    const MAGIC: u64 = 0x00ba_b10c;
    const SLOT: u64 = 1024;
    let uberblock_at = |at: u64| {
        let Some(b) = probe.get(at, 16) else {
            return false;
        };
        let words = |big: bool| {
            let word = |i: usize| {
                let w: [u8; 8] = b[i..i + 8].try_into().expect("8 bytes");
                if big {
                    u64::from_be_bytes(w)
                } else {
                    u64::from_le_bytes(w)
                }
            };
            (word(0), word(8))
        };
        [false, true].into_iter().any(|big| {
            let (magic, version) = words(big);
            magic == MAGIC && (1..=5000).contains(&version)
        })
    };
    zfs_rings(probe.size)
        .into_iter()
        .any(|(ring, len)| (0..len / SLOT).any(|k| uberblock_at(ring + k * SLOT)))
}

/// A Minix superblock at 1 KiB (libblkid minix.c): version 1 or 2's magic (0x137f, 0x138f,
/// 0x2468, 0x2478) at +16 or version 3's (0x4d5a) at +24, in either byte order. A two-byte
/// magic turns up in other data by chance, so, as libblkid does, its inode and zone maps must
/// be there and (versions 1 and 2) large enough for the inodes and zones it counts.
fn is_minix(probe: &Probe) -> bool {
    let Some(sb) = probe.get(1024, 32) else {
        return false;
    };
    let u16_at = |at: usize, big: bool| {
        let b = [sb[at], sb[at + 1]];
        if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    for big in [false, true] {
        let version = match u16_at(16, big) {
            0x137f | 0x138f => 1,
            0x2468 | 0x2478 => 2,
            _ if u16_at(24, big) == 0x4d5a => 3,
            _ => continue,
        };
        if version == 3 {
            // ninodes (u32), a pad, then the map block counts at +6 and +8.
            return u16_at(6, big) != 0 && u16_at(8, big) != 0;
        }
        let (ninodes, imaps, zmaps, first_zone) = (
            u16_at(0, big),
            u16_at(4, big),
            u16_at(6, big),
            u16_at(8, big),
        );
        let zones = if version == 2 {
            let b = [sb[20], sb[21], sb[22], sb[23]];
            if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        } else {
            u32::from(u16_at(2, big))
        };
        const BITS_PER_MAP_BLOCK: u64 = 1024 * 8;
        return imaps != 0
            && zmaps != 0
            && u64::from(imaps) * BITS_PER_MAP_BLOCK > u64::from(ninodes)
            && u64::from(zmaps) * BITS_PER_MAP_BLOCK
                > u64::from(zones).saturating_sub(u64::from(first_zone));
    }
    false
}

/// What a FAT boot sector is named.
const FAT_FILESYSTEM: &str = "vfat (FAT12/16/32) filesystem";

/// Whether sector 0 is a FAT12, FAT16 or FAT32 boot sector, as libblkid's vfat probe tells one
/// (vfat.c, `fat_valid_superblock`): a name where FAT keeps one ("FAT12   ", "FAT16   ",
/// "FAT     " or "MSDOS" at 0x36; "FAT32   " or "MSWIN" at 0x52), or, as old floppies have no
/// name, a jump instruction (0xEB or 0xE9) with the boot signature 0x55AA and no "JFS" or
/// "HPFS" where FAT's name would be (OS/2 writes a FAT-like block before those). Either way
/// the BIOS parameter block must be one: a sector size that is a power of two from 512 to
/// 4096, a power-of-two sectors per cluster, reserved sectors and at least one FAT, and a
/// media byte of 0xF0 or 0xF8 to 0xFF. A partition table's sector 0 has boot code there, not
/// such a block, so an MBR is not taken for FAT.
fn is_fat_boot_sector(probe: &Probe) -> bool {
    let Some(sector) = probe.get(0, 512) else {
        return false;
    };
    let named = [&b"FAT12   "[..], b"FAT16   ", b"FAT     ", b"MSDOS"]
        .iter()
        .any(|name| sector[0x36..].starts_with(name))
        || [&b"FAT32   "[..], b"MSWIN"]
            .iter()
            .any(|name| sector[0x52..].starts_with(name));
    let unnamed = matches!(sector[0], 0xEB | 0xE9)
        && sector[510..512] == [0x55, 0xAA]
        && !sector[0x36..].starts_with(b"JFS     ")
        && !sector[0x36..].starts_with(b"HPFS    ");
    if !named && !unnamed {
        return false;
    }
    let sector_size = u16::from_le_bytes([sector[11], sector[12]]);
    let sectors_per_cluster = sector[13];
    let reserved = u16::from_le_bytes([sector[14], sector[15]]);
    let fats = sector[16];
    let media = sector[21];
    sector_size.is_power_of_two()
        && (512..=4096).contains(&sector_size)
        && sectors_per_cluster.is_power_of_two()
        && reserved != 0
        && fats != 0
        && (media == 0xF0 || media >= 0xF8)
}

/// The first signature in what was read of a device, if any: a bcachefs superblock with
/// bcache's magic, [`SIGNATURES`] at their offsets from the start, an HFS master directory
/// block, swap and hibernation images for every page size, Minix, an LVM label in any of the
/// first four sectors, a UDF volume recognition sequence, NILFS2 (either superblock), ZFS
/// uberblocks in any label, the second LUKS2 header, a BitLocker To Go boot sector, a FAT boot
/// sector, an MBR, the backup GPT header in the last sector, and MD RAID superblocks near the end.
pub fn signature_in(probe: &Probe) -> Option<&'static str> {
    // Before the table, whose bcache entry its magic would meet.
    if old_bcachefs(probe) {
        return Some("bcachefs filesystem");
    }
    for &(what, at, magic) in SIGNATURES {
        if probe.has(at, magic) {
            return Some(what);
        }
    }
    // HFS: the master directory block at 1 KiB, "BD". An HFS+ volume in an HFS wrapper (as Mac
    // OS 8.1 to 9 made them) names its own signature at 0x7C of it (libblkid hfs.c).
    if probe.has(1024, b"BD") {
        let wrapped = probe.has(1024 + 0x7C, b"H+") || probe.has(1024 + 0x7C, b"HX");
        return Some(if wrapped {
            "HFS+ filesystem (in an HFS wrapper)"
        } else {
            "HFS filesystem"
        });
    }
    // Swap's first page is one memory page: 4 KiB on x86, up to 64 KiB on arm64 and ppc64.
    for page in [4096, 8192, 16384, 32768, 65536] {
        for &(what, magic) in SWAP_MAGICS {
            if probe.has(page - 10, magic) {
                return Some(what);
            }
        }
    }
    if is_minix(probe) {
        return Some("Minix filesystem");
    }
    if is_zfs_member(probe) {
        return Some("ZFS pool member");
    }
    // LVM2 writes its label into one of the first four sectors (pvcreate --labelsector).
    for sector in 0..4 {
        if probe.has(sector * 512, b"LABELONE") || probe.has(sector * 512 + 0x18, b"LVM2 001") {
            return Some("LVM physical volume");
        }
    }
    // UDF: descriptors of 2 KiB (or one 4 KiB sector) from 32 KiB on, the ID after a type byte.
    for k in 0..64 {
        let at = 32 * 1024 + k * 2048 + 1;
        if UDF_DESCRIPTORS.iter().any(|id| probe.has(at, id)) {
            return Some("UDF filesystem");
        }
    }
    // NILFS2: magic 0x3434 after a small revision number, at 1 KiB and in the 8th sector from
    // the end.
    let nilfs = |at: u64| {
        probe.has(at + 6, &[0x34, 0x34])
            && probe.get(at, 4).is_some_and(|rev| {
                (1..16).contains(&u32::from_le_bytes([rev[0], rev[1], rev[2], rev[3]]))
            })
    };
    let size = probe.size;
    if nilfs(1024) || (size >= 8 * 512 && nilfs((size / 512 - 8) * 512)) {
        return Some("NILFS2 filesystem");
    }
    for at in LUKS2_SECOND_HEADER {
        if probe.has(at, b"SKUL\xba\xbe") {
            return Some("LUKS2 encrypted volume (second header)");
        }
    }
    // BitLocker To Go: a FAT32 boot sector whose first FVE metadata block is where it says.
    // Before the MBR rule, which its 0x55AA would meet.
    if bitlocker_to_go_metadata(probe).is_some_and(|at| probe.has(at, FVE_SIGNATURE)) {
        return Some("BitLocker To Go encrypted volume");
    }
    // A FAT boot sector carries the MBR's 0x55AA too: told apart by its BIOS parameter block.
    if is_fat_boot_sector(probe) {
        return Some(FAT_FILESYSTEM);
    }
    // An MBR: the boot signature (NTFS and exFAT boot sectors carry 0x55AA too, and are found
    // by their names above).
    if probe.has(510, &[0x55, 0xAA]) {
        return Some("MBR partition table or boot sector");
    }
    // A GPT whose primary header is gone still has its backup in the last sector (512 bytes or
    // 4 KiB).
    for sector in [512, 4096] {
        if size >= 2 * sector && probe.has(size - sector, b"EFI PART") {
            return Some("GPT partition table (backup header)");
        }
    }
    // MD RAID 0.90 and 1.0 keep their superblock at the end of the device.
    if size >= 128 * 1024 {
        let v090 = (size & !(64 * 1024 - 1)) - 64 * 1024;
        let v10 = (size - 8 * 1024) & !(4 * 1024 - 1);
        for (what, at) in [
            ("MD RAID (v0.90) member", v090),
            ("MD RAID (v1.0) member", v10),
        ] {
            if probe.has(at, &MD_MAGIC) {
                return Some(what);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_head_has_no_signature() {
        assert_eq!(signature_in_image(&vec![0u8; 160 * 1024]), None);
    }

    #[test]
    fn known_signatures_are_found() {
        let mut head = vec![0u8; 160 * 1024];
        head[1080] = 0x53;
        head[1081] = 0xEF;
        assert_eq!(signature_in_image(&head), Some("ext2/3/4 filesystem"));
        let mut head = vec![0u8; 160 * 1024];
        head[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(signature_in_image(&head), Some("GPT partition table"));
        let mut head = vec![0u8; 160 * 1024];
        head[510] = 0x55;
        head[511] = 0xAA;
        assert!(signature_in_image(&head).unwrap().contains("MBR"));
        let mut head = vec![0u8; 8192];
        head[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(signature_in_image(&head), Some("swap"));
    }

    /// An image of `size` zero bytes with `magic` written at `at`.
    fn image_with(size: usize, at: u64, magic: &[u8]) -> Vec<u8> {
        let mut image = vec![0u8; size];
        let at = at as usize;
        image[at..at + magic.len()].copy_from_slice(magic);
        image
    }

    #[test]
    fn filesystems_found_at_their_superblocks() {
        let cases: &[(&str, u64, &[u8])] = &[
            ("squashfs filesystem", 0, b"hsqs"),
            ("squashfs filesystem (big-endian)", 0, b"sqsh"),
            ("EROFS filesystem", 1024, &[0xe2, 0xe1, 0xf5, 0xe0]),
            // HFS+ and HFSX: the volume header at 1 KiB, its signature and then its version, 4 for HFS+
            // and 5 for HFSX, big-endian (libblkid hfs.c; Apple's TN1150). HFS is in [`signature_in`].
            ("HFS+ filesystem", 1024, b"H+\x00\x04"),
            ("HFSX filesystem", 1024, b"HX\x00\x05"),
            // APFS: the container superblock in block 0, its magic after the 32-byte object header
            // (libblkid apfs.c).
            ("APFS container", 32, b"NXSB"),
            ("JFS filesystem", 32768, b"JFS1"),
            ("ReiserFS filesystem", 65536 + 0x34, b"ReIsEr2Fs"),
            ("ReiserFS filesystem", 65536 + 0x34, b"ReIsEr3Fs"),
            ("ReiserFS filesystem", 65536 + 0x34, b"ReIsErFs"),
            ("ReiserFS filesystem", 8192 + 0x34, b"ReIsErFs"),
            ("ReiserFS filesystem", 8192 + 20, b"ReIsErFs"),
            ("Reiser4 filesystem", 65536, b"ReIsEr4"),
            ("UDF filesystem", 32769, b"BEA01"),
            // mkudffs --bootarea=erase: BEA01, NSR03, TEA01 at 32, 34, 36 KiB; any one does.
            ("UDF filesystem", 32768 + 2048 + 1, b"NSR03"),
            ("UDF filesystem", 32768 + 4096 + 1, b"NSR02"),
            ("UDF filesystem", 32768 + 63 * 2048 + 1, b"TEA01"),
        ];
        for &(what, at, magic) in cases {
            let image = image_with(1 << 20, at, magic);
            assert_eq!(signature_in_image(&image), Some(what), "{what} at {at}");
        }
    }

    /// An uberblock header: ZFS's magic and an SPA version, as two 64-bit words.
    fn uberblock(version: u64, big: bool) -> Vec<u8> {
        let word = |w: u64| {
            if big {
                w.to_be_bytes()
            } else {
                w.to_le_bytes()
            }
        };
        [word(0x00ba_b10c), word(version)].concat()
    }

    #[test]
    fn a_zfs_uberblock_in_any_labels_ring_is_found_and_near_misses_are_not() {
        const K: u64 = 1024;
        // 4 MiB and a bit, so the end labels sit below a 256 KiB boundary, not at the end.
        let size = 4 * 1024 * K + 100 * K;
        let end_labels = size / (256 * K) * (256 * K) - 512 * K;
        let found = [
            // Label 0's ring, a slot past the one the old check looked at.
            (128 * K + 5 * K, 5000, false),
            // Label 1, big-endian (a pool written on SPARC or POWER).
            (256 * K + 128 * K + 100 * K, 28, true),
            // Only the last label's ring: the first three were overwritten.
            (end_labels + 256 * K + 128 * K + 127 * K, 5000, false),
        ];
        for (at, version, big) in found {
            let image = image_with(size as usize, at, &uberblock(version, big));
            assert_eq!(
                signature_in_image(&image),
                Some("ZFS pool member"),
                "{at} {version} {big}"
            );
        }
        let missed = [
            // A version no pool has, and none.
            (128 * K, 5001, false),
            (128 * K, 0, true),
            // Not at the start of a slot.
            (128 * K + 8, 5000, false),
            // Outside the rings: in label 0's name-value pairs.
            (64 * K, 5000, false),
        ];
        for (at, version, big) in missed {
            let image = image_with(size as usize, at, &uberblock(version, big));
            assert_eq!(signature_in_image(&image), None, "{at} {version} {big}");
        }
        // A device under four labels' size has no ZFS.
        let small = image_with(512 * K as usize, 128 * K, &uberblock(5000, false));
        assert_eq!(signature_in_image(&small), None);
    }

    #[test]
    fn the_probe_reads_the_zfs_rings_between_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pool.img");
        // Label 1's ring, beyond the 160 KiB head: only the probe's own ranges reach it.
        let at = 256 * 1024 + 128 * 1024 + 64 * 1024;
        std::fs::write(&path, image_with(8 << 20, at, &uberblock(5000, false))).unwrap();
        assert_eq!(read_signature(&path).unwrap(), Some("ZFS pool member"));
    }

    #[test]
    fn cramfs_bfs_romfs_and_minix_are_found_and_near_misses_are_not() {
        for (what, at, magic) in [
            ("cramfs filesystem", 0, &b"\x45\x3d\xcd\x28"[..]),
            ("cramfs filesystem", 512, b"\x28\xcd\x3d\x45"),
            ("SCO BFS filesystem", 0, b"\xce\xfa\xad\x1b"),
            ("romfs filesystem", 0, b"-rom1fs-"),
        ] {
            assert_eq!(
                signature_in_image(&image_with(1 << 20, at, magic)),
                Some(what)
            );
            assert_eq!(
                signature_in_image(&image_with(1 << 20, at + 1, magic)),
                None
            );
        }
        // Minix v1 as mkfs.minix writes a 1 MiB image: 352 inodes, 1024 zones, one map block
        // each, the first data zone 15.
        let mut v1 = vec![0u8; 1 << 20];
        let sb = |img: &mut [u8], at: usize, b: &[u8]| {
            img[1024 + at..1024 + at + b.len()].copy_from_slice(b)
        };
        sb(&mut v1, 0, &352u16.to_le_bytes());
        sb(&mut v1, 2, &1024u16.to_le_bytes());
        sb(&mut v1, 4, &1u16.to_le_bytes());
        sb(&mut v1, 6, &1u16.to_le_bytes());
        sb(&mut v1, 8, &15u16.to_le_bytes());
        sb(&mut v1, 16, &0x138fu16.to_le_bytes());
        assert_eq!(signature_in_image(&v1), Some("Minix filesystem"));
        // The same magic with no inode map is a chance match in other data.
        let mut chance = v1.clone();
        sb(&mut chance, 4, &0u16.to_le_bytes());
        assert_eq!(signature_in_image(&chance), None);
        // Big-endian version 2, and version 3.
        let mut v2 = vec![0u8; 1 << 20];
        sb(&mut v2, 4, &1u16.to_be_bytes());
        sb(&mut v2, 6, &1u16.to_be_bytes());
        sb(&mut v2, 16, &0x2478u16.to_be_bytes());
        sb(&mut v2, 20, &1000u32.to_be_bytes());
        assert_eq!(signature_in_image(&v2), Some("Minix filesystem"));
        let mut v3 = vec![0u8; 1 << 20];
        sb(&mut v3, 6, &1u16.to_le_bytes());
        sb(&mut v3, 8, &1u16.to_le_bytes());
        sb(&mut v3, 24, &0x4d5au16.to_le_bytes());
        assert_eq!(signature_in_image(&v3), Some("Minix filesystem"));
    }

    #[test]
    fn filesystems_made_by_mkfs_minix_cramfs_and_bfs_are_found() {
        let dir = tempfile::tempdir().unwrap();
        for (tool, args, what) in [
            ("mkfs.minix", &[][..], "Minix filesystem"),
            ("mkfs.minix", &["-3"][..], "Minix filesystem"),
            ("mkfs.bfs", &[][..], "SCO BFS filesystem"),
        ] {
            let image = dir.path().join("fs.img");
            std::fs::write(&image, vec![0u8; 4 << 20]).unwrap();
            match std::process::Command::new(tool)
                .args(args)
                .arg(&image)
                .output()
            {
                Ok(out) if out.status.success() => {}
                Ok(out) => panic!("{tool}: {}", String::from_utf8_lossy(&out.stderr)),
                Err(e) => {
                    println!("skipped: {tool}: {e}");
                    continue;
                }
            }
            assert_eq!(
                read_signature(&image).unwrap(),
                Some(what),
                "{tool} {args:?}"
            );
        }
        // mkfs.cramfs makes an image of a directory.
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::write(tree.join("f"), "x").unwrap();
        let image = dir.path().join("cram.img");
        match std::process::Command::new("mkfs.cramfs")
            .arg(&tree)
            .arg(&image)
            .output()
        {
            Ok(out) if out.status.success() => {
                assert_eq!(read_signature(&image).unwrap(), Some("cramfs filesystem"));
            }
            Ok(out) => panic!("mkfs.cramfs: {}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => println!("skipped: mkfs.cramfs: {e}"),
        }
    }

    #[test]
    fn hfs_hfs_plus_hfsx_and_apfs_are_found_and_near_misses_are_not() {
        let cases: &[(&str, u64, &[u8])] = &[
            ("HFS filesystem", 1024, b"BD"),
            ("HFS+ filesystem", 1024, b"H+\x00\x04"),
            ("HFSX filesystem", 1024, b"HX\x00\x05"),
            ("APFS container", 32, b"NXSB"),
        ];
        for &(what, at, magic) in cases {
            let image = image_with(1 << 20, at, magic);
            assert_eq!(signature_in_image(&image), Some(what), "{what}");
        }
        let mut wrapper = image_with(1 << 20, 1024, b"BD");
        wrapper[1024 + 0x7C..][..2].copy_from_slice(b"H+");
        assert_eq!(
            signature_in_image(&wrapper),
            Some("HFS+ filesystem (in an HFS wrapper)")
        );
        // The wrong version for the signature, one byte off, or one byte out of place.
        let near: &[(u64, &[u8])] = &[
            (1024, b"H+\x00\x05"),
            (1024, b"HX\x00\x04"),
            (1024, b"H+\x00\x00"),
            (1024, b"BE"),
            (1025, b"BD"),
            (32, b"NXSA"),
            (33, b"NXSB"),
        ];
        for &(at, magic) in near {
            let image = image_with(1 << 20, at, magic);
            assert_eq!(signature_in_image(&image), None, "{magic:x?} at {at}");
        }
    }

    /// `tool`, where `PATH` (or the sbin directories root's `PATH` has) finds it.
    fn installed(tool: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
            .map(|dir| dir.join(tool))
            .find(|p| p.is_file())
    }

    /// Runs `tool` with `args` in `dir` (also its `HOME`: hformat leaves a file there).
    fn run_in(dir: &Path, tool: &Path, args: &[&str]) {
        let out = std::process::Command::new(tool)
            .args(args)
            .current_dir(dir)
            .env("HOME", dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool:?} {args:?}: {out:?}");
    }

    #[test]
    fn hfs_made_by_hformat_is_found() {
        let Some(hformat) = installed("hformat") else {
            println!("skipped: hformat (hfsutils) not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("hfs.img");
        File::create(&image).unwrap().set_len(4 << 20).unwrap();
        run_in(dir.path(), &hformat, &["-l", "iolab", "hfs.img"]);
        let bytes = fs::read(&image).unwrap();
        assert_eq!(signature_in_image(&bytes), Some("HFS filesystem"));
        assert_eq!(read_signature(&image).unwrap(), Some("HFS filesystem"));
    }

    #[test]
    fn apfs_made_by_mkapfs_is_found() {
        let Some(mkapfs) = installed("mkapfs") else {
            println!("skipped: mkapfs (apfsprogs) not installed");
            return;
        };
        // mkapfs refuses containers much smaller than this; the file stays sparse.
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("apfs.img");
        File::create(&image).unwrap().set_len(128 << 20).unwrap();
        run_in(dir.path(), &mkapfs, &["apfs.img"]);
        assert_eq!(read_signature(&image).unwrap(), Some("APFS container"));
        let mut head = vec![0u8; 1 << 20];
        File::open(&image).unwrap().read_exact(&mut head).unwrap();
        assert_eq!(signature_in_image(&head), Some("APFS container"));
    }

    /// A 1 MiB image with a superblock at 4 KiB holding `magic` at 24 and `sector` (the sector
    /// it was written at) at 8, as bcache keeps it, and at 104, as bcachefs does, where given.
    fn bcache_like(magic: &[u8], bcache_at: Option<u64>, bcachefs_at: Option<u64>) -> Vec<u8> {
        let mut image = image_with(1 << 20, 4096 + 24, magic);
        for (field, sector) in [(8, bcache_at), (104, bcachefs_at)] {
            if let Some(sector) = sector {
                image[4096 + field..][..8].copy_from_slice(&sector.to_le_bytes());
            }
        }
        image
    }

    #[test]
    fn bcachefs_is_found_by_its_own_magic_and_by_bcaches() {
        let bcachefs = Some("bcachefs filesystem");
        let bcache = Some("bcache backing device");
        assert_eq!(
            signature_in_image(&bcache_like(&BCACHEFS_MAGIC, None, Some(8))),
            bcachefs
        );
        assert_eq!(
            signature_in_image(&bcache_like(&BCACHEFS_MAGIC, None, None)),
            bcachefs
        );
        // bcache's magic, at 8 the checksum and at 104 the sector: bcachefs from before it had
        // its own magic.
        let old = bcache_like(&BCACHE_MAGIC, Some(0x5f3a_91c2_0b7d_e604), Some(8));
        assert_eq!(signature_in_image(&old), bcachefs);
        // bcache's magic with its own sector at 8 is bcache, whatever its flags at 104 are.
        assert_eq!(
            signature_in_image(&bcache_like(&BCACHE_MAGIC, Some(8), Some(8))),
            bcache
        );
        assert_eq!(
            signature_in_image(&bcache_like(&BCACHE_MAGIC, Some(8), None)),
            bcache
        );
        // One byte off (the last, or the fifth, where bcache's differs) is neither.
        let mut near = BCACHEFS_MAGIC;
        near[15] ^= 1;
        assert_eq!(signature_in_image(&bcache_like(&near, None, Some(8))), None);
        near = BCACHEFS_MAGIC;
        near[4] = BCACHE_MAGIC[4];
        assert_eq!(signature_in_image(&bcache_like(&near, None, Some(8))), None);
        // bcachefs's magic one byte out of place.
        assert_eq!(
            signature_in_image(&image_with(1 << 20, 4096 + 25, &BCACHEFS_MAGIC)),
            None
        );
    }

    #[test]
    fn bcache_made_by_make_bcache_is_not_taken_for_bcachefs() {
        let Some(make_bcache) = installed("make-bcache") else {
            println!("skipped: make-bcache (bcache-tools) not installed");
            return;
        };
        // A backing device, and a cache whose flags (random replacement) are 8 where bcachefs
        // keeps its sector.
        let args: [&[&str]; 2] = [
            &["-B", "bcache.img"],
            &[
                "-b",
                "64k",
                "--cache_replacement_policy=random",
                "-C",
                "bcache.img",
            ],
        ];
        for args in args {
            let dir = tempfile::tempdir().unwrap();
            let image = dir.path().join("bcache.img");
            File::create(&image).unwrap().set_len(16 << 20).unwrap();
            run_in(dir.path(), &make_bcache, args);
            let bytes = fs::read(&image).unwrap();
            assert_eq!(
                signature_in_image(&bytes),
                Some("bcache backing device"),
                "{args:?}"
            );
        }
    }

    #[test]
    fn vdo_and_either_stratis_header_are_found_and_near_misses_are_not() {
        let cases: &[(&str, u64, &[u8])] = &[
            ("VDO volume", 0, b"dmvdo001"),
            ("Stratis pool member", 512 + 4, STRATIS_MAGIC),
            ("Stratis pool member", 9 * 512 + 4, STRATIS_MAGIC),
        ];
        for &(what, at, magic) in cases {
            let image = image_with(1 << 20, at, magic);
            assert_eq!(signature_in_image(&image), Some(what), "{what} at {at}");
        }
        let mut stratis = STRATIS_MAGIC.to_vec();
        stratis[15] ^= 1;
        let near: &[(u64, &[u8])] = &[
            (0, b"dmvdo00l"),
            (1, b"dmvdo001"),
            (512 + 4, &stratis),
            (9 * 512 + 4, &stratis),
            // The header's start, without its CRC before the magic.
            (512, STRATIS_MAGIC),
            (9 * 512, STRATIS_MAGIC),
        ];
        for &(at, magic) in near {
            let image = image_with(1 << 20, at, magic);
            assert_eq!(signature_in_image(&image), None, "{magic:x?} at {at}");
        }
    }

    #[test]
    fn nilfs2_is_found_by_either_superblock_after_a_revision_number() {
        let size = 1 << 20;
        for sb in [1024, (size as u64 / 512 - 8) * 512] {
            let mut image = image_with(size, sb, &2u32.to_le_bytes());
            image[sb as usize + 6..sb as usize + 8].copy_from_slice(&[0x34, 0x34]);
            assert_eq!(
                signature_in_image(&image),
                Some("NILFS2 filesystem"),
                "{sb}"
            );
        }
        // Two bytes "44" alone, with no revision before them, are data.
        assert_eq!(signature_in_image(&image_with(size, 1030, b"44")), None);
    }

    #[test]
    fn swap_and_hibernation_images_found_for_every_page_size() {
        for page in [4096u64, 8192, 16384, 32768, 65536] {
            for &(what, magic) in SWAP_MAGICS {
                let image = image_with(1 << 20, page - 10, magic);
                assert_eq!(signature_in_image(&image), Some(what), "{page}");
            }
        }
        let image = image_with(1 << 20, 4086, b"S1SUSPEND");
        assert_eq!(
            signature_in_image(&image),
            Some("hibernation image (in swap)")
        );
        let tuxonice = [0xed, 0xc3, 0x02, 0xe9, 0x98, 0x56, 0xe5, 0x0c];
        let image = image_with(1 << 20, 0, &tuxonice);
        assert_eq!(
            signature_in_image(&image),
            Some("TuxOnIce hibernation image")
        );
    }

    #[test]
    fn an_lvm_label_is_found_in_any_of_the_first_four_sectors() {
        for sector in 0..4u64 {
            let image = image_with(1 << 20, sector * 512, b"LABELONE");
            assert_eq!(
                signature_in_image(&image),
                Some("LVM physical volume"),
                "{sector}"
            );
            let image = image_with(1 << 20, sector * 512 + 0x18, b"LVM2 001");
            assert_eq!(
                signature_in_image(&image),
                Some("LVM physical volume"),
                "{sector}"
            );
        }
        assert_eq!(
            signature_in_image(&image_with(1 << 20, 4 * 512, b"LABELONE")),
            None
        );
    }

    #[test]
    fn a_luks2_second_header_is_found_where_the_first_is_wiped() {
        let size = (4 << 20) + 8192;
        for at in LUKS2_SECOND_HEADER {
            let image = image_with(size, at, b"SKUL\xba\xbe");
            assert_eq!(
                signature_in_image(&image),
                Some("LUKS2 encrypted volume (second header)"),
                "{at:#x}"
            );
        }
    }

    #[test]
    fn a_gpt_backup_header_in_the_last_sector_is_found() {
        let size = 1 << 20;
        for sector in [512, 4096] {
            let image = image_with(size, (size - sector) as u64, b"EFI PART");
            assert_eq!(
                signature_in_image(&image),
                Some("GPT partition table (backup header)"),
                "{sector}"
            );
        }
    }

    #[test]
    fn reading_a_device_reads_every_place_a_signature_can_be() {
        // Sparse 64 MiB image files: a LUKS2 second header at 4 MiB (beyond the first
        // 160 KiB), a GPT backup and a NILFS2 backup superblock at the end.
        let dir = tempfile::tempdir().unwrap();
        let size = 64u64 << 20;
        let write = |name: &str, at: u64, bytes: &[u8]| {
            use std::os::unix::fs::FileExt;
            let path = dir.path().join(name);
            let f = File::create(&path).unwrap();
            f.set_len(size).unwrap();
            f.write_all_at(bytes, at).unwrap();
            path
        };
        let luks = write("luks", 0x40_0000, b"SKUL\xba\xbe");
        assert_eq!(
            read_signature(&luks).unwrap(),
            Some("LUKS2 encrypted volume (second header)")
        );
        let gpt = write("gpt", size - 512, b"EFI PART");
        assert_eq!(
            read_signature(&gpt).unwrap(),
            Some("GPT partition table (backup header)")
        );
        let mut sb = [0u8; 8];
        sb[0] = 2;
        sb[6..8].copy_from_slice(&[0x34, 0x34]);
        let nilfs = write("nilfs", size - 4096, &sb);
        assert_eq!(read_signature(&nilfs).unwrap(), Some("NILFS2 filesystem"));
        let blank = write("blank", 0, &[0]);
        assert_eq!(read_signature(&blank).unwrap(), None);
    }

    /// A 1 MiB image whose sector 0 starts with `boot` and ends in 0x55AA, as boot sectors do.
    fn boot_sector(boot: &[u8]) -> Vec<u8> {
        let mut image = image_with(1 << 20, 0, boot);
        image[510..512].copy_from_slice(&[0x55, 0xAA]);
        image
    }

    #[test]
    fn bitlocker_boot_sectors_are_named_before_the_mbr_rule() {
        for boot in [b"\xeb\x52\x90-FVE-FS-", b"\xeb\x58\x90-FVE-FS-"] {
            assert_eq!(
                signature_in_image(&boot_sector(boot)),
                Some("BitLocker encrypted volume"),
                "{boot:x?}"
            );
        }
        // One byte off: only the boot sector's 0x55AA is left.
        let near = boot_sector(b"\xeb\x58\x90-FVE-FS_");
        assert_eq!(
            signature_in_image(&near),
            Some("MBR partition table or boot sector")
        );
        assert_eq!(
            signature_in_image(&image_with(1 << 20, 0, b"\xeb\x58\x90-FVE-FS_")),
            None
        );
    }

    /// A 1 MiB image whose sector 0 is a FAT boot sector: a jump, a BIOS parameter block of
    /// 512-byte sectors, 4 per cluster, 1 reserved sector, 2 FATs and media 0xF8, `name` at
    /// `name_at` (0x36 for FAT12/16, 0x52 for FAT32), and 0x55AA.
    fn fat_boot_sector(name: &[u8], name_at: usize) -> Vec<u8> {
        let mut image = boot_sector(b"\xeb\x3c\x90mkfs.fat");
        image[11..13].copy_from_slice(&512u16.to_le_bytes());
        image[13] = 4;
        image[14..16].copy_from_slice(&1u16.to_le_bytes());
        image[16] = 2;
        image[21] = 0xF8;
        image[name_at..name_at + name.len()].copy_from_slice(name);
        image
    }

    /// A 1 MiB image with an MBR partition table as fdisk writes it: boot code (none here), one
    /// Linux partition from sector 2048, and 0x55AA.
    fn mbr_partition_table() -> Vec<u8> {
        let mut entry = [0u8; 16];
        entry[4] = 0x83;
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
        entry[12..16].copy_from_slice(&2048u32.to_le_bytes());
        let mut image = image_with(1 << 20, 446, &entry);
        image[510..512].copy_from_slice(&[0x55, 0xAA]);
        image
    }

    #[test]
    fn a_fat_boot_sector_is_named_as_fat_and_a_partition_table_as_an_mbr() {
        let fat = Some("vfat (FAT12/16/32) filesystem");
        for (name, at) in [
            (&b"FAT12   "[..], 0x36),
            (b"FAT16   ", 0x36),
            (b"FAT     ", 0x36),
            (b"FAT32   ", 0x52),
        ] {
            let image = fat_boot_sector(name, at);
            assert_eq!(signature_in_image(&image), fat, "{name:?}");
            // Without its 0x55AA, named FAT still is FAT (libblkid's rule).
            let mut unsigned = image.clone();
            unsigned[510..512].fill(0);
            assert_eq!(signature_in_image(&unsigned), fat, "{name:?}");
        }
        // An old floppy's boot sector: no name, a jump and 0x55AA.
        assert_eq!(signature_in_image(&fat_boot_sector(b"", 0x36)), fat);
        // OS/2's FAT-like block before JFS or HPFS is not FAT.
        for name in [b"JFS     ", b"HPFS    "] {
            assert_eq!(
                signature_in_image(&fat_boot_sector(name, 0x36)),
                Some("MBR partition table or boot sector"),
                "{name:?}"
            );
        }
        // A parameter block that is not one: each field wrong in turn.
        let broken: [(usize, &[u8]); 6] = [
            (11, &[0x00, 0x01]), // 256-byte sectors
            (11, &[0x00, 0x06]), // 1536-byte sectors
            (13, &[3]),          // 3 sectors per cluster
            (14, &[0, 0]),       // no reserved sector
            (16, &[0]),          // no FAT
            (21, &[0xF1]),       // no media byte FAT has
        ];
        for (at, bytes) in broken {
            let mut image = fat_boot_sector(b"FAT16   ", 0x36);
            image[at..at + bytes.len()].copy_from_slice(bytes);
            assert_eq!(
                signature_in_image(&image),
                Some("MBR partition table or boot sector"),
                "{at} {bytes:x?}"
            );
        }
        // A partition table is still an MBR.
        assert_eq!(
            signature_in_image(&mbr_partition_table()),
            Some("MBR partition table or boot sector")
        );
    }

    #[test]
    fn filesystems_made_by_mkfs_vfat_are_fat_and_a_table_made_by_sfdisk_an_mbr() {
        let Some(mkfs) = installed("mkfs.vfat") else {
            println!("skipped: mkfs.vfat (dosfstools) not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        for bits in ["12", "16", "32"] {
            let name = format!("fat{bits}.img");
            let image = dir.path().join(&name);
            File::create(&image).unwrap().set_len(64 << 20).unwrap();
            run_in(dir.path(), &mkfs, &["-F", bits, &name]);
            assert_eq!(
                read_signature(&image).unwrap(),
                Some("vfat (FAT12/16/32) filesystem"),
                "FAT{bits}"
            );
        }
        let Some(sfdisk) = installed("sfdisk") else {
            println!("skipped: sfdisk (fdisk) not installed");
            return;
        };
        let image = dir.path().join("mbr.img");
        File::create(&image).unwrap().set_len(64 << 20).unwrap();
        let mut child = std::process::Command::new(sfdisk)
            .args(["--quiet", "--label", "dos"])
            .arg(&image)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(b"start=2048, type=83\n").unwrap();
        }
        assert!(child.wait().unwrap().success());
        assert_eq!(
            read_signature(&image).unwrap(),
            Some("MBR partition table or boot sector")
        );
    }

    #[test]
    fn bitlocker_to_go_is_named_by_the_fve_metadata_its_boot_sector_points_to() {
        let metadata = 0x8_0000u64; // beyond what the probe reads of the start otherwise
                                    // A To Go boot sector is a FAT32 one, BIOS parameter block and all.
        let mut image = fat_boot_sector(b"FAT32   ", 0x52);
        image[..BITLOCKER_TO_GO.len()].copy_from_slice(BITLOCKER_TO_GO);
        image[440..448].copy_from_slice(&metadata.to_le_bytes());
        let mut to_go = image.clone();
        to_go[metadata as usize..][..8].copy_from_slice(FVE_SIGNATURE);
        assert_eq!(
            signature_in_image(&to_go),
            Some("BitLocker To Go encrypted volume")
        );
        // The same boot sector with no FVE metadata there (or none named) is a FAT32 one.
        let fat32 = "vfat (FAT12/16/32) filesystem";
        assert_eq!(signature_in_image(&image), Some(fat32));
        image[metadata as usize..][..8].copy_from_slice(b"-FVE-FS_");
        assert_eq!(signature_in_image(&image), Some(fat32));
        to_go[440..448].fill(0);
        assert_eq!(signature_in_image(&to_go), Some(fat32));
    }

    #[test]
    fn reading_a_bitlocker_to_go_device_reads_its_fve_metadata_wherever_it_is() {
        // Sparse 64 MiB image files with a To Go boot sector: its metadata at 32 MiB, then
        // named past the end (a FAT32 boot sector that only looks like one: not an error).
        let dir = tempfile::tempdir().unwrap();
        let size = 64u64 << 20;
        let write = |name: &str, metadata: u64| {
            use std::os::unix::fs::FileExt;
            let path = dir.path().join(name);
            let f = File::create(&path).unwrap();
            f.set_len(size).unwrap();
            let mut boot = boot_sector(BITLOCKER_TO_GO);
            boot.truncate(512);
            boot[440..448].copy_from_slice(&metadata.to_le_bytes());
            f.write_all_at(&boot, 0).unwrap();
            if metadata < size {
                f.write_all_at(FVE_SIGNATURE, metadata).unwrap();
            }
            path
        };
        let to_go = write("to-go", 32 << 20);
        assert_eq!(
            read_signature(&to_go).unwrap(),
            Some("BitLocker To Go encrypted volume")
        );
        let past_the_end = write("past-the-end", size + 4096);
        assert_eq!(
            read_signature(&past_the_end).unwrap(),
            Some("MBR partition table or boot sector")
        );
    }

    #[test]
    fn device_numbers_split_like_glibc() {
        // makedev(259, 3) = 0x10300 | (3 & 0xff)
        let dev = ((259u64 & 0xfff) << 8) | 3;
        assert_eq!((major(dev), minor(dev)), (259, 3));
        let big = ((7u64 & 0xfff) << 8) | (300 & 0xff) | ((300u64 & !0xff) << 12);
        assert_eq!((major(big), minor(big)), (7, 300));
    }

    /// A btrfs on loop1 and an ext4 on loop2p1, as `/proc/self/mountinfo` shows them.
    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
43 22 0:39 / /mnt/my\\040disk rw,relatime shared:30 - btrfs /dev/loop1 rw,space_cache=v2
44 22 259:1 / /mnt/p1 rw,relatime - ext4 /dev/loop2p1 rw
45 22 0:25 / /tmp rw shared:5 master:1 - tmpfs tmpfs rw,size=100k
";

    #[test]
    fn mountinfo_lines_give_device_number_source_and_unescaped_point() {
        let lines = parse_mountinfo(MOUNTINFO);
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[1],
            MountLine {
                devnum: Some((0, 39)),
                source: "/dev/loop1".into(),
                point: "/mnt/my disk".into(),
            }
        );
        // Optional fields (shared:, master:) do not shift the source.
        assert_eq!(lines[3].source, "tmpfs");
        assert_eq!(unescape_mount_field(r"a\011b\134c\040"), "a\tb\\c ");
        assert_eq!(unescape_mount_field(r"odd\04"), r"odd\04");
    }

    #[test]
    fn a_mount_counts_for_its_source_device_as_well_as_the_number_mountinfo_gives() {
        let no_sysfs = tempfile::tempdir().unwrap();
        let resolve = |source: &str| match source {
            "/dev/loop1" => Some((7, 1)),
            "/dev/loop2p1" => Some((259, 1)),
            "/dev/vda" => Some((254, 0)),
            _ => None,
        };
        let table = mount_table(&parse_mountinfo(MOUNTINFO), no_sysfs.path(), resolve);
        // btrfs reports the anonymous 0:39; its source /dev/loop1 is 7:1.
        assert!(
            table.contains(&((7, 1), "/mnt/my disk".into())),
            "{table:?}"
        );
        assert!(table.contains(&((0, 39), "/mnt/my disk".into())));
        assert!(table.contains(&((259, 1), "/mnt/p1".into())));
        // Listed once when the source is the number mountinfo already gave.
        assert_eq!(table.iter().filter(|(d, _)| *d == (259, 1)).count(), 1);
        // A source that is not a device path (tmpfs) adds nothing.
        assert_eq!(table.iter().filter(|(_, p)| p == "/tmp").count(), 1);
    }

    #[test]
    fn every_member_of_a_mounted_btrfs_counts_as_mounted() {
        // A two-device btrfs on loop1 and loop3, mounted from loop1: sysfs lists both.
        let sysfs = tempfile::tempdir().unwrap();
        let root = sysfs.path();
        for (name, dev) in [("loop1", "7:1"), ("loop3", "7:3")] {
            fs::create_dir_all(root.join("class/block").join(name)).unwrap();
            fs::write(
                root.join("class/block").join(name).join("dev"),
                format!("{dev}\n"),
            )
            .unwrap();
            fs::create_dir_all(root.join("fs/btrfs/0a1b-uuid/devices").join(name)).unwrap();
        }
        fs::create_dir_all(root.join("fs/btrfs/features")).unwrap();
        let resolve = |source: &str| (source == "/dev/loop1").then_some((7, 1));
        let table = mount_table(&parse_mountinfo(MOUNTINFO), root, resolve);
        assert!(
            table.contains(&((7, 3), "/mnt/my disk".into())),
            "{table:?}"
        );
        // Not mounted from anywhere this process sees: still mounted, named by its UUID.
        let table = mount_table(&[], root, resolve);
        assert!(
            table.contains(&((7, 3), "btrfs filesystem 0a1b-uuid".into())),
            "{table:?}"
        );
    }

    /// A fake sysfs tree under a temp dir: block devices by name with their device numbers,
    /// partitions (a subdirectory of their disk, linked from `class/block`, as sysfs has them)
    /// and holders.
    struct FakeSysfs {
        dir: tempfile::TempDir,
    }

    impl FakeSysfs {
        fn new() -> FakeSysfs {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir_all(dir.path().join("class/block")).unwrap();
            FakeSysfs { dir }
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        /// Block device `name` (`MAJ:MIN` `dev`), a partition of `disk` if given.
        fn device(&self, name: &str, dev: &str, disk: Option<&str>) -> &FakeSysfs {
            let class = self.root().join("class/block");
            let dir = match disk {
                Some(disk) => {
                    let dir = class.join(disk).join(name);
                    fs::create_dir_all(&dir).unwrap();
                    fs::write(dir.join("partition"), "1\n").unwrap();
                    std::os::unix::fs::symlink(format!("{disk}/{name}"), class.join(name)).unwrap();
                    dir
                }
                None => class.join(name),
            };
            fs::create_dir_all(dir.join("holders")).unwrap();
            fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
            self
        }

        /// Loop device `name` is bound to `file` (`/dev/NAME` for a device, `/img/INODE` for an
        /// image file; see [`FakeSysfs::system`]).
        fn loop_on(&self, name: &str, dev: &str, file: &str) -> &FakeSysfs {
            self.device(name, dev, None);
            let dir = self.root().join("class/block").join(name).join("loop");
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("backing_file"), format!("{file}\n")).unwrap();
            self
        }

        /// `holder` (dm-0, md0) is stacked on `name`.
        fn holds(&self, holder: &str, name: &str) -> &FakeSysfs {
            let holders = self.root().join("class/block").join(name).join("holders");
            fs::create_dir_all(&holders).unwrap();
            fs::write(holders.join(holder), "").unwrap();
            self
        }

        fn system(&self, mounts: &[(DevNum, &str)]) -> System {
            System {
                sysfs: self.root().to_path_buf(),
                mounts: mounts.iter().map(|(d, p)| (*d, p.to_string())).collect(),
                swaps: Vec::new(),
                lost_swaps: Vec::new(),
                loops: scan_loops(self.root(), |file| {
                    // Fake backing files: `/dev/NAME` is NAME's device, `/img/N` file inode N.
                    if let Some(dev) = file.strip_prefix("/dev/") {
                        let dev = fs::read_to_string(
                            self.root().join("class/block").join(dev).join("dev"),
                        );
                        dev.ok()
                            .and_then(|d| parse_devnum(&d))
                            .map_or(Backing::Unknown, Backing::Device)
                    } else if let Some(ino) = file.strip_prefix("/img/") {
                        ino.parse()
                            .map_or(Backing::Unknown, |ino| Backing::File(1, ino))
                    } else {
                        Backing::Unknown
                    }
                }),
            }
        }
    }

    /// A disk with two partitions; dm-0 (LVM) holds the second.
    fn disk_with_lvm_on_a_partition() -> FakeSysfs {
        let fake = FakeSysfs::new();
        fake.device("sda", "8:0", None)
            .device("sda1", "8:1", Some("sda"))
            .device("sda2", "8:2", Some("sda"))
            .device("dm-0", "253:0", None)
            .holds("dm-0", "sda2");
        fake
    }

    #[test]
    fn holders_of_a_partition_count_as_holders_of_the_disk() {
        let fake = disk_with_lvm_on_a_partition();
        let found = stack_hazards(&fake.system(&[]), "sda");
        assert!(
            found.contains(&Hazard::Holders(vec!["dm-0".into()])),
            "{found:?}"
        );
        // Not mounted: --destroy-data may override.
        assert!(found.iter().all(Hazard::overridable), "{found:?}");
        let found = stack_hazards(&fake.system(&[]), "sda2");
        assert_eq!(found, vec![Hazard::Holders(vec!["dm-0".into()])]);
    }

    #[test]
    fn a_mounted_volume_stacked_on_the_device_refuses_even_with_destroy_data() {
        let fake = disk_with_lvm_on_a_partition();
        let sys = fake.system(&[((253, 0), "/srv")]);
        for name in ["sda", "sda2"] {
            let found = stack_hazards(&sys, name);
            assert!(
                found.contains(&Hazard::Mounted(
                    "/srv, through dm-0, which holds sda2".into()
                )),
                "{name}: {found:?}"
            );
            assert!(!found.iter().all(Hazard::overridable));
        }
        // The other partition is not under the volume.
        assert_eq!(stack_hazards(&sys, "sda1"), vec![]);
    }

    #[test]
    fn a_mounted_volume_several_layers_up_refuses_as_well() {
        // RAID1 md0 over sda1 and sdb1, LVM dm-1 on md0 with an ext4 mounted; md0 is
        // partitioned too and md0p1 is swap.
        let fake = FakeSysfs::new();
        fake.device("sda", "8:0", None)
            .device("sda1", "8:1", Some("sda"))
            .device("sdb", "8:16", None)
            .device("sdb1", "8:17", Some("sdb"))
            .device("md0", "9:0", None)
            .device("md0p1", "259:0", Some("md0"))
            .device("dm-1", "253:1", None)
            .holds("md0", "sda1")
            .holds("md0", "sdb1")
            .holds("dm-1", "md0");
        let mut sys = fake.system(&[((253, 1), "/home")]);
        sys.swaps = vec![(Some((259, 0)), "/dev/md0p1".into())];
        let found = stack_hazards(&sys, "sdb");
        assert!(
            found.contains(&Hazard::Holders(vec!["md0".into()])),
            "{found:?}"
        );
        assert!(
            found.contains(&Hazard::Mounted(
                "/home, through dm-1, which holds md0".into()
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&Hazard::Swap("/dev/md0p1, a partition of md0".into())),
            "{found:?}"
        );
    }

    #[test]
    fn a_loop_device_on_the_device_or_its_partition_is_in_use_and_mounted_if_it_is() {
        let fake = FakeSysfs::new();
        fake.loop_on("loop0", "7:0", "/img/10")
            .device("loop0p1", "259:0", Some("loop0"))
            .loop_on("loop1", "7:1", "/dev/loop0")
            .loop_on("loop2", "7:2", "/dev/loop0p1")
            .loop_on("loop3", "7:3", "/img/11");
        let found = stack_hazards(&fake.system(&[]), "loop0");
        assert!(
            found.contains(&Hazard::InUse(vec![
                "loop1 (a loop device on loop0)".into(),
                "loop2 (a loop device on loop0p1)".into(),
            ])),
            "{found:?}"
        );
        assert!(found.iter().all(Hazard::overridable), "{found:?}");
        // Mounted (loop1 with an offset, say): refused even with --destroy-data.
        let found = stack_hazards(&fake.system(&[((7, 1), "/mnt/b")]), "loop0");
        assert!(
            found.contains(&Hazard::Mounted(
                "/mnt/b, through loop1, a loop device on loop0".into()
            )),
            "{found:?}"
        );
        assert!(!found.iter().all(Hazard::overridable));
        // Nothing on loop3.
        assert_eq!(
            stack_hazards(&fake.system(&[((7, 1), "/mnt/b")]), "loop3"),
            vec![]
        );
    }

    #[test]
    fn loop_devices_on_the_same_file_share_their_data() {
        let fake = FakeSysfs::new();
        fake.loop_on("loop4", "7:4", "/img/20")
            .loop_on("loop5", "7:5", "/img/20")
            .loop_on("loop6", "7:6", "/gone.img (deleted)")
            .loop_on("loop7", "7:7", "/gone.img (deleted)");
        let found = stack_hazards(&fake.system(&[((7, 4), "/data")]), "loop5");
        assert_eq!(
            found,
            vec![Hazard::Mounted(
                "/data, through loop4, a loop device on the same file /img/20".into()
            )]
        );
        // A deleted backing file cannot be looked at: the same path counts as the same file.
        let found = stack_hazards(&fake.system(&[]), "loop6");
        assert_eq!(
            found,
            vec![Hazard::InUse(vec![
                "loop7 (a loop device on the same file /gone.img (deleted))".into()
            ])]
        );
    }

    #[test]
    fn a_loop_device_on_a_mounted_device_writes_under_that_mount() {
        // loop9 is a loop device on loop8, which is mounted; loop8p1 is a partition of it
        // (swap) and loop10 another loop device on loop8.
        let fake = FakeSysfs::new();
        fake.loop_on("loop8", "7:8", "/img/30")
            .device("loop8p1", "259:8", Some("loop8"))
            .loop_on("loop9", "7:9", "/dev/loop8")
            .loop_on("loop10", "7:10", "/dev/loop8");
        let mut sys = fake.system(&[((7, 8), "/mnt/a")]);
        sys.swaps = vec![(Some((259, 8)), "/dev/loop8p1".into())];
        let found = stack_hazards(&sys, "loop9");
        assert!(
            found.contains(&Hazard::Mounted(
                "/mnt/a, through loop8, which loop device loop9 is on".into()
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&Hazard::Swap("/dev/loop8p1, a partition of loop8".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&Hazard::InUse(vec![
                "loop10 (a loop device on loop8)".into()
            ])),
            "{found:?}"
        );
        // A partition's disk: only the disk itself and what is on it, not its other
        // partitions.
        let sys = fake.system(&[]);
        let found = stack_hazards(&sys, "loop8p1");
        assert!(
            found.contains(&Hazard::InUse(vec![
                "loop10 (a loop device on loop8)".into(),
                "loop9 (a loop device on loop8)".into(),
            ])),
            "{found:?}"
        );
    }

    #[test]
    fn swap_areas_are_matched_by_device_number_and_lost_ones_kept() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/dm-1                               partition\t8388604\t\t0\t\t-2
/dev/foo\\040(deleted)                   partition\t65532\t\t0\t\t-3
/dev/gone                               partition\t65532\t\t0\t\t-4
/swap\\040file                           file\t\t1048572\t\t0\t\t-5
/old.swap\\040(deleted)                  file\t\t1048572\t\t0\t\t-6
";
        let resolve = |path: &str| match path {
            "/dev/dm-1" => Some((253, 1)),
            // A node of the deleted one's name now is another device: not looked at.
            "/dev/foo" => Some((7, 9)),
            _ => None,
        };
        let (swaps, lost) = parse_swaps(text, resolve);
        assert_eq!(swaps[0], (Some((253, 1)), "/dev/dm-1".to_string()));
        assert_eq!(swaps[1], (None, "/dev/foo (deleted)".to_string()));
        assert_eq!(swaps[3], (None, "/swap file".to_string()));
        // Swap files live on a mounted filesystem; block devices whose node is gone are lost.
        assert_eq!(lost, vec!["/dev/foo (deleted)", "/dev/gone"]);
    }

    #[test]
    fn a_swap_file_is_found_by_its_inode_under_the_name_proc_swaps_gives() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority
/dev/dm-1                               partition\t8388604\t\t0\t\t-2
/srv/swap\\040file                      file\t\t1048572\t\t0\t\t-3
/old.swap\\040(deleted)                 file\t\t1048572\t\t0\t\t-4
";
        let stat = |path: &str| match path {
            "/dev/dm-1" => Some((5, 1)),
            "/srv/swap file" => Some((2049, 12)),
            // The deleted one's name now is another file: never looked up.
            "/old.swap" => Some((2049, 13)),
            _ => None,
        };
        // The same file under another name (a hard link, a relative path): found by inode.
        assert_eq!(
            swap_file_of(text, (2049, 12), stat),
            Some("/srv/swap file".to_string())
        );
        assert_eq!(swap_file_of(text, (2049, 13), stat), None);
        // A block device's swap is no file's.
        assert_eq!(swap_file_of(text, (5, 1), stat), None);
        assert_eq!(
            swap_file_of("Filename Type Size Used Priority\n", (2049, 12), stat),
            None
        );
        let msg = GuardError::SwapFile {
            file: "./swap".into(),
            swap: "/srv/swap file".into(),
        }
        .to_string();
        assert!(
            msg.contains("active swap") && msg.contains("swapoff /srv/swap file"),
            "{msg}"
        );
    }

    #[test]
    fn held_exclusively_while_swap_is_lost_is_refused_like_swap() {
        assert_eq!(exclusive_holder(&[]), Hazard::Busy);
        assert!(Hazard::Busy.overridable());
        let maybe = exclusive_holder(&["/dev/foo (deleted)".into()]);
        assert_eq!(maybe, Hazard::MaybeSwap(vec!["/dev/foo (deleted)".into()]));
        assert!(!maybe.overridable());
        let msg = Refusal {
            device: "/dev/loop4".into(),
            hazards: vec![maybe],
            destroy_data_elsewhere: None,
        }
        .to_string();
        assert!(
            msg.contains("/dev/foo (deleted)") && msg.contains("swapoff"),
            "{msg}"
        );
    }

    #[test]
    fn destroy_data_naming_anything_but_the_target_says_it_does_not_apply() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("test.bin");
        fs::write(&file, b"data").unwrap();
        let nothing = dir.path().join("sdz");
        assert!(check_destroy_data_names_target(&file, None).is_ok());
        for (named, says) in [
            (&nothing, "names nothing that exists"),
            (&file, "names no block device"),
        ] {
            let msg = check_destroy_data_names_target(&file, Some(named))
                .unwrap_err()
                .to_string();
            assert!(
                msg.contains(&format!("--destroy-data={} {says}", named.display()))
                    && msg.contains("does not apply")
                    && msg.contains("leave the flag out"),
                "{msg}"
            );
        }
        // A refusal by the guard says it too, and how to name the target.
        let msg = Refusal {
            device: "/dev/loop9".into(),
            hazards: vec![Hazard::Signature("ext2/3/4 filesystem")],
            destroy_data_elsewhere: Some(
                "--destroy-data=/dev/loop8 names another device than the target".into(),
            ),
        }
        .to_string();
        assert!(
            msg.contains("/dev/loop8 names another device than the target, so it does not apply")
                && msg.contains("--destroy-data=/dev/loop9"),
            "{msg}"
        );
    }

    #[test]
    fn refusal_says_how_to_override() {
        let r = Refusal {
            device: "/dev/loop9".into(),
            hazards: vec![Hazard::Signature("ext2/3/4 filesystem")],
            destroy_data_elsewhere: None,
        };
        let msg = r.to_string();
        assert!(
            msg.contains("ext2/3/4") && msg.contains("--destroy-data=/dev/loop9"),
            "{msg}"
        );
        let r = Refusal {
            device: "/dev/loop9".into(),
            hazards: vec![Hazard::Mounted("/mnt".into())],
            destroy_data_elsewhere: None,
        };
        assert!(r.to_string().contains("Unmount"));
    }
}
