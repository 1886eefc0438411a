//! Properties of the HTML report that hold for any result: self-contained, escaped, one chart
//! per step as the step asks, one series per result when results overlay.

mod common;

use common::{quick_result, run_result, suite_result};
use iolab_report::html::render_html;

/// The `<svg>` elements of a page.
fn svgs(page: &str) -> Vec<&str> {
    page.match_indices("<svg")
        .map(|(i, _)| {
            let end = page[i..].find("</svg>").expect("closed svg") + i + "</svg>".len();
            &page[i..end]
        })
        .collect()
}

/// The chart whose title (its aria-label) starts with `title`.
fn chart<'a>(page: &'a str, title: &str) -> Vec<&'a str> {
    svgs(page)
        .into_iter()
        .filter(|s| s.contains(&format!("aria-label=\"{title}")))
        .collect()
}

#[test]
fn page_is_self_contained() {
    let page = render_html(&[
        suite_result("/dev/sdx", "h", 1.0),
        quick_result("/dev/sdx", "h", 1.0),
        run_result(),
    ]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    for bad in [
        "http://", "https://", "<script", "src=", "url(", "@import", "<link",
    ] {
        assert!(!page.contains(bad), "page contains {bad}");
    }
    assert!(!page.contains("NaN") && !page.contains("inf\""));
}

#[test]
fn text_is_escaped() {
    let mut r = suite_result("/dev/<evil>&\"x\"", "h<o>st", 1.0);
    r.notes.push("<script>alert(1)</script>".into());
    r.jobs[1].name = "QD1 <b>bold</b>".into();
    let page = render_html(&[r]);
    assert!(!page.contains("<script>") && !page.contains("<evil>") && !page.contains("<b>"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("/dev/&lt;evil&gt;&amp;&quot;x&quot;"));
    assert!(page.contains("QD1 &lt;b&gt;bold&lt;/b&gt;"));
}

#[test]
fn one_chart_per_step_as_the_step_asks() {
    let page = render_html(&[suite_result("/dev/sdx", "h", 1.0)]);
    // qd-lines ×2, bs-lines, mix-lines, scatter (whole run and last 4 s), ATTO (write and
    // read together), bars (the CDM steps together), Database (heatmap + lines), IOPS matrix
    // (heatmap + lines + convergence), scores (MB/s and IOPS): 15. The fill pass is a table.
    assert_eq!(svgs(&page).len(), 15, "charts: {}", svgs(&page).len());
    assert_eq!(chart(&page, "Random read 4K").len(), 1);
    assert_eq!(
        chart(&page, "Performance consistency: IOPS over the whole run").len(),
        1
    );
    assert_eq!(
        chart(&page, "Performance consistency: IOPS over the last 4 s").len(),
        1
    );
    assert_eq!(
        chart(&page, "Write and Read: MB/s by transfer size").len(),
        1
    );
    assert_eq!(chart(&page, "Steady state of IOPS matrix").len(), 1);
    // The scatter of the whole run has its 60 seconds, the last 4 s only those.
    let dots = |s: &str| s.matches("class=\"dot\"").count();
    assert_eq!(
        dots(chart(&page, "Performance consistency: IOPS over the whole run")[0]),
        60
    );
    assert_eq!(
        dots(chart(&page, "Performance consistency: IOPS over the last 4 s")[0]),
        4
    );
    // The heatmap of the Database step: 3 read shares × 3 queue depths.
    assert_eq!(
        chart(&page, "Database")[0]
            .matches("class=\"cell\"")
            .count(),
        9
    );
    // The convergence chart shows every round and the window's fit.
    let conv = chart(&page, "Steady state of IOPS matrix")[0];
    assert_eq!(conv.matches("<title>round").count(), 7);
    assert!(conv.contains("class=\"slope\"") && conv.contains("ATTAINED"));
    // The multithreaded step: a line per thread count.
    assert_eq!(
        chart(&page, "Multithreaded read")[0]
            .matches("<polyline")
            .count(),
        2
    );
}

#[test]
fn a_loop_whose_tracked_job_never_finished_draws_no_empty_chart() {
    // Ctrl-C in round 1 before the tracked job (the last of the IOPS matrix's 56), or a tracked
    // job that does not fit the target: no round value. An empty frame said "NOT attained
    // after 0 rounds: range 0 (limit 0)".
    let mut r = suite_result("/dev/sdx", "h", 1.0);
    let ss = &mut r.suite.as_mut().unwrap().steady_state[0];
    ss.round_values.clear();
    ss.rounds = 0;
    ss.attained = false;
    let page = render_html(&[r]);
    assert!(chart(&page, "Steady state of IOPS matrix").is_empty());
    assert!(
        page.contains(
            "Steady state of IOPS matrix (write_iops): not judged, \
                       no round of the tracked job finished"
        ),
        "{page}"
    );
}

#[test]
fn a_directory_target_shows_no_size_or_blocks_it_has_not() {
    // The filecopy suite's directory: "(directory, 0, 0 B logical blocks, filesystem)".
    let mut r = run_result();
    r.target.path = "/mnt/ssd/iolab-filecopy-1.iolab-tmp".into();
    r.target.kind = "directory".into();
    r.target.size_bytes = 0;
    r.target.logical_block_bytes = 0;
    r.target.engine = "filesystem".into();
    let page = render_html(&[r.clone()]);
    assert!(
        page.contains("/mnt/ssd/iolab-filecopy-1.iolab-tmp (directory, filesystem)"),
        "{page}"
    );
    assert!(!page.contains("0 B logical blocks"));
    let text = iolab_report::terminal::run_table(&r);
    assert!(
        text.contains("on /mnt/ssd/iolab-filecopy-1.iolab-tmp (directory, filesystem)"),
        "{text}"
    );
}

#[test]
fn a_looped_steps_lines_show_the_steady_state_window_as_its_heatmap_does() {
    // The IOPS matrix's 4K random writes: rounds 3–7 (the window) average 4060 IOPS, the last
    // round alone 4050. The heatmap showed the window's mean and the lines beside it the last
    // round, so the two charts of one step disagreed (and the scores took the window's).
    let page = render_html(&[suite_result("/dev/sdx", "h", 1.0)]);
    let heat = chart(&page, "IOPS matrix: IOPS")[0];
    assert!(heat.contains("transfer size 4K: 4060"), "{heat}");
    let lines = chart(&page, "IOPS matrix: IOPS by transfer size")[0];
    assert!(lines.contains("4K → 4060<"), "{lines}");
    assert!(lines.contains("mean of rounds 3–7 (the steady-state window)"));
}

#[test]
fn last_seconds_chart_only_where_a_score_reads_it() {
    let mut r = suite_result("/dev/sdx", "h", 1.0);
    r.suite.as_mut().unwrap().scores.clear();
    let page = render_html(&[r]);
    assert_eq!(
        chart(&page, "Performance consistency: IOPS over the whole run").len(),
        1
    );
    assert!(!page.contains("IOPS over the last"));
}

#[test]
fn a_partial_suite_save_is_drawn_as_a_suite() {
    // What `iolab suite --json` leaves after a kill: the jobs so far, no summary yet.
    let mut r = suite_result("/dev/sdx", "h", 1.0);
    r.suite = None;
    r.jobs.truncate(10);
    r.complete = false;
    r.incomplete_reason = Some("running (partial save)".into());
    let page = render_html(&[r]);
    assert_eq!(chart(&page, "Random read 4K").len(), 1);
    assert!(page.contains("INCOMPLETE: running (partial save)"));
}

#[test]
fn ceiling_drawn_on_throughput_charts_near_it() {
    let page = render_html(&[suite_result("/dev/sdx", "h", 1.0)]);
    // Sequential read reaches 540 MB/s of the 600 MB/s ceiling: drawn.
    assert_eq!(
        chart(&page, "Sequential read")[0]
            .matches("class=\"ceiling\"")
            .count(),
        1
    );
    // IOPS charts never carry it.
    assert_eq!(
        chart(&page, "Random read 4K")[0]
            .matches("class=\"ceiling\"")
            .count(),
        0
    );
}

#[test]
fn overlay_of_two_results_gives_two_series() {
    let one = render_html(&[suite_result("/dev/sdx", "a", 1.0)]);
    let two = render_html(&[
        suite_result("/dev/sdx", "a", 1.0),
        suite_result("/dev/sdy", "b", 1.5),
    ]);
    let lines = |page: &str, t: &str| chart(page, t)[0].matches("<polyline").count();
    assert_eq!(lines(&one, "Random read 4K"), 1);
    assert_eq!(lines(&two, "Random read 4K"), 2);
    assert_eq!(lines(&two, "Sequential read"), 2);
    assert!(two.contains("/dev/sdx @ a") && two.contains("/dev/sdy @ b"));
    // Bars: one series per result in each score chart.
    let score = chart(&two, "Scores in MB/s")[0];
    assert_eq!(score.matches("class=\"bar\"").count(), 2 * 2);
    // Heatmaps and convergence cannot overlay: one each per result.
    assert_eq!(chart(&two, "Database: IOPS\"").len(), 2);
    assert_eq!(chart(&two, "Steady state of IOPS matrix").len(), 2);
    // The same result twice still gets two distinguishable labels.
    let same = render_html(&[
        suite_result("/dev/sdx", "a", 1.0),
        suite_result("/dev/sdx", "a", 1.0),
    ]);
    assert!(same.contains("#1 /dev/sdx @ a") && same.contains("#2 /dev/sdx @ a"));
}

#[test]
fn kinds_get_their_own_sections_and_incomplete_is_marked() {
    let page = render_html(&[
        suite_result("/dev/sdx", "a", 1.0),
        quick_result("/dev/sdx", "a", 1.0),
        run_result(),
    ]);
    assert_eq!(page.matches("<section class=\"kind\">").count(), 3);
    assert!(
        page.contains("<h2>suite:fixture</h2>")
            && page.contains("<h2>quick</h2>")
            && page.contains("<h2>run</h2>")
    );
    assert!(page.contains("INCOMPLETE: interrupted"));
    // Quick: CrystalDiskMark's grid, the sequential tests charted in MB/s and the random ones
    // in IOPS (on one MB/s axis RND4K's bars were slivers), a read and a write bar per test.
    let seq = chart(&page, "Sequential: MB/s")[0];
    assert_eq!(seq.matches("class=\"bar\"").count(), 4);
    assert!(
        seq.contains("SEQ1M Q8T1") && !seq.contains("RND4K"),
        "{seq}"
    );
    let rnd = chart(&page, "Random: IOPS")[0];
    assert_eq!(rnd.matches("class=\"bar\"").count(), 4);
    assert!(
        rnd.contains("RND4K Q1T1") && !rnd.contains("SEQ1M"),
        "{rnd}"
    );
    assert!(page.contains("<table class=\"figures cdm\">"), "no grid");
    assert!(
        page.contains("<td class=\"cdm main\""),
        "no figure marked as the test's"
    );
    // Run: a bar per direction a job does (a read job has no write bar).
    let j = chart(&page, "Throughput per job")[0];
    assert_eq!(j.matches("class=\"bar\"").count(), 2);
}

#[test]
fn rendering_is_deterministic() {
    let r = [
        suite_result("/dev/sdx", "a", 1.0),
        quick_result("/dev/sdx", "a", 1.0),
    ];
    assert_eq!(render_html(&r), render_html(&r));
}

#[test]
fn empty_and_jobless_results_render() {
    assert!(render_html(&[]).contains("No results."));
    let mut r = suite_result("/dev/sdx", "a", 1.0);
    r.jobs.clear();
    let page = render_html(&[r]);
    assert!(page.contains("</html>"));
}

#[test]
fn jobs_of_one_name_each_get_their_bar() {
    // A result saved before job names had to be unique: a read and a write job both named
    // "a". The chart used to find the first "a" twice and drop the write job's bar.
    let mut r = run_result();
    for j in &mut r.jobs {
        j.name = "a".into();
    }
    let page = render_html(&[r.clone(), r]);
    let j = chart(&page, "Throughput per job")[0];
    // Read of the first "a", write of the second, in each result.
    assert_eq!(j.matches("class=\"bar\"").count(), 4, "{j}");
    assert!(j.contains(">a<") && j.contains(">a (2)<"), "{j}");
}

/// The figures table's row of job `name`.
fn job_row<'a>(page: &'a str, name: &str) -> &'a str {
    page.lines()
        .find(|l| l.starts_with(&format!("<tr><td class=\"l\">{name}</td>")))
        .unwrap_or_else(|| panic!("no row for {name}: {page}"))
}

