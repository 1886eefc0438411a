//! The charts of a suite's report: each step drawn as its `chart` asks (QD, block-size and
//! read-share lines, ATTO bars, bars, scatter, heatmap), steady-state convergence, and scores.

use super::{ceilings, step_jobs, step_key, step_rounds, step_table, Figure, Run, StepKey};
use crate::svg::{
    bar_chart, convergence_chart, esc, fmt_bytes, fmt_num, fmt_value, heatmap, line_chart,
    scatter_chart, BarChart, BarSeries, Convergence, Heatmap, LineChart, ScatterChart, Series,
    XLabels, XScale,
};
use iolab_core::quick;
use iolab_core::result::{JobResult, RunResult, SteadyStateReport};
use iolab_core::window::{is_maximum, over_rounds, Window};
use std::fmt::Write;

/// How a swept key is drawn on an axis and named in labels.
fn key_axis(key: &str) -> (XScale, XLabels, &'static str) {
    match key {
        "queue_depth" => (XScale::Log2, XLabels::Number, "queue depth"),
        "block_size" => (XScale::Log2, XLabels::Bytes, "transfer size"),
        "read_pct" => (XScale::Linear, XLabels::Number, "reads, % of I/Os"),
        "threads" => (XScale::Linear, XLabels::Number, "threads"),
        _ => (XScale::Linear, XLabels::Number, "value"),
    }
}

/// `QD4`, `T2`, `4K`, `70 % reads`.
fn key_value_label(key: &str, v: f64) -> String {
    match key {
        "queue_depth" => format!("QD{}", fmt_num(v)),
        "threads" => format!("T{}", fmt_num(v)),
        "block_size" => fmt_bytes(v),
        "read_pct" => format!("{} % reads", fmt_num(v)),
        other => format!("{other} {}", fmt_num(v)),
    }
}

/// A key's value for a job: the swept value, else the job's own setting.
fn key_value(j: &JobResult, key: &str) -> f64 {
    j.sweep_value(key).unwrap_or(match key {
        "queue_depth" => j.job.queue_depth as f64,
        "threads" => j.job.threads as f64,
        "block_size" => j.job.block_sizes.first().map_or(0.0, |b| b.bytes as f64),
        "read_pct" => j.job.read_pct,
        _ => 0.0,
    })
}

/// The swept keys of a job other than `except`, as a label (`T2`), empty when none.
fn other_keys_label(j: &JobResult, except: &str) -> String {
    j.step
        .as_ref()
        .map(|s| {
            s.sweep
                .iter()
                .filter(|v| v.key != except)
                .map(|v| key_value_label(&v.key, v.value))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The sweep point of a job as a label (`QD4 T2`), empty outside sweeps.
fn sweep_label(j: &JobResult) -> String {
    other_keys_label(j, "")
}

/// The steady-state report of a step, if it looped.
fn steady<'a>(r: &'a RunResult, step: &str) -> Option<&'a SteadyStateReport> {
    r.suite
        .as_ref()?
        .steady_state
        .iter()
        .find(|s| s.step == step)
}

/// The jobs of a step its charts read, and the window of rounds they span: of a step looped
/// to steady state, every job of its window's rounds (as the suite's scores take it); of any
/// other step, its jobs.
fn window_rounds<'a>(r: &'a RunResult, key: &StepKey) -> (Vec<&'a JobResult>, Option<Window>) {
    let size = steady(r, &key.step).map_or(1, |s| s.window);
    let rounds = step_rounds(r, key);
    let window = Window::of(rounds.iter().copied(), size);
    let jobs = rounds
        .into_iter()
        .filter(|j| match (window, j.step.as_ref().and_then(|s| s.round)) {
            (Some(_), Some(round)) => Window::reads(window, Some(round)),
            _ => true,
        })
        .collect();
    (jobs, window)
}

