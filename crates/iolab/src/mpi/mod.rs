//! Many processes and hosts as one run, under MPI (`mpirun -np N [--hostfile H] iolab run …`).
//!
//! Built with the `mpi` cargo feature, `iolab run` started by mpirun runs one coordinated job:
//! every rank checks its share with the safety guard before any rank writes, ranks measure their
//! clock offsets to rank 0, start each job together, may stop together when the first finishes
//! (`--stonewall`), and rank 0 merges what they measured and writes one result (aggregate, per
//! host, per rank), one store record and one report. `suite` and `quick` run each step so
//! (`steps.rs`), `trace replay` replays the whole trace on every rank's share as one such step
//! (`replay.rs`), and a suite over several models deals them to the ranks (`sweep.rs`), as
//! `sim calibrate` deals its parts. Without the feature nothing here runs:
//! a command started by mpirun says it cannot coordinate instead of running N copies that
//! would each measure as if alone.

#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod coordinated;
#[cfg(feature = "mpi")]
mod files;
#[cfg(feature = "mpi")]
mod journal;
#[cfg(feature = "mpi")]
mod outcome;
#[cfg(feature = "mpi")]
mod quick;
#[cfg(feature = "mpi")]
mod replay;
#[cfg(feature = "mpi")]
mod report;
#[cfg(feature = "mpi")]
mod share;
#[cfg(feature = "mpi")]
mod steps;
#[cfg(feature = "mpi")]
mod suite;
#[cfg(feature = "mpi")]
mod sweep;

use crate::cmd::run::RunArgs;
use anyhow::{bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};

/// Options of a run under mpirun.
#[derive(Args, Clone, Debug, Default)]
pub struct ScaleFlags {
    /// Under mpirun: stop every rank when the first one finishes a job (IOR's stonewalling), so
    /// the aggregate covers a window in which all ranks ran.
    #[arg(long)]
    pub stonewall: bool,
}

/// The environment variables by which a launcher tells a process its job's size: Open MPI's,
/// then the PMI of MPICH, Intel MPI and Slurm.
const SIZE_VARIABLES: [&str; 2] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

/// Those that tell it its rank, in the same order.
const RANK_VARIABLES: [&str; 2] = ["OMPI_COMM_WORLD_RANK", "PMI_RANK"];

