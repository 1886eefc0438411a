//! `mpirun -np N iolab trace replay TRACE TARGET`: every rank replays the whole trace on its
//! share (its own file or `{rank}` target, or its zone of a shared one), as IOR runs one
//! workload per rank: the ranks start together after a barrier, with their clock offsets
//! recorded, may stop when the first finishes (`--stonewall`), and rank 0 writes one result
//! whose job is the aggregate of the ranks' replays, with every host and rank. Preparation
//! (`--target-state`) is per rank: each fills its own share; a shared target is emptied once,
//! by rank 0.

use super::report::host_lines;
use super::steps::{Opening, Steps};
use super::suite::rules_for;
use crate::cmd::replay::{fill_outcome, show_and_save, summarize, Feed, ReplayArgs, TracePlan};
use anyhow::{anyhow, Result};
use iolab_core::job::Job;
use iolab_engine::runner::RunControl;
use iolab_engine::sys::INTERRUPTED;
use iolab_trace::replay::ReplayStats;

/// Runs `iolab trace replay` as one coordinated run of every rank mpirun started.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    let (_universe, comm) = super::comm::start()?;
    let root = comm.is_root();
    // Every rank reads the same trace: a refusal is the same on all, said once.
    let planned = crate::cmd::replay::plan(args).and_then(|plan| {
        crate::subject::check_buffer_memory(&args.target, &plan.job)?;
        Ok(plan)
    });
    let plan = match comm.agree(&[], planned) {
        Ok(plan) => plan,
        // Every rank has the same error (it was agreed on); rank 0 says it.
        Err(e) => return super::comm::exit_with(root, Err(e)),
    };
    let inputs = [args.input.file.clone()];
    let check_outputs = || {
        let rules = rules_for(&inputs, &[], args.safety.overwrite);
        crate::session::check_output(args.safety.json.as_deref(), &rules)?;
        crate::fio_out::check(&args.safety, &rules)
    };
    // Each rank's target is known only once it is open: a new one is made at --size, an
    // existing one replayed whole.
    let mut first = if args.target_state == "as-is" {
        plan.job.clone()
    } else {
        plan.fill.clone()
    };
    first.span_bytes = None;
    let opening = Opening {
        target: &args.target,
        own: false,
        first,
        size_if_new: Some(args.size.0),
        safety: &args.safety,
        state: args.model_state(),
        remove_created: false,
        stonewall: args.mpi.stonewall,
        check_outputs: &check_outputs,
    };
    let mut steps = match Steps::open(comm, opening) {
        Ok(s) => s,
        // Every rank has the same error (it was agreed on); rank 0 says it.
        Err(e) => return super::comm::exit_with(root, Err(e)),
    };
    let code = match replay(&mut steps, args, &plan) {
        Ok(code) => code,
        Err(e) if root => {
            say!("Error: {e:#}");
            Some(2)
        }
        Err(_) => None,
    };
    steps.end(code)
}

/// The whole job and this rank's share of it (span resolved, its zone of a shared target),
/// checked on every rank: the trace's longest request must fit each share.
fn shares(steps: &Steps, job: &Job, args: &ReplayArgs, plan: &TracePlan) -> Result<(Job, Job)> {
    let subject = &steps.subject;
    let mine = (|| {
        let mut full = job.clone();
        // The whole of this rank's target: a new one was made at the size asked for.
        full.span_bytes = None;
        full.resolve_span(subject.size_bytes())?;
        full.check_alignment(subject.logical_block_bytes())?;
        let mine = steps.share_of(&full)?;
        crate::cmd::replay::check_longest_fits(&args.input.file, plan.longest, mine.span())?;
        Ok((full, mine))
    })();
    steps.comm.agree(steps.hosts(), mine)
}

