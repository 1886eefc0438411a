//! A run's scores as the store keeps them; the metric names, order and directions are core's
//! ([`iolab_core::metrics`]).

use super::*;

/// A run's scores: a suite's, or a trace replay's storage-bench figures.
pub(super) fn scores_of(r: &RunResult) -> Vec<StoredScore> {
    let mut out: Vec<StoredScore> = r
        .suite
        .iter()
        .flat_map(|s| &s.scores)
        .map(|s| StoredScore {
            name: s.name.clone(),
            value: s.value,
            unit: s.unit.clone(),
            stddev: s.stddev,
            rule: s.rule.clone(),
        })
        .collect();
    if let Some(p) = &r.replay {
        let rule = "trace replay, storage-bench metric";
        for (name, value, unit) in [
            ("Data rate", p.data_rate_mb_per_s, "MB/s"),
            ("Average latency", p.avg_latency_us, "µs"),
            ("I/Os over 10 ms", p.pct_over_10ms, "%"),
            ("I/Os over 100 ms", p.pct_over_100ms, "%"),
        ] {
            out.push(StoredScore {
                name: name.into(),
                value,
                unit: unit.into(),
                stddev: None,
                rule: rule.into(),
            });
        }
    }
    out
}
