//! Tests of the translation of fio options.

use super::*;
use crate::fiojob::testutil::{problems, translate};

#[test]
fn a_plain_random_read_job() {
    let j = &translate(
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\n[rr]\nrw=randread\niodepth=32\n\
         size=1g\nruntime=10\ntime_based\nramp_time=2s\nnumjobs=2\ngroup_reporting\n",
    )[0];
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    let s = &j.spec;
    assert_eq!(s.access, Some(Access::RandRead));
    assert_eq!(s.queue_depth, Some(32));
    assert_eq!(s.threads, Some(2));
    assert_eq!(s.block_size, Some(ByteSize(4096)));
    assert_eq!(s.size, Some(ByteSize(1 << 30)));
    assert_eq!((s.duration_s, s.ramp_s), (Some(10.0), Some(2.0)));
    assert_eq!(s.direct, Some(true));
    assert_eq!(s.random_map, Some(true));
    assert_eq!(s.io_limit, None);
    assert_eq!(j.engine.0, EngineChoice::Auto);
    assert_eq!(j.places["queue_depth"].to_string(), "j.fio:7");
    assert_eq!(j.places["direct"].to_string(), "j.fio:3");
    s.validate().unwrap();
}

#[test]
fn fio_defaults_and_budgets() {
    // Buffered psync by default, one I/O in flight; numjobs clones each do size bytes.
    let j = &translate("[w]\nrw=write\nbs=64k\nsize=16m\nnumjobs=4\niodepth=8\n")[0];
    assert_eq!(j.spec.direct, Some(false));
    assert_eq!(j.spec.queue_depth, None);
    assert_eq!(j.engine.0, EngineChoice::Psync);
    assert_eq!(j.spec.io_limit, Some(ByteSize(64 << 20)));
    assert!(
        j.notes.iter().any(|n| n.contains("iodepth=8")),
        "{:?}",
        j.notes
    );
    // number_ios ends a job before its size does, never after.
    let j = &translate("[w]\nrw=randread\nsize=16m\nnumber_ios=100\n")[0];
    assert_eq!(j.spec.ios_limit, Some(100));
    assert_eq!(j.spec.io_limit, Some(ByteSize(16 << 20)));
    let j = &translate("[w]\nrw=randrw\nrwmixwrite=30\nsize=50%\nloops=3\n")[0];
    assert_eq!(j.spec.read_pct, Some(70.0));
    assert_eq!(j.spec.size, Some(ByteSize(512 << 20)));
    assert_eq!(j.spec.io_limit, Some(ByteSize(3 * (512 << 20))));
}

#[test]
fn sizes_splits_and_skew() {
    let j = &translate(
        "[s]\nrw=randread\nbssplit=4kb/50:1m/50\nrandom_distribution=zipf:1.2\n\
         norandommap\nkb_base=1024\n",
    )[0];
    assert_eq!(j.spec.bssplit.as_deref(), Some("4k/50:1m/50"));
    assert_eq!(j.spec.distribution.as_deref(), Some("zipf:1.2"));
    assert_eq!(j.spec.random_map, None);
    let j = &translate("[s]\nrw=randread\nbsrange=4k-16k\n")[0];
    assert_eq!(j.spec.bssplit.as_deref(), Some("4k/1:8k/1:12k/1:16k/1"));
    // Separate reads and writes: kept for a mix, the job's own for one direction.
    let j = &translate("[s]\nrw=randrw\nbs=4k,64k\n")[0];
    assert_eq!(j.spec.bssplit.as_deref(), Some("4k/100,64k/100"));
    j.spec.validate().unwrap();
    let j = &translate("[s]\nrw=write\nbs=4k,64k\n")[0];
    assert_eq!(j.spec.block_size, Some(ByteSize(65536)));
    let j = &translate("[s]\nrw=randrw\nbssplit=4k/50:8k/50,1m/100\n")[0];
    assert_eq!(j.spec.bssplit.as_deref(), Some("4k/50:8k/50,1m/100"));
    let j = &translate("[s]\nrw=randrw\nbs=8k\nblockalign=8k\n")[0];
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    let j = &translate("[s]\nrw=randrw\nbssplit=512/50:4k/50\nblockalign=4k\n")[0];
    assert_eq!(j.spec.block_align, Some(ByteSize(4096)));
}

