//! Every format round-trips: records the format can express are written, read back (with the
//! format detected and with it named) and compared for equality.

use iolab_trace::{
    open_bytes, write_to_vec, Event, Format, Op, ReadOptions, Rng, TraceRecord, WriteOptions,
    ALL_FORMATS,
};

/// Records within what `format` can express: its time unit, sector alignment, operations,
/// completions and device numbering.
fn records(format: Format, seed: u64) -> Vec<TraceRecord> {
    let mut rng = Rng::new(seed);
    let (time_unit, sector) = match format {
        Format::Msr => (100, 1),
        Format::Spc => (1000, 512),
        Format::Fio2 | Format::Fio3 | Format::Alibaba => (1000, 1),
        Format::Tencent => (1_000_000_000, 512),
        Format::Systor => (1, 1),
        Format::Disksim | Format::Mqsim => (1, 512),
        Format::Blkparse | Format::Blktrace => (1, 512),
    };
    let ops: &[Op] = match format {
        Format::Fio2 | Format::Fio3 | Format::Blkparse | Format::Blktrace => {
            &[Op::Read, Op::Write, Op::Trim, Op::Flush]
        }
        _ => &[Op::Read, Op::Write],
    };
    let has_completion = matches!(
        format,
        Format::Msr | Format::Systor | Format::Blkparse | Format::Blktrace
    );
    let mut t = 1_000_000_000_000u64;
    let mut out = Vec::new();
    for i in 0..300u64 {
        t += (1 + rng.below(5_000_000)) * time_unit;
        let op = ops[rng.below(ops.len() as u64) as usize];
        let (mut offset, mut len) = (rng.below(1 << 30) * sector, (1 + rng.below(256)) * sector);
        if op == Op::Flush {
            // Flushes carry no range in blkparse/blktrace/fio.
            offset = 0;
            len = 0;
        }
        // fio numbers devices in order of first appearance: introduce them in order.
        let device = match format {
            Format::Fio2 | Format::Fio3 => (i / 100) as u32,
            Format::Blkparse | Format::Blktrace => {
                ((8 + rng.below(2) as u32) << 20) | rng.below(4) as u32
            }
            _ => rng.below(3) as u32,
        };
        let completion_ns = has_completion.then(|| t + (1 + rng.below(1_000_000)) * time_unit);
        out.push(TraceRecord {
            time_ns: t,
            device,
            op,
            offset_bytes: offset,
            len_bytes: len,
            completion_ns,
        });
    }
    if matches!(format, Format::Blkparse | Format::Blktrace) {
        // Pairing matches completions by (device, sector): keep keys unique in flight.
        out.dedup_by_key(|r| (r.device, r.offset_bytes));
    }
    out
}

/// Whether detection names `format`: DiskSim ASCII is refused (its unit, ms for DiskSim and
/// ns for MQSim, cannot be told) and must be named.
fn detected(format: Format) -> bool {
    !matches!(format, Format::Disksim | Format::Mqsim)
}

fn check(format: Format, wopts: &WriteOptions, ropts: &ReadOptions, want: &[TraceRecord]) {
    let bytes = write_to_vec(format, want, wopts).unwrap();
    for detect in [false, detected(format)] {
        let opts = ReadOptions {
            format: (!detect).then_some(format),
            ..ropts.clone()
        };
        let r = open_bytes("roundtrip", bytes.clone(), &opts)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(r.format(), format);
        let got: Vec<_> = r
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(got.len(), want.len(), "{format} (detect {detect})");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, w, "{format} record {i} (detect {detect})");
        }
    }
}

#[test]
fn every_format_round_trips() {
    for format in ALL_FORMATS {
        let want = records(format, 7);
        check(
            format,
            &WriteOptions::default(),
            &ReadOptions::default(),
            &want,
        );
    }
}

