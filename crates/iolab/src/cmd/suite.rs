//! `iolab suite NAME|FILE [TARGET]`: a reviewer's method, end to end.

use crate::cmd::run::SafetyFlags;
use crate::output::Rules;
use crate::session;
use crate::subject::{ModelState, Subject};
use anyhow::{Context, Result};
use clap::Args;
use iolab_core::job::{Access, BufferedHint, JobSpec};
use iolab_core::result::{JobResult, RunResult, TargetInfo};
use iolab_core::size::{format_size, human_size, ByteSize};
use iolab_engine::fileset::{run_file_op, FileOp, FileSet};
use iolab_engine::sys::INTERRUPTED;
use iolab_suite::{run_suite, Executor, SkipOrFail};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The stem of the test file `suite` creates when no target is given: `iolab-suite.PID.iolab-tmp`
/// (removed afterwards), or `iolab-suite.iolab-tmp` with `--keep` (see [`crate::leftover`]).
pub const TEST_FILE_STEM: &str = "iolab-suite";

/// `iolab suite`.
#[derive(Args, Clone, Debug)]
pub struct SuiteArgs {
    /// A built-in suite (cdm, atto, asssd, anandtech2015, xbit2011, snia-pts, filecopy) or a
    /// suite file.
    pub suite: Option<String>,
    /// File, block device or model (`sim:DRIVE@PLATFORM[/PORT]`); a directory for filecopy.
    /// Default: a test file (or directories) created here and removed afterwards.
    pub target: Option<PathBuf>,
    /// More models: the suite runs on each (a sweep), one result each; under mpirun the
    /// targets are dealt to the ranks and rank 0 saves every result.
    #[arg(value_name = "MORE_MODELS")]
    pub more_targets: Vec<PathBuf>,
    /// Shrink every duration and size by this factor, keeping the structure (demos, tests).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Size of a test file the suite creates.
    #[arg(long, default_value = "1g")]
    pub size: ByteSize,
    /// List the built-in suites and exit.
    #[arg(long)]
    pub list: bool,
    /// For file-set suites: where the "far" copies go (another filesystem, ideally).
    #[arg(long, value_name = "DIR")]
    pub far: Option<PathBuf>,
    /// Keep the test file (as iolab-suite.iolab-tmp, which later runs use, and keep) or the
    /// directories iolab created.
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub safety: SafetyFlags,
    #[command(flatten)]
    pub mpi: crate::mpi::ScaleFlags,
}

/// Runs suite jobs on a real target or a model.
struct SubjectExecutor<'a> {
    subject: &'a mut Subject,
    safety: &'a SafetyFlags,
    notes: Vec<String>,
    /// What a refused unaligned block size suggests on this target.
    buffered_hint: BufferedHint,
}

impl Executor for SubjectExecutor<'_> {
    fn target_bytes(&self) -> u64 {
        self.subject.size_bytes()
    }

    fn run_job(&mut self, spec: JobSpec) -> Result<JobResult, SkipOrFail> {
        let job = prepare_job(self.subject, spec, self.buffered_hint, &mut self.notes)?;
        let expected = job.duration_s.map(|d| d + job.ramp_s);
        self.subject
            .run_job(&job, &job.name, expected)
            .map(|r| r.result)
            .map_err(|e| SkipOrFail::Fail(format!("{e:#}")))
    }

    fn purge(&mut self) -> Result<String, String> {
        self.subject.purge(self.safety)
    }

    fn idle(&mut self, seconds: f64) {
        self.subject.idle(seconds);
    }

    fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

/// A suite's job made ready for `subject`: validated, its span resolved against the target
/// (a span past the end clamped, said in `notes`), its alignment checked.
pub(crate) fn prepare_job(
    subject: &Subject,
    spec: JobSpec,
    buffered_hint: BufferedHint,
    notes: &mut Vec<String>,
) -> Result<iolab_core::job::Job, SkipOrFail> {
    let mut job = spec
        .validate_with(buffered_hint)
        .map_err(|e| SkipOrFail::Fail(e.to_string()))?;
    let size = subject.size_bytes();
    if job.offset_bytes + job.span() > size {
        let clamped = size.saturating_sub(job.offset_bytes);
        notes.push(format!(
            "job '{}': span {} exceeds the target; clamped to {}",
            job.name,
            format_size(job.span()),
            format_size(clamped)
        ));
        job.span_bytes = None;
    }
    job.resolve_span(size)
        .map_err(|e| SkipOrFail::Skip(e.message))?;
    job.check_alignment_with(subject.logical_block_bytes(), buffered_hint)
        .map_err(|e| SkipOrFail::Skip(e.message))?;
    Ok(job)
}

