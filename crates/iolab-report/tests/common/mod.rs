//! Results built in code for the renderer tests: every value follows from the job's settings by
//! a fixed formula, so the fixtures (and the snapshots of their renderings) never change unless
//! the code does.
#![allow(dead_code)]

use iolab_core::hist::SparseHistogram;
use iolab_core::job::{Access, JobSpec};
use iolab_core::quick::QuickTest;
use iolab_core::result::*;
use iolab_core::size::ByteSize;
use std::path::{Path, PathBuf};

/// A direction's figures from IOPS, block size and mean latency.
fn direction(iops: f64, block: u64, lat_us: f64, seconds: f64) -> DirectionResult {
    let ios = (iops * seconds).round() as u64;
    let bw = iops * block as f64;
    let lat = lat_us * 1e3;
    DirectionResult {
        ios,
        bytes: ios * block,
        iops,
        bw_bytes_per_s: bw,
        bw_mb_per_s: bw / 1e6,
        bw_mib_per_s: bw / 1048576.0,
        lat_ns: LatencySummary {
            min: (lat * 0.5) as u64,
            mean: lat,
            stddev: lat * 0.2,
            max: (lat * 8.0) as u64,
            p50: (lat * 0.9) as u64,
            p90: (lat * 1.5) as u64,
            p99: (lat * 3.0) as u64,
            p99_9: (lat * 5.0) as u64,
            p99_99: (lat * 7.0) as u64,
        },
        service_lat_ns: None,
        lat_histogram: SparseHistogram {
            bucket_low_ns_and_count: vec![((lat * 0.9) as u64, ios)],
        },
        // Every sample where the histogram puts it.
        ios_over_10ms: Some(ios * u64::from((lat * 0.9) as u64 > 10_000_000)),
        ios_over_100ms: Some(ios * u64::from((lat * 0.9) as u64 > 100_000_000)),
    }
}

/// A job result: `iops` total, split by the job's read share; `step` places it in a suite.
pub fn job(spec: JobSpec, iops: f64, seconds: f64, step: Option<StepInfo>) -> JobResult {
    let job = spec.validate().expect("fixture job is valid");
    let block = job.block_sizes[0].bytes;
    let share = job.read_pct / 100.0;
    let lat_us = job.queue_depth as f64 * job.threads as f64 / iops * 1e6;
    let (ri, wi) = (iops * share, iops * (1.0 - share));
    JobResult {
        measured_ns: (seconds * 1e9) as u64,
        read: if ri > 0.0 {
            direction(ri, block, lat_us, seconds)
        } else {
            DirectionResult::default()
        },
        write: if wi > 0.0 {
            direction(wi, block, lat_us * 1.5, seconds)
        } else {
            DirectionResult::default()
        },
        cpu: CpuResult {
            user_s: seconds * 0.05,
            system_s: seconds * 0.2,
            ..CpuResult::default()
        },
        step,
        ..JobResult::unmeasured(job)
    }
}

fn spec(name: &str, access: Access, bs: u64, qd: u32) -> JobSpec {
    JobSpec {
        name: Some(name.into()),
        access: Some(access),
        block_size: Some(ByteSize(bs)),
        queue_depth: Some(qd),
        duration_s: Some(10.0),
        size: Some(ByteSize(1 << 30)),
        ..JobSpec::default()
    }
}

fn step(
    phase: &str,
    step: &str,
    chart: &str,
    sweep: &[(&str, f64)],
    round: Option<u32>,
) -> StepInfo {
    StepInfo {
        phase: phase.into(),
        step: step.into(),
        chart: chart.into(),
        sweep: sweep
            .iter()
            .map(|(k, v)| SweepValue {
                key: k.to_string(),
                value: *v,
            })
            .collect(),
        round,
    }
}