#[test]
fn blktrace_both_byte_orders_and_blk_events() {
    for format in [Format::Blktrace, Format::Blkparse] {
        for big_endian in [false, true] {
            let want = records(format, 11);
            let w = WriteOptions {
                big_endian,
                ..WriteOptions::default()
            };
            check(format, &w, &ReadOptions::default(), &want);
        }
        for event in [Event::Q, Event::C] {
            let want: Vec<_> = records(format, 13)
                .into_iter()
                .map(|r| TraceRecord {
                    completion_ns: None,
                    ..r
                })
                .collect();
            let w = WriteOptions {
                event,
                ..WriteOptions::default()
            };
            let r = ReadOptions {
                event,
                ..ReadOptions::default()
            };
            check(format, &w, &r, &want);
        }
    }
}

#[test]
fn trims_and_flushes_are_counted_when_a_format_cannot_hold_them() {
    let recs = records(Format::Fio3, 3);
    let n_data = recs.iter().filter(|r| r.op.moves_data()).count();
    let mut w = iolab_trace::writer(Format::Msr, "x", Vec::new(), &WriteOptions::default());
    for r in &recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(w.skipped() as usize, recs.len() - n_data);
}

#[test]
fn fio_names_any_device_and_numbers_files_in_order() {
    let recs = [
        TraceRecord {
            time_ns: 5_000,
            device: 259 << 20,
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            completion_ns: None,
        },
        TraceRecord {
            time_ns: 9_000,
            device: 7,
            op: Op::Write,
            offset_bytes: 4096,
            len_bytes: 4096,
            completion_ns: None,
        },
    ];
    for format in [Format::Fio2, Format::Fio3] {
        let bytes = write_to_vec(format, &recs, &WriteOptions::default()).unwrap();
        let got: Vec<_> = open_bytes("f", bytes, &ReadOptions::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got.len(), 2, "{format}");
        assert_eq!((got[0].device, got[1].device), (0, 1), "{format}");
        assert_eq!((got[0].time_ns, got[1].time_ns), (5_000, 9_000), "{format}");
    }
}

#[test]
fn unsorted_input_is_analysed_in_time_order() {
    // Tencent rows out of time order (as in the real 50k sample): seconds, sectors.
    let csv =
        b"Timestamp,Offset,Size,IOType,VolumeID\n30,8,8,1,1\n10,0,8,1,1\n20,16,8,0,1\n".to_vec();
    let r = open_bytes("t.csv", csv.clone(), &ReadOptions::default()).unwrap();
    assert_eq!(r.format(), Format::Tencent);
    let rep =
        iolab_trace::analyze(r, "t", "tencent", &iolab_trace::AnalyzeOptions::default()).unwrap();
    assert_eq!(rep.out_of_order, 0);
    // In time order the requests are sector 0, 16, 8: one gap of 10 s, then 10 s.
    assert_eq!(rep.total.mean_interarrival_us, Some(10_000_000.0));
    let sorted =
        iolab_trace::sort_all(open_bytes("t.csv", csv.clone(), &ReadOptions::default()).unwrap())
            .unwrap();
    assert!(sorted.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    // A window of one cannot fix it, and says so.
    let r = open_bytes("t.csv", csv, &ReadOptions::default()).unwrap();
    let rep = iolab_trace::analyze(
        r,
        "t",
        "tencent",
        &iolab_trace::AnalyzeOptions { reorder_window: 1 },
    )
    .unwrap();
    assert!(rep.out_of_order > 0);
}

#[test]
fn sector_formats_write_the_sectors_a_request_touches() {
    // 100 bytes at 600 lie in sector 1; 1000 bytes at 0 touch sectors 0 and 1. blkparse
    // used to round the length down: the first became a zero-length write.
    let rec = |op, offset, len| TraceRecord {
        time_ns: 1_000_000,
        device: 8 << 20,
        op,
        offset_bytes: offset,
        len_bytes: len,
        completion_ns: None,
    };
    let recs = [rec(Op::Write, 600, 100), rec(Op::Read, 0, 1000)];
    let bytes = write_to_vec(Format::Blkparse, &recs, &WriteOptions::default()).unwrap();
    let opts = ReadOptions {
        format: Some(Format::Blkparse),
        ..ReadOptions::default()
    };
    let back: Vec<(u64, u64)> = open_bytes("t", bytes, &opts)
        .unwrap()
        .map(|r| r.map(|r| (r.offset_bytes, r.len_bytes)))
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, [(512, 512), (0, 1024)]);
}

