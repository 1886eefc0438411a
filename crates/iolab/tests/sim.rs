//! A model target (`sim:DRIVE@PLATFORM[/PORT]`) runs through the very same commands as a real
//! one: quick, run, suite, trace replay; its results are marked modelled and are byte-for-byte
//! reproducible for a seed.

mod common;
use common::{interrupt, iolab, iolab_cmd, json, text};
use serde_json::Value;
use std::path::Path;

const QUICK: &[&str] = &[
    "quick",
    "sim:ssd750-1200@z97/cpu",
    "--count",
    "1",
    "--duration",
    "0.2",
    "--warmup",
    "0.1",
];

/// The jobs of a result without what legitimately differs between runs (wall-clock start).
fn jobs(v: &Value) -> String {
    v["jobs"].to_string()
}

#[test]
fn quick_on_a_model_is_marked_modelled_and_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    for name in ["a.json", "b.json"] {
        let out = iolab(&[QUICK, &["--json", name]].concat(), dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains("modelled"), "{}", text(&out));
        results.push(json(&dir.path().join(name)));
    }
    let r = &results[0];
    assert_eq!(r["target"]["kind"], "sim");
    assert_eq!(r["target"]["modelled"], true);
    assert_eq!(r["target"]["path"], "sim:ssd750-1200@z97/cpu");
    assert_eq!(
        r["target"]["model"]["state"],
        "full (sequential fill, analytic)"
    );
    let jobs_a = r["jobs"].as_array().unwrap();
    assert_eq!(jobs_a.len(), 8, "four tests, read and write");
    for j in jobs_a {
        let ios = j["read"]["ios"].as_u64().unwrap() + j["write"]["ios"].as_u64().unwrap();
        assert!(ios > 0, "{} did nothing", j["name"]);
    }
    // A model on PCIe 3.0 x4 cannot beat its link: sequential reads stay under 3.94 GB/s.
    let seq = &jobs_a[0];
    let mb_s = seq["read"]["bw_mb_per_s"].as_f64().unwrap();
    assert!(mb_s > 500.0 && mb_s < 3940.0, "SEQ1M Q8T1 read {mb_s} MB/s");
    assert_eq!(
        jobs(&results[0]),
        jobs(&results[1]),
        "same seed, same figures"
    );
    // Every job left a report of its power and bottleneck.
    assert_eq!(
        r["target"]["model"]["tests"].as_array().unwrap().len(),
        8 + 8
    );
}

