use super::*;
use crate::Rng;

fn rec(t: u64, op: Op, off: u64, len: u64) -> TraceRecord {
    TraceRecord {
        time_ns: t,
        device: 0,
        op,
        offset_bytes: off,
        len_bytes: len,
        completion_ns: None,
    }
}

fn plan_all(recs: &[TraceRecord], opts: ReplayOptions) -> (Vec<ReplayIo>, ReplayStats) {
    let mut r = Replay::new(recs.iter().copied().map(Ok), opts).unwrap();
    let ios = r.by_ref().collect::<Result<Vec<_>>>().unwrap();
    (ios, r.stats())
}

#[test]
fn every_request_placed_away_from_its_offset_is_counted_once() {
    let mib = 1 << 20;
    let recs = [
        rec(0, Op::Read, 0, 4096),               // fits
        rec(1, Op::Read, 10 * mib, 4096),        // beyond a 1 MiB span: wrapped
        rec(2, Op::Read, mib - 4096, 8192),      // runs past the end: moved down
        rec(3, Op::Read, 10 * mib - 4096, 8192), // wrapped and moved down: once
    ];
    let (_, st) = plan_all(&recs, ReplayOptions::new(0, mib));
    assert_eq!(st.moved, 3);
    assert_eq!(st.clamped, 0);
}

#[test]
fn requests_sharing_a_timestamp_are_counted_with_the_longest_run() {
    let s = 1_000_000_000;
    let recs = [
        rec(s, Op::Read, 0, 4096),
        rec(s, Op::Write, 0, 4096),
        rec(s, Op::Read, 0, 4096),
        rec(2 * s, Op::Read, 0, 4096),
        rec(2 * s, Op::Trim, 0, 4096), // not planned: not counted
        rec(2 * s, Op::Read, 0, 4096),
    ];
    let (_, st) = plan_all(&recs, ReplayOptions::new(0, 1 << 20));
    assert_eq!(st.same_time, 3);
    assert_eq!(st.largest_same_time_run, 3);
}

fn timed(scale: f64, cap: Option<u64>) -> ReplayOptions {
    ReplayOptions {
        timing: Timing::Timestamps {
            scale,
            idle_cap_ns: cap,
        },
        ..ReplayOptions::new(0, 1 << 40)
    }
}

#[test]
fn faithful_timing_is_t_minus_t0_over_scale() {
    let t0 = 128_166_385_295_514_600;
    let recs: Vec<_> = [0u64, 100, 1_000, 50_000_000, 50_000_001]
        .iter()
        .map(|d| rec(t0 + d, Op::Read, 0, 4096))
        .collect();
    let (ios, _) = plan_all(&recs, timed(1.0, None));
    let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
    assert_eq!(at, vec![0, 100, 1_000, 50_000_000, 50_000_001]);
    let (ios, _) = plan_all(&recs, timed(4.0, None));
    let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
    assert_eq!(at, vec![0, 25, 250, 12_500_000, 12_500_000]);
    let (ios, _) = plan_all(&recs, timed(0.5, None));
    assert_eq!(ios[3].at_ns, Some(100_000_000));
}

#[test]
fn gaps_are_capped_before_scaling() {
    // Gaps: 10 ms, 1 s, 25 ms exactly, 30 ms.
    let ms = 1_000_000;
    let recs: Vec<_> = [0, 10 * ms, 1010 * ms, 1035 * ms, 1065 * ms]
        .iter()
        .map(|&t| rec(t, Op::Write, 0, 4096))
        .collect();
    let (ios, st) = plan_all(&recs, timed(1.0, Some(25 * ms)));
    let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
    assert_eq!(at, vec![0, 10 * ms, 35 * ms, 60 * ms, 85 * ms]);
    assert_eq!(st.gaps_capped, 2);
    assert_eq!(st.idle_removed_ns, 975 * ms + 5 * ms);
    // The cap is in trace time: at scale 2 every due time halves.
    let (ios, _) = plan_all(&recs, timed(2.0, Some(25 * ms)));
    let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
    assert_eq!(at, vec![0, 5 * ms, 17_500_000, 30 * ms, 42_500_000]);
    // Gaps are between planned requests: with writes filtered out, none is left.
    let mixed = [
        rec(0, Op::Read, 0, 4096),
        rec(ms, Op::Write, 0, 4096),
        rec(2 * ms, Op::Read, 0, 4096),
    ];
    let opts = ReplayOptions {
        writes: false,
        ..timed(1.0, Some(ms / 2))
    };
    let (ios, st) = plan_all(&mixed, opts);
    assert_eq!(ios[1].at_ns, Some(ms / 2));
    assert_eq!(st.gaps_capped, 1);
}

