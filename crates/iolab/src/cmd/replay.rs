//! `iolab trace replay TRACE TARGET`: a block trace replayed on a file or device, with the
//! storage-bench metrics (data rate, average latency, share of I/Os over 10 and 100 ms).
//!
//! Two passes over the trace, each streaming (memory does not grow with its length): the first
//! counts requests and finds the largest one and the recorded queue depth, the second replays.

use crate::cmd::run::SafetyFlags;
use crate::cmd::trace::InputArgs;
use crate::output::Rules;
use crate::session;
use crate::subject::{is_model, ModelState, Subject};
use anyhow::{bail, Result};
use clap::Args;
use iolab_core::job::{Access, JobSpec};
use iolab_core::result::{ReplayAdjustments, ReplaySummary};
use iolab_core::size::ByteSize;
use iolab_trace::replay::{recorded_queue_depth, ReplayStats, STORAGE_BENCH_IDLE_CAP_NS};
use iolab_trace::{Op, Reorder, DEFAULT_WINDOW};
use std::path::{Path, PathBuf};

/// `iolab trace replay`.
#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// File, block device or model (`sim:DRIVE@PLATFORM[/PORT]`) to replay on.
    pub(crate) target: PathBuf,
    /// Issue requests as fast as possible, keeping `--qd` in flight, instead of at their
    /// recorded times.
    #[arg(long)]
    pub(crate) as_fast_as_possible: bool,
    /// Replay speed-up for timestamp-faithful replay (2 = twice as fast).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) time_scale: f64,
    /// Shorten idle gaps longer than this (ms of trace time), as the storage bench does; 0
    /// keeps every gap.
    #[arg(long, default_value_t = STORAGE_BENCH_IDLE_CAP_NS as f64 / 1e6)]
    pub(crate) idle_cap_ms: f64,
    /// Requests in flight at most (default: the trace's recorded queue depth when
    /// replaying as fast as possible, its reads' own with --reads-only, else 256 so that the
    /// timestamps set the pace). 1–4096, as
    /// a job's queue depth (checked here, so that a refusal names --qd, not the job's key).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub(crate) qd: Option<u32>,
    /// Prepare the target first: `empty` (purge: hole punching for a file, discard for a device
    /// offered with --destroy-data) or `filled` (one sequential pass of incompressible writes).
    /// A model taken as-is starts full, as `run` starts it (see --model-state).
    #[arg(long, default_value = "as-is", value_parser = ["as-is", "empty", "filled"])]
    pub(crate) target_state: String,
    /// Size of the file to create when the target does not exist.
    #[arg(long, default_value = "1g")]
    pub(crate) size: ByteSize,
    /// Replay only the reads (nothing is written).
    #[arg(long)]
    pub(crate) reads_only: bool,
    #[command(flatten)]
    pub(crate) safety: SafetyFlags,
    #[command(flatten)]
    pub(crate) mpi: crate::mpi::ScaleFlags,
}

/// The largest request a replay issues whole (its slot buffer's size).
const MAX_SLOT_BYTES: u64 = 64 << 20;

mod feed;
pub(crate) use feed::Feed;

/// What the first pass over the trace found, and the job that replays it.
pub(crate) struct TracePlan {
    /// Requests to replay (reads, and writes unless --reads-only).
    pub planned: u64,
    /// Trims and flushes left out.
    skipped: u64,
    /// The longest request: its length, op and line.
    pub longest: Option<(u64, Op, u64)>,
    /// The highest byte any request reaches.
    trace_span: u64,
    /// The step all timestamps are multiples of (0: one timestamp).
    time_step: u64,
    /// The trace's volumes (devices).
    volumes: u64,
    format: iolab_trace::Format,
    recorded: iolab_trace::replay::RecordedQd,
    pub qd: u32,
    /// Notes for the result: bad lines skipped, no recorded depth.
    pub notes: Vec<String>,
    /// The replay's job frame (span resolved once the target is open).
    pub job: iolab_core::job::Job,
    /// The fill of `--target-state filled`, which the target is opened for unless as-is.
    pub fill: iolab_core::job::Job,
}