#[test]
fn what_cannot_be_honoured_is_named_with_its_line() {
    let j = &translate(
        "[v]\nrw=randtrim\nverify=pattern\nexec_prerun=ls\nrate=1m\nrw=randrw\n\
         zonemode=zbd\nfoo=bar\n",
    )[0];
    let said: Vec<String> = j.problems.iter().map(ToString::to_string).collect();
    for want in [
        "j.fio:3: verify=pattern: verify=pattern writes the pattern alone",
        "j.fio:4: exec_prerun=ls: iolab runs no commands",
        "j.fio:7: zonemode=zbd: zonemode=zbd on a target that is not zoned needs zonesize",
        "j.fio:8: foo=bar: iolab has no equivalent",
    ] {
        assert!(
            said.iter().any(|s| s.starts_with(want)),
            "{want}: {said:#?}"
        );
    }
    // The later rw wins, as in fio: nothing said of the first.
    assert!(!said.iter().any(|s| s.contains("TRIM")), "{said:#?}");
    let j = &translate("[e]\nioengine=net\n")[0];
    assert!(j.problems[0]
        .to_string()
        .contains("not a file or block engine"));
}

#[test]
fn strided_zones_become_windows() {
    let j = &translate("[z]\nrw=read\nbs=64k\nzonemode=strided\nzonesize=256m\nzoneskip=2g\n")[0];
    assert_eq!(j.spec.stride_io, Some(ByteSize(256 << 20)));
    assert_eq!(j.spec.stride_range, None);
    assert_eq!(j.spec.stride_skip, Some(ByteSize(2 << 30)));
    j.spec.validate().unwrap();
}

#[test]
fn rw_modifiers_become_skips_and_runs() {
    let j = &translate("[b]\nrw=read:-8k\nbs=4k\n")[0];
    assert_eq!(j.spec.seq_skip, Some(-8192));
    let j = &translate("[b]\nrw=randread:8\n")[0];
    assert_eq!(j.spec.random_run, Some(8));
    let j = &translate("[b]\nrw=randread:x\n")[0];
    assert!(j.problems[0].option.starts_with("rw="), "{:?}", j.problems);
}

#[test]
fn an_iodepth_of_zero_is_refused_as_fio_does_whatever_the_engine() {
    for engine in ["psync", "io_uring"] {
        let j = &translate(&format!("[q]\nrw=randread\nioengine={engine}\niodepth=0\n"))[0];
        assert!(
            problems(j).contains("iodepth=0: 0 is below fio's minimum of 1"),
            "{engine}: {}",
            problems(j)
        );
    }
    let j = &translate("[q]\nrw=randread\nioengine=psync\niodepth=1\n")[0];
    assert!(j.problems.is_empty(), "{:?}", j.problems);
}

#[test]
fn filename_lists_split_on_unescaped_colons() {
    assert_eq!(
        split_filenames("/dev/sdb:/dev/sdc"),
        ["/dev/sdb", "/dev/sdc"]
    );
    assert_eq!(split_filenames(r"c\:\x:y"), [r"c:\x", "y"]);
}

