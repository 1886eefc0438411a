//! The queue-depth search of fio's latency-target mode (`latency_target`, `latency_window`,
//! `latency_percentile`): the job starts at one I/O in flight and, window by window, doubles
//! the depth while the window's I/Os meet the target (the percentile of them at or under it),
//! bisects between the last depth that met it and the first that did not once one fails, and
//! when the depth settles measures one last window at it: the job's figures are that window's.
//! Pure: the driver counts each window's I/Os and those over the target, and obeys.

use serde::{Deserialize, Serialize};

/// A job's latency target, as its job key `latency_target` gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyTarget {
    /// The latency an I/O must stay at or under, µs.
    pub target_us: f64,
    /// How long each depth is tried, seconds.
    pub window_s: f64,
    /// Percent of a window's I/Os that must meet the target (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
}

impl LatencyTarget {
    /// What is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        if !(self.target_us.is_finite() && self.target_us > 0.0) {
            return Err(format!(
                "target_us {} is not a positive time",
                self.target_us
            ));
        }
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return Err(format!("window_s {} is not a positive time", self.window_s));
        }
        if let Some(p) = self.percentile.filter(|p| !(*p > 0.0 && *p <= 100.0)) {
            return Err(format!("percentile {p} is not in (0, 100]"));
        }
        Ok(())
    }
}

/// What the driver does after a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Try this depth for the next window.
    Try(u32),
    /// The depth settled: measure one more window at it, counting only that one.
    FinalWindow(u32),
    /// The final window is over: the job is done.
    Done,
}

/// The search's state for one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct DepthSearch {
    max: u32,
    depth: u32,
    low: u32,
    high: u32,
    /// A depth has missed the target: bisect from now on rather than double.
    missed: bool,
    percentile: f64,
    final_window: bool,
    /// Each window's depth and the percent of its I/Os that met the target.
    pub tried: Vec<(u32, f64)>,
}

impl DepthSearch {
    /// A search up to `max` in flight.
    pub fn new(target: &LatencyTarget, max: u32) -> Self {
        let max = max.max(1);
        DepthSearch {
            max,
            depth: 1,
            low: 1,
            high: max,
            missed: false,
            percentile: target.percentile.unwrap_or(100.0),
            final_window: false,
            tried: Vec::new(),
        }
    }

    /// The depth to keep now.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The depth the search settled at, once it has (the final window is under way or done).
    pub fn settled(&self) -> Option<u32> {
        self.final_window.then_some(self.depth)
    }

    /// A window ended with `ios` I/Os completed, `over` of them over the target.
    pub fn window(&mut self, ios: u64, over: u64) -> Step {
        if self.final_window {
            return Step::Done;
        }
        if ios == 0 {
            // Nothing completed: a window longer than the I/Os take; try again.
            return Step::Try(self.depth);
        }
        let met = 100.0 * (ios - over.min(ios)) as f64 / ios as f64;
        self.tried.push((self.depth, met));
        let before = self.depth;
        if met >= self.percentile {
            self.low = self.depth;
            self.depth = if self.missed {
                (self.depth + self.high) / 2
            } else {
                self.depth * 2
            }
            .min(self.max);
            if self.depth == before {
                self.final_window = true;
                return Step::FinalWindow(self.depth);
            }
        } else {
            self.high = self.depth;
            self.missed = true;
            if self.depth == self.low {
                self.low = self.low.saturating_sub(1).max(1);
                if self.depth == 1 {
                    // Even one I/O at a time misses: settle at one, as fio does.
                    self.final_window = true;
                    return Step::FinalWindow(1);
                }
            }
            self.depth = ((self.depth + self.low) / 2).max(1);
        }
        Step::Try(self.depth)
    }
}

/// What a latency-target search found, kept in the job's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct LatencyTargetOutcome {
    /// The target, µs.
    pub target_us: f64,
    /// Percent of I/Os that had to meet it.
    pub percentile: f64,
    /// Per thread, the depth the search settled at (`None`: still searching when the job
    /// ended).
    pub depth: Vec<Option<u32>>,
    /// Per thread, each window's depth and the percent of its I/Os that met the target.
    pub tried: Vec<Vec<(u32, f64)>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> LatencyTarget {
        LatencyTarget {
            target_us: 500.0,
            window_s: 5.0,
            percentile: Some(99.0),
        }
    }

    /// Runs the search against a device that meets the target up to `ok` in flight.
    fn settle(ok: u32, max: u32) -> (u32, Vec<u32>) {
        let mut s = DepthSearch::new(&target(), max);
        let mut depths = Vec::new();
        for _ in 0..64 {
            depths.push(s.depth());
            let over = if s.depth() <= ok { 0 } else { 50 };
            match s.window(1000, over) {
                Step::Try(_) => {}
                Step::FinalWindow(d) => {
                    assert_eq!(s.window(1000, 0), Step::Done);
                    return (d, depths);
                }
                Step::Done => unreachable!(),
            }
        }
        panic!("never settled: {depths:?}");
    }

    #[test]
    fn the_search_doubles_then_bisects_to_the_deepest_depth_that_meets_the_target() {
        let (d, path) = settle(20, 128);
        assert_eq!(d, 20, "{path:?}");
        assert_eq!(&path[..6], &[1, 2, 4, 8, 16, 32]);
        assert_eq!(settle(128, 128).0, 128);
        assert_eq!(settle(1, 128).0, 1);
        assert_eq!(settle(0, 128).0, 1, "one I/O at a time is the floor");
        for ok in 1..=40 {
            assert_eq!(settle(ok, 40).0, ok);
        }
    }

    #[test]
    fn the_percentile_decides_a_window() {
        let mut s = DepthSearch::new(&target(), 8);
        // 1 % over meets 99 %; 1.1 % does not.
        assert_eq!(s.window(1000, 10), Step::Try(2));
        assert_eq!(s.window(1000, 11), Step::Try(1));
        assert_eq!(s.tried, [(1, 99.0), (2, 98.9)]);
        assert!(LatencyTarget {
            percentile: Some(0.0),
            ..target()
        }
        .check()
        .is_err());
    }
}