/// Runs `iolab trace replay`; returns the exit code.
pub fn run(args: ReplayArgs) -> Result<i32> {
    let mut plan = plan(&args)?;
    crate::subject::check_buffer_memory(&args.target, &plan.job)?;
    // A file to create has the size asked for: checked before it is created.
    if !args.target.exists() && !is_model(&args.target) {
        check_longest_fits(&args.input.file, plan.longest, args.size.0)?;
    }
    let rules = Rules::new(&[&args.input.file, &args.target], args.safety.overwrite);
    session::check_output(args.safety.json.as_deref(), &rules)?;
    crate::fio_out::check(&args.safety, &rules)?;
    iolab_engine::sys::install_interrupt_handler();
    let mut subject = if args.target_state == "as-is" {
        Subject::open(
            &args.target,
            &mut plan.job,
            &args.safety,
            args.model_state(),
            false,
        )?
    } else {
        let subject = Subject::open(
            &args.target,
            &mut plan.fill,
            &args.safety,
            args.model_state(),
            false,
        )?;
        plan.job.resolve_span(subject.size_bytes())?;
        plan.job.check_alignment(subject.logical_block_bytes())?;
        subject
    };
    // A request larger than the whole target cannot be placed on it: cut, it would no longer
    // be the trace's; refused before anything is written, with where it is.
    check_longest_fits(&args.input.file, plan.longest, subject.size_bytes())?;
    let mut prepared = Vec::new();
    let mut fill_stopped = None;
    match args.target_state.as_str() {
        "empty" => match subject.purge(&args.safety) {
            Ok(done) => prepared.push(format!("target emptied first: {done}")),
            Err(why) => bail!("cannot empty the target: {why}"),
        },
        "filled" => {
            plan.fill.resolve_span(subject.size_bytes())?;
            let r = subject.run_job(&plan.fill, "fill", None)?;
            let (note, stopped) = fill_outcome(&mut subject, &plan.fill, &r.result);
            prepared.push(note.clone());
            fill_stopped = stopped.then_some(note);
        }
        _ => {}
    }
    // The frame is taken once the target is prepared, so a model's recorded state is the one
    // the replay starts from.
    let mut result = subject.new_result("replay", !args.safety.no_probe);
    result.notes.extend(prepared);
    let (feed, worker) = Feed::new(
        &args,
        &plan,
        0,
        subject.size_bytes(),
        subject.logical_block_bytes(),
    )?;
    let run = subject.run_workers(&plan.job, vec![worker])?;
    let mut j = run.result;
    feed.mark_stopped(&mut j);
    summarize(
        &mut result,
        j,
        &plan,
        &args,
        feed.stats(),
        subject.size_bytes(),
        1,
    );
    subject.describe_into(&mut result);
    subject.note_replay_validation(&mut result);
    session::settle(&mut result);
    // What stopped first says why: the replay after a stopped fill stops too (Ctrl-C), or
    // runs on a target that is not the one asked for.
    if let Some(why) = fill_stopped {
        result.complete = false;
        result.incomplete_reason = Some(why);
    }
    show_and_save(&result, &args, &rules, "")
}

impl ReplayArgs {
    /// `--target-state` prepares the drive: a model starts fresh from the factory for it to
    /// empty or fill, and full when taken as it is, as `run` and `quick` start it (a drive in
    /// use holds data where the trace reads; a fresh model would answer those reads from
    /// nothing), unless --model-state says otherwise.
    pub(crate) fn model_state(&self) -> ModelState {
        if self.target_state == "as-is" {
            ModelState::Full
        } else {
            ModelState::Fresh
        }
    }
}

