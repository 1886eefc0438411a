//! The safety guard end to end: the `iolab` binary asked to write to loop devices that hold or
//! serve something (mounted btrfs, loop devices stacked on them, …) must refuse and leave every
//! byte as it was. Needs root, loop devices and the filesystem tools; prints `skipped: …` where
//! the machine cannot provide them.

use iolab_testkit::{loop_skip_reason, mount_skip_reason, which, LoopDevice, MachineLock};
use iolab_testkit::{run, AttachedLoop, Mount, PartitionedLoop};
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{refused_unchanged, text};

/// Why these tests cannot run here (beyond loop devices and mounts: `tools` and the kernel's
/// filesystem `fs`), or `None`.
fn skip_reason(tools: &[&str], fs: Option<&str>) -> Option<String> {
    loop_skip_reason()
        .or_else(mount_skip_reason)
        .or_else(|| {
            tools
                .iter()
                .find(|t| !which(t))
                .map(|t| format!("{t} not installed"))
        })
        .or_else(|| {
            let fs = fs?;
            let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
            (!known
                .lines()
                .any(|l| l.split_whitespace().last() == Some(fs)))
            .then(|| format!("the kernel has no {fs} (not in /proc/filesystems)"))
        })
}

/// Ten random 4K writes to `dev`, offering `destroy` to --destroy-data.
fn small_write(dev: &Path, destroy: Option<&Path>) -> Output {
    let dir = tempfile::tempdir().unwrap();
    common::small_write(dev, destroy, dir.path())
}

/// An ext4 without lazy initialisation (no background writes to change checksums).
fn mkfs_ext4(dev: &Path) {
    run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            dev.to_str().unwrap(),
        ],
    )
    .unwrap();
}