/// The first of `variables` set to a number, and the number.
fn launcher_says(variables: &[&'static str]) -> Option<(&'static str, u32)> {
    variables.iter().find_map(|var| {
        let n = std::env::var(var).ok()?.trim().parse::<u32>().ok()?;
        Some((*var, n))
    })
}

/// The number of processes the launcher started, when this process is one of them.
pub fn launched_size() -> Option<(&'static str, u32)> {
    launcher_says(&SIZE_VARIABLES)
}

/// A refusal that every rank mpirun started meets alike before MPI is up: with MPI support,
/// rank 0 (as the launcher's environment says) returns it and the others end quietly with 0,
/// as the ranks of a coordinated run do, so it is said once and mpirun exits with rank 0's
/// code; one process, or a build without MPI, returns it.
pub fn said_by_rank_0(outcome: Result<i32>) -> Result<i32> {
    let other_rank = launcher_says(&RANK_VARIABLES).is_some_and(|(_, rank)| rank > 0);
    if cfg!(feature = "mpi") && launched_size().is_some() && other_rank {
        Ok(0)
    } else {
        outcome
    }
}

/// Whether `command` runs coordinated across ranks: true when mpirun started it and iolab has
/// MPI support; refused when mpirun started several copies of a build without it (each would
/// measure as if alone), and `--stonewall` without mpirun (one process has no one to stop).
pub fn coordinated(command: &str, flags: &ScaleFlags) -> Result<bool> {
    match launched_size() {
        Some(_) if cfg!(feature = "mpi") => Ok(true),
        Some((var, n)) if n > 1 => bail!(
            "iolab {command} was started by mpirun as one of {n} processes ({var}={n}), but this \
             iolab is built without MPI support: each process would run on its own, and their \
             results would not add up. Build it with MPI (`cargo build --release -p iolab \
             --features mpi`, which needs Open MPI's development files), or run iolab without \
             mpirun"
        ),
        _ if flags.stonewall => bail!(
            "--stonewall stops every rank of a run under mpirun when the first finishes; this \
             {command} is one process: leave --stonewall out, or start it with mpirun"
        ),
        _ => Ok(false),
    }
}

/// `iolab run`: coordinated across ranks when mpirun started it, else as always.
pub fn run(args: RunArgs) -> Result<i32> {
    match launched_size() {
        #[cfg(feature = "mpi")]
        Some(_) => coordinated::run(args),
        #[cfg(not(feature = "mpi"))]
        Some((var, n)) if n > 1 => bail!(
            "iolab was started by mpirun as one of {n} processes ({var}={n}), but this iolab is \
             built without MPI support: each process would run the whole job on its own, and \
             their results would not add up. Build it with MPI (`cargo build --release -p iolab \
             --features mpi`, which needs Open MPI's development files), or run iolab without \
             mpirun"
        ),
        _ => {
            if args.scale.stonewall {
                bail!(
                    "--stonewall stops every rank of a run under mpirun when the first finishes; \
                     this run is one process: leave --stonewall out, or start it with mpirun"
                );
            }
            crate::cmd::run::run(args)
        }
    }
}

/// The rows of `sim calibrate`'s `selection`: under mpirun (with the feature) its parts split
/// across the ranks and gathered at rank 0, byte for byte the single process's; else computed
/// here. `None` on ranks other than 0, which print nothing.
pub fn calibration_rows(
    selection: &iolab_sim::Selection,
) -> Result<Option<Vec<iolab_sim::CalibrationRow>>> {
    match launched_size() {
        #[cfg(feature = "mpi")]
        Some(_) => return sweep::calibrate(selection),
        #[cfg(not(feature = "mpi"))]
        Some((var, n)) if n > 1 => bail!(
            "iolab sim calibrate was started by mpirun as one of {n} processes ({var}={n}), but \
             this iolab is built without MPI support: each process would run every figure and \
             print it. Build it with MPI (`cargo build --release -p iolab --features mpi`), or \
             run it without mpirun"
        ),
        _ => {}
    }
    let values = selection.modelled(iolab_engine::sys::CACHE_HINT);
    Ok(Some(selection.rows(values)))
}

/// A suite ready to run under mpirun: checked and planned by `iolab suite` as for one process.
// Read only by the coordinated suite, built with the feature.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub struct SuiteStart<'a> {
    pub args: &'a crate::cmd::suite::SuiteArgs,
    pub suite: &'a iolab_suite::SuiteSpec,
    /// The target as given, or the default test file.
    pub target: &'a Path,
    /// The target is this rank's own test file (no target given).
    pub own: bool,
    /// The job the target is opened for.
    pub prep: iolab_core::job::Job,
    /// Keep the test file iolab creates.
    pub keep: bool,
    /// Notes for the result (said on the terminal already).
    pub notes: Vec<String>,
    /// Files the result must not overwrite.
    pub inputs: Vec<PathBuf>,
}

/// `iolab suite` under mpirun: each step one coordinated step of every rank.
pub fn suite(start: SuiteStart) -> Result<i32> {
    #[cfg(feature = "mpi")]
    return suite::run(start);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = start;
        bail!("iolab is built without MPI support")
    }
}

/// A file-set suite (`filecopy`) under mpirun: each rank in directories of its own, each step
/// started together.
pub fn suite_in_directories(
    args: &crate::cmd::suite::SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    notes: Vec<String>,
    inputs: Vec<PathBuf>,
) -> Result<i32> {
    #[cfg(feature = "mpi")]
    return files::run(args, suite, notes, inputs);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (args, suite, notes, inputs);
        bail!("iolab is built without MPI support")
    }
}

