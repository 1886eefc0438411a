//! Runs of many processes as one (MPI ranks on one or many hosts): what a result keeps of each
//! rank and host, and the merge of their job results into the aggregate.
//!
//! **Exactness.** Counts and bytes add; latency histograms merge bucket by bucket, so the
//! aggregate's percentiles are those of every rank's I/Os together (to the histogram's ±0.39 %),
//! its minimum and maximum exact, and its mean within `f64` rounding. Rates are the aggregate's
//! counts over the longest measured window of the ranks (all ranks start together, so that is
//! the job's wall-clock window, as IOR divides the total moved by the time of the slowest rank).

use crate::hist::Histogram;
use crate::job::Job;
use crate::result::{
    CpuResult, DirectionResult, ErrorCount, JobResult, LatencySummary, RepeatFigures, SeriesResult,
    VerifySummary,
};
use crate::stats::latency_summary;
use serde::{Deserialize, Serialize};

/// What a run of several coordinated processes adds to its result.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct ScaleSummary {
    /// How the processes were launched and coordinated: `mpi`.
    pub launcher: String,
    /// Processes (ranks) in the run.
    pub ranks: u32,
    /// How the target was shared: `own target` (a pattern with `{rank}`, `{host}` or
    /// `{local_rank}`, or a model), `own file in a directory`, or `zones of one target`.
    pub share: String,
    /// Whether every rank stopped when the first finished (IOR's stonewalling).
    pub stonewall: bool,
    /// The largest difference between two ranks' starts of any job, ns, on rank 0's clock
    /// (each rank's clock offset to rank 0 removed).
    pub start_skew_ns: u64,
    /// Every rank, in rank order.
    pub rank_info: Vec<RankInfo>,
    /// Every host, in order of its first rank: the merge of its ranks' jobs.
    pub hosts: Vec<HostJobs>,
    /// For stonewalled jobs: who finished first and how long the others ran on.
    pub stonewall_windows: Vec<StonewallWindow>,
    /// Ranks that failed or vanished, with why.
    pub faults: Vec<RankFault>,
}

/// One rank: where it ran, what it measured.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct RankInfo {
    /// MPI rank.
    pub rank: u32,
    /// Host name.
    pub host: String,
    /// Rank among the ranks of its host (0-based).
    pub local_rank: u32,
    /// Process id on its host.
    pub pid: u32,
    /// What it measured: its own file or device, or its zone of the shared one.
    pub target: String,
    /// Rank 0's clock minus this rank's, ns, measured by ping-pong (the exchange with the
    /// shortest round trip): add it to a time of this rank to put it on rank 0's clock.
    pub clock_offset_ns: i64,
    /// Round trip of that exchange, ns: the offset is known to within half of it.
    pub clock_rtt_ns: u64,
    /// When this rank started each job, ns after the job's common start, on rank 0's clock.
    pub start_offsets_ns: Vec<i64>,
    /// Its job results, in run order (fewer than the run's jobs when it stopped early).
    pub jobs: Vec<JobResult>,
    /// What it had completed of a job it could not report (it or another rank vanished):
    /// the last progress it sent.
    pub last_progress: Option<RankProgress>,
}

/// A rank's running count, sent to rank 0 while a job runs (kept when the rank is lost).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct RankProgress {
    /// Index of the job in the run.
    pub job: u32,
    /// I/Os completed so far (ramp included).
    pub ios: u64,
    /// Bytes completed so far.
    pub bytes: u64,
}

/// One host's ranks merged.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct HostJobs {
    /// Host name.
    pub host: String,
    /// Its ranks.
    pub ranks: Vec<u32>,
    /// The merge of its ranks' results, job by job.
    pub jobs: Vec<JobResult>,
}

/// How a stonewalled job ended.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct StonewallWindow {
    /// Job name.
    pub job: String,
    /// The rank that finished first, whose end stopped the others.
    pub first_rank: u32,
    /// The common window: what the first rank measured, ns.
    pub window_ns: u64,
    /// The longest any rank measured, ns: the others stop within a message's time of the first.
    pub longest_ns: u64,
}

/// A rank that failed or was lost.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
pub struct RankFault {
    /// MPI rank.
    pub rank: u32,
    /// Its host.
    pub host: String,
    /// What happened.
    pub reason: String,
}