#[test]
fn a_mounted_btrfs_is_refused_even_with_destroy_data() {
    if let Some(why) = skip_reason(&["mkfs.btrfs"], Some("btrfs")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    // btrfs reports an anonymous device number (0:NN) in mountinfo, not the device's.
    let dev = LoopDevice::new(160 << 20).unwrap();
    run("mkfs.btrfs", &["-q", "-f", dev.path.to_str().unwrap()]).unwrap();
    let mount = Mount::existing(&dev.path, "btrfs", &["ro"]).unwrap();
    let err = refused_unchanged(&dev.path, Some(&dev.path), "mounted");
    assert!(err.contains("Unmount"), "{err}");
    drop(mount);
}

#[test]
fn a_disk_whose_partition_holds_a_mounted_btrfs_is_refused_even_with_destroy_data() {
    if let Some(why) = skip_reason(&["mkfs.btrfs", "addpart"], Some("btrfs")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let disk = PartitionedLoop::new(200 << 20, &[(2048, 32768), (34816, 360448)]).unwrap();
    let p2 = disk.partition(2);
    run("mkfs.btrfs", &["-q", "-f", p2.to_str().unwrap()]).unwrap();
    let mount = Mount::existing(&p2, "btrfs", &["ro"]).unwrap();
    refused_unchanged(&disk.path, Some(&disk.path), "mounted");
    refused_unchanged(&p2, Some(&p2), "mounted");
    drop(mount);
}

#[test]
fn every_member_of_a_mounted_multi_device_btrfs_is_refused() {
    if let Some(why) = skip_reason(&["mkfs.btrfs"], Some("btrfs")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let a = LoopDevice::new(128 << 20).unwrap();
    let b = LoopDevice::new(128 << 20).unwrap();
    let (pa, pb) = (a.path.to_str().unwrap(), b.path.to_str().unwrap());
    run(
        "mkfs.btrfs",
        &["-q", "-f", "-d", "raid1", "-m", "raid1", pa, pb],
    )
    .unwrap();
    let mount = Mount::existing(&a.path, "btrfs", &["ro"]).unwrap();
    // Mounted from `a`: mountinfo names only `a`; `b` is just as live.
    refused_unchanged(&b.path, Some(&b.path), "mounted");
    drop(mount);
}

#[test]
fn a_device_under_a_loop_device_is_in_use_and_refused_even_with_destroy_data_while_it_is_mounted() {
    if let Some(why) = skip_reason(&[], Some("ext4")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    // Loop devices register no holder on their backing device, and with an offset the
    // filesystem's signature is not at the start of the device underneath.
    let under = LoopDevice::new(64 << 20).unwrap();
    let on = AttachedLoop::new(&["-o", "1048576", under.path.to_str().unwrap()]).unwrap();
    mkfs_ext4(&on.path);
    let mount = Mount::existing(&on.path, "ext4", &["ro"]).unwrap();
    refused_unchanged(&under.path, None, "mounted");
    let err = refused_unchanged(&under.path, Some(&under.path), "mounted");
    assert!(
        err.contains(on.path.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    drop(mount);
    // Not mounted: in use, which --destroy-data naming the device overrides.
    refused_unchanged(&under.path, None, "in use by");
    let out = small_write(&under.path, Some(&under.path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_loop_device_on_the_same_file_as_a_mounted_one_is_refused_even_with_destroy_data() {
    if let Some(why) = skip_reason(&[], Some("ext4")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let first = LoopDevice::new(64 << 20).unwrap();
    mkfs_ext4(&first.path);
    let mount = Mount::existing(&first.path, "ext4", &["ro"]).unwrap();
    let second = AttachedLoop::new(&[first.backing_file().to_str().unwrap()]).unwrap();
    refused_unchanged(&second.path, Some(&second.path), "mounted");
    drop(mount);
    let err = refused_unchanged(&second.path, None, "in use by");
    assert!(err.contains("same file"), "{err}");
}

#[test]
fn the_backing_file_of_a_loop_device_is_refused_even_with_overwrite() {
    if let Some(why) = skip_reason(&[], Some("ext4")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(64 << 20).unwrap();
    mkfs_ext4(&dev.path);
    let file = dev.backing_file().to_path_buf();
    let write_file = || {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "run",
            "--access",
            "randwrite",
            "--ios-limit",
            "10",
            "--overwrite",
            "--json",
            "-",
        ];
        let before = iolab_testkit::checksum(&file).unwrap();
        let out = common::iolab_cmd(&args, dir.path())
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert_eq!(
            iolab_testkit::checksum(&file).unwrap(),
            before,
            "the file was written"
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let mount = Mount::existing(&dev.path, "ext4", &["ro"]).unwrap();
    let err = write_file();
    let name = dev.path.display().to_string();
    assert!(err.contains(&format!("{name} (mounted at")), "{err}");
    drop(mount);
    // Bound but not mounted: still the device's data.
    let err = write_file();
    assert!(err.contains(&name) && err.contains("losetup -d"), "{err}");
}

#[test]
fn a_loop_device_on_a_mounted_device_is_refused_even_with_destroy_data() {
    if let Some(why) = skip_reason(&[], Some("ext4")) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let under = LoopDevice::new(64 << 20).unwrap();
    mkfs_ext4(&under.path);
    let mount = Mount::existing(&under.path, "ext4", &["ro"]).unwrap();
    let on = AttachedLoop::new(&[under.path.to_str().unwrap()]).unwrap();
    refused_unchanged(&on.path, Some(&on.path), "mounted");
    drop(mount);
}

/// Runs `sh -c SCRIPT` with `$DEV` set to `dev`.
fn sh(script: &str, dev: &Path) -> Result<String, String> {
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .env("DEV", dev)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn signatures_made_by_the_real_tools_are_refused() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("a"), b"hi").unwrap();
    let src = src.path().to_str().unwrap().to_string();
    // (tool, script making the signature on $DEV, what the refusal names)
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "mksquashfs",
            format!("mksquashfs {src} $DEV -noappend -quiet"),
            "squashfs",
        ),
        ("mkfs.erofs", format!("mkfs.erofs $DEV {src}"), "EROFS"),
        ("mkfs.jfs", "mkfs.jfs -q $DEV".into(), "JFS"),
        (
            "mkfs.reiserfs",
            "mkfs.reiserfs -q -f $DEV".into(),
            "ReiserFS",
        ),
        (
            "mkfs.nilfs2",
            "mkfs.nilfs2 -q -f -B 16 $DEV".into(),
            "NILFS2",
        ),
        ("mkudffs", "mkudffs --bootarea=erase $DEV".into(), "UDF"),
        (
            "pvcreate",
            "pvcreate -ff -y -q --labelsector 2 $DEV".into(),
            "LVM",
        ),
        ("mkswap", "mkswap -p 16384 $DEV".into(), "swap"),
        ("mkswap", "mkswap -p 65536 $DEV".into(), "swap"),
        (
            "mkswap",
            "mkswap $DEV && printf S1SUSPEND | dd of=$DEV bs=1 seek=4086 conv=notrunc".into(),
            "hibernation",
        ),
        (
            "cryptsetup",
            "printf pw | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
             --pbkdf-force-iterations 1000 $DEV - \
             && dd if=/dev/zero of=$DEV bs=16k count=1 conv=notrunc"
                .into(),
            "LUKS2",
        ),
        (
            "sgdisk",
            "sgdisk -o $DEV && dd if=/dev/zero of=$DEV bs=512 count=34 conv=notrunc".into(),
            "GPT partition table (backup header)",
        ),
    ];
    for (tool, script, expect) in cases {
        if !which(tool) {
            println!("skipped {expect}: {tool} not installed");
            continue;
        }
        let dev = LoopDevice::new(64 << 20).unwrap();
        if let Err(e) = sh(&script, &dev.path) {
            println!("skipped {expect}: {script}: {e}");
            continue;
        }
        refused_unchanged(&dev.path, None, expect);
    }
}

/// Active swap on a block device, switched off on drop (by the loop device's own node, which
/// names the same device).
struct SwapOn {
    dev: PathBuf,
}

impl Drop for SwapOn {
    fn drop(&mut self) {
        if let Err(e) = run("swapoff", &[self.dev.to_str().unwrap()]) {
            eprintln!("cleanup: {e}");
        }
    }
}

#[test]
fn active_swap_whose_device_node_is_gone_is_refused_even_with_destroy_data() {
    if let Some(why) = loop_skip_reason().or_else(|| {
        ["mkswap", "swapon", "swapoff", "mknod"]
            .iter()
            .find(|t| !which(t))
            .map(|t| format!("{t} not installed"))
    }) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(64 << 20).unwrap();
    run("mkswap", &["-q", dev.path.to_str().unwrap()]).unwrap();
    // swapon through a second node of the same device, then delete that node: /proc/swaps
    // lists "…/node\040(deleted)", which resolves to no device.
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(&dev.path).unwrap().rdev();
    let (major, minor) = (
        iolab_engine::guard::major(rdev),
        iolab_engine::guard::minor(rdev),
    );
    let nodes = tempfile::tempdir().unwrap();
    let node = nodes.path().join("swapdev");
    let node_s = node.to_str().unwrap();
    run(
        "mknod",
        &[
            "-m",
            "600",
            node_s,
            "b",
            &major.to_string(),
            &minor.to_string(),
        ],
    )
    .unwrap();
    if let Err(e) = run("swapon", &[node_s]) {
        println!("skipped: swapon refused here: {e}");
        return;
    }
    let swap = SwapOn {
        dev: dev.path.clone(),
    };
    std::fs::remove_file(&node).unwrap();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
    assert!(swaps.contains("(deleted)"), "{swaps}");
    let err = refused_unchanged(&dev.path, Some(&dev.path), "swap");
    assert!(err.contains("swapoff"), "{err}");
    drop(swap);
}

/// An active swap file, switched off on drop.
struct SwapFileOn {
    path: PathBuf,
}

impl Drop for SwapFileOn {
    fn drop(&mut self) {
        if let Err(e) = run("swapoff", &[self.path.to_str().unwrap()]) {
            eprintln!("cleanup: {e}");
        }
    }
}

#[test]
fn an_active_swap_file_is_refused_before_any_io_even_with_overwrite() {
    if let Some(why) = (!iolab_testkit::is_root())
        .then(|| "not root (swapon needs root)".to_string())
        .or_else(|| {
            ["mkswap", "swapon", "swapoff"]
                .iter()
                .find(|t| !which(t))
                .map(|t| format!("{t} not installed"))
        })
    {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("swapfile");
    // swapon takes no file with holes: every byte written.
    std::fs::write(&file, vec![0u8; 16 << 20]).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    run("mkswap", &["-q", file.to_str().unwrap()]).unwrap();
    if let Err(e) = run("swapon", &[file.to_str().unwrap()]) {
        println!("skipped: swapon refused here: {e}");
        return;
    }
    let swap = SwapFileOn { path: file.clone() };
    let before = iolab_testkit::checksum(&file).unwrap();
    // quick reads first: the refusal must come before them, not at its first write. Named
    // through a relative path, which /proc/swaps does not list.
    let out = common::iolab(
        &[
            "quick",
            "./swapfile",
            "--overwrite",
            "--size",
            "4m",
            "--count",
            "1",
            "--duration",
            "0.2",
            "--warmup",
            "0",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to write")
            && err.contains("active swap")
            && err.contains(&format!("swapoff {}", file.display())),
        "{err}"
    );
    assert!(!text(&out).contains("SEQ1M"), "{}", text(&out));
    let out = common::iolab(
        &[
            "run",
            "--access",
            "randwrite",
            "--ios-limit",
            "10",
            "--overwrite",
            "--json",
            "-",
            file.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("active swap"), "{}", text(&out));
    // Without --overwrite: the same refusal, not a request for --overwrite that would only
    // lead to it.
    let out = common::small_write(&file, None, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("active swap") && !text(&out).contains("Pass --overwrite"),
        "{}",
        text(&out)
    );
    drop(swap);
    assert_eq!(
        iolab_testkit::checksum(&file).unwrap(),
        before,
        "the swap file was written"
    );
}

#[test]
fn destroy_data_naming_another_device_than_the_target_says_it_does_not_apply() {
    if let Some(why) = skip_reason(&["mkfs.ext4"], None) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let ext4 = LoopDevice::new(32 << 20).unwrap();
    mkfs_ext4(&ext4.path);
    let other = LoopDevice::new(16 << 20).unwrap();
    let blank = LoopDevice::new(16 << 20).unwrap();
    let says = format!(
        "--destroy-data={} names another device than the target",
        other.path.display()
    );
    // Refused, saying the flag named another device, and not one byte written.
    let refused = |dev: &Path| {
        let before = iolab_testkit::checksum(dev).unwrap();
        let out = small_write(dev, Some(&other.path));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert_eq!(iolab_testkit::checksum(dev).unwrap(), before, "written");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains(&says)
                && err.contains("does not apply")
                && err.contains(&format!("--destroy-data={}", dev.display())),
            "{err}"
        );
    };
    // Holding data, which the flag was perhaps meant to give up.
    refused(&ext4.path);
    // Blank, so nothing to override: refused all the same, as a mistake.
    refused(&blank.path);
    // A file target: the flag names a device, and a file is none.
    let dir = tempfile::tempdir().unwrap();
    let out = common::iolab(
        &[
            "run",
            "--access",
            "randwrite",
            "--size",
            "1m",
            "--ios-limit",
            "10",
            "--json",
            "-",
            &format!("--destroy-data={}", other.path.display()),
            "test.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("does not apply"), "{}", text(&out));
    assert!(
        !dir.path().join("test.bin").exists(),
        "a test file was made"
    );
    // Named the target: the write goes ahead.
    let out = small_write(&ext4.path, Some(&ext4.path));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