#[test]
fn a_job_file_and_a_suite_run_on_a_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("j.toml"),
        "[[job]]\nname = \"qd1\"\naccess = \"randread\"\nqueue_depth = 1\nduration_s = 0.2\n\
         [[job]]\nname = \"qd32\"\naccess = \"randread\"\nqueue_depth = 32\nduration_s = 0.2\n",
    )
    .unwrap();
    let out = iolab(
        &["run", "j.toml", "sim:c300-256@890gx", "--json", "r.json"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    let iops = |i: usize| r["jobs"][i]["read"]["iops"].as_f64().unwrap();
    // Queue depth is what a SATA SSD's parallelism needs: QD32 is several times QD1.
    assert!(
        iops(1) > 3.0 * iops(0),
        "QD1 {} vs QD32 {}",
        iops(0),
        iops(1)
    );

    let out = iolab(
        &[
            "suite",
            "cdm",
            "sim:ssd750-400@z97",
            "--scale",
            "0.05",
            "--json",
            "s.json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = json(&dir.path().join("s.json"));
    assert_eq!(s["suite"]["name"], "cdm");
    assert!(s["complete"].as_bool().unwrap());
    assert!(
        dir.path().join("s.html").exists(),
        "the suite's HTML report"
    );
}

#[test]
fn a_trace_replays_on_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let trace =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv");
    // The trace replayed on `target` with `extra` flags: its result.
    let replay = |target: &str, extra: &[&str]| {
        let args = [&["trace", "replay", trace.to_str().unwrap(), target], extra].concat();
        let out = iolab(&[&args[..], &["--json", "t.json"]].concat(), dir.path());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        json(&dir.path().join("t.json"))
    };
    let r = replay("sim:hdd-7200@h67", &["--as-fast-as-possible"]);
    let j = &r["jobs"][0];
    let replayed = j["read"]["ios"].as_u64().unwrap() + j["write"]["ios"].as_u64().unwrap();
    assert_eq!(replayed, r["replay"]["planned_ios"].as_u64().unwrap());
    // A hard disk seeks: random requests average milliseconds, not microseconds.
    assert!(r["replay"]["avg_latency_us"].as_f64().unwrap() > 1000.0);
    // The result says what ran: the trace's request sizes (it used to say one 64 KiB size).
    let sizes = j["job"]["block_sizes"].as_array().unwrap();
    assert!(sizes.len() > 5, "{sizes:?}");
    assert_eq!(sizes[0]["bytes"], 4096);
    // Emptied first, a hard disk keeps its data (it has no TRIM), and the result says so.
    let r = replay("sim:hdd-7200@h67", &["--target-state", "empty"]);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("nothing to TRIM: hdd-7200 keeps its data"),
        "{notes}"
    );
    // Filled first, the state recorded is the filled one the replay started from.
    let r = replay("sim:sf1200-25@h55", &["--target-state", "filled"]);
    let state = r["target"]["model"]["state"].as_str().unwrap();
    assert!(state.starts_with("full (one sequential pass"), "{state}");
    // The note says how much was written in units a reader takes in (it said 24413952k).
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("target filled first: 25.0 GB in "),
        "{notes}"
    );

    // An SSD taken as it is holds data where the trace reads (as `run` starts it): its reads
    // cost page reads, not the nothing a fresh drive's unwritten LBAs cost.
    let r = replay("sim:ssd750-400@z97/cpu", &[]);
    let state = r["target"]["model"]["state"].as_str().unwrap();
    assert!(state.starts_with("full"), "{state}");
    let read = &r["jobs"][0]["read"];
    assert!(
        read["lat_ns"]["mean"].as_f64().unwrap() > 30_000.0,
        "{read}"
    );
    // The result says how well the model replays traces: its Storage Bench validation.
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("trace replayed on the model: validated replaying traces (AnandTech's Storage Bench, every drive): ")
            && notes.contains(" validation figures within tolerance"),
        "{notes}"
    );
}

#[test]
fn bad_model_names_say_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    for (spec, expect) in [
        ("sim:nosuch@z97", "unknown drive 'nosuch'; the catalog has:"),
        ("sim:ssd750-1200@nosuch", "unknown platform 'nosuch'"),
        (
            "sim:ssd750-1200@z97/nosuch",
            "has no port 'nosuch'; its ports:",
        ),
        ("sim:ssd750-1200", "use sim:DRIVE@PLATFORM[/PORT]"),
    ] {
        let out = iolab(&["quick", spec], dir.path());
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", text(&out));
        assert!(text(&out).contains(expect), "{spec}: {}", text(&out));
        assert!(!text(&out).contains("panicked"), "{}", text(&out));
    }
}

/// What a model cannot honour is refused rather than ignored: options that change what a real
/// run measures (the model would report O_DIRECT figures for a buffered job, and a full queue
/// for psync), and the commands that look at a real path (probing a model spec described the
/// disk holding the current directory).
#[test]
fn what_a_model_cannot_honour_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "sim:ssd750-400@z97/cpu";
    let run = |extra: &[&'static str]| {
        let mut args = vec!["run", spec, "--access", "randread", "--duration", "0.1"];
        args.extend_from_slice(extra);
        args
    };
    for (args, says) in [
        (run(&["--buffered"]), "a model has no page cache"),
        (
            run(&["--engine", "psync"]),
            "has no engine, so leave --engine out",
        ),
        (
            vec!["probe", spec],
            "iolab sim explain sim:ssd750-400@z97/cpu",
        ),
        (vec!["trimcheck", spec], "a model has none"),
        (
            run(&["--destroy-data", "not-a-device"]),
            "has no data to lose, so leave --destroy-data out",
        ),
    ] {
        let out = iolab(&args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
}

/// A SandForce model reads the data it is given (compression), so it keeps a buffer per I/O in
/// flight: 1 GiB blocks at QD4096 × 1024 threads aborted the process on a 4 PiB allocation
/// (exit 134, a backtrace). Refused as on a file, naming the options to lower.
#[test]
fn a_compressing_model_refuses_buffers_larger_than_memory() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "sim:force3-120@h67",
        "--access",
        "randwrite",
        "--bs",
        "1g",
        "--qd",
        "4096",
        "--threads",
        "1024",
        "--duration",
        "0.01",
    ];
    let out = iolab(&args, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("of I/O buffers"), "{}", text(&out));
    assert!(!text(&out).contains("panicked"), "{}", text(&out));
}

