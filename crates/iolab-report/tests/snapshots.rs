//! Snapshot tests of every renderer: the terminal tables, the HTML report and the JSON schema,
//! rendered from fixtures built in code and compared with files under tests/snapshots/.
//! A missing snapshot is written; `UPDATE_SNAPSHOTS=1` rewrites them after an intended change.

mod common;

use common::{check_snapshot, quick_result, run_result, suite_result};
use iolab_core::job::Access;
use iolab_core::quick::QuickTest;
use iolab_core::result::RunResult;
use iolab_report::{html::render_html, terminal};

#[test]
fn terminal_suite_table() {
    let r = suite_result("/dev/sdx", "bench-host", 1.0);
    check_snapshot("terminal-suite.txt", &terminal::suite_table(&r));
}

#[test]
fn terminal_quick_table() {
    let r = quick_result("/dev/sdx", "bench-host", 1.0);
    check_snapshot("terminal-quick.txt", &terminal::quick_table(&r));
}

#[test]
fn a_mixed_quick_test_fills_both_columns_of_its_row() {
    // CrystalDiskMark's mix test is one job with reads and writes; filed under Write by the
    // last word of its name, its reads went missing and its long label broke the columns.
    let mut r = quick_result("/dev/sdx", "bench-host", 1.0);
    let mut mix = r.jobs[6].clone();
    mix.name = "RND4K Q1T1 R70/W30 mix".into();
    mix.test = QuickTest::of_access("RND4K Q1T1 R70/W30", Access::RandRw);
    mix.write = mix.read.clone();
    mix.write.iops = 1234.0;
    r.jobs.push(mix);
    let table = terminal::quick_table(&r);
    let row = table
        .lines()
        .find(|l| l.starts_with("RND4K Q1T1 R70/W30"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("9766") && row.contains("1234"), "{table}");
    let bars = |l: &str| l.find('|');
    let header = table.lines().find(|l| l.starts_with("Test")).unwrap();
    assert_eq!(bars(row), bars(header), "{table}");
}

/// A quick or cdm result written before jobs carried their CrystalDiskMark test (only their
/// names said it) renders as one that carries them.
#[test]
fn results_written_before_typed_tests_render_the_same() {
    let typed = quick_result("/dev/sdx", "bench-host", 1.0);
    let mut cdm = typed.clone();
    cdm.kind = "suite:cdm".into();
    cdm.suite = Some(iolab_core::result::SuiteSummary {
        name: "cdm".into(),
        scale: 1.0,
        ..Default::default()
    });
    for typed in [typed, cdm] {
        // As an older iolab wrote it: the same JSON without the `test` keys.
        let mut text = serde_json::to_value(&typed).unwrap();
        for j in text["jobs"].as_array_mut().unwrap() {
            assert!(j.as_object_mut().unwrap().remove("test").is_some());
        }
        let old: RunResult = serde_json::from_value(text).unwrap();
        assert!(old.jobs.iter().all(|j| j.test.is_none()));
        let table = |r: &RunResult| match r.suite {
            Some(_) => terminal::suite_table(r),
            None => terminal::quick_table(r),
        };
        assert_eq!(table(&old), table(&typed));
        assert!(table(&old).contains("SEQ1M Q8T1"), "{}", table(&old));
        assert_eq!(
            render_html(std::slice::from_ref(&old)),
            render_html(std::slice::from_ref(&typed))
        );
    }
}

/// The grid follows the jobs' typed tests, not their names.
#[test]
fn the_grid_reads_typed_tests_not_names() {
    let mut r = quick_result("/dev/sdx", "bench-host", 1.0);
    for (i, j) in r.jobs.iter_mut().enumerate() {
        j.name = format!("job {i}");
    }
    let table = terminal::quick_table(&r);
    let row = table
        .lines()
        .find(|l| l.starts_with("SEQ1M Q8T1 ") && l.contains('|'))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("550.00") && row.contains("495.00"), "{table}");
    let page = render_html(&[r]);
    assert!(
        page.contains("<td class=\"l\">RND4K Q1T1</td>"),
        "no row of RND4K Q1T1"
    );
}

#[test]
fn terminal_run_table() {
    check_snapshot("terminal-run.txt", &terminal::run_table(&run_result()));
}

