//! Analysing a synthesised trace reproduces its profile within 2 percentage points per bucket.

use iolab_trace::profile::BUILTIN;
use iolab_trace::{
    analyze, open_bytes, write_to_vec, AnalyzeOptions, Format, Profile, ReadOptions, Synth,
    SynthOptions, WriteOptions,
};

fn within(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:.3}, profile says {want:.3} (tolerance {tol})"
    );
}

#[test]
fn builtin_profiles_are_reproduced() {
    for (name, _) in BUILTIN {
        let p = Profile::load(name).unwrap();
        // About 40k requests each: big enough for 2 pp, small enough for a quick test.
        let opts = SynthOptions {
            requests: Some(40_000),
            seed: 42,
            ..SynthOptions::default()
        };
        let synth = Synth::new(&p, &opts).unwrap();
        let plan = synth.plan().clone();
        let recs: Vec<_> = synth.collect();
        assert_eq!(recs.len() as u64, plan.requests, "{name}");
        // Through a real file format (MSR keeps completions), then analysed.
        let bytes = write_to_vec(Format::Msr, &recs, &WriteOptions::default()).unwrap();
        let reader = open_bytes(name, bytes, &ReadOptions::default()).unwrap();
        let rep = analyze(reader, name, "msr", &AnalyzeOptions::default()).unwrap();
        let t = &rep.total;
        assert_eq!(
            rep.out_of_order, 0,
            "{name}: synth output must be in time order"
        );
        assert_eq!(t.requests, 40_000, "{name}");
        let read_share = p.reads as f64 * 100.0 / (p.reads + p.writes) as f64;
        within(&format!("{name} read %"), t.read_pct, read_share, 0.01);
        for (b, want) in t.size_breakdown.iter().zip(p.size_vector()) {
            within(&format!("{name} size {}", b.label), b.pct, want, 2.0);
        }
        let qd = t.qd_breakdown.as_ref().expect("MSR carries completions");
        for (b, want) in qd.iter().zip(p.qd_vector()) {
            within(&format!("{name} QD {}", b.label), b.pct, want, 2.0);
        }
        let worst_size = t
            .size_breakdown
            .iter()
            .zip(p.size_vector())
            .map(|(b, w)| (b.pct - w).abs())
            .fold(0.0, f64::max);
        let worst_qd = qd
            .iter()
            .zip(p.qd_vector())
            .map(|(b, w)| (b.pct - w).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "{name}: worst size bucket off by {worst_size:.2} pp, worst QD bucket {worst_qd:.2} pp, \
             sequential {:.2} % (profile {}), GB read {:.3} / written {:.3}, avg QD busy {:.2} (published {:?}, planned {:.2})",
            t.sequential_pct, p.sequential_pct, t.gb_read, t.gb_written, t.avg_qd_busy.unwrap_or(0.0), p.avg_qd, plan.planned_avg_qd
        );
        // The mean depth is what the plan says; the Destroyer's breakdown allows its published
        // average (Heavy's and Light's need more requests past 32 than 40k give).
        let avg = t.avg_qd_at_arrival.expect("MSR carries completions");
        within(&format!("{name} avg QD"), avg, plan.planned_avg_qd, 0.01);
        if name == "destroyer" {
            within("destroyer avg QD", avg, p.avg_qd.unwrap(), 0.1);
        }
        within(
            &format!("{name} sequential %"),
            t.sequential_pct,
            p.sequential_pct,
            2.0,
        );
        // Volumes: what the plan reached, and within 5 % of the profile for these profiles.
        let gb = p.gb_unit.bytes();
        let f = 40_000.0 / (p.reads + p.writes) as f64;
        let want_r = p.gb_read * gb * f;
        let want_w = p.gb_written * gb * f;
        within(
            &format!("{name} read volume ratio"),
            t.bytes_read as f64 / want_r,
            1.0,
            0.05,
        );
        within(
            &format!("{name} write volume ratio"),
            t.bytes_written as f64 / want_w,
            1.0,
            0.05,
        );
        assert!(
            t.span_bytes as f64 <= p.footprint_gib * (1u64 << 30) as f64,
            "{name} span"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_trace_and_scale_scales() {
    let p = Profile::load("light").unwrap();
    let a: Vec<_> = Synth::new(
        &p,
        &SynthOptions {
            scale: 0.01,
            ..SynthOptions::default()
        },
    )
    .unwrap()
    .collect();
    let b: Vec<_> = Synth::new(
        &p,
        &SynthOptions {
            scale: 0.01,
            ..SynthOptions::default()
        },
    )
    .unwrap()
    .collect();
    assert_eq!(a, b);
    let expect = ((p.reads + p.writes) as f64 * 0.01).round() as usize;
    assert_eq!(a.len(), expect);
    assert!(Synth::new(
        &p,
        &SynthOptions {
            requests: Some(0),
            ..SynthOptions::default()
        }
    )
    .is_err());
    let tiny: Vec<_> = Synth::new(
        &p,
        &SynthOptions {
            requests: Some(10),
            ..SynthOptions::default()
        },
    )
    .unwrap()
    .collect();
    assert_eq!(tiny.len(), 10);
}
