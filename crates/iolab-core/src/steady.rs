//! Steady-state detection by the SNIA PTS rule, as pure functions of a series
//! of per-round values of the tracking variable.
//!
//! The window is the last `window` rounds (5 in the PTS). It is steady when
//! 1. the data excursion `max − min` is at most 20 % of the window's mean, and
//! 2. the least-squares line through the window changes by at most 10 % of the mean across it:
//!    `|slope| × (window − 1) ≤ 0.10 × mean` (cloudharmony's `isSteadyState` uses the same
//!    excursion; with 5 rounds that is `|slope| × 4`).

use crate::result::SteadyStateReport;

/// The PTS window, in rounds.
pub const PTS_WINDOW: usize = 5;
/// Allowed data excursion, as a share of the window mean.
pub const PTS_RANGE_SHARE: f64 = 0.20;
/// Allowed slope excursion across the window, as a share of the window mean.
pub const PTS_SLOPE_SHARE: f64 = 0.10;

/// Least-squares fit `y = intercept + slope × i` over `i = 0..n`.
pub fn least_squares(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.len() < 2 {
        return (0.0, values.first().copied().unwrap_or(0.0));
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - mean_x;
        sxy += dx * (y - mean_y);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    (slope, mean_y - slope * mean_x)
}

/// The determination for the rounds so far (`attained` is false until a full window exists).
pub fn judge(
    step: &str,
    tracking: &str,
    rounds: &[f64],
    window: usize,
    max_rounds: u32,
) -> SteadyStateReport {
    let w = &rounds[rounds.len().saturating_sub(window)..];
    let mean = if w.is_empty() {
        0.0
    } else {
        w.iter().sum::<f64>() / w.len() as f64
    };
    let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = w.iter().copied().fold(f64::INFINITY, f64::min);
    let range = if w.is_empty() { 0.0 } else { max - min };
    let (slope, intercept) = least_squares(w);
    let slope_excursion = slope.abs() * (w.len().max(1) - 1) as f64;
    let range_limit = PTS_RANGE_SHARE * mean;
    let slope_limit = PTS_SLOPE_SHARE * mean;
    SteadyStateReport {
        step: step.to_string(),
        tracking: tracking.to_string(),
        attained: w.len() == window
            && mean > 0.0
            && range <= range_limit
            && slope_excursion <= slope_limit,
        rounds: rounds.len() as u32,
        max_rounds,
        round_values: rounds.to_vec(),
        window: window as u32,
        window_mean: mean,
        range,
        range_limit,
        slope,
        intercept,
        slope_excursion,
        slope_limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(values: &[f64]) -> SteadyStateReport {
        judge("s", "write_iops", values, PTS_WINDOW, 25)
    }

    #[test]
    fn converging_series_is_steady_once_the_window_settles() {
        // A fresh drive falling to its steady state: 100k, 60k, then within ±2 % of 20k.
        let series = [100e3, 60e3, 30e3, 20.4e3, 19.8e3, 20.2e3, 19.9e3, 20.1e3];
        assert!(
            !verdict(&series[..6]).attained,
            "30k is still in the window"
        );
        let v = verdict(&series);
        // By hand: window 20.4, 19.8, 20.2, 19.9, 20.1 (k): mean 20.08k, range 0.6k ≤ 4.016k;
        // slope = Σ(dx·dy)/Σdx² = (−2·0.32 − 1·(−0.28) + 0 + 1·(−0.18) + 2·0.02)k / 10 = −0.05k,
        // excursion 0.2k ≤ 2.008k.
        assert!(v.attained);
        assert!((v.window_mean - 20_080.0).abs() < 1e-6);
        assert!((v.range - 600.0).abs() < 1e-6);
        assert!((v.slope - -50.0).abs() < 1e-6, "{}", v.slope);
        assert!((v.slope_excursion - 200.0).abs() < 1e-6);
    }

    #[test]
    fn oscillating_series_fails_the_range_rule() {
        // ±15 % around 10k: range 30 % of the mean > 20 %; the slope stays small.
        let v = verdict(&[11.5e3, 8.5e3, 11.5e3, 8.5e3, 11.5e3]);
        assert!(!v.attained);
        assert!((v.window_mean - 10_300.0).abs() < 1e-6);
        assert!(v.range > v.range_limit);
        assert!(v.slope_excursion <= v.slope_limit);
    }

    #[test]
    fn drifting_series_fails_the_slope_rule() {
        // A steady 4 % fall per round: range 16 % (passes) but the line falls 16 % (> 10 %).
        let v = verdict(&[10.0e3, 9.6e3, 9.2e3, 8.8e3, 8.4e3]);
        assert!(!v.attained);
        assert!(v.range <= v.range_limit, "{} vs {}", v.range, v.range_limit);
        assert!((v.slope - -400.0).abs() < 1e-6);
        assert!((v.slope_excursion - 1600.0).abs() < 1e-6);
        assert!(v.slope_excursion > v.slope_limit);
    }

    #[test]
    fn too_few_rounds_is_not_steady() {
        assert!(!verdict(&[5.0, 5.0, 5.0, 5.0]).attained);
    }
}
