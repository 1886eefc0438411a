//! The figures a result is split into for queries: their names, order and direction.

use super::*;

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
fn direction_of(name: &str) -> &'static str {
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
pub fn job_metrics(j: &JobResult) -> Vec<StoredMetric> {
    let has = |dir: &str| match dir {
        "read" => j.read.ios > 0,
        "write" => j.write.ios > 0,
        _ => j.read.ios + j.write.ios > 0,
    };
    let mut out = Vec::new();
    for name in JobResult::METRICS {
        let dir = direction_of(name);
        if !has(dir) {
            continue;
        }
        if let Some(value) = j.metric(name) {
            out.push(StoredMetric {
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
            out.push(StoredMetric {
                direction: dir.into(),
                name: format!("{dir}_{m}"),
                value: ns as f64 / 1e3,
            });
        }
    }
    out
}

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
