//! Scores from a suite's job results: pure functions, one per rule (see [`crate::spec::ScoreSpec`]).

use crate::plan::matches;
use crate::spec::{ScoreSpec, SuiteSpec, SweepSpec};
use iolab_core::result::{JobResult, Score, SteadyStateReport};
use iolab_core::window::{is_maximum, points, Point, Window};

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

/// The sweep points of `step` that `filter` picks, in run order, and the window read when the
/// step loops in rounds (its steady-state window: the last `window` rounds run).
fn scored_points<'a>(
    suite: &SuiteSpec,
    jobs: &'a [JobResult],
    step: &'a str,
    filter: &[SweepSpec],
) -> (Vec<Point<'a>>, Option<Window>) {
    let size = suite
        .steps()
        .find(|(_, s)| s.name == step)
        .and_then(|(_, s)| s.steady_state.as_ref())
        .map_or(1, |ss| ss.window);
    let window = Window::of(step_jobs(jobs, step), size);
    let picked = step_jobs(jobs, step)
        .filter(|j| j.step.as_ref().is_some_and(|s| matches(&s.sweep, filter)));
    (points(picked, window), window)
}

/// How a score over `points` read a looped step's rounds, for its rule text.
fn window_words(window: Option<Window>, metric: &str) -> String {
    match window {
        Some(w) if w.first < w.last => format!(
            ", each the {} of {} (the steady-state window)",
            if is_maximum(metric) {
                "largest"
            } else {
                "mean"
            },
            w.words()
        ),
        Some(w) => format!(", {}", w.words()),
        None => String::new(),
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Mean and population standard deviation of a job's per-second series over its last
/// `seconds`, each bin weighted by how much of it lies in that window (a run's short last
/// bin counts for what it lasted).
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
    let from = end - seconds;
    let weighted: Vec<(f64, f64)> = (0..s.t_end_s.len())
        .map(|i| {
            let start = if i == 0 { 0.0 } else { s.t_end_s[i - 1] };
            (s.t_end_s[i].min(end) - start.max(from), pick(i))
        })
        .filter(|&(w, _)| w > 1e-9)
        .collect();
    let total: f64 = weighted.iter().map(|(w, _)| w).sum();
    if total <= 0.0 {
        return None;
    }
    let m = weighted.iter().map(|(w, v)| w * v).sum::<f64>() / total;
    let var = weighted
        .iter()
        .map(|(w, v)| w * (v - m) * (v - m))
        .sum::<f64>()
        / total;
    Some((m, var.sqrt()))
}

/// What a score says when a run (stopped early) has fewer of the points its filter names
/// than the filter allows: AnandTech's "mean of QD1, 2 and 4" over QD1 and 2 is not that.
fn points_missing(found: usize, filter: &[SweepSpec]) -> Option<String> {
    let wanted: usize = filter.iter().map(|f| f.values.len()).product();
    (!filter.is_empty() && found < wanted).then(|| format!("from {found} of {wanted} points"))
}

/// Why a score of a suite that ran to the end is not given: the steps it reads measured
/// nothing it could be computed from.
pub fn not_given(spec: &ScoreSpec) -> String {
    let steps: Vec<String> = spec
        .step
        .iter()
        .chain(spec.terms.iter().map(|t| &t.step))
        .map(|s| format!("'{s}'"))
        .collect();
    format!(
        "score '{}' not given: {} measured nothing it is computed from (a step too short for \
         its first I/O to complete measures nothing: a higher --scale gives each step more time)",
        spec.name,
        steps.join(", ")
    )
}

/// Computes one score of `suite`; `None` when the steps it reads did not run (an incomplete
/// suite). Of a step looped to steady state, each sweep point counts with its mean over the
/// window's rounds (its largest, for a maximum).
pub fn compute(
    suite: &SuiteSpec,
    spec: &ScoreSpec,
    jobs: &[JobResult],
    scale: f64,
) -> Option<Score> {
    compute_with(suite, spec, jobs, scale, &[])
}

/// [`compute`], knowing the steady-state verdicts of the run's looped steps: a score reading a
/// step that never settled says so (the PTS then reports its last rounds, not a steady state).
pub fn compute_with(
    suite: &SuiteSpec,
    spec: &ScoreSpec,
    jobs: &[JobResult],
    scale: f64,
    steady: &[SteadyStateReport],
) -> Option<Score> {
    let mut work = ScoreWork {
        suite,
        spec,
        jobs,
        metric: spec.metric.as_deref().unwrap_or(""),
        step: spec.step.as_deref().unwrap_or(""),
        stddev: None,
        notes: Vec::new(),
        used: Vec::new(),
    };
    work.note_unsteady_steps(steady);
    if spec.rule == "last_seconds" && scale != 1.0 {
        // A scaled run's window is not the one the score's name gives (AnandTech's "last 400 s").
        work.notes.push(format!(
            "scaled run: last {:.0} s",
            spec.seconds.unwrap_or(0.0) * scale
        ));
    }
    let (value, unit, rule) = match spec.rule.as_str() {
        "mean" => work.mean()?,
        "last_seconds" => work.last_seconds(spec.seconds.unwrap_or(0.0) * scale)?,
        "weighted" => work.weighted()?,
        "rating" => work.rating()?,
        _ => return None,
    };
    work.note_unfinished_jobs();
    let name = if work.notes.is_empty() {
        spec.name.clone()
    } else {
        format!("{} ({})", spec.name, work.notes.join("; "))
    };
    Some(Score {
        name,
        value,
        unit: spec.unit.clone().unwrap_or_else(|| unit.to_string()),
        stddev: work.stddev,
        rule,
    })
}

/// One score being computed: what it reads, and what it learns on the way (the notes its name
/// carries, the jobs it read, a standard deviation). One method per rule, each giving the
/// value, its unit and the rule in words.
struct ScoreWork<'a> {
    suite: &'a SuiteSpec,
    spec: &'a ScoreSpec,
    jobs: &'a [JobResult],
    /// The score's metric (empty for a weighted score, whose terms name theirs).
    metric: &'a str,
    /// The score's step (empty for a weighted score).
    step: &'a str,
    stddev: Option<f64>,
    notes: Vec<String>,
    /// Every job the score reads, to say when one of them did not finish.
    used: Vec<&'a JobResult>,
}

