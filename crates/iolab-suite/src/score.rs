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
    // A scaled run's window is not the one the score's name gives (AnandTech's "last 400 s").
    let name = match spec.seconds {
        Some(secs) if spec.rule == "last_seconds" && scale != 1.0 => {
            format!("{} (scaled run: last {:.0} s)", spec.name, secs * scale)
        }
        _ => spec.name.clone(),
    };
    Some(Score {
        name,
        value,
        unit: spec.unit.clone().unwrap_or_else(|| unit.to_string()),
        stddev,
        rule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SuiteSpec;
    use iolab_core::job::JobSpec;
    use iolab_core::result::{DirectionResult, JobResult, SeriesResult, StepInfo, SweepValue};

    /// A job result of `step` at sweep point `qd` with the given MB/s and IOPS.
    fn job(step: &str, qd: u32, read_mb: f64, write_mb: f64, iops: f64) -> JobResult {
        let spec = JobSpec {
            queue_depth: Some(qd),
            ..JobSpec::default()
        };
        JobResult {
            name: format!("{step} QD{qd}"),
            job: spec.validate().unwrap(),
            complete: true,
            stop_reason: None,
            measured_ns: 1_000_000_000,
            ramp_ns: 0,
            read: DirectionResult {
                bw_mb_per_s: read_mb,
                iops,
                ..DirectionResult::default()
            },
            write: DirectionResult {
                bw_mb_per_s: write_mb,
                ..DirectionResult::default()
            },
            series: SeriesResult::default(),
            cpu: Default::default(),
            errors: Vec::new(),
            latency_from_intended_start: false,
            repeats: Vec::new(),
            step: Some(StepInfo {
                step: step.into(),
                sweep: vec![SweepValue {
                    key: "queue_depth".into(),
                    value: qd as f64,
                }],
                ..StepInfo::default()
            }),
        }
    }

    #[test]
    fn as_ssd_total_follows_toms_formula() {
        let suite = crate::load("asssd").unwrap();
        let jobs = vec![
            job("Seq read", 1, 500.0, 0.0, 0.0),
            job("Seq write", 1, 0.0, 400.0, 0.0),
            job("4K read", 1, 30.0, 0.0, 0.0),
            job("4K write", 1, 0.0, 80.0, 0.0),
            job("4K-64Thrd read", 1, 300.0, 0.0, 0.0),
            job("4K-64Thrd write", 1, 0.0, 250.0, 0.0),
        ];
        let score = |name: &str| {
            let spec = suite.scores.iter().find(|s| s.name == name).unwrap();
            compute(spec, &jobs, 1.0).unwrap().value
        };
        // By hand: 0.1·500 + 0.15·400 + 2·30 + 80 + 1.5·300 + 250 = 50 + 60 + 60 + 80 + 450 + 250.
        assert!((score("Total") - 950.0).abs() < 1e-9);
        assert!((score("Read") - (50.0 + 30.0 + 300.0)).abs() < 1e-9);
        assert!((score("Write") - (40.0 + 80.0 + 250.0)).abs() < 1e-9);
    }

    #[test]
    fn xbit_rating_sums_iops_over_queue_depth() {
        let suite = crate::load("xbit2011").unwrap();
        let spec = suite
            .scores
            .iter()
            .find(|s| s.name == "Workstation rating")
            .unwrap();
        let jobs: Vec<JobResult> = [
            (1, 100.0),
            (2, 180.0),
            (4, 320.0),
            (8, 480.0),
            (16, 640.0),
            (32, 800.0),
        ]
        .iter()
        .map(|&(qd, iops)| job("Workstation", qd, 0.0, 0.0, iops))
        .collect();
        // 100/1 + 180/2 + 320/4 + 480/8 + 640/16 + 800/32 = 100 + 90 + 80 + 60 + 40 + 25.
        assert!((compute(spec, &jobs, 1.0).unwrap().value - 395.0).abs() < 1e-9);
    }

    #[test]
    fn mean_respects_the_filter_and_last_seconds_the_window() {
        let suite: SuiteSpec = crate::load("anandtech2015").unwrap();
        let spec = suite
            .scores
            .iter()
            .find(|s| s.name.starts_with("Random read"))
            .unwrap();
        let jobs: Vec<JobResult> = [1, 2, 4, 8]
            .iter()
            .map(|&qd| job("Random read 4K", qd, qd as f64 * 10.0, 0.0, 0.0))
            .collect();
        assert!((compute(spec, &jobs, 1.0).unwrap().value - 70.0 / 3.0).abs() < 1e-9);
        let mut c = job("Performance consistency", 32, 0.0, 0.0, 0.0);
        c.series.t_end_s = (1..=10).map(|t| t as f64).collect();
        c.series.write_iops = vec![90.0, 90.0, 90.0, 90.0, 90.0, 90.0, 10.0, 20.0, 10.0, 20.0];
        c.series.read_iops = vec![0.0; 10];
        c.series.read_bytes_per_s = vec![0.0; 10];
        c.series.write_bytes_per_s = vec![0.0; 10];
        let (m, sd) = last_seconds(&c, "write_iops", 4.0).unwrap();
        assert!(
            (m - 15.0).abs() < 1e-9 && (sd - 5.0).abs() < 1e-9,
            "{m} {sd}"
        );
        // The suite's 400 s, scaled by 0.01, is the last 4 s.
        let spec = suite
            .scores
            .iter()
            .find(|s| s.rule == "last_seconds")
            .unwrap();
        let s = compute(spec, &[c.clone()], 0.01).unwrap();
        assert_eq!(s.stddev, Some(5.0));
        // Its name says so: the suite's own name gives the unscaled window.
        assert!(s.name.ends_with("(scaled run: last 4 s)"), "{}", s.name);
        assert_eq!(compute(spec, &[c], 1.0).unwrap().name, spec.name);
    }
}
