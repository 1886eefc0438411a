//! Ending a job early once it is steady (fio's `steadystate`): the job's IOPS, bandwidth or mean
//! latency is sampled every interval, and the job ends as soon as the last window of samples
//! meets the criterion. Pure: the runner feeds the samples and acts on the verdict.
//!
//! Two kinds of criterion, as fio has them:
//! - a **deviation** (`iops:10%`): every sample of the window lies within the limit of the
//!   window's mean (`max |x − mean| < limit`, the limit a share of the mean with `%`);
//! - a **slope** (`iops_slope:0.5%`): the least-squares line through the window rises or falls
//!   by less than the limit per sample (`|slope| < limit`, with `%` a share of the mean).

use crate::steady::least_squares;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What is tracked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    Bw,
    /// Mean completion latency of the interval's I/Os.
    Lat,
}

/// A parsed criterion: `iops:10%`, `bw_slope:1%`, `lat:5%`, `iops_slope:20` …
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criterion {
    /// What is tracked.
    pub metric: Metric,
    /// The slope of the window, rather than its deviation from the mean.
    pub slope: bool,
    /// The limit the criterion must stay under.
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
}

impl std::str::FromStr for Criterion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, limit) = s.split_once(':').ok_or_else(|| {
            format!("'{s}' is not METRIC:LIMIT (iops, bw or lat, with _slope; e.g. iops:10%)")
        })?;
        let (metric, slope) = match name.trim() {
            "iops" => (Metric::Iops, false),
            "iops_slope" => (Metric::Iops, true),
            "bw" => (Metric::Bw, false),
            "bw_slope" => (Metric::Bw, true),
            "lat" => (Metric::Lat, false),
            "lat_slope" => (Metric::Lat, true),
            other => {
                return Err(format!(
                    "'{other}' is not iops, iops_slope, bw, bw_slope, lat or lat_slope"
                ))
            }
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        let limit: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x > 0.0)
            .ok_or_else(|| format!("limit '{limit}' is not a positive number"))?;
        Ok(Criterion {
            metric,
            slope,
            limit,
            percent,
        })
    }
}

/// A job's steady-state stop, as its job key `steady_stop` gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyStop {
    /// The criterion: `iops:10%`, `bw_slope:1%`, `lat:5%` …
    pub criterion: String,
    /// Length of the rolling window judged, seconds.
    pub window_s: f64,
    /// Seconds from the job's start before samples are taken (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp_s: Option<f64>,
    /// Seconds between samples (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
}

impl SteadyStop {
    /// The parsed criterion and the window in samples, or what is wrong.
    pub fn check(&self) -> Result<(Criterion, usize), String> {
        let c: Criterion = self.criterion.parse()?;
        let interval = self.interval();
        if !(interval.is_finite() && interval > 0.0) {
            return Err(format!("interval_s {interval} is not a positive time"));
        }
        if !(self.window_s.is_finite() && self.window_s >= interval) {
            return Err(format!(
                "window_s {} is shorter than one interval ({interval} s)",
                self.window_s
            ));
        }
        if self.ramp_s.is_some_and(|r| !(r.is_finite() && r >= 0.0)) {
            return Err("ramp_s is not a time".into());
        }
        Ok((c, (self.window_s / interval).round().max(1.0) as usize))
    }

    /// Seconds between samples.
    pub fn interval(&self) -> f64 {
        self.interval_s.unwrap_or(1.0)
    }
}

/// What a steady-state stop found, kept in the job's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct SteadyStopOutcome {
    /// The criterion, as given.
    pub criterion: String,
    /// Whether it was met (the job then ended early, complete).
    pub attained: bool,
    /// When it was met, seconds from the job's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at_s: Option<f64>,
    /// The criterion's last value (a deviation or slope; a percentage where the limit is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_value: Option<f64>,
    /// The limit it had to stay under.
    pub limit: f64,
    /// The last window's samples (IOPS, bytes/s or ns).
    pub window: Vec<f64>,
}

/// The criterion's value for a full window: the largest deviation from the mean, or the
/// absolute slope per sample; as a percentage of the mean where `percent`.
pub fn criterion_value(window: &[f64], slope: bool, percent: bool) -> f64 {
    let n = window.len().max(1) as f64;
    let mean = window.iter().sum::<f64>() / n;
    let raw = if slope {
        least_squares(window).0.abs()
    } else {
        window.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max)
    };
    if !percent {
        raw
    } else if mean > 0.0 {
        100.0 * raw / mean
    } else {
        // Nothing moved: no share of nothing is steady.
        f64::INFINITY
    }
}