#[test]
fn terminal_run_table_of_a_model_claims_no_host_cpu() {
    let mut r = run_result();
    r.target.modelled = true;
    let table = terminal::run_table(&r);
    assert!(table.contains("cpu   not modelled"), "{table}");
    assert!(!table.contains("µs per I/O"), "{table}");
    assert!(!table.contains("model "), "{table}");
    // What the model reports of a job (power, the limiting resource, write amplification)
    // follows its block.
    let job = r.jobs[0].name.clone();
    r.target.model = Some(model_info(serde_json::json!({"tests": [{
        "job": job, "avg_power_w": 17.44, "bottleneck": "cpu NAND dies",
        "bottleneck_utilisation": 0.996, "write_amplification": 2.0
    }]})));
    let table = terminal::run_table(&r);
    assert!(
        table.contains("model 17.4 W; cpu NAND dies (100 %); write amplification 2.00\n"),
        "{table}"
    );
    // And the share of reads its write buffer served, when there was one to speak of.
    for (share, said) in [
        (0.278, "; 27.8 % of SSD reads from the write buffer\n"),
        (0.0, "\n"),
    ] {
        r.target.model = Some(model_info(serde_json::json!({"tests": [{
            "job": job, "avg_power_w": 9.3, "bottleneck": "cpu controller",
            "bottleneck_utilisation": 0.53, "write_amplification": 1.0,
            "reads_from_buffer": share
        }]})));
        let table = terminal::run_table(&r);
        let line = format!("model 9.3 W; cpu controller (53 %); write amplification 1.00{said}");
        assert!(table.contains(&line), "{table}");
    }
}

#[test]
fn html_suite_report() {
    let r = suite_result("/dev/sdx", "bench-host", 1.0);
    check_snapshot("report-suite.html", &render_html(&[r]));
}

#[test]
fn html_overlay_of_two_drives_and_other_kinds() {
    let results = vec![
        suite_result("/dev/sdx", "bench-host", 1.0),
        suite_result("sim:ssd750@z97", "model-host", 1.6),
        quick_result("/dev/sdx", "bench-host", 1.0),
        run_result(),
    ];
    check_snapshot("report-overlay.html", &render_html(&results));
}

#[test]
fn json_schema() {
    // A few jobs keep the snapshot readable; every field of every type still appears.
    let mut r = suite_result("/dev/sdx", "bench-host", 1.0);
    r.jobs.truncate(3);
    let text = serde_json::to_string_pretty(&r).unwrap() + "\n";
    check_snapshot("result-suite.json", &text);
    // The text reads back into the schema with nothing lost: every field is known to it.
    let back: RunResult = serde_json::from_str(&text).unwrap();
    let as_read: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        serde_json::to_value(&back).unwrap() == as_read,
        "the result does not round-trip through JSON"
    );
}

#[test]
fn the_cdm_suite_shows_crystaldiskmarks_grid_on_the_terminal() {
    let mut r = quick_result("/dev/sdx", "bench-host", 1.0);
    r.kind = "suite:cdm".into();
    r.suite = Some(iolab_core::result::SuiteSummary {
        name: "cdm".into(),
        scale: 1.0,
        ..Default::default()
    });
    let table = terminal::suite_table(&r);
    assert!(table.contains("CrystalDiskMark's grid"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("RND4K Q1T1 ") && l.contains('|'))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("9766") && row.contains("8789"), "{table}");
    let header = table.lines().find(|l| l.starts_with("Test")).unwrap();
    assert_eq!(row.find('|'), header.find('|'), "{table}");
    // Another suite has no grid.
    r.suite.as_mut().unwrap().name = "atto".into();
    assert!(!terminal::suite_table(&r).contains("CrystalDiskMark's grid"));
}

/// A model's description in a result, from JSON as results hold it.
fn model_info(v: serde_json::Value) -> iolab_core::model_info::ModelInfo {
    serde_json::from_value(v).expect("a model description")
}

#[test]
fn a_busy_machine_is_named_under_the_quick_grid() {
    let mut r = quick_result("/dev/sdx", "bench-host", 1.0);
    assert!(!terminal::quick_table(&r).contains("busy"));
    let j = r
        .jobs
        .iter_mut()
        .find(|j| j.name == "RND4K Q1T1 write")
        .unwrap();
    let measured_s = j.measured_ns as f64 / 1e9;
    j.cpu.others_user_s = Some(0.5 * measured_s);
    j.cpu.steal_s = Some(0.25 * measured_s);
    let table = terminal::quick_table(&r);
    assert!(
        table.contains(
            "busy  while RND4K Q1T1 write measured, other processes kept 0.50 CPUs busy and \
             the hypervisor took 0.25 (steal)\n"
        ),
        "{table}"
    );
    assert_eq!(table.matches("busy  they compete").count(), 1, "{table}");
}