impl<'a> ScoreWork<'a> {
    /// Notes each step the score reads whose steady state was not attained.
    fn note_unsteady_steps(&mut self, steady: &[SteadyStateReport]) {
        let read_steps: Vec<&str> = self
            .spec
            .step
            .iter()
            .map(String::as_str)
            .chain(self.spec.terms.iter().map(|t| t.step.as_str()))
            .collect();
        for ss in steady.iter().filter(|ss| !ss.attained) {
            if read_steps.contains(&ss.step.as_str()) {
                self.notes
                    .push(format!("steady state of '{}' not attained", ss.step));
            }
        }
    }

    /// The mean of the metric over the step's jobs that pass the filter.
    fn mean(&mut self) -> Option<(f64, &'static str, String)> {
        let (metric, step) = (self.metric, self.step);
        let (points, window) = scored_points(self.suite, self.jobs, step, &self.spec.filter);
        self.used
            .extend(points.iter().flat_map(|p| p.rounds.iter().copied()));
        self.notes
            .extend(points_missing(points.len(), &self.spec.filter));
        let vals: Vec<f64> = points.iter().filter_map(|p| p.value(metric)).collect();
        Some((
            mean(&vals)?,
            unit_of(metric),
            format!(
                "mean of {metric} over {} job(s) of '{step}'{}",
                vals.len(),
                window_words(window, metric)
            ),
        ))
    }

