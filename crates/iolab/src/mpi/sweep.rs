//! Model sweeps split across ranks: each rank computes its share of independent parts, rank 0
//! gathers them in order. The model is deterministic and every `f64` travels as its bits
//! (serde_json's parsing may miss the last bit of a decimal), so the gathered rows are the
//! single process's, byte for byte.

use super::comm::Comm;
use anyhow::{bail, Result};
use iolab_sim::{calibrate_part, CalibrationRow, CALIBRATION_PARTS};

/// `iolab sim calibrate`'s rows, the parts dealt round-robin to the ranks; `None` on ranks other
/// than 0.
pub fn calibrate() -> Result<Option<Vec<CalibrationRow>>> {
    let Some(universe) = mpi::initialize() else {
        bail!("MPI could not be initialised (was it initialised already?)");
    };
    let comm = Comm::new(universe.world());
    let mine: Vec<(usize, Vec<RowBits>)> = (comm.rank as usize..CALIBRATION_PARTS)
        .step_by(comm.size.max(1) as usize)
        .map(|i| (i, calibrate_part(i).iter().map(RowBits::of).collect()))
        .collect();
    let all = comm.gather(&mine)?;
    Ok(all.map(|all| {
        let mut parts: Vec<(usize, Vec<RowBits>)> = all.into_iter().flatten().collect();
        parts.sort_by_key(|(i, _)| *i);
        parts
            .into_iter()
            .flat_map(|(_, rows)| rows.into_iter().map(RowBits::row))
            .collect()
    }))
}

/// A calibration row with its figures as `f64` bits.
#[derive(serde::Serialize, serde::Deserialize)]
struct RowBits(String, String, u64, u64, u64);

impl RowBits {
    fn of(r: &CalibrationRow) -> RowBits {
        RowBits(
            r.review.clone(),
            r.figure.clone(),
            r.published.to_bits(),
            r.modelled.to_bits(),
            r.error_pct.to_bits(),
        )
    }

    fn row(self) -> CalibrationRow {
        CalibrationRow {
            review: self.0,
            figure: self.1,
            published: f64::from_bits(self.2),
            modelled: f64::from_bits(self.3),
            error_pct: f64::from_bits(self.4),
        }
    }
}
