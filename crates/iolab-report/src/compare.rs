//! `results compare` with a sense of noise: each side may be several runs of the same work,
//! and each figure carries how far it ranged over the side's repeats (its runs, or the
//! counted runs one quick run combines), so a change within that range is marked as noise.
//! Without repeats, the tail percentiles say how few I/Os they rest on.

use crate::store::{Comparison, Result, Spread, Store};
use iolab_core::result::{JobResult, RepeatFigures, RunResult};

/// Compares `sides`, each one run or several (their figures are then the mean, with the
/// spread); returns one column per side.
pub fn compare_sides(store: &Store, sides: &[Vec<i64>]) -> Result<Comparison> {
    let flat: Vec<i64> = sides.iter().flatten().copied().collect();
    let all = store.compare(&flat)?;
    let results: Vec<RunResult> = flat
        .iter()
        .map(|&id| store.result(id))
        .collect::<Result<_>>()?;
    // Column ranges of each side in `flat`.
    let mut bounds = Vec::with_capacity(sides.len());
    let mut at = 0;
    for side in sides {
        bounds.push(at..at + side.len());
        at += side.len();
    }
    let mut rows = Vec::with_capacity(all.rows.len());
    for row in &all.rows {
        let mut values = Vec::with_capacity(sides.len());
        let mut spread = Vec::with_capacity(sides.len());
        let mut tail_ios = Vec::with_capacity(sides.len());
        for range in &bounds {
            let got: Vec<f64> = row.values[range.clone()]
                .iter()
                .flatten()
                .copied()
                .collect();
            let mean = (!got.is_empty()).then(|| got.iter().sum::<f64>() / got.len() as f64);
            values.push(mean);
            let s = if got.len() > 1 {
                Some(spread_of(&got))
            } else {
                // One run: its own repeats, where it combined some.
                range
                    .clone()
                    .find(|&c| row.values[c].is_some())
                    .and_then(|c| job_of(&results[c], &row.label))
                    .and_then(|j| repeat_spread(j, &row.metric))
            };
            spread.push(s);
            let tails: Vec<f64> = range
                .clone()
                .filter(|&c| row.values[c].is_some())
                .filter_map(|c| job_of(&results[c], &row.label))
                .filter_map(|j| tail_of(j, &row.metric))
                .collect();
            tail_ios
                .push((!tails.is_empty()).then(|| tails.iter().sum::<f64>() / tails.len() as f64));
        }
        rows.push(crate::store::ComparedRow {
            label: row.label.clone(),
            metric: row.metric.clone(),
            values,
            spread,
            tail_ios,
        });
    }
    let runs = bounds.iter().map(|r| all.runs[r.start].clone()).collect();
    let grouped = sides.iter().any(|s| s.len() > 1);
    let side_runs = if grouped {
        bounds
            .iter()
            .map(|r| all.runs[r.clone()].to_vec())
            .collect()
    } else {
        Vec::new()
    };
    // A label names different work when its workload differs between sides (or within one).
    let differing = all
        .differing
        .into_iter()
        .map(|(label, w)| {
            let per_side = bounds
                .iter()
                .map(|r| w[r.clone()].iter().flatten().next().cloned())
                .collect();
            (label, per_side)
        })
        .collect();
    Ok(Comparison {
        runs,
        sides: side_runs,
        rows,
        differing,
    })
}

fn spread_of(values: &[f64]) -> Spread {
    Spread {
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        n: values.len(),
    }
}

/// The job a comparison row's label names (labels with a round or an occurrence number
/// are suite loops and repeated names: not looked up).
fn job_of<'a>(r: &'a RunResult, label: &str) -> Option<&'a JobResult> {
    r.jobs.iter().find(|j| j.name == label)
}

/// The spread of `metric` over the counted runs `j` combines, for the figures each repeat
/// keeps.
fn repeat_spread(j: &JobResult, metric: &str) -> Option<Spread> {
    if j.repeats.len() < 2 {
        return None;
    }
    let pick: fn(&RepeatFigures) -> f64 = match metric {
        "read_iops" => |f| f.read_iops,
        "write_iops" => |f| f.write_iops,
        "total_iops" => |f| f.read_iops + f.write_iops,
        "read_mb_per_s" => |f| f.read_mb_per_s,
        "write_mb_per_s" => |f| f.write_mb_per_s,
        "total_mb_per_s" => |f| f.read_mb_per_s + f.write_mb_per_s,
        "read_lat_mean_us" => |f| f.read_lat_mean_ns / 1e3,
        "write_lat_mean_us" => |f| f.write_lat_mean_ns / 1e3,
        _ => return None,
    };
    let v: Vec<f64> = j.repeats.iter().map(pick).collect();
    Some(spread_of(&v))
}

/// For a latency percentile or maximum: the I/Os beyond it in `j`.
fn tail_of(j: &JobResult, metric: &str) -> Option<f64> {
    let (dir, rest) = metric.split_once('_')?;
    let ios = match dir {
        "read" => j.read.ios,
        "write" => j.write.ios,
        _ => return None,
    } as f64;
    let beyond = match rest {
        "lat_p99_us" => 0.01,
        "lat_p99_9_us" => 0.001,
        "lat_p99_99_us" => 0.0001,
        "lat_max_us" => return Some(1.0),
        _ => return None,
    };
    Some(ios * beyond)
}

/// Whether the change between two columns lies within the repeats' spread: `Some(true)` when
/// the ranges overlap (or a one-value side lies in the other's range), `None` when neither
/// side has repeats.
pub fn within_noise(a: (f64, Option<Spread>), b: (f64, Option<Spread>)) -> Option<bool> {
    let range = |(v, s): (f64, Option<Spread>)| s.map_or((v, v), |s| (s.min, s.max));
    if a.1.is_none() && b.1.is_none() {
        return None;
    }
    let (a_lo, a_hi) = range(a);
    let (b_lo, b_hi) = range(b);
    Some(a_lo <= b_hi && b_lo <= a_hi)
}

/// Fewer I/Os than this beyond a percentile mark it as resting on a thin tail.
pub const THIN_TAIL_IOS: f64 = 100.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_ranges_are_noise_and_no_repeats_say_nothing() {
        let s = |min, max| Some(Spread { min, max, n: 3 });
        assert_eq!(
            within_noise((10.0, s(9.0, 11.0)), (10.5, s(10.2, 12.0))),
            Some(true)
        );
        assert_eq!(
            within_noise((10.0, s(9.0, 11.0)), (13.0, s(12.0, 14.0))),
            Some(false)
        );
        assert_eq!(within_noise((10.0, s(9.0, 11.0)), (10.9, None)), Some(true));
        assert_eq!(within_noise((10.0, None), (11.0, None)), None);
    }
}