#[test]
fn fio_verify_becomes_iolab_verify_with_what_differs_said() {
    use iolab_core::job::VerifyMode;
    let verify = |text: &str| {
        let j = translate(text).remove(0);
        (
            j.spec.verify,
            j.problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            j.notes,
        )
    };
    let (mode, problems, notes) = verify("[w]\nrw=randwrite\nverify=md5\n");
    assert_eq!(mode, Some(VerifyMode::End));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(
        notes.iter().any(|n| n.contains("not by fio's md5")),
        "{notes:?}"
    );
    let (mode, _, notes) = verify("[w]\nrw=write\nverify=crc32c\nverify_backlog=16\n");
    assert_eq!(mode, Some(VerifyMode::Inline));
    assert!(
        notes.iter().any(|n| n.contains("as soon as it completes")),
        "{notes:?}"
    );
    let (mode, _, notes) = verify("[w]\nrw=write\nverify=crc32c\ndo_verify=0\n");
    assert_eq!(mode, Some(VerifyMode::Stamp));
    assert!(
        notes.iter().any(|n| n.contains("not read back")),
        "{notes:?}"
    );
    let (mode, _, _) = verify("[w]\nrw=write\nverify=0\n");
    assert_eq!(mode, None);
    let (mode, problems, notes) = verify("[r]\nrw=randread\nverify=meta\n");
    assert_eq!(mode, Some(VerifyMode::Reads));
    assert!(problems.is_empty(), "{problems:?}");
    assert!(
        notes.iter().any(|n| n.contains("each block read")),
        "{notes:?}"
    );
    let (mode, _, _) = verify("[r]\nrw=read\nverify=md5\ndo_verify=0\n");
    assert_eq!(mode, None);
    let (_, problems, _) = verify("[w]\nrw=write\nverify=blake9\n");
    assert!(
        problems[0].contains("unknown verify type 'blake9'"),
        "{problems:?}"
    );
}

#[test]
fn verify_pattern_is_the_written_content_and_verify_pattern_alone_is_refused() {
    let j = translate("[w]\nrw=write\nverify=meta\nverify_pattern=0xaa555aa5\n").remove(0);
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    assert_eq!(j.spec.pattern.as_deref(), Some("0xaa555aa5"));
    let job = j.spec.validate().unwrap();
    assert_eq!(job.pattern.as_deref(), Some(&[0xaa, 0x55, 0x5a, 0xa5][..]));
    for (text, why) in [
        ("[w]\nrw=write\nverify_pattern=0xaa\n", "verify=pattern"),
        (
            "[w]\nrw=write\nverify=pattern\nverify_pattern=0xaa\n",
            "verify=pattern",
        ),
        ("[w]\nrw=write\nverify=md5\nverify_pattern=%o\n", "%o"),
        (
            "[w]\nrw=write\nverify=md5\nverify_pattern=0xaa\nzero_buffers=1\n",
            "zero_buffers",
        ),
    ] {
        let j = translate(text).remove(0);
        assert!(
            j.problems.iter().any(|p| p.why.contains(why)),
            "{text}: {:?}",
            j.problems
        );
    }
    // A read job checks stamps; the pattern is the writer's.
    let j = translate("[r]\nrw=read\nverify=meta\nverify_pattern=0xaa\n").remove(0);
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    assert_eq!(j.spec.pattern, None);
}

#[test]
fn fio_trim_patterns_become_trim_access() {
    for (rw, access) in [
        ("trim", Access::Trim),
        ("randtrim", Access::RandTrim),
        ("trimwrite", Access::TrimWrite),
        ("randtrimwrite", Access::RandTrimWrite),
    ] {
        let j = &translate(&format!("[t]\nrw={rw}\nbs=4k\nsize=16m\n"))[0];
        assert!(j.problems.is_empty(), "{rw}: {}", problems(j));
        assert_eq!(j.spec.access, Some(access), "{rw}");
        let job = j.spec.validate().unwrap();
        assert!(
            job.writes(),
            "{rw}: a TRIM job destroys data, as a write does"
        );
        assert_eq!(job.access.is_random(), rw.starts_with("rand"), "{rw}");
    }
    // rw=randtrim:8 is runs of 8 TRIMs per random offset, as for reads.
    let j = &translate("[t]\nrw=randtrim:8\nsize=16m\n")[0];
    assert_eq!(j.spec.random_run, Some(8));
    // fio refuses verify with trims; iolab says why.
    let j = &translate("[t]\nrw=trimwrite\nverify=crc32c\nsize=16m\n")[0];
    let e = j.spec.validate().unwrap_err().to_string();
    assert!(e.contains("TRIMs"), "{e}");
}