/// Runs file-set steps in a directory; block-level jobs are skipped.
struct DirExecutor {
    root: PathBuf,
    far: PathBuf,
    seed: u64,
}

impl Executor for DirExecutor {
    fn target_bytes(&self) -> u64 {
        0
    }

    fn run_job(&mut self, _spec: JobSpec) -> Result<JobResult, SkipOrFail> {
        Err(SkipOrFail::Skip(
            "block-level jobs need a file or block device target, not a directory".into(),
        ))
    }

    fn file_op(
        &mut self,
        files: &iolab_suite::spec::FilesSpec,
        file_bytes: u64,
    ) -> Result<JobResult, SkipOrFail> {
        let op: FileOp = files.op.parse().map_err(SkipOrFail::Fail)?;
        let set = FileSet {
            name: files.set.clone(),
            count: files.count,
            file_bytes,
        };
        self.seed += 1;
        let (root, far, seed) = (&self.root, &self.far, self.seed);
        session::with_progress(&format!("{} {}", files.set, files.op), None, |_| {
            run_file_op(root, far, &set, op, seed)
                .map_err(|e| SkipOrFail::Fail(format!("{} in {}: {e}", files.op, root.display())))
        })
    }

    fn purge(&mut self) -> Result<String, String> {
        Err("a directory target is not purged".into())
    }

    fn idle(&mut self, seconds: f64) {
        crate::subject::sleep_unless_interrupted(seconds);
    }

    fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::Relaxed)
    }
}

/// Removes the directories a file-set suite made, also after an error or Ctrl-C.
pub(crate) struct RemoveDirsOnDrop(pub(crate) Vec<PathBuf>);

impl Drop for RemoveDirsOnDrop {
    fn drop(&mut self) {
        for d in &self.0 {
            if let Err(e) = std::fs::remove_dir_all(d) {
                say!("warning: could not remove {}: {e}", d.display());
            }
        }
    }
}

/// Refuses a file-set suite up front when its sets and copies (which stay until it ends) do not
/// fit the free space under `near` and `far` (together, when both are on one filesystem): a
/// full filesystem fails the run half-way and can upset whatever else writes there. `copies`:
/// the sets written there (one per rank under mpirun).
pub(crate) fn check_file_room(
    suite: &iolab_suite::SuiteSpec,
    scale: f64,
    near: &Path,
    far: &Path,
    copies: u64,
) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut space = iolab_suite::plan::file_space(suite, scale);
    space.near *= copies;
    space.far *= copies;
    let device = |dir: &Path| std::fs::metadata(dir).map(|m| m.dev()).ok();
    let one_filesystem = device(near).is_some() && device(near) == device(far);
    let mut needs = vec![(near, space.near)];
    if one_filesystem {
        needs[0].1 += space.far;
    } else {
        needs.push((far, space.far));
    }
    for (dir, needed) in needs {
        let Ok(free) = iolab_engine::sys::free_bytes(dir) else {
            continue; // not knowing is no reason to refuse: a full disk still fails the step
        };
        if needed > free {
            anyhow::bail!(
                "suite {} writes {needed} bytes ({}) under {} (its file sets and their copies, \
                 kept until it ends), but that filesystem has {free} bytes ({}) free: free some \
                 space, give a directory on a larger filesystem (or --far for the far copies), \
                 or shrink the files with --scale",
                suite.name,
                human_size(needed),
                dir.display(),
                human_size(free),
            );
        }
    }
    Ok(())
}

