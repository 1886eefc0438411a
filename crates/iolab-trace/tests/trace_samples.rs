//! Reads every real trace sample in testdata/traces/ and checks the facts its README
//! gives (and a few more counted independently, noted where they come from).

use std::path::PathBuf;

use iolab_trace::{
    analyze, open_bytes, open_path, AnalyzeOptions, Event, Format, Op, ReadOptions, TraceRecord,
};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/traces/");

fn dir() -> PathBuf {
    let d = PathBuf::from(DIR);
    assert!(
        d.join("README.md").is_file(),
        "the trace samples are missing: expected {DIR}README.md in the repository"
    );
    d
}

fn read(name: &str, event: Event) -> (Format, Vec<TraceRecord>) {
    // DiskSim ASCII is not detected (ms or ns?): MQSim's sample is named as such.
    let opts = ReadOptions {
        event,
        format: name.starts_with("mqsim_").then_some(Format::Mqsim),
        ..ReadOptions::default()
    };
    let r = open_path(&dir().join(name), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let f = r.format();
    let recs = r
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (f, recs)
}

#[test]
fn every_sample_is_detected_read_and_covered_by_a_test() {
    let known = [
        ("msr_hm_0_first1000.csv", Format::Msr),
        ("blktrace_viewer_sample.blktrace.0", Format::Blktrace),
        ("blktrace_merge_nvme0n1_blkparse.txt", Format::Blkparse),
        ("mqsim_tpcc-small.trace", Format::Mqsim),
        ("fio_t0038_v3.iolog", Format::Fio3),
    ];
    let mut seen = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name == "README.md" {
            continue;
        }
        let Some((_, want)) = known.iter().find(|(n, _)| *n == name) else {
            panic!("new sample {name} in {DIR}: add its README facts to this test file");
        };
        let (f, recs) = read(&name, Event::D);
        assert_eq!(f, *want, "{name} detected as {f}");
        assert!(!recs.is_empty(), "{name}");
        seen += 1;
    }
    assert_eq!(seen, known.len(), "a known sample is missing from {DIR}");
}

#[test]
fn msr_sample_facts() {
    let (_, recs) = read("msr_hm_0_first1000.csv", Event::D);
    // README: 1,000 requests; FILETIME (100 ns ticks); bytes.
    assert_eq!(recs.len(), 1000);
    let first = recs[0];
    assert_eq!(first.time_ns, 128_166_385_295_514_663 * 100);
    assert_eq!(first.op, Op::Write);
    assert_eq!(first.offset_bytes, 9_056_014_336);
    assert_eq!(first.len_bytes, 2048);
    assert_eq!(first.completion_ns, Some(first.time_ns + 2833 * 100));
    assert!(recs.iter().all(|r| r.time_ns % 100 == 0 && r.device == 0));
    // The sample has one timestamp twice (128166385432702750, lines 148-149 of the CSV).
    let dup = recs
        .iter()
        .filter(|r| r.time_ns == 128_166_385_432_702_750 * 100)
        .count();
    assert_eq!(dup, 2);
}

#[test]
fn blktrace_binary_sample_facts() {
    let path = dir().join("blktrace_viewer_sample.blktrace.0");
    let bytes = std::fs::read(&path).unwrap();
    // README: magic 0x65617407 (little endian).
    assert_eq!(
        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        0x6561_7407
    );
    let (_, recs) = read("blktrace_viewer_sample.blktrace.0", Event::D);
    // README: 963 read requests of 4 KiB reach the device (ISSUE events).
    assert_eq!(recs.len(), 963);
    assert!(recs.iter().all(|r| r.op == Op::Read && r.len_bytes == 4096));
    assert!(recs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));

    // The same records from a big-endian copy of the file.
    let swapped = swap_blktrace(&bytes);
    let opts = ReadOptions::default();
    let be: Vec<_> = open_bytes("be", swapped, &opts)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(be, recs);
}

/// Byte-swaps every header field of a little-endian blktrace file (payloads unchanged).
fn swap_blktrace(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut at = 0;
    while at + 48 <= out.len() {
        let pdu = u16::from_le_bytes([out[at + 46], out[at + 47]]) as usize;
        for (off, width) in [
            (0, 4),
            (4, 4),
            (8, 8),
            (16, 8),
            (24, 4),
            (28, 4),
            (32, 4),
            (36, 4),
            (40, 4),
            (44, 2),
            (46, 2),
        ] {
            out[at + off..at + off + width].reverse();
        }
        at += 48 + pdu;
    }
    out
}

#[test]
fn blkparse_sample_facts() {
    // Counted with awk on the action column and matching blkparse's own trailer:
    // Writes Queued 248 (1,154 KiB), Dispatches 23 (flushes, shown as reads) + 119 writes,
    // Completed 23 + 142.
    let (_, q) = read("blktrace_merge_nvme0n1_blkparse.txt", Event::Q);
    assert_eq!(q.len(), 248);
    assert_eq!(q.iter().filter(|r| r.op == Op::Flush).count(), 23);
    let q_bytes: u64 = q
        .iter()
        .filter(|r| r.op == Op::Write)
        .map(|r| r.len_bytes)
        .sum();
    assert_eq!(q_bytes, 1154 * 1024);
    let (_, d) = read("blktrace_merge_nvme0n1_blkparse.txt", Event::D);
    assert_eq!(d.len(), 142);
    assert_eq!(d.iter().filter(|r| r.op == Op::Write).count(), 119);
    assert_eq!(d.iter().filter(|r| r.op == Op::Flush).count(), 23);
    // Every dispatched request completes in this trace.
    assert!(
        d.iter().all(|r| r.completion_ns.is_some()),
        "a D record has no completion"
    );
    assert!(d.iter().all(|r| r.device == (259 << 20)));
    let (_, c) = read("blktrace_merge_nvme0n1_blkparse.txt", Event::C);
    assert_eq!(c.len(), 165);
    // The completions after flushes (`C WFS <sector> [0]`) carry no data: flushes, so the
    // completed writes are the 119 dispatched ones.
    assert_eq!(c.iter().filter(|r| r.op == Op::Write).count(), 119);
    let rep = analyze(
        d.into_iter().map(Ok),
        "blkparse",
        "blkparse",
        &AnalyzeOptions::default(),
    )
    .unwrap();
    assert_eq!(rep.total.writes, 119);
    assert!(rep.total.qd_breakdown.is_some());
}