#[test]
fn late_records_get_no_gap() {
    let recs = [
        rec(100, Op::Read, 0, 4096),
        rec(50, Op::Read, 0, 4096),
        rec(150, Op::Read, 0, 4096),
    ];
    let (ios, st) = plan_all(&recs, timed(1.0, None));
    let at: Vec<_> = ios.iter().map(|i| i.at_ns.unwrap()).collect();
    assert_eq!(at, vec![0, 0, 50]);
    assert_eq!(st.late, 1);
}

#[test]
fn as_fast_as_possible_has_no_times() {
    let recs = [rec(0, Op::Read, 0, 512), rec(9, Op::Write, 512, 512)];
    let opts = ReplayOptions {
        timing: Timing::AsFastAsPossible,
        ..ReplayOptions::new(0, 1 << 20)
    };
    let (ios, _) = plan_all(&recs, opts);
    assert!(ios.iter().all(|i| i.at_ns.is_none()));
    assert_eq!(ios.len(), 2);
    assert!(ios[1].write && !ios[0].write);
}

#[test]
fn remap_stays_in_span_and_aligned() {
    let mut rng = Rng::new(17);
    for (span_start, span_len, align) in [
        (0u64, 1u64 << 30, 4096u64),
        (1 << 20, 10_000_000, 4096),
        (4096 * 3, 8192, 4096),
        (512 * 7, 1_000_000, 512),
        (0, 4096, 4096),
        (1000, 12_345, 1),
    ] {
        for remap in [
            Remap::Wrap,
            Remap::Scale {
                from_start: 1 << 20,
                from_len: 1 << 40,
            },
        ] {
            let opts = ReplayOptions {
                align,
                remap,
                ..ReplayOptions::new(span_start, span_len)
            };
            let mut p = ReplayPlanner::new(opts).unwrap();
            for i in 0..20_000u64 {
                let off = match i % 4 {
                    0 => rng.next_u64(),
                    1 => rng.below(1 << 41),
                    2 => u64::MAX - rng.below(1 << 20),
                    _ => rng.below(span_len * 2),
                };
                let len = match i % 5 {
                    0 => 0,
                    1 => u64::MAX - rng.below(8),
                    2 => rng.below(1 << 32),
                    _ => rng.below(1 << 20),
                };
                let io = p.plan(&rec(i, Op::Read, off, len)).unwrap();
                let end = span_start + span_len;
                assert!(io.offset >= span_start, "{io:?}");
                assert!(
                    io.offset + io.len <= end,
                    "{io:?} span {span_start}+{span_len}"
                );
                assert!(io.len > 0);
                assert_eq!(io.offset % align, 0, "{io:?}");
                assert_eq!(io.len % align, 0, "{io:?}");
            }
        }
    }
}

