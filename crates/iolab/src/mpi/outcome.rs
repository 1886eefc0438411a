//! What rank 0 makes of the ranks' reports: the aggregate and per-host jobs, stonewall
//! windows and faults, the result of a run stopped by a signal, and saving it.

use super::coordinated::{Gathered, JobReport, RankSetup, Roster, Stop, Watch};
use super::report::host_lines;
use super::share::Share;
use crate::cmd::run::{Plan, RunArgs};
use crate::output::Rules;
use crate::session;
use iolab_core::job::Job;
use iolab_core::result::{JobResult, RunResult};
use iolab_core::scale::{
    merge_job_results, HostJobs, RankFault, RankProgress, ScaleSummary, StonewallWindow,
};
use std::path::{Path, PathBuf};

/// Rank 0 takes every rank's report of job `j`: per rank, the aggregate, the stonewall window
/// and any fault.
pub(super) fn take_reports(
    g: &mut Gathered,
    full_job: &Job,
    reports: Vec<JobReport>,
    t0: u64,
    watch: &Watch,
    hosts: &[String],
) {
    let starts: Vec<i64> = reports.iter().filter_map(|r| r.started_ns).collect();
    if let (Some(min), Some(max)) = (starts.iter().min(), starts.iter().max()) {
        g.skew_ns = g.skew_ns.max((max - min) as u64);
    }
    for (info, rep) in g.ranks.iter_mut().zip(&reports) {
        if let Some(s) = rep.started_ns {
            info.start_offsets_ns.push(s - t0 as i64);
        }
        if let Some(res) = &rep.result {
            info.jobs.push(res.clone());
        }
    }
    let parts: Vec<&JobResult> = reports.iter().filter_map(|r| r.result.as_ref()).collect();
    let mut aggregate = merge_job_results(full_job, &parts);
    if let Some(Stop::Fault { rank, reason }) = &watch.stop {
        let host = hosts.get(*rank as usize).cloned().unwrap_or_default();
        aggregate.complete = false;
        aggregate.stop_reason = Some(format!("rank {rank} on {host}: {reason}"));
        g.faults.push(RankFault {
            rank: *rank,
            host,
            reason: reason.clone(),
        });
    }
    if let Some(Stop::Stonewall { first }) = &watch.stop {
        let window = reports
            .get(*first as usize)
            .and_then(|r| r.result.as_ref())
            .map_or(0, |r| r.measured_ns);
        g.windows.push(StonewallWindow {
            job: full_job.name.clone(),
            first_rank: *first,
            window_ns: window,
            longest_ns: parts.iter().map(|p| p.measured_ns).max().unwrap_or(0),
        });
    }
    g.aggregates.push(aggregate);
}

/// The result rank 0 writes: the aggregate jobs, and every rank and host.
pub(super) fn assemble(
    mut result: RunResult,
    g: &Gathered,
    plan: &Plan,
    share: Share,
    args: &RunArgs,
    hosts: &[String],
) -> RunResult {
    if share != Share::Zones {
        result.target.path = plan.target.display().to_string();
    }
    result.notes.extend(plan.notes.iter().cloned());
    result.jobs = g.aggregates.clone();
    add_scale(&mut result, g, share, args.scale.stonewall, hosts);
    result
}

/// Puts the ranks, hosts, stonewall windows and faults of `g` into `result` (whose jobs are
/// the aggregates already), with a note of how the ranks ran, and settles it.
pub(super) fn add_scale(
    result: &mut RunResult,
    g: &Gathered,
    share: Share,
    stonewall: bool,
    hosts: &[String],
) {
    let mut host_order: Vec<&String> = Vec::new();
    for h in hosts {
        if !host_order.contains(&h) {
            host_order.push(h);
        }
    }
    result.notes.push(format!(
        "{} ranks on {} host{} under MPI ({}); each rank ran every job on its share, with the \
         job's queue depth and threads; the jobs here are their aggregate",
        hosts.len(),
        host_order.len(),
        if host_order.len() == 1 { "" } else { "s" },
        share.name()
    ));
    for w in &g.windows {
        result.notes.push(format!(
            "stonewall: job '{}': rank {} finished first after {:.3} s; the others stopped \
             within {:.1} ms of it",
            w.job,
            w.first_rank,
            w.window_ns as f64 / 1e9,
            w.longest_ns.saturating_sub(w.window_ns) as f64 / 1e6
        ));
    }
    let host_jobs = host_order
        .iter()
        .map(|h| {
            let ranks: Vec<u32> = (0..hosts.len() as u32)
                .filter(|r| &&hosts[*r as usize] == h)
                .collect();
            let jobs = g
                .aggregates
                .iter()
                .enumerate()
                .map(|(j, agg)| {
                    let parts: Vec<&JobResult> = ranks
                        .iter()
                        .filter_map(|r| g.ranks[*r as usize].jobs.get(j))
                        .collect();
                    merge_job_results(&agg.job, &parts)
                })
                .collect();
            HostJobs {
                host: (*h).clone(),
                ranks,
                jobs,
            }
        })
        .collect();
    session::settle(result);
    if let Some(f) = g.faults.first() {
        result.complete = false;
        result.incomplete_reason = Some(format!(
            "rank {} on {} failed: {}; the other ranks were stopped and their figures kept",
            f.rank, f.host, f.reason
        ));
    }
    result.scale = Some(ScaleSummary {
        launcher: "mpi".into(),
        ranks: hosts.len() as u32,
        share: share.name().into(),
        stonewall,
        start_skew_ns: g.skew_ns,
        rank_info: g.ranks.clone(),
        hosts: host_jobs,
        stonewall_windows: g.windows.clone(),
        faults: g.faults.clone(),
    });
}

