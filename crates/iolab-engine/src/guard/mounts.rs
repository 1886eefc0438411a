//! The mount table as the guard needs it: every mount under each device it sits on.

use iolab_host::devnum::{self, DevNum};
use iolab_host::mountinfo::{self, Mount};
use iolab_host::sysfs::entries as list_dir;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// `(device number, mount point)` of every mount, listed under each device it sits on: the
/// number mountinfo reports, the number of its source when that is a block device node
/// (`resolve`), and for a mounted btrfs every member device (`/sys/fs/btrfs/UUID/devices`
/// under `sysfs`, which exists only while it is mounted).
pub(super) fn mount_table(
    lines: &[Mount],
    sysfs: &Path,
    resolve: impl Fn(&str) -> Option<DevNum>,
) -> Vec<(DevNum, String)> {
    let mut table = Vec::new();
    for m in lines {
        let point = m.mount_point.to_string_lossy().into_owned();
        table.extend(m.devnum().map(|d| (d, point.clone())));
        if m.source.starts_with('/') {
            if let Some(d) = resolve(&m.source).filter(|d| Some(*d) != m.devnum()) {
                table.push((d, point));
            }
        }
    }
    for fs_dir in list_dir(sysfs.join("fs/btrfs")) {
        let members: Vec<DevNum> = list_dir(sysfs.join("fs/btrfs").join(&fs_dir).join("devices"))
            .iter()
            .filter_map(|n| fs::read_to_string(sysfs.join("class/block").join(n).join("dev")).ok())
            .filter_map(|s| devnum::parse(&s))
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
pub(super) fn mounts(sysfs: &Path) -> io::Result<Vec<(DevNum, String)>> {
    Ok(mount_table(&mountinfo::read()?, sysfs, |source| {
        devnum::of_block_node(Path::new(source))
    }))
}

/// Every mount point this process can see, as mountinfo lists them (a file bind-mounted over
/// another is one too): an output written there by rename would fail, or land in the mounted
/// file's place.
pub fn mount_points() -> io::Result<Vec<PathBuf>> {
    Ok(mountinfo::read()?
        .into_iter()
        .map(|m| m.mount_point)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A btrfs on loop1 and an ext4 on loop2p1, as `/proc/self/mountinfo` shows them.
    const MOUNTINFO: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
43 22 0:39 / /mnt/my\\040disk rw,relatime shared:30 - btrfs /dev/loop1 rw,space_cache=v2
44 22 259:1 / /mnt/p1 rw,relatime - ext4 /dev/loop2p1 rw
45 22 0:25 / /tmp rw shared:5 master:1 - tmpfs tmpfs rw,size=100k
";

    #[test]
    fn a_mount_counts_for_its_source_device_as_well_as_the_number_mountinfo_gives() {
        let no_sysfs = tempfile::tempdir().unwrap();
        let resolve = |source: &str| match source {
            "/dev/loop1" => Some((7, 1)),
            "/dev/loop2p1" => Some((259, 1)),
            "/dev/vda" => Some((254, 0)),
            _ => None,
        };
        let table = mount_table(&mountinfo::parse(MOUNTINFO), no_sysfs.path(), resolve);
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
        let table = mount_table(&mountinfo::parse(MOUNTINFO), root, resolve);
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
}