/// Merges the results of one job run by several processes into one: `job` is the job as the
/// user gave it (before each rank's share was cut out of it).
pub fn merge_job_results(job: &Job, parts: &[&JobResult]) -> JobResult {
    let measured_ns = parts.iter().map(|p| p.measured_ns).max().unwrap_or(0);
    let mut errors: Vec<ErrorCount> = Vec::new();
    for e in parts.iter().flat_map(|p| &p.errors) {
        match errors.iter_mut().find(|x| x.errno == e.errno) {
            Some(x) => x.count += e.count,
            None => errors.push(e.clone()),
        }
    }
    errors.sort_by_key(|e| e.errno);
    let stop_reason = parts.iter().find_map(|p| p.stop_reason.clone());
    JobResult {
        complete: parts.iter().all(|p| p.complete) && !parts.is_empty(),
        stop_reason,
        measured_ns,
        ramp_ns: parts.iter().map(|p| p.ramp_ns).max().unwrap_or(0),
        read: merge_direction(parts.iter().map(|p| &p.read), measured_ns),
        write: merge_direction(parts.iter().map(|p| &p.write), measured_ns),
        trim: parts
            .iter()
            .any(|p| p.trim.is_some())
            .then(|| merge_direction(parts.iter().filter_map(|p| p.trim.as_ref()), measured_ns)),
        series: merge_series(parts.iter().map(|p| &p.series)),
        // The others' share is left out: ranks on one host count each other as others.
        cpu: CpuResult {
            others_user_s: None,
            steal_s: None,
            ..CpuResult::sum(parts.iter().map(|p| &p.cpu))
        },
        errors,
        latency_from_intended_start: parts.iter().any(|p| p.latency_from_intended_start),
        repeats: merge_repeats(parts),
        step: parts.first().and_then(|p| p.step.clone()),
        verify: merge_verify(parts.iter().filter_map(|p| p.verify.as_ref())),
        steady_stop: parts.first().and_then(|p| p.steady_stop.clone()),
        test: parts.first().and_then(|p| p.test.clone()),
        latency_target: parts.first().and_then(|p| p.latency_target.clone()),
        syncs: parts.iter().filter_map(|p| p.syncs).reduce(|mut a, b| {
            a.merge(&b);
            a
        }),
        ..JobResult::unmeasured(job.clone())
    }
}

/// The ranks' repeated runs (quick's counted runs, which start together on every rank) as
/// one per run: rates add, the window is the longest rank's, a mean latency is weighted by each
/// rank's I/Os. Only as many runs as every rank has.
fn merge_repeats(parts: &[&JobResult]) -> Vec<RepeatFigures> {
    let n = parts.iter().map(|p| p.repeats.len()).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            let runs: Vec<&RepeatFigures> = parts.iter().map(|p| &p.repeats[i]).collect();
            let weighted = |lat: fn(&RepeatFigures) -> f64, iops: fn(&RepeatFigures) -> f64| {
                let total: f64 = runs.iter().map(|r| iops(r)).sum();
                if total > 0.0 {
                    runs.iter().map(|r| lat(r) * iops(r)).sum::<f64>() / total
                } else {
                    0.0
                }
            };
            RepeatFigures {
                measured_ns: runs.iter().map(|r| r.measured_ns).max().unwrap_or(0),
                read_iops: runs.iter().map(|r| r.read_iops).sum(),
                write_iops: runs.iter().map(|r| r.write_iops).sum(),
                read_mb_per_s: runs.iter().map(|r| r.read_mb_per_s).sum(),
                write_mb_per_s: runs.iter().map(|r| r.write_mb_per_s).sum(),
                read_lat_mean_ns: weighted(|r| r.read_lat_mean_ns, |r| r.read_iops),
                write_lat_mean_ns: weighted(|r| r.write_lat_mean_ns, |r| r.write_iops),
            }
        })
        .collect()
}

/// The ranks' verify summaries as one: counts add, the first failures of each rank in rank
/// order (at most 100, as one process keeps), the first problem any rank had.
fn merge_verify<'a>(parts: impl Iterator<Item = &'a VerifySummary>) -> Option<VerifySummary> {
    let mut merged: Option<VerifySummary> = None;
    for v in parts {
        let Some(m) = merged.as_mut() else {
            merged = Some(v.clone());
            continue;
        };
        m.blocks_checked += v.blocks_checked;
        m.bytes_checked += v.bytes_checked;
        m.failures += v.failures;
        m.corrupted += v.corrupted;
        m.misplaced += v.misplaced;
        m.zeros += v.zeros;
        m.torn += v.torn;
        m.stale += v.stale;
        m.foreign += v.foreign;
        m.unflushed_lost += v.unflushed_lost;
        m.journal_flushes += v.journal_flushes;
        let room = 100usize.saturating_sub(m.first_failures.len());
        m.first_failures
            .extend(v.first_failures.iter().take(room).cloned());
        if m.problem.is_none() {
            m.problem.clone_from(&v.problem);
        }
    }
    merged
}