/// The frame of a result on `target` at `host`, with a SATA-like ceiling of 600 MB/s.
pub fn frame(kind: &str, target: &str, host: &str) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "iolab".into(),
            version: "0.1.0-fixture".into(),
        },
        kind: kind.into(),
        started_unix_s: 1_795_392_000.0,
        complete: true,
        incomplete_reason: None,
        host: HostInfo {
            hostname: host.into(),
            kernel: "6.1.0-fixture".into(),
            cpu_model: "Fixture CPU @ 3.0GHz".into(),
            cpus: 8,
            memory_bytes: 16 << 30,
        },
        target: TargetInfo {
            path: target.into(),
            kind: "block".into(),
            size_bytes: 256 << 30,
            logical_block_bytes: 512,
            engine: "io_uring".into(),
            modelled: false,
            model: None,
            probe: None,
            path_summary: Some(
                "Fixture SSD 256GB → sda → AHCI → SATA 6 Gb/s <narrowest> & x4".into(),
            ),
            path_ceiling_bytes_per_s: Some(600e6),
        },
        notes: vec!["a note with <markup> & \"quotes\"".into()],
        jobs: Vec::new(),
        suite: None,
        replay: None,
        scale: None,
    }
}

/// A suite result with a step of every chart kind. `speed` scales every figure (a second drive).
pub fn suite_result(target: &str, host: &str, speed: f64) -> RunResult {
    let mut r = frame("suite:fixture", target, host);
    let mut jobs = Vec::new();
    jobs.push(job(
        spec("prepare: fill pass 1", Access::Write, 128 << 10, 8),
        3000.0 * speed,
        20.0,
        Some(step("prepare", "fill pass 1", "table", &[], None)),
    ));
    // Scaling that flattens with depth (no libm calls: the values are exact on any machine).
    for (qd, gain) in [
        (1u32, 1.0),
        (2, 1.75),
        (4, 3.0),
        (8, 5.25),
        (16, 9.0),
        (32, 16.0),
    ] {
        let iops = speed * 9000.0 * gain;
        jobs.push(job(
            spec(
                &format!("Random read 4K QD{qd}"),
                Access::RandRead,
                4096,
                qd,
            ),
            iops,
            10.0,
            Some(step(
                "filled drive",
                "Random read 4K",
                "qd-lines",
                &[("queue_depth", qd as f64)],
                None,
            )),
        ));
    }
    for (i, bs) in [512u64, 4096, 65536, 1 << 20].into_iter().enumerate() {
        let mbps = speed * [40.0, 250.0, 480.0, 540.0][i];
        jobs.push(job(
            spec(&format!("Sequential read {bs}"), Access::Read, bs, 4),
            mbps * 1e6 / bs as f64,
            10.0,
            Some(step(
                "filled drive",
                "Sequential read",
                "bs-lines",
                &[("block_size", bs as f64)],
                None,
            )),
        ));
    }
    for pct in [100.0, 75.0, 50.0, 25.0, 0.0] {
        let mut s = spec(&format!("Mixed random 4K {pct}"), Access::RandRw, 4096, 3);
        s.read_pct = Some(pct);
        jobs.push(job(
            s,
            speed * (20000.0 + 150.0 * (pct - 50.0f64).abs()),
            10.0,
            Some(step(
                "filled drive",
                "Mixed random 4K",
                "mix-lines",
                &[("read_pct", pct)],
                None,
            )),
        ));
    }
    for (name, access) in [("Write", Access::Write), ("Read", Access::Read)] {
        for (i, bs) in [512u64, 4096, 131072, 1 << 20].into_iter().enumerate() {
            let mbps =
                speed * [30.0, 200.0, 500.0, 550.0][i] * if name == "Read" { 1.05 } else { 1.0 };
            jobs.push(job(
                spec(&format!("{name} {bs}"), access, bs, 4),
                mbps * 1e6 / bs as f64,
                5.0,
                Some(step(
                    "atto",
                    name,
                    "atto",
                    &[("block_size", bs as f64)],
                    None,
                )),
            ));
        }
    }
    for (name, access, bs, qd, mbps) in [
        ("SEQ1M Q8T1 read", Access::Read, 1u64 << 20, 8, 560.0),
        ("RND4K Q1T1 read", Access::RandRead, 4096, 1, 45.0),
    ] {
        jobs.push(job(
            spec(name, access, bs, qd),
            speed * mbps * 1e6 / bs as f64,
            5.0,
            Some(step("cdm", name, "bars", &[], None)),
        ));
    }
    // Performance consistency: high IOPS until the buffer fills, then a steady lower band.
    let mut pc = job(
        spec("Performance consistency", Access::RandWrite, 4096, 32),
        speed * 30000.0,
        60.0,
        Some(step(
            "filled drive",
            "Performance consistency",
            "scatter",
            &[],
            None,
        )),
    );
    pc.series = SeriesResult {
        interval_ms: 1000.0,
        t_end_s: (1..=60).map(|t| t as f64).collect(),
        read_iops: vec![0.0; 60],
        write_iops: (1..=60)
            .map(|t| {
                speed
                    * if t <= 20 {
                        80000.0
                    } else {
                        20000.0 + 1000.0 * (t % 7) as f64
                    }
            })
            .collect(),
        read_bytes_per_s: vec![0.0; 60],
        write_bytes_per_s: (1..=60)
            .map(|t| speed * 4096.0 * 20000.0 + t as f64)
            .collect(),
        mean_lat_ns: vec![1.6e6; 60],
        trim_iops: Vec::new(),
    };
    jobs.push(pc);
    for pct in [100.0, 50.0, 0.0] {
        for qd in [1u32, 4, 16] {
            let mut s = spec(&format!("Database {pct} QD{qd}"), Access::RandRw, 8192, qd);
            s.read_pct = Some(pct);
            jobs.push(job(
                s,
                speed * (5000.0 + 50.0 * pct) * (qd as f64).sqrt(),
                10.0,
                Some(step(
                    "patterns",
                    "Database",
                    "heatmap",
                    &[("read_pct", pct), ("queue_depth", qd as f64)],
                    None,
                )),
            ));
        }
    }
    // A step looped in rounds until steady state: write IOPS fall, then level off.
    let rounds = [9000.0, 6000.0, 4200.0, 4000.0, 4100.0, 3950.0, 4050.0];
    for (i, w) in rounds.iter().enumerate() {
        for pct in [100.0, 0.0] {
            for bs in [4096u64, 131072] {
                let mut s = spec(
                    &format!("IOPS matrix {pct} {bs} round {}", i + 1),
                    Access::RandRw,
                    bs,
                    32,
                );
                s.read_pct = Some(pct);
                let iops = speed * if pct == 0.0 { *w } else { 20000.0 } * 4096.0 / bs as f64;
                jobs.push(job(
                    s,
                    iops,
                    5.0,
                    Some(step(
                        "IOPS",
                        "IOPS matrix",
                        "heatmap",
                        &[("read_pct", pct), ("block_size", bs as f64)],
                        Some(i as u32 + 1),
                    )),
                ));
            }
        }
    }
    for threads in [1u32, 2] {
        for qd in [1u32, 2, 4] {
            let mut s = spec(
                &format!("Multithreaded read T{threads} QD{qd}"),
                Access::Read,
                65536,
                qd,
            );
            s.threads = Some(threads);
            s.zones = Some(true);
            jobs.push(job(
                s,
                speed * 2000.0 * (threads * qd) as f64,
                5.0,
                Some(step(
                    "multithreaded",
                    "Multithreaded read",
                    "qd-lines",
                    &[("threads", threads as f64), ("queue_depth", qd as f64)],
                    None,
                )),
            ));
        }
    }
    r.jobs = jobs;
    let tracked: Vec<f64> = rounds.iter().map(|w| speed * w).collect();
    let ss = iolab_core::steady::judge("IOPS matrix", "write_iops", &tracked, 5, 25);
    assert!(ss.attained, "the fixture converges");
    r.suite = Some(SuiteSummary {
        name: "fixture".into(),
        title: "A suite with every chart <kind>".into(),
        source: "built in code for the tests".into(),
        scale: 0.01,
        prepared: vec!["prepare: sequential fill pass 1 with 128k incompressible writes".into()],
        scores: vec![
            Score {
                name: "Random read, mean of QD1–4".into(),
                value: speed * 53.1,
                unit: "MB/s".into(),
                stddev: None,
                rule: "mean of read_mb_per_s over 3 job(s) of 'Random read 4K'".into(),
            },
            Score {
                name: "Sequential read 1M".into(),
                value: speed * 540.0,
                unit: "MB/s".into(),
                stddev: None,
                rule: "mean of read_mb_per_s over 1 job(s) of 'Sequential read'".into(),
            },
            Score {
                name: "Performance consistency, last 4 s".into(),
                value: speed * 22500.0,
                unit: "IOPS".into(),
                stddev: Some(speed * 1118.0),
                rule: "mean and standard deviation of per-second write_iops over the last 4 s of 'Performance consistency'".into(),
            },
        ],
        steady_state: vec![ss],
    });
    r
}

