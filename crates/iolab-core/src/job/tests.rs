use super::*;

fn spec(text: &str) -> JobSpec {
    toml::from_str(text).unwrap()
}

#[test]
fn defaults_resolve() {
    let job = JobSpec::default().validate().unwrap();
    assert_eq!(job.access, Access::RandRead);
    assert_eq!(job.block_sizes[0].bytes, 4096);
    assert_eq!(job.queue_depth, 1);
    assert!(job.direct);
    assert_eq!(job.read_pct, 100.0);
}

#[test]
fn unknown_key_is_rejected_by_name() {
    let e = toml::from_str::<JobSpec>("blocksize = \"4k\"").unwrap_err();
    assert!(e.to_string().contains("unknown field `blocksize`"), "{e}");
}

#[test]
fn bad_values_name_the_key_and_the_fix() {
    let cases = [
        ("block_size = 0", "block_size", "0 bytes"),
        ("block_size = 4100", "block_size", "O_DIRECT"),
        ("queue_depth = 0", "queue_depth", "outside"),
        ("threads = 0", "threads", "outside"),
        (
            "size = \"2k\"\nblock_size = \"4k\"",
            "size",
            "smaller than one block",
        ),
        ("access = \"randread\"\nread_pct = 70", "read_pct", "mixed"),
        ("bssplit = \"4k/x\"", "bssplit", "percentage"),
        (
            "zones = true\nthreads = 4\nsize = \"8k\"",
            "zones",
            "zones of",
        ),
        ("compress_pct = 120", "compress_pct", "0–100"),
        ("duration_s = -1", "duration_s", "positive"),
        ("bssplit = \"4k/inf:8k/1\"", "bssplit", "finite"),
        ("bssplit = \"4k/nan:8k/50\"", "bssplit", "finite"),
        ("bssplit = \"4k/1e308:64k/1e308\"", "bssplit", "finite"),
        ("ramp_s = 1\nios_limit = 1000", "ramp_s", "timed job"),
        (
            "ramp_s = 1\nduration_s = 1\nios_limit = 1000",
            "ios_limit",
            "ramp_s included",
        ),
        (
            "ramp_s = 1\nduration_s = 1\nio_limit = \"1m\"",
            "io_limit",
            "drop io_limit",
        ),
        ("ramp_s = 1e12\nduration_s = 1", "ramp_s", "more than"),
        ("duration_s = 1e12", "duration_s", "more than"),
        // Written as a power of ten, not 309 digits.
        ("duration_s = 1e308", "duration_s", "1e308 s is more than"),
        (
            "duration_s = 200000000",
            "duration_s",
            "200000000 s is more than",
        ),
        ("io_limit = 1000", "io_limit", "less than one block"),
        (
            "offset = \"1m\"\nsize = \"18446744073708503040\"",
            "size",
            "past the largest",
        ),
        ("rate_iops = 1e-320", "rate_iops", "one I/O per hour"),
        ("start_delay_s = -1", "start_delay_s", "zero or more"),
        ("rate_poisson = true", "rate_poisson", "set rate_iops"),
        ("random_run = 0", "random_run", "1 or more"),
        ("block_align = 100", "block_align", "multiple of 512"),
        ("stride_skip = \"1m\"", "stride_skip", "needs stride_io"),
        (
            "stride_io = \"1m\"\nstride_range = 512",
            "stride_range",
            "cannot hold",
        ),
        (
            "stride_io = \"1m\"\nstride_skip = 100",
            "stride_skip",
            "O_DIRECT",
        ),
        ("seq_skip = 100", "seq_skip", "O_DIRECT"),
        ("start_delay_s = 1e6", "start_delay_s", "at most a day"),
        ("distribution = \"zipf:0\"", "distribution", "above 0"),
        (
            "distribution = \"zipf:1.2\"\nrandom_map = true",
            "distribution",
            "drop random_map",
        ),
        ("drain_end = true", "drain_end", "set duration_s"),
        ("rate_iops = 0.0002", "rate_iops", "one I/O per hour"),
        (
            "rate_bytes_per_s = 0",
            "rate_bytes_per_s",
            "at least 1 byte",
        ),
    ];
    for (text, key, hint) in cases {
        let e = spec(text).validate().unwrap_err();
        assert_eq!(e.key, key, "{text}");
        assert!(e.to_string().contains(hint), "{text}: {e}");
    }
}

