//! What the binary's end-to-end tests share: running `iolab` with every setting kept inside the
//! test's own directory (results, results store), and reading what it printed and saved.
#![allow(dead_code)] // each test file uses its own subset

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `iolab ARGS` in `dir`: results and the results store (`dir/results/results.sqlite`) stay
/// inside it, no iolab setting is inherited, standard input is empty.
pub fn iolab_cmd(args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.args(args)
        .current_dir(dir)
        .env_remove("IOLAB_DB")
        .env("IOLAB_RESULTS_DIR", dir.join("results"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Runs `iolab ARGS` in `dir` to the end.
pub fn iolab(args: &[&str], dir: &Path) -> Output {
    iolab_cmd(args, dir).output().expect("run iolab")
}

/// Interrupts a running `iolab` as Ctrl-C does (SIGINT), waits for it and checks that it
/// ended as an interrupted run does (exit 130, after saving what it measured).
pub fn interrupt(child: std::process::Child) -> Output {
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    let out = child.wait_with_output().expect("wait for iolab");
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    out
}

/// Standard output and error together, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A saved JSON result.
pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("result file")).expect("valid JSON")
}

/// Ten random 4K writes to `dev`, offering `destroy` to --destroy-data.
pub fn small_write(dev: &Path, destroy: Option<&Path>, dir: &Path) -> Output {
    let flag = destroy.map(|d| format!("--destroy-data={}", d.display()));
    let mut args = vec![
        "run",
        "--access",
        "randwrite",
        "--ios-limit",
        "10",
        "--json",
        "-",
    ];
    args.extend(flag.as_deref());
    args.push(dev.to_str().unwrap());
    iolab(&args, dir)
}

/// A write to `dev` (offering `destroy` to --destroy-data) is refused with exit 2, naming
/// `expect`, and not one byte of `dev` changes.
pub fn refused_unchanged(dev: &Path, destroy: Option<&Path>, expect: &str) -> String {
    let before = iolab_testkit::checksum(dev).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = small_write(dev, destroy, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("refusing to write") && err.contains(expect),
        "expected '{expect}': {err}"
    );
    assert_eq!(
        iolab_testkit::checksum(dev).unwrap(),
        before,
        "{}: not one byte may change",
        dev.display()
    );
    err
}
