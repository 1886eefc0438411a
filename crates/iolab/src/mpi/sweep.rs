//! Model sweeps split across ranks: each rank computes its share of independent parts, rank 0
//! gathers them in order. The model is deterministic and every `f64` travels as its bits
//! (serde_json's parsing may miss the last bit of a decimal), so the gathered rows are the
//! single process's, byte for byte.

use super::comm::Comm;
use anyhow::{anyhow, bail, Result};
use iolab_core::result::RunResult;
use iolab_sim::{CalibrationRow, Selection};
use std::path::PathBuf;

/// The rows of `iolab sim calibrate`'s `selection`, its parts dealt round-robin to the ranks;
/// `None` on ranks other than 0.
pub fn calibrate(selection: &Selection) -> Result<Option<Vec<CalibrationRow>>> {
    let Some(universe) = mpi::initialize() else {
        bail!("MPI could not be initialised (was it initialised already?)");
    };
    let comm = Comm::new(universe.world());
    // (position in the selection, modelled value's bits) of this rank's parts.
    let mine: Vec<(usize, u64)> = (comm.rank as usize..Selection::PARTS)
        .step_by(comm.size.max(1) as usize)
        .flat_map(|part| selection.modelled_part(part, iolab_engine::sys::CACHE_HINT))
        .map(|(i, v)| (i, v.to_bits()))
        .collect();
    let all = comm.gather(&mine)?;
    Ok(all.map(|all| {
        selection.rows(
            all.into_iter()
                .flatten()
                .map(|(i, bits)| (i, f64::from_bits(bits)))
                .collect(),
        )
    }))
}

/// A suite on each of `targets` (models), dealt round-robin to the ranks; every result at rank
/// 0 in target order (`None` on the others). A model that fails stops the sweep at rank 0,
/// naming it, once every rank is done. Results travel as JSON, whose floating-point numbers
/// the `mpi` feature parses exactly (serde_json's `float_roundtrip`).
pub fn suites(
    args: &crate::cmd::suite::SuiteArgs,
    suite: &iolab_suite::SuiteSpec,
    targets: &[PathBuf],
    notes: &[String],
) -> Result<Option<Vec<RunResult>>> {
    let Some(universe) = mpi::initialize() else {
        bail!("MPI could not be initialised (was it initialised already?)");
    };
    let comm = Comm::new(universe.world());
    let mine: Vec<(usize, Result<RunResult, String>)> = (comm.rank as usize..targets.len())
        .step_by(comm.size.max(1) as usize)
        .map(|i| {
            let r = crate::cmd::suite::suite_on_model(args, suite, &targets[i], notes.to_vec())
                .map_err(|e| format!("{e:#}"));
            (i, r)
        })
        .collect();
    let Some(all) = comm.gather(&mine)? else {
        return Ok(None);
    };
    let mut all: Vec<(usize, Result<RunResult, String>)> = all.into_iter().flatten().collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter()
        .map(|(i, r)| r.map_err(|e| anyhow!("{}: {e}", targets[i].display())))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}
