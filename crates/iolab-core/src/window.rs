//! Which rounds of a suite step looped to steady state its figures are read from, and a sweep
//! point's value over them: one definition for the suite's scores and the reports' charts. As
//! SNIA's PTS reports each cell of its matrices: the average over the measurement window (the
//! last `window` rounds run), the largest for a maximum (the worst response time).

use crate::result::JobResult;

/// The rounds a looped step's figures are read from: the last `size` rounds run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First round read.
    pub first: u32,
    /// Last round read (the latest run).
    pub last: u32,
}

impl Window {
    /// The window of a step whose jobs (all its rounds) are `jobs`, `size` rounds wide; `None`
    /// for a step not looped in rounds.
    pub fn of<'a>(jobs: impl IntoIterator<Item = &'a JobResult>, size: u32) -> Option<Window> {
        let last = jobs
            .into_iter()
            .filter_map(|j| j.step.as_ref()?.round)
            .max()?;
        Some(Window {
            first: last.saturating_sub(size.max(1) - 1).max(1),
            last,
        })
    }

    /// Whether a job of `round` is read: one in the window of a looped step, or any job of a
    /// step not looped (no window, no round).
    pub fn reads(window: Option<Window>, round: Option<u32>) -> bool {
        match (window, round) {
            (Some(w), Some(r)) => (w.first..=w.last).contains(&r),
            (None, None) => true,
            _ => false,
        }
    }

    /// `round 5` or `rounds 3–5`.
    pub fn words(&self) -> String {
        if self.first == self.last {
            format!("round {}", self.first)
        } else {
            format!("rounds {}–{}", self.first, self.last)
        }
    }
}

/// Whether `metric` is a maximum (`read_lat_max_us`, `lat_max_us`), which a window takes the
/// largest of rather than averaging.
pub fn is_maximum(metric: &str) -> bool {
    metric.split('_').any(|word| word == "max")
}

/// A sweep point's value over the rounds read: the mean, or for a maximum the largest; `None`
/// without values.
pub fn over_rounds(values: impl IntoIterator<Item = f64>, maximum: bool) -> Option<f64> {
    let (mut n, mut sum, mut largest) = (0usize, 0.0, f64::NEG_INFINITY);
    for v in values {
        n += 1;
        sum += v;
        largest = largest.max(v);
    }
    (n > 0).then(|| if maximum { largest } else { sum / n as f64 })
}

/// One sweep point of a step as its figures read it.
#[derive(Debug)]
pub struct Point<'a> {
    /// Its job; of a looped step, the one of the latest round read.
    pub job: &'a JobResult,
    /// Its jobs in the rounds read (one, for a step not looped).
    pub rounds: Vec<&'a JobResult>,
}

impl Point<'_> {
    /// The point's `metric` over its rounds ([`over_rounds`]).
    pub fn value(&self, metric: &str) -> Option<f64> {
        over_rounds(
            self.rounds.iter().filter_map(|j| j.metric(metric)),
            is_maximum(metric),
        )
    }
}

/// The sweep points of a step's `jobs` whose rounds `window` reads, in run order.
pub fn points<'a>(
    jobs: impl IntoIterator<Item = &'a JobResult>,
    window: Option<Window>,
) -> Vec<Point<'a>> {
    let mut points: Vec<Point<'a>> = Vec::new();
    for j in jobs {
        let Some(info) = &j.step else { continue };
        if !Window::reads(window, info.round) {
            continue;
        }
        let same_point =
            |p: &&mut Point<'a>| p.job.step.as_ref().map(|s| &s.sweep) == Some(&info.sweep);
        match points.iter_mut().find(same_point) {
            Some(p) => {
                p.job = j;
                p.rounds.push(j);
            }
            None => points.push(Point {
                job: j,
                rounds: vec![j],
            }),
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_last_rounds_run() {
        assert_eq!(
            Window { first: 3, last: 7 }.words(),
            "rounds 3–7".to_string()
        );
        assert!(Window::reads(Some(Window { first: 3, last: 7 }), Some(3)));
        assert!(!Window::reads(Some(Window { first: 3, last: 7 }), Some(2)));
        assert!(!Window::reads(Some(Window { first: 3, last: 7 }), None));
        assert!(Window::reads(None, None));
        assert!(!Window::reads(None, Some(1)));
    }

    #[test]
    fn a_window_averages_except_a_maximum() {
        assert!(is_maximum("read_lat_max_us") && is_maximum("lat_max_us"));
        assert!(!is_maximum("total_iops") && !is_maximum("lat_p99_us"));
        assert_eq!(over_rounds([1.0, 2.0, 6.0], false), Some(3.0));
        assert_eq!(over_rounds([1.0, 7.0, 6.0], true), Some(7.0));
        assert_eq!(over_rounds([], false), None);
    }
}