#[test]
fn a_disksim_ascii_trace_is_not_given_a_time_unit_by_guess() {
    let e = open_path(
        &dir().join("mqsim_tpcc-small.trace"),
        &ReadOptions::default(),
    )
    .err()
    .expect("ms or ns cannot be told from the file");
    let e = e.to_string();
    assert!(
        e.contains("pass --format disksim (ms) or --format mqsim (ns)"),
        "{e}"
    );
    // Read as classic DiskSim, the first time (938513000) is in ms: a million times later.
    let opts = ReadOptions {
        format: Some(Format::Disksim),
        ..ReadOptions::default()
    };
    let mut r = open_path(&dir().join("mqsim_tpcc-small.trace"), &opts).unwrap();
    assert_eq!(
        r.next_record().unwrap().unwrap().time_ns,
        938_513_000_000_000
    );
}

#[test]
fn mqsim_sample_facts() {
    let (_, recs) = read("mqsim_tpcc-small.trace", Event::D);
    // README: 6,999 requests.
    assert_eq!(recs.len(), 6999);
    // First line: 938513000 4 264719034 16 0 (ns, device, sector, sectors, 0 = write).
    assert_eq!(recs[0].time_ns, 938_513_000);
    assert_eq!(recs[0].device, 4);
    assert_eq!(recs[0].offset_bytes, 264_719_034 * 512);
    assert_eq!(recs[0].len_bytes, 16 * 512);
    assert_eq!(recs[0].op, Op::Write);
}

#[test]
fn fio_sample_facts() {
    let (_, recs) = read("fio_t0038_v3.iolog", Event::D);
    // 24 lines: header, add, open, 10 trims, 10 writes of 4 KiB, close.
    assert_eq!(recs.len(), 20);
    assert_eq!(recs.iter().filter(|r| r.op == Op::Trim).count(), 10);
    let writes: Vec<_> = recs.iter().filter(|r| r.op == Op::Write).collect();
    assert_eq!(writes.len(), 10);
    assert!(writes.iter().all(|r| r.len_bytes == 4096));
    assert_eq!(writes[0].time_ns, 10_752_000);
    assert_eq!(writes[9].offset_bytes, 36_864);
}

#[test]
fn replay_plans_exactly_the_samples_data_requests() {
    use iolab_trace::replay::{recorded_queue_depth, Replay, ReplayOptions, Timing};
    use iolab_trace::Reorder;
    // (sample, event, reads + writes counted above / in the README)
    for (name, want) in [
        ("msr_hm_0_first1000.csv", 1000),
        ("blktrace_viewer_sample.blktrace.0", 963),
        ("blktrace_merge_nvme0n1_blkparse.txt", 119),
        ("mqsim_tpcc-small.trace", 6999),
        ("fio_t0038_v3.iolog", 10),
    ] {
        let (_, recs) = read(name, Event::D);
        for timing in [
            Timing::Timestamps {
                scale: 1.0,
                idle_cap_ns: Some(25_000_000),
            },
            Timing::AsFastAsPossible,
        ] {
            let opts = ReplayOptions {
                timing,
                ..ReplayOptions::new(1 << 20, 64 << 20)
            };
            let sorted = Reorder::new(recs.iter().copied().map(Ok), 1 << 16);
            let mut replay = Replay::new(sorted, opts).unwrap();
            let ios: Vec<_> = replay.by_ref().collect::<Result<_, _>>().unwrap();
            assert_eq!(ios.len(), want, "{name}");
            let st = replay.stats();
            assert_eq!(st.planned as usize, want, "{name}");
            assert_eq!(st.late, 0, "{name}");
            assert!(ios
                .iter()
                .all(|i| i.offset >= 1 << 20 && i.offset + i.len <= 65 << 20 && i.len > 0));
            if let Timing::Timestamps { .. } = timing {
                assert_eq!(ios[0].at_ns, Some(0), "{name}");
                assert!(ios.windows(2).all(|w| w[0].at_ns <= w[1].at_ns), "{name}");
                // No gap longer than the cap.
                assert!(
                    ios.windows(2)
                        .all(|w| w[1].at_ns.unwrap() - w[0].at_ns.unwrap() <= 25_000_000),
                    "{name}"
                );
            } else {
                assert!(ios.iter().all(|i| i.at_ns.is_none()));
            }
        }
        let qd = recorded_queue_depth(recs.iter().copied(), 4);
        let has_completions = recs.iter().any(|r| r.completion_ns.is_some());
        assert_eq!(qd.measured, has_completions, "{name}");
        assert!(
            qd.suggested() >= 1 && qd.max >= qd.suggested(),
            "{name}: {qd:?}"
        );
    }
}
