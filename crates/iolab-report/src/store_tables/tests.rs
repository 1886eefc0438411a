use super::*;
use iolab_core::result::SweepValue;

#[test]
fn utc_times_and_figures() {
    assert_eq!(utc_time(0.0), "1970-01-01 00:00:00");
    assert_eq!(utc_time(1_795_392_000.0 + 3661.0), "2026-11-23 01:01:01");
    assert_eq!(figure(12345.678), "12346");
    assert_eq!(figure(123.456), "123.5");
    assert_eq!(figure(1.23456), "1.23");
}

fn summary(id: i64, key: &str, kind: &str, complete: bool) -> RunSummary {
    RunSummary {
        id,
        key: key.into(),
        kind: kind.into(),
        started_unix_s: 1_795_392_000.0 + id as f64 * 60.0,
        finished_unix_s: 1_795_392_000.0 + id as f64 * 60.0 + 12.5,
        complete,
        incomplete_reason: (!complete).then(|| "interrupted".into()),
        tool_version: "0.1.0".into(),
        tool_name: "iolab".into(),
        hostname: "bench".into(),
        kernel: "6.1.0".into(),
        target_path: "/tmp/t.bin".into(),
        target_kind: "file".into(),
        modelled: false,
        jobs: 2,
        suite_name: None,
        suite_scale: None,
    }
}

#[test]
fn list_snapshot() {
    let runs = [
        summary(12, "00112233445566778899", "quick", true),
        summary(3, "aabbccddeeff00112233", "suite:cdm", false),
    ];
    assert_eq!(
        list_table(&runs, 5),
        "\
id  key           started (UTC)        kind       target      jobs  state
12  001122334455  2026-11-23 00:12:00  quick      /tmp/t.bin     2  complete
 3  aabbccddeeff  2026-11-23 00:03:00  suite:cdm  /tmp/t.bin     2  INCOMPLETE
2 of 5 runs shown (newest first); --limit shows more
"
    );
    assert_eq!(list_table(&[], 0), "no runs recorded (that match)\n");
}

#[test]
fn compare_snapshot() {
    use crate::store::ComparedRow;
    let row = |label: &str, metric: &str, a, b| ComparedRow {
        label: label.into(),
        metric: metric.into(),
        values: vec![a, b],
        ..ComparedRow::default()
    };
    let c = Comparison {
        runs: vec![
            summary(1, "00112233445566778899", "run", true),
            summary(2, "aabbccddeeff00112233", "run", false),
        ],
        rows: vec![
            row("job1", "read_iops", Some(20000.0), Some(25000.0)),
            row("job1", "read_lat_mean_us", Some(50.0), Some(40.0)),
            row("job2", "write_iops", None, Some(900.0)),
        ],
        differing: vec![],
        sides: vec![],
    };
    assert_eq!(
            compare_table(&c),
            "\
#1  001122334455  2026-11-23 00:01:00 UTC  run  /tmp/t.bin
#2  aabbccddeeff  2026-11-23 00:02:00 UTC  run  /tmp/t.bin  INCOMPLETE

job   metric               #1     #2   change
job1  read_iops         20000  25000  +25.0 %
      read_lat_mean_us  50.00  40.00  -20.0 %
job2  write_iops            -  900.0
noise: no repeats to judge it (each side is one run without counted repeats); compare several runs a side (`iolab results compare 3,4,5 6,7,8`) or quick runs (--count)
"
        );
    // Suite runs at different scales: each says its scale, and the difference is noted.
    let mut c = c;
    c.runs[0].suite_scale = Some(0.1);
    c.runs[1].suite_scale = Some(0.01);
    let t = compare_table(&c);
    assert!(t.contains("run (scale 0.1)  /tmp/t.bin"), "{t}");
    assert!(
        t.contains("note: these runs used different --scale values"),
        "{t}"
    );
    // A model is marked as `results list` marks it; a score's long name does not widen
    // the metric column past 40 characters, and is given in full under the table.
    c.runs[1].modelled = true;
    let long = "Performance consistency, last 400 s (scaled run: last 4 s) (IOPS)";
    c.rows.push(row("score", long, Some(1.0), Some(2.0)));
    let t = compare_table(&c);
    assert!(t.contains("/tmp/t.bin (modelled)  INCOMPLETE"), "{t}");
    assert!(!t.lines().next().unwrap().contains("modelled"), "{t}");
    let widest = t
        .lines()
        .filter(|l| l.starts_with("score"))
        .map(|l| {
            l.split("  ")
                .filter(|c| !c.is_empty())
                .nth(1)
                .unwrap()
                .chars()
                .count()
        })
        .max()
        .unwrap();
    assert!(widest <= 40, "{t}");
    assert!(
        t.contains("Performance consistency, last 400 s… [1]"),
        "{t}"
    );
    assert!(t.contains(&format!("\n[1] {long}\n")), "{t}");
}

