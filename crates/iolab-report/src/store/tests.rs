use super::*;
use iolab_core::job::{Access, Direction, JobSpec};
use iolab_core::result::{
    HostInfo, JobResult, Score, StepInfo, SuiteSummary, TargetInfo, ToolInfo, SCHEMA_VERSION,
};
use iolab_core::stats::RunStats;

/// A job that did `reads` reads and `writes` writes of 4 KiB over 3 s, with latencies
/// spread over 50–90 µs, summarised by the same code the engine uses.
fn job(name: &str, reads: u64, writes: u64, qd: u32) -> JobResult {
    let spec = JobSpec {
        name: Some(name.into()),
        access: Some(if writes == 0 {
            Access::RandRead
        } else if reads == 0 {
            Access::RandWrite
        } else {
            Access::RandRw
        }),
        queue_depth: Some(qd),
        ..JobSpec::default()
    };
    let measured_ns = 3_000_000_000;
    let mut stats = RunStats::new(1_000_000_000);
    let n = reads + writes;
    for i in 0..n {
        let dir = if i < reads {
            Direction::Read
        } else {
            Direction::Write
        };
        let latency = 50_000 + (i * 7919) % 40_000;
        stats.record(dir, 4096, latency, i * (measured_ns - 1) / n.max(1));
    }
    JobResult {
        name: name.into(),
        measured_ns,
        read: stats.direction_summary(Direction::Read, measured_ns),
        write: stats.direction_summary(Direction::Write, measured_ns),
        series: stats.series(measured_ns),
        ..JobResult::unmeasured(spec.validate().unwrap())
    }
}

/// A run of `kind` on `path` started at `t`, with a read job and a write job.
fn run(kind: &str, path: &str, t: f64, scale: u64) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "iolab".into(),
            version: "0.1.0".into(),
        },
        kind: kind.into(),
        started_unix_s: t,
        complete: true,
        incomplete_reason: None,
        host: HostInfo {
            hostname: "bench".into(),
            kernel: "6.1.0".into(),
            cpu_model: "test cpu".into(),
            cpus: 2,
            memory_bytes: 1 << 30,
        },
        target: TargetInfo {
            path: path.into(),
            kind: "file".into(),
            size_bytes: 64 << 20,
            logical_block_bytes: 512,
            engine: "io_uring".into(),
            path_ceiling_bytes_per_s: Some(600e6),
            path_summary: Some("test path".into()),
            ..TargetInfo::default()
        },
        notes: vec!["a note".into()],
        jobs: vec![
            job("4K QD1 read", 300 * scale, 0, 1),
            job("4K QD1 write", 0, 200 * scale, 1),
        ],
        suite: None,
        replay: None,
        scale: None,
    }
}