/// The checks of the options and the first pass over the trace: what it asks for, and the job
/// frame that replays it.
pub(crate) fn plan(args: &ReplayArgs) -> Result<TracePlan> {
    if args.input.file.as_os_str() == "-" {
        bail!("replay reads the trace twice; give a file, not standard input");
    }
    if !(args.time_scale.is_finite() && args.time_scale > 0.0) {
        bail!("--time-scale {} must be a positive number", args.time_scale);
    }
    if !(args.idle_cap_ms.is_finite() && args.idle_cap_ms >= 0.0) {
        bail!(
            "--idle-cap-ms {} must be zero (keep every gap) or more milliseconds",
            args.idle_cap_ms
        );
    }
    let pass = first_pass(args)?;
    if pass.planned == 0 {
        bail!(
            "{}: no reads or writes to replay",
            args.input.file.display()
        );
    }
    // In time order, as the replay goes: a file out of order by a few records (SYSTOR's and
    // Tencent's are) otherwise shows depths that were never there (1.85 read as 2.57).
    // Of the requests replayed only: with --reads-only the depth is the reads' own, reads
    // outstanding as each read arrived, by the trace's completion times. The writes are not
    // replayed, so they hold no slot of the replay's queue; counted, a trace's writes made
    // reads recorded one at a time replay at QD4.
    let recorded = recorded_queue_depth(
        Reorder::new(args.input.open()?, DEFAULT_WINDOW)
            .filter_map(|r| r.ok())
            .filter(|r| !(args.reads_only && r.op == Op::Write)),
        1,
    );
    let qd = args.qd.unwrap_or(if args.as_fast_as_possible {
        recorded.suggested()
    } else {
        256
    });
    let mut notes: Vec<String> = pass.bad_note.clone().into_iter().collect();
    // Without completion times there is no recorded depth to keep: say what ran instead.
    if args.as_fast_as_possible && args.qd.is_none() && !recorded.measured {
        notes.push(format!(
            "the trace ({}) records no completion times, so no queue depth: replayed as fast \
             as possible at QD{qd}; set --qd N to replay at another depth",
            pass.format
        ));
    }
    let (job, fill) = replay_jobs(args, &pass, qd)?;
    Ok(TracePlan {
        planned: pass.planned,
        skipped: pass.skipped,
        longest: pass.longest,
        trace_span: pass.trace_span,
        time_step: pass.time_step,
        volumes: pass.volumes,
        format: pass.format,
        recorded,
        qd,
        notes,
        job,
        fill,
    })
}

/// What the first pass counts.
struct FirstPass {
    planned: u64,
    writes: u64,
    skipped: u64,
    sizes: std::collections::BTreeMap<u64, u64>,
    sequential: u64,
    volumes: u64,
    longest: Option<(u64, Op, u64)>,
    trace_span: u64,
    time_step: u64,
    format: iolab_trace::Format,
    bad_note: Option<String>,
}

/// Pass 1: what the trace asks for, with the sizes its requests go out in (4 KiB units, as
/// aligned below, at most the 64 MiB slot).
fn first_pass(args: &ReplayArgs) -> Result<FirstPass> {
    let (mut planned, mut writes, mut skipped) = (0u64, 0u64, 0u64);
    let mut sizes = std::collections::BTreeMap::<u64, u64>::new();
    // Requests that start where the device's previous one ended, in file order (the job
    // says how sequential the trace is, as analyze would, roughly).
    let (mut sequential, mut ends) = (0u64, std::collections::HashMap::<u32, u64>::new());
    // The longest request (its length, op and line, to refuse one larger than the target), the
    // highest byte any request reaches, and the step all timestamps are multiples of (their
    // greatest common divisor, from the first: 1 s for Tencent's whole seconds).
    let mut longest: Option<(u64, Op, u64)> = None;
    let mut trace_span = 0u64;
    let (mut first_t, mut time_step) = (None::<u64>, 0u64);
    let mut reader = args.input.open()?;
    // The format read (named or detected), by its command-line name, for the result.
    let format = reader.format();
    while let Some(rec) = reader.next_record()? {
        match rec.op {
            Op::Read => {}
            Op::Write if !args.reads_only => writes += 1,
            Op::Write => continue,
            _ => {
                skipped += 1;
                continue;
            }
        }
        planned += 1;
        if longest.is_none_or(|(len, _, _)| rec.len_bytes > len) {
            longest = Some((rec.len_bytes, rec.op, reader.position()));
        }
        let t0 = *first_t.get_or_insert(rec.time_ns);
        time_step = gcd(time_step, rec.time_ns.abs_diff(t0));
        // Saturating: an absurd offset or length (a corrupt record) must not wrap or panic.
        let end = rec.end_bytes();
        trace_span = trace_span.max(end);
        if ends.insert(rec.device, end) == Some(rec.offset_bytes) {
            sequential += 1;
        }
        *sizes
            .entry((rec.len_bytes.min(MAX_SLOT_BYTES).div_ceil(4096) * 4096).max(4096))
            .or_default() += 1;
    }
    // With --skip-bad the result would otherwise read as the whole trace replayed. This note
    // and the others go into the result's notes, which the table prints (said here as well,
    // they were printed twice).
    let bad_note = (reader.bad_records() > 0).then(|| {
        let n = reader.bad_records();
        format!(
            "skipped {n} bad line{} of the trace (--skip-bad)",
            if n == 1 { "" } else { "s" }
        )
    });
    Ok(FirstPass {
        planned,
        writes,
        skipped,
        sizes,
        sequential,
        volumes: ends.len() as u64,
        longest,
        trace_span,
        time_step,
        format,
        bad_note,
    })
}

