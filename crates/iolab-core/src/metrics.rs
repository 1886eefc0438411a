//! The figures a job result is split into for storing and comparing: their names, their order
//! and direction, and runs lined up side by side. Pure: the store only stores what this names,
//! and renderers only draw what [`align`] lines up.

use crate::result::JobResult;
use std::collections::HashMap;

/// One named figure of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// `read`, `write` or `total`.
    pub direction: String,
    /// Metric name (`read_iops`).
    pub name: String,
    /// Value in the unit its name says.
    pub value: f64,
}

/// Latency percentiles beyond [`JobResult::METRICS`], per direction, named in its style.
const DEEP_LATENCY: &[&str] = &["lat_p50_us", "lat_p99_9_us", "lat_p99_99_us"];

/// Every metric name the store writes, in the order tables show them: rates, then each
/// direction's latencies from the mean through the percentiles in rising order to the
/// maximum (`results compare` listed p99 before p50).
pub fn metric_order() -> Vec<String> {
    let mut names: Vec<String> = [
        "read_iops",
        "write_iops",
        "total_iops",
        "read_mb_per_s",
        "write_mb_per_s",
        "total_mb_per_s",
    ]
    .iter()
    .map(|m| m.to_string())
    .collect();
    for dir in ["read", "write"] {
        for m in [
            "lat_mean_us",
            "lat_p50_us",
            "lat_p99_us",
            "lat_p99_9_us",
            "lat_p99_99_us",
            "lat_max_us",
        ] {
            names.push(format!("{dir}_{m}"));
        }
    }
    names.push("lat_mean_us".into());
    // Any metric JobResult knows that the list above lacks still has a place.
    for m in JobResult::METRICS {
        if !names.iter().any(|n| n == m) {
            names.push(m.to_string());
        }
    }
    names
}

/// The direction a metric name belongs to.
pub fn direction_of(name: &str) -> &'static str {
    if name.starts_with("read_") {
        "read"
    } else if name.starts_with("write_") {
        "write"
    } else {
        "total"
    }
}

/// The metrics of one job: [`JobResult::metric`]'s names plus the deeper percentiles. A
/// direction with no I/Os gets no figures (a read job has no write latency, not a zero one);
/// a job with no I/Os at all gets none, its totals included: nothing was measured, and a
/// comparison showed `total_iops 0` (-100 %) beside its directions' "-".
pub fn job_metrics(j: &JobResult) -> Vec<Metric> {
    let has = |dir: &str| match dir {
        "read" => j.read.ios > 0,
        "write" => j.write.ios > 0,
        _ => j.read.ios + j.write.ios + j.trim.as_ref().map_or(0, |t| t.ios) > 0,
    };
    let mut out = Vec::new();
    for name in JobResult::METRICS {
        let dir = direction_of(name);
        if !has(dir) {
            continue;
        }
        if let Some(value) = j.metric(name) {
            out.push(Metric {
                direction: dir.into(),
                name: (*name).into(),
                value,
            });
        }
    }
    for (dir, d) in [("read", &j.read), ("write", &j.write)] {
        if d.ios == 0 {
            continue;
        }
        for (m, ns) in DEEP_LATENCY
            .iter()
            .zip([d.lat_ns.p50, d.lat_ns.p99_9, d.lat_ns.p99_99])
        {
            out.push(Metric {
                direction: dir.into(),
                name: format!("{dir}_{m}"),
                value: ns as f64 / 1e3,
            });
        }
    }
    out
}

/// One job of a run, as a comparison lines it up.
#[derive(Clone, Debug)]
pub struct StepFigures<'a> {
    /// The job's name.
    pub label: &'a str,
    /// Its steady-state round, if looped.
    pub round: Option<u32>,
    /// Its workload in words (access, block sizes, depth…), to tell when one name ran
    /// different work in different runs; `None` when not known.
    pub workload: Option<String>,
    /// Its metrics.
    pub metrics: &'a [Metric],
}

/// One run's jobs and scores (each score named with its unit).
#[derive(Clone, Debug, Default)]
pub struct RunFigures<'a> {
    /// Its jobs in run order.
    pub steps: Vec<StepFigures<'a>>,
    /// Its scores: `Name (unit)` and value.
    pub scores: Vec<(String, f64)>,
}

/// A job's metric (or a score) across runs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AlignedRow {
    /// Job label (with its round or occurrence when it repeats), or `score`.
    pub label: String,
    /// Metric name, or score name with its unit.
    pub metric: String,
    /// One value per run; `None` where the run lacks it.
    pub values: Vec<Option<f64>>,
}

/// Runs lined up.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Aligned {
    /// Each job's rows together, in first-seen order of jobs and [`metric_order`] within one.
    pub rows: Vec<AlignedRow>,
    /// Job labels that name different workloads in different runs, with each run's workload
    /// (`None` where it lacks the job).
    pub differing: Vec<(String, Vec<Option<String>>)>,
}

