//! End-to-end tests of the `iolab` binary: on temp files, loop devices and zram that the tests
//! create and remove. Device tests print `skipped: …` where the machine cannot provide one.

use iolab_testkit::{
    checksum, loop_skip_reason, mount_skip_reason, zram_skip_reason, BlockStat, LoopDevice,
    MachineLock, Mount, Zram,
};
use serde_json::Value;
use std::path::Path;

mod common;
use common::{interrupt, iolab, iolab_cmd, json, refused_unchanged, small_write, text};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

/// The names of `quick`'s test files in `dir`.
fn quick_test_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("iolab-quick.") && n.ends_with(".iolab-tmp"))
        .collect();
    names.sort();
    names
}

#[test]
fn quick_removes_the_test_file_a_killed_run_left_and_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let quick = |duration: &str| {
        let args = [
            "quick",
            "--count",
            "1",
            "--duration",
            duration,
            "--warmup",
            "0",
            "--size",
            "8m",
            "--json",
            "-",
        ];
        iolab_cmd(&args, dir.path())
    };
    // A run killed once its test file is written, as SIGKILL (or the OOM killer) does: it
    // cannot remove its file.
    let mut killed = quick("30").spawn().unwrap();
    let left = loop {
        let files = quick_test_files(dir.path());
        let written = files
            .iter()
            .find(|n| std::fs::metadata(dir.path().join(n)).is_ok_and(|m| m.len() == 8 << 20));
        if let Some(name) = written {
            break name.clone();
        }
        assert!(
            killed.try_wait().unwrap().is_none(),
            "quick ended before its test file was written"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(left, format!("iolab-quick.{}.iolab-tmp", killed.id()));
    assert_eq!(quick_test_files(dir.path()), vec![left.clone()]);
    // The next run removes it, saying so, and then its own.
    let out = quick("0.1").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("removed {left} (8m)"))
            && err.contains(&format!("process {}", killed.id())),
        "{err}"
    );
    assert_eq!(quick_test_files(dir.path()), Vec::<String>::new());
    // --keep keeps its file under the plain name, which a later run uses, says so and keeps.
    let out = iolab(
        &[
            "quick",
            "--count",
            "1",
            "--duration",
            "0.1",
            "--warmup",
            "0",
            "--size",
            "8m",
            "--json",
            "-",
            "--keep",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(quick_test_files(dir.path()), vec!["iolab-quick.iolab-tmp"]);
    let out = quick("0.1").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("using the test file iolab-quick.iolab-tmp that an earlier run kept"),
        "{}",
        text(&out)
    );
    assert_eq!(quick_test_files(dir.path()), vec!["iolab-quick.iolab-tmp"]);
}

#[test]
fn quick_on_a_temp_file_reports_eight_tests_and_removes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(
        &[
            "quick",
            "--count",
            "2",
            "--duration",
            "0.3",
            "--warmup",
            "0.2",
            "--size",
            "32m",
            "--json",
            "q.json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    for label in [
        "SEQ1M Q8T1",
        "SEQ1M Q1T1",
        "RND4K Q32T1",
        "RND4K Q1T1",
        "mean of 2 counted run",
    ] {
        assert!(table.contains(label), "missing {label}:\n{table}");
    }
    assert_eq!(quick_test_files(dir.path()), Vec::<String>::new());
    let r = json(&dir.path().join("q.json"));
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["kind"], "quick");
    assert_eq!(r["complete"], true);
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 8);
    for j in jobs {
        // Each job names its CrystalDiskMark test, for reports to read instead of the name.
        let name = j["name"].as_str().unwrap();
        let dir = j["test"]["direction"].as_str().unwrap();
        assert_eq!(
            format!("{} {dir}", j["test"]["label"].as_str().unwrap()),
            name
        );
        let access = if name.starts_with("SEQ") {
            "seq"
        } else {
            "rnd"
        };
        assert_eq!(j["test"]["access"], access, "{name}");
        assert!(u(&j[dir]["ios"]) > 0, "{}", j["name"]);
        let repeats = j["repeats"].as_array().unwrap();
        assert_eq!(repeats.len(), 2);
        // The reported rate is the mean of the counted runs.
        let key = format!("{dir}_mb_per_s");
        let mean = repeats
            .iter()
            .map(|x| x[&key].as_f64().unwrap())
            .sum::<f64>()
            / 2.0;
        let shown = j[dir]["bw_mb_per_s"].as_f64().unwrap();
        assert!(
            (mean - shown).abs() <= 1e-9 * mean.max(1.0),
            "{mean} vs {shown}"
        );
    }
}