#[test]
fn offset_increment_lays_clones_apart() {
    let j = &translate(
        "[w]\nrw=write\nbs=16k\nnumjobs=30\noffset=120k\noffset_increment=124g\nsize=64m\n",
    )[0];
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    assert_eq!(j.spec.thread_offset, Some(ByteSize(124 << 30)));
    assert_eq!(j.spec.offset, Some(ByteSize(120 << 10)));
    assert_eq!(j.spec.size, Some(ByteSize(64 << 20)));
    assert_eq!(j.spec.zones, None);
    assert_eq!(j.places["thread_offset"].to_string(), "j.fio:6");
    // Equal to size, the clones' spans are side by side: iolab's zones, as before.
    let j = &translate("[w]\nrw=write\nnumjobs=4\noffset_increment=16m\nsize=16m\n")[0];
    assert_eq!((j.spec.zones, j.spec.thread_offset), (Some(true), None));
    // The last clone's span past the target's end is refused when the span is resolved.
    let mut job = translate("[w]\nrw=write\nnumjobs=30\noffset_increment=124g\nsize=64m\n")[0]
        .spec
        .validate()
        .unwrap();
    let err = job.resolve_span(1 << 40).unwrap_err();
    assert!(err.to_string().contains("offset_increment"), "{err}");
}

#[test]
fn zonemode_zbd_becomes_emulated_zones() {
    let j = &translate(
        "[global]\nzonemode=zbd\nzonesize=256M\nmax_open_zones=32\ndirect=1\n\
         [w]\nrw=randwrite\nbs=32M\nsize=8z\noffset=524z\nzone_reset_threshold=0.7\n\
         zone_reset_frequency=0.125\n",
    )[0];
    assert!(j.problems.is_empty(), "{:?}", j.problems);
    let z = j.spec.zoned.as_ref().unwrap();
    assert_eq!(z.zone_size, ByteSize(256 << 20));
    assert_eq!(z.max_open, 32);
    assert_eq!(
        (z.reset_threshold, z.reset_frequency),
        (Some(0.7), Some(0.125))
    );
    assert!(!z.read_beyond_wp);
    assert_eq!(j.spec.size, Some(ByteSize(8 * (256 << 20))));
    assert_eq!(j.spec.offset, Some(ByteSize(524 * (256 << 20))));
    j.spec.validate().unwrap();
    let j = &translate("[w]\nrw=write\nzonemode=zbd\nzonesize=1m\nsize=8z\nio_size=2z\n")[0];
    assert_eq!(j.spec.io_limit, Some(ByteSize(2 << 20)));
    // A read-only job is told it has nothing to read; read_beyond_wp=1 reads the zones.
    let j = &translate("[r]\nrw=read\nzonemode=zbd\nzonesize=1m\nread_beyond_wp=0\n")[0];
    assert!(
        j.notes.iter().any(|n| n.contains("nothing to read")),
        "{:?}",
        j.notes
    );
    let j = &translate("[r]\nrw=read\nzonemode=zbd\nzonesize=1m\nread_beyond_wp=1\n")[0];
    assert!(j.spec.zoned.as_ref().unwrap().read_beyond_wp);
    // Zones need their size; a size in zones too.
    let j = &translate("[r]\nrw=write\nsize=4z\n")[0];
    assert!(
        problems(j).contains("size=4z: a size in zones (z) needs zonesize"),
        "{}",
        problems(j)
    );
    // Without zonemode=zbd its options have no effect, said in the notes.
    let j = &translate("[r]\nrw=write\nmax_open_zones=4\n")[0];
    assert!(j.problems.is_empty() && j.notes.iter().any(|n| n.contains("without zonemode=zbd")));
}