#[test]
fn the_label_gives_a_random_share_that_is_not_the_access_default() {
    let label = |text: &str| spec(text).validate().unwrap().to_string();
    assert_eq!(label("access = \"read\""), "Read 4k QD1 T1");
    assert_eq!(
        label("access = \"read\"\nrandom_pct = 100"),
        "Read 4k QD1 T1 100% random"
    );
    assert_eq!(
        label("access = \"randread\"\nrandom_pct = 0"),
        "RandRead 4k QD1 T1 0% random"
    );
    assert_eq!(
        label("access = \"rw\"\nread_pct = 80\nrandom_pct = 80"),
        "Rw 4k QD1 T1 80% read 80% random"
    );
    // A share that is not whole is not rounded away.
    assert_eq!(
        label("access = \"randrw\"\nread_pct = 0.5"),
        "RandRw 4k QD1 T1 0.5% read"
    );
    assert_eq!(
        label("access = \"rw\"\nread_pct = 33.333\nrandom_pct = 12.5"),
        "Rw 4k QD1 T1 33.33% read 12.5% random"
    );
}

#[test]
fn unaligned_block_is_fine_when_buffered() {
    let job = spec("block_size = 4100\ndirect = false")
        .validate()
        .unwrap();
    assert_eq!(job.max_block(), 4100);
}

#[test]
fn alignment_against_a_4k_target() {
    let job = spec("block_size = 512").validate().unwrap();
    assert!(job.check_alignment(512).is_ok());
    let e = job.check_alignment(4096).unwrap_err();
    assert!(e.message.contains("4096-byte logical block"));
}

#[test]
fn bssplit_weights_are_normalised() {
    let job = spec("bssplit = \"512/10:4k/60:64k/10\"")
        .validate()
        .unwrap();
    let sum: f64 = job.block_sizes.iter().map(|s| s.weight).sum();
    assert!((sum - 1.0).abs() < 1e-12);
    assert!((job.block_sizes[1].weight - 0.75).abs() < 1e-12);
}

#[test]
fn bssplit_weights_that_do_not_add_up_to_100_are_said() {
    let note = spec("bssplit = \"512/10:4k/60:64k/10\"")
        .bssplit_note()
        .unwrap();
    assert_eq!(
        note,
        "bssplit 512/10:4k/60:64k/10: the weights add up to 80, not 100, so they are \
         taken as shares of it: 512/12.5:4k/75:64k/12.5"
    );
    let note = spec("bssplit = \"4k/1:8k/2\"").bssplit_note().unwrap();
    assert!(
        note.ends_with(
            "add up to 3, not 100, so they are taken as shares of it: 4k/33.33:8k/66.67"
        ),
        "{note}"
    );
    // Nothing to say of a split of 100, of one size, or of a split that does not parse.
    for text in [
        "bssplit = \"512/10:4k/60:64k/30\"",
        "bssplit = \"512/0:4k/100\"",
        "block_size = \"4k\"",
        "bssplit = \"4k/x\"",
    ] {
        assert_eq!(spec(text).bssplit_note(), None, "{text}");
    }
}

#[test]
fn bssplit_blank_shares_split_the_rest_of_100_as_fio_does() {
    let shares = |text: &str| -> Vec<(u64, f64)> {
        parse_bssplit(text)
            .unwrap()
            .iter()
            .map(|s| (s.bytes, s.weight))
            .collect()
    };
    assert_eq!(shares("4k/50:64k/"), [(4096, 50.0), (65536, 50.0)]);
    assert_eq!(
        shares("4k/40:8k/:64k"),
        [(4096, 40.0), (8192, 30.0), (65536, 30.0)]
    );
    assert_eq!(shares("64k/"), [(65536, 100.0)]);
    // Filled in, the split adds up to 100: nothing to warn of.
    assert_eq!(spec("bssplit = \"4k/50:64k/\"").bssplit_note(), None);
    let job = spec("bssplit = \"4k/20:64k/\"").validate().unwrap();
    assert!((job.block_sizes[1].weight - 0.8).abs() < 1e-12);
    // Nothing left for the blank share: refused, naming it.
    let e = parse_bssplit("4k/60:8k/40:64k/").unwrap_err();
    assert!(
        e.contains("add up to 100, which leaves nothing for 64k/"),
        "{e}"
    );
    assert!(parse_bssplit("4k/nan:64k/").is_err());
    // A malformed share is still refused.
    let e = parse_bssplit("4k/x:64k/").unwrap_err();
    assert!(e.contains("'x' in '4k/x' is not a percentage"), "{e}");
}