/// `figure` of the sweep point of `j` (a job of the last round) over `rounds`; a job not
/// looped in rounds stands for itself.
fn point_value(rounds: &[&JobResult], j: &JobResult, figure: Figure) -> f64 {
    let Some(point) = j.step.as_ref().filter(|s| s.round.is_some()) else {
        return figure.of(j);
    };
    let values = rounds
        .iter()
        .filter(|k| k.step.as_ref().is_some_and(|s| s.sweep == point.sweep))
        .map(|k| figure.of(k));
    over_rounds(values, is_maximum(figure.metric())).unwrap_or_else(|| figure.of(j))
}

/// How a chart of a looped step took its values, for its subtitle.
fn window_words(window: Option<Window>) -> Option<String> {
    let w = window?;
    Some(if w.first == w.last {
        format!("round {} (the last)", w.last)
    } else {
        format!("mean of {} (the steady-state window)", w.words())
    })
}

/// Charts drawn together: one step, or consecutive bar, ATTO or table-only steps of one phase
/// (CrystalDiskMark's tests side by side, ATTO's write and read, a phase's fill passes).
struct Block {
    phase: String,
    chart: String,
    steps: Vec<String>,
}

fn blocks(group: &[Run]) -> Vec<Block> {
    let mut keys: Vec<StepKey> = Vec::new();
    for g in group {
        for j in &g.r.jobs {
            let k = step_key(j);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut out: Vec<Block> = Vec::new();
    for k in keys {
        let merges = matches!(k.chart.as_str(), "bars" | "atto" | "table");
        match out.last_mut() {
            Some(b) if merges && b.phase == k.phase && b.chart == k.chart => b.steps.push(k.step),
            _ => out.push(Block {
                phase: k.phase,
                chart: k.chart,
                steps: vec![k.step],
            }),
        }
    }
    out
}

/// A suite's report: its steps' charts and tables, steady state, scores.
pub(super) fn suite_section(out: &mut String, group: &[Run]) {
    // CrystalDiskMark's suite: its read and write tests in CrystalDiskMark's grid, instead of
    // a bar chart per phase on one MB/s axis.
    let cdm = group
        .iter()
        .any(|g| g.r.suite.as_ref().is_some_and(|s| s.name == "cdm"));
    if cdm {
        out.push_str("<section class=\"step\">\n<h3>CrystalDiskMark's tests</h3>\n");
        super::cdm::grid_and_charts(out, group, "each test run once for its measure time");
        out.push_str("</section>\n");
    }
    // The steps the grid showed are not drawn again.
    let grid_steps: Vec<&str> = group
        .iter()
        .flat_map(|g| quick::tests_of(&g.r.jobs))
        .filter_map(|(_, j)| j.step.as_ref().map(|s| s.step.as_str()))
        .collect();
    for b in blocks(group) {
        if cdm && b.steps.iter().all(|s| grid_steps.contains(&s.as_str())) {
            continue;
        }
        let title = if b.steps.len() == 1 {
            b.steps[0].clone()
        } else {
            format!("{}: {}", b.phase, b.steps.join(", "))
        };
        let _ = write!(out, "<section class=\"step\">\n<h3>{}</h3>\n", esc(&title));
        if !b.phase.is_empty() && b.steps.len() == 1 {
            let _ = writeln!(out, "<p class=\"note\">phase: {}</p>", esc(&b.phase));
        }
        let keys: Vec<StepKey> = b
            .steps
            .iter()
            .map(|s| StepKey {
                phase: b.phase.clone(),
                step: s.clone(),
                chart: b.chart.clone(),
            })
            .collect();
        match b.chart.as_str() {
            "qd-lines" => lines_chart(out, group, &keys[0], "queue_depth"),
            "bs-lines" => lines_chart(out, group, &keys[0], "block_size"),
            "mix-lines" => lines_chart(out, group, &keys[0], "read_pct"),
            "atto" => atto_chart(out, group, &keys),
            "bars" => bars_chart(out, group, &keys),
            "scatter" => scatter_charts(out, group, &keys[0]),
            "heatmap" => heatmap_charts(out, group, &keys[0]),
            _ => {}
        }
        for k in &keys {
            for g in group {
                if let Some(ss) = steady(g.r, &k.step) {
                    out.push_str(&convergence(ss, group.len() > 1, g.label));
                    out.push('\n');
                }
            }
        }
        step_table(out, group, &keys);
        out.push_str("</section>\n");
    }
    scores(out, group);
}

/// QD, block-size or read-share lines: x the swept key, a series per result and per value of
/// the other swept keys.
fn lines_chart(out: &mut String, group: &[Run], key: &StepKey, x_key: &str) {
    let all: Vec<&JobResult> = group.iter().flat_map(|g| step_jobs(g.r, key).0).collect();
    let figure = Figure::for_step(
        &all,
        group
            .iter()
            .find_map(|g| steady(g.r, &key.step))
            .map(|s| s.tracking.as_str()),
    );
    let mut series: Vec<Series> = Vec::new();
    let mut spans = Vec::new();
    for g in group {
        let (jobs, _) = step_jobs(g.r, key);
        let (rounds, span) = window_rounds(g.r, key);
        spans.extend(span);
        let mut sub: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for j in jobs {
            let other = other_keys_label(j, x_key);
            let point = (key_value(j, x_key), point_value(&rounds, j, figure));
            match sub.iter_mut().find(|(l, _)| *l == other) {
                Some((_, pts)) => pts.push(point),
                None => sub.push((other, vec![point])),
            }
        }
        for (other, mut pts) in sub {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let label = match (group.len() > 1, other.is_empty()) {
                (false, true) => key.step.clone(),
                (false, false) => other,
                (true, true) => g.label.to_string(),
                (true, false) => format!("{} {other}", g.label),
            };
            series.push(Series { label, points: pts });
        }
    }
    let (x_scale, x_labels, x_name) = key_axis(x_key);
    // One subtitle for the results overlaid: the rounds each took, where they agree.
    spans.dedup();
    let subtitle = match spans.as_slice() {
        [one] => window_words(Some(*one)).unwrap_or_default(),
        [] => String::new(),
        _ => "each result the mean of its steady-state window".to_string(),
    };
    out.push_str(&line_chart(&LineChart {
        title: format!("{}: {} by {x_name}", key.step, figure.unit()),
        subtitle,
        x_label: x_name.to_string(),
        y_label: figure.axis().to_string(),
        x_scale,
        x_labels,
        series,
        ceilings: ceilings(group, figure),
    }));
    out.push('\n');
}

/// ATTO's chart: a bar per step (write, read) and result for every transfer size.
fn atto_chart(out: &mut String, group: &[Run], keys: &[StepKey]) {
    let mut sizes: Vec<f64> = Vec::new();
    for g in group {
        for k in keys {
            for j in step_jobs(g.r, k).0 {
                let s = key_value(j, "block_size");
                if !sizes.contains(&s) {
                    sizes.push(s);
                }
            }
        }
    }
    sizes.sort_by(f64::total_cmp);
    let mut series = Vec::new();
    for g in group {
        for k in keys {
            let jobs = step_jobs(g.r, k).0;
            let values = sizes
                .iter()
                .map(|s| {
                    jobs.iter()
                        .find(|j| key_value(j, "block_size") == *s)
                        .map(|j| Figure::Throughput.of(j))
                })
                .collect();
            let label = if group.len() > 1 {
                format!("{} — {}", k.step, g.label)
            } else {
                k.step.clone()
            };
            series.push(BarSeries { label, values });
        }
    }
    out.push_str(&bar_chart(&BarChart {
        title: format!(
            "{}: MB/s by transfer size",
            keys.iter()
                .map(|k| k.step.as_str())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        subtitle: String::new(),
        value_label: Figure::Throughput.axis().to_string(),
        categories: sizes.iter().map(|s| fmt_bytes(*s)).collect(),
        series,
        ceilings: ceilings(group, Figure::Throughput),
    }));
    out.push('\n');
}

/// Bars: a category per step (and sweep point), a series per result.
fn bars_chart(out: &mut String, group: &[Run], keys: &[StepKey]) {
    let mut categories: Vec<(String, String)> = Vec::new(); // (step, sweep label)
    let mut all: Vec<&JobResult> = Vec::new();
    for g in group {
        for k in keys {
            for j in step_jobs(g.r, k).0 {
                all.push(j);
                let c = (k.step.clone(), sweep_label(j));
                if !categories.contains(&c) {
                    categories.push(c);
                }
            }
        }
    }
    let tracking = keys
        .iter()
        .find_map(|k| group.iter().find_map(|g| steady(g.r, &k.step)))
        .map(|s| s.tracking.as_str());
    let figure = if tracking.is_some() {
        Figure::for_step(&all, tracking)
    } else {
        Figure::Throughput
    };
    // The rounds each bar's value is the mean of, per step and result, for the subtitle.
    let mut spans = Vec::new();
    for g in group {
        for k in keys {
            spans.push(window_rounds(g.r, k).1);
        }
    }
    spans.dedup();
    let subtitle = match spans.as_slice() {
        [Some(one)] => window_words(Some(*one)).unwrap_or_default(),
        _ if spans.iter().all(Option::is_some) => {
            "each result the mean of its steady-state window".to_string()
        }
        // Looped and not looped steps together: the table below gives each job's round.
        _ => String::new(),
    };
    let series = group
        .iter()
        .map(|g| BarSeries {
            label: g.label.to_string(),
            values: categories
                .iter()
                .map(|(step, point)| {
                    let k = keys.iter().find(|k| k.step == *step)?;
                    let (rounds, _) = window_rounds(g.r, k);
                    step_jobs(g.r, k)
                        .0
                        .into_iter()
                        .find(|j| sweep_label(j) == *point)
                        .map(|j| point_value(&rounds, j, figure))
                })
                .collect(),
        })
        .collect();
    out.push_str(&bar_chart(&BarChart {
        title: format!("{}: {}", bars_title(keys), figure.unit()),
        subtitle,
        value_label: figure.axis().to_string(),
        categories: categories
            .iter()
            .map(|(s, p)| {
                if p.is_empty() {
                    s.clone()
                } else {
                    format!("{s} {p}")
                }
            })
            .collect(),
        series,
        ceilings: ceilings(group, figure),
    }));
    out.push('\n');
}

/// What a bar chart of `keys` is titled by: one step by its name, as its section is headed
/// (a step looped to steady state is always alone: it was titled by its phase, "Throughput:
/// MB/s" for SNIA PTS's "Throughput 1024K", as if it drew the whole phase); steps drawn
/// together by their phase, which the section's heading names with them.
fn bars_title(keys: &[StepKey]) -> String {
    match keys {
        [one] => one.step.clone(),
        [first, ..] if !first.phase.is_empty() => first.phase.clone(),
        _ => keys
            .iter()
            .map(|k| k.step.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The seconds a `last_seconds` score of `step` looks at (AnandTech's last 400 s, scaled), from
/// the score's rule text; `None` when no such score reads the step.
fn window_seconds(r: &RunResult, step: &str) -> Option<f64> {
    let s = r.suite.as_ref()?;
    let tail = format!(" s of '{step}'");
    s.scores.iter().find_map(|sc| {
        let end = sc.rule.find(&tail)?;
        let start = sc.rule[..end].rfind("over the last ")? + "over the last ".len();
        sc.rule[start..end].trim().parse::<f64>().ok()
    })
}

/// Per-second IOPS over the whole job and over its last N seconds.
fn scatter_charts(out: &mut String, group: &[Run], key: &StepKey) {
    let mut series = Vec::new();
    // The window the step's last-seconds score reads, if one does.
    let mut window: Option<f64> = None;
    for g in group {
        for j in step_jobs(g.r, key).0 {
            let s = &j.series;
            let pts = s
                .t_end_s
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let v = s.read_iops.get(i).copied().unwrap_or(0.0)
                        + s.write_iops.get(i).copied().unwrap_or(0.0);
                    (*t, v)
                })
                .collect();
            let label = if group.len() > 1 {
                g.label.to_string()
            } else {
                key.step.clone()
            };
            series.push(Series { label, points: pts });
        }
        if window.is_none() {
            window = window_seconds(g.r, &key.step);
        }
    }
    let interval = group
        .iter()
        .flat_map(|g| step_jobs(g.r, key).0)
        .map(|j| j.series.interval_ms)
        .next()
        .unwrap_or(1000.0);
    let y_label = if (interval - 1000.0).abs() < 1e-9 {
        "IOPS, each second".to_string()
    } else {
        format!("IOPS, each {} ms", fmt_value(interval))
    };
    out.push_str(&scatter_chart(&ScatterChart {
        title: format!("{}: IOPS over the whole run", key.step),
        subtitle: String::new(),
        x_label: "seconds".into(),
        y_label: y_label.clone(),
        series: series.clone(),
        last_seconds: None,
    }));
    out.push('\n');
    if let Some(w) = window {
        out.push_str(&scatter_chart(&ScatterChart {
            title: format!("{}: IOPS over the last {} s", key.step, fmt_num(w)),
            subtitle: String::new(),
            x_label: "seconds".into(),
            y_label,
            series,
            last_seconds: Some(w),
        }));
        out.push('\n');
    }
}

/// A heatmap per result of two swept keys (rows: the outer key, columns: the inner one), and
/// all results' lines over the inner key.
fn heatmap_charts(out: &mut String, group: &[Run], key: &StepKey) {
    let first = group.iter().flat_map(|g| step_jobs(g.r, key).0).next();
    let keys: Vec<String> = first
        .and_then(|j| j.step.as_ref())
        .map(|s| s.sweep.iter().map(|v| v.key.clone()).collect())
        .unwrap_or_default();
    let [row_key, col_key] = keys.as_slice() else {
        // Not a two-way sweep: lines over its one key, or bars.
        match keys.first() {
            Some(k) => lines_chart(out, group, key, k),
            None => bars_chart(out, group, std::slice::from_ref(key)),
        }
        return;
    };
    let tracking = group
        .iter()
        .find_map(|g| steady(g.r, &key.step))
        .map(|s| s.tracking.as_str());
    for g in group {
        let (jobs, _) = step_jobs(g.r, key);
        let figure = Figure::for_step(&jobs, tracking);
        // A step looped to steady state shows each cell as the mean over its window's rounds.
        let (in_window, span) = window_rounds(g.r, key);
        let mut rows: Vec<f64> = Vec::new();
        let mut cols: Vec<f64> = Vec::new();
        for j in &jobs {
            let (rv, cv) = (key_value(j, row_key), key_value(j, col_key));
            if !rows.contains(&rv) {
                rows.push(rv);
            }
            if !cols.contains(&cv) {
                cols.push(cv);
            }
        }
        let values = rows
            .iter()
            .map(|rv| {
                cols.iter()
                    .map(|cv| {
                        let cell: Vec<f64> = in_window
                            .iter()
                            .filter(|j| {
                                key_value(j, row_key) == *rv && key_value(j, col_key) == *cv
                            })
                            .map(|j| figure.of(j))
                            .collect();
                        (!cell.is_empty()).then(|| cell.iter().sum::<f64>() / cell.len() as f64)
                    })
                    .collect()
            })
            .collect();
        let mut subtitle = String::new();
        if group.len() > 1 {
            subtitle.push_str(g.label);
        }
        if let Some(words) = window_words(span) {
            if !subtitle.is_empty() {
                subtitle.push_str(" · ");
            }
            subtitle.push_str(&words);
        }
        let label = |k: &str, v: f64| match k {
            "block_size" => fmt_bytes(v),
            _ => fmt_num(v),
        };
        out.push_str(&heatmap(&Heatmap {
            title: format!("{}: {}", key.step, figure.axis()),
            subtitle,
            row_label: key_axis(row_key).2.to_string(),
            col_label: key_axis(col_key).2.to_string(),
            rows: rows.iter().map(|v| label(row_key, *v)).collect(),
            cols: cols.iter().map(|v| label(col_key, *v)).collect(),
            values,
            unit: figure.unit().to_string(),
        }));
        out.push('\n');
    }
    lines_chart(out, group, key, col_key);
}

/// The steady-state convergence chart of a step; a sentence where no round of its tracked job
/// finished (stopped in round 1, or the job skipped), which an empty frame would not say.
fn convergence(ss: &SteadyStateReport, several: bool, label: &str) -> String {
    if ss.rounds == 0 {
        let whose = if several {
            format!(", {label}")
        } else {
            String::new()
        };
        return format!(
            "<p class=\"note\">Steady state of {} ({}){}: {}</p>",
            esc(&ss.step),
            esc(&ss.tracking),
            esc(&whose),
            crate::terminal::NOT_JUDGED
        );
    }
    let verdict = format!(
        "{} after {} of at most {} rounds: range {} (limit {}), slope excursion {} (limit {})",
        if ss.attained {
            "steady state ATTAINED"
        } else {
            "steady state NOT attained"
        },
        ss.rounds,
        ss.max_rounds,
        fmt_value(ss.range),
        fmt_value(ss.range_limit),
        fmt_value(ss.slope_excursion),
        fmt_value(ss.slope_limit)
    );
    convergence_chart(&Convergence {
        title: if several {
            format!("Steady state of {} ({}), {label}", ss.step, ss.tracking)
        } else {
            format!("Steady state of {} ({})", ss.step, ss.tracking)
        },
        subtitle: verdict,
        y_label: ss.tracking.clone(),
        rounds: ss.round_values.clone(),
        window: ss.window as usize,
        window_mean: ss.window_mean,
        slope: ss.slope,
        intercept: ss.intercept,
    })
}

/// Score bars (a chart per unit, a bar per result) and the scores' table.
fn scores(out: &mut String, group: &[Run]) {
    let mut names: Vec<(String, String)> = Vec::new(); // (unit, name)
    for g in group {
        for s in g.r.suite.iter().flat_map(|s| &s.scores) {
            let k = (s.unit.clone(), s.name.clone());
            if !names.contains(&k) {
                names.push(k);
            }
        }
    }
    if names.is_empty() {
        return;
    }
    out.push_str("<section class=\"step\">\n<h3>Scores</h3>\n");
    let mut units: Vec<&str> = Vec::new();
    for (u, _) in &names {
        if !units.contains(&u.as_str()) {
            units.push(u);
        }
    }
    for unit in units {
        let cats: Vec<&str> = names
            .iter()
            .filter(|(u, _)| u == unit)
            .map(|(_, n)| n.as_str())
            .collect();
        let series = group
            .iter()
            .map(|g| BarSeries {
                label: g.label.to_string(),
                values: cats
                    .iter()
                    .map(|n| {
                        g.r.suite
                            .iter()
                            .flat_map(|s| &s.scores)
                            .find(|s| s.name == *n && s.unit == unit)
                            .map(|s| s.value)
                    })
                    .collect(),
            })
            .collect();
        out.push_str(&bar_chart(&BarChart {
            title: format!(
                "Scores in {}",
                if unit.is_empty() { "points" } else { unit }
            ),
            subtitle: String::new(),
            value_label: unit.to_string(),
            categories: cats.iter().map(|s| s.to_string()).collect(),
            series,
            ceilings: Vec::new(),
        }));
        out.push('\n');
    }
    out.push_str("<table class=\"scores\"><tr>");
    if group.len() > 1 {
        out.push_str("<th class=\"l\">result</th>");
    }
    out.push_str("<th class=\"l\">score</th><th>value</th><th class=\"l\">unit</th><th class=\"l\">rule</th></tr>\n");
    for g in group {
        for s in g.r.suite.iter().flat_map(|s| &s.scores) {
            out.push_str("<tr>");
            if group.len() > 1 {
                let _ = write!(out, "<td class=\"l\">{}</td>", esc(g.label));
            }
            let sd = s
                .stddev
                .map(|d| format!(" ± {}", fmt_value(d)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                esc(&s.name),
                esc(&format!("{}{sd}", fmt_value(s.value))),
                esc(&s.unit),
                esc(&s.rule)
            );
        }
    }
    out.push_str("</table>\n</section>\n");
}