#[test]
fn limits_issue_exactly_the_asked_ios_and_bytes_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "psync"] {
        let out = iolab(
            &[
                "run",
                "--size",
                "16m",
                "--access",
                "randrw",
                "--read-pct",
                "60",
                "--bssplit",
                "4k/50:16k/50",
                "--qd",
                "8",
                "--threads",
                "2",
                "--ios-limit",
                "4000",
                "--engine",
                engine,
                "--json",
                "r.json",
                "t.bin",
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{engine}: {}", text(&out));
        let r = json(&dir.path().join("r.json"));
        let j = &r["jobs"][0];
        assert_eq!(r["target"]["engine"], engine);
        assert_eq!(
            u(&j["read"]["ios"]) + u(&j["write"]["ios"]),
            4000,
            "{engine}"
        );
        let bytes = u(&j["read"]["bytes"]) + u(&j["write"]["bytes"]);
        assert!(bytes % 4096 == 0 && (4000 * 4096..=4000 * 16384).contains(&bytes));
        let reads = u(&j["read"]["ios"]) as f64 / 4000.0;
        assert!((reads - 0.6).abs() < 0.05, "read share {reads}");
        assert!(
            j["cpu"]["user_s"].as_f64().unwrap() + j["cpu"]["system_s"].as_f64().unwrap() > 0.0
        );
    }
    // The file the first run created was fully written: not sparse.
    let meta = std::fs::metadata(dir.path().join("t.bin")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert!(meta.blocks() * 512 >= meta.len(), "created file is sparse");
}

/// I/O buffers far beyond any machine's memory (4 TiB).
const HUGE_BUFFERS: &[&str] = &[
    "run",
    "--size",
    "1m",
    "--bs",
    "1m",
    "--qd",
    "4096",
    "--threads",
    "1024",
    "t.bin",
];

#[test]
fn bad_jobs_get_one_clear_error_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("typo.toml"),
        "name = \"x\"\nblocksize = \"4k\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("two.toml"),
        "[[job]]\nname = \"a\"\nqueue_depth = 0\n",
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "typo.toml", "t.bin"], "blocksize"),
        (&["run", "two.toml", "t.bin"], "queue_depth"),
        (&["run", "--bs", "0", "--size", "1m", "t.bin"], "block_size"),
        (
            &["run", "--bs", "4100", "--size", "1m", "t.bin"],
            "O_DIRECT",
        ),
        (
            &["run", "--size", "2k", "--bs", "4k", "t.bin"],
            "smaller than one block",
        ),
        (
            &[
                "run",
                "--zones",
                "--threads",
                "8",
                "--size",
                "16k",
                "--bs",
                "4k",
                "t.bin",
            ],
            "zones",
        ),
        (&["run", "missing.bin"], "--size"),
        // Sizes are exact integers (through f64, 2^64 - 512 was "18446744073709551615 is not
        // sector-aligned"), and one past u64 is refused, not taken as u64::MAX.
        (
            &[
                "run",
                "--offset",
                "18446744073709551104",
                "sim:ssd750-400@z97",
            ],
            "offset: 18446744073709551104 is at or past the end of the target",
        ),
        (
            &["run", "--bs", "18446744073709551616", "sim:ssd750-400@z97"],
            "'18446744073709551616' is not a size: it is too large",
        ),
        (&["run", "."], "directory"),
        (
            &["run", "--model-state", "steady", "--size", "1m", "t.bin"],
            "--model-state applies to a model target",
        ),
        (
            &["quick", "--catalog", ".", "t.bin"],
            "--catalog applies to a model target",
        ),
        // quick's timing options, each named (inf and 1e30 once panicked in the sleep).
        (&["quick", "--warmup", "nan", "t.bin"], "--warmup NaN"),
        (&["quick", "--warmup=-1", "t.bin"], "--warmup -1"),
        (&["quick", "--warmup", "inf", "t.bin"], "--warmup inf"),
        (&["quick", "--interval", "nan", "t.bin"], "--interval NaN"),
        (&["quick", "--interval=-1", "t.bin"], "--interval -1"),
        (
            &["quick", "--interval", "1e30", "t.bin"],
            "up to 86400 (a day)",
        ),
        (&["quick", "--interval", "inf", "t.bin"], "--interval inf"),
        // Checked before anything is measured, naming the option.
        (
            &[
                "run",
                "--size",
                "1m",
                "--json",
                "no/such/dir/r.json",
                "t.bin",
            ],
            "--json no/such/dir/r.json: the directory no/such/dir does not exist",
        ),
        (
            &["quick", "--size", "1m", "--json", ".", "t.bin"],
            "--json . is a directory",
        ),
        // I/O buffers far beyond any machine's memory: an error, not an abort (exit 134).
        (
            HUGE_BUFFERS,
            "--bs 1m × --qd 4096 × --threads 1024 needs 4t of I/O buffers",
        ),
    ];
    for (args, hint) in cases {
        let out = iolab(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(hint), "{args:?}: expected '{hint}' in: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // Refused before the target is opened: no test file is created for them.
    let fresh = tempfile::tempdir().unwrap();
    for args in [
        &["run", "--size", "1m", "--json", "no/dir/r.json", "t.bin"][..],
        HUGE_BUFFERS,
    ] {
        assert_eq!(iolab(args, fresh.path()).status.code(), Some(2), "{args:?}");
        assert!(!fresh.path().join("t.bin").exists(), "{args:?}");
    }
}

/// A job file's refused value names the file, the line and the job (wrong types and unknown
/// keys did, through TOML's message; a value out of range said only "job 'job1': queue_depth:
/// 0 is outside 1–4096"). A file with no job, or keys outside its [[job]] tables, is refused
/// with what the format is; a job file is told by its extension in any case.
#[test]
fn job_file_errors_name_the_file_the_line_and_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = [
        (
            "two.toml",
            "[[job]]\nname = \"a\"\n\n[[job]]\nname = \"b\"\nqueue_depth = 0\n",
        ),
        ("one.toml", "# one job\naccess = \"read\"\nthreads = 0\n"),
        ("past.toml", "[[job]]\nname = \"a\"\nsize = \"1t\"\n"),
        ("empty.toml", ""),
        ("comments.toml", "# nothing yet\n\n"),
        ("top.toml", "access = \"read\"\n[[job]]\nname = \"x\"\n"),
        ("RR.TOML", "queue_depth = 0\n"),
    ];
    for (name, text) in files {
        std::fs::write(d.join(name), text).unwrap();
    }
    let sim = "sim:ssd750-400@z97";
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "two.toml", sim],
            "two.toml, line 6: job 'b': queue_depth: 0 is outside 1–4096",
        ),
        (
            &["run", "one.toml", sim],
            "one.toml, line 3: job 'job1': threads: 0 is outside 1–1024",
        ),
        // Refused once the target's size is known, still at its line.
        (
            &["run", "past.toml", sim],
            "past.toml, line 3: job 'a': size: size 1t runs past the end",
        ),
        // A flag's value is the command line's, not the file's.
        (
            &["run", "two.toml", sim, "--qd", "5000"],
            "job 'a': queue_depth (--qd): 5000 is outside 1–4096 (`--qd` set on the command \
             line, for job 1 of two.toml)",
        ),
        (&["run", "empty.toml", sim], "no [[job]] in empty.toml"),
        (
            &["run", "comments.toml", sim],
            "no [[job]] in comments.toml",
        ),
        (
            &["run", "top.toml", sim],
            "top.toml, line 1: `access` is outside the [[job]] tables",
        ),
        (
            &["run", "RR.TOML", sim],
            "RR.TOML, line 1: job 'job1': queue_depth: 0 is outside 1–4096",
        ),
    ];
    for (args, hint) in cases {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(hint), "{args:?}: expected '{hint}' in: {err}");
    }
    assert!(!d.join("results/results.sqlite").exists(), "nothing ran");
}