/// Prepares every rank's share (`--target-state`), replays the trace on all together and, on
/// rank 0, writes the result; rank 0's exit code.
fn replay(steps: &mut Steps, args: &ReplayArgs, plan: &TracePlan) -> Result<Option<i32>> {
    let (full, mine) = shares(steps, &plan.job, args, plan)?;
    let (prepared, fill_stopped) = prepare(steps, args, plan)?;
    let root = steps.is_root();
    let mut frame = root.then(|| steps.subject.new_result("replay", !args.safety.no_probe));
    let sector = steps.subject.logical_block_bytes();
    let (feed, worker) = Feed::new(args, plan, mine.offset_bytes, mine.span(), sector)?;
    let mut r = steps.start_with(|s, ctl| s.run_workers_with(&mine, vec![worker], ctl))?;
    if let Ok(run) = r.run.as_mut() {
        feed.mark_stopped(&mut run.result);
    }
    let targets = steps.targets();
    let rules = rules_for(
        std::slice::from_ref(&args.input.file),
        &targets,
        args.safety.overwrite,
    );
    if steps.cut_off {
        let Some(mut result) = frame else {
            return Ok(None);
        };
        result.notes.extend(prepared);
        let own = r.run.ok().map(|r| r.result);
        steps.subject.describe_into(&mut result);
        steps.subject.note_replay_validation(&mut result);
        steps.interrupted_into(&mut result, &full, own);
        show_and_save(&result, args, &rules, &host_lines(&result))?;
        return Ok(Some(crate::session::EXIT_INTERRUPTED));
    }
    let aggregate = steps.finish(&full, r);
    let stats = steps.comm.gather(&feed.stats())?;
    let (Some(mut result), Some(stats)) = (frame.take(), stats) else {
        return Ok(None);
    };
    let aggregate = aggregate?;
    result.notes.extend(prepared);
    let ranks = u64::from(steps.comm.size);
    summarize(
        &mut result,
        aggregate,
        plan,
        args,
        sum(&stats),
        mine.span(),
        ranks,
    );
    steps.subject.describe_into(&mut result);
    steps.subject.note_replay_validation(&mut result);
    steps.describe_into(&mut result);
    if let Some(why) = fill_stopped {
        result.complete = false;
        result.incomplete_reason = Some(why);
    }
    let lines = host_lines(&result);
    show_and_save(&result, args, &rules, &lines).map(Some)
}

/// `--target-state`: each rank fills its own share, or a shared target is emptied once by rank
/// 0 (every rank its own otherwise). Returns the result's notes (rank 0) and why the fill of a
/// rank stopped part-way, if one did.
fn prepare(
    steps: &mut Steps,
    args: &ReplayArgs,
    plan: &TracePlan,
) -> Result<(Vec<String>, Option<String>)> {
    match args.target_state.as_str() {
        "empty" => match steps.purge(&args.safety) {
            Ok(done) => Ok((vec![format!("target emptied first: {done}")], None)),
            Err(why) => Err(anyhow!("cannot empty the target: {why}")),
        },
        "filled" => {
            let (full, mine) = shares(steps, &plan.fill, args, plan)?;
            let ctl = RunControl {
                stop: Some(&INTERRUPTED),
                ..RunControl::default()
            };
            let filled = steps
                .subject
                .run_job_with(&mine, ctl)
                .map(|r| fill_outcome(&mut steps.subject, &full, &r.result));
            let filled = steps.comm.agree(steps.hosts(), filled)?;
            let all = steps.comm.gather(&filled)?.unwrap_or_default();
            let notes: Vec<String> = all
                .iter()
                .enumerate()
                .map(|(r, (note, _))| format!("rank {r}: {note}"))
                .collect();
            let stopped = all
                .iter()
                .enumerate()
                .find(|(_, (_, stopped))| *stopped)
                .map(|(r, (note, _))| format!("rank {r}: {note}"));
            Ok((notes, stopped))
        }
        _ => Ok((Vec::new(), None)),
    }
}

/// The planner's counters of every rank's replay, summed (the largest burst: the largest).
fn sum(all: &[ReplayStats]) -> ReplayStats {
    let mut total = ReplayStats::default();
    for s in all {
        total.moved += s.moved;
        total.clamped += s.clamped;
        total.late += s.late;
        total.same_time += s.same_time;
        total.largest_same_time_run = total.largest_same_time_run.max(s.largest_same_time_run);
    }
    total
}