/// A `quick` result (CrystalDiskMark's four tests, read and write), each job naming its test.
pub fn quick_result(target: &str, host: &str, speed: f64) -> RunResult {
    let mut r = frame("quick", target, host);
    for (label, access_r, access_w, bs, qd, mbps) in [
        (
            "SEQ1M Q8T1",
            Access::Read,
            Access::Write,
            1u64 << 20,
            8,
            550.0,
        ),
        ("SEQ1M Q1T1", Access::Read, Access::Write, 1 << 20, 1, 480.0),
        (
            "RND4K Q32T1",
            Access::RandRead,
            Access::RandWrite,
            4096,
            32,
            300.0,
        ),
        (
            "RND4K Q1T1",
            Access::RandRead,
            Access::RandWrite,
            4096,
            1,
            40.0,
        ),
    ] {
        for (dir, access, k) in [("read", access_r, 1.0), ("write", access_w, 0.9)] {
            let mut j = job(
                spec(&format!("{label} {dir}"), access, bs, qd),
                speed * k * mbps * 1e6 / bs as f64,
                1.5,
                None,
            );
            j.repeats = vec![RepeatFigures::of(&j); 3];
            j.test = QuickTest::of_access(label, access);
            r.jobs.push(j);
        }
    }
    r
}

/// A `run` result of two jobs, interrupted in the second.
pub fn run_result() -> RunResult {
    let mut r = frame("run", "./test.bin", "bench-host");
    r.target.kind = "file".into();
    r.target.path_ceiling_bytes_per_s = None;
    r.jobs.push(job(
        spec("random read", Access::RandRead, 4096, 32),
        50000.0,
        10.0,
        None,
    ));
    let mut w = job(
        spec("random write", Access::RandWrite, 4096, 32),
        20000.0,
        3.2,
        None,
    );
    w.complete = false;
    w.stop_reason = Some("interrupted".into());
    r.jobs.push(w);
    r.complete = false;
    r.incomplete_reason = Some("interrupted".into());
    r
}