#[test]
fn remap_details() {
    let opts = ReplayOptions::new(1 << 20, 1 << 20);
    let mut p = ReplayPlanner::new(opts).unwrap();
    // Fits: kept relative to the span start.
    let io = p.plan(&rec(0, Op::Read, 8192, 4096)).unwrap();
    assert_eq!((io.offset, io.len), ((1 << 20) + 8192, 4096));
    // Wraps, aligns down, rounds the length up.
    let io = p.plan(&rec(0, Op::Read, (1 << 20) + 5000, 100)).unwrap();
    assert_eq!((io.offset, io.len), ((1 << 20) + 4096, 4096));
    // Runs past the end: moved down to end at it.
    let io = p.plan(&rec(0, Op::Write, (1 << 20) - 4096, 8192)).unwrap();
    assert_eq!((io.offset, io.len), ((2 << 20) - 8192, 8192));
    // Longer than the span: cut to it.
    let io = p.plan(&rec(0, Op::Write, 0, 3 << 20)).unwrap();
    assert_eq!((io.offset, io.len), (1 << 20, 1 << 20));
    assert_eq!(p.stats().clamped, 1);
    // Longer than a request may be, even near u64::MAX: cut to the longest (aligned).
    let mut short = ReplayPlanner::new(ReplayOptions {
        max_len: 10_000,
        ..ReplayOptions::new(1 << 20, 1 << 20)
    })
    .unwrap();
    for len in [100_000_000, u64::MAX - 1] {
        let io = short.plan(&rec(0, Op::Write, 4096, len)).unwrap();
        assert_eq!((io.offset, io.len), ((1 << 20) + 4096, 8192), "{len}");
    }
    assert_eq!(short.stats().clamped, 2);
    // Scale: the trace's 1 TiB onto the 1 MiB span keeps relative position.
    let opts = ReplayOptions {
        remap: Remap::Scale {
            from_start: 0,
            from_len: 1 << 40,
        },
        ..ReplayOptions::new(0, 1 << 20)
    };
    let mut p = ReplayPlanner::new(opts).unwrap();
    let io = p.plan(&rec(0, Op::Read, 1 << 39, 4096)).unwrap();
    assert_eq!(io.offset, 1 << 19);
}

#[test]
fn counts_match_the_trace_after_filtering() {
    let mut rng = Rng::new(5);
    let recs: Vec<_> = (0..10_000u64)
        .map(|i| TraceRecord {
            device: rng.below(3) as u32,
            ..rec(
                i * 1000,
                [Op::Read, Op::Write, Op::Trim, Op::Flush][rng.below(4) as usize],
                rng.below(1 << 18) * 4096,
                4096,
            )
        })
        .collect();
    for (reads, writes, devices) in [
        (true, true, None),
        (true, false, None),
        (false, true, Some(vec![1])),
        (true, true, Some(vec![0, 2])),
    ] {
        let opts = ReplayOptions {
            reads,
            writes,
            devices: devices.clone(),
            ..ReplayOptions::new(0, 1 << 30)
        };
        let (ios, st) = plan_all(&recs, opts);
        let want: Vec<_> = recs
            .iter()
            .filter(|r| (r.op == Op::Read && reads) || (r.op == Op::Write && writes))
            .filter(|r| devices.as_ref().is_none_or(|d| d.contains(&r.device)))
            .collect();
        assert_eq!(ios.len(), want.len());
        assert_eq!(st.planned as usize, want.len());
        assert_eq!(
            st.planned + st.not_data + st.filtered_op + st.filtered_device,
            recs.len() as u64
        );
        for (io, r) in ios.iter().zip(want) {
            assert_eq!(io.write, r.op == Op::Write);
            assert_eq!(io.offset, r.offset_bytes);
            assert_eq!(io.len, r.len_bytes);
        }
    }
}

#[test]
fn bad_options_are_refused() {
    let ok = ReplayOptions::new(0, 1 << 20);
    assert!(ReplayPlanner::new(ok.clone()).is_ok());
    for bad in [
        ReplayOptions {
            align: 0,
            ..ok.clone()
        },
        ReplayOptions {
            span_start: 100,
            ..ok.clone()
        },
        ReplayOptions {
            span_len: 4095,
            ..ok.clone()
        },
        ReplayOptions {
            span_start: u64::MAX - 4095,
            ..ok.clone()
        },
        ReplayOptions {
            reads: false,
            writes: false,
            ..ok.clone()
        },
        ReplayOptions {
            devices: Some(vec![]),
            ..ok.clone()
        },
        ReplayOptions {
            timing: Timing::Timestamps {
                scale: 0.0,
                idle_cap_ns: None,
            },
            ..ok.clone()
        },
        ReplayOptions {
            timing: Timing::Timestamps {
                scale: f64::NAN,
                idle_cap_ns: None,
            },
            ..ok.clone()
        },
        ReplayOptions {
            remap: Remap::Scale {
                from_start: 0,
                from_len: 0,
            },
            ..ok.clone()
        },
    ] {
        let e = ReplayPlanner::new(bad.clone()).expect_err(&format!("{bad:?}"));
        assert!(e.to_string().starts_with("replay: "), "{e}");
    }
}