/// The replay's job frame and the fill's. The replay's: limits none (the trace ends it), data
/// random, and the trace's own read share and request sizes, so the result says what ran (the
/// largest is the slot size).
fn replay_jobs(
    args: &ReplayArgs,
    pass: &FirstPass,
    qd: u32,
) -> Result<(iolab_core::job::Job, iolab_core::job::Job)> {
    let planned = pass.planned;
    let bssplit = pass
        .sizes
        .iter()
        .map(|(bytes, n)| format!("{bytes}/{n}"))
        .collect::<Vec<_>>()
        .join(":");
    let random_pct = 100.0 * (planned - pass.sequential) as f64 / planned as f64;
    let access = match (pass.writes, planned - pass.writes, random_pct >= 50.0) {
        (0, _, true) => Access::RandRead,
        (0, _, false) => Access::Read,
        (_, 0, true) => Access::RandWrite,
        (_, 0, false) => Access::Write,
        (_, _, true) => Access::RandRw,
        (_, _, false) => Access::Rw,
    };
    let new_file = !args.target.exists() && !is_model(&args.target);
    let job = JobSpec {
        name: Some(format!("replay {}", args.input.file.display())),
        access: Some(access),
        read_pct: matches!(access, Access::RandRw | Access::Rw)
            .then(|| 100.0 * (planned - pass.writes) as f64 / planned as f64),
        random_pct: Some(random_pct),
        bssplit: Some(bssplit),
        queue_depth: Some(qd),
        size: new_file.then_some(args.size),
        ..JobSpec::default()
    }
    .validate()?;
    // Emptying or filling the target writes all of it, whatever the trace does (a read-only
    // trace, --reads-only): the target is then opened for that, so the guard and the file
    // checks judge a writer.
    let fill = JobSpec {
        name: Some("fill".into()),
        access: Some(Access::Write),
        block_size: Some(ByteSize(128 << 10)),
        queue_depth: Some(8),
        size: job.span_bytes.map(ByteSize),
        ..JobSpec::default()
    }
    .validate()?;
    Ok((job, fill))
}

/// The note of a fill before the replay, and whether it stopped part-way (Ctrl-C, an I/O
/// error: the target is then not what the replay was asked to start from, and the result
/// must not say it was). Records the model's state.
pub(crate) fn fill_outcome(
    subject: &mut Subject,
    fill: &iolab_core::job::Job,
    r: &iolab_core::result::JobResult,
) -> (String, bool) {
    let written = iolab_core::size::human_size(r.write.bytes);
    let took = r.measured_ns as f64 / 1e9;
    if r.complete {
        subject.set_model_state("full (one sequential pass of 128 KiB writes)");
        return (
            format!("target filled first: {written} in {took:.1} s"),
            false,
        );
    }
    let why = r.stop_reason.as_deref().unwrap_or("stopped early");
    subject.set_model_state(&format!(
        "partly filled (a sequential pass of 128 KiB writes stopped after {written})"
    ));
    let note = format!(
        "the fill before the replay stopped ({why}) after {written} of {} in {took:.1} s: the \
         target is only partly filled",
        iolab_core::size::human_size(fill.span())
    );
    (note, true)
}