#[test]
fn compare_marks_noise_from_repeats_and_thin_tails_without() {
    use crate::store::{ComparedRow, Spread};
    let spread = |min, max| Some(Spread { min, max, n: 3 });
    let mut a = summary(1, "00112233445566778899", "quick", true);
    a.id = 1;
    let c = Comparison {
        runs: vec![a.clone(), summary(4, "aabbccddeeff00112233", "quick", true)],
        sides: vec![
            vec![
                a,
                summary(2, "11", "quick", true),
                summary(3, "22", "quick", true),
            ],
            vec![
                summary(4, "33", "quick", true),
                summary(5, "44", "quick", true),
                summary(6, "55", "quick", true),
            ],
        ],
        rows: vec![
            ComparedRow {
                label: "RND4K Q1T1 read".into(),
                metric: "read_iops".into(),
                values: vec![Some(10000.0), Some(10100.0)],
                spread: vec![spread(9800.0, 10200.0), spread(9900.0, 10300.0)],
                tail_ios: vec![None, None],
            },
            ComparedRow {
                label: "RND4K Q1T1 read".into(),
                metric: "read_mb_per_s".into(),
                values: vec![Some(40.0), Some(50.0)],
                spread: vec![spread(39.0, 41.0), spread(49.0, 51.0)],
                tail_ios: vec![None, None],
            },
            ComparedRow {
                label: "RND4K Q1T1 read".into(),
                metric: "read_lat_p99_99_us".into(),
                values: vec![Some(100.0), Some(692.0)],
                spread: vec![None, None],
                tail_ios: vec![Some(1.5), Some(1.5)],
            },
        ],
        differing: vec![],
    };
    let t = compare_table(&c);
    assert!(t.contains("#1,2,3: the mean of 3 runs"), "{t}");
    let line = |m: &str| t.lines().find(|l| l.contains(m)).unwrap().to_string();
    assert!(line("read_iops").contains("10000 ±2.0 %"), "{t}");
    assert!(line("read_iops").ends_with("within noise"), "{t}");
    assert!(line("read_mb_per_s").ends_with("beyond noise"), "{t}");
    assert!(line("read_lat_p99_99_us").contains("+592.0 %"), "{t}");
    assert!(line("read_lat_p99_99_us").ends_with("tail: 2 I/Os"), "{t}");
    assert!(t.contains("noise: ± is half the range over repeats"), "{t}");
    assert!(t.contains("tail: N I/Os: the percentile rests"), "{t}");
}

#[test]
fn show_snapshot() {
    use crate::store::{StoredMetric, StoredScore, StoredStep, StoredTarget};
    let metric = |name: &str, value| StoredMetric {
        direction: "read".into(),
        name: name.into(),
        value,
    };
    let d = RunDetail {
        summary: summary(7, "00112233445566778899", "suite:x", false),
        cpu_model: "EPYC".into(),
        target: StoredTarget {
            path: "/tmp/t.bin".into(),
            kind: "file".into(),
            engine: "io_uring".into(),
            modelled: false,
            model_json: None,
            size_bytes: 64 << 20,
            logical_block_bytes: 512,
            path_summary: None,
            path_ceiling_bytes_per_s: Some(600e6),
        },
        steps: vec![StoredStep {
            job_index: 0,
            label: "4K QD4".into(),
            phase: Some("measure".into()),
            step: Some("4K".into()),
            chart: None,
            sweep: vec![SweepValue {
                key: "queue_depth".into(),
                value: 4.0,
            }],
            round: None,
            complete: false,
            stop_reason: Some("interrupted".into()),
            measured_ns: 1_500_000_000,
            job: None,
            metrics: vec![
                metric("read_iops", 12345.6),
                metric("read_lat_p99_us", 88.25),
            ],
        }],
        scores: vec![StoredScore {
            name: "Read".into(),
            value: 578.5,
            unit: "points".into(),
            stddev: Some(1.5),
            rule: "a rule".into(),
        }],
        notes: vec!["psync fallback".into()],
        steady_state: vec![iolab_core::result::SteadyStateReport {
            step: "IOPS".into(),
            tracking: "write_iops".into(),
            attained: false,
            rounds: 25,
            max_rounds: 25,
            window: 5,
            window_mean: 1000.0,
            range: 300.0,
            range_limit: 200.0,
            slope_excursion: 50.0,
            slope_limit: 100.0,
            ..Default::default()
        }],
        model_lines: Vec::new(),
    };
    assert_eq!(
            show_table(&d),
            "\
run 7 (key 00112233445566778899): suite:x, INCOMPLETE
incomplete: interrupted
started 2026-11-23 00:07:00 UTC, recorded 2026-11-23 00:07:12 UTC (12.5 s)
iolab 0.1.0 on bench (kernel 6.1.0, EPYC)
target /tmp/t.bin (file, 64m, io_uring)
ceiling of the path: 600 MB/s
note: psync fallback

job 1: 4K QD4 (phase measure, step 4K, queue_depth=4, 1.50 s, INCOMPLETE: interrupted)
  read_iops        12346
  read_lat_p99_us  88.25

score         value  unit    rule
Read   578.5 ± 1.50  points  a rule

steady state of 'IOPS' (write_iops): NOT attained after 25 of at most 25 rounds; window mean 1000.00, range 300.00 (limit 200.00), slope excursion 50.00 (limit 100.00)
"
        );
}

#[test]
fn columns_align_left_and_right() {
    let rows = vec![
        vec!["a".to_string(), "1".into()],
        vec!["long".to_string(), "100".into()],
    ];
    assert_eq!(columns(&rows, &[false, true]), "a       1\nlong  100\n");
}