fn temp_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/results.sqlite");
    (dir, path)
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_run_goes_in_and_comes_back_out_unchanged() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.layout_version().unwrap(), STORE_VERSION);
    let original = run("run", "/tmp/t.bin", 1_795_392_000.5, 1);
    let rec = store.insert(&original, 1_795_392_004.0).unwrap();
    assert_eq!(rec.id, 1);
    assert_eq!(rec.key.len(), 16);

    // Export is the JSON file's text exactly (the file adds only a final newline).
    let exported = store.export(rec.id).unwrap();
    assert_eq!(exported, serde_json::to_string_pretty(&original).unwrap());
    assert_eq!(store.result(rec.id).unwrap(), original);
    // A quick run's jobs keep the CrystalDiskMark test they carry.
    let mut quick = run("quick", "/tmp/t.bin", 1_795_392_001.5, 1);
    for j in &mut quick.jobs {
        j.test = iolab_core::quick::QuickTest::of_access("RND4K Q1T1", j.job.access);
    }
    let mut other = Store::open(&path.with_extension("quick.sqlite")).unwrap();
    let id = other.insert(&quick, 1_795_392_004.0).unwrap().id;
    let back = other.result(id).unwrap();
    assert!(back.jobs.iter().all(|j| j.test.is_some()));
    assert_eq!(back, quick);

    let (runs, total) = store.list(&RunFilter::default()).unwrap();
    assert_eq!(total, 1);
    let s = &runs[0];
    assert_eq!(
        (s.kind.as_str(), s.target_path.as_str(), s.jobs, s.complete),
        ("run", "/tmp/t.bin", 2, true)
    );
    assert_eq!(s.finished_unix_s, 1_795_392_004.0);

    let d = store.show(rec.id).unwrap();
    assert_eq!(d.target.path_ceiling_bytes_per_s, Some(600e6));
    assert_eq!(d.notes, vec!["a note".to_string()]);
    assert_eq!(d.steps.len(), 2);
    let read = &d.steps[0];
    assert_eq!(read.label, "4K QD1 read");
    let get = |name: &str| {
        read.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| (m.direction.as_str(), m.value))
    };
    // The stored figures are JobResult::metric's, under its names.
    let j = &original.jobs[0];
    assert_eq!(get("read_iops"), Some(("read", j.read.iops)));
    assert_eq!(get("total_iops"), Some(("total", j.total_iops())));
    assert_eq!(
        get("read_lat_p99_us"),
        Some(("read", j.metric("read_lat_p99_us").unwrap()))
    );
    assert_eq!(
        get("read_lat_p99_99_us"),
        Some(("read", j.read.lat_ns.p99_99 as f64 / 1e3))
    );
    assert!((j.read.iops - 100.0).abs() < 1e-9, "300 reads in 3 s");
    // A read job has no write figures rather than zero ones.
    assert_eq!(get("write_iops"), None);
    assert_eq!(get("write_lat_mean_us"), None);
    // Metrics come back in the documented order.
    let order = metric_order();
    let ranks: Vec<usize> = read
        .metrics
        .iter()
        .map(|m| order.iter().position(|n| *n == m.name).unwrap())
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");

    // The series comes back as the result had it.
    assert_eq!(store.series(rec.id, 1).unwrap(), original.jobs[1].series);
    assert_eq!(count(&store, "series"), 6);
}

#[test]
fn runs_are_found_by_number_or_key_prefix_and_filtered() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let a = store
        .insert(&run("run", "/tmp/a.bin", 100.0, 1), 101.0)
        .unwrap();
    let b = store
        .insert(&run("quick", "/tmp/b.bin", 200.0, 1), 201.0)
        .unwrap();
    let c = store
        .insert(&run("suite:cdm", "/dev/zram0", 300.0, 1), 301.0)
        .unwrap();
    assert_eq!(store.resolve("2").unwrap(), b.id);
    assert_eq!(store.resolve(&a.key[..6]).unwrap(), a.id);
    assert_eq!(store.resolve(&c.key.to_uppercase()).unwrap(), c.id);
    assert!(matches!(
        store.resolve("99"),
        Err(StoreError::UnknownRun(_))
    ));
    // Too short to be taken as a key prefix, and said so.
    assert!(matches!(
        store.resolve(&a.key[..2]),
        Err(StoreError::UnknownRun(_) | StoreError::ShortKeyPrefix(_))
    ));
    let short = store.resolve("ee6").unwrap_err();
    assert!(matches!(short, StoreError::ShortKeyPrefix(_)), "{short}");
    assert!(
        short.to_string().contains("at least 4 characters"),
        "{short}"
    );
    assert!(matches!(
        store.resolve("999"),
        Err(StoreError::UnknownRun(_))
    ));
    // A number that is also the start of another run's key: `0001` picked run 1 without
    // a word, though run 2's key starts with it.
    let key2 = format!("0001{}", &b.key[4..]);
    store
        .conn
        .execute("UPDATE runs SET run_key = ?1 WHERE id = ?2", (&key2, b.id))
        .unwrap();
    let both = store.resolve("0001").unwrap_err();
    assert!(matches!(both, StoreError::AmbiguousRun { .. }), "{both}");
    let said = both.to_string();
    assert!(
        said.contains(&format!("run {} by its number", a.id))
            && said.contains(&format!("run {} = {key2}", b.id)),
        "{said}"
    );
    assert_eq!(store.resolve(&key2[..6]).unwrap(), b.id);
    assert_eq!(store.kinds().unwrap(), ["quick", "run", "suite:cdm"]);

    let ids =
        |f: RunFilter| -> Vec<i64> { store.list(&f).unwrap().0.iter().map(|r| r.id).collect() };
    assert_eq!(ids(RunFilter::default()), vec![c.id, b.id, a.id]);
    let kind = |k: &str| RunFilter {
        kind: Some(k.into()),
        ..RunFilter::default()
    };
    assert_eq!(ids(kind("suite")), vec![c.id]);
    assert_eq!(ids(kind("suite:cdm")), vec![c.id]);
    assert_eq!(ids(kind("su")), Vec::<i64>::new());
    assert_eq!(
        ids(RunFilter {
            target: Some("/tmp/".into()),
            ..RunFilter::default()
        }),
        vec![b.id, a.id]
    );
    let (shown, total) = store
        .list(&RunFilter {
            limit: Some(1),
            ..RunFilter::default()
        })
        .unwrap();
    assert_eq!((shown.len(), total), (1, 3));
    assert!(crate::store_tables::list_table(&shown, total).contains("1 of 3 runs shown"));
}