#[test]
fn bssplit_takes_separate_read_and_write_splits_as_fio_does() {
    let job = spec("access = \"randrw\"\nbssplit = \"2k/50:4k/50,4k/90:8k/10\"")
        .validate()
        .unwrap();
    assert_eq!(job.block_sizes.len(), 2);
    assert_eq!(job.write_block_sizes[1].bytes, 8192);
    assert_eq!(job.max_block(), 8192);
    assert_eq!(job.granule(), 2048);
    assert_eq!(
        job.to_string(),
        "RandRw 2k/50:4k/50,4k/90:8k/10 QD1 T1 50% read"
    );
    // A blank part: the reads' default size, or the writes as the reads.
    let job = spec("bssplit = \",64k/100\"").validate().unwrap();
    assert_eq!(
        (job.block_sizes[0].bytes, job.write_block_sizes[0].bytes),
        (4096, 65536)
    );
    let job = spec("bssplit = \"8k/100,\"").validate().unwrap();
    assert!(job.write_block_sizes.is_empty());
    // A trim split is of no use and ignored; more is refused, as is nothing.
    assert!(spec("bssplit = \"4k,8k,16k\"").validate().is_ok());
    for bad in ["4k,8k,16k,32k", ","] {
        let e = spec(&format!("bssplit = \"{bad}\""))
            .validate()
            .unwrap_err();
        assert_eq!(e.key, "bssplit", "{bad}");
    }
    let e = spec("bssplit = \"4k,8k\"\nblock_size = 4100\ndirect = false")
        .validate()
        .unwrap_err();
    assert!(e.message.contains("not both"), "{e}");
    let e = spec("bssplit = \"4k,4100\"").validate().unwrap_err();
    assert!(e.message.contains("O_DIRECT"), "{e}");
}

#[test]
fn bssplit_sizes_of_no_weight_are_dropped() {
    // `512/0:4k/100` issued only 4k I/Os, but at 512-byte offsets: the unused 512 still
    // set the alignment and the granule, and a 4K-sector target refused it.
    let job = spec("bssplit = \"512/0:4k/100\"").validate().unwrap();
    assert_eq!(
        job.block_sizes,
        [SizeShare {
            bytes: 4096,
            weight: 1.0
        }]
    );
    assert_eq!(job.granule(), 4096);
    job.check_alignment(4096).unwrap();
    assert_eq!(job.to_string(), "RandRead 4k QD1 T1");
    // All of no weight is still refused.
    let e = spec("bssplit = \"512/0:4k/0\"").validate().unwrap_err();
    assert!(e.to_string().contains("not all zero"), "{e}");
}

#[test]
fn zones_do_not_overlap_and_cover_the_span() {
    let mut job = spec("zones = true\nthreads = 3").validate().unwrap();
    job.offset_bytes = 1 << 20;
    job.set_span(3 << 30).unwrap();
    let ranges: Vec<_> = (0..3).map(|i| job.worker_range(i)).collect();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "{ranges:?}");
    }
    assert_eq!(ranges[0].0, 1 << 20);
    assert!(ranges[2].1 <= (1 << 20) + (3 << 30));
    // Zones start on a block boundary, and together they are the whole span: 70 MiB in
    // 1 MiB blocks over 3 threads is 23 + 23 + 24 MiB (zones used to start at 512-byte
    // boundaries, which a 4K-sector device refuses, and to leave the tail unwritten).
    let mut job = spec("zones = true\nthreads = 3\nblock_size = \"1m\"")
        .validate()
        .unwrap();
    job.set_span(70 << 20).unwrap();
    let ranges: Vec<_> = (0..3).map(|i| job.worker_range(i)).collect();
    assert_eq!(
        ranges,
        [(0, 23 << 20), (23 << 20, 46 << 20), (46 << 20, 70 << 20)]
    );
    // A split: zones on multiples of its largest block.
    let mut job = spec("zones = true\nthreads = 5\nbssplit = \"4k/50:64k/50\"")
        .validate()
        .unwrap();
    job.set_span(12 << 20).unwrap();
    for i in 0..5 {
        assert_eq!(job.worker_range(i).0 % (64 << 10), 0, "zone {i}");
    }
}

#[test]
fn byte_shares_add_up_and_start_where_the_previous_ends() {
    for (total, granule, parts) in [(70 << 20, 1 << 20, 3), (10_000, 512, 7), (4096, 4096, 3)] {
        let mut at = 0;
        for i in 0..parts {
            assert_eq!(byte_share_start(total, granule, parts, i), at);
            at += byte_share(total, granule, parts, i);
        }
        assert_eq!(at, total / granule * granule);
    }
}

#[test]
fn span_past_the_end_is_refused() {
    let mut job = spec("size = \"2g\"").validate().unwrap();
    let e = job.resolve_span(1 << 30).unwrap_err();
    assert_eq!(e.key, "size");
    let mut job = JobSpec::default().validate().unwrap();
    job.resolve_span(1 << 30).unwrap();
    assert_eq!(job.span(), 1 << 30);
    // No size given and a target smaller than a block: the target is named, not a size to
    // grow it to.
    let mut job = JobSpec::default().validate().unwrap();
    let e = job.resolve_span(12).unwrap_err();
    assert_eq!(e.key, "size");
    assert!(
        e.message.contains("the target holds 12 bytes") && e.message.contains("--bs"),
        "{e}"
    );
    let mut job = spec("offset = \"1m\"").validate().unwrap();
    let e = job.resolve_span((1 << 20) + 100).unwrap_err();
    assert!(e.message.contains("100 bytes past offset 1m"), "{e}");
}
