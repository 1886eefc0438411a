//! `iolab suite` and `iolab quick` under mpirun (feature `mpi`): each step one coordinated step
//! of every rank, the aggregate what every rank measured, one result. Without mpirun (or the
//! feature) the tests print `skipped: <reason>`.

mod common;

use common::{iolab_cmd, json, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn mpirun_skip_reason() -> Option<String> {
    if !cfg!(feature = "mpi") {
        return Some("iolab is built without the mpi feature".into());
    }
    match Command::new("mpirun").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("mpirun --version failed: {}", text(&o))),
        Err(e) => Some(format!("no mpirun ({e}): install openmpi-bin")),
    }
}

/// One mpirun test at a time: each starts several ranks on a small machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `mpirun -np N iolab ARGS` in `dir`, results and store inside it.
fn mpirun(n: u32, args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "-np",
        &n.to_string(),
    ])
    .arg(env!("CARGO_BIN_EXE_iolab"))
    .args(args)
    .current_dir(dir)
    .env_remove("IOLAB_DB")
    .env("IOLAB_RESULTS_DIR", dir.join("results"))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn ios(job: &Value) -> u64 {
    u(&job["read"]["ios"]) + u(&job["write"]["ios"])
}

/// Every aggregate job is the sum of the ranks' parts, and every rank has a part of each.
fn check_aggregates_add_up(r: &Value, ranks: usize) {
    let jobs = r["jobs"].as_array().unwrap();
    let infos = r["scale"]["rank_info"].as_array().unwrap();
    assert_eq!(infos.len(), ranks);
    for info in infos {
        assert_eq!(info["jobs"].as_array().unwrap().len(), jobs.len(), "{info}");
    }
    for (j, job) in jobs.iter().enumerate() {
        let parts: Vec<u64> = infos.iter().map(|k| ios(&k["jobs"][j])).collect();
        assert_eq!(ios(job), parts.iter().sum::<u64>(), "job {}", job["name"]);
        assert!(
            parts.iter().all(|p| *p > 0),
            "job {}: {parts:?}",
            job["name"]
        );
    }
}

/// A suite with a fill and a step that loops until steady, short and buffered.
const TINY_SUITE: &str = r#"
name = "tiny"
title = "a fill and a steady-state loop"
source = "test"

[job]
size = "8m"
duration_s = 0.2
direct = false

[[phase]]
name = "prepare"
prepare = { purge = true, fill_passes = 1, fill_block_size = "1m" }

[[phase]]
name = "rounds"
[[phase.step]]
name = "rw"
job = { access = "randrw", block_size = "4k", queue_depth = 2 }
sweep = [{ key = "read_pct", values = [100, 0] }]
steady_state = { metric = "write_iops", track = [{ key = "read_pct", values = [0] }], max_rounds = 6 }
"#;