#[test]
fn compare_lines_up_jobs_by_name_across_runs() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let slow = run("run", "/tmp/a.bin", 100.0, 1);
    let mut fast = run("run", "/tmp/a.bin", 200.0, 2);
    fast.jobs.pop();
    // A mixed job under the read job's name: it brings write metrics the first run's
    // job of that name lacked.
    fast.jobs[0] = job("4K QD1 read", 600, 100, 1);
    fast.suite = Some(SuiteSummary {
        name: "x".into(),
        scores: vec![Score {
            name: "Total".into(),
            value: 950.0,
            unit: "points".into(),
            ..Score::default()
        }],
        ..SuiteSummary::default()
    });
    let a = store.insert(&slow, 101.0).unwrap();
    let b = store.insert(&fast, 201.0).unwrap();
    let c = store.compare(&[a.id, b.id]).unwrap();
    let row = |label: &str, metric: &str| {
        c.rows
            .iter()
            .find(|r| r.label == label && r.metric == metric)
            .map(|r| r.values.clone())
    };
    assert_eq!(
        row("4K QD1 read", "read_iops"),
        Some(vec![
            Some(slow.jobs[0].read.iops),
            Some(fast.jobs[0].read.iops)
        ])
    );
    // The second run has no write job: its column is empty there.
    assert_eq!(
        row("4K QD1 write", "write_iops"),
        Some(vec![Some(slow.jobs[1].write.iops), None])
    );
    assert_eq!(
        row("score", "Total (points)"),
        Some(vec![None, Some(950.0)])
    );
    // Each job's rows stay together, in metric order.
    let labels: Vec<&str> = c.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels.iter().filter(|l| **l == "4K QD1 read").count(),
        labels
            .iter()
            .skip_while(|l| **l != "4K QD1 read")
            .take_while(|l| **l == "4K QD1 read")
            .count(),
        "{labels:?}"
    );
    let read_rows: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| r.label == "4K QD1 read")
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(&read_rows[..2], &["read_iops", "write_iops"]);
    assert_eq!(row("4K QD1 read", "write_iops").unwrap()[0], None);
    let table = crate::store_tables::compare_table(&c);
    assert!(table.contains("read_iops"), "{table}");
    // 600 reads in 3 s against 300: +100 %.
    assert!(table.contains("+100.0 %"), "{table}");
    // The name is paired, and the table says the work behind it changed.
    assert_eq!(
        c.differing,
        vec![(
            "4K QD1 read".to_string(),
            vec![
                Some("RandRead 4k QD1 T1".to_string()),
                Some("RandRw 4k QD1 T1 50% read".to_string())
            ]
        )]
    );
    assert!(
        table.contains(&format!(
            "note: 4K QD1 read is not the same workload in every run: #{} RandRead 4k QD1 T1; #{} RandRw 4k QD1 T1 50% read",
            a.id, b.id
        )),
        "{table}"
    );
}

