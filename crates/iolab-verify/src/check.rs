//! Classifying a block read back against what should be there.

use crate::stamp::{read_sector, Sector, SECTOR};
use std::fmt;

/// What went wrong with a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A sector's checksum does not match: bits changed after the write.
    Corrupted,
    /// The stamps name another block: data written to (or read from) the wrong place.
    Misplaced,
    /// Zeros or another uniform byte where the block should be: unmapped, trimmed or zeroed.
    Zeros,
    /// Sectors of different writes in one block: a write that landed in part.
    Torn,
    /// An older generation of the block, whole: a lost write.
    Stale,
    /// Data iolab did not stamp: the write never landed (on a file filled before the run).
    Foreign,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 6] = [
        Kind::Corrupted,
        Kind::Misplaced,
        Kind::Zeros,
        Kind::Torn,
        Kind::Stale,
        Kind::Foreign,
    ];

    /// The name results use.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Corrupted => "corrupted",
            Kind::Misplaced => "misplaced",
            Kind::Zeros => "zeros",
            Kind::Torn => "torn",
            Kind::Stale => "stale",
            Kind::Foreign => "foreign",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a stretch of the target should hold: sectors `start..start + len` of the block written
/// at `block_offset` by the write of generation `generation`. A stretch is a whole block, or
/// what is left of one that later, smaller writes covered in part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Target id of the run that wrote it.
    pub run_id: u32,
    /// Offset the block was written at.
    pub block_offset: u64,
    /// First byte of the stretch (at or after `block_offset`).
    pub start: u64,
    /// Bytes in the stretch.
    pub len: u64,
    /// The generation that should be found.
    pub generation: u64,
    /// The oldest generation that may be found without a failure: `generation` when every
    /// write is known to have landed; an older one after a crash, for writes acknowledged
    /// after the last flush.
    pub floor: u64,
    /// Checked after a crash against a journal: writes newer than the journal's record may be
    /// found (whole or torn: none of them had to survive).
    pub after_crash: bool,
}

/// A block that did not read back as expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What went wrong.
    pub kind: Kind,
    /// Offset of the stretch checked.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// Offset of the first sector at fault.
    pub sector_offset: u64,
    /// What should be there.
    pub expected: String,
    /// What was found.
    pub found: String,
}

/// The verdict on one stretch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly the expected generation.
    Ok,
    /// Older than expected, not older than the floor (a write after the last flush lost).
    Allowed,
    /// A failure.
    Failed(Failure),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Good,
    /// A generation of this block at or above the floor, not the expected one.
    Acceptable(u64),
    Older(u64),
    Elsewhere(Sector),
    Damaged,
    Uniform(u8),
    Foreign,
}

/// Checks `data`, read from `exp.start`, against `exp`.
pub fn check(exp: &Expected, data: &[u8]) -> Verdict {
    debug_assert_eq!(data.len() as u64, exp.len);
    let first_index = (exp.start - exp.block_offset) / SECTOR as u64;
    let seen: Vec<Seen> = data
        .chunks_exact(SECTOR)
        .enumerate()
        .map(|(i, s)| {
            classify(
                exp,
                first_index + i as u64,
                exp.start + (i * SECTOR) as u64,
                s,
            )
        })
        .collect();
    let judgement = Judgement { exp, seen: &seen };
    judgement
        .damage()
        .unwrap_or_else(|| judgement.generations_found())
}

/// What the sector read at `here`, the `index`th of its block, holds against `exp`.
fn classify(exp: &Expected, index_expected: u64, here: u64, sector: &[u8]) -> Seen {
    match read_sector(sector) {
        Sector::Stamped {
            run_id,
            index,
            offset,
            generation,
        } => {
            if run_id == exp.run_id && offset == exp.block_offset && index as u64 == index_expected
            {
                if generation == exp.generation {
                    Seen::Good
                } else if generation >= exp.floor {
                    Seen::Acceptable(generation)
                } else {
                    Seen::Older(generation)
                }
            } else if offset + index as u64 * SECTOR as u64 == here {
                // Written for this very place by another write (an earlier run's, or one
                // of another size): what was here before.
                // After a crash, one at or above the floor is as good as the block's own.
                if run_id == exp.run_id && exp.after_crash && generation >= exp.floor {
                    Seen::Acceptable(generation)
                } else {
                    Seen::Older(generation)
                }
            } else {
                Seen::Elsewhere(Sector::Stamped {
                    run_id,
                    index,
                    offset,
                    generation,
                })
            }
        }
        Sector::Damaged => Seen::Damaged,
        Sector::Uniform(b) => Seen::Uniform(b),
        Sector::Foreign => Seen::Foreign,
    }
}