/// The ranks of rank 0's host whose process is gone (exited, killed: no `/proc` entry, or a
/// zombie), as a fault each.
pub(super) fn lost_ranks(roster: &Roster, size: u32) -> Vec<RankFault> {
    let gone = |pid: u32| match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    };
    (1..size as usize)
        .filter(|&r| roster.hosts[r] == roster.hosts[0] && gone(roster.pids[r]))
        .map(|r| RankFault {
            rank: r as u32,
            host: roster.hosts[r].clone(),
            reason: format!(
                "its process ({}) ended without reporting (killed or crashed), and mpirun \
                 then stopped the job",
                roster.pids[r]
            ),
        })
        .collect()
}

/// Rank 0's result when the job was stopped by a signal during job `j`: what was gathered,
/// its own result of job `j`, the others' last counts, and who was lost.
pub(super) fn interrupted_result(
    result: &mut RunResult,
    full_job: &Job,
    j: usize,
    own: Option<JobResult>,
    last_progress: &[Option<RankProgress>],
    lost: Vec<RankFault>,
) {
    let lost_names: Vec<String> = lost.iter().map(|f| format!("rank {}", f.rank)).collect();
    let lost_said = if lost.is_empty() {
        String::new()
    } else {
        format!("; {} lost", lost_names.join(", "))
    };
    let reason = match lost.first() {
        Some(f) => format!("rank {} on {}: {}", f.rank, f.host, f.reason),
        None => "interrupted (a signal, which mpirun passes on to every rank)".into(),
    };
    let scale = result.scale.get_or_insert_with(ScaleSummary::default);
    let hosts: Vec<String> = scale.rank_info.iter().map(|i| i.host.clone()).collect();
    for (r, info) in scale.rank_info.iter_mut().enumerate() {
        info.last_progress = last_progress
            .get(r)
            .copied()
            .flatten()
            .filter(|p| p.job as usize == j);
    }
    scale.faults.extend(lost);
    let partial = own.map(|mut own| {
        own.complete = false;
        own.stop_reason = Some(format!("interrupted{lost_said}"));
        // The job's aggregate holds rank 0's I/O only: the others' are their counts.
        let mut partial = merge_job_results(full_job, &[&own]);
        partial.complete = false;
        partial.stop_reason = Some(format!(
            "only rank 0's I/O: the job was stopped before the other ranks could report (their \
             last counts are in scale.rank_info[].last_progress){lost_said}"
        ));
        if let Some(info) = scale.rank_info.first_mut() {
            info.jobs.push(own);
        }
        partial
    });
    result.jobs.extend(partial);
    let unknown: Vec<String> = (1..hosts.len())
        .filter(|r| hosts[*r] != hosts[0])
        .map(|r| format!("rank {r} on {}", hosts[r]))
        .collect();
    result.complete = false;
    result.incomplete_reason = Some(format!(
        "{reason}; job '{}' is kept as rank 0 measured it and as far as the others' last \
         progress counts go{}",
        full_job.name,
        if unknown.is_empty() {
            String::new()
        } else {
            format!(
                "; ranks on other hosts could not be looked at: {}",
                unknown.join(", ")
            )
        }
    ));
}

/// Shows the tables and saves the result under the output policy; returns the exit code.
pub(super) fn save(
    result: &RunResult,
    args: &RunArgs,
    setups: &[RankSetup],
    interrupted: bool,
) -> i32 {
    let json = args.safety.json.as_deref();
    let mut text = iolab_report::terminal::run_table(result);
    text.push_str(&host_lines(result));
    session::show(&text, json);
    // Every rank's target is an input the result must not overwrite.
    let targets: Vec<PathBuf> = setups
        .iter()
        .map(|s| PathBuf::from(s.target.split(" bytes ").next().unwrap_or_default()))
        .collect();
    let mut inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    inputs.extend(targets.iter().map(PathBuf::as_path));
    let rules = Rules::new(&inputs, args.safety.overwrite);
    match session::save(result, json, &rules) {
        Ok(saved) => say!("result saved to {saved}"),
        Err(e) => {
            say!("Error: {e:#}");
            return 2;
        }
    }
    if interrupted {
        session::EXIT_INTERRUPTED
    } else {
        session::exit_code(result)
    }
}