/// `iolab trace replay` under mpirun: every rank replays the whole trace on its share.
pub fn replay(args: &crate::cmd::replay::ReplayArgs) -> Result<i32> {
    #[cfg(feature = "mpi")]
    return replay::run(args);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = args;
        bail!("iolab is built without MPI support")
    }
}

/// `iolab quick` ready to run under mpirun: checked as for one process.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub struct QuickStart<'a> {
    pub args: &'a crate::cmd::quick::QuickArgs,
    /// The target as given, or the default test file.
    pub target: &'a Path,
    /// The target is this rank's own test file (no target given).
    pub own: bool,
    /// The job the target is opened for.
    pub first: iolab_core::job::Job,
}

/// `iolab quick` under mpirun: each run of each test one coordinated step of every rank.
pub fn quick(start: QuickStart) -> Result<i32> {
    #[cfg(feature = "mpi")]
    return quick::run(start);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = start;
        bail!("iolab is built without MPI support")
    }
}

/// `iolab suite SUITE MODEL MODEL…`: the suite on each model (a sweep), one result each, saved
/// in target order by this process; under mpirun (`under_mpi`) the models are dealt to the
/// ranks round-robin and gathered at rank 0, which saves them, figures bit for bit those of one
/// process (the model is deterministic, and every number travels exactly).
pub fn suite_sweep(
    args: &crate::cmd::suite::SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    notes: Vec<String>,
    under_mpi: bool,
) -> Result<i32> {
    let targets: Vec<PathBuf> = args
        .target
        .iter()
        .chain(&args.more_targets)
        .cloned()
        .collect();
    if let Some(t) = targets.iter().find(|t| !crate::subject::is_model(t)) {
        bail!(
            "suite {}: several targets are a sweep over models (sim:DRIVE@PLATFORM[/PORT]), and \
             {} is not a model: measure a file or device on its own (under mpirun, as one \
             coordinated run of every rank)",
            suite.name,
            t.display()
        );
    }
    if args.safety.json.is_some() || args.safety.fio_json.is_some() {
        bail!(
            "--json and --fio-json name one result's file, and a sweep over {} models makes one \
             result each: leave them out (each result goes to the results directory and the \
             results store)",
            targets.len()
        );
    }
    if args.mpi.stonewall {
        bail!(
            "--stonewall stops the ranks of one coordinated run; in a sweep over models each \
             rank runs models of its own: leave --stonewall out"
        );
    }
    let suite_file = Path::new(args.suite.as_deref().unwrap_or_default());
    let inputs: Vec<&Path> = [suite_file].into_iter().filter(|p| p.is_file()).collect();
    let rules = crate::output::Rules::new(&inputs, args.safety.overwrite);
    crate::session::check_output(None, &rules)?;
    let results = if under_mpi {
        #[cfg(feature = "mpi")]
        let gathered = sweep::suites(args, suite, &targets, &notes)?;
        #[cfg(not(feature = "mpi"))]
        let gathered = None;
        match gathered {
            Some(results) => results,
            None => return Ok(0),
        }
    } else {
        let mut results = Vec::with_capacity(targets.len());
        for t in &targets {
            results.push(crate::cmd::suite::suite_on_model(
                args,
                suite,
                t,
                notes.clone(),
            )?);
        }
        results
    };
    // Each result its own file (they may start within one second): `…-PID-N.json`.
    let mut code = 0;
    for (i, result) in results.iter().enumerate() {
        let file = crate::session::default_result_file(result, &format!("-{}", i + 1));
        crate::session::show(&iolab_report::terminal::suite_table(result), None);
        let saved = crate::session::save(result, Some(&file), &rules)?;
        say!("result saved to {saved}");
        code = code.max(crate::session::exit_code(result));
    }
    Ok(code)
}
