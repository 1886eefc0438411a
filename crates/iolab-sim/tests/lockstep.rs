//! A NAND array driven in lockstep (`nand.lockstep`, the SF-2281's): each operation takes the
//! die at one position on every channel, so the dies work as ways and random reads scale with
//! the ways, not the dies.

use iolab_core::job::{Job, JobSpec};
use iolab_sim::catalog::Catalog;
use iolab_sim::open_with;

fn job(text: &str) -> Job {
    toml::from_str::<JobSpec>(text).unwrap().validate().unwrap()
}

/// 4 KiB random-read IOPS of `drive` on H67's SATA port at `qd`, over 1 GB of written data.
fn rand_read_iops(cat: &Catalog, drive: &str, qd: u32) -> f64 {
    let mut sim = open_with(&format!("sim:{drive}@h67/sata"), cat.clone()).unwrap();
    sim.precondition_fill();
    let j = job(&format!(
        "access = \"randread\"\nblock_size = \"4k\"\nqueue_depth = {qd}\nsize = \"1g\"\nduration_s = 0.05\nseed = 3"
    ));
    sim.run_job(&j, None).unwrap().result.read.iops
}

/// The catalog with `drive` also as `<drive>-dies`, its dies working each on its own.
fn with_independent_dies(drive: &str) -> Catalog {
    let mut cat = Catalog::load(None).unwrap();
    let path = format!(
        "{}/../../catalog/drives/{drive}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.contains("lockstep = true"),
        "{drive} is a lockstep drive"
    );
    let dies = text
        .replace(
            &format!("name = \"{drive}\""),
            &format!("name = \"{drive}-dies\""),
        )
        .replace("lockstep = true", "lockstep = false");
    cat.add_drive(&format!("user/drives/{drive}-dies.toml"), &dies)
        .unwrap();
    cat
}

#[test]
fn a_lockstep_array_reads_at_random_one_way_at_a_time() {
    let cat = with_independent_dies("forcegt-120");
    // 16 dies on 8 channels are 2 ways; a read holds its way for a tR, a lower page's at the
    // fastest (57 us around the L74A's typical 75), so 2 ways read at most 2 / 57 us.
    let ways = rand_read_iops(&cat, "forcegt-120", 32);
    assert!(ways < 2.0 / 57e-6, "two ways read {ways} IOPS");
    // The same dies each on its own read many more at once: the controller's command time
    // limits them instead.
    let dies = rand_read_iops(&cat, "forcegt-120-dies", 32);
    assert!(
        dies > 1.5 * ways,
        "16 dies {dies} IOPS against 2 ways {ways}"
    );
    // Twice the dies per channel, twice the ways.
    let four = rand_read_iops(&cat, "forcegt-240", 32);
    assert!(
        four > 1.6 * ways,
        "4 ways {four} IOPS against 2 ways {ways}"
    );
    // One read at a time takes about a tR either way; the way's channels move its data side
    // by side, so it is not slower.
    let (ways1, dies1) = (
        rand_read_iops(&cat, "forcegt-120", 1),
        rand_read_iops(&cat, "forcegt-120-dies", 1),
    );
    assert!(
        ways1 >= 0.97 * dies1 && ways1 < 1.3 * dies1,
        "QD1: lockstep {ways1} IOPS, independent dies {dies1}"
    );
}

#[test]
fn a_lockstep_array_writes_as_fast_as_its_dies_do_independently() {
    // A way programs its dies' pages together: sequential writes of incompressible data
    // still have every die programming.
    let cat = with_independent_dies("forcegt-120");
    let write = |drive: &str| {
        let mut sim = open_with(&format!("sim:{drive}@h67/sata"), cat.clone()).unwrap();
        let j = job("access = \"write\"\nblock_size = \"1m\"\nqueue_depth = 1\nsize = \"1g\"\nduration_s = 0.2\nseed = 3");
        sim.run_job(&j, None).unwrap().result.write.bw_bytes_per_s
    };
    let (ways, dies) = (write("forcegt-120"), write("forcegt-120-dies"));
    assert!(
        (ways / dies - 1.0).abs() < 0.1,
        "lockstep {ways} B/s, independent dies {dies} B/s"
    );
}