/// Refuses a file-set suite's directory `parent` (and `--far`) unless both are directories on
/// a real drive.
pub(crate) fn check_directory_target(
    suite: &iolab_suite::SuiteSpec,
    parent: &Path,
    far: Option<&Path>,
) -> Result<()> {
    if crate::subject::is_model(parent) {
        anyhow::bail!(
            "suite {} works through a filesystem (it times whole files), so it cannot run on a \
             model such as {}: give a directory on a real drive; the block-level suites run on \
             models (iolab suite --list)",
            suite.name,
            parent.display()
        );
    }
    if !parent.is_dir() {
        anyhow::bail!(
            "suite {} works through a filesystem: give a directory, not {}",
            suite.name,
            parent.display()
        );
    }
    if let Some(far) = far.filter(|f| !f.is_dir()) {
        anyhow::bail!(
            "--far {}: copies far go to a directory there; give an existing directory",
            far.display()
        );
    }
    Ok(())
}

/// Runs a file-set suite (filecopy) in fresh directories under `target` (default: here).
fn run_in_directory(
    args: &SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    rules: &Rules,
) -> Result<i32> {
    let parent = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    check_directory_target(suite, &parent, args.far.as_deref())?;
    // Never touch the user's files: everything happens in directories made for this run.
    let tag = format!("{}-{}", suite.name, std::process::id());
    let root = parent.join(format!("iolab-{tag}.iolab-tmp"));
    let far = args
        .far
        .as_ref()
        .unwrap_or(&parent)
        .join(format!("iolab-{tag}-far.iolab-tmp"));
    check_file_room(
        suite,
        args.scale,
        &parent,
        args.far.as_deref().unwrap_or(&parent),
        1,
    )?;
    // Each directory is removed as soon as it exists, so a failure to make the next one
    // leaves nothing behind.
    let mut cleanup = RemoveDirsOnDrop(Vec::new());
    for d in [&root, &far] {
        std::fs::create_dir(d).with_context(|| format!("creating {}", d.display()))?;
        if !args.keep {
            cleanup.0.push(d.clone());
        }
    }
    let info = TargetInfo {
        path: session::canonical_path(&root),
        kind: "directory".into(),
        engine: "filesystem".into(),
        ..TargetInfo::default()
    };
    let mut result = session::new_result_for(
        &format!("suite:{}", suite.name),
        info,
        Vec::new(),
        !args.safety.no_probe,
    );
    let mut exec = DirExecutor { root, far, seed: 1 };
    let outcome = run_suite(suite, args.scale, &mut exec, &mut |_| {});
    finish(result_from(&mut result, outcome), args, rules)
}

/// Puts a suite run's jobs, notes and summary into its result.
pub(crate) fn result_from(
    result: &mut RunResult,
    outcome: iolab_suite::SuiteRun,
) -> &mut RunResult {
    result.jobs = outcome.jobs;
    result.notes.extend(outcome.notes);
    result.suite = Some(outcome.summary);
    if let Some(why) = outcome.incomplete {
        result.complete = false;
        result.incomplete_reason = Some(why);
    }
    result
}

/// Settles, prints and saves a suite result; returns the exit code.
pub(crate) fn finish(result: &mut RunResult, args: &SuiteArgs, rules: &Rules) -> Result<i32> {
    session::settle(result);
    session::show(
        &iolab_report::terminal::suite_table(result),
        args.safety.stdout_document(),
    );
    let saved = session::save(result, args.safety.json.as_deref(), rules)?;
    say!("result saved to {saved}");
    crate::fio_out::save(result, &args.safety, rules)?;
    Ok(session::exit_code(result))
}

/// The steps whose bssplit weights do not add up to 100, and the shares they are taken as:
/// said on the terminal now, and kept in the result's notes (as `run` does).
fn bssplit_notes(suite: &iolab_suite::SuiteSpec, scale: f64) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    for (_, step) in suite.steps().filter(|(_, s)| s.files.is_none()) {
        let jobs = iolab_suite::plan::step_jobs(suite, step, scale)?;
        if let Some(note) = jobs.iter().find_map(|j| j.spec.bssplit_note()) {
            let note = format!("suite {}, step '{}': {note}", suite.name, step.name);
            say!("warning: {note}");
            notes.push(note);
        }
    }
    Ok(notes)
}