/// Compares `actual` with the snapshot `name` under tests/snapshots/; writes it when missing or
/// when `UPDATE_SNAPSHOTS=1`.
pub fn check_snapshot(name: &str, actual: &str) {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    let update = std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    if update || !path.exists() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        eprintln!("wrote snapshot {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    if expected != actual {
        let (el, al): (Vec<&str>, Vec<&str>) =
            (expected.lines().collect(), actual.lines().collect());
        let first = el
            .iter()
            .zip(&al)
            .position(|(e, a)| e != a)
            .unwrap_or(el.len().min(al.len()));
        // Long lines (SVG) are shown around their first differing character.
        let (e, a) = (
            el.get(first).copied().unwrap_or(""),
            al.get(first).copied().unwrap_or(""),
        );
        let col = e.chars().zip(a.chars()).take_while(|(x, y)| x == y).count();
        let window =
            |l: &str| -> String { l.chars().skip(col.saturating_sub(60)).take(160).collect() };
        panic!(
            "snapshot {} differs at line {}, column {}:\n  expected: …{}\n  actual:   …{}\n({} vs {} lines). If the change is intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff (git diff {}).",
            name,
            first + 1,
            col + 1,
            window(e),
            window(a),
            el.len(),
            al.len(),
            path.display()
        );
    }
}
