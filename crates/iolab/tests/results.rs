//! End-to-end tests of the results store: runs recorded by `iolab run`, `quick` and an
//! interrupted run, read back by `iolab results list|show|compare|export`, two runs recording at
//! once, and a broken store that costs a warning but never the JSON result. Every test points
//! the store at its own temp directory.

use iolab_report::store::{RunFilter, Store};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

mod common;
use common::{interrupt, iolab, iolab_cmd, text};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    stdout(o)
}

/// A short counted job on `file` in `dir`, saving its JSON to `json`.
fn small_run(dir: &Path, file: &str, access: &str, json: &str) -> Output {
    iolab(
        &[
            "run",
            "--size",
            "8m",
            "--access",
            access,
            "--ios-limit",
            "2000",
            "--json",
            json,
            file,
        ],
        dir,
    )
}

fn db(dir: &Path) -> PathBuf {
    dir.join("results/results.sqlite")
}

#[test]
fn runs_are_recorded_and_listed_shown_compared_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&small_run(d, "t.bin", "randread", "a.json"));
    ok(&small_run(d, "t.bin", "randwrite", "b.json"));
    ok(&iolab(
        &[
            "quick",
            "--count",
            "1",
            "--duration",
            "0.2",
            "--warmup",
            "0.1",
            "--size",
            "16m",
            "--json",
            "q.json",
        ],
        d,
    ));
    assert!(db(d).exists(), "no store at {}", db(d).display());

    let list = ok(&iolab(&["results", "list"], d));
    let rows: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{list}");
    // Newest first: the quick run, then the two runs.
    assert!(
        rows[0].contains("quick") && rows[0].contains("complete"),
        "{list}"
    );
    assert!(rows[1].trim_start().starts_with("2 ") && rows[2].trim_start().starts_with("1 "));
    let quick_only = ok(&iolab(&["results", "list", "--kind", "quick"], d));
    assert_eq!(quick_only.lines().count(), 2, "{quick_only}");
    let limited = ok(&iolab(&["results", "list", "--limit", "1"], d));
    assert!(limited.contains("1 of 3 runs shown"), "{limited}");

    let show = ok(&iolab(&["results", "show", "1"], d));
    for want in [
        "run 1 ",
        "read_iops",
        "read_mb_per_s",
        "read_lat_p99_us",
        "read_lat_p99_9_us",
    ] {
        assert!(show.contains(want), "missing {want}:\n{show}");
    }
    assert!(
        !show.contains("write_iops"),
        "a read job shows write figures:\n{show}"
    );
    let quick = ok(&iolab(&["results", "show", "3"], d));
    for want in ["SEQ1M Q8T1 read", "RND4K Q1T1 write", "write_lat_mean_us"] {
        assert!(quick.contains(want), "missing {want}:\n{quick}");
    }

    // The two runs' job has the same name, so its rows line up; each direction only where done.
    let compare = ok(&iolab(&["results", "compare", "1", "2"], d));
    for want in [
        "#1",
        "#2",
        "change",
        "total_iops",
        "read_iops",
        "write_iops",
    ] {
        assert!(compare.contains(want), "missing {want}:\n{compare}");
    }
    let total = compare.lines().find(|l| l.contains("total_iops")).unwrap();
    assert!(
        total.contains('%'),
        "no change for a metric both have: {total}"
    );

    // Export gives back the saved JSON file byte for byte, by number or by key prefix.
    ok(&iolab(&["results", "export", "1", "-o", "a-again.json"], d));
    assert_eq!(
        std::fs::read(d.join("a-again.json")).unwrap(),
        std::fs::read(d.join("a.json")).unwrap()
    );
    let key = Store::open_existing(&db(d))
        .unwrap()
        .summary(3)
        .unwrap()
        .key;
    let exported = ok(&iolab(&["results", "export", &key[..8]], d));
    assert_eq!(exported, std::fs::read_to_string(d.join("q.json")).unwrap());
    // `-o -` is standard output, as `--json -` is, not a file named `-`.
    let exported = ok(&iolab(&["results", "export", &key[..8], "-o", "-"], d));
    assert_eq!(exported, std::fs::read_to_string(d.join("q.json")).unwrap());
    assert!(!d.join("-").exists());

    // A kind no run can have is refused naming the kinds; a real kind not recorded is a note.
    let out = iolab(&["results", "list", "--kind", "bogus"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kind bogus is not a kind of run")
            && err.contains("kinds recorded: quick, run"),
        "{err}"
    );
    let out = iolab(&["results", "list", "--kind", "suite:atto"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("no recorded run is of kind 'suite:atto'; kinds recorded: quick, run"),
        "{}",
        text(&out)
    );

    // Bad run names: a clear error and a non-zero exit.
    for bad in [
        vec!["show", "999"],
        vec!["compare", "1", "zzzzzz"],
        vec!["export", "42"],
    ] {
        let mut args = vec!["results"];
        args.extend(bad.iter().copied());
        let out = iolab(&args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no run '") && err.contains("iolab results list"),
            "{err}"
        );
    }
    // A key prefix too short to pick a run: said so, not "no run".
    let out = iolab(&["results", "show", "ee6"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'ee6' is too short for a key prefix: give at least 4 characters"),
        "{err}"
    );
}

#[test]
fn a_list_of_no_runs_is_refused_not_shown_as_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&small_run(d, "t.bin", "randread", "a.json"));
    // It printed "no runs recorded (that match)" of a store with a run in it.
    let out = iolab(&["results", "list", "--limit", "0"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--limit 0 would list nothing; give 1 or more"),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("no runs recorded"), "{}", text(&out));
    assert!(ok(&iolab(&["results", "list", "--limit", "1"], d)).contains("t.bin"));
}

#[test]
fn a_file_is_recorded_by_its_canonical_path_however_it_was_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    let absolute = d.join("t.bin");
    // Three names of one file: they were three targets in the store ("./t.bin", …).
    for (i, name) in ["./t.bin", absolute.to_str().unwrap(), "sub/../t.bin"]
        .into_iter()
        .enumerate()
    {
        ok(&small_run(d, name, "randread", &format!("{i}.json")));
    }
    // A model's spec is kept as it is.
    ok(&iolab(
        &[
            "run",
            "sim:ssd750-400@z97",
            "--ios-limit",
            "10",
            "--json",
            "s.json",
        ],
        d,
    ));
    let canonical = std::fs::canonicalize(&absolute).unwrap();
    let store = Store::open_existing(&db(d)).unwrap();
    let (runs, _) = store.list(&RunFilter::default()).unwrap();
    let mut targets: Vec<&str> = runs.iter().map(|r| r.target_path.as_str()).collect();
    targets.sort();
    let file = canonical.to_str().unwrap();
    assert_eq!(targets, [file, file, file, "sim:ssd750-400@z97/cpu"]);
    // The JSON result says the same.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("0.json")).unwrap()).unwrap();
    assert_eq!(r["target"]["path"], file);
}

#[test]
fn a_missing_store_is_named_with_how_to_choose_another() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere/r.sqlite");
    let out = iolab(
        &["results", "--db", missing.to_str().unwrap(), "list"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&missing.display().to_string()) && err.contains("--db"),
        "{err}"
    );
    // Reading never creates a database.
    assert!(!missing.exists());
    let out = iolab(&["results", "list"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IOLAB_RESULTS_DIR"));
}

#[test]
fn without_settings_the_store_lives_in_the_user_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (xdg, expect) in [
        (Some(d.join("xdg")), d.join("xdg/iolab/results.sqlite")),
        (None, d.join("home/.local/share/iolab/results.sqlite")),
    ] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
        c.args([
            "run",
            "--size",
            "8m",
            "--ios-limit",
            "100",
            "--json",
            "r.json",
            "t.bin",
        ])
        .current_dir(d)
        .env_remove("IOLAB_DB")
        .env_remove("IOLAB_RESULTS_DIR")
        .env("HOME", d.join("home"));
        match &xdg {
            Some(x) => c.env("XDG_DATA_HOME", x),
            None => c.env_remove("XDG_DATA_HOME"),
        };
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&expect.display().to_string()),
            "{}",
            text(&out)
        );
        let store = Store::open_existing(&expect).unwrap();
        assert_eq!(store.list(&RunFilter::default()).unwrap().1, 1);
    }
}

