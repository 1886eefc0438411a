//! trimcheck and probe on loop devices this test builds and removes.
//!
//! * WORKING: ext4 on a loop device over a sparse file. The loop driver turns discards into
//!   hole punches in the backing file, so the trimmed block reads back as zeroes.
//! * NOT WORKING: the same, with `queue/discard_max_bytes` set to 0 on the loop device (the knob
//!   udev rules use to turn discards off for a misbehaving drive). The block layer then reports
//!   no discard support, FITRIM fails with EOPNOTSUPP, and the deleted block really stays on the
//!   device — the "TRIM does not reach the drive" case of a stack that drops discards (like
//!   dm-crypt without `allow_discards`). `LoopDevice::disable_discards` re-creates the device on
//!   drop, because the kernel keeps that limit after detaching.
//! * tmpfs: a refusal, with the reason, and nothing written.
//!
//! One test function, holding the machine lock, because loop devices are a machine-wide
//! resource that other test suites use too. Everything is torn down by the kit's Drop guards,
//! even on failure (each `Mount` is declared after, so dropped before, its `LoopDevice`).

use iolab_probe::{probe, trimcheck, DeviceKind, TrimError, TrimOptions, Verdict};
use iolab_testkit::{
    checksum, loop_skip_reason, mount_skip_reason, zram_skip_reason, BlockStat, LoopDevice,
    MachineLock, Mount, Zram,
};
use std::fs;
use std::time::Duration;

#[test]
fn loop_devices_probe_and_trimcheck() {
    if let Some(why) = loop_skip_reason().or_else(mount_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let opts = TrimOptions::default();

    // Probe and WORKING.
    let dev = LoopDevice::new(256 << 20).expect("a loop device");
    let m = Mount::ext4(&dev.path).expect("ext4 on the loop device");
    let p = probe(&dev.path).unwrap();
    println!("{}", p.render_text());
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Loop);
    assert_eq!(d.name, dev.name());
    assert_eq!(d.capacity_bytes, Some(256 << 20));
    assert_eq!(d.logical_block_bytes, Some(512));
    assert!(d.rotational.is_some());
    let virt = d.virt.as_ref().unwrap();
    assert_eq!(
        virt.backing_file.as_deref(),
        dev.backing_file().to_str(),
        "the loop device's backing file"
    );
    assert_eq!(virt.direct_io, Some(dev.direct_io()));
    assert_eq!(d.discard.supported, Some(true));
    assert!(d.discard.granularity_bytes.is_some_and(|g| g > 0));
    assert!(p.ceiling.is_none() && p.pci_path.is_empty());
    assert!(p.ceiling_bytes_per_s().is_none());
    assert!(p.findings.iter().any(|f| f.code == "virtual_device"));
    assert_eq!(p.filesystem.as_ref().unwrap().fs_type, "ext4");
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["disk"]["kind"], "loop");
    assert_eq!(json["disk"]["capacity_bytes"], 256u64 << 20);
    let pf = probe(&m.dir).unwrap();
    assert_eq!(
        pf.filesystem.as_ref().unwrap().mount_point,
        m.dir.canonicalize().unwrap()
    );
    assert_eq!(pf.disk.as_ref().unwrap().name, d.name);
    println!("summary: {}", pf.summary());
    assert!(pf.summary().contains(&d.name) && pf.summary().contains("loop"));

    let before = BlockStat::read(&dev.name()).unwrap();
    let r = trimcheck(&m.dir, &opts).expect("trimcheck runs on ext4/loop");
    println!("{r:#?}");
    assert_eq!(r.verdict, Verdict::Working, "{}", r.reason);
    assert_eq!(r.device, dev.path);
    assert!(r.fitrim_trimmed_bytes.unwrap_or(0) > 0);
    assert_eq!(
        r.readings.len(),
        1,
        "no second reading when the first is conclusive"
    );
    let written = BlockStat::read(&dev.name()).unwrap().since(&before);
    assert!(
        written.write_bytes() >= r.block_bytes,
        "the block reached the device: {written:?}"
    );
    assert!(fs::read_dir(&m.dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".iolab-trimcheck")));
    drop(m);
    drop(dev);

    // NOT WORKING: discards dropped by the device's queue.
    let mut dev = LoopDevice::new(256 << 20).expect("a loop device");
    dev.disable_discards().expect("turning discards off");
    let m = Mount::ext4(&dev.path).expect("ext4 on a loop device without discard");
    let p = probe(&m.dir).unwrap();
    assert_eq!(p.disk.as_ref().unwrap().discard.supported, Some(false));
    assert!(p.findings.iter().any(|f| f.code.contains("discard")));
    let r = trimcheck(
        &m.dir,
        &TrimOptions {
            wait: Some(Duration::from_secs(1)),
            ..opts.clone()
        },
    )
    .expect("trimcheck runs");
    println!("{r:#?}");
    assert_eq!(r.verdict, Verdict::NotWorking, "{}", r.reason);
    assert!(r.fitrim_error.is_some());
    assert_eq!(r.readings.len(), 2, "waited and read again");
    assert!(r.readings[1].after_s >= 1.0);
    assert!(r.notes.iter().any(|n| n.contains("no discard support")));
    drop(m);
    drop(dev);

    // tmpfs: refused before anything is written.
    let m = Mount::tmpfs(16 << 20).expect("a tmpfs");
    match trimcheck(&m.dir, &opts) {
        Err(TrimError::Unsupported { reason, .. }) => {
            println!("tmpfs refusal: {reason}");
            assert!(reason.contains("memory-backed"), "{reason}");
        }
        other => panic!("expected a refusal on tmpfs, got {other:?}"),
    }
    assert_eq!(fs::read_dir(&m.dir).unwrap().count(), 0);
    drop(m);

    // A raw block device is not a filesystem path: refused, and the device left untouched.
    let dev = LoopDevice::new(16 << 20).expect("a loop device");
    let sum = checksum(&dev.path).unwrap();
    let e = trimcheck(&dev.path, &opts).expect_err("trimcheck of a block device");
    println!("block device refusal: {e}");
    assert!(matches!(e, TrimError::Unsupported { .. }), "{e:?}");
    assert!(e.to_string().contains("is a block device"), "{e}");
    assert_eq!(checksum(&dev.path).unwrap(), sum);
}