/// Runs `iolab suite`; returns the exit code.
pub fn run(args: SuiteArgs) -> Result<i32> {
    if args.list || args.suite.is_none() {
        return list_suites();
    }
    let under_mpi = crate::mpi::coordinated("suite", &args.mpi)?;
    let (suite, notes) = load_suite(&args)?;
    if !args.more_targets.is_empty() {
        return crate::mpi::suite_sweep(&args, &suite, notes, under_mpi);
    }
    // Said before anything is made or run: a suite's name does not tell a minute from days.
    let length = iolab_suite::plan::plan_length(&suite, args.scale)?;
    let modelled = args.target.as_deref().is_some_and(crate::subject::is_model);
    say!("{}", length.describe(&suite.name, modelled));
    // The suite's own file (not a built-in name) and the target are inputs the result must
    // not replace.
    let suite_file = Path::new(args.suite.as_deref().unwrap_or_default());
    let in_directory = suite.steps().any(|(_, s)| s.files.is_some());
    let target = match &args.target {
        Some(target) => target.clone(),
        // A file-set suite makes its own directories; this name only keeps the output off it.
        None if in_directory => crate::leftover::kept_test_file(TEST_FILE_STEM),
        None => crate::leftover::default_test_file(TEST_FILE_STEM, args.keep),
    };
    let inputs: Vec<&Path> = [suite_file, &target]
        .into_iter()
        .filter(|p| p.is_file() || *p == target)
        .collect();
    let rules = Rules::new(&inputs, args.safety.overwrite);
    session::check_output(args.safety.json.as_deref(), &rules)?;
    crate::fio_out::check(&args.safety, &rules)?;
    // The report goes beside a JSON file: refused now if it would take the JSON's place or a
    // file of the user's, rather than after a run of many minutes.
    if let Some(p) = args.safety.json.as_deref().filter(|p| *p != Path::new("-")) {
        crate::cmd::report::check_beside(p, &rules)?;
    }
    if in_directory {
        if under_mpi {
            let inputs = inputs.iter().map(|p| p.to_path_buf()).collect();
            return crate::mpi::suite_in_directories(&args, &suite, notes, inputs);
        }
        iolab_engine::sys::install_interrupt_handler();
        return run_in_directory(&args, &suite, &rules);
    }
    iolab_engine::sys::install_interrupt_handler();
    let prep = target_job(&args, &suite, &target)?;
    let keep = args.keep || args.target.is_some();
    if under_mpi {
        let inputs = inputs.iter().map(|p| p.to_path_buf()).collect();
        let start = crate::mpi::SuiteStart {
            args: &args,
            suite: &suite,
            target: &target,
            own: args.target.is_none() && target != crate::leftover::kept_test_file(TEST_FILE_STEM),
            prep,
            keep,
            notes,
            inputs,
        };
        return crate::mpi::suite(start);
    }
    run_on_target(&args, &suite, &target, prep, keep, notes, &rules)
}

/// `iolab suite --list`: the built-in suites and their titles.
fn list_suites() -> Result<i32> {
    for (name, text) in iolab_suite::BUILTIN {
        let s = iolab_suite::SuiteSpec::parse(text, name)?;
        println!("{name:<15} {}", s.title);
    }
    Ok(0)
}

/// The suite `args` names, checked at the run's scale, and its notes.
fn load_suite(args: &SuiteArgs) -> Result<(iolab_suite::SuiteSpec, Vec<String>)> {
    if !(args.scale.is_finite() && args.scale > 0.0) {
        anyhow::bail!(
            "--scale {} must be a positive number (e.g. 0.01 for a short demo)",
            args.scale
        );
    }
    // An unaligned block size is refused with a hint of buffered I/O, which a model refuses.
    let on_model = args.target.as_deref().is_some_and(crate::subject::is_model);
    let buffered_hint = if on_model {
        BufferedHint::Refused
    } else {
        BufferedHint::Key
    };
    let suite = iolab_suite::load_for(args.suite.as_deref().unwrap_or_default(), buffered_hint)?;
    // Checked at the run's own scale too, so a suite invalid only there is refused as bad
    // input before anything runs.
    suite.check_plan(args.scale)?;
    let notes = bssplit_notes(&suite, args.scale)?;
    Ok((suite, notes))
}