/// A job file's second job asking for buffered I/O ran the first job on the model, then
/// stopped as if an I/O error had (exit 1), without the file's line. Refused before any job
/// runs, at the line of `direct`, as other impossible values are.
#[test]
fn a_later_buffered_job_on_a_model_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.toml"),
        "[[job]]\nname = \"a\"\nios_limit = 10\n\n[[job]]\nname = \"b\"\nios_limit = 10\ndirect = false\n",
    )
    .unwrap();
    let out = iolab(
        &["run", "two.toml", "sim:ssd750-400@z97", "--json", "r.json"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("two.toml, line 8"), "{}", text(&out));
    assert!(text(&out).contains("direct"), "{}", text(&out));
    assert!(!dir.path().join("r.json").exists(), "no job ran");
}

/// filecopy on a model said only "works through a filesystem: give a directory", as if the
/// `sim:` spec were a mistyped path; it says that filecopy cannot run on a model, and what can.
#[test]
fn filecopy_on_a_model_says_it_needs_a_filesystem_not_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(&["suite", "filecopy", "sim:c300-256@h67"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "suite filecopy works through a filesystem (it times whole files), so it cannot run \
             on a model such as sim:c300-256@h67: give a directory on a real drive; the \
             block-level suites run on models"
        ),
        "{err}"
    );
    // No working directory was made for it.
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".iolab-tmp"))
        .collect();
    assert!(made.is_empty(), "{made:?}");
}