/// The histogram a direction's result kept, rebuilt for merging.
fn histogram_of(d: &DirectionResult) -> Histogram {
    Histogram::from_summary(
        &d.lat_histogram,
        d.lat_ns.min,
        d.lat_ns.max,
        d.lat_ns.mean,
        d.lat_ns.stddev,
    )
}

fn merge_direction<'a>(
    parts: impl Iterator<Item = &'a DirectionResult> + Clone,
    measured_ns: u64,
) -> DirectionResult {
    let secs = measured_ns as f64 / 1e9;
    let rate = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    let mut lat = Histogram::new();
    let (mut ios, mut bytes) = (0, 0);
    let (mut over_10, mut over_100) = (Some(0u64), Some(0u64));
    for d in parts {
        ios += d.ios;
        bytes += d.bytes;
        lat.merge(&histogram_of(d));
        over_10 = over_10.zip(d.ios_over_10ms).map(|(a, b)| a + b);
        over_100 = over_100.zip(d.ios_over_100ms).map(|(a, b)| a + b);
    }
    DirectionResult {
        ios,
        bytes,
        iops: rate(ios),
        bw_bytes_per_s: rate(bytes),
        bw_mb_per_s: rate(bytes) / 1e6,
        bw_mib_per_s: rate(bytes) / (1u64 << 20) as f64,
        lat_ns: if ios == 0 {
            LatencySummary::default()
        } else {
            latency_summary(&lat)
        },
        // A result keeps no service-time histogram to merge: each rank's stays in its own.
        service_lat_ns: None,
        lat_histogram: lat.to_sparse(),
        ios_over_10ms: over_10,
        ios_over_100ms: over_100,
    }
}