#[test]
fn a_suite_runs_each_step_on_every_rank_and_judges_steady_state_on_the_aggregate() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tiny.toml");
    std::fs::write(&suite, TINY_SUITE).unwrap();
    let target = dir.path().join("shared.bin");
    let out_json = dir.path().join("r.json");
    let out = mpirun(
        2,
        &[
            "suite",
            suite.to_str().unwrap(),
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&out_json);
    let scale = &r["scale"];
    assert_eq!(u(&scale["ranks"]), 2);
    assert_eq!(scale["share"], "zones of one target");
    let zones: Vec<&str> = scale["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["target"].as_str().unwrap())
        .collect();
    assert!(zones[0].ends_with("bytes 0..4194304"), "{zones:?}");
    assert!(zones[1].ends_with("bytes 4194304..8388608"), "{zones:?}");
    check_aggregates_add_up(&r, 2);
    // Each rank filled its own zone: the fill wrote the target once.
    let fill = &r["jobs"][0];
    assert_eq!(fill["step"]["step"], "fill pass 1", "{fill}");
    assert_eq!(u(&fill["write"]["bytes"]), 8 << 20);
    // The purge was rank 0's, once, of the shared file.
    let prepared = r["suite"]["prepared"].to_string();
    assert!(prepared.contains("once, by rank 0"), "{prepared}");
    // Steady state was judged on the aggregate: its round values are the aggregate's.
    let ss = &r["suite"]["steady_state"][0];
    let values: Vec<f64> = ss["round_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let tracked: Vec<f64> = r["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["name"].as_str().unwrap().starts_with("rw R0 round"))
        .map(|j| j["write"]["iops"].as_f64().unwrap())
        .collect();
    assert!(!values.is_empty());
    assert_eq!(values, tracked, "{ss}");
    assert_eq!(u(&ss["rounds"]) as usize, tracked.len());
    // One result, one report, one record.
    assert!(dir.path().join("r.html").is_file());
    let exported = dir.path().join("exported.json");
    let e = iolab_cmd(
        &["results", "export", "1", "-o", exported.to_str().unwrap()],
        dir.path(),
    )
    .output()
    .unwrap();
    assert!(e.status.success(), "{}", text(&e));
    assert_eq!(u(&json(&exported)["scale"]["ranks"]), 2);
    let e = iolab_cmd(&["results", "export", "2", "-o", "-"], dir.path())
        .output()
        .unwrap();
    assert!(!e.status.success(), "a second record: {}", text(&e));
}

#[test]
fn quick_runs_each_test_on_every_rank_and_merges_the_counted_runs() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let share = dir.path().join("share");
    std::fs::create_dir(&share).unwrap();
    let out_json = dir.path().join("q.json");
    let out = mpirun(
        4,
        &[
            "quick",
            share.to_str().unwrap(),
            "--size",
            "4m",
            "--count",
            "2",
            "--duration",
            "0.2",
            "--warmup",
            "0",
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&out_json);
    assert_eq!(r["scale"]["share"], "own file in a directory");
    assert_eq!(r["jobs"].as_array().unwrap().len(), 8);
    check_aggregates_add_up(&r, 4);
    for job in r["jobs"].as_array().unwrap() {
        // The counted runs merged run by run: rates add across the ranks.
        let repeats = job["repeats"].as_array().unwrap();
        assert_eq!(repeats.len(), 2, "{}", job["name"]);
        let infos = r["scale"]["rank_info"].as_array().unwrap();
        let j = r["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .position(|x| x["name"] == job["name"])
            .unwrap();
        for (i, rep) in repeats.iter().enumerate() {
            let sum: f64 = infos
                .iter()
                .map(|k| {
                    let x = &k["jobs"][j]["repeats"][i];
                    x["read_iops"].as_f64().unwrap() + x["write_iops"].as_f64().unwrap()
                })
                .sum();
            let agg = rep["read_iops"].as_f64().unwrap() + rep["write_iops"].as_f64().unwrap();
            assert!((agg - sum).abs() <= 1e-9 * sum, "{agg} {sum}");
        }
    }
    // The table says the runs as one process's would.
    assert!(
        text(&out).contains("mean of 2 counted run(s)"),
        "{}",
        text(&out)
    );
    // Each rank's test file is gone.
    let left: Vec<_> = std::fs::read_dir(&share).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A saved result without what differs between two runs of the same thing: when it started
/// and the host it ran on (mpirun binds each rank to a core, so even its CPU count differs).
fn without_run_facts(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_host = false;
    for line in text.lines() {
        if line.starts_with("  \"host\": {") {
            in_host = true;
        } else if in_host {
            in_host = !line.starts_with("  }");
        } else if !line.starts_with("  \"started_unix_s\"") {
            out.push(line);
        }
    }
    out.join("\n")
}

/// The results a sweep saved in `dir/results`, in the order of their targets.
fn saved_results(dir: &Path) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    // `…-PID-N.json`: by N.
    let n = |p: &std::path::PathBuf| -> u32 {
        let stem = p.file_stem().unwrap().to_str().unwrap();
        stem.rsplit('-').next().unwrap().parse().unwrap()
    };
    files.sort_by_key(n);
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

#[test]
fn a_suite_over_many_models_split_across_ranks_is_byte_identical_to_one_process() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let models = [
        "sim:ssd750-400@z97",
        "sim:c300-256@890gx",
        "sim:force3-120@h67",
        "sim:hdd-7200@h67",
        "sim:nvme2018-500@z97",
    ];
    let mut args = vec!["suite", "cdm", "--scale", "0.001"];
    args.extend(models);
    let one = tempfile::tempdir().unwrap();
    let out = iolab_cmd(&args, one.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let split = tempfile::tempdir().unwrap();
    let out = mpirun(3, &args, split.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (a, b) = (saved_results(one.path()), saved_results(split.path()));
    assert_eq!(a.len(), models.len());
    assert_eq!(b.len(), models.len());
    for (i, (a, b)) in a.iter().zip(&b).enumerate() {
        let model = models[i].strip_prefix("sim:").unwrap();
        assert!(a.contains(model), "result {i} is not of {model}");
        assert!(
            without_run_facts(a) == without_run_facts(b),
            "{model}: the ranks' result differs from one process's"
        );
    }
    // One record each, in the order of the targets.
    let e = iolab_cmd(&["results", "export", "5", "-o", "-"], split.path())
        .output()
        .unwrap();
    assert!(e.status.success(), "{}", text(&e));
    assert!(String::from_utf8_lossy(&e.stdout).contains("nvme2018-500"));
    // A sweep is over models, and has no one --json file.
    let t = split.path().join("t.bin");
    for (extra, said) in [
        (vec![t.to_str().unwrap()], "not a model"),
        (
            vec!["sim:c300-256@890gx", "--json", "r.json"],
            "leave them out",
        ),
    ] {
        let mut bad = vec!["suite", "cdm", "--scale", "0.001", "sim:hdd-7200@h67"];
        bad.extend(extra);
        let out = iolab_cmd(&bad, split.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(said), "{}", text(&out));
    }
    assert!(!t.exists());
}

/// The replay tests' sample trace: 1000 reads and writes of MSR Cambridge's hm_0.
fn sample_trace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv")
}

#[test]
fn a_trace_replays_whole_on_every_rank_and_the_aggregate_adds_up() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let trace = sample_trace();
    let requests = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count() as u64;
    let dir = tempfile::tempdir().unwrap();
    // Zones of one new file, then each rank its own file from a pattern, then its own model.
    let shared = dir.path().join("shared.bin");
    let pattern = dir.path().join("own.{rank}.bin");
    for (ranks, target, share) in [
        (4, shared.to_str().unwrap(), "zones of one target"),
        (2, pattern.to_str().unwrap(), "own target"),
        (3, "sim:ssd750-400@z97/cpu", "own target"),
    ] {
        let out_json = dir.path().join(format!("replay{ranks}.json"));
        let out = mpirun(
            ranks,
            &[
                "trace",
                "replay",
                trace.to_str().unwrap(),
                target,
                "--as-fast-as-possible",
                "--size",
                "64m",
                "--no-probe",
                "--json",
                out_json.to_str().unwrap(),
            ],
            dir.path(),
        )
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let r = json(&out_json);
        assert_eq!(r["scale"]["share"], share);
        assert_eq!(r["jobs"].as_array().unwrap().len(), 1);
        check_aggregates_add_up(&r, ranks as usize);
        // Every rank replayed the whole trace: ranks × its requests, each rank all of them.
        let n = u64::from(ranks);
        assert_eq!(ios(&r["jobs"][0]), n * requests);
        let model = target.starts_with("sim:");
        for info in r["scale"]["rank_info"].as_array().unwrap() {
            assert_eq!(ios(&info["jobs"][0]), requests, "{}", info["target"]);
            // Ranks start together on the wall clock; a model runs in virtual time.
            let offsets = info["start_offsets_ns"].as_array().unwrap();
            assert_eq!(offsets.is_empty(), model, "{}", info["target"]);
        }
        assert_eq!(u(&r["replay"]["planned_ios"]), n * requests);
        assert!(text(&out).contains(&format!(
            "({} of {} planned requests)",
            n * requests,
            n * requests
        )));
        assert!(text(&out).contains("per host"), "{}", text(&out));
        // On a model the result says how well the model replays traces; on a file, nothing.
        let notes = r["notes"].to_string();
        assert_eq!(
            notes.contains("trace replayed on the model: "),
            model,
            "{target}: {notes}"
        );
    }
    assert!(dir.path().join("own.1.bin").is_file());
    assert!(!dir.path().join("own.2.bin").exists());
}

#[test]
fn a_rank_whose_replay_fails_is_named_and_the_others_stop() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // 30 s of 4 KiB reads, one every 10 ms (MSR's time is in 100 ns units).
    let trace = dir.path().join("slow.csv");
    let lines: Vec<String> = (0..3000u64)
        .map(|i| {
            let t = 128166385295514663 + i * 100_000;
            format!("{t},hm,0,Read,{},4096,100", (i * 7919 % 4096) * 4096)
        })
        .collect();
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    for r in 0..2 {
        let f = std::fs::File::create(dir.path().join(format!("f.{r}"))).unwrap();
        f.set_len(64 << 20).unwrap();
    }
    let pattern = dir.path().join("f.{rank}");
    let out_json = dir.path().join("failed.json");
    let child = mpirun(
        2,
        &[
            "trace",
            "replay",
            trace.to_str().unwrap(),
            pattern.to_str().unwrap(),
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
        ],
        dir.path(),
    )
    .spawn()
    .unwrap();
    // Once rank 1 has its file open, and its replay has started, the file loses its blocks
    // under it: its reads come back short.
    let f1 = dir.path().join("f.1");
    let mut open = false;
    for _ in 0..400 {
        open = file_is_open(&f1);
        if open {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(open, "rank 1 never opened its file");
    std::thread::sleep(std::time::Duration::from_millis(2000));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f1)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = json(&out_json);
    assert_eq!(r["complete"], false);
    let reason = r["incomplete_reason"].as_str().unwrap();
    assert!(reason.contains("rank 1 on"), "{reason}");
    let faults = r["scale"]["faults"].as_array().unwrap();
    assert_eq!(u(&faults[0]["rank"]), 1, "{faults:?}");
    assert!(!faults[0]["host"].as_str().unwrap().is_empty());
    // Rank 0 was stopped for rank 1, well before its 30 s, and what it replayed is kept.
    let rank0 = &r["scale"]["rank_info"][0]["jobs"][0];
    assert!(ios(rank0) > 0);
    assert!(u(&rank0["measured_ns"]) < 25_000_000_000, "rank 0 ran on");
    let why = rank0["stop_reason"].as_str().unwrap_or_default();
    assert!(why.contains("rank 1 on"), "{why}");
    check_aggregates_add_up(&r, 2);
}

/// Whether some process has `file` open.
fn file_is_open(file: &Path) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.filter_map(|e| e.ok()).any(|p| {
        std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
            fds.filter_map(|e| e.ok())
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == file))
        })
    })
}