/// A stretch's sectors as read, judged against what it should hold.
struct Judgement<'a> {
    exp: &'a Expected,
    seen: &'a [Seen],
}

impl Judgement<'_> {
    /// Where the first sector that `pred` holds for starts on the target.
    fn at(&self, pred: &dyn Fn(&Seen) -> bool) -> Option<u64> {
        self.seen
            .iter()
            .position(pred)
            .map(|i| self.exp.start + (i * SECTOR) as u64)
    }

    /// The sector at target offset `s`.
    fn sector_at(&self, s: u64) -> Seen {
        self.seen[((s - self.exp.start) / SECTOR as u64) as usize]
    }

    /// A failure of `kind` first seen at `sector_offset`, with what was found.
    fn fail(&self, kind: Kind, sector_offset: u64, found: String) -> Verdict {
        let exp = self.exp;
        let expected = format!(
            "generation {} of the block at {}{}",
            exp.generation,
            exp.block_offset,
            if exp.floor < exp.generation {
                format!(" (at least {})", exp.floor)
            } else {
                String::new()
            }
        );
        Verdict::Failed(Failure {
            kind,
            offset: exp.start,
            len: exp.len,
            sector_offset,
            expected,
            found,
        })
    }

    /// The generations the sectors hold, in order, each once.
    fn generations(&self) -> Vec<u64> {
        let mut g: Vec<u64> = self
            .seen
            .iter()
            .filter_map(|s| match s {
                Seen::Good => Some(self.exp.generation),
                Seen::Acceptable(g) | Seen::Older(g) => Some(*g),
                _ => None,
            })
            .collect();
        g.sort_unstable();
        g.dedup();
        g
    }

    /// Damage no write explains: a sector whose checksum fails, a sector of another block, or
    /// uniform bytes.
    fn damage(&self) -> Option<Verdict> {
        if let Some(s) = self.at(&|s| *s == Seen::Damaged) {
            return Some(self.fail(
                Kind::Corrupted,
                s,
                format!("sector at {s}: checksum mismatch (changed after the write)"),
            ));
        }
        if let Some(s) = self.at(&|s| matches!(s, Seen::Elsewhere(_))) {
            let Seen::Elsewhere(Sector::Stamped {
                index,
                offset,
                generation,
                ..
            }) = self.sector_at(s)
            else {
                unreachable!("matched above")
            };
            return Some(self.fail(
                Kind::Misplaced,
                s,
                format!(
                    "sector at {s}: sector {index} of the block written at {offset}, generation \
                     {generation}"
                ),
            ));
        }
        let s = self.at(&|s| matches!(s, Seen::Uniform(_)))?;
        let n = self
            .seen
            .iter()
            .filter(|s| matches!(s, Seen::Uniform(_)))
            .count();
        let Seen::Uniform(b) = self.sector_at(s) else {
            unreachable!("matched above")
        };
        Some(self.fail(
            Kind::Zeros,
            s,
            format!(
                "{n} of {} sectors hold only bytes {b:#04x}, from {s}",
                self.seen.len()
            ),
        ))
    }

    /// Every sector is a write's for this place: which writes, and whether that is right.
    fn generations_found(&self) -> Verdict {
        let exp = self.exp;
        let seen = self.seen;
        let good = |s: &Seen| matches!(s, Seen::Good | Seen::Acceptable(_));
        let older = seen.iter().filter(|s| matches!(s, Seen::Older(_))).count();
        let foreign = seen.iter().filter(|s| **s == Seen::Foreign).count();
        if older + foreign > 0 && seen.iter().any(good) {
            let s = self.at(&|s| !good(s)).expect("a sector at fault");
            return self.fail(
                Kind::Torn,
                s,
                format!(
                    "{} of {} sectors from another write (generations {:?}{}), from {s}",
                    older + foreign,
                    seen.len(),
                    self.generations(),
                    if foreign > 0 {
                        " and unstamped data"
                    } else {
                        ""
                    }
                ),
            );
        }
        if older > 0 {
            return self.fail(
                Kind::Stale,
                exp.start,
                format!("generation {:?}: an older write", self.generations()),
            );
        }
        if foreign > 0 {
            return self.fail(Kind::Foreign, exp.start, "data iolab did not stamp".into());
        }
        if seen.iter().all(|s| *s == Seen::Good) {
            return Verdict::Ok;
        }
        // Every sector is of this block, from the floor up, not all of the expected generation.
        let found = self.generations();
        if !exp.after_crash {
            // Every write is known to have landed: generations mixed in one block are a tear.
            let s = self.at(&|s| *s != Seen::Good).unwrap_or(exp.start);
            return self.fail(
                Kind::Torn,
                s,
                format!("sectors of generations {found:?} in one block, from {s}",),
            );
        }
        if found.iter().all(|&g| g >= exp.generation) {
            // Newer than the record, whole or torn: writes the journal never held as flushed.
            Verdict::Ok
        } else {
            Verdict::Allowed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stamp::{stamp_block, BlockFacts};

    fn block(offset: u64, generation: u64, len: usize) -> Vec<u8> {
        let mut b: Vec<u8> = (0..len)
            .map(|i| (i * 31 + generation as usize) as u8)
            .collect();
        stamp_block(
            &mut b,
            &BlockFacts {
                run_id: 1,
                offset,
                generation,
                ..Default::default()
            },
        );
        b
    }

    fn exp(offset: u64, generation: u64) -> Expected {
        Expected {
            run_id: 1,
            block_offset: offset,
            start: offset,
            len: 4096,
            generation,
            floor: generation,
            after_crash: false,
        }
    }

    fn kind(v: Verdict) -> Option<(Kind, u64)> {
        match v {
            Verdict::Failed(f) => Some((f.kind, f.sector_offset)),
            _ => None,
        }
    }

    #[test]
    fn each_fault_has_its_kind_and_sector() {
        let good = block(8192, 5, 4096);
        assert_eq!(check(&exp(8192, 5), &good), Verdict::Ok);
        let mut flipped = good.clone();
        flipped[3 * 512 + 100] ^= 0x10;
        assert_eq!(
            kind(check(&exp(8192, 5), &flipped)),
            Some((Kind::Corrupted, 8192 + 3 * 512))
        );
        assert_eq!(
            kind(check(&exp(8192, 5), &block(4096, 5, 4096))),
            Some((Kind::Misplaced, 8192))
        );
        let mut zeroed = good.clone();
        zeroed[1024..].fill(0);
        assert_eq!(
            kind(check(&exp(8192, 5), &zeroed)),
            Some((Kind::Zeros, 8192 + 1024))
        );
        assert_eq!(
            kind(check(&exp(8192, 5), &[0u8; 4096])),
            Some((Kind::Zeros, 8192))
        );
        assert_eq!(
            kind(check(&exp(8192, 5), &block(8192, 3, 4096))),
            Some((Kind::Stale, 8192))
        );
        let mut torn = good.clone();
        torn[2048..].copy_from_slice(&block(8192, 3, 4096)[2048..]);
        assert_eq!(
            kind(check(&exp(8192, 5), &torn)),
            Some((Kind::Torn, 8192 + 2048))
        );
        let foreign: Vec<u8> = (0..4096).map(|i| (i % 253) as u8).collect();
        assert_eq!(
            kind(check(&exp(8192, 5), &foreign)),
            Some((Kind::Foreign, 8192))
        );
        let mut other_run = good.clone();
        stamp_block(
            &mut other_run,
            &BlockFacts {
                run_id: 2,
                offset: 8192,
                generation: 5,
                ..Default::default()
            },
        );
        // An earlier run's block, written for this place: an older write.
        assert_eq!(
            kind(check(&exp(8192, 5), &other_run)),
            Some((Kind::Stale, 8192))
        );
    }

    #[test]
    fn after_a_crash_anything_from_the_floor_up_is_allowed() {
        let e = Expected {
            floor: 3,
            after_crash: true,
            ..exp(8192, 5)
        };
        assert_eq!(check(&e, &block(8192, 3, 4096)), Verdict::Allowed);
        assert_eq!(check(&e, &block(8192, 9, 4096)), Verdict::Ok);
        let mut torn = block(8192, 5, 4096);
        torn[512..].copy_from_slice(&block(8192, 4, 4096)[512..]);
        assert_eq!(check(&e, &torn), Verdict::Allowed);
        assert_eq!(
            kind(check(&e, &block(8192, 2, 4096))),
            Some((Kind::Stale, 8192))
        );
    }

    #[test]
    fn the_rest_of_a_partly_overwritten_block_checks_from_its_own_sector() {
        let b = block(0, 5, 8192);
        let rest = Expected {
            start: 4096,
            ..exp(0, 5)
        };
        assert_eq!(check(&rest, &b[4096..]), Verdict::Ok);
        assert_eq!(
            kind(check(&rest, &b[..4096])),
            Some((Kind::Misplaced, 4096))
        );
    }
}