/// `iolab run` on `t.bin` in `d`, saving to `r.json`, recording into `db`.
fn run_recording_into(d: &Path, db: &Path) -> std::process::Output {
    let args = [
        "run",
        "--size",
        "8m",
        "--ios-limit",
        "100",
        "--json",
        "r.json",
        "t.bin",
    ];
    iolab_cmd(&args, d).env("IOLAB_DB", db).output().unwrap()
}

#[test]
fn a_store_that_is_not_a_database_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let junk = d.join("junk.sqlite");
    let text_before = "this is not an SQLite database, only some text that is long enough";
    std::fs::write(&junk, text_before).unwrap();
    let out = run_recording_into(d, &junk);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not an SQLite database") && err.contains("IOLAB_DB"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), text_before);
    assert!(!d.join("r.json").exists() && !d.join("t.bin").exists());
}

#[test]
fn a_broken_store_costs_a_warning_not_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // SQLite's header, then no database: found out only when recording, after the run.
    let broken = d.join("broken.sqlite");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(0xa5u8, 4096));
    std::fs::write(&broken, &bytes).unwrap();
    let out = run_recording_into(d, &broken);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: could not record the run in the results store")
            && err.contains(&broken.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&broken).unwrap(), bytes);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(saved["complete"], true);
}

#[test]
fn two_runs_recording_at_once_both_land_intact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Same length, started together: they finish, and record, at about the same moment.
    let spawn = |name: &str| -> Child {
        iolab_cmd(
            &[
                "run",
                "--size",
                "8m",
                "--duration",
                "1",
                "--json",
                &format!("{name}.json"),
                &format!("{name}.bin"),
            ],
            d,
        )
        .spawn()
        .unwrap()
    };
    let children = [spawn("one"), spawn("two")];
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(!text(&out).contains("warning"), "{}", text(&out));
    }
    let store = Store::open_existing(&db(d)).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let (runs, total) = store.list(&RunFilter::default()).unwrap();
    assert_eq!(total, 2);
    let mut targets: Vec<&str> = runs.iter().map(|r| r.target_path.as_str()).collect();
    targets.sort();
    let canonical = |name: &str| std::fs::canonicalize(d.join(name)).unwrap();
    assert_eq!(
        targets,
        [canonical("one.bin"), canonical("two.bin")].map(|p| p.display().to_string())
    );
    for r in &runs {
        let detail = store.show(r.id).unwrap();
        assert_eq!(detail.steps.len(), 1);
        assert!(detail.steps[0]
            .metrics
            .iter()
            .any(|m| m.name == "read_iops"));
    }
}