/// Samples a job's figures interval by interval and says when they are steady.
#[derive(Clone, Debug)]
pub struct SteadyWatch {
    criterion: Criterion,
    samples: VecDeque<f64>,
    window: usize,
    outcome: SteadyStopOutcome,
}

impl SteadyWatch {
    /// A watch for `stop` (checked: see [`SteadyStop::check`]).
    pub fn new(stop: &SteadyStop) -> Result<Self, String> {
        let (criterion, window) = stop.check()?;
        Ok(SteadyWatch {
            criterion,
            samples: VecDeque::with_capacity(window),
            window,
            outcome: SteadyStopOutcome {
                criterion: stop.criterion.clone(),
                limit: criterion.limit,
                ..SteadyStopOutcome::default()
            },
        })
    }

    /// What is tracked.
    pub fn metric(&self) -> Metric {
        self.criterion.metric
    }

    /// Takes one interval's sample, at `t_s` from the job's start; true once steady.
    pub fn push(&mut self, value: f64, t_s: f64) -> bool {
        if self.outcome.attained {
            return true;
        }
        if self.samples.len() == self.window {
            self.samples.pop_front();
        }
        self.samples.push_back(value);
        self.outcome.window = self.samples.iter().copied().collect();
        if self.samples.len() < self.window {
            return false;
        }
        let v = criterion_value(
            &self.outcome.window,
            self.criterion.slope,
            self.criterion.percent,
        );
        self.outcome.last_value = v.is_finite().then_some(v);
        if v < self.criterion.limit {
            self.outcome.attained = true;
            self.outcome.attained_at_s = Some(t_s);
        }
        self.outcome.attained
    }

    /// What it found so far.
    pub fn outcome(&self) -> &SteadyStopOutcome {
        &self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(c: &str, window_s: f64) -> SteadyStop {
        SteadyStop {
            criterion: c.into(),
            window_s,
            ramp_s: None,
            interval_s: None,
        }
    }

    #[test]
    fn criteria_parse_as_fio_writes_them() {
        let c: Criterion = "bw_slope:1%".parse().unwrap();
        assert_eq!(
            (c.metric, c.slope, c.limit, c.percent),
            (Metric::Bw, true, 1.0, true)
        );
        let c: Criterion = "iops:200".parse().unwrap();
        assert_eq!((c.metric, c.slope, c.percent), (Metric::Iops, false, false));
        assert_eq!("lat:5%".parse::<Criterion>().unwrap().metric, Metric::Lat);
        assert!("iops".parse::<Criterion>().is_err());
        assert!("clat:5%".parse::<Criterion>().is_err());
        assert!("iops:-1%".parse::<Criterion>().is_err());
        assert!(stop("iops:10%", 0.5).check().is_err());
        assert_eq!(stop("iops:10%", 30.0).check().unwrap().1, 30);
    }

    #[test]
    fn deviation_and_slope_are_judged_over_the_full_window_only() {
        // Within 10 % of the mean: 95..105 around 100.
        let mut w = SteadyWatch::new(&stop("iops:10%", 3.0)).unwrap();
        assert!(!w.push(50.0, 1.0));
        assert!(!w.push(95.0, 2.0));
        assert!(!w.push(105.0, 3.0), "50 is far from the mean of the window");
        assert!(w.push(100.0, 4.0));
        assert_eq!(w.outcome().attained_at_s, Some(4.0));
        assert_eq!(w.outcome().window, [95.0, 105.0, 100.0]);
        // A steady climb of 10 per sample around 100 is a slope of 10 %, not under it.
        let mut s = SteadyWatch::new(&stop("bw_slope:10%", 3.0)).unwrap();
        for (i, x) in [90.0, 100.0, 110.0].into_iter().enumerate() {
            assert!(!s.push(x, i as f64));
        }
        assert!((s.outcome().last_value.unwrap() - 10.0).abs() < 1e-9);
        // [100, 110, 111]: 5.5 per sample on a mean of 107, 5.1 %.
        assert!(s.push(111.0, 4.0));
        assert!((s.outcome().last_value.unwrap() - 550.0 / 107.0).abs() < 1e-9);
        // Flat, in absolute terms.
        assert_eq!(criterion_value(&[7.0, 7.0, 7.0], true, false), 0.0);
        assert_eq!(criterion_value(&[0.0, 0.0], false, true), f64::INFINITY);
    }
}
