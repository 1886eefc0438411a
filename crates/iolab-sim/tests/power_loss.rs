//! `--power-loss-at` on the model: a drive without power-loss protection loses the acknowledged
//! writes still in its DRAM write buffer; one with protection loses none.

use iolab_core::job::JobSpec;
use iolab_core::result::VerifySummary;

fn cut(spec: &str, after_s: f64) -> VerifySummary {
    let mut sim = iolab_sim::open(spec, None).unwrap();
    sim.set_power_loss_at(after_s).unwrap();
    let job = JobSpec::from_toml(
        "access = \"randwrite\"\nqueue_depth = 32\nsize = \"1g\"\nduration_s = 5\nverify = \"end\"",
        "test.toml",
    )
    .unwrap()
    .validate()
    .unwrap();
    let run = sim.run_job(&job, None).unwrap();
    // The cut ends the job: nothing is measured after it.
    assert!(
        run.result.measured_ns <= (after_s * 1e9) as u64,
        "{}",
        run.result.measured_ns
    );
    run.result.verify.expect("a verify summary")
}

#[test]
fn a_drive_without_protection_loses_its_write_buffer_and_one_with_it_nothing() {
    let without = cut("sim:nvme2018-500@x470/cpu-m2a", 0.5);
    assert!(
        without.mode.contains("without power-loss protection"),
        "{}",
        without.mode
    );
    assert!(without.blocks_checked > 10_000, "{without:?}");
    assert!(without.unflushed_lost > 0, "{without:?}");
    // Lost, but within what a drive with a volatile cache may do: not failures.
    assert_eq!(without.failures, 0);
    let with = cut("sim:ssd750-400@z97/cpu", 0.5);
    assert!(
        with.mode.contains("with power-loss protection"),
        "{}",
        with.mode
    );
    assert!(with.blocks_checked > 10_000, "{with:?}");
    assert_eq!((with.unflushed_lost, with.failures), (0, 0), "{with:?}");
}

#[test]
fn a_hard_disk_is_refused_with_the_reason() {
    let mut sim = iolab_sim::open("sim:hdd-7200@x58/ich10", None).unwrap();
    let e = sim.set_power_loss_at(1.0).unwrap_err();
    assert!(e.contains("hard disk"), "{e}");
}