/// ext4 on zram passes discards (zram frees the pages): WORKING. And bad input around it.
#[test]
fn zram_trimcheck_and_bad_input() {
    if let Some(why) = zram_skip_reason().or_else(mount_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let z = Zram::new(128 << 20).expect("a zram device");
    let m = Mount::ext4(&z.path).expect("ext4 on zram");
    let opts = TrimOptions {
        padding_bytes: 4 << 20,
        ..TrimOptions::default()
    };
    let r = trimcheck(&m.dir, &opts).expect("trimcheck runs on ext4/zram");
    println!("{r:#?}");
    assert_eq!(r.verdict, Verdict::Working, "{}", r.reason);
    assert_eq!(r.device, z.path);

    // A path that does not exist is an error, not a test in its parent directory.
    let e = trimcheck(&m.dir.join("no-such-dir"), &opts).unwrap_err();
    assert!(e.to_string().contains("No such file"), "{e}");
    // Sizes that cannot work are refused before anything is written.
    for bad in [
        TrimOptions {
            padding_bytes: 1000,
            ..opts.clone()
        },
        TrimOptions {
            block_bytes: Some(0),
            ..opts.clone()
        },
        TrimOptions {
            padding_bytes: 1 << 40,
            ..opts.clone()
        },
        TrimOptions {
            padding_bytes: u64::MAX - 4095,
            ..opts.clone()
        },
    ] {
        match trimcheck(&m.dir, &bad) {
            Err(TrimError::Unsupported { reason, .. }) => println!("refused: {reason}"),
            other => panic!("expected a refusal for {bad:?}, got {other:?}"),
        }
    }
    let left: Vec<_> = fs::read_dir(&m.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "lost+found")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
