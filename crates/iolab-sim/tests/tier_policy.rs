//! The policies of the catalog's tiered drives: what Intel's SRT cache leaves out (a
//! sequential stream past its cutoff) and how fast StoreMI's mover promotes (a set rate,
//! busy or idle).

use iolab_core::job::{Job, JobSpec};
use iolab_sim::open;

fn job(text: &str) -> Job {
    toml::from_str::<JobSpec>(text).unwrap().validate().unwrap()
}

/// Mean read MB/s of each of `n` passes of `text` on one model of `spec`, `idle_s` apart.
fn passes(spec: &str, text: &str, n: usize, idle_s: f64) -> Vec<f64> {
    let mut sim = open(spec, None).unwrap();
    (0..n)
        .map(|_| {
            let r = sim.run_job(&job(text), None).unwrap().result;
            sim.idle(idle_s);
            r.read.bw_bytes_per_s / 1e6
        })
        .collect()
}

#[test]
fn a_cache_does_not_keep_a_large_file_read_sequentially() {
    // 256 MiB read in 1 MiB requests, three times: past its first MiB the stream bypasses
    // the cache, so the third pass runs at the disk's speed. Kept, it ran from the SSD.
    let seq = "access = \"read\"\nblock_size = \"1m\"\nsize = \"256m\"\nio_limit = 268435456";
    let cache = passes("sim:rst-cache@z270/sata", seq, 3, 1.0);
    let disk = passes("sim:hdd-7200@z270/sata", seq, 1, 1.0)[0];
    assert!(
        cache[2] < 1.2 * disk,
        "third pass {} MB/s vs disk {disk} MB/s",
        cache[2]
    );
    // The same bytes read at random in 64 KiB pieces continue no stream: the cache keeps
    // them, and a repeat comes from the SSD.
    let random = "access = \"randread\"\nblock_size = \"64k\"\nsize = \"64m\"\nio_limit = 67108864\nseed = 3";
    let kept = passes("sim:rst-cache@z270/sata", random, 2, 1.0);
    assert!(
        kept[1] > 5.0 * kept[0],
        "random repeat {} MB/s vs first {} MB/s",
        kept[1],
        kept[0]
    );
}

#[test]
fn a_tiers_mover_promotes_at_its_set_rate_while_the_disk_idles() {
    // 64 MiB (64 extents of 1 MiB) read twice turns hot; at 10 MiB/s the mover needs some
    // 6 s for them. Two seconds later the file is still read mostly from the disk; after 15
    // s more it all comes from the SSD. An unpaced mover, copying back to back while the
    // disk idled, had it all on the SSD within a second.
    let text = "access = \"read\"\nblock_size = \"1m\"\nsize = \"64m\"\nio_limit = 67108864";
    let mut sim = open("sim:storemi@x470", None).unwrap();
    let mut pass = |idle_s: f64| {
        let r = sim.run_job(&job(text), None).unwrap().result;
        sim.idle(idle_s);
        r.read.bw_bytes_per_s / 1e6
    };
    pass(0.0);
    pass(2.0);
    let early = pass(15.0);
    let late = pass(0.0);
    assert!(
        early < 0.5 * late,
        "2 s after turning hot {early} MB/s, 17 s after {late} MB/s"
    );
    let disk = passes("sim:hdd-7200@x470/sata", text, 1, 0.0)[0];
    assert!(
        late > 3.0 * disk,
        "promoted {late} MB/s vs disk {disk} MB/s"
    );
}

#[test]
fn a_mover_rate_that_is_not_a_rate_or_sits_on_a_cache_is_refused() {
    use iolab_sim::catalog::Catalog;
    let refused = |text: &str, says: &str| {
        let e = Catalog::default()
            .add_drive("user/drives/tier.toml", text)
            .unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    };
    let storemi = include_str!("../../../catalog/drives/storemi.toml");
    let rate = "promote_bytes_per_s = 10485760";
    assert!(storemi.contains(rate));
    for bad in ["-1.0", "nan", "inf"] {
        refused(
            &storemi.replace(rate, &format!("promote_bytes_per_s = {bad}")),
            "tier.toml: tiered.promote_bytes_per_s",
        );
    }
    let rst = include_str!("../../../catalog/drives/rst-cache.toml");
    let cut = "seq_cutoff_bytes = 1048576";
    assert!(rst.contains(cut));
    refused(
        &rst.replace(cut, &format!("{cut}\npromote_bytes_per_s = 1e6")),
        "tier.toml: tiered.promote_bytes_per_s: only a tier",
    );
    // Left out, the mover is unpaced (an explicit 0 is refused as every rate is).
    let unpaced = storemi.replace(&format!("{rate}\n"), "");
    assert!(!unpaced.contains("promote_bytes_per_s"));
    Catalog::default()
        .add_drive("user/drives/tier.toml", &unpaced)
        .unwrap();
}

#[test]
fn a_hard_disks_read_ahead_keeps_a_segment_not_the_whole_stream() {
    // The look-ahead's segment held everything from the start of a sequential stream: a
    // 256 MiB file read a second time came from the buffer at the interface's 520 MB/s,
    // against the media's 150. The segment keeps the last READ_AHEAD_BYTES read.
    let seq = "access = \"read\"\nblock_size = \"1m\"\nsize = \"256m\"\nio_limit = 268435456";
    let disk = passes("sim:hdd-7200@z270/sata", seq, 2, 1.0);
    assert!(
        disk[1] < 1.1 * disk[0],
        "second pass {} MB/s vs first {} MB/s",
        disk[1],
        disk[0]
    );
}
