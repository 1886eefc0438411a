//! Probes of this machine's real devices: the temp directory's disk and a zram device. Read-only
//! (sysfs and procfs; no device is opened).

use iolab_probe::{probe, DeviceKind, TargetKind};
use std::path::Path;
use std::time::Instant;

#[test]
fn temp_dir_disk() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let p = probe(dir.path()).unwrap();
    let took = t0.elapsed();
    assert!(took.as_millis() < 50, "probe took {took:?}");
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
    let Some(dev) = (0..8)
        .map(|i| format!("/dev/zram{i}"))
        .find(|p| Path::new(p).exists())
    else {
        println!("skipped: no /dev/zram* on this machine");
        return;
    };
    let p = probe(Path::new(&dev)).unwrap();
    assert_eq!(p.target_kind, TargetKind::BlockDevice);
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Zram);
    assert!(d.kind.is_virtual());
    assert!(d.virt.as_ref().unwrap().compression.is_some());
    assert_eq!(d.rotational, Some(false));
    assert!(p.pci_path.is_empty());
    assert!(p.ceiling_bytes_per_s().is_none());
    assert!(p.summary().contains("zram"));
}

#[test]
fn not_storage_is_an_error() {
    let e = probe(Path::new("/dev/null")).unwrap_err();
    assert!(e.to_string().contains("character device"), "{e}");
}