#[test]
fn repeated_job_names_are_told_apart_by_round_or_occurrence() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let mut r = run("suite:x", "/tmp/a.bin", 100.0, 1);
    let read = r.jobs[0].clone();
    r.jobs = vec![read.clone(), read.clone(), read.clone(), read];
    for (i, j) in r.jobs.iter_mut().enumerate() {
        j.read.iops = i as f64;
        if i < 2 {
            j.name = "steady".into();
            j.step = Some(StepInfo {
                round: Some(i as u32 + 1),
                ..StepInfo::default()
            });
        } else {
            j.name = "dup".into();
        }
    }
    let id = store.insert(&r, 101.0).unwrap().id;
    let c = store.compare(&[id]).unwrap();
    let rows: Vec<(&str, Option<f64>)> = c
        .rows
        .iter()
        .filter(|r| r.metric == "read_iops")
        .map(|r| (r.label.as_str(), r.values[0]))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("steady (round 1)", Some(0.0)),
            ("steady (round 2)", Some(1.0)),
            ("dup", Some(2.0)),
            ("dup #2", Some(3.0)),
        ]
    );
}

/// A job that did no I/O showed `total_iops 0` (and "-100.0 %") in a comparison where its
/// directions showed "-": it has no figures at all, totals included.
#[test]
fn a_job_that_did_no_io_has_no_totals_either() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let did = run("run", "/tmp/a.bin", 100.0, 1);
    let mut idle = run("run", "/tmp/a.bin", 200.0, 1);
    idle.jobs[0] = job("4K QD1 read", 0, 0, 1);
    let a = store.insert(&did, 101.0).unwrap();
    let b = store.insert(&idle, 201.0).unwrap();
    let c = store.compare(&[a.id, b.id]).unwrap();
    for metric in ["read_iops", "total_iops", "read_mb_per_s", "total_mb_per_s"] {
        let row = c
            .rows
            .iter()
            .find(|r| r.label == "4K QD1 read" && r.metric == metric)
            .unwrap_or_else(|| panic!("no {metric} row"));
        assert!(row.values[0].is_some(), "{metric}");
        assert_eq!(row.values[1], None, "{metric}");
    }
    let table = crate::store_tables::compare_table(&c);
    let line = table.lines().find(|l| l.contains("total_iops")).unwrap();
    assert!(line.trim_end().ends_with('-'), "{table}");
    assert!(!table.contains("-100.0 %"), "{table}");
    // show says why the job has no figures.
    let shown = crate::store_tables::show_table(&store.show(b.id).unwrap());
    assert!(
        shown.contains("job 1: 4K QD1 read (RandRead 4k QD1 T1, 3.00 s, no I/O completed)"),
        "{shown}"
    );
    // A store written before kept totals of 0 for such a job: they are not shown either.
    let step_id: i64 = store
        .conn
        .query_row(
            "SELECT id FROM steps WHERE run_id = ?1 AND job_index = 0",
            [b.id],
            |r| r.get(0),
        )
        .unwrap();
    store
        .conn
        .execute(
            "INSERT INTO metrics (step_id, direction, name, value)
             VALUES (?1, 'total', 'total_iops', 0.0)",
            [step_id],
        )
        .unwrap();
    assert_eq!(store.show(b.id).unwrap().steps[0].metrics, vec![]);
}