#[test]
fn an_interrupted_run_is_recorded_as_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let child = iolab_cmd(
        &[
            "run",
            "--size",
            "8m",
            "--duration",
            "60",
            "--json",
            "i.json",
            "t.bin",
        ],
        d,
    )
    .spawn()
    .unwrap();
    // Let it create the file and measure a while.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    interrupt(child);
    let store = Store::open_existing(&db(d)).unwrap();
    let (runs, total) = store.list(&RunFilter::default()).unwrap();
    assert_eq!(total, 1);
    assert!(!runs[0].complete);
    assert!(
        runs[0]
            .incomplete_reason
            .as_deref()
            .is_some_and(|r| r.contains("interrupted")),
        "{:?}",
        runs[0].incomplete_reason
    );
    let list = ok(&iolab(&["results", "list"], d));
    assert!(list.contains("INCOMPLETE"), "{list}");
    // What was measured before the interrupt is there.
    let detail = store.show(runs[0].id).unwrap();
    let iops = detail.steps[0]
        .metrics
        .iter()
        .find(|m| m.name == "read_iops")
        .map(|m| m.value);
    assert!(iops.is_some_and(|v| v > 0.0), "{iops:?}");
}

/// `iolab results show` of a modelled run left out each job's model line (watts, bottleneck,
/// write amplification) that `iolab run`'s table and `iolab report` give. It is shown under
/// the job's figures, for each job; a run on a file has none.
#[test]
fn show_gives_a_modelled_jobs_model_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("two.toml"),
        "[[job]]\nname = \"w\"\naccess = \"randwrite\"\nqueue_depth = 8\nduration_s = 0.1\n\n\
         [[job]]\nname = \"r\"\naccess = \"randread\"\nqueue_depth = 8\nduration_s = 0.1\n",
    )
    .unwrap();
    let live = ok(&iolab(
        &["run", "two.toml", "sim:ssd750-400@z97", "--json", "m.json"],
        d,
    ));
    let model_lines = |t: &str| -> Vec<String> {
        t.lines()
            .map(str::trim)
            .filter(|l| l.starts_with("model ") && l.contains(" W; "))
            .map(String::from)
            .collect()
    };
    let want = model_lines(&live);
    assert_eq!(want.len(), 2, "{live}");
    assert!(want[0].contains("write amplification"), "{live}");
    let show = ok(&iolab(&["results", "show", "1"], d));
    assert_eq!(model_lines(&show), want, "{show}");
    // Each under its own job.
    let w = show.find("job 1: w").unwrap();
    let r = show.find("job 2: r").unwrap();
    let first = show.find(&want[0]).unwrap();
    let second = show.rfind(&want[1]).unwrap();
    assert!(w < first && first < r && r < second, "{show}");
    ok(&small_run(d, "t.bin", "randread", "f.json"));
    let show = ok(&iolab(&["results", "show", "2"], d));
    assert!(model_lines(&show).is_empty(), "{show}");
}
