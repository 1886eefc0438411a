//! A purge destroys the whole target, so it makes the write checks itself, whatever job the
//! target was opened for.

use iolab_core::job::{Access, JobSpec};
use iolab_engine::open::{prepare_target, EngineChoice, WritePolicy};

#[test]
fn a_target_opened_for_reads_is_not_purged_unless_it_may_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("user.bin");
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let mut reads = JobSpec {
        access: Some(Access::Read),
        ..JobSpec::default()
    }
    .validate()
    .unwrap();
    let keep = WritePolicy {
        destroy_data: None,
        overwrite: false,
    };
    let target = prepare_target(&path, &mut reads, &keep, EngineChoice::Psync, None).unwrap();
    let refused = target.purge(&keep).unwrap_err();
    assert!(refused.contains("--overwrite"), "{refused}");
    assert_eq!(std::fs::read(&path).unwrap(), data);
    // Offered with --overwrite, it is emptied.
    let offered = WritePolicy {
        overwrite: true,
        ..keep
    };
    target.purge(&offered).unwrap();
    assert!(std::fs::read(&path).unwrap().iter().all(|&b| b == 0));
}