#[test]
fn incomplete_runs_and_replays_are_recorded_with_their_reason_and_figures() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let mut r = run("replay", "/tmp/a.bin", 100.0, 1);
    r.complete = false;
    r.incomplete_reason = Some("interrupted".into());
    r.jobs[1].complete = false;
    r.jobs[1].stop_reason = Some("interrupted".into());
    r.replay = Some(iolab_core::result::ReplaySummary {
        data_rate_mb_per_s: 123.0,
        ..Default::default()
    });
    let id = store.insert(&r, 101.0).unwrap().id;
    let d = store.show(id).unwrap();
    assert!(!d.summary.complete);
    assert_eq!(d.summary.incomplete_reason.as_deref(), Some("interrupted"));
    assert!(!d.steps[1].complete);
    assert_eq!(d.scores[0].name, "Data rate");
    assert_eq!(d.scores[0].value, 123.0);
    let text = crate::store_tables::show_table(&d);
    assert!(text.contains("INCOMPLETE"), "{text}");
    assert!(text.contains("Data rate"), "{text}");
    assert!(text.contains("write_lat_p99_9_us"), "{text}");
}

#[test]
fn the_same_result_twice_is_refused() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    let r = run("run", "/tmp/a.bin", 100.0, 1);
    let first = store.insert(&r, 101.0).unwrap();
    match store.insert(&r, 102.0) {
        Err(StoreError::Duplicate { id, key }) => assert_eq!((id, key), (first.id, first.key)),
        other => panic!("expected Duplicate, got {other:?}"),
    }
    assert_eq!(count(&store, "runs"), 1);
}

#[test]
fn a_failed_insert_leaves_no_part_of_the_run() {
    let (_dir, path) = temp_store();
    let mut store = Store::open(&path).unwrap();
    store
        .insert(&run("run", "/tmp/a.bin", 50.0, 1), 51.0)
        .unwrap();
    // Make the last tables' inserts fail, after runs, targets, steps and metrics went in.
    store
        .conn
        .execute_batch(
            "CREATE TRIGGER fail BEFORE INSERT ON series BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;",
        )
        .unwrap();
    let err = store
        .insert(&run("run", "/tmp/b.bin", 100.0, 1), 101.0)
        .unwrap_err();
    assert!(matches!(err, StoreError::Sql { .. }), "{err:?}");
    for (table, n) in [("runs", 1), ("targets", 1), ("steps", 2), ("series", 6)] {
        assert_eq!(count(&store, table), n, "{table}");
    }
    assert_eq!(count(&store, "metrics"), count_metrics_of_one_run());
}

fn count_metrics_of_one_run() -> i64 {
    run("run", "", 0.0, 1)
        .jobs
        .iter()
        .map(|j| job_metrics(j).len() as i64)
        .sum()
}

#[test]
fn a_newer_layout_is_refused_and_a_missing_file_is_not_created() {
    let (dir, path) = temp_store();
    match Store::open_existing(&path) {
        Err(StoreError::NotFound { path: p }) => assert_eq!(p, path),
        other => panic!("expected NotFound, got {:?}", other.err()),
    }
    assert!(!path.exists());
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", STORE_VERSION + 1)
        .unwrap();
    drop(conn);
    let err = Store::open_existing(&path).err().unwrap();
    assert!(matches!(err, StoreError::NewerLayout { found, .. } if found == STORE_VERSION + 1));
    assert!(
        err.to_string().contains("newer than this iolab reads"),
        "{err}"
    );
    // Not a database at all: an error naming the file, not a panic.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(
        &junk,
        "not sqlite at all, just text long enough to look like a header",
    )
    .unwrap();
    let err = Store::open_existing(&junk).err().unwrap();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    assert!(err.to_string().contains("junk.sqlite"), "{err}");
}

