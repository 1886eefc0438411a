//! The kit on real loop, zram and tmpfs devices (root only; skipped elsewhere).

use iolab_testkit::*;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A 4 KiB-aligned buffer, for O_DIRECT.
fn aligned_block(fill: u8) -> (Vec<u8>, usize) {
    let v = vec![fill; 8192 + 4096];
    let off = v.as_ptr().align_offset(4096);
    (v, off)
}

fn direct_write_read(dev: &Path, offset: u64, fill: u8) {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev)
        .expect("O_DIRECT open");
    let (mut v, off) = aligned_block(fill);
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&v[off..off + 4096]).expect("O_DIRECT write");
    v[off..off + 4096].fill(0);
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.read_exact(&mut v[off..off + 4096])
        .expect("O_DIRECT read");
    assert!(v[off..off + 4096].iter().all(|&b| b == fill));
}

#[test]
fn loop_device_direct_io_counters_and_checksum() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(16 << 20).expect("a loop device");
    let name = dev.name();
    assert!(name.starts_with("loop"), "{name}");
    assert_eq!(dev.path, Path::new("/dev").join(&name));
    assert_eq!(dev.backing_file().metadata().unwrap().len(), 16 << 20);
    println!(
        "{} over {} (dio {})",
        dev.path.display(),
        dev.backing_file().display(),
        dev.direct_io()
    );

    let sum0 = checksum(&dev.path).unwrap();
    assert_eq!(sum0, checksum(&dev.path).unwrap());
    let before = BlockStat::read(&name).unwrap();
    direct_write_read(&dev.path, 1 << 20, 0xa5);
    let d = BlockStat::read(&name).unwrap().since(&before);
    assert!(d.write_ios >= 1 && d.write_bytes() >= 4096, "{d:?}");
    assert!(d.read_ios >= 1 && d.read_bytes() >= 4096, "{d:?}");
    assert_ne!(checksum(&dev.path).unwrap(), sum0);
    // The data went to the backing file.
    assert_eq!(
        checksum(dev.backing_file()).unwrap(),
        checksum(&dev.path).unwrap()
    );

    let backing = dev.backing_file().to_path_buf();
    drop(dev);
    assert!(!backing.exists(), "backing file removed");
    let bound = run("losetup", &["-j", backing.to_str().unwrap()]).unwrap_or_default();
    assert!(bound.is_empty(), "still attached: {bound}");
}

#[test]
fn loop_device_with_discards_off_is_recreated_clean() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let mut dev = LoopDevice::new(8 << 20).expect("a loop device");
    let name = dev.name();
    let knob = format!("/sys/block/{name}/queue/discard_max_bytes");
    dev.disable_discards().unwrap();
    assert_eq!(std::fs::read_to_string(&knob).unwrap().trim(), "0");
    drop(dev);
    // Re-created: a fresh device of that number attaches with discards on again.
    let again = LoopDevice::new(8 << 20).unwrap();
    if again.name() == name {
        assert_ne!(std::fs::read_to_string(&knob).unwrap().trim(), "0");
    }
}

#[test]
fn ext4_and_tmpfs_mounts() {
    if let Some(why) = loop_skip_reason().or_else(mount_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(32 << 20).unwrap();
    let fs = Mount::ext4(&dev.path).unwrap();
    std::fs::write(fs.dir.join("x"), b"hello").unwrap();
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(mounts.contains(&format!("{} {} ext4", dev.path.display(), fs.dir.display())));
    let dir = fs.dir.clone();
    // Busy: a file left open forces the lazy unmount.
    let _open = std::fs::File::open(dir.join("x")).unwrap();
    drop(fs);
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(!mounts.contains(dir.to_str().unwrap()));
    drop(_open);
    drop(dev);

    let t = Mount::tmpfs(4 << 20).unwrap();
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(mounts.contains(&format!("iolab-testkit {} tmpfs", t.dir.display())));
    assert!(Mount::tmpfs(0).is_err());
    // A loop device whose backing file lives on the tmpfs.
    let dev = LoopDevice::new_in(&t.dir, 4 << 20).unwrap();
    assert!(dev.backing_file().starts_with(&t.dir));
    drop(dev);
    let dir = t.dir.clone();
    drop(t);
    assert!(!dir.exists());
}

#[test]
fn zram_device() {
    if let Some(why) = zram_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let z = Zram::new(8 << 20).expect("a zram device");
    let name = z.name();
    assert_eq!(z.path, Path::new("/dev").join(&name));
    let size = std::fs::read_to_string(format!("/sys/block/{name}/disksize")).unwrap();
    assert_eq!(size.trim(), (8u64 << 20).to_string());
    let before = BlockStat::read(&name).unwrap();
    direct_write_read(&z.path, 0, 0x3c);
    assert!(BlockStat::read(&name).unwrap().since(&before).write_ios >= 1);
    drop(z);
    // Reset or hot-removed. (Not asserted on: a process that ignores the lock may hot_add the
    // same number right away.)
    let size = std::fs::read_to_string(format!("/sys/block/{name}/disksize")).unwrap_or_default();
    println!("{name} after drop: disksize {:?}", size.trim());
}

#[test]
fn bad_sizes_are_errors_not_panics() {
    assert!(Zram::new(0).is_err());
    if loop_skip_reason().is_none() {
        assert!(LoopDevice::new(0).is_err());
        assert!(LoopDevice::new(1000).is_err());
    }
}

#[test]
fn run_reports_failures() {
    assert_eq!(run("echo", &["  hi  "]).unwrap(), "hi");
    let e = run("sh", &["-c", "echo oops >&2; exit 3"]).unwrap_err();
    assert!(e.starts_with("sh ") && e.ends_with("oops"), "{e}");
    assert!(run("iolab-no-such-tool", &[]).is_err());
    assert!(which("sh"));
    assert!(!which("iolab-no-such-tool"));
}