fn io_c(t: u64, c: u64) -> TraceRecord {
    TraceRecord {
        completion_ns: Some(c),
        ..rec(t, Op::Read, 0, 4096)
    }
}

#[test]
fn recorded_depth_from_completions() {
    // 0..100, 10..50, 20..200 overlap; 300..310 alone (as the analysis test).
    let recs = [io_c(0, 100), io_c(10, 50), io_c(20, 200), io_c(300, 310)];
    let qd = recorded_queue_depth(recs, 7);
    assert!(qd.measured);
    assert_eq!(qd.requests_with_completion, 4);
    assert_eq!(qd.max, 3);
    assert!((qd.mean_at_arrival - 7.0 / 4.0).abs() < 1e-12);
    assert!(
        (qd.mean_busy - 330.0 / 210.0).abs() < 1e-12,
        "{}",
        qd.mean_busy
    );
    assert_eq!(qd.suggested(), 2);
    // A steady depth of 4: each request completes when the fourth after it arrives.
    let steady: Vec<_> = (0..1000u64).map(|i| io_c(i * 10, i * 10 + 40)).collect();
    let qd = recorded_queue_depth(steady, 1);
    assert_eq!(qd.max, 4);
    assert!((qd.mean_busy - 4.0).abs() < 0.02, "{}", qd.mean_busy);
    assert_eq!(qd.suggested(), 4);
    // No completions: the default.
    let none = [rec(0, Op::Read, 0, 4096)];
    let qd = recorded_queue_depth(none, 8);
    assert!(!qd.measured);
    assert_eq!((qd.max, qd.suggested()), (8, 8));
    assert_eq!(recorded_queue_depth([], 0).suggested(), 1);
    // Completions that never come do not grow memory without bound.
    let stuck = (0..(MAX_TRACKED_OUTSTANDING as u64 + 10)).map(|i| io_c(i, u64::MAX));
    let qd = recorded_queue_depth(stuck, 1);
    assert_eq!(qd.max as usize, MAX_TRACKED_OUTSTANDING);
}

#[test]
fn storage_bench_metrics() {
    let ms = 1_000_000u64;
    // 10 I/Os: one at exactly 10 ms (not over), one at 50 ms, one at 150 ms.
    let mut lat = vec![100_000u64; 7];
    lat.extend([10 * ms, 50 * ms, 150 * ms]);
    let m = replay_metrics(&lat, 40_000_000, 2_000_000_000);
    assert_eq!(m.ios, 10);
    assert!((m.data_rate_mb_per_s - 20.0).abs() < 1e-9);
    let mean_us = (7.0 * 100.0 + 10_000.0 + 50_000.0 + 150_000.0) / 10.0;
    assert!((m.avg_latency_us - mean_us).abs() < 1e-9);
    assert!((m.pct_over_10ms - 20.0).abs() < 1e-9);
    assert!((m.pct_over_100ms - 10.0).abs() < 1e-9);
    // Empty and zero-time inputs give zeros, not NaN.
    let z = replay_metrics(&[], 0, 0);
    assert_eq!(
        (z.data_rate_mb_per_s, z.avg_latency_us, z.pct_over_10ms),
        (0.0, 0.0, 0.0)
    );
    // Accumulators merge to the same result.
    let (mut a, mut b) = (MetricsAcc::new(), MetricsAcc::new());
    for (i, &l) in lat.iter().enumerate() {
        let acc = if i % 2 == 0 { &mut a } else { &mut b };
        acc.add(4_000_000, l);
    }
    a.merge(&b);
    assert_eq!(a.finish(2_000_000_000), m);
}

#[test]
fn busy_time_is_the_union() {
    let mut iv = vec![(50, 60), (0, 10), (5, 20), (30, 40), (35, 38), (70, 65)];
    assert_eq!(busy_time_ns(&mut iv), 20 + 10 + 10);
    assert_eq!(busy_time_ns(&mut []), 0);
}
