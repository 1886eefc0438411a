//! Probes of this machine's real devices: the temp directory's disk and a zram device the test
//! configures and resets. The probe itself only reads sysfs and procfs.

use iolab_probe::{probe, DeviceKind, TargetKind};
use iolab_testkit::{zram_skip_reason, MachineLock, Zram};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn temp_dir_disk() {
    let dir = tempfile::tempdir().unwrap();
    // Cheap enough to run next to every result: best of three, so a busy machine does not fail it.
    let mut took = Duration::MAX;
    for _ in 0..3 {
        let t0 = Instant::now();
        let _ = probe(dir.path()).unwrap();
        took = took.min(t0.elapsed());
    }
    assert!(took.as_millis() < 50, "probe took {took:?}");
    let p = probe(dir.path()).unwrap();
    assert_eq!(p.target_kind, TargetKind::Directory);
    let fs = p.filesystem.as_ref().expect("a filesystem");
    assert!(dir
        .path()
        .canonicalize()
        .unwrap()
        .starts_with(&fs.mount_point));
    match &p.disk {
        Some(d) => {
            assert!(!d.name.is_empty());
            assert!(d.dev.contains(':'));
            assert!(d.capacity_bytes.unwrap_or(0) > 0);
            assert!(d.logical_block_bytes.is_some_and(|b| b >= 512));
            assert!(d.physical_block_bytes.is_some_and(|b| b >= 512));
            assert!(d.rotational.is_some());
            assert!(d.discard.supported.is_some());
            if d.kind == DeviceKind::Virtio {
                assert!(p.ceiling.is_none());
                assert!(
                    p.controller.is_some(),
                    "virtio-blk hangs off a PCI function"
                );
                assert!(p.findings.iter().any(|f| f.code == "virtual_device"));
            }
            println!("{}", p.render_text());
        }
        None => println!("skipped disk checks: {} has no block device", fs.fs_type),
    }
    // A file that does not exist yet probes like its directory.
    let later = probe(&dir.path().join("result-to-be.json")).unwrap();
    assert_eq!(later.target_kind, TargetKind::File);
    assert_eq!(later.disk.map(|d| d.dev), p.disk.map(|d| d.dev));
}

#[test]
fn zram_device() {
    if let Some(why) = zram_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let z = Zram::new(64 << 20).expect("a zram device");
    let p = probe(&z.path).unwrap();
    println!("{}", p.render_text());
    assert_eq!(p.target_kind, TargetKind::BlockDevice);
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Zram);
    assert_eq!(d.name, z.name());
    assert!(d.kind.is_virtual());
    assert_eq!(d.capacity_bytes, Some(64 << 20));
    assert_eq!(d.logical_block_bytes, Some(4096));
    assert!(d.virt.as_ref().unwrap().compression.is_some());
    assert_eq!(d.rotational, Some(false));
    assert!(p.pci_path.is_empty() && p.controller.is_none());
    assert!(p.ceiling_bytes_per_s().is_none());
    assert!(p.findings.iter().any(|f| f.code == "virtual_device"));
    assert!(p.summary().contains("zram"));
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["disk"]["kind"], "zram");
    assert!(json["disk"]["virt"]["compression"].is_string());
}

#[test]
fn not_storage_is_an_error() {
    let e = probe(Path::new("/dev/null")).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
}
