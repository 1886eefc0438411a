//! `--verify-journal` under mpirun: each rank journals its verified writes and flushes in a
//! file of its own, named by a pattern (`--verify-journal /var/tmp/j.{rank}`), checked by the
//! output policy on every rank before any rank writes, and created once every rank's target
//! is open. `iolab verify TARGET --journal FILE` then checks each rank's target against its
//! journal.

use super::share::{rank_target, RankPlace};
use crate::cmd::run::RunArgs;
use crate::output::Rules;
use crate::subject::Subject;
use anyhow::{bail, Result};
use iolab_core::result::{JobResult, RunResult};
use std::path::{Path, PathBuf};

/// This rank's journal (`None` without `--verify-journal`), checked as an output next to
/// `target` and the run's `inputs`.
pub(super) fn check(
    args: &RunArgs,
    place: &RankPlace,
    target: &Path,
    inputs: &[&Path],
) -> Result<Option<PathBuf>> {
    let Some(given) = &args.journal.verify_journal else {
        return Ok(None);
    };
    if crate::subject::is_model(target) {
        bail!("--verify-journal: a model keeps no data to journal; give a file or device");
    }
    let path = if given.to_string_lossy().contains('{') {
        rank_target(given, place)?.0
    } else {
        given.clone()
    };
    crate::output::check("--verify-journal", &path, &rules(args, target, inputs))?;
    Ok(Some(path))
}

fn rules<'a>(args: &RunArgs, target: &'a Path, inputs: &[&'a Path]) -> Rules<'a> {
    let mut all = inputs.to_vec();
    all.push(target);
    Rules::new(&all, args.safety.overwrite)
}

/// Creates this rank's journal `path` (if any) and gives it to `subject`; whether it made one.
pub(super) fn open(
    args: &RunArgs,
    path: Option<&Path>,
    target: &Path,
    subject: &mut Subject,
) -> Result<bool> {
    let Some(path) = path else {
        return Ok(false);
    };
    let flags = crate::cmd::verify::JournalFlags {
        verify_journal: Some(path.to_path_buf()),
        ..args.journal.clone()
    };
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    match flags.open(&rules(args, target, &inputs))? {
        Some(j) => {
            subject.set_journal(j);
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Removes this rank's journal after another rank refused the run.
pub(super) fn remove(path: Option<&Path>) {
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

/// Names this rank's journal in its job's verification summary.
pub(super) fn name_in(result: &mut JobResult, path: &Path) {
    if let Some(v) = result.verify.as_mut() {
        v.journal = Some(path.display().to_string());
    }
}

/// Rank 0's note of where the ranks' journals are.
pub(super) fn note(args: &RunArgs, result: &mut RunResult) {
    if let Some(given) = &args.journal.verify_journal {
        result.notes.push(format!(
            "each rank journaled its verified writes in its own journal ({}): check a rank's \
             target with iolab verify TARGET --journal FILE",
            given.display()
        ));
    }
}
