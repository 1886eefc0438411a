//! fio's JSON through the command line: `--fio-json` on a run, `results export --fio-json`,
//! fio-plot drawing iolab's output, fio 3.33's output in `report` and `results import` beside
//! an iolab run, and the papercuts around them (CSV, compare's noise cue, completions, man).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{iolab, json, text};

fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fio")
        .join(name)
}

/// A short random-read job at depth 1, as fio-plot's charts key runs (rw, iodepth, numjobs).
fn randread(d: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--name",
        "randread",
        "--size",
        "8m",
        "--access",
        "randread",
        "--qd",
        "1",
        "--ios-limit",
        "3000",
        "t.bin",
    ];
    args.extend_from_slice(extra);
    iolab(&args, d)
}

#[test]
fn a_run_writes_fios_layout_that_the_store_exports_alike() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("fio")).unwrap();
    ok(&randread(
        d,
        &["--json", "r.json", "--fio-json", "fio/randread.json"],
    ));
    let v = json(&d.join("fio/randread.json"));
    assert!(
        v["fio version"].as_str().unwrap().starts_with("iolab-"),
        "{v}"
    );
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "randread");
    assert_eq!(job["job options"]["rw"], "randread");
    assert_eq!(job["job options"]["iodepth"], "1");
    assert_eq!(job["read"]["total_ios"].as_u64(), Some(3000));
    assert_eq!(job["read"]["io_bytes"].as_u64(), Some(3000 * 4096));
    assert!(
        job["read"]["clat_ns"]["percentile"]["99.990000"]
            .as_u64()
            .unwrap()
            > 0
    );
    // iolab's own JSON is still written, and the same run exported from the store in fio's
    // layout is the same document (to a float's last digit, which reading a result back from
    // the store may move).
    assert_eq!(json(&d.join("r.json"))["jobs"][0]["read"]["ios"], 3000);
    let exported = ok(&iolab(&["results", "export", "1", "--fio-json"], d));
    let exported: Value = serde_json::from_str(&exported).unwrap();
    assert_alike(&exported, &v, "");

    // `--fio-json -`: the document alone on standard output, the table on standard error.
    let out = randread(d, &["--fio-json", "-"]);
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(v["jobs"][0]["read"]["total_ios"].as_u64(), Some(3000));
    // Both documents on standard output, or both in one file: refused before measuring.
    for flags in [
        ["--json", "-", "--fio-json", "-"],
        ["--json", "x.json", "--fio-json", "x.json"],
    ] {
        let out = randread(d, &flags);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("--fio-json"), "{}", text(&out));
    }
    assert!(!d.join("x.json").exists());
    // A file iolab did not write is not replaced.
    std::fs::write(d.join("mine.json"), "keep").unwrap();
    let out = randread(d, &["--fio-json", "mine.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(d.join("mine.json")).unwrap(),
        "keep"
    );
}

/// `a` and `b` are the same JSON, numbers equal to 1e-12 of their size.
fn assert_alike(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, v) in x {
                assert_alike(v, &y[k], &format!("{at}/{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                assert_alike(p, q, &format!("{at}[{i}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (p, q) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (p - q).abs() <= 1e-12 * p.abs().max(q.abs()),
                "{at}: {p} vs {q}"
            );
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

/// fio-plot, installed (`pip install fio-plot`), or the test says why it is skipped.
fn fio_plot() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|p| Path::new(p).join("fio-plot"))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: fio-plot is not installed (pip install fio-plot)");
    }
    found
}

#[test]
fn fio_plot_draws_a_chart_from_iolabs_fio_json() {
    let Some(plot) = fio_plot() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("fio")).unwrap();
    ok(&randread(d, &["--fio-json", "fio/randread-qd1.json"]));
    let out = Command::new(&plot)
        .args([
            "-i",
            "fio",
            "-T",
            "iolab randread",
            "-l",
            "-r",
            "randread",
            "-d",
            "1",
            "-n",
            "1",
            "-o",
            "chart.png",
        ])
        .current_dir(d)
        .env("MPLBACKEND", "Agg")
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ModuleNotFoundError")
    {
        eprintln!("skipped: fio-plot cannot run here: {}", text(&out));
        return;
    }
    assert!(out.status.success(), "fio-plot failed: {}", text(&out));
    let png = std::fs::read(d.join("chart.png"))
        .unwrap_or_else(|e| panic!("no chart: {e}: {}", text(&out)));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
}

