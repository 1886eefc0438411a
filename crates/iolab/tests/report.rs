//! The HTML report end to end: a suite run writes it beside its JSON (also when interrupted),
//! `iolab report` re-renders and overlays saved results, and bad input names the file.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::{interrupt, iolab, iolab_cmd, text};

fn cdm(dir: &Path, json: &str) -> Output {
    iolab(
        &[
            "suite",
            "cdm",
            "--scale",
            "0.01",
            "--size",
            "64m",
            "--json",
            json,
            "--no-probe",
        ],
        dir,
    )
}

#[test]
fn suite_writes_its_report_and_report_overlays_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = cdm(d, "r.json");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html_path = d.join("r.html");
    assert!(
        text(&out).contains("r.html"),
        "the report's path is printed: {}",
        text(&out)
    );
    let html = std::fs::read_to_string(&html_path).expect("r.html beside r.json");
    assert!(html.starts_with("<!DOCTYPE html>"));
    // cdm's read and write tests in CrystalDiskMark's grid, the sequential ones charted in
    // MB/s and the random ones in IOPS; the mix phase its own chart.
    assert_eq!(html.matches("<svg").count(), 3, "charts in r.html");
    assert!(html.contains("<table class=\"figures cdm\">"), "no grid");
    assert!(
        html.contains("aria-label=\"Sequential: MB/s")
            && html.contains("aria-label=\"Random: IOPS")
    );
    assert!(html.contains(">SEQ1M Q8T1<") && html.contains("RND4K Q1T1 R70/W30"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));

    // Re-render the same result twice: one report, two series on every chart.
    let out = iolab(&["report", "r.json", "r.json", "-o", "x.html"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("report written to x.html"),
        "{}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("suite cdm"),
        "terminal tables: {}",
        text(&out)
    );
    let x = std::fs::read_to_string(d.join("x.html")).unwrap();
    assert_eq!(x.matches("<svg").count(), 3);
    assert_eq!(
        x.matches("class=\"bar\"").count(),
        2 * html.matches("class=\"bar\"").count(),
        "each result's bars"
    );
    assert!(
        x.contains(">#1 ") && x.contains(">#2 "),
        "the two results are told apart"
    );

    // Without -o: beside the first result.
    std::fs::remove_file(&html_path).unwrap();
    let out = iolab(&["report", "r.json"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(html_path.exists());

    // Bad input: the file is named, exit code 2.
    std::fs::write(d.join("bad.json"), "{ not json").unwrap();
    let out = iolab(&["report", "r.json", "bad.json", "-o", "y.html"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("bad.json"), "{}", text(&out));
    assert!(!d.join("y.html").exists());
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    v["schema_version"] = 99.into();
    std::fs::write(d.join("future.json"), v.to_string()).unwrap();
    let out = iolab(&["report", "future.json", "-o", "y.html"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("future.json") && text(&out).contains("schema_version 99"),
        "{}",
        text(&out)
    );
    let out = iolab(&["report", "missing.json"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("missing.json"), "{}", text(&out));
    // The report never overwrites a result.
    let out = iolab(&["report", "r.json", "-o", "r.json"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(serde_json::from_str::<serde_json::Value>(
        &std::fs::read_to_string(d.join("r.json")).unwrap()
    )
    .is_ok());
}

#[test]
fn json_on_standard_output_writes_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = cdm(dir.path(), "-");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "html"))
        .collect();
    assert!(html.is_empty(), "{html:?}");
}

#[test]
fn an_interrupted_suite_still_gets_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Full-length tests (5 s each), so the interrupt lands mid-suite.
    let child = iolab_cmd(
        &[
            "suite",
            "cdm",
            "--size",
            "32m",
            "--json",
            "i.json",
            "--no-probe",
        ],
        d,
    )
    .spawn()
    .unwrap();
    // The partial JSON appears after the fill pass; then the first test is running.
    let start = Instant::now();
    while !d.join("i.json").exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(d.join("i.json").exists(), "no partial result within 120 s");
    std::thread::sleep(Duration::from_millis(1500));
    interrupt(child);
    let html = std::fs::read_to_string(d.join("i.html")).expect("i.html beside i.json");
    assert!(html.contains("INCOMPLETE"), "incomplete marker");
    assert!(
        html.contains("fill pass 1"),
        "the finished fill is in the report"
    );
}

/// A suite's report goes beside its JSON with the extension .html: a JSON path that already
/// ends in .html would have the report overwrite the result ("result saved to out.html
/// (report: out.html)", and the JSON gone). Refused before anything is measured.
#[test]
fn a_suite_result_named_like_its_report_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("su")).unwrap();
    let out = iolab(
        &[
            "suite",
            "atto",
            "sim:ssd750-400@z97",
            "--scale",
            "0.01",
            "--json",
            "su/out.html",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--json su/out.html") && err.contains("would overwrite the result"),
        "{err}"
    );
    assert!(
        err.contains("--json su/out.json"),
        "the fix is named: {err}"
    );
    // Nothing ran: no result, no report, nothing recorded.
    assert!(!d.join("su/out.html").exists());
    assert!(!d.join("results/results.sqlite").exists());
    // A report linked to the result's name is the same file: refused too.
    std::fs::write(d.join("su/r.json"), "{}").unwrap();
    std::os::unix::fs::symlink("r.json", d.join("su/r.html")).unwrap();
    let out = iolab(
        &[
            "suite",
            "atto",
            "sim:ssd750-400@z97",
            "--scale",
            "0.01",
            "--json",
            "su/r.json",
            "--overwrite",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("same file as the result"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(d.join("su/r.json")).unwrap(), "{}");
}