#[test]
fn a_job_without_io_shows_no_latency() {
    // Interrupted before its first I/O: its p99 is a dash like its mean, not 0.
    let mut r = run_result();
    let j = &mut r.jobs[0];
    j.read = Default::default();
    j.write = Default::default();
    let name = j.name.clone();
    let page = render_html(&[r]);
    let row = job_row(&page, &name);
    assert!(row.contains("<td>–</td><td>–</td>"), "{row}");
}

/// A mixed job's p99 is each direction's: the larger of the two stood beside the mix's
/// combined mean as if it were the mix's own.
#[test]
fn a_mixed_jobs_p99_is_given_per_direction() {
    let mut r = run_result();
    let j = &mut r.jobs[0];
    j.read.ios = 1000;
    j.read.lat_ns.p99 = 120_000;
    j.write.ios = 500;
    j.write.lat_ns.p99 = 4_500_000;
    let name = j.name.clone();
    let page = render_html(&[r]);
    let row = job_row(&page, &name);
    assert!(row.contains("<td>120 r / 4500 w</td>"), "{row}");
}

/// A quick test stopped during its last counted run is marked, with why and what it measured,
/// in the terminal table and the HTML one; its row looked like every finished test's.
#[test]
fn a_quick_test_cut_short_is_marked_in_both_tables() {
    let mut r = quick_result("/dev/sdx", "h", 1.0);
    let j = r
        .jobs
        .iter_mut()
        .find(|j| j.name == "RND4K Q1T1 write")
        .unwrap();
    j.complete = false;
    j.stop_reason = Some("interrupted".into());
    j.repeats.truncate(2);
    let term = iolab_report::terminal::quick_table(&r);
    assert!(term.contains("\nRND4K Q1T1 *"), "{term}");
    assert!(!term.contains("RND4K Q32T1 *"), "{term}");
    assert!(
        term.contains(
            "* RND4K Q1T1: stopped early (interrupted): 2 counted run(s), 1.5 s measured in all"
        ),
        "{term}"
    );
    let page = render_html(&[r]);
    assert!(
        page.contains(
            "<td class=\"l\">RND4K Q1T1 <span class=\"incomplete\">stopped early (interrupted)"
        ),
        "{page}"
    );
    assert!(page.contains("<td class=\"l\">RND4K Q32T1</td>"), "{page}");
}

