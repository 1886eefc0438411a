//! The terminal lines a coordinated run adds: one per host and job, and the ranks' start skew
//! and clock offsets.

use iolab_core::result::{JobResult, RunResult};
use std::fmt::Write;

/// A line per host for each job, then one about the ranks' start and clocks.
pub fn host_lines(result: &RunResult) -> String {
    let Some(scale) = &result.scale else {
        return String::new();
    };
    let mut out = String::new();
    let row = |out: &mut String, who: &str, ranks: &str, j: &JobResult| {
        let lat_us = j.metric("lat_mean_us").unwrap_or(0.0);
        let _ = writeln!(
            out,
            "  {who:<24} {ranks:>6} {:>12.0} {:>12.0} {:>10.1} {:>10.1}",
            j.read.iops,
            j.write.iops,
            j.total_mb_per_s(),
            lat_us
        );
    };
    for (j, job) in result.jobs.iter().enumerate() {
        let _ = writeln!(out, "\nper host, job '{}':", job.name);
        let _ = writeln!(
            out,
            "  {:<24} {:>6} {:>12} {:>12} {:>10} {:>10}",
            "host", "ranks", "read IOPS", "write IOPS", "MB/s", "mean µs"
        );
        for h in &scale.hosts {
            if let Some(hj) = h.jobs.get(j) {
                row(&mut out, &h.host, &h.ranks.len().to_string(), hj);
            }
        }
        row(&mut out, "all", &scale.ranks.to_string(), job);
    }
    let worst_offset = scale
        .rank_info
        .iter()
        .max_by_key(|r| r.clock_offset_ns.unsigned_abs())
        .map_or(0, |r| r.clock_offset_ns);
    let starts_known = scale
        .rank_info
        .iter()
        .any(|r| !r.start_offsets_ns.is_empty());
    let skew = if starts_known {
        format!(
            "started each job within {:.3} ms of each other",
            scale.start_skew_ns as f64 / 1e6
        )
    } else {
        "were stopped before they reported their starts".into()
    };
    let _ = writeln!(
        out,
        "\n{} ranks {skew} (clock offsets to rank 0 up to {:.3} ms, removed){}",
        scale.ranks,
        worst_offset as f64 / 1e6,
        if scale.stonewall {
            "; stonewalled: every rank stopped when the first finished"
        } else {
            ""
        }
    );
    for f in &scale.faults {
        let _ = writeln!(out, "rank {} on {}: {}", f.rank, f.host, f.reason);
    }
    out
}
