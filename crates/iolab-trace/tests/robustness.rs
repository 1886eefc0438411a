//! No input makes a reader panic: thousands of random and mutated inputs per reader, with
//! and without `skip_bad`, with the format named and detected. (The cargo-fuzz targets in
//! fuzz/ do the same with coverage guidance; this test runs everywhere, on stable.)

use iolab_trace::{
    analyze, open_bytes, write_to_vec, AnalyzeOptions, Event, Format, Op, ReadOptions, Rng,
    TraceRecord, WriteOptions, ALL_FORMATS,
};

/// A small valid trace in `format`, as a base for mutations.
fn seed(format: Format) -> Vec<u8> {
    let recs: Vec<TraceRecord> = (0..8u64)
        .map(|i| TraceRecord {
            time_ns: 1_000_000_000 * (i + 1),
            device: if matches!(format, Format::Blkparse | Format::Blktrace) {
                8 << 20
            } else {
                0
            },
            op: if i % 3 == 0 { Op::Write } else { Op::Read },
            offset_bytes: 4096 * i * 7,
            len_bytes: 4096,
            completion_ns: Some(1_000_000_000 * (i + 1) + 500_000),
        })
        .collect();
    write_to_vec(format, &recs, &WriteOptions::default()).expect("seed trace")
}

fn mutate(base: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(v.len() as u64 + 1) as usize;
        match rng.below(5) {
            0 if at < v.len() => v[at] = rng.next_u64() as u8,
            1 if at < v.len() => {
                v.remove(at);
            }
            2 => v.insert(
                at,
                b"0123456789,.+ \n\r-[]RWDFNQCabc\xff\x00"[rng.below(30) as usize],
            ),
            3 => v.truncate(at),
            _ => {
                // Duplicate a chunk (repeats lines and records).
                let end = (at + rng.below(64) as usize).min(v.len());
                let chunk = v[at..end].to_vec();
                v.splice(at..at, chunk);
            }
        }
    }
    v
}

fn drain(data: Vec<u8>, opts: &ReadOptions) {
    let Ok(r) = open_bytes("fuzz", data, opts) else {
        return;
    };
    // Analysis must not panic on whatever a reader lets through either.
    let _ = analyze(
        r.take(10_000),
        "fuzz",
        "fuzz",
        &AnalyzeOptions { reorder_window: 16 },
    );
}

#[test]
fn random_and_mutated_inputs_never_panic() {
    let mut rng = Rng::new(0x5eed);
    for format in ALL_FORMATS {
        let base = seed(format);
        for i in 0..2500 {
            let data = if i % 5 == 0 {
                let n = rng.below(400) as usize;
                (0..n).map(|_| rng.next_u64() as u8).collect()
            } else {
                mutate(&base, &mut rng)
            };
            for skip_bad in [false, true] {
                let event = [Event::Q, Event::D, Event::C][i % 3];
                let named = ReadOptions {
                    format: Some(format),
                    skip_bad,
                    event,
                    spc_block_bytes: 512,
                };
                drain(data.clone(), &named);
            }
            if i % 10 == 0 {
                drain(
                    data,
                    &ReadOptions {
                        skip_bad: true,
                        ..ReadOptions::default()
                    },
                );
            }
        }
    }
}

#[test]
fn skip_bad_keeps_the_good_records() {
    for format in ALL_FORMATS {
        let mut data = seed(format);
        if format == Format::Blktrace {
            continue; // binary: covered by the resync case below
        }
        // A garbage line in the middle.
        let mid = data
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(3)
            .map(|(i, _)| i + 1)
            .unwrap();
        data.splice(mid..mid, b"9,zz,garbage,line\n".iter().copied());
        let opts = ReadOptions {
            format: Some(format),
            skip_bad: true,
            ..ReadOptions::default()
        };
        let r = open_bytes("x", data, &opts).unwrap();
        let got = r.collect::<Result<Vec<_>, _>>().unwrap().len();
        assert_eq!(got, 8, "{format}");
    }
    // blktrace: a garbage block between records is skipped by looking for the next magic.
    let base = seed(Format::Blktrace);
    let mut data = base[..48 * 4].to_vec();
    data.extend_from_slice(&[0xAB; 37]);
    data.extend_from_slice(&base[48 * 4..]);
    let opts = ReadOptions {
        skip_bad: true,
        ..ReadOptions::default()
    };
    let mut r = open_bytes("x", data, &opts).unwrap();
    let got = r.by_ref().collect::<Result<Vec<_>, _>>().unwrap().len();
    assert_eq!(got, 8);
    assert_eq!(r.bad_records(), 1);
}