/// Per-second series of ranks that started together, added bin by bin (their bins share one
/// time base: the job's common start, to within the start skew the result records).
pub fn merge_series<'a>(parts: impl Iterator<Item = &'a SeriesResult>) -> SeriesResult {
    let mut out = SeriesResult::default();
    let mut lat_sum: Vec<f64> = Vec::new();
    let mut ios_in: Vec<f64> = Vec::new();
    for s in parts {
        if out.interval_ms == 0.0 {
            out.interval_ms = s.interval_ms;
        }
        let n = s.t_end_s.len();
        if n > out.t_end_s.len() {
            out.t_end_s.clone_from(&s.t_end_s);
            for v in [
                &mut out.read_iops,
                &mut out.write_iops,
                &mut out.read_bytes_per_s,
                &mut out.write_bytes_per_s,
            ] {
                v.resize(n, 0.0);
            }
            lat_sum.resize(n, 0.0);
            ios_in.resize(n, 0.0);
        }
        for i in 0..n {
            let at = |v: &Vec<f64>| v.get(i).copied().unwrap_or(0.0);
            out.read_iops[i] += at(&s.read_iops);
            out.write_iops[i] += at(&s.write_iops);
            out.read_bytes_per_s[i] += at(&s.read_bytes_per_s);
            out.write_bytes_per_s[i] += at(&s.write_bytes_per_s);
            // The bin's mean latency weighs each rank by the I/Os it completed in the bin.
            if !s.trim_iops.is_empty() {
                if out.trim_iops.len() < n {
                    out.trim_iops.resize(n, 0.0);
                }
                out.trim_iops[i] += at(&s.trim_iops);
            }
            let ios = at(&s.read_iops) + at(&s.write_iops) + at(&s.trim_iops);
            lat_sum[i] += at(&s.mean_lat_ns) * ios;
            ios_in[i] += ios;
        }
    }
    out.mean_lat_ns = lat_sum
        .iter()
        .zip(&ios_in)
        .map(|(l, n)| if *n > 0.0 { l / n } else { 0.0 })
        .collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Direction, JobSpec};
    use crate::rng::Rng;
    use crate::stats::RunStats;

    fn job_result(job: &Job, stats: &RunStats, measured_ns: u64) -> JobResult {
        JobResult {
            measured_ns,
            read: stats.direction_summary(Direction::Read, measured_ns),
            write: stats.direction_summary(Direction::Write, measured_ns),
            series: stats.series(measured_ns),
            ..JobResult::unmeasured(job.clone())
        }
    }

    #[test]
    fn ranks_merge_as_one_process_that_did_all_their_io() {
        let job = JobSpec::default().validate().unwrap();
        let mut rng = Rng::new(3);
        let mut ranks: Vec<RunStats> = (0..4).map(|_| RunStats::new(1_000_000_000)).collect();
        let mut all = RunStats::new(1_000_000_000);
        for i in 0..40_000u64 {
            let dir = if i % 3 == 0 {
                Direction::Write
            } else {
                Direction::Read
            };
            let lat = 20_000 + rng.below(30_000_000);
            let at = rng.below(3_000_000_000);
            ranks[(i % 4) as usize].record(dir, 4096, lat, at);
            all.record(dir, 4096, lat, at);
        }
        let measured = 3_000_000_000;
        let parts: Vec<JobResult> = ranks
            .iter()
            .map(|s| job_result(&job, s, measured))
            .collect();
        let merged = merge_job_results(&job, &parts.iter().collect::<Vec<_>>());
        let whole = job_result(&job, &all, measured);
        for (m, w) in [(&merged.read, &whole.read), (&merged.write, &whole.write)] {
            assert_eq!((m.ios, m.bytes), (w.ios, w.bytes));
            assert_eq!(m.lat_histogram, w.lat_histogram);
            assert_eq!(
                (m.lat_ns.min, m.lat_ns.max, m.lat_ns.p50, m.lat_ns.p99_99),
                (w.lat_ns.min, w.lat_ns.max, w.lat_ns.p50, w.lat_ns.p99_99)
            );
            assert!((m.lat_ns.mean - w.lat_ns.mean).abs() / w.lat_ns.mean < 1e-12);
            assert_eq!(m.ios_over_10ms, w.ios_over_10ms);
            assert!((m.iops - w.iops).abs() < 1e-9 * w.iops);
        }
        assert_eq!(merged.series.t_end_s, whole.series.t_end_s);
        for (a, b) in merged.series.read_iops.iter().zip(&whole.series.read_iops) {
            assert!((a - b).abs() < 1e-6, "{a} {b}");
        }
        for (a, b) in merged
            .series
            .mean_lat_ns
            .iter()
            .zip(&whole.series.mean_lat_ns)
        {
            assert!((a - b).abs() / b < 1e-9, "{a} {b}");
        }
    }

    #[test]
    fn an_incomplete_rank_makes_the_merge_incomplete_and_rates_use_the_longest_window() {
        let job = JobSpec::default().validate().unwrap();
        let mut s = RunStats::new(1_000_000_000);
        s.record(Direction::Read, 4096, 1000, 10);
        let a = job_result(&job, &s, 1_000_000_000);
        let mut b = job_result(&job, &s, 2_000_000_000);
        b.complete = false;
        b.stop_reason = Some("EIO at 0".into());
        let m = merge_job_results(&job, &[&a, &b]);
        assert!(!m.complete);
        assert_eq!(m.stop_reason.as_deref(), Some("EIO at 0"));
        assert_eq!(m.measured_ns, 2_000_000_000);
        assert_eq!(m.read.ios, 2);
        assert!((m.read.iops - 1.0).abs() < 1e-12);
    }

    #[test]
    fn repeated_runs_merge_run_by_run_with_rates_added() {
        let job = JobSpec::default().validate().unwrap();
        let s = RunStats::new(1_000_000_000);
        let run = |iops: f64, lat: f64, ns: u64| RepeatFigures {
            measured_ns: ns,
            read_iops: iops,
            read_mb_per_s: iops / 1000.0,
            read_lat_mean_ns: lat,
            ..RepeatFigures::default()
        };
        let mut a = job_result(&job, &s, 1);
        a.repeats = vec![run(100.0, 10.0, 5), run(300.0, 20.0, 6)];
        let mut b = job_result(&job, &s, 1);
        b.repeats = vec![run(300.0, 30.0, 7)];
        let m = merge_job_results(&job, &[&a, &b]);
        // Only the run every rank has; rates add, the latency weighs by I/Os.
        assert_eq!(m.repeats.len(), 1);
        let r = &m.repeats[0];
        assert_eq!((r.measured_ns, r.read_iops, r.write_iops), (7, 400.0, 0.0));
        assert!((r.read_mb_per_s - 0.4).abs() < 1e-12);
        assert!(
            (r.read_lat_mean_ns - 25.0).abs() < 1e-12,
            "{}",
            r.read_lat_mean_ns
        );
        assert_eq!(r.write_lat_mean_ns, 0.0);
    }
}
