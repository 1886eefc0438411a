//! A power cut in virtual time (`--power-loss-at T`): what an SSD without power-loss
//! protection loses, and what one with it keeps.
//!
//! At the cut, writes the host saw acknowledged are either on NAND or still only in the
//! drive's DRAM write buffer: in the program unit being filled, or in one whose program had
//! not ended (an in-flight program). A drive without protection loses those; one with it
//! (capacitors, the catalog's `buffer.plp`) finishes its programs and loses nothing. Writes
//! completing after the cut were never acknowledged and are owed nothing. Not modelled: a
//! mapping table kept in DRAM and saved only at shutdown (its loss would take older data too),
//! hard disks' write caches, volumes of several drives.

use crate::model::{Dev, Vol, World};
use iolab_core::job::{Job, VerifyMode};
use iolab_core::result::VerifySummary;
use iolab_verify::check::Verdict;
use iolab_verify::verifier::JobVerifier;

/// A planned power cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerCut {
    /// Seconds after a job starts (ramp included).
    pub after_s: f64,
    /// The drive has power-loss protection.
    pub plp: bool,
}

/// Why a model cannot take a power cut.
pub fn unsupported(world: &World) -> Option<&'static str> {
    match &world.vol {
        Vol::Leaf(i) => match world.leaves[*i as usize].dev {
            Dev::Ssd(_) => None,
            Dev::Hdd(_) => Some("a hard disk's write cache is not modelled for power loss"),
        },
        _ => Some("power loss is modelled for one SSD, not a volume of several drives"),
    }
}

/// Whether the data of `[offset, offset + len)` is only in volatile memory at `at`.
fn volatile(world: &World, offset: u64, len: u64, at: u64) -> bool {
    match &world.vol {
        Vol::Leaf(i) => match &world.leaves[*i as usize].dev {
            Dev::Ssd(s) => s.holds_volatile(offset, len, at),
            Dev::Hdd(_) => false,
        },
        _ => false,
    }
}

/// The verifier of a model's job that verifies, with writes completing after the cut at
/// `cut_ns` not acknowledged.
pub fn verifier(job: &Job, cut_ns: Option<u64>) -> std::io::Result<Option<JobVerifier>> {
    match job.verify {
        VerifyMode::Off | VerifyMode::Stamp => return Ok(None),
        VerifyMode::Reads => {
            return Err(std::io::Error::other(
                "verify = \"reads\" checks the data a job reads, and a model keeps no data; \
                 run it on a file or device",
            ))
        }
        VerifyMode::End | VerifyMode::Inline => {}
    }
    // A model keeps no data: nothing is read back inline, the check comes at the end.
    let v = JobVerifier::new(
        VerifyMode::End,
        &job.name,
        (job.offset_bytes, job.span(), job.granule()),
        None,
        None,
    )
    .map_err(|e| {
        std::io::Error::other(format!(
            "verify keeps what each block of the span should hold: {} blocks are too many; \
             give the job a smaller size",
            e.granules
        ))
    })?;
    if let Some(c) = cut_ns {
        v.set_ack_deadline(c);
    }
    Ok(Some(v))
}

/// The job's measured time, ending at the cut.
pub fn duration_ns(job: &Job, cut: Option<PowerCut>) -> Option<u64> {
    let job_ns = job.duration_s.map(|d| (d * 1e9) as u64);
    let cut_ns = cut.map(|c| ((c.after_s - job.ramp_s).max(0.0) * 1e9) as u64);
    match (job_ns, cut_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// After the job: every block acknowledged before the cut that was still only in volatile
/// memory is lost, unless the drive has protection. Lost writes are counted as
/// `unflushed_lost`: acknowledged, never flushed, so a drive may lose them.
pub fn check(
    world: &World,
    v: &JobVerifier,
    cut: Option<PowerCut>,
    cut_ns: Option<u64>,
) -> VerifySummary {
    for e in v.stretches(1 << 20) {
        let lost = match (cut, cut_ns) {
            (Some(c), Some(at)) => !c.plp && volatile(world, e.start, e.len, at),
            _ => false,
        };
        v.add_verdict(if lost { Verdict::Allowed } else { Verdict::Ok }, e.len);
    }
    let mut s = v.summary(None);
    s.mode = match cut {
        Some(c) => format!(
            "power-loss at {} s ({})",
            c.after_s,
            if c.plp {
                "drive with power-loss protection"
            } else {
                "drive without power-loss protection"
            }
        ),
        None => "model".into(),
    };
    s
}
