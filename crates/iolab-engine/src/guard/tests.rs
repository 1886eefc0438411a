//! The guard's policy against fake sysfs trees, mount tables and swap lists.

use super::files::*;
use super::stacks::*;
use super::*;
use std::path::Path;

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
                    let dev =
                        fs::read_to_string(self.root().join("class/block").join(dev).join("dev"));
                    dev.ok()
                        .and_then(|d| iolab_host::devnum::parse(&d))
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