#[test]
fn only_a_database_file_or_a_new_one_is_opened_for_recording() {
    let dir = tempfile::tempdir().unwrap();
    // A JSON result where the store was expected: refused, and left as it was.
    let json = dir.path().join("r.json");
    std::fs::write(&json, "{\"schema_version\": 1}\n").unwrap();
    let err = Store::open(&json).err().unwrap();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    assert_eq!(std::fs::read(&json).unwrap(), b"{\"schema_version\": 1}\n");
    // A device: SQLite's pages would land on its data.
    let err = Store::open(Path::new("/dev/null")).err().unwrap();
    assert!(matches!(err, StoreError::NotAFile { .. }), "{err:?}");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    // An empty file and a missing one become stores.
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, "").unwrap();
    drop(Store::open(&empty).unwrap());
    drop(Store::open(&dir.path().join("new.sqlite")).unwrap());
}

/// An SQLite database of another program's in `dir`: one table of its own, one row.
fn another_programs_database(dir: &Path) -> PathBuf {
    let other = dir.join("other.sqlite");
    let conn = Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    other
}

#[test]
fn reading_another_programs_database_or_an_empty_file_changes_nothing() {
    let (dir, _) = temp_store();
    let other = another_programs_database(dir.path());
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    for path in [&other, &empty] {
        let before = std::fs::read(path).unwrap();
        let err = Store::open_existing(path).err().unwrap();
        assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
        assert!(err.to_string().contains("not a results store"), "{err}");
        assert_eq!(std::fs::read(path).unwrap(), before, "{}", path.display());
    }
    let conn = Connection::open(&other).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete", "the journal mode was changed");
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "tables were added");
}

#[test]
fn recording_into_another_programs_database_is_refused_untouched() {
    // IOLAB_DB pointed at another program's database: iolab's tables were added to it and
    // its journal switched to WAL, where only reading (`--db`) refused it.
    let (dir, _) = temp_store();
    let other = another_programs_database(dir.path());
    let before = std::fs::read(&other).unwrap();
    let err = Store::open(&other).err().unwrap();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
    let conn = Connection::open(&other).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete", "the journal mode was changed");
    // A new file, and an empty one, still become a store.
    for fresh in [
        dir.path().join("new.sqlite"),
        dir.path().join("empty.sqlite"),
    ] {
        if fresh.ends_with("empty.sqlite") {
            std::fs::write(&fresh, "").unwrap();
        }
        let store = Store::open(&fresh).unwrap();
        assert_eq!(store.layout_version().unwrap(), STORE_VERSION);
    }
}

#[test]
fn a_directory_given_as_the_store_is_named_as_one() {
    // `iolab results list --db /tmp` said "opening (/tmp): disk I/O error".
    let (dir, _) = temp_store();
    for open in [Store::open_existing, Store::open] {
        let err = open(dir.path()).err().unwrap();
        assert!(matches!(err, StoreError::IsDirectory { .. }), "{err:?}");
        assert!(
            err.to_string().ends_with(
                "is a directory, not a results store: give the database file in it \
                 (results.sqlite)"
            ),
            "{err}"
        );
    }
}

#[test]
fn two_writers_at_once_lose_nothing_and_corrupt_nothing() {
    let (_dir, path) = temp_store();
    const PER_WRITER: u64 = 50;
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each writer has its own connection, as two processes would.
                let mut store = Store::open(&path).unwrap();
                for i in 0..PER_WRITER {
                    let t = (w * 1000 + i) as f64;
                    store
                        .insert(&run("run", &format!("/tmp/w{w}.bin"), t, 1), t + 1.0)
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let (_, total) = store.list(&RunFilter::default()).unwrap();
    assert_eq!(total, 2 * PER_WRITER);
    for w in 0..2 {
        let (_, n) = store
            .list(&RunFilter {
                target: Some(format!("/tmp/w{w}.bin")),
                ..RunFilter::default()
            })
            .unwrap();
        assert_eq!(n, PER_WRITER);
    }
    assert_eq!(count(&store, "steps"), 4 * PER_WRITER as i64);
    let mode: String = store
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}
