//! An output is never the same file as one of the command's inputs: however it is named (the
//! same path, `./x`, an absolute path, a symbolic or hard link), the command is refused before
//! it writes anything and the input is left whole.

use std::path::Path;

mod common;
use common::{iolab, text};

/// `iolab ARGS` in `dir` is refused (exit 2) naming `output` and `input` and saying to pick
/// another path, and `kept` is unchanged.
fn refused(args: &[&str], dir: &Path, kept: &Path, output: &str, input: &str) {
    let before = std::fs::read(kept).unwrap();
    let out = iolab(args, dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    assert!(
        err.contains(&format!("{output} is the same file as the input {input}"))
            && err.contains("another path")
            && !err.contains("panicked"),
        "{args:?}: {err}"
    );
    assert_eq!(
        std::fs::read(kept).unwrap(),
        before,
        "{args:?}: input changed"
    );
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Over 64 KiB: the conversion used to truncate it on creating the output, then fail.
    let out = iolab(&["trace", "synth", "--scale", "0.001", "-o", "big.csv"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let big = d.join("big.csv");
    assert!(std::fs::metadata(&big).unwrap().len() > 1 << 16);
    let abs = big.to_str().unwrap();
    std::os::unix::fs::symlink(&big, d.join("link.csv")).unwrap();
    std::fs::hard_link(&big, d.join("hard.csv")).unwrap();
    for o in ["big.csv", "./big.csv", abs, "link.csv", "hard.csv"] {
        let args = ["trace", "convert", "big.csv", "--to", "msr", "-o", o];
        refused(&args, d, &big, &format!("-o {o}"), "big.csv");
        let args = ["trace", "analyze", "big.csv", "--html", o];
        refused(&args, d, &big, &format!("--html {o}"), "big.csv");
    }
    // A profile file is an input of synth.
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../iolab-trace/profiles/light.toml"),
        d.join("p.toml"),
    )
    .unwrap();
    let args = ["trace", "synth", "--profile", "p.toml", "-o", "./p.toml"];
    refused(&args, d, &d.join("p.toml"), "-o ./p.toml", "p.toml");

    // A saved result is the report's input; so is the job file, and the target, of a run.
    let out = iolab(
        &[
            "run",
            "--size",
            "1m",
            "--ios-limit",
            "10",
            "--json",
            "r.json",
            "t.bin",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = d.join("r.json");
    for o in ["./r.json", r.to_str().unwrap()] {
        refused(
            &["report", "r.json", "-o", o],
            d,
            &r,
            &format!("-o {o}"),
            "r.json",
        );
    }
    let args = ["run", "--ios-limit", "10", "--json", "./t.bin", "t.bin"];
    refused(&args, d, &d.join("t.bin"), "--json ./t.bin", "t.bin");
    std::fs::write(d.join("job.toml"), "access = \"read\"\nios_limit = 10\n").unwrap();
    let args = ["run", "job.toml", "t.bin", "--json", "job.toml"];
    refused(&args, d, &d.join("job.toml"), "--json job.toml", "job.toml");
    // The results store is the export's input.
    let db = d.join("results/results.sqlite");
    let args = ["results", "export", "1", "-o", db.to_str().unwrap()];
    let shown = db.display().to_string();
    refused(&args, d, &db, &format!("-o {shown}"), &shown);

    // Other outputs are still written; standard input is not a file.
    let out = iolab(
        &["trace", "convert", "big.csv", "--to", "msr", "-o", "c.csv"],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = iolab(&["report", "r.json", "-o", "r.html"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_closed_standard_error_costs_a_run_nothing() {
    // `iolab run … 2>&1 | head -2`: once the reader has gone, every message to stderr fails
    // (EPIPE). The first one used to panic, before the JSON result was written.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--size",
        "1m",
        "--access",
        "read",
        "--ios-limit",
        "8",
        "--json",
        "r.json",
        "t.bin",
    ];
    let mut child = common::iolab_cmd(&args, dir.path()).spawn().unwrap();
    drop(child.stderr.take()); // the reader leaves before iolab says anything
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let saved = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    assert!(saved.contains("\"complete\": true"), "{saved}");
}

/// The sha256-free check the battery makes in short: `path`'s bytes before and after.
fn unchanged(path: &Path, before: &[u8], what: &str) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "{what}: {path:?} changed"
    );
}

#[test]
fn the_results_store_is_never_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("db.sqlite");
    let run = |extra: &[&str]| {
        let args = [
            &[
                "run",
                "a.bin",
                "--size",
                "4m",
                "--access",
                "write",
                "--bs",
                "1m",
                "--no-probe",
            ][..],
            extra,
        ]
        .concat();
        common::iolab_cmd(&args, d)
            .env("IOLAB_DB", &db)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let store = std::fs::read(&db).unwrap();
    // The issue's own case, and with --overwrite, a link and another spelling.
    std::os::unix::fs::symlink(&db, d.join("link.sqlite")).unwrap();
    for json in ["db.sqlite", "./db.sqlite", "link.sqlite"] {
        for extra in [&["--json", json][..], &["--json", json, "--overwrite"][..]] {
            let out = run(extra);
            assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
            assert!(
                text(&out).contains("is the same file as the results store"),
                "{extra:?}: {}",
                text(&out)
            );
            unchanged(&db, &store, json);
        }
    }
    // A report over the store.
    let out = common::iolab_cmd(&["report", "nothing.json", "-o", "db.sqlite"], d)
        .env("IOLAB_DB", &db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    unchanged(&db, &store, "report -o");
}

#[test]
fn an_existing_file_iolab_did_not_write_is_replaced_only_with_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mine = b"my own notes\n";
    for name in ["notes.json", "notes.html", "t.csv", "x.html"] {
        std::fs::write(d.join(name), mine).unwrap();
    }
    // A run recorded in the store, for the export.
    let out = iolab(&["run", "--size", "1m", "--ios-limit", "8", "t.bin"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cases: [&[&str]; 4] = [
        &[
            "run",
            "--size",
            "1m",
            "--ios-limit",
            "8",
            "t.bin",
            "--json",
            "notes.json",
        ],
        &["trace", "synth", "--requests", "200", "-o", "t.csv"],
        &[
            "trace",
            "synth",
            "--requests",
            "200",
            "-o",
            "./t.csv",
            "--format",
            "msr",
        ],
        &["results", "export", "1", "-o", "x.html"],
    ];
    for args in cases {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains("was not written by iolab") && text(&out).contains("--overwrite"),
            "{args:?}: {}",
            text(&out)
        );
    }
    for name in ["notes.json", "notes.html", "t.csv", "x.html"] {
        unchanged(&d.join(name), mine, name);
    }
    // A suite's --json notes.json (a new name) with the user's notes.html beside it: refused
    // before measuring, both kept.
    std::fs::remove_file(d.join("notes.json")).unwrap();
    let suite = ["suite", "cdm", "sim:ssd750-400@z97", "--scale", "0.01"];
    let out = iolab(&[&suite[..], &["--json", "notes.json"]].concat(), d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("notes.html exists"), "{}", text(&out));
    unchanged(&d.join("notes.html"), mine, "notes.html");
    assert!(!d.join("notes.json").exists());
    // --overwrite lets each replace the user's file, and iolab's own files need no flag again.
    let out = iolab(
        &[
            "trace",
            "synth",
            "--requests",
            "200",
            "-o",
            "t.csv",
            "--overwrite",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_ne!(std::fs::read(d.join("t.csv")).unwrap(), mine);
    let out = iolab(&["trace", "synth", "--requests", "300", "-o", "t.csv"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Nothing temporary is left behind.
    let stray: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("iolab-tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn devices_are_never_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &[
            "trace",
            "synth",
            "--requests",
            "200",
            "-o",
            "/dev/zero",
            "--overwrite",
        ][..],
        &[
            "run",
            "--size",
            "1m",
            "--ios-limit",
            "8",
            "t.bin",
            "--json",
            "/dev/zero",
        ][..],
    ] {
        let out = iolab(args, d);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("character device"), "{}", text(&out));
    }
    // /dev/null takes anything.
    let out = iolab(
        &["trace", "synth", "--requests", "200", "-o", "/dev/null"],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A store that is a device is refused before anything runs.
    let out = common::iolab_cmd(&["run", "--size", "1m", "--ios-limit", "8", "t.bin"], d)
        .env("IOLAB_DB", "/dev/zero")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("IOLAB_DB"), "{}", text(&out));
    assert!(!d.join("t.bin").exists());
}