/// A model's quick result: the terminal table, `run` and suites give each job's model line
/// (watts, bottleneck, write amplification), and quick's HTML section gave none.
#[test]
fn quick_on_a_model_gives_each_jobs_model_line() {
    let mut r = quick_result("sim:c300-256@h67", "h", 1.0);
    r.target.modelled = true;
    r.target.model = Some(model_info(serde_json::json!({"tests": [
        {"job": "SEQ1M Q8T1 read", "avg_power_w": 3.12, "bottleneck": "link SATA 6 Gb/s",
         "bottleneck_utilisation": 0.93, "write_amplification": null},
        {"job": "RND4K Q1T1 write", "avg_power_w": 2.5, "bottleneck": "cpu NAND dies",
         "bottleneck_utilisation": 0.4, "write_amplification": 1.25,
         "reads_from_buffer": 0.0},
    ]})));
    let page = render_html(std::slice::from_ref(&r));
    for row in [
        "<td class=\"l\">SEQ1M Q8T1 read</td><td class=\"l\">model 3.1 W; link SATA 6 Gb/s \
         (93 %)</td></tr>",
        "<td class=\"l\">RND4K Q1T1 write</td><td class=\"l\">model 2.5 W; cpu NAND dies \
         (40 %); write amplification 1.25</td></tr>",
    ] {
        assert!(page.contains(row), "{row}\n{page}");
    }
    // Overlaid, each line says whose it is (by its target: both ran on host h); a real
    // drive's result has none.
    let page = render_html(&[r, quick_result("/dev/sdx", "h", 1.0)]);
    assert_eq!(page.matches("<th class=\"l\">model</th>").count(), 1);
    assert!(
        page.contains(
            "<tr><td class=\"l\">sim:c300-256@h67</td><td class=\"l\">SEQ1M Q8T1 read</td>"
        ),
        "{page}"
    );
    assert!(!render_html(&[quick_result("/dev/sdx", "h", 1.0)]).contains(">model</th>"));
}