/// Puts the replay's job `j` (the aggregate of `ranks` replays of the whole trace, each on
/// its own share of `target_bytes`) into `result`, with the storage-bench figures and the
/// notes of what the replay changed of the trace (`stats`: the planner's counters, summed
/// over the ranks).
pub(crate) fn summarize(
    result: &mut iolab_core::result::RunResult,
    j: iolab_core::result::JobResult,
    plan: &TracePlan,
    args: &ReplayArgs,
    stats: ReplayStats,
    target_bytes: u64,
    ranks: u64,
) {
    result.notes.extend(plan.notes.iter().cloned());
    // Issued with no gap after their predecessor, they bunch up: the timing (and so the
    // latencies) are no longer the trace's, which the figures alone would not show. (As fast
    // as possible there is no timing to lose.)
    let late = stats.late;
    if late > 0 && !args.as_fast_as_possible {
        let note = format!(
            "{late} records were out of time order beyond the reorder window ({DEFAULT_WINDOW} \
             records) and were issued with no gap after their predecessor; sort the trace first \
             (iolab trace convert TRACE --to FORMAT --sort-window N -o sorted) for its own timing"
        );
        result.notes.push(note);
    }
    let adjustments = ReplayAdjustments {
        offsets_moved: stats.moved,
        trace_span_bytes: plan.trace_span,
        sizes_clamped: stats.clamped,
        volumes_merged: if plan.volumes > 1 { plan.volumes } else { 0 },
        timestamp_step_ns: (plan.time_step > 0).then_some(plan.time_step),
        requests_at_a_shared_time: stats.same_time,
        largest_burst: stats.largest_same_time_run,
    };
    result.notes.extend(adjustment_notes(
        &adjustments,
        target_bytes,
        !args.as_fast_as_possible,
    ));
    let ios = j.read.ios + j.write.ios;
    // Shares of the exact counts kept as each I/O completed (the histogram's bucket holding
    // 10 ms spans 9.961–10.027 ms: a 10.013 ms read read as not over).
    let share = |n: u64| {
        if ios == 0 {
            0.0
        } else {
            100.0 * n as f64 / ios as f64
        }
    };
    result.replay = Some(ReplaySummary {
        trace: args.input.file.display().to_string(),
        format: plan.format.name().into(),
        mode: if args.as_fast_as_possible {
            "as-fast-as-possible"
        } else {
            "timestamps"
        }
        .into(),
        time_scale: args.time_scale,
        idle_cap_ms: (args.idle_cap_ms > 0.0 && !args.as_fast_as_possible)
            .then_some(args.idle_cap_ms),
        queue_depth: plan.qd,
        recorded_queue_depth: plan.recorded.measured.then_some(plan.recorded.mean_busy),
        target_state: args.target_state.clone(),
        planned_ios: plan.planned * ranks,
        skipped_trims_and_flushes: plan.skipped * ranks,
        data_rate_mb_per_s: j.total_mb_per_s(),
        avg_latency_us: j.metric("lat_mean_us").unwrap_or(0.0),
        pct_over_10ms: share(j.ios_over_10ms()),
        pct_over_100ms: share(j.ios_over_100ms()),
        adjustments,
    });
    result.jobs.push(j);
}

/// Shows the replay's table (with `extra` lines, the hosts of a run under mpirun) and saves
/// the result; returns the exit code.
pub(crate) fn show_and_save(
    result: &iolab_core::result::RunResult,
    args: &ReplayArgs,
    rules: &Rules,
    extra: &str,
) -> Result<i32> {
    let mut text = iolab_report::terminal::run_table(result);
    text += extra;
    if let Some(r) = &result.replay {
        let ios: u64 = result.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
        text += &format!(
            "storage bench: {:.2} MB/s, average latency {:.1} µs, {:.2} % of I/Os over 10 ms, {:.3} % over 100 ms ({} of {} planned requests)\n",
            r.data_rate_mb_per_s, r.avg_latency_us, r.pct_over_10ms, r.pct_over_100ms, ios, r.planned_ios
        );
    }
    session::show(&text, args.safety.stdout_document());
    let saved = session::save(result, args.safety.json.as_deref(), rules)?;
    say!("result saved to {saved}");
    crate::fio_out::save(result, &args.safety, rules)?;
    Ok(session::exit_code(result))
}

/// Refuses the trace's longest request (`(length, op, line)`) when the target cannot hold it.
pub(crate) fn check_longest_fits(
    trace: &Path,
    longest: Option<(u64, Op, u64)>,
    target_bytes: u64,
) -> Result<()> {
    if let Some((len, op, line)) = longest {
        if len > target_bytes {
            bail!(
                "{}:{line}: a {} of {} is larger than the target ({}); replay on a larger \
                 target (--size for a new file)",
                iolab_core::text::escape_control(&trace.display().to_string()),
                op.name(),
                iolab_core::size::binary_size(len),
                iolab_core::size::binary_size(target_bytes)
            );
        }
    }
    Ok(())
}

