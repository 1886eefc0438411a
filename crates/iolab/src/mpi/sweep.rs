//! Model sweeps split across ranks: each rank computes its share of independent parts, rank 0
//! gathers them in order. The model is deterministic and every `f64` travels as its bits
//! (serde_json's parsing may miss the last bit of a decimal), so the gathered rows are the
//! single process's, byte for byte.

use super::comm::Comm;
use anyhow::{bail, Result};
use iolab_sim::{calibrate_part, calibration_rows, CalibrationRow, CALIBRATION_PARTS};

/// `iolab sim calibrate`'s rows, the parts dealt round-robin to the ranks; `None` on ranks other
/// than 0.
pub fn calibrate() -> Result<Option<Vec<CalibrationRow>>> {
    let Some(universe) = mpi::initialize() else {
        bail!("MPI could not be initialised (was it initialised already?)");
    };
    let comm = Comm::new(universe.world());
    // (figure index, modelled value's bits) of this rank's parts.
    let mine: Vec<(usize, u64)> = (comm.rank as usize..CALIBRATION_PARTS)
        .step_by(comm.size.max(1) as usize)
        .flat_map(calibrate_part)
        .map(|(i, v)| (i, v.to_bits()))
        .collect();
    let all = comm.gather(&mine)?;
    Ok(all.map(|all| {
        calibration_rows(
            all.into_iter()
                .flatten()
                .map(|(i, bits)| (i, f64::from_bits(bits)))
                .collect(),
        )
    }))
}
