//! The kernel's view of what is stacked on a device: partitions, holders (device-mapper, MD
//! RAID, LVM, bcache), loop devices and their backing files, active swap, and the mounts of
//! any of them.

use super::mounts::mounts;
use super::Hazard;
use iolab_host::devnum::{self, DevNum};
use iolab_host::mountinfo::unescape;
use iolab_host::sysfs::entries as list_dir;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The active swap areas of a `/proc/swaps` text: `(device number, path)` of each (the number
/// by `resolve` of the unescaped path, none for a swap file), and the paths of the areas on a
/// block device whose node cannot be resolved: deleted (`"/dev/foo (deleted)"`; a node of
/// that name now may be another device) or gone. A swap file's filesystem is mounted, which
/// the mount check sees.
pub(super) fn parse_swaps(
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
        let path = unescape(path);
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
pub(super) struct System {
    /// The sysfs root (`/sys`).
    pub(super) sysfs: PathBuf,
    /// `(device number, mount point)` of every mount (see [`mount_table`]).
    pub(super) mounts: Vec<(DevNum, String)>,
    /// `(device number, path)` of every active swap area; no number where the path is not a
    /// block device node.
    pub(super) swaps: Vec<(Option<DevNum>, String)>,
    /// Paths of active swap areas on a block device whose node is gone (see [`parse_swaps`]).
    pub(super) lost_swaps: Vec<String>,
    /// Every bound loop device and what it reads and writes.
    pub(super) loops: Vec<LoopDevice>,
}

/// A bound loop device (`/sys/class/block/loopN/loop/backing_file`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LoopDevice {
    /// Its name, e.g. `loop3`.
    pub(super) name: String,
    /// The backing file as sysfs shows it.
    pub(super) file: String,
    /// What that file is.
    pub(super) backing: Backing,
}

/// What a loop device's backing file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Backing {
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
    pub(super) fn of(file: &str) -> Backing {
        if file.ends_with(" (deleted)") {
            return Backing::Unknown;
        }
        match fs::metadata(file) {
            Ok(m) if m.file_type().is_block_device() => Backing::Device(devnum::split(m.rdev())),
            Ok(m) => Backing::File(m.dev(), m.ino()),
            Err(_) => Backing::Unknown,
        }
    }
}

/// Every loop device bound under `sysfs`, its backing file resolved with `resolve`.
pub(super) fn scan_loops(sysfs: &Path, resolve: impl Fn(&str) -> Backing) -> Vec<LoopDevice> {
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
    pub(super) fn read() -> io::Result<System> {
        let sysfs = PathBuf::from("/sys");
        let mounts = mounts(&sysfs)?;
        let (swaps, lost_swaps) = parse_swaps(
            &fs::read_to_string("/proc/swaps").unwrap_or_default(),
            |path| devnum::of_block_node(Path::new(path)),
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
    pub(super) fn block(&self, name: &str) -> PathBuf {
        self.sysfs.join("class/block").join(name)
    }

    pub(super) fn devnum(&self, name: &str) -> Option<DevNum> {
        devnum::parse(&fs::read_to_string(self.block(name).join("dev")).ok()?)
    }

    /// The partitions of block device `name`.
    pub(super) fn partitions(&self, name: &str) -> Vec<String> {
        let dir = self.block(name);
        list_dir(&dir)
            .into_iter()
            .filter(|n| dir.join(n).join("partition").exists())
            .collect()
    }

    /// What is stacked directly on block device `name` (dm, md, bcache: its `holders/`).
    pub(super) fn holders(&self, name: &str) -> Vec<String> {
        list_dir(self.block(name).join("holders"))
    }

    /// The devices built directly on block device `name`, each with how it is built on it
    /// (`"which holds sda1"`) and whether it is a loop device.
    pub(super) fn users(&self, name: &str) -> Vec<(String, String, bool)> {
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
    pub(super) fn loops_bound_to(&self, dev: u64, ino: u64) -> Vec<String> {
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

    pub(super) fn loops_on_the_same_file(&self, name: &str) -> Vec<(String, String, bool)> {
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
    pub(super) fn lower(&self, name: &str) -> Option<(String, String, bool)> {
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
        let disk = list_dir(self.sysfs.join("class/block"))
            .into_iter()
            .find(|n| self.devnum(n) == Some(devnum))?;
        Some((disk, format!("which loop device {name} is on"), true))
    }

    /// Where block device `name` is mounted.
    pub(super) fn mount_points(&self, name: &str) -> Vec<String> {
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
    pub(super) fn swap_paths(&self, name: &str) -> Vec<String> {
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
pub(super) fn stack_hazards(sys: &System, name: &str) -> Vec<Hazard> {
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
pub(super) const MAX_STACK: usize = 4096;
