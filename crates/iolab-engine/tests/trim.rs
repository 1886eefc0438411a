//! TRIM jobs on real targets: a file gets holes punched (its size kept), a block device a
//! discard, on both engines; the guard treats a TRIM job as one that destroys data.

use iolab_core::job::{Job, JobSpec};
use iolab_engine::open::{prepare_target, EngineChoice, OpenError, WritePolicy};
use iolab_engine::runner::{run_job, RunControl};
use iolab_testkit::{loop_skip_reason, LoopDevice};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const MIB: usize = 1 << 20;

fn job(toml: &str) -> Job {
    JobSpec::from_toml(toml, "trim.toml")
        .unwrap()
        .validate()
        .unwrap()
}

/// Content with no zero byte, so a zeroed range stands out.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 + 1).collect()
}

fn offered(path: &Path) -> WritePolicy {
    WritePolicy {
        destroy_data: Some(path.to_path_buf()),
        overwrite: true,
    }
}

/// Runs `toml` on `path` with `engine`; returns the TRIMs' and writes' I/O counts.
fn run(path: &Path, toml: &str, engine: EngineChoice) -> (u64, u64) {
    let mut j = job(toml);
    let target = prepare_target(path, &mut j, &offered(path), engine, None).unwrap();
    let r = run_job(&target, &j, RunControl::default()).unwrap().result;
    assert!(r.complete, "{:?}", r.stop_reason);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.read.ios, 0);
    (r.trim.map_or(0, |t| t.ios), r.write.ios)
}

#[test]
fn a_trim_job_punches_holes_in_a_file_and_keeps_its_size() {
    for engine in [EngineChoice::Uring, EngineChoice::Psync] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        let data = pattern(MIB);
        std::fs::write(&path, &data).unwrap();
        let before = std::fs::metadata(&path).unwrap().blocks();
        // 64 random TRIMs of 4 KiB, one pass over [256k, 512k).
        let (trims, writes) = run(
            &path,
            "access = \"randtrim\"\noffset = \"256k\"\nsize = \"256k\"",
            engine,
        );
        assert_eq!((trims, writes), (64, 0), "{engine:?}");
        let after = std::fs::read(&path).unwrap();
        assert_eq!(after.len(), MIB, "{engine:?}: the size is kept");
        assert!(after[256 << 10..512 << 10].iter().all(|&b| b == 0));
        assert_eq!(after[..256 << 10], data[..256 << 10], "before the range");
        assert_eq!(after[512 << 10..], data[512 << 10..], "after the range");
        let freed = before - std::fs::metadata(&path).unwrap().blocks();
        assert!(
            freed * 512 >= 256 << 10,
            "{engine:?}: {freed} sectors freed"
        );
    }
}

#[test]
fn trimwrite_writes_each_trimmed_range_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.bin");
    std::fs::write(&path, vec![0u8; MIB]).unwrap();
    let (trims, writes) = run(
        &path,
        "access = \"trimwrite\"\nsize = \"512k\"\nblock_size = \"64k\"",
        EngineChoice::Uring,
    );
    // One pass: the budget counts the writes, so every block is trimmed and written once.
    assert_eq!((trims, writes), (8, 8));
    let after = std::fs::read(&path).unwrap();
    assert!(after[..512 << 10]
        .chunks(4096)
        .all(|c| c.iter().any(|&b| b != 0)));
    assert!(after[512 << 10..].iter().all(|&b| b == 0));
}

#[test]
fn a_trim_job_on_a_file_iolab_did_not_make_needs_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("user.bin");
    let data = pattern(MIB);
    std::fs::write(&path, &data).unwrap();
    let mut j = job("access = \"trim\"");
    let keep = WritePolicy::default();
    let e = prepare_target(&path, &mut j, &keep, EngineChoice::Psync, None).unwrap_err();
    assert!(matches!(e, OpenError::NotOurs(_)), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[test]
fn a_trim_job_discards_a_loop_device_on_both_engines() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    for engine in [EngineChoice::Uring, EngineChoice::Psync] {
        let dev = LoopDevice::new(4 * MIB as u64).unwrap();
        std::fs::write(&dev.path, pattern(4 * MIB)).unwrap();
        let (trims, writes) = run(
            &dev.path,
            "access = \"trim\"\noffset = \"1m\"\nsize = \"1m\"\nblock_size = \"128k\"",
            engine,
        );
        assert_eq!((trims, writes), (8, 0), "{engine:?}");
        let after = std::fs::read(&dev.path).unwrap();
        let data = pattern(4 * MIB);
        assert!(
            after[MIB..2 * MIB].iter().all(|&b| b == 0),
            "{engine:?}: the discarded range reads back as zeros"
        );
        assert_eq!(after[..MIB], data[..MIB]);
        assert_eq!(after[2 * MIB..], data[2 * MIB..]);
    }
}

#[test]
fn the_guard_refuses_a_trim_job_on_a_device_with_a_filesystem() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let dev = LoopDevice::new(4 * MIB as u64).unwrap();
    let mut image = pattern(4 * MIB);
    image[..4].copy_from_slice(b"XFSB");
    std::fs::write(&dev.path, &image).unwrap();
    let mut j = job("access = \"randtrim\"");
    let keep = WritePolicy::default();
    let e = prepare_target(&dev.path, &mut j, &keep, EngineChoice::Psync, None).unwrap_err();
    assert!(matches!(e, OpenError::Guard(_)), "{e}");
    assert!(e.to_string().contains("XFS"), "{e}");
    assert_eq!(std::fs::read(&dev.path).unwrap(), image, "nothing trimmed");
}

#[test]
fn a_device_without_discard_is_refused_with_the_reason() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let mut dev = LoopDevice::new(4 * MIB as u64).unwrap();
    dev.disable_discards().unwrap();
    let mut j = job("access = \"trim\"");
    let e = prepare_target(
        &dev.path,
        &mut j,
        &offered(&dev.path),
        EngineChoice::Auto,
        None,
    )
    .unwrap_err();
    assert!(matches!(e, OpenError::NoDiscard(_)), "{e}");
    assert!(e.to_string().contains("does not support discard"), "{e}");
}