/// A file-set suite of small sets: create, read, copy near and far.
const TINY_FILE_SUITE: &str = r#"
name = "tinyfiles"
title = "a small file set, created, read and copied"
source = "test"

[[phase]]
name = "small"
[[phase.step]]
name = "create"
files = { set = "s", op = "create", count = 20, file_size = "64k" }
[[phase.step]]
name = "read"
files = { set = "s", op = "read", count = 20, file_size = "64k" }
[[phase.step]]
name = "copy near"
files = { set = "s", op = "copy-near", count = 20, file_size = "64k" }
[[phase.step]]
name = "copy far"
files = { set = "s", op = "copy-far", count = 20, file_size = "64k" }
"#;

/// The entries of `dir`.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_file_set_suite_runs_each_rank_in_its_own_directories_and_adds_them_up() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tinyfiles.toml");
    std::fs::write(&suite, TINY_FILE_SUITE).unwrap();
    let (share, far) = (dir.path().join("share"), dir.path().join("far"));
    std::fs::create_dir(&share).unwrap();
    std::fs::create_dir(&far).unwrap();
    let out_json = dir.path().join("files.json");
    let out = mpirun(
        2,
        &[
            "suite",
            suite.to_str().unwrap(),
            share.to_str().unwrap(),
            "--far",
            far.to_str().unwrap(),
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&out_json);
    assert_eq!(r["complete"], true, "{}", r["incomplete_reason"]);
    assert_eq!(r["scale"]["share"], "own directory in a directory");
    assert_eq!(r["jobs"].as_array().unwrap().len(), 4);
    check_aggregates_add_up(&r, 2);
    // Each rank made its own 20 files: the aggregate wrote both sets.
    let create = &r["jobs"][0];
    assert_eq!(u(&create["write"]["ios"]), 2 * 20);
    assert_eq!(u(&create["write"]["bytes"]), 2 * 20 * 65536);
    // Its rate is over the common window: all bytes over the longest rank's time.
    let longest = r["scale"]["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| u(&k["jobs"][0]["measured_ns"]))
        .max()
        .unwrap();
    assert_eq!(u(&create["measured_ns"]), longest);
    let targets: Vec<&str> = r["scale"]["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["target"].as_str().unwrap())
        .collect();
    assert_ne!(targets[0], targets[1]);
    assert!(targets.iter().all(|t| t.contains("share")), "{targets:?}");
    // Every rank's directories are gone, near and far.
    assert!(entries(&share).is_empty(), "{:?}", entries(&share));
    assert!(entries(&far).is_empty(), "{:?}", entries(&far));
}

#[test]
fn a_file_set_suite_refused_on_one_rank_leaves_no_directory_on_any() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tinyfiles.toml");
    std::fs::write(&suite, TINY_FILE_SUITE).unwrap();
    // Rank 0's directory exists, rank 1's does not.
    let d0 = dir.path().join("d.0");
    std::fs::create_dir(&d0).unwrap();
    let pattern = dir.path().join("d.{rank}");
    let out = mpirun(
        2,
        &["suite", suite.to_str().unwrap(), pattern.to_str().unwrap()],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("rank 1 on") && said.contains("d.1"), "{said}");
    assert!(entries(&d0).is_empty(), "{:?}", entries(&d0));
    assert!(!dir.path().join("d.1").exists());
}
