//! Scores from a suite's job results: pure functions, one per rule (see [`crate::spec::ScoreSpec`]).

use crate::plan::matches;
use crate::spec::ScoreSpec;
use iolab_core::result::{JobResult, Score};

/// The unit a metric is in.
pub fn unit_of(metric: &str) -> &'static str {
    if metric.ends_with("_iops") {
        "IOPS"
    } else if metric.ends_with("_mb_per_s") {
        "MB/s"
    } else if metric.ends_with("_us") {
        "µs"
    } else {
        ""
    }
}

fn step_jobs<'a>(jobs: &'a [JobResult], step: &'a str) -> impl Iterator<Item = &'a JobResult> + 'a {
    jobs.iter()
        .filter(move |j| j.step.as_ref().is_some_and(|s| s.step == step))
}

/// The jobs of a step that a score reads: of a step looped in rounds, only the last round.
fn scored_jobs<'a>(
    jobs: &'a [JobResult],
    step: &'a str,
    filter: &[crate::spec::SweepSpec],
) -> Vec<&'a JobResult> {
    let last_round = step_jobs(jobs, step)
        .filter_map(|j| j.step.as_ref()?.round)
        .max();
    step_jobs(jobs, step)
        .filter(|j| {
            j.step
                .as_ref()
                .is_some_and(|s| s.round == last_round && matches(&s.sweep, filter))
        })
        .collect()
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Mean and population standard deviation of a job's per-second series over its last
/// `seconds` (bins that end inside that window).
pub fn last_seconds(job: &JobResult, metric: &str, seconds: f64) -> Option<(f64, f64)> {
    let s = &job.series;
    let end = *s.t_end_s.last()?;
    let pick = |i: usize| -> f64 {
        match metric {
            "read_iops" => s.read_iops[i],
            "write_iops" => s.write_iops[i],
            "total_iops" => s.read_iops[i] + s.write_iops[i],
            "read_mb_per_s" => s.read_bytes_per_s[i] / 1e6,
            "write_mb_per_s" => s.write_bytes_per_s[i] / 1e6,
            _ => (s.read_bytes_per_s[i] + s.write_bytes_per_s[i]) / 1e6,
        }
    };
    let values: Vec<f64> = (0..s.t_end_s.len())
        .filter(|&i| s.t_end_s[i] > end - seconds + 1e-9)
        .map(pick)
        .collect();
    let m = mean(&values)?;
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / values.len() as f64;
    Some((m, var.sqrt()))
}

/// Computes one score; `None` when the steps it reads did not run (an incomplete suite).
pub fn compute(spec: &ScoreSpec, jobs: &[JobResult], scale: f64) -> Option<Score> {
    let metric = spec.metric.as_deref().unwrap_or("");
    let step = spec.step.as_deref().unwrap_or("");
    let mut stddev = None;
    let (value, unit, rule) = match spec.rule.as_str() {
        "mean" => {
            let vals: Vec<f64> = scored_jobs(jobs, step, &spec.filter)
                .iter()
                .filter_map(|j| j.metric(metric))
                .collect();
            (
                mean(&vals)?,
                unit_of(metric),
                format!("mean of {metric} over {} job(s) of '{step}'", vals.len()),
            )
        }
        "last_seconds" => {
            let secs = spec.seconds.unwrap_or(0.0) * scale;
            let job = *scored_jobs(jobs, step, &[]).last()?;
            let (m, sd) = last_seconds(job, metric, secs)?;
            stddev = Some(sd);
            (m, unit_of(metric), format!("mean and standard deviation of per-second {metric} over the last {secs:.0} s of '{step}'"))
        }
        "weighted" => {
            let mut total = 0.0;
            let mut words = Vec::new();
            for t in &spec.terms {
                let vals: Vec<f64> = scored_jobs(jobs, &t.step, &t.filter)
                    .iter()
                    .filter_map(|j| j.metric(&t.metric))
                    .collect();
                total += t.weight * mean(&vals)?;
                words.push(format!("{}·{}({})", t.weight, t.metric, t.step));
            }
            (total, "points", words.join(" + "))
        }
        "rating" => {
            let js = scored_jobs(jobs, step, &spec.filter);
            if js.is_empty() {
                return None;
            }
            let sum = js
                .iter()
                .map(|j| j.metric(metric).unwrap_or(0.0) / j.job.queue_depth.max(1) as f64)
                .sum();
            (
                sum,
                "points",
                format!(
                    "Σ {metric} / queue depth over {} job(s) of '{step}'",
                    js.len()
                ),
            )
        }
        _ => return None,
    };
    Some(Score {
        name: spec.name.clone(),
        value,
        unit: spec.unit.clone().unwrap_or_else(|| unit.to_string()),
        stddev,
        rule,
    })
}