/// Greatest common divisor (`gcd(0, n) = n`), for the timestamps' step.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A timestamp step as people read it: "1 s", "1 ms", "100 µs".
fn step_text(ns: u64) -> String {
    match ns {
        n if n % 1_000_000_000 == 0 => format!("{} s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{} ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{} µs", n / 1_000),
        n => format!("{n} ns"),
    }
}

/// The notes that say what the replay changed of the trace to fit the target: requests moved
/// off their offsets, cut to the request buffer, volumes merged, and bursts made by coarse
/// timestamps (when `paced`: as fast as possible there is no timing to lose). Each is counted
/// in the result's `replay.adjustments` as well.
fn adjustment_notes(a: &ReplayAdjustments, target_bytes: u64, paced: bool) -> Vec<String> {
    let size = iolab_core::size::binary_size;
    let mut notes = Vec::new();
    if a.volumes_merged > 1 {
        notes.push(format!(
            "the trace's {} volumes (devices) were replayed onto this one target, each at its \
             own offsets: their requests share and overlap its space, and their queues are one",
            a.volumes_merged
        ));
    }
    if a.offsets_moved > 0 {
        let reach = if a.trace_span_bytes > target_bytes {
            format!(
                "the trace reaches {} and the target holds {}: ",
                size(a.trace_span_bytes),
                size(target_bytes)
            )
        } else {
            String::new()
        };
        notes.push(format!(
            "{reach}{} {} not issued at the trace's offset (wrapped modulo the target's \
             size, or moved down to end at it); replay on a target of at least {} to keep \
             every offset",
            a.offsets_moved,
            if a.offsets_moved == 1 {
                "request was"
            } else {
                "requests were"
            },
            size(a.trace_span_bytes)
        ));
    }
    if a.sizes_clamped > 0 {
        notes.push(format!(
            "{} {} longer than the replay's {} request buffer {} cut to it",
            a.sizes_clamped,
            if a.sizes_clamped == 1 {
                "request"
            } else {
                "requests"
            },
            size(MAX_SLOT_BYTES),
            if a.sizes_clamped == 1 { "was" } else { "were" }
        ));
    }
    // Only coarse steps: a trace timed in µs whose requests share a time is recording bursts.
    if let Some(step) = a.timestamp_step_ns {
        if paced && step >= 1_000_000 && a.requests_at_a_shared_time > 0 {
            notes.push(format!(
                "the trace's timestamps are in steps of {}: {} requests shared their timestamp \
                 with the one before and were issued at once (up to {} together), bursts the \
                 recorded workload may not have had; --as-fast-as-possible replays without \
                 the timing",
                step_text(step),
                a.requests_at_a_shared_time,
                a.largest_burst
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_timestamps_are_noted_only_when_requests_share_them_in_paced_replay() {
        let a = ReplayAdjustments {
            timestamp_step_ns: Some(1_000_000_000),
            requests_at_a_shared_time: 48_703,
            largest_burst: 900,
            ..ReplayAdjustments::default()
        };
        let notes = adjustment_notes(&a, 1 << 30, true);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("the trace's timestamps are in steps of 1 s: 48703 requests"));
        assert!(adjustment_notes(&a, 1 << 30, false).is_empty());
        let fine = ReplayAdjustments {
            timestamp_step_ns: Some(100),
            ..a.clone()
        };
        assert!(adjustment_notes(&fine, 1 << 30, true).is_empty());
    }

    #[test]
    fn a_span_wrapped_into_a_smaller_target_says_both_sizes() {
        let a = ReplayAdjustments {
            offsets_moved: 12,
            trace_span_bytes: 10 << 30,
            volumes_merged: 3,
            ..ReplayAdjustments::default()
        };
        let notes = adjustment_notes(&a, 256 << 20, true);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("the trace's 3 volumes"),
            "{}",
            notes[0]
        );
        assert!(
            notes[1].starts_with(
                "the trace reaches 10.0 GiB and the target holds 256 MiB: 12 requests were"
            ),
            "{}",
            notes[1]
        );
    }
}
