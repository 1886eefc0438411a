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