/// Results, reports and `results compare` tell a run's jobs apart by name: a name two jobs
/// share (the HTML chart used to drop the later one) or an empty one is refused, naming the
/// file and the jobs, before anything runs.
#[test]
fn job_names_are_refused_when_repeated_or_empty() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let two = |a: &str, b: &str| {
        format!("[[job]]\n{a}access = \"randread\"\nios_limit = 100\n[[job]]\n{b}access = \"randwrite\"\nios_limit = 100\n")
    };
    std::fs::write(d.join("dup.toml"), two("name = \"a\"\n", "name = \"a\"\n")).unwrap();
    std::fs::write(d.join("unnamed.toml"), two("", "")).unwrap();
    std::fs::write(d.join("empty.toml"), two("name = \"a\"\n", "name = \"\"\n")).unwrap();
    std::fs::write(d.join("default.toml"), two("", "name = \"job1\"\n")).unwrap();
    let sim = "sim:ssd750-400@z97";
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "dup.toml", sim],
            "dup.toml, line 6: jobs 1 and 2 are both named 'a'; give each job its own `name`",
        ),
        (
            &["run", "unnamed.toml", sim, "--name", "same"],
            "--name same would name all 2 jobs of unnamed.toml that have no name of their own",
        ),
        (
            &["run", "empty.toml", sim],
            "empty.toml, line 6: job 2 has an empty name",
        ),
        (
            &["run", "default.toml", sim],
            "default.toml, line 5: jobs 1 and 2 are both named 'job1' (job 1 by default)",
        ),
        (&["run", sim, "--name", ""], "--name is empty"),
    ];
    for (args, hint) in cases {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(hint), "{args:?}: expected '{hint}' in: {err}");
    }
    // Nothing ran, nothing was recorded.
    assert!(!d.join("results").exists());
    // Unnamed jobs still get job1, job2; --name names a single job.
    let out = iolab(&["run", "unnamed.toml", sim, "--json", "u.json"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let names: Vec<_> = json(&d.join("u.json"))["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["job1", "job2"]);
}

/// bssplit weights that do not add up to 100 are normalised, as documented, and the shares
/// used are said (they were normalised silently): on the terminal and in the result's notes.
#[test]
fn bssplit_weights_that_do_not_add_up_to_100_are_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("split.toml"),
        "[[job]]\nname = \"a\"\nbssplit = \"4k/1:8k/3\"\nios_limit = 20\n",
    )
    .unwrap();
    let sim = "sim:ssd750-400@z97";
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "run",
                sim,
                "--bssplit",
                "512/10:4k/60:64k/10",
                "--ios-limit",
                "20",
            ],
            "job 'job1': --bssplit 512/10:4k/60:64k/10: the weights add up to 80, not 100, so \
             they are taken as shares of it: 512/12.5:4k/75:64k/12.5",
        ),
        (
            &["run", "split.toml", sim],
            "job 'a': bssplit 4k/1:8k/3: the weights add up to 4, not 100, so they are taken \
             as shares of it: 4k/25:8k/75",
        ),
    ];
    for (args, note) in cases {
        let mut args = args.to_vec();
        args.extend(["--json", "r.json"]);
        let out = iolab(&args, d);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("warning: {note}")), "{args:?}: {err}");
        let r = json(&d.join("r.json"));
        assert!(
            r["notes"].as_array().unwrap().iter().any(|n| n == *note),
            "{}",
            r["notes"]
        );
    }
    // A suite's step, the same.
    std::fs::write(
        d.join("s.toml"),
        "name = \"split\"\ntitle = \"t\"\nsource = \"s\"\n[job]\nsize = \"64m\"\n\
         ios_limit = 20\n[[phase]]\nname = \"p\"\n[[phase.step]]\nname = \"mix\"\n\
         job = { bssplit = \"4k/1:8k/3\" }\n",
    )
    .unwrap();
    let out = iolab(&["suite", "s.toml", sim, "--json", "s.json"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let note = "suite split, step 'mix': bssplit 4k/1:8k/3: the weights add up to 4, not 100, \
                so they are taken as shares of it: 4k/25:8k/75";
    assert!(
        text(&out).contains(&format!("warning: {note}")),
        "{}",
        text(&out)
    );
    let r = json(&d.join("s.json"));
    assert!(
        r["notes"].as_array().unwrap().iter().any(|n| n == note),
        "{}",
        r["notes"]
    );
    // A split of 100 says nothing.
    let out = iolab(
        &["run", sim, "--bssplit", "4k/50:8k/50", "--ios-limit", "20"],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("warning"), "{}", text(&out));
}

/// fio's blank share (`4k/50:64k/`: the rest of 100, split evenly among the blank entries) is
/// taken, where it was refused as "'' is not a percentage"; so are fio's separate read and
/// write splits (`READ,WRITE`), once refused.
#[test]
fn bssplit_takes_fios_blank_share_and_separate_read_write_splits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = "sim:ssd750-400@z97";
    let out = iolab(
        &[
            "run",
            sim,
            "--bssplit",
            "4k/50:64k/",
            "--ios-limit",
            "20",
            "--json",
            "r.json",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains("warning"), "{}", text(&out));
    let r = json(&d.join("r.json"));
    let job = &r["jobs"][0]["job"];
    let sizes = job["block_sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 2, "{job}");
    assert_eq!(sizes[1]["bytes"], 65536, "{job}");
    assert!(
        (sizes[1]["weight"].as_f64().unwrap() - 0.5).abs() < 1e-12,
        "{job}"
    );
    let out = iolab(
        &[
            "run",
            sim,
            "--access",
            "randrw",
            "--bssplit",
            "4k/50:8k/50,16k/90:64k/10",
            "--ios-limit",
            "200",
            "--json",
            "r2.json",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&d.join("r2.json"));
    let job = &r["jobs"][0]["job"];
    let writes = job["write_block_sizes"].as_array().unwrap();
    assert_eq!(writes.len(), 2, "{job}");
    assert_eq!(writes[1]["bytes"], 65536, "{job}");
    assert_eq!(job["block_sizes"][1]["bytes"], 8192, "{job}");
    let w = &r["jobs"][0]["write"];
    let mean = w["bytes"].as_f64().unwrap() / w["ios"].as_f64().unwrap();
    assert!(mean >= 16384.0, "writes are of the writes' sizes: {w}");
}

/// A refusal names the option as the command in use takes it: an unaligned `--bs` on a file
/// suggested "set direct = false" (the job file's key; the flag is `--buffered`), and on a model
/// it suggested buffered I/O at all, which a model refuses; `quick` on a target smaller than its
/// `--size` said "shrink size or offset", and quick has no offset.
#[test]
fn refusals_name_the_flag_of_the_command_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let refused = |args: &[&str]| {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&["run", "--bs", "100", "--size", "1m", "f.bin"]);
    assert!(
        err.contains("100 bytes is not a multiple of 512")
            && err.contains("direct = false (--buffered)"),
        "{err}"
    );
    assert!(!d.join("f.bin").exists());
    let err = refused(&["run", "sim:c300-256@h67", "--bs", "100"]);
    assert!(err.contains("use a multiple of 512"), "{err}");
    assert!(
        !err.contains("direct = false") && !err.contains("--buffered"),
        "a model refuses buffered I/O, so it is not suggested: {err}"
    );
    // A model drive of 512 MiB, under quick's default --size of 1g.
    std::fs::create_dir(d.join("drives")).unwrap();
    let entry = include_str!("../../../catalog/drives/hdd-7200.toml")
        .replace("name = \"hdd-7200\"", "name = \"small-hdd\"")
        .replace(
            "capacity_bytes = 1000204886016",
            "capacity_bytes = 536870912",
        );
    std::fs::write(d.join("drives/small.toml"), entry).unwrap();
    let err = refused(&["quick", "sim:small-hdd@h67", "--catalog", "."]);
    assert!(
        err.contains(
            "size 1g runs past the end of the target (536870912 bytes); make size \
                      (--size) at most 512m"
        ),
        "{err}"
    );
    assert!(!err.contains("offset"), "quick has no offset: {err}");
}

/// A suite file's unaligned block size is refused before anything runs; on a model, which
/// refuses buffered I/O, without suggesting `direct = false` as it does on a file.
#[test]
fn a_suite_files_unaligned_block_size_suggests_buffered_io_only_where_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("odd.toml"),
        "name = \"odd\"\ntitle = \"odd\"\n[[phase]]\nname = \"p\"\n[[phase.step]]\n\
         name = \"s\"\njob = { access = \"randread\", block_size = \"100\", ios_limit = 8 }\n",
    )
    .unwrap();
    let refused = |target: &str| {
        let out = iolab(&["suite", "odd.toml", target], d);
        assert_eq!(out.status.code(), Some(2), "{target}: {}", text(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let on_file = refused("f.bin");
    assert!(
        on_file.contains("use a multiple of 512 or set direct = false"),
        "{on_file}"
    );
    assert!(!d.join("f.bin").exists());
    let on_model = refused("sim:c300-256@h67");
    assert!(on_model.contains("use a multiple of 512"), "{on_model}");
    assert!(!on_model.contains("direct = false"), "{on_model}");
}

/// A job file's new test file is laid out to every job's span (as fio lays out each job's
/// file), not only the first writer's; and every job is checked against it before it is made.
#[test]
fn a_new_file_is_sized_for_every_job_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = |name: &str, reader: &str, writer: &str| {
        std::fs::write(
            d.join(name),
            format!(
                "[[job]]\nname = \"r\"\naccess = \"read\"\nios_limit = 16\n{reader}\
                 [[job]]\nname = \"w\"\naccess = \"write\"\nios_limit = 16\n{writer}"
            ),
        )
        .unwrap();
    };
    // A reader of 8 MiB before a writer of 4 MiB: the file is made 8 MiB (it was made 4 MiB,
    // then the reader refused: "runs past the end of the target (4194304 bytes)").
    file("smaller.toml", "size = \"8m\"\n", "size = \"4m\"\n");
    // A writer with no size takes the file the reader's size makes (it was refused: "does not
    // exist; give the job a size").
    file("unsized.toml", "size = \"8m\"\n", "");
    for (jobs, writer_span) in [("smaller.toml", 4 << 20), ("unsized.toml", 8 << 20)] {
        let out = iolab(
            &["run", jobs, "new.bin", "--no-probe", "--json", "r.json"],
            d,
        );
        assert_eq!(out.status.code(), Some(0), "{jobs}: {}", text(&out));
        assert_eq!(std::fs::metadata(d.join("new.bin")).unwrap().len(), 8 << 20);
        let r = json(&d.join("r.json"));
        let spans: Vec<u64> = r["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| u(&j["job"]["span_bytes"]))
            .collect();
        assert_eq!(spans, [8 << 20, writer_span], "{jobs}");
        std::fs::remove_file(d.join("new.bin")).unwrap();
    }
    // A job that cannot fit the file is refused before the file is made.
    file("past.toml", "offset = \"16m\"\n", "size = \"4m\"\n");
    let out = iolab(&["run", "past.toml", "new.bin", "--no-probe"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("job 'r': offset: 16777216 is at or past the end"),
        "{}",
        text(&out)
    );
    assert!(!d.join("new.bin").exists(), "the file was made");
}

#[test]
fn an_interrupted_warm_up_is_not_counted_as_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let child = iolab_cmd(
        &[
            "quick",
            "--size",
            "8m",
            "--count",
            "2",
            "--duration",
            "0.5",
            "--warmup",
            "30",
            "--read-only",
            "--no-probe",
            "--json",
            "q.json",
            "t.bin",
        ],
        dir.path(),
    )
    .spawn()
    .unwrap();
    // Into the first test's 30 s warm-up.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let out = interrupt(child);
    let r = json(&dir.path().join("q.json"));
    assert_eq!(r["complete"], false);
    // The warm-up's figure is nowhere: no job, no "mean of 1 counted run(s)".
    assert_eq!(r["jobs"].as_array().unwrap().len(), 0, "{r}");
    assert!(!text(&out).contains("counted run"), "{}", text(&out));
    assert!(
        r["incomplete_reason"]
            .as_str()
            .is_some_and(|s| s.contains("warm-up")),
        "{}",
        r["incomplete_reason"]
    );
    assert!(
        text(&out).contains("stopped during its warm-up (interrupted); nothing measured"),
        "{}",
        text(&out)
    );
}

/// An operating-system error is part of its message, so it must not also come back as the
/// error's cause: `Error: x: No such file or directory (os error 2): No such file or ...`.
#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "run",
                "--size",
                "1m",
                "--duration",
                "0.1",
                "no/such/dir/t.bin",
            ],
            "No such file or directory",
        ),
        (
            &["trace", "analyze", "missing.csv"],
            "No such file or directory",
        ),
        (
            &["run", "--catalog", "no-such-catalog", "sim:ssd750-400@z97"],
            "no drives/ or platforms/ directory",
        ),
    ];
    for (args, cause) in cases {
        let out = iolab(args, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches(cause).count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn a_test_file_larger_than_the_free_space_is_refused_before_a_byte_is_written() {
    if let Some(why) = mount_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    // An 8 MiB tmpfs: whatever happens, nothing larger can be written to it.
    let fs = Mount::tmpfs(8 << 20).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let new = fs.dir.join("new.bin");
    let new_s = new.to_str().unwrap();
    for (args, needed) in [
        (&["run", "--size", "16m", new_s][..], "16777216"),
        // As `--offset 1t --size 1m` once filled a disk: the file would be 1 TiB + 1 MiB.
        (
            &["run", "--offset", "1t", "--size", "1m", new_s][..],
            "1099512676352",
        ),
    ] {
        let out = iolab(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        for part in [
            &format!("{new_s} needs {needed} more bytes"),
            "its filesystem has 8388608 bytes (8m) free",
        ] {
            assert!(err.contains(part), "{args:?}: {part}: {err}");
        }
        assert!(!new.exists(), "{args:?}");
    }
}

#[test]
fn a_test_file_whose_writing_fails_is_removed() {
    // A file-size limit of 4 MiB (SIGXFSZ ignored, so the write fails with EFBIG): the fill of
    // a 16 MiB file fails after 4 MiB, and those 4 MiB used to stay behind.
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -f 4096; exec '{}' run --size 16m --no-probe part.bin",
        env!("CARGO_BIN_EXE_iolab")
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir.path())
        .env("IOLAB_RESULTS_DIR", dir.path().join("results"))
        .env_remove("IOLAB_DB")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot fill part.bin") && err.contains("the partial file was removed"),
        "{err}"
    );
    assert!(!dir.path().join("part.bin").exists());
}

#[test]
fn a_file_iolab_did_not_create_is_not_overwritten_without_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("precious.bin");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let before = checksum(&file).unwrap();
    let out = iolab(
        &[
            "run",
            "--access",
            "randwrite",
            "--ios-limit",
            "100",
            "precious.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--overwrite"));
    assert_eq!(checksum(&file).unwrap(), before, "content changed");
    // Reads are always allowed.
    let out = iolab(
        &[
            "run",
            "--access",
            "randread",
            "--ios-limit",
            "100",
            "--json",
            "-",
            "precious.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A read past its end would need the file grown: that is what is refused, and said (it
    // was "this job would overwrite it", of a job that only reads).
    let out = iolab(
        &[
            "run",
            "--access",
            "randread",
            "--size",
            "2m",
            "--ios-limit",
            "100",
            "precious.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("precious.bin is 1m, and job 'job1' reads up to 2m")
            && err.contains("would have to be grown")
            && err.contains("--overwrite")
            && !err.contains("would overwrite it"),
        "{err}"
    );
    assert_eq!(checksum(&file).unwrap(), before, "content changed");
    let out = iolab(
        &[
            "run",
            "--access",
            "randwrite",
            "--ios-limit",
            "100",
            "--overwrite",
            "--json",
            "r.json",
            "precious.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_ne!(checksum(&file).unwrap(), before);
}

#[test]
fn a_link_to_nothing_or_a_missing_device_is_not_made_a_test_file() {
    let dir = tempfile::tempdir().unwrap();
    // quick used to create the file at the link's far end, then remove the link.
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.bin"),
        dir.path().join("dangling"),
    )
    .unwrap();
    let out = iolab(&["quick", "dangling", "--size", "16m"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("symbolic link"), "{}", text(&out));
    assert!(std::fs::symlink_metadata(dir.path().join("dangling")).is_ok());
    assert!(!dir.path().join("elsewhere.bin").exists());
    // A mistyped device would have become a file in /dev's RAM filesystem.
    let missing = "/dev/iolab-test-no-such-device";
    let out = iolab(
        &["run", "--access", "write", "--size", "1m", missing],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no such device"), "{}", text(&out));
    assert!(!Path::new(missing).exists());
}

#[test]
fn outputs_are_never_written_onto_a_block_device() {
    let dir = tempfile::tempdir().unwrap();
    // A block device node for a loop device that does not exist (minor 1048000): nothing can
    // be harmed, and what matters is that iolab refuses before it tries.
    let node = dir.path().join("blk");
    let made = std::process::Command::new("mknod")
        .args([node.to_str().unwrap(), "b", "7", "1048000"])
        .status()
        .unwrap();
    assert!(made.success(), "mknod needs root");
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "0,h,0,Read,0,4096,10\n").unwrap();
    let run = iolab(
        &[
            "run",
            "--ios-limit",
            "1",
            "--size",
            "1m",
            "t.bin",
            "--json",
            "blk",
        ],
        dir.path(),
    );
    let json = dir.path().join("r.json");
    let saved = iolab(
        &[
            "run",
            "--ios-limit",
            "1",
            "--size",
            "1m",
            "t.bin",
            "--json",
            "r.json",
        ],
        dir.path(),
    );
    assert_eq!(saved.status.code(), Some(0), "{}", text(&saved));
    for (what, out) in [
        ("run --json", run),
        (
            "trace convert -o",
            iolab(
                &["trace", "convert", "t.csv", "--to", "msr", "-o", "blk"],
                dir.path(),
            ),
        ),
        (
            "trace synth -o",
            iolab(
                &[
                    "trace",
                    "synth",
                    "--profile",
                    "light",
                    "--scale",
                    "0.0001",
                    "-o",
                    "blk",
                ],
                dir.path(),
            ),
        ),
        (
            "report -o",
            iolab(&["report", json.to_str().unwrap(), "-o", "blk"], dir.path()),
        ),
        (
            "results export -o",
            iolab(&["results", "export", "1", "-o", "blk"], dir.path()),
        ),
    ] {
        assert_ne!(out.status.code(), Some(0), "{what}: {}", text(&out));
        assert!(
            text(&out).contains("is a block device"),
            "{what}: {}",
            text(&out)
        );
    }
}

#[test]
fn io_errors_are_reported_with_offset_and_set_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    // Create the file, then shrink it under a running read job: reads past the new end come
    // back short, which the engine counts as errors.
    let out = iolab(
        &[
            "run",
            "--size",
            "8m",
            "--ios-limit",
            "1",
            "--json",
            "c.json",
            "t.bin",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for (extra, code) in [(None, 1), (Some("--continue-on-error"), 0)] {
        let mut args = vec![
            "run",
            "--size",
            "8m",
            "--access",
            "randread",
            "--duration",
            "3",
            "--rate-iops",
            "2000",
            "--json",
            "e.json",
            "t.bin",
        ];
        args.extend(extra);
        let child = iolab_cmd(&args, dir.path()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("t.bin"))
            .unwrap()
            .set_len(0)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {}", text(&out));
        let r = json(&dir.path().join("e.json"));
        let errors = r["jobs"][0]["errors"].as_array().unwrap();
        assert!(!errors.is_empty(), "{extra:?}: no errors recorded");
        assert!(u(&errors[0]["count"]) >= 1);
        assert!(errors[0]["first_offset_bytes"].is_u64());
        assert_eq!(r["complete"], extra.is_some(), "{extra:?}");
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("t.bin"))
            .unwrap()
            .set_len(8 << 20)
            .unwrap();
    }
}

#[test]
fn ctrl_c_stops_cleanly_and_saves_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
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
        dir.path(),
    )
    .spawn()
    .unwrap();
    // Let it create the file and run a while.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    interrupt(child);
    let r = json(&dir.path().join("i.json"));
    assert_eq!(r["complete"], false);
    assert_eq!(
        r["incomplete_reason"]
            .as_str()
            .map(|s| s.contains("interrupted")),
        Some(true),
        "{}",
        r["incomplete_reason"]
    );
    let j = &r["jobs"][0];
    assert!(u(&j["read"]["ios"]) > 0);
    assert!(u(&j["measured_ns"]) < 60_000_000_000);
    // The results store has the run too, marked incomplete.
    let store =
        iolab_report::store::Store::open_existing(&dir.path().join("results/results.sqlite"))
            .unwrap();
    let (runs, _) = store.list(&Default::default()).unwrap();
    assert_eq!((runs.len(), runs[0].complete), (1, false));
}

/// Runs a counted job on a block device with `engine` and compares iolab's counts with the
/// kernel's; returns the engine the result names.
fn counts_match_the_kernel(dev: &Path, name: &str, access: &str, engine: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let before = BlockStat::read(name).unwrap();
    let dev_s = dev.to_str().unwrap();
    let out = iolab(
        &[
            "run",
            "--access",
            access,
            "--bs",
            "4k",
            "--qd",
            "16",
            "--threads",
            "2",
            "--ios-limit",
            "20000",
            "--size",
            "32m",
            "--engine",
            engine,
            "--json",
            "r.json",
            dev_s,
        ],
        dir.path(),
    );
    let delta = BlockStat::read(name).unwrap().since(&before);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    assert_eq!(r["target"]["kind"], "block");
    let j = &r["jobs"][0];
    let (ios, bytes, k_ios, k_bytes) = if access == "randread" {
        (
            u(&j["read"]["ios"]),
            u(&j["read"]["bytes"]),
            delta.read_ios,
            delta.read_bytes(),
        )
    } else {
        (
            u(&j["write"]["ios"]),
            u(&j["write"]["bytes"]),
            delta.write_ios,
            delta.write_bytes(),
        )
    };
    assert_eq!(ios, 20000);
    let within = |a: u64, b: u64| (a as f64 - b as f64).abs() <= 0.01 * b as f64;
    assert!(
        within(k_ios, ios),
        "{name} {access}: kernel {k_ios} I/Os, iolab {ios}"
    );
    assert!(
        within(k_bytes, bytes),
        "{name} {access}: kernel {k_bytes} B, iolab {bytes}"
    );
    r["target"]["engine"].as_str().unwrap().to_string()
}

#[test]
fn loop_device_counts_match_sysfs() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(64 << 20).unwrap();
    counts_match_the_kernel(&dev.path, &dev.name(), "randwrite", "auto");
    counts_match_the_kernel(&dev.path, &dev.name(), "randread", "auto");
}

#[test]
fn zram_counts_match_sysfs() {
    if let Some(why) = zram_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = Zram::new(64 << 20).unwrap();
    // Where zram cannot take I/O without blocking, the automatic choice is a thread per queue
    // slot; io_uring must count the same either way.
    let blocks = iolab_engine::open::blocks_io_uring(&dev.path, true, 4096);
    for access in ["randwrite", "randread"] {
        let auto = counts_match_the_kernel(&dev.path, &dev.name(), access, "auto");
        assert_eq!(
            auto.starts_with("psync-per-slot"),
            blocks,
            "auto chose {auto}"
        );
        let uring = counts_match_the_kernel(&dev.path, &dev.name(), access, "io_uring");
        assert_eq!(uring, "io_uring");
    }
}

/// Writes an MBR with one Linux partition (2048 sectors on) at the start of `dev`.
fn write_mbr(dev: &Path) {
    use std::os::unix::fs::FileExt;
    let mut mbr = [0u8; 512];
    let entry = &mut mbr[446..462];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&4096u32.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all_at(&mbr, 0).unwrap();
    f.sync_all().unwrap();
}

#[test]
fn devices_holding_data_are_refused_and_left_unchanged() {
    if let Some(why) = loop_skip_reason().or_else(mount_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    // A partition table.
    let parted = LoopDevice::new(16 << 20).unwrap();
    write_mbr(&parted.path);
    refused_unchanged(&parted.path, None, "partition table");
    // An ext4 filesystem, not mounted; --destroy-data naming another device does not help, naming
    // this one does.
    let ext4 = LoopDevice::new(32 << 20).unwrap();
    iolab_testkit::run("mkfs.ext4", &["-q", "-F", ext4.path.to_str().unwrap()]).unwrap();
    refused_unchanged(&ext4.path, None, "ext2/3/4");
    let dir = tempfile::tempdir().unwrap();
    let refused = small_write(&ext4.path, Some(&parted.path), dir.path());
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let allowed = small_write(&ext4.path, Some(&ext4.path), dir.path());
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed));
    // Mounted: refused even with --destroy-data.
    // No lazy initialisation: a background inode-table writer would change the checksum.
    let mounted_dev = LoopDevice::new(32 << 20).unwrap();
    let m = mounted_dev.path.to_str().unwrap();
    iolab_testkit::run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            m,
        ],
    )
    .unwrap();
    // Read-only: a filesystem mounted for writing may still write its journal or superblock
    // between the two checksums (it did once under a loaded full test run), and only iolab's
    // writes are under test. Mounted is mounted either way.
    let mount = Mount::existing(&mounted_dev.path, "ext4", &["ro"]).unwrap();
    refused_unchanged(&mounted_dev.path, None, "mounted");
    let out = small_write(&mounted_dev.path, Some(&mounted_dev.path), dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("Unmount"));
    drop(mount);
    // Reads are always allowed, even of a device holding data.
    let out = iolab(
        &[
            "run",
            "--access",
            "randread",
            "--ios-limit",
            "100",
            "--json",
            "-",
            parted.path.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn converting_a_calendar_clock_to_a_relative_one_counts_from_the_first_record() {
    let msr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv");
    let dir = tempfile::tempdir().unwrap();
    let convert = |to: &str| {
        let out = iolab(
            &["trace", "convert", msr.to_str().unwrap(), "--to", to],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{to}");
        String::from_utf8(out.stdout).unwrap()
    };
    // The sample spans 127 s of 2007: fio's waits and SPC's seconds count from its start
    // (the first fio wait used to be 406 years, FILETIME taken for µs).
    let fio = convert("fio2");
    let waits: Vec<u64> = fio
        .lines()
        .filter_map(|l| l.split_once(" wait ")?.1.split(' ').next()?.parse().ok())
        .collect();
    assert!(!waits.is_empty());
    assert_eq!(waits.iter().sum::<u64>(), 127_233_494, "{:?}", &waits[..3]);
    let spc = convert("spc");
    let first = spc.lines().next().unwrap();
    assert!(first.ends_with(",0.000000"), "{first}");
    // Calendar to calendar keeps the date: MSR's FILETIME of 2007 as Unix time.
    assert!(convert("systor")
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("1172164929."));
    // blkparse's devices are dev_t numbers; MSR counts disks from 0 (it got 271581184).
    let blkparse = msr.with_file_name("blktrace_merge_nvme0n1_blkparse.txt");
    let out = iolab(
        &[
            "trace",
            "convert",
            blkparse.to_str().unwrap(),
            "--to",
            "msr",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let disks: std::collections::BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split(',').nth(2).unwrap().to_string())
        .collect();
    assert_eq!(disks.into_iter().collect::<Vec<_>>(), ["0"]);
}

/// trimcheck's exit codes (its verdicts) were in neither its help nor README's list of exit
/// codes, which gave only run's (where 1 means an I/O error).
#[test]
fn trimcheck_exit_codes_are_in_its_help_and_the_readme() {
    let dir = tempfile::tempdir().unwrap();
    let out = iolab(&["trimcheck", "--help"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let readme = include_str!("../../../README.md").replace('\n', " ");
    for said in [
        "0 WORKING",
        "1 NOT WORKING",
        "3 INDETERMINATE",
        "4 CANNOT CHECK",
    ] {
        assert!(help.contains(said), "{said}: {help}");
        assert!(readme.contains(said), "README: {said}");
    }
}

/// `--ramp`'s refusal named only the job key: `iolab run sim:ssd750-400@z97 --ramp 1
/// --io-limit 1m` said "job 'job1': ramp_s: a ramp needs a timed job: set duration_s, or drop
/// ramp_s ...", keys `iolab run --help` shows only in brackets. A refused key a flag set is
/// said with its flag, and so are the other keys the message names; a job file's own key is
/// still said as the key, at its line.
#[test]
fn a_refused_flag_is_named_as_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = "sim:ssd750-400@z97";
    let refused = |args: &[&str]| {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&["run", sim, "--ramp", "1", "--io-limit", "1m"]);
    assert!(
        err.contains(
            "job 'job1': ramp_s (--ramp): a ramp needs a timed job: set duration_s \
             (--duration), or drop ramp_s (--ramp) from a job that ends by io_limit \
             (--io-limit), ios_limit (--ios-limit) or one pass"
        ),
        "{err}"
    );
    let err = refused(&["run", sim, "--duration", "0"]);
    assert!(err.contains("duration_s (--duration): 0 must be"), "{err}");
    // A message that already gives the flag is not given it twice.
    let err = refused(&["run", sim, "--offset", "18446744073709551104"]);
    assert!(
        err.contains("job 'job1': offset: 18446744073709551104") && !err.contains("(--offset) ("),
        "{err}"
    );
    // From a job file with the flag: the flag, and for which job of which file.
    std::fs::write(d.join("j.toml"), "name = \"a\"\nio_limit = \"1m\"\n").unwrap();
    let err = refused(&["run", "j.toml", sim, "--ramp", "1"]);
    assert!(
        err.contains("job 'a': ramp_s (--ramp): a ramp needs")
            && err.contains("(`--ramp` set on the command line, for job 1 of j.toml)"),
        "{err}"
    );
    // The file's own key: at its line, as the key.
    std::fs::write(d.join("k.toml"), "name = \"a\"\nramp_s = 1\n").unwrap();
    let err = refused(&["run", "k.toml", sim]);
    assert!(
        err.contains("k.toml, line 2: job 'a': ramp_s: a ramp needs a timed job: set duration_s,"),
        "{err}"
    );
}

#[test]
fn durations_on_the_command_line_take_units() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "sim:ssd750-400@z97",
        "--access",
        "randread",
        "--duration",
        "100ms",
        "--ramp",
        "0.05s",
        "--json",
        "r.json",
    ];
    let out = iolab(&args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    assert_eq!(r["jobs"][0]["job"]["duration_s"], 0.1, "{r}");
    assert_eq!(r["jobs"][0]["job"]["ramp_s"], 0.05, "{r}");
    // A unit it does not know is refused naming the option and the units it knows.
    let out = iolab(
        &["run", "sim:ssd750-400@z97", "--duration", "1x"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--duration") && text(&out).contains("500ms, 30s, 1m, 2h"),
        "{}",
        text(&out)
    );
}