#[test]
fn list_and_explain_show_the_catalog_and_the_bottleneck() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(&["sim", "list"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for name in ["ssd750-1200", "c300-256", "z97", "x470"] {
        assert!(text(&out).contains(name), "{}", text(&out));
    }
    let out = iolab(&["sim", "explain", "sim:ssd750-1200@z97"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("PCIe 3.0 x4"), "{t}");
    assert!(
        t.contains("4K random read QD32") && t.contains("bottleneck"),
        "{t}"
    );
}

#[test]
fn calibrate_runs_only_the_figures_an_id_names_and_refuses_an_id_that_names_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(
        &["sim", "calibrate", "--figure", "d-spec-idle-power-w"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    // Both SSD 750s' idle-power figures, nothing else, and no validation set.
    assert_eq!(t.matches("spec idle power").count(), 2, "{t}");
    assert!(t.contains("2 of 2 figures"), "{t}");
    assert!(!t.contains("validation set"), "{t}");
    // More models at once (or one) compute the same figures; none at once is refused.
    for models in ["1", "3"] {
        let out = iolab(
            &[
                "sim",
                "calibrate",
                "--figure",
                "d-spec-idle-power-w",
                "--models",
                models,
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(text(&out), t, "--models {models}");
    }
    let out = iolab(&["sim", "calibrate", "--models", "0"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--models"), "{}", text(&out));
    // Under mpirun a build without MPI refuses: every rank would run and print them all.
    let out = iolab_cmd(
        &["sim", "calibrate", "--figure", "d-spec-idle-power-w"],
        dir.path(),
    )
    .env("OMPI_COMM_WORLD_SIZE", "3")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("without mpirun"), "{}", text(&out));
    let out = iolab(
        &["sim", "calibrate", "--figure", "no-such-figure"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--figure \"no-such-figure\"")
            && text(&out).contains("catalog/figures/calibration.toml"),
        "{}",
        text(&out)
    );
    // An empty text (an unset shell variable) names every figure: refused, not a whole run.
    let out = iolab(&["sim", "calibrate", "--figure", ""], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--figure"), "{}", text(&out));
}

#[test]
fn a_user_catalog_adds_a_drive_and_a_wrong_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("drives")).unwrap();
    let entry = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("name = \"ssd750-400\"", "name = \"my-drive\"");
    std::fs::write(dir.path().join("drives/my.toml"), &entry).unwrap();
    let run = |catalog: &str| {
        iolab(
            &[
                "run",
                "sim:my-drive@z97",
                "--catalog",
                catalog,
                "--access",
                "randread",
                "--duration",
                "0.1",
                "--json",
                "r.json",
            ],
            dir.path(),
        )
    };
    let out = run(".");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json(&dir.path().join("r.json"))["target"]["kind"], "sim");
    let out = run("no-such-dir");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no-such-dir"), "{}", text(&out));
    // An inconsistent entry names its file.
    std::fs::write(
        dir.path().join("drives/my.toml"),
        entry.replace("name = \"my-drive\"", "name = \"my-drive\"\nbogus_key = 1"),
    )
    .unwrap();
    let out = run(".");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("my.toml"), "{}", text(&out));
}

#[test]
fn json_to_standard_output_is_the_only_thing_there() {
    // `--json -` is for pipes: the tables go to standard error, so what a pipe gets parses.
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(
        &[
            "run",
            "sim:ssd750-400@z97/cpu",
            "--access",
            "randread",
            "--duration",
            "0.05",
            "--json",
            "-",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["target"]["modelled"], true);
    assert!(String::from_utf8_lossy(&out.stderr).contains("RandRead 4k QD1"));
}

/// Ctrl-C during the fill of `--target-state filled` leaves a partly filled drive: the result
/// says so, where it said "target filled first: 345 GB in 255.4 s", recorded the model's state
/// as "full (one sequential pass of 128 KiB writes)" and gave the replay's interruption as the
/// reason.
#[test]
fn an_interrupted_fill_before_a_replay_is_not_called_a_fill() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "0,h,0,Read,0,4096,10\n1000,h,0,Write,8192,4096,10\n",
    )
    .unwrap();
    let child = iolab_cmd(
        &[
            "trace",
            "replay",
            "t.csv",
            "sim:ssd750-1200@z97",
            "--target-state",
            "filled",
            "--json",
            "r.json",
        ],
        dir.path(),
    )
    .spawn()
    .unwrap();
    // A 1.2 TB fill takes a release build 12 s: interrupted inside it (or before it starts).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let out = interrupt(child);
    let r = json(&dir.path().join("r.json"));
    assert_eq!(r["complete"], false);
    let reason = r["incomplete_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the fill before the replay stopped (interrupted) after "),
        "{reason}"
    );
    assert!(
        reason.ends_with("the target is only partly filled"),
        "{reason}"
    );
    assert!(
        !text(&out).contains("target filled first"),
        "{}",
        text(&out)
    );
    let state = r["target"]["model"]["state"].as_str().unwrap();
    assert!(state.starts_with("partly filled"), "{state}");
}

/// A model named without its `sim:` is not a new test file to measure: `iolab quick
/// ssd750-400@z97` created a 1 GiB file of that name and measured the disk at hand. Written
/// as a path (`./NAME`), it is a file as before.
#[test]
fn a_model_named_without_sim_is_not_taken_for_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "0,h,0,Read,0,4096,10\n").unwrap();
    for args in [
        &["quick", "ssd750-400@z97", "--size", "1m"][..],
        &["run", "ssd750-400@z97", "--size", "1m", "--ios-limit", "1"],
        &["suite", "cdm", "ssd750-400@z97", "--scale", "0.001"],
        &["trace", "replay", "t.csv", "ssd750-400@z97", "--size", "1m"],
        &[
            "run",
            "SIM:ssd750-400@z97",
            "--size",
            "1m",
            "--ios-limit",
            "1",
        ],
    ] {
        let out = iolab(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains("names a model: write sim:ssd750-400@z97 to run on the model"),
            "{args:?}: {}",
            text(&out)
        );
        assert!(!text(&out).contains("creating"), "{args:?}: {}", text(&out));
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "t.csv" && n != "results")
            .collect();
        assert!(files.is_empty(), "{args:?} made {files:?}");
    }
    let out = iolab(
        &[
            "run",
            "./ssd750-400@z97",
            "--size",
            "1m",
            "--ios-limit",
            "1",
            "--no-probe",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(dir.path().join("ssd750-400@z97").exists());
}

#[test]
fn a_score_whose_step_measured_nothing_says_so() {
    // AS SSD's access-time steps last 10 s; at --scale 0.001 that is 10 ms, less than one
    // access of a hard disk, so the read step completes no I/O. Its score was left out of the
    // list without a word.
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(
        &[
            "suite",
            "asssd",
            "sim:hdd-7200@h67",
            "--scale",
            "0.001",
            "--json",
            "s.json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = json(&dir.path().join("s.json"));
    assert!(s["complete"].as_bool().unwrap());
    let scores: Vec<&str> = s["suite"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(!scores.contains(&"Access time read"), "{scores:?}");
    let notes = s["notes"].to_string();
    assert!(
        notes.contains("score 'Access time read' not given: 'Access time read' measured nothing")
            && notes.contains("higher --scale"),
        "{notes}"
    );
    assert!(text(&out).contains("score 'Access time read' not given"));
}

/// `iolab sim list` showed a built-in entry's file as `[catalog/drives/c300-256.toml]`, a path
/// relative to nothing the user has (the entries are compiled in), and a user's file as the
/// path as given. Built-ins say so; a user's file is shown where it really is, also when its
/// directory is named `catalog` like the built-ins'.
#[test]
fn list_says_built_in_or_where_the_users_file_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("catalog/drives")).unwrap();
    let c300 = include_str!("../../../catalog/drives/c300-256.toml");
    std::fs::write(d.join("catalog/drives/c300-256.toml"), c300).unwrap();
    let mine = c300.replace("name = \"c300-256\"", "name = \"my-drive\"");
    std::fs::write(d.join("catalog/drives/my.toml"), mine).unwrap();
    let out = iolab(&["sim", "list", "--catalog", "catalog"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    let line = |name: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {t}"))
            .to_string()
    };
    let real = d.canonicalize().unwrap().join("catalog/drives");
    assert!(line("ssd750-400").ends_with("[built-in]"), "{t}");
    assert!(line("z97").ends_with("[built-in]"), "{t}");
    assert!(
        line("my-drive").ends_with(&format!("[{}]", real.join("my.toml").display())),
        "{t}"
    );
    // The user's replacement of a built-in, in a directory also called catalog/.
    assert!(
        line("c300-256").ends_with(&format!("[{}]", real.join("c300-256.toml").display())),
        "{t}"
    );
    assert!(!t.contains("[catalog/"), "{t}");
    assert!(t.contains("built-in: compiled into iolab"), "{t}");
}

/// A user's catalog entry with a built-in's name replaced the built-in without a word. Each
/// command that loads it says which file replaces which built-in, `sim list` marks the entry,
/// and a result on the model keeps the note.
#[test]
fn a_users_entry_with_a_built_ins_name_is_said_to_replace_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("drives")).unwrap();
    let mine = include_str!("../../../catalog/drives/ssd750-400.toml")
        .replace("Intel SSD 750 400GB", "my SSD 750, retuned");
    std::fs::write(d.join("drives/mine.toml"), mine).unwrap();
    let file = d.canonicalize().unwrap().join("drives/mine.toml");
    let note = "drives/mine.toml replaces the built-in drive 'ssd750-400'";
    let out = iolab(&["sim", "list", "--catalog", "."], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(note),
        "{}",
        text(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("ssd750-400 "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("my SSD 750, retuned")
            && line.ends_with(&format!("[{}; replaces the built-in]", file.display())),
        "{line}"
    );
    let out = iolab(
        &["sim", "explain", "sim:ssd750-400@z97", "--catalog", "."],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(note),
        "{}",
        text(&out)
    );
    let out = iolab(
        &[
            "run",
            "sim:ssd750-400@z97",
            "--catalog",
            ".",
            "--access",
            "randread",
            "--duration",
            "0.05",
            "--json",
            "r.json",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(note),
        "{}",
        text(&out)
    );
    let notes = json(&d.join("r.json"))["notes"].to_string();
    assert!(notes.contains(note), "{notes}");
}

#[test]
fn a_run_in_which_the_model_collected_garbage_says_how_little_that_regime_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    let notes = |state: &str, access: &str| {
        let out = iolab(
            &[
                "run",
                "sim:ssd750-400@z97/cpu",
                "--model-state",
                state,
                "--access",
                access,
                "--bs",
                "4k",
                "--qd",
                "32",
                "--duration",
                "0.2",
                "--json",
                "r.json",
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        json(&dir.path().join("r.json"))["notes"].to_string()
    };
    let said = "garbage collection ran in the model: validated in garbage-collection steady state";
    // Random writes in steady state: every write waits for collection.
    let steady = notes("steady", "randwrite");
    assert!(steady.contains(said), "{steady}");
    assert!(
        steady.contains(" validation figures within tolerance"),
        "{steady}"
    );
    // Reads of a freshly filled drive move nothing.
    let reads = notes("full", "randread");
    assert!(!reads.contains("garbage collection ran"), "{reads}");
}