/// A bars step looped to steady state (SNIA PTS's "Throughput 1024K") is a block of its own,
/// headed by its name: its chart was titled by its phase ("Throughput: MB/s"), as if it drew
/// the whole phase, and did not say its bars are the means of the steady-state window.
#[test]
fn a_looped_bars_step_is_titled_by_its_name() {
    let mut r = suite_result("/dev/sdx", "h", 1.0);
    for j in &mut r.jobs {
        if let Some(s) = j.step.as_mut().filter(|s| s.step == "IOPS matrix") {
            s.chart = "bars".into();
        }
    }
    let page = render_html(&[r]);
    assert!(chart(&page, "IOPS: ").is_empty(), "titled by the phase");
    let bars = chart(&page, "IOPS matrix: IOPS");
    assert_eq!(bars.len(), 1);
    assert!(
        bars[0].contains("mean of rounds 3–7 (the steady-state window)"),
        "{}",
        bars[0]
    );
    // Steps drawn together are still titled by their phase (the heading names each).
    assert_eq!(chart(&page, "cdm: MB/s").len(), 1);
}

/// `iolab report A.json B.json` of runs on long paths that differ deep inside: the legend cut
/// each label where the paths began to differ, so both read alike.
#[test]
fn legends_keep_the_part_that_tells_runs_apart() {
    let mut a = run_result();
    let mut b = run_result();
    a.target.path = "/home/someone/benchmarks/2026-11/nvme-a/iolab/test.bin".into();
    b.target.path = "/home/someone/benchmarks/2026-11/nvme-b/iolab/test.bin".into();
    b.started_unix_s += 60.0;
    let page = render_html(&[a.clone(), b.clone()]);
    let bars = chart(&page, "Throughput per job")[0];
    // The legend's visible text (after its tooltip) names each run by what differs.
    let shown: Vec<&str> = bars
        .split("</title>")
        .skip(1)
        .map(|t| t.split("</text>").next().unwrap())
        .collect();
    assert!(shown.iter().any(|t| t.contains("nvme-a")), "{shown:?}");
    assert!(shown.iter().any(|t| t.contains("nvme-b")), "{shown:?}");
    // The same target twice: told apart by when each ran, not only by a number.
    b.target.path = a.target.path.clone();
    let page = render_html(&[a, b]);
    assert!(page.contains("(2026-"), "no start time in the labels");
}

/// A model's description in a result, from JSON as results hold it.
fn model_info(v: serde_json::Value) -> iolab_core::model_info::ModelInfo {
    serde_json::from_value(v).expect("a model description")
}