/// The job that opens the suite's target: a writer's, since suites write (fills, write
/// steps), so the guard checks the target as a writer's; with the test file's size where the
/// suite creates it (said before it is).
fn target_job(
    args: &SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    target: &Path,
) -> Result<iolab_core::job::Job> {
    let mut prep = JobSpec {
        name: Some("prepare".into()),
        access: Some(Access::Write),
        ..JobSpec::default()
    }
    .validate()?;
    if !target.exists() && !crate::subject::is_model(target) {
        prep.set_span(args.size.0)?;
        // Refused before it is said to be created.
        crate::subject::refuse_unlikely_new_file(target)?;
        say!(
            "creating a {} test file {} for suite {}",
            format_size(args.size.0),
            target.display(),
            suite.name
        );
    }
    Ok(prep)
}

/// Runs `suite` on `target` in this process, saving the finished steps as it goes, and
/// finishes the result.
fn run_on_target(
    args: &SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    target: &Path,
    mut prep: iolab_core::job::Job,
    keep: bool,
    notes: Vec<String>,
    rules: &Rules,
) -> Result<i32> {
    // A suite prepares the drive itself (purge, fills): a model starts as a new drive.
    let mut subject = Subject::open(target, &mut prep, &args.safety, ModelState::Fresh, !keep)?;
    let mut result = subject.new_result(&format!("suite:{}", suite.name), !args.safety.no_probe);
    result.notes.extend(notes);
    let mut exec = SubjectExecutor {
        subject: &mut subject,
        safety: &args.safety,
        notes: Vec::new(),
        buffered_hint: suite.buffered_hint,
    };
    // Save as jobs finish, so a crash or a kill keeps the finished steps (an interrupt saves
    // them all, through `finish`). Each save writes the whole result so far, so a suite of a
    // thousand short jobs (SNIA PTS at a small scale) saving after every one spent its time
    // re-serialising a growing result: a save waits until ten times what the last one took
    // has passed, which keeps saving under a tenth of the run and loses at most that much.
    let partial_path = args.safety.json.clone().filter(|p| p.as_os_str() != "-");
    let mut partial = result.clone();
    let mut last_save: Option<(Instant, Duration)> = None;
    let outcome = run_suite(suite, args.scale, &mut exec, &mut |job| {
        let Some(p) = &partial_path else { return };
        partial.jobs.push(job.clone());
        if last_save.is_some_and(|(at, took)| at.elapsed() < 10 * took) {
            return;
        }
        let start = Instant::now();
        partial.complete = false;
        partial.incomplete_reason = Some("running (partial save)".into());
        let text = serde_json::to_string_pretty(&partial).unwrap_or_default();
        let _ = crate::output::write("--json", p, rules, text.as_bytes());
        last_save = Some((Instant::now(), start.elapsed()));
    });
    subject.describe_into(&mut result);
    finish(result_from(&mut result, outcome), args, rules)
}

/// Runs `suite` on the model `target` (fresh, as `suite` starts a model) and returns its result,
/// settled and unsaved: one target of a sweep over models.
pub(crate) fn suite_on_model(
    args: &SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    target: &Path,
    notes: Vec<String>,
) -> Result<RunResult> {
    let mut prep = JobSpec {
        name: Some("prepare".into()),
        access: Some(Access::Write),
        ..JobSpec::default()
    }
    .validate()?;
    let mut subject = Subject::open(target, &mut prep, &args.safety, ModelState::Fresh, false)?;
    let mut result = subject.new_result(&format!("suite:{}", suite.name), false);
    result.notes.extend(notes);
    let mut exec = SubjectExecutor {
        subject: &mut subject,
        safety: &args.safety,
        notes: Vec::new(),
        buffered_hint: suite.buffered_hint,
    };
    let outcome = run_suite(suite, args.scale, &mut exec, &mut |_| {});
    subject.describe_into(&mut result);
    result_from(&mut result, outcome);
    session::settle(&mut result);
    Ok(result)
}
