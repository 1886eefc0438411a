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