    /// The mean and standard deviation of the per-second metric over the last `secs` seconds
    /// of the step's last job.
    fn last_seconds(&mut self, secs: f64) -> Option<(f64, &'static str, String)> {
        let (metric, step) = (self.metric, self.step);
        let (points, _) = scored_points(self.suite, self.jobs, step, &[]);
        let job = points.last()?.job;
        self.used.push(job);
        let (m, sd) = last_seconds(job, metric, secs)?;
        self.stddev = Some(sd);
        // The suite's checks refuse a window longer than the step's duration; a job that
        // stopped early (a byte limit, a device error) still measured less than it.
        let measured = job.series.t_end_s.last().copied().unwrap_or(0.0);
        if measured + 1e-9 < secs {
            self.notes
                .push(format!("the job measured only {measured:.0} s"));
        }
        // AnandTech scores consistency by the average and by average/σ (its consistency charts).
        let ratio = if sd > 0.0 {
            format!("; average/σ {:.1}", m / sd)
        } else {
            String::new()
        };
        Some((m, unit_of(metric), format!("mean and standard deviation of per-second {metric} over the last {secs:.0} s of '{step}'{ratio}")))
    }

    /// The weighted sum of each term's mean.
    fn weighted(&mut self) -> Option<(f64, &'static str, String)> {
        let mut total = 0.0;
        let mut words = Vec::new();
        for t in &self.spec.terms {
            let (points, window) = scored_points(self.suite, self.jobs, &t.step, &t.filter);
            self.used
                .extend(points.iter().flat_map(|p| p.rounds.iter().copied()));
            self.notes.extend(points_missing(points.len(), &t.filter));
            let vals: Vec<f64> = points.iter().filter_map(|p| p.value(&t.metric)).collect();
            total += t.weight * mean(&vals)?;
            words.push(format!(
                "{}·{}({}{})",
                t.weight,
                t.metric,
                t.step,
                window_words(window, &t.metric)
            ));
        }
        Some((total, "points", words.join(" + ")))
    }

    /// The sum of the metric divided by each job's queue depth.
    fn rating(&mut self) -> Option<(f64, &'static str, String)> {
        let (metric, step) = (self.metric, self.step);
        let (points, window) = scored_points(self.suite, self.jobs, step, &self.spec.filter);
        if points.is_empty() {
            return None;
        }
        self.used
            .extend(points.iter().flat_map(|p| p.rounds.iter().copied()));
        self.notes
            .extend(points_missing(points.len(), &self.spec.filter));
        let sum = points
            .iter()
            .map(|p| p.value(metric).unwrap_or(0.0) / p.job.job.queue_depth.max(1) as f64)
            .sum();
        Some((
            sum,
            "points",
            format!(
                "Σ {metric} / queue depth over {} job(s) of '{step}'{}",
                points.len(),
                window_words(window, metric)
            ),
        ))
    }

