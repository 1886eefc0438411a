use super::*;
use crate::job::JobSpec;
use crate::workload::IoGenerator;

fn job(text: &str, span: u64) -> Job {
    let mut job = toml::from_str::<JobSpec>(text).unwrap().validate().unwrap();
    job.set_span(span).unwrap();
    job
}

/// Runs `n` requests of `job`'s worker 0, checking each against the zones before it is placed:
/// a write starts at its zone's write pointer and ends within the zone; a read ends below its
/// zone's write pointer. Returns the table.
fn run_checked(job: &Job, n: usize) -> SharedZones {
    let zones = ZoneTable::for_range(job, job.worker_range(0)).unwrap();
    let mut gen = IoGenerator::with_zones(job, 0, Some(zones.clone()));
    for _ in 0..n {
        let before: Vec<_> = lock(&zones).write_pointers().collect();
        let r = gen.next_request();
        let (start, end, wp) = *before
            .iter()
            .find(|(s, e, _)| r.offset >= *s && r.offset < *e)
            .expect("request outside every zone");
        assert!(
            r.len > 0 && r.offset + r.len <= end,
            "{r:?} past its zone's end {end}"
        );
        match r.dir {
            Direction::Write => {
                // At the write pointer, or at the start of a zone reset for it.
                assert!(r.offset == wp || r.offset == start, "{r:?} not at wp {wp}");
            }
            Direction::Read => assert!(r.offset + r.len <= wp, "{r:?} above wp {wp}"),
            Direction::Trim => panic!("{r:?}: these jobs issue no TRIMs"),
        }
        for (s, e, wp) in lock(&zones).write_pointers() {
            assert!(
                s <= wp && wp <= e,
                "write pointer {wp} outside its zone [{s}, {e})"
            );
        }
    }
    zones
}

#[test]
fn random_writes_go_to_write_pointers_and_never_pass_a_zone_end() {
    let j = job(
        "access = \"randwrite\"\nblock_size = \"64k\"\nzoned = { zone_size = \"1m\" }\n\
         duration_s = 1",
        16 << 20,
    );
    let zones = run_checked(&j, 20_000);
    // 20 000 writes of 64k over 16 zones of 16 blocks each: full zones were reset.
    assert!(lock(&zones).resets() > 0);
}

#[test]
fn sequential_writes_fill_the_zones_in_order() {
    let j = job(
        "access = \"write\"\nblock_size = \"256k\"\nzoned = { zone_size = \"1m\" }\n\
         duration_s = 1",
        4 << 20,
    );
    let mut gen = IoGenerator::new(&j, 0);
    let offsets: Vec<u64> = (0..16).map(|_| gen.next_request().offset).collect();
    let expected: Vec<u64> = (0..16).map(|i| i * (256 << 10)).collect();
    assert_eq!(offsets, expected);
}

#[test]
fn open_zones_stay_within_max_open() {
    let j = job(
        "access = \"randwrite\"\nblock_size = \"4k\"\nthreads = 4\n\
         zoned = { zone_size = \"1m\", max_open = 3 }\nduration_s = 1",
        64 << 20,
    );
    let zones = ZoneTable::for_range(&j, j.worker_range(0)).unwrap();
    let mut gens: Vec<_> = (0..4)
        .map(|i| IoGenerator::with_zones(&j, i, Some(zones.clone())))
        .collect();
    let mut written = std::collections::BTreeSet::new();
    for k in 0..4_000 {
        let r = gens[k % 4].next_request();
        written.insert(r.offset >> 20);
        assert!(lock(&zones).open_zones() <= 3);
    }
    // 4 000 writes of 4k (16 MB) in zones of 1 MiB, 3 open at a time, each filled before the
    // next opens: about 16 zones written, far fewer than the 64 a uniform draw would touch.
    assert!((3..=20).contains(&written.len()), "{} zones", written.len());
}

#[test]
fn resets_start_past_the_threshold_at_the_frequency() {
    let j = job(
        "access = \"randwrite\"\nblock_size = \"64k\"\n\
         zoned = { zone_size = \"1m\", reset_threshold = 0.5, reset_frequency = 0.25 }\n\
         duration_s = 1",
        8 << 20,
    );
    let zones = run_checked(&j, 5_000);
    let t = lock(&zones);
    let valid: u64 = t.write_pointers().map(|(s, _, wp)| wp - s).sum();
    // Resets every 4th write past half the range keep the valid bytes near half of it.
    assert!(t.resets() > 100, "{} resets", t.resets());
    assert!(valid <= (6 << 20), "{valid} valid bytes");
}

#[test]
fn reads_stay_below_write_pointers_and_a_mix_writes_first() {
    let j = job(
        "access = \"randrw\"\nblock_size = \"4k\"\nzoned = { zone_size = \"1m\" }\n\
         duration_s = 1",
        8 << 20,
    );
    let mut gen = IoGenerator::new(&j, 0);
    assert_eq!(gen.next_request().dir, Direction::Write);
    run_checked(&j, 20_000);
    let seq = job(
        "access = \"rw\"\nblock_size = \"4k\"\nzoned = { zone_size = \"1m\" }\nduration_s = 1",
        8 << 20,
    );
    run_checked(&seq, 20_000);
}

#[test]
fn a_read_only_job_has_nothing_to_read_unless_beyond_write_pointers() {
    let j = job("access = \"read\"\nzoned = { zone_size = \"1m\" }", 8 << 20);
    assert!(j.nothing_to_read());
    let beyond = job(
        "access = \"read\"\nzoned = { zone_size = \"1m\", read_beyond_wp = true }",
        8 << 20,
    );
    assert!(!beyond.nothing_to_read());
}

#[test]
fn zones_are_clipped_to_the_range_and_checked_against_blocks() {
    let mut j = job(
        "access = \"write\"\nblock_size = \"64k\"\nzoned = { zone_size = \"1m\" }",
        3 << 20,
    );
    j.offset_bytes = 512 << 10;
    let zones = ZoneTable::for_range(&j, j.worker_range(0)).unwrap();
    let bounds: Vec<_> = lock(&zones)
        .write_pointers()
        .map(|(s, e, _)| (s, e))
        .collect();
    let k = 1u64 << 10;
    assert_eq!(
        bounds,
        [
            (512 * k, 1024 * k),
            (1024 * k, 2048 * k),
            (2048 * k, 3072 * k),
            (3072 * k, 3584 * k)
        ]
    );
    let err = toml::from_str::<JobSpec>("block_size = \"2m\"\nzoned = { zone_size = \"1m\" }")
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(err.key, "zoned");
}

#[test]
fn a_trim_job_on_zones_is_refused_not_run_as_reads() {
    for access in ["randtrim", "trimwrite"] {
        let err = toml::from_str::<JobSpec>(&format!(
            "access = \"{access}\"\nzoned = {{ zone_size = \"1m\" }}"
        ))
        .unwrap()
        .validate()
        .unwrap_err();
        assert_eq!(err.key, "zoned", "{access}");
        assert!(err.message.contains("TRIM"), "{}", err.message);
    }
}