/// Lines runs up side by side: one row per job label and metric (and per score), one value per
/// run. Jobs are matched by name; a name that repeats within a run is told apart by its round
/// or its occurrence (`job #2`).
pub fn align(runs: &[RunFigures]) -> Aligned {
    let n = runs.len();
    let mut rows: Vec<AlignedRow> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    let mut workloads: Vec<(String, Vec<Option<String>>)> = Vec::new();
    let mut put = |rows: &mut Vec<AlignedRow>, label: String, metric: String, col: usize, v| {
        let at = *index
            .entry((label.clone(), metric.clone()))
            .or_insert_with(|| {
                rows.push(AlignedRow {
                    label,
                    metric,
                    values: vec![None; n],
                });
                rows.len() - 1
            });
        rows[at].values[col] = Some(v);
    };
    for (col, run) in runs.iter().enumerate() {
        let mut seen: HashMap<String, u32> = HashMap::new();
        for step in &run.steps {
            let mut label = match step.round {
                Some(r) => format!("{} (round {r})", step.label),
                None => step.label.to_string(),
            };
            let count = seen.entry(label.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                label = format!("{label} #{count}");
            }
            if let Some(w) = &step.workload {
                let at = match workloads.iter().position(|(l, _)| *l == label) {
                    Some(at) => at,
                    None => {
                        workloads.push((label.clone(), vec![None; n]));
                        workloads.len() - 1
                    }
                };
                workloads[at].1[col] = Some(w.clone());
            }
            for m in step.metrics {
                put(&mut rows, label.clone(), m.name.clone(), col, m.value);
            }
        }
        for (name, value) in &run.scores {
            put(&mut rows, "score".into(), name.clone(), col, *value);
        }
    }
    // Keep each job's rows together, in metric order, even when a later run brought metrics
    // the first lacked.
    let order = metric_order();
    let rank = |m: &str| order.iter().position(|o| o == m).unwrap_or(order.len());
    let mut first_seen: Vec<&str> = Vec::new();
    for r in &rows {
        if !first_seen.contains(&r.label.as_str()) {
            first_seen.push(&r.label);
        }
    }
    let group = |label: &str| first_seen.iter().position(|l| *l == label);
    let mut keyed: Vec<_> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (group(&r.label), rank(&r.metric), i))
        .collect();
    keyed.sort();
    let rows = keyed.into_iter().map(|(_, _, i)| rows[i].clone()).collect();
    let differing = workloads
        .into_iter()
        .filter(|(_, w)| {
            let mut each = w.iter().flatten();
            let first = each.next();
            each.any(|x| Some(x) != first)
        })
        .collect();
    Aligned { rows, differing }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, value: f64) -> Metric {
        Metric {
            direction: direction_of(name).into(),
            name: name.into(),
            value,
        }
    }

    #[test]
    fn runs_line_up_by_job_and_metric_in_metric_order() {
        let a = [m("read_lat_p99_us", 90.0), m("read_iops", 100.0)];
        let b = [m("read_iops", 110.0), m("read_lat_mean_us", 50.0)];
        let runs = [
            RunFigures {
                steps: vec![
                    StepFigures {
                        label: "j",
                        round: None,
                        workload: Some("4K QD1".into()),
                        metrics: &a,
                    },
                    StepFigures {
                        label: "j",
                        round: None,
                        workload: None,
                        metrics: &a,
                    },
                ],
                scores: vec![("Total (MB/s)".into(), 5.0)],
            },
            RunFigures {
                steps: vec![StepFigures {
                    label: "j",
                    round: None,
                    workload: Some("4K QD32".into()),
                    metrics: &b,
                }],
                scores: vec![],
            },
        ];
        let out = align(&runs);
        let rows: Vec<(&str, &str, Vec<Option<f64>>)> = out
            .rows
            .iter()
            .map(|r| (r.label.as_str(), r.metric.as_str(), r.values.clone()))
            .collect();
        assert_eq!(
            rows,
            [
                ("j", "read_iops", vec![Some(100.0), Some(110.0)]),
                ("j", "read_lat_mean_us", vec![None, Some(50.0)]),
                ("j", "read_lat_p99_us", vec![Some(90.0), None]),
                ("j #2", "read_iops", vec![Some(100.0), None]),
                ("j #2", "read_lat_p99_us", vec![Some(90.0), None]),
                ("score", "Total (MB/s)", vec![Some(5.0), None]),
            ]
        );
        assert_eq!(
            out.differing,
            [(
                "j".to_string(),
                vec![Some("4K QD1".to_string()), Some("4K QD32".to_string())]
            )]
        );
    }
}