    /// Notes the jobs read that did not finish.
    fn note_unfinished_jobs(&mut self) {
        let mut unfinished: Vec<&str> = self
            .used
            .iter()
            .filter(|j| !j.complete)
            .map(|j| j.name.as_str())
            .collect();
        unfinished.dedup();
        if !unfinished.is_empty() {
            self.notes
                .push(format!("from unfinished job(s): {}", unfinished.join(", ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SuiteSpec;
    use iolab_core::job::JobSpec;
    use iolab_core::result::{DirectionResult, JobResult, StepInfo, SweepValue};

    /// A job result of `step` at sweep point `qd` with the given MB/s and IOPS.
    fn job(step: &str, qd: u32, read_mb: f64, write_mb: f64, iops: f64) -> JobResult {
        let spec = JobSpec {
            queue_depth: Some(qd),
            ..JobSpec::default()
        };
        JobResult {
            name: format!("{step} QD{qd}"),
            measured_ns: 1_000_000_000,
            read: DirectionResult {
                bw_mb_per_s: read_mb,
                iops,
                ..DirectionResult::default()
            },
            write: DirectionResult {
                bw_mb_per_s: write_mb,
                ..DirectionResult::default()
            },
            step: Some(StepInfo {
                step: step.into(),
                sweep: vec![SweepValue {
                    key: "queue_depth".into(),
                    value: qd as f64,
                }],
                ..StepInfo::default()
            }),
            ..JobResult::unmeasured(spec.validate().unwrap())
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
            compute(&suite, spec, &jobs, 1.0).unwrap().value
        };
        // By hand: 0.1·500 + 0.15·400 + 2·30 + 80 + 1.5·300 + 250 = 50 + 60 + 60 + 80 + 450 + 250.
        assert!((score("Total") - 950.0).abs() < 1e-9);
        assert!((score("Read") - (50.0 + 30.0 + 300.0)).abs() < 1e-9);
        assert!((score("Write") - (40.0 + 80.0 + 250.0)).abs() < 1e-9);
        // A job that failed part-way still gives its figure, and the scores it enters say so.
        let mut jobs = jobs;
        jobs[4].complete = false;
        let name = |name: &str| {
            let spec = suite.scores.iter().find(|s| s.name == name).unwrap();
            compute(&suite, spec, &jobs, 1.0).unwrap().name
        };
        assert_eq!(
            name("Read"),
            "Read (from unfinished job(s): 4K-64Thrd read QD1)"
        );
        assert_eq!(name("Write"), "Write");
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
        assert!((compute(&suite, spec, &jobs, 1.0).unwrap().value - 395.0).abs() < 1e-9);
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
        assert!((compute(&suite, spec, &jobs, 1.0).unwrap().value - 70.0 / 3.0).abs() < 1e-9);
        // A run stopped before QD4: the mean of what ran, said to be short of the method's.
        let short = compute(&suite, spec, &jobs[..2], 1.0).unwrap();
        assert!((short.value - 15.0).abs() < 1e-9);
        assert!(
            short.name.ends_with("(from 2 of 3 points)"),
            "{}",
            short.name
        );
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
        // A last bin of half a second counts for half: the last 3 s of a 9.5 s run are half
        // of the 7th second (10), the 8th and 9th (20, 10) and the half 10th (20).
        let mut half = c.clone();
        half.series.t_end_s[9] = 9.5;
        let (m, _) = last_seconds(&half, "write_iops", 3.0).unwrap();
        assert!(
            (m - (0.5 * 10.0 + 20.0 + 10.0 + 0.5 * 20.0) / 3.0).abs() < 1e-9,
            "{m}"
        );
        // The suite's 400 s, scaled by 0.01, is the last 4 s.
        let spec = suite
            .scores
            .iter()
            .find(|s| s.rule == "last_seconds")
            .unwrap();
        let s = compute(&suite, spec, &[c.clone()], 0.01).unwrap();
        assert_eq!(s.stddev, Some(5.0));
        assert!(s.rule.ends_with("; average/σ 3.0"), "{}", s.rule);
        // Its name says so: the suite's own name gives the unscaled window.
        assert!(s.name.ends_with("(scaled run: last 4 s)"), "{}", s.name);
        // Unscaled, a job that measured the whole window keeps the suite's name; one that
        // stopped short (10 s of a 400 s window) says so.
        let mut full = c.clone();
        full.series.t_end_s = (1..=10).map(|t| t as f64 * 50.0).collect();
        assert_eq!(compute(&suite, spec, &[full], 1.0).unwrap().name, spec.name);
        let short = compute(&suite, spec, &[c], 1.0).unwrap().name;
        assert!(short.ends_with("(the job measured only 10 s)"), "{short}");
    }

    /// Round `round` of a SNIA PTS step's point (`read_pct`, `block_size`), with write IOPS and
    /// the largest write latency in µs.
    fn round_job(
        step: &str,
        mix: f64,
        block: f64,
        round: u32,
        iops: f64,
        max_us: u64,
    ) -> JobResult {
        let mut j = job(step, 1, 0.0, 0.0, 0.0);
        j.write.iops = iops;
        j.write.ios = 1; // latencies are of I/Os that completed
        j.write.lat_ns.max = max_us * 1000;
        j.step = Some(StepInfo {
            step: step.into(),
            sweep: vec![
                SweepValue {
                    key: "read_pct".into(),
                    value: mix,
                },
                SweepValue {
                    key: "block_size".into(),
                    value: block,
                },
            ],
            round: Some(round),
            ..StepInfo::default()
        });
        j
    }

    #[test]
    fn a_looped_step_scores_the_mean_over_its_steady_state_window() {
        let suite = crate::load("snia-pts").unwrap();
        let score = |name: &str, jobs: &[JobResult]| {
            let spec = suite.scores.iter().find(|s| s.name == name).unwrap();
            compute(&suite, spec, jobs, 1.0).unwrap()
        };
        // Seven rounds of 4K random writes (and a 8K point the filter leaves out): the window
        // is rounds 3–7, whose mean is 2000; the last round alone says 2100.
        let iops = [5000.0, 3000.0, 1900.0, 2000.0, 2050.0, 1950.0, 2100.0];
        let mut jobs = Vec::new();
        for (i, &v) in iops.iter().enumerate() {
            jobs.push(round_job("IOPS matrix", 0.0, 4096.0, i as u32 + 1, v, 0));
            jobs.push(round_job("IOPS matrix", 0.0, 8192.0, i as u32 + 1, 9e9, 0));
        }
        let s = score("4K random write IOPS (steady state)", &jobs);
        assert!((s.value - 2000.0).abs() < 1e-9, "{}", s.value);
        assert!(
            s.rule.ends_with("over 1 job(s) of 'IOPS matrix', each the mean of rounds 3–7 (the steady-state window)"),
            "{}",
            s.rule
        );
        // A maximum is the largest over the window (round 4's 900 µs), not the last round's
        // and not a mean; round 1's 5000 µs is before the window.
        let lat = [5000, 100, 120, 900, 110, 100, 105];
        let jobs: Vec<JobResult> = lat
            .iter()
            .enumerate()
            .map(|(i, &us)| round_job("Latency QD1", 0.0, 4096.0, i as u32 + 1, 0.0, us))
            .collect();
        let s = score("4K write latency QD1, max", &jobs);
        assert!((s.value - 900.0).abs() < 1e-9, "{}", s.value);
        assert!(
            s.rule.contains("each the largest of rounds 3–7"),
            "{}",
            s.rule
        );
        // Fewer rounds than a window (a suite stopped early): all of them.
        let s = score(
            "4K random write IOPS (steady state)",
            &jobs_of_rounds(&iops[..2]),
        );
        assert!((s.value - 4000.0).abs() < 1e-9, "{}", s.value);
        assert!(s.rule.contains("rounds 1–2"), "{}", s.rule);
    }

    #[test]
    fn a_score_of_a_loop_that_never_settled_says_so() {
        // 25 rounds without a steady window: the PTS reports the last 5 rounds, but a score
        // named "(steady state)" read as if the drive had settled.
        let suite = crate::load("snia-pts").unwrap();
        let spec = suite
            .scores
            .iter()
            .find(|s| s.name == "4K random write IOPS (steady state)")
            .unwrap();
        let iops: Vec<f64> = (0..25).map(|i| [1000.0, 3000.0][i % 2]).collect();
        let jobs = jobs_of_rounds(&iops);
        let unsteady = iolab_core::steady::judge("IOPS matrix", "write_iops", &iops, 5, 25);
        assert!(!unsteady.attained);
        let s = compute_with(&suite, spec, &jobs, 1.0, &[unsteady]).unwrap();
        assert_eq!(
            s.name,
            "4K random write IOPS (steady state) (steady state of 'IOPS matrix' not attained)"
        );
        // Another step's loop, or one that settled, adds nothing.
        let mut other = iolab_core::steady::judge("Latency QD1", "write_iops", &iops, 5, 25);
        other.attained = false;
        let s = compute_with(&suite, spec, &jobs, 1.0, &[other]).unwrap();
        assert_eq!(s.name, spec.name);
    }

    fn jobs_of_rounds(iops: &[f64]) -> Vec<JobResult> {
        iops.iter()
            .enumerate()
            .map(|(i, &v)| round_job("IOPS matrix", 0.0, 4096.0, i as u32 + 1, v, 0))
            .collect()
    }
}