/// Reads `bytes` as `format`, detected and named, and checks the records are `want`.
fn read_both(format: Format, bytes: &[u8], want: &[TraceRecord], what: &str) {
    for named in [None, Some(format)] {
        let opts = ReadOptions {
            // DiskSim ASCII is always named (see `detected`).
            format: named.or((!detected(format)).then_some(format)),
            ..ReadOptions::default()
        };
        let r = open_bytes("t", bytes.to_vec(), &opts)
            .unwrap_or_else(|e| panic!("{format} {what}: {e}"));
        assert_eq!(r.format(), format, "{what}");
        let got: Vec<_> = r
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{format} {what} (named {named:?}): {e}"));
        assert_eq!(got, want, "{format} {what} (named {named:?})");
    }
}

#[test]
fn a_byte_order_mark_before_a_text_trace_is_skipped() {
    for format in ALL_FORMATS.into_iter().filter(|f| *f != Format::Blktrace) {
        let want = records(format, 3);
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(write_to_vec(format, &want, &WriteOptions::default()).unwrap());
        read_both(format, &bytes, &want, "after a BOM");
    }
}

#[test]
fn header_rows_are_skipped_in_any_case() {
    let headers = [
        (Format::Tencent, "Timestamp,Offset,Size,IOType,VolumeID"),
        (Format::Alibaba, "device_id,opcode,offset,length,timestamp"),
        (Format::Systor, "Timestamp,Response,IOType,LUN,Offset,Size"),
    ];
    for (format, header) in headers {
        let want = records(format, 5);
        let mut body = write_to_vec(format, &want, &WriteOptions::default()).unwrap();
        if format == Format::Systor {
            // Its writer writes the header: take it off.
            let nl = body.iter().position(|&b| b == b'\n').unwrap();
            body.drain(..=nl);
        }
        for h in [
            header.to_string(),
            header.to_ascii_lowercase(),
            header.to_ascii_uppercase(),
        ] {
            let mut bytes = format!("{h}\n").into_bytes();
            bytes.extend_from_slice(&body);
            read_both(format, &bytes, &want, &h);
            // And after a BOM.
            bytes.splice(0..0, *b"\xef\xbb\xbf");
            read_both(format, &bytes, &want, &format!("BOM {h}"));
        }
    }
}

/// Hands over at most `n` bytes per read, as a pipe does when its writer flushes mid-line.
struct Trickle(std::io::Cursor<Vec<u8>>, usize);

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.1);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn detection_reads_on_to_the_end_of_the_first_line() {
    for format in ALL_FORMATS {
        let want = records(format, 9);
        let bytes = write_to_vec(format, &want, &WriteOptions::default()).unwrap();
        let input = Trickle(std::io::Cursor::new(bytes), 3);
        let opts = ReadOptions {
            format: (!detected(format)).then_some(format),
            ..ReadOptions::default()
        };
        let r = iolab_trace::open_reader("pipe", input, &opts)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(r.format(), format);
        let got: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(got, want, "{format}");
    }
    // A comment line is not the line that decides; the line after it is.
    let input = Trickle(
        std::io::Cursor::new(b"# a comment\n1000,h,0,Read,0,4096,10\n".to_vec()),
        13,
    );
    let r = iolab_trace::open_reader("pipe", input, &ReadOptions::default()).unwrap();
    assert_eq!(r.format(), Format::Msr);
}