#[test]
fn fios_output_is_reported_imported_and_compared_with_iolabs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fio = testdata("randread-4k-qd4.json");
    let fio_s = fio.to_str().unwrap();
    let raw: Value = {
        let t = std::fs::read_to_string(&fio).unwrap();
        serde_json::from_str(&t[t.find('{').unwrap()..]).unwrap()
    };
    let iops = raw["jobs"][0]["read"]["iops"].as_f64().unwrap();

    // `report` reads fio's file beside iolab's result.
    ok(&iolab(
        &[
            "run",
            "--name",
            "randread",
            "--size",
            "8m",
            "--access",
            "randread",
            "--qd",
            "4",
            "--ios-limit",
            "2000",
            "--json",
            "iolab.json",
            "t.bin",
        ],
        d,
    ));
    let report = ok(&iolab(
        &["report", fio_s, "iolab.json", "-o", "both.html"],
        d,
    ));
    assert!(report.contains("randread"), "{report}");
    assert!(
        report.contains(&format!("{:.0}", iops)) || report.contains(&format!("{iops:.1}")),
        "{report}"
    );
    let html = std::fs::read_to_string(d.join("both.html")).unwrap();
    assert!(
        html.contains("fio 3.33"),
        "the report does not tell fio's run apart"
    );

    // `results import` records it with its provenance; compare lines it up with iolab's run.
    let out = ok(&iolab(&["results", "import", fio_s], d));
    let _ = out;
    let listed = ok(&iolab(&["results", "list"], d));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    let store =
        iolab_report::store::Store::open_existing(&d.join("results/results.sqlite")).unwrap();
    let imported = store.result(2).unwrap();
    assert_eq!(
        (imported.tool.name.as_str(), imported.tool.version.as_str()),
        ("fio", "3.33")
    );
    // Importing it again records nothing twice; nor iolab's own result file of a recorded run.
    let mine = iolab(&["results", "import", "iolab.json"], d);
    assert!(
        text(&mine).contains("already recorded as run 1"),
        "{}",
        text(&mine)
    );
    let again = iolab(&["results", "import", fio_s], d);
    assert!(
        text(&again).contains("already recorded as run 2"),
        "{}",
        text(&again)
    );
    let compare = ok(&iolab(&["results", "compare", "1", "2"], d));
    let row = compare
        .lines()
        .find(|l| l.contains("read_iops"))
        .unwrap_or_else(|| panic!("{compare}"));
    assert!(row.contains('%'), "{compare}");

    // Damage is named with the file.
    let cut = d.join("cut.json");
    let t = std::fs::read_to_string(&fio).unwrap();
    std::fs::write(&cut, &t[..t.len() / 2]).unwrap();
    let out = iolab(&["results", "import", "cut.json"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("cut.json") && text(&out).contains("line "),
        "{}",
        text(&out)
    );
}

#[test]
fn compare_orders_percentiles_and_judges_noise_and_exports_csv() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for _ in 0..2 {
        ok(&randread(d, &[]));
    }
    let compare = ok(&iolab(&["results", "compare", "1", "2"], d));
    // Percentiles rise down the table: mean, p50, p99, p99.9, p99.99, max.
    let order: Vec<usize> = [
        "read_lat_mean_us",
        "read_lat_p50_us",
        "read_lat_p99_us",
        "read_lat_p99_9_us",
        "read_lat_p99_99_us",
        "read_lat_max_us",
    ]
    .iter()
    .map(|m| {
        compare
            .find(&format!("{m} "))
            .unwrap_or_else(|| panic!("{m}: {compare}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{compare}");
    // One run a side: no repeats to judge noise, and p99.99 of 3,000 I/Os rests on one.
    assert!(compare.contains("no repeats to judge it"), "{compare}");
    let tail = compare
        .lines()
        .find(|l| l.contains("read_lat_p99_99_us"))
        .unwrap();
    assert!(tail.contains("tail: 1 I/O"), "{compare}");
    // Several runs a side: their spread, and a verdict.
    for _ in 0..2 {
        ok(&randread(d, &[]));
    }
    let sides = ok(&iolab(&["results", "compare", "1,2", "3,4"], d));
    assert!(sides.contains("#1,2") && sides.contains("#3,4"), "{sides}");
    let iops = sides.lines().find(|l| l.contains("read_iops")).unwrap();
    assert!(iops.contains('±') && iops.contains("noise"), "{sides}");
    // CSV of both, and of one run.
    let csv = ok(&iolab(&["results", "compare", "1,2", "3,4", "--csv"], d));
    let header = csv.lines().next().unwrap();
    assert_eq!(header, "job,metric,runs 1 2,runs 3 4,runs 1 2 min,runs 1 2 max,runs 3 4 min,runs 3 4 max,change_pct,noise");
    assert!(
        csv.lines().any(|l| l.starts_with("randread,read_iops,")),
        "{csv}"
    );
    ok(&iolab(
        &["results", "export", "1", "--csv", "-o", "run1.csv"],
        d,
    ));
    let run1 = std::fs::read_to_string(d.join("run1.csv")).unwrap();
    let mut lines = run1.lines();
    let cols: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(cols.len(), row.len(), "{run1}");
    let at = |c: &str| row[cols.iter().position(|x| *x == c).unwrap()];
    assert_eq!(at("job"), "randread");
    assert!(at("read_iops").parse::<f64>().unwrap() > 0.0);
    assert_eq!(at("write_iops"), "", "a read job has no write figure");
}

#[test]
fn completions_and_man_pages_come_from_the_parser() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bash = ok(&iolab(&["completions", "bash"], d));
    assert!(
        bash.contains("_iolab") && bash.contains("--fio-json"),
        "{bash}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(
            !ok(&iolab(&["completions", shell], d)).is_empty(),
            "{shell}"
        );
    }
    let out = iolab(&["completions", "tcsh"], d);
    assert_eq!(out.status.code(), Some(2));
    let man = ok(&iolab(&["man"], d));
    assert!(man.starts_with(".ie") || man.contains(".TH iolab"), "{man}");
    std::fs::create_dir(d.join("man")).unwrap();
    ok(&iolab(&["man", "--dir", "man"], d));
    let run = std::fs::read_to_string(d.join("man/iolab-run.1")).unwrap();
    assert!(
        run.contains("fio\\-json") || run.contains("fio-json"),
        "{run}"
    );
    assert!(d.join("man/iolab.1").exists() && d.join("man/iolab-results.1").exists());
}
